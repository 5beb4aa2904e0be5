//! The output formats a flat profile is rendered in, and what they share.

use std::fmt;
use std::io;
use std::str::FromStr;

use super::build::*;
use super::rows::*;

/// Names of the time columns, in CSV order, for a unit.
pub fn time_columns(unit: Unit) -> [String; 5] {
    let u = unit.suffix();
    ["inclusive", "exclusive", "min", "max", "avg"].map(|c| format!("{c}_{u}"))
}

/// Renders a [`FlatReport`] in one output format.
pub trait ReportFormat {
    fn write(&self, report: &FlatReport, out: &mut dyn io::Write) -> io::Result<()>;
}

/// The output formats of `hookprof report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Text,
    Csv,
    Json,
}

impl Format {
    pub const ALL: [Format; 3] = [Format::Text, Format::Csv, Format::Json];

    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Csv => "csv",
            Format::Json => "json",
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .into_iter()
            .find(|f| f.name() == s)
            .ok_or_else(|| format!("unknown format {s:?}: expected text, csv or json"))
    }
}
