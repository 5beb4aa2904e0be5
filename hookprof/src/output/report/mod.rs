//! What hookprof writes from a trace's analysis: the flat profile ([`flat`], rendered by
//! `text`, `csv` and `json`, which [`Format::formatter`] picks) and one module per view:
//! over the replay's named, filtered frames ([`crate::analysis::view`]) `timeline` (Chrome
//! trace events), `perfetto`, `flame` (folded stacks, SVG), `speedscope`, `callgrind`,
//! `calltree` (`hookprof replay`), `percentiles`, `parquet`; over the model
//! ([`crate::analysis::model`]) `gmon` (gprof) and `diff`.
//!
//! Its modules import `flat`, the analysis and input's data types (names, lines, byte
//! order); none imports another output format. This file only picks a format's module.

pub mod callgrind;
pub mod calltree;
pub mod columns;
mod csv;
pub mod diff;
pub mod flame;
pub mod flat;
pub mod gmon;
mod json;
pub mod parquet;
pub mod percentiles;
pub mod perfetto;
pub mod speedscope;
mod text;
pub mod timeline;

use std::io;

pub use self::csv::CsvFormat;
pub use self::flat::{
    cpu_columns, sampled_columns, time_columns, FlatReport, Format, OffCpu, ReportFormat, Row,
    SampleSummary, Sampled, SortKey, Summary, ThreadLine, Unit,
};
pub use self::json::JsonFormat;
pub use self::text::{text_columns, TextFormat};

impl Format {
    pub fn formatter(self) -> Box<dyn ReportFormat> {
        match self {
            Format::Text => Box::new(TextFormat),
            Format::Csv => Box::new(CsvFormat),
            Format::Json => Box::new(JsonFormat),
        }
    }
}

impl FlatReport {
    /// Renders the report in `format`.
    pub fn render(&self, format: Format, out: &mut dyn io::Write) -> io::Result<()> {
        format.formatter().write(self, out)
    }
}
