pub mod callgraph;
pub mod file;
pub mod info;
pub mod nitro;
pub mod report;
pub mod ti;
