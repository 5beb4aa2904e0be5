//! `hookprof diff`: two flat profiles compared, or the regression gate.

use std::path::Path;

use crate::analysis::replay::TimeBasis;
use crate::analysis::view::TraceInfo;
use crate::analysis::warnings::profile_warnings;
use crate::commands::arguments::parse_duration;
use crate::commands::arguments::TimeArg;
use crate::input::error::Error;
use crate::input::symbols::{Resolve, Symbolizer};
use crate::input::trace_file::TraceFile;
use crate::output::report::{self, FlatReport};
use clap::ValueEnum;
use std::path::PathBuf;

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

/// Compares the flat profiles of `a` and `b` in `format` ([`DiffFormat`]), the `top` largest
/// changes. `time`: the clock to compare on (`--time`); `None` (the default) is the wall clock, except
/// for the gate, which compares CPU time when both traces have context switches: on a busy
/// machine a function's waiting grows with the load, its CPU time does not, and a gate that
/// fails on the machine's load is one nobody trusts. Calls are a rule of their own, the same
/// on either clock.
pub fn diff_files(
    a: &Path,
    b: &Path,
    exe: [Option<&Path>; 2],
    format: DiffFormat,
    top: Option<usize>,
    time: Option<TimeBasis>,
) -> Result<DiffOutput, Error> {
    let mut reports = Vec::new();
    let mut warnings = Vec::new();
    let traces = [TraceFile::open(a)?, TraceFile::open(b)?];
    let gate = matches!(format, DiffFormat::Gate { .. });
    let (time, time_note) = match time {
        Some(time) => (
            time,
            format!("{} time (--time={})", clock_name(time), time.name()),
        ),
        None if gate => {
            let mut without = Vec::new();
            for trace in &traces {
                let info = TraceInfo::scan(&trace.trace()?).map_err(|error| Error::Format {
                    path: trace.path().to_path_buf(),
                    error,
                })?;
                if !info.summary.has_switches {
                    without.push(trace.path().display().to_string());
                }
            }
            if without.is_empty() {
                (
                    TimeBasis::Cpu,
                    "CPU time, the time the threads ran (both traces have their context \
                     switches; --time=wall compares wall time)"
                        .to_string(),
                )
            } else {
                (
                    TimeBasis::Wall,
                    format!(
                        "wall time, waiting included ({} has no context switches to take CPU \
                         time from)",
                        without.join(" and ")
                    ),
                )
            }
        }
        None => (TimeBasis::Wall, "wall time".to_string()),
    };
    for (trace, exe) in traces.iter().zip(exe) {
        let path = trace.path();
        let profile = trace.profile_on(time)?;
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
    let mut diff = report::diff::Diff::new(&reports[0], &reports[1]);
    diff.time_note = Some(time_note);
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

/// "CPU" or "wall", for the verdict.
fn clock_name(time: TimeBasis) -> &'static str {
    match time {
        TimeBasis::Cpu => "CPU",
        TimeBasis::Wall => "wall",
    }
}

#[derive(clap::Args, Debug)]
pub struct DiffArgs {
    /// The first (baseline) trace.
    pub a: PathBuf,
    /// The second trace.
    pub b: PathBuf,
    /// Raw times: do not subtract the hooks' own time (which the runtime measured at start).
    #[arg(long)]
    pub no_compensation: bool,
    /// Symbols of A from this executable instead of the path recorded in A.
    #[arg(long, value_name = "ELF")]
    pub exe_a: Option<PathBuf>,
    /// Symbols of B from this executable instead of the path recorded in B.
    #[arg(long, value_name = "ELF")]
    pub exe_b: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DiffFormatArg::Text)]
    pub format: DiffFormatArg,
    /// Only the N largest changes.
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// The regression gate: exit with status 3 when a function's METRIC grew by more than
    /// LIMIT from A to B (`exclusive > +10%`, `calls > +1000`, `inclusive > +2ms`; METRIC is
    /// calls, exclusive or inclusive). Repeatable. Prints the verdict and the breaches as
    /// Markdown, for a CI job to post.
    #[arg(long = "fail-if", value_name = "RULE", value_parser = parse_rule)]
    pub fail_if: Vec<crate::output::report::diff::Rule>,
    /// With --fail-if: judge only functions whose time (the rule's, or their inclusive time
    /// for `calls`) reaches DURATION in A or B (e.g. 1ms): shorter ones are noise.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "fail_if")]
    pub min_time: Option<u64>,
    /// Compare CPU time (only the time the threads ran, from the traces' context switches) or
    /// wall time. Default: wall, except that --fail-if judges CPU time when both traces have
    /// context switches (a busy machine's waiting is not a regression); its verdict says which.
    #[arg(long, value_enum)]
    pub time: Option<TimeArg>,
    /// Write to FILE instead of standard output (never an input trace).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

pub fn parse_rule(text: &str) -> Result<crate::output::report::diff::Rule, String> {
    text.parse()
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum DiffFormatArg {
    /// Aligned columns and a total line.
    Text,
    /// Comma-separated values with a header row (with inclusive deltas).
    Csv,
    /// A Markdown table (the format of --fail-if's verdict).
    Markdown,
}
