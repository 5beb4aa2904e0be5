pub mod model;
pub mod replay;
pub mod trace_replay;
pub mod view;
pub mod warnings;
