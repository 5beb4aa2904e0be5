pub mod ids;
pub mod model;
pub mod nitro;
pub mod replay;
pub mod ti;
pub mod trace_replay;
pub mod view;
pub mod warnings;
