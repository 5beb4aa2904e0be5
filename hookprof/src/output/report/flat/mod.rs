//! The flat profile: one row per function (or per thread and function), rendered by one
//! [`ReportFormat`] per output format (text, csv, json: [`super`] picks it).

mod build;
mod format;
mod rows;

pub use crate::analysis::replay::TimeBasis;
pub use build::*;
pub use format::*;
pub use rows::*;
