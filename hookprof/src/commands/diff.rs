//! `hookprof diff`: two flat profiles compared, or the regression gate.

use std::path::Path;

use crate::analysis::warnings::profile_warnings;
use crate::input::error::Error;
use crate::input::symbols::{Resolve, Symbolizer};
use crate::input::trace_file::TraceFile;
use crate::output::report::{self, FlatReport};

/// Compares the flat profiles of two traces ([`report::diff`]): `csv` for CSV, else aligned
/// text; `top` keeps the N largest changes. Returns the output and the warnings of both
/// traces (each prefixed with its trace).
/// How `hookprof diff` writes.
#[derive(Clone, Copy, Debug)]
pub enum DiffFormat<'a> {
    Text,
    Csv,
    Markdown,
    /// The regression gate's verdict (Markdown): the functions breaking `rules`.
    Gate {
        rules: &'a [report::diff::Rule],
        min_time_ns: u64,
    },
}

/// What `hookprof diff` made: its output, the warnings to show, and how many functions broke
/// the gate's rules.
pub struct DiffOutput {
    pub bytes: Vec<u8>,
    pub warnings: Vec<String>,
    pub breaches: usize,
}

pub fn diff_files(
    a: &Path,
    b: &Path,
    exe: [Option<&Path>; 2],
    format: DiffFormat,
    top: Option<usize>,
) -> Result<DiffOutput, Error> {
    let mut reports = Vec::new();
    let mut warnings = Vec::new();
    for (path, exe) in [a, b].into_iter().zip(exe) {
        let trace = TraceFile::open(path)?;
        let profile = trace.profile()?;
        let mut names = Symbolizer::new(&profile.summary, exe)?;
        let report = FlatReport::build(&profile, &mut names, false);
        for w in profile_warnings(&profile.summary)
            .into_iter()
            .chain(names.take_warnings())
        {
            warnings.push(format!("{}: {w}", path.display()));
        }
        reports.push(report);
    }
    let (ua, ub) = (reports[0].summary.unit, reports[1].summary.unit);
    if ua.suffix() != ub.suffix() {
        return Err(Error::DiffUnits {
            a: a.to_path_buf(),
            unit_a: ua.suffix(),
            b: b.to_path_buf(),
            unit_b: ub.suffix(),
        });
    }
    let diff = report::diff::Diff::new(&reports[0], &reports[1]);
    let mut bytes = Vec::new();
    let mut breaches = 0;
    match format {
        DiffFormat::Text => diff.write_text(top, &mut bytes),
        DiffFormat::Csv => diff.write_csv(top, &mut bytes),
        DiffFormat::Markdown => diff.write_markdown(top, &mut bytes),
        DiffFormat::Gate { rules, min_time_ns } => {
            let needs_ns = min_time_ns > 0
                || rules.iter().any(|r| {
                    r.metric != report::diff::Metric::Calls
                        && matches!(r.limit, report::diff::Limit::Amount(_))
                });
            if needs_ns && matches!(ua, report::Unit::Ticks) {
                return Err(Error::Unsupported {
                    path: a.to_path_buf(),
                    message: "the traces have no clock rate: --min-time and time limits need \
                              nanoseconds (use percentages and calls)"
                        .to_string(),
                });
            }
            diff.write_gate(rules, min_time_ns, top, &mut bytes)
                .map(|n| breaches = n)
        }
    }
    .expect("writing to a Vec cannot fail");
    Ok(DiffOutput {
        bytes,
        warnings,
        breaches,
    })
}
