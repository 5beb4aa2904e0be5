pub mod model;
pub mod replay;
pub mod view;
