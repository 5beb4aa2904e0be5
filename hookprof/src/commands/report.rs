//! `hookprof report`: the flat profile of one trace or several.

use std::path::{Path, PathBuf};

use crate::analysis::model::Profile;
use crate::analysis::replay::TimeBasis;
use crate::analysis::view;
use crate::analysis::warnings::profile_warnings;
use crate::commands::arguments::TimeArg;
use crate::commands::several::{several_traces, Combine};
use crate::input::error::Error;
use crate::input::symbols::{Resolve, Symbolizer};
use crate::input::trace_file::TraceFile;
use crate::output::report::columns::TextOptions;
use crate::output::report::{self, text_columns, FlatReport, Format};
use clap::ValueEnum;

/// Options of a report, independent of any command line.
#[derive(Clone, Debug)]
pub struct ReportOptions {
    /// The executable to take symbols from instead of the path in the trace.
    pub exe: Option<PathBuf>,
    pub format: Format,
    /// One row per thread and function instead of per function.
    pub per_thread: bool,
    /// The order of the rows.
    pub sort: report::SortKey,
    /// Only the first N rows (of each thread with `per_thread`).
    pub top: Option<usize>,
    /// Percentiles (p50, p90, p99) of the inclusive time of single calls, from a second
    /// replay of the trace.
    pub percentiles: bool,
    /// Who calls each function, and how often.
    pub callers: bool,
    /// Several traces of different executables may be added up (refused otherwise:
    /// [`crate::commands::several`]).
    pub mixed_programs: bool,
    /// The text format's columns and names.
    pub text: TextOptions,
    /// The time the columns count (`--time`): CPU time is refused for a trace without
    /// context switches.
    pub time: TimeBasis,
}

/// A rendered report and the warnings to show the user.
#[derive(Clone, Debug)]
pub struct ReportOutput {
    pub bytes: Vec<u8>,
    pub warnings: Vec<String>,
    /// What to say on stderr besides the warnings: which traces were added up.
    pub notes: Vec<String>,
    pub report: FlatReport,
}

/// Reads `trace_path`, symbolizes it and renders the flat profile.
pub fn report_file(trace_path: &Path, options: &ReportOptions) -> Result<ReportOutput, Error> {
    let trace = TraceFile::open(trace_path)?;
    let profile = trace.profile_on(options.time)?;
    let mut names = Symbolizer::new(&profile.summary, options.exe.as_deref())?;
    let durations = if options.percentiles {
        let mut prepared = view::Prepared::open(trace_path, options.exe.as_deref())?;
        let (durations, view_names, _) = prepared.run(
            report::percentiles::CallDurations::new(),
            &view::Filter {
                time: options.time,
                ..view::Filter::default()
            },
        )?;
        Some((durations, prepared.info, view_names))
    } else {
        None
    };
    let mut output = render_report_with(&profile, &mut names, options, |report| {
        if let Some((durations, info, view_names)) = &durations {
            durations.fill(report, info, view_names);
        }
    });
    check_columns(&mut output.report, options, trace_path)?;
    Ok(output)
}

/// The flat profile of several traces together (`hookprof report A B …`): every process's
/// threads, functions of the same name added up ([`FlatReport::merge`]). `--per-thread` and
/// `--percentiles` take one trace. Warnings name their trace.
pub fn report_files(
    trace_paths: &[PathBuf],
    options: &ReportOptions,
) -> Result<ReportOutput, Error> {
    if let [one] = trace_paths {
        return report_file(one, options);
    }
    // Every trace named, and runs of different executables refused unless asked for.
    let note = several_traces(
        trace_paths,
        Combine::AddedUp {
            mixed_programs: options.mixed_programs,
        },
    )?;
    if options.per_thread || options.percentiles {
        return Err(Error::Unsupported {
            path: trace_paths[1].clone(),
            message: "--per-thread and --percentiles take one trace: report the traces one by \
                      one, or leave them out to add the traces up"
                .to_string(),
        });
    }
    let mut reports = Vec::new();
    let mut warnings = Vec::new();
    for path in trace_paths {
        let trace = TraceFile::open(path)?;
        let profile = trace.profile_on(options.time)?;
        let mut names = Symbolizer::new(&profile.summary, options.exe.as_deref())?;
        let mut report = FlatReport::build(&profile, &mut names, false);
        if options.callers {
            report.add_callers(&profile, &mut names);
        }
        if let Some(first) = reports.first() {
            let first: &FlatReport = first;
            if first.summary.unit.suffix() != report.summary.unit.suffix() {
                return Err(Error::Unsupported {
                    path: path.clone(),
                    message: format!(
                        "its times are in {} and the first trace's in {}: a report of several \
                         traces needs one unit (every trace with a clock rate, or none)",
                        report.summary.unit.suffix(),
                        first.summary.unit.suffix()
                    ),
                });
            }
        }
        for w in profile_warnings(&profile.summary)
            .into_iter()
            .chain(names.take_warnings())
        {
            warnings.push(format!("{}: {w}", path.display()));
        }
        reports.push(report);
    }
    let mut report = FlatReport::merge(reports);
    report.sort_and_limit(options.sort, options.top);
    check_columns(&mut report, options, &trace_paths[0])?;
    let mut bytes = Vec::new();
    report
        .render(options.format, &mut bytes)
        .expect("writing to a Vec cannot fail");
    Ok(ReportOutput {
        bytes,
        warnings,
        notes: note.into_iter().collect(),
        report,
    })
}

/// Gives `report` the text options, refusing columns it has no data for (text only: CSV and
/// JSON have their own, fixed columns).
fn check_columns(
    report: &mut FlatReport,
    options: &ReportOptions,
    path: &Path,
) -> Result<(), Error> {
    report.text = options.text.clone();
    if options.format == Format::Text {
        if let Err(message) = text_columns(report) {
            return Err(Error::Unsupported {
                path: path.to_path_buf(),
                message,
            });
        }
    }
    Ok(())
}

/// Renders the flat profile of `profile` with the names from `names`.
pub fn render_report(
    profile: &Profile,
    names: &mut dyn Resolve,
    options: &ReportOptions,
) -> ReportOutput {
    render_report_with(profile, names, options, |_| {})
}

/// [`render_report`], with `fill` adding to the report (percentiles) before it is sorted.
fn render_report_with(
    profile: &Profile,
    names: &mut dyn Resolve,
    options: &ReportOptions,
    fill: impl FnOnce(&mut FlatReport),
) -> ReportOutput {
    let mut report = FlatReport::build(profile, names, options.per_thread);
    fill(&mut report);
    if options.callers {
        report.add_callers(profile, names);
    }
    report.sort_and_limit(options.sort, options.top);
    report.text = options.text.clone();
    let mut warnings = profile_warnings(&profile.summary);
    warnings.extend(names.take_warnings());
    let mut bytes = Vec::new();
    report
        .render(options.format, &mut bytes)
        .expect("writing to a Vec cannot fail");
    ReportOutput {
        bytes,
        warnings,
        notes: Vec::new(),
        report,
    }
}

#[derive(clap::Args, Debug)]
pub struct ReportArgs {
    /// The .hktrace file.
    pub trace: PathBuf,
    /// More traces (a fork/exec family, the runs of a test suite): one report of all their
    /// threads, functions of the same name added up, the traces named on stderr. They must be
    /// runs of one executable unless --mixed-programs.
    #[arg(value_name = "MORE")]
    pub more: Vec<PathBuf>,
    /// Raw times: do not subtract the hooks' own time (which the runtime measured at start).
    #[arg(long)]
    pub no_compensation: bool,
    /// Take symbols from this executable instead of the path recorded in the trace (for a
    /// trace copied from another machine, or a program moved since).
    #[arg(long, value_name = "ELF")]
    pub exe: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    pub format: FormatArg,
    /// One row per thread and function instead of process totals.
    #[arg(long)]
    pub per_thread: bool,
    /// Order of the rows (largest first; name: alphabetical).
    #[arg(long, value_enum, default_value_t = SortArg::Sampled)]
    pub sort: SortArg,
    /// Only the first N rows (of each thread with --per-thread).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Add p50, p90 and p99 of the inclusive time of single calls (within 1 %; replays the
    /// trace a second time).
    #[arg(long)]
    pub percentiles: bool,
    /// Add who calls each function and how often (caller×calls, most first).
    #[arg(long)]
    pub callers: bool,
    /// Add up traces of different executables too. Without it, several traces (a glob such
    /// as `*.hktrace`) must be runs of one program, or the report is refused with the list of
    /// traces and their executables.
    #[arg(long)]
    pub mixed_programs: bool,
    /// Text: these columns, in this order (comma-separated; the function's name is always
    /// last): percent, sampled_self, exclusive (self), inclusive (total), calls, avg
    /// (per_call), min, max, p50, p90, p99, exclusive_oncpu, exclusive_offcpu,
    /// inclusive_oncpu, inclusive_offcpu, sampled_total, sampled_percent.
    #[arg(long, value_name = "LIST", value_parser = parse_columns, conflicts_with = "wide")]
    pub columns: Option<ColumnList>,
    /// Text: every column the trace has data for.
    #[arg(long)]
    pub wide: bool,
    /// Text: function names as demangled, without eliding template and generic arguments
    /// or shortening them to fit the line.
    #[arg(long)]
    pub full_names: bool,
    /// cpu: every time column counts only the time the thread ran (from the trace's context
    /// switches; refused for a trace without them). See docs/views.md.
    #[arg(long, value_enum, default_value_t = TimeArg::Wall)]
    pub time: TimeArg,
    /// Write the report to FILE instead of standard output (never the input trace).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `--columns`' list (a type of its own: clap takes a `Vec` for a repeated option).
#[derive(Clone, Debug)]
pub struct ColumnList(pub Vec<crate::output::report::columns::Column>);

pub fn parse_columns(text: &str) -> Result<ColumnList, String> {
    crate::output::report::columns::Column::parse_list(text).map(ColumnList)
}

/// The width of the terminal standard output is (`COLUMNS` first), if it is one.
pub fn terminal_width() -> Option<usize> {
    if let Some(n) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
    {
        return Some(n);
    }
    #[cfg(unix)]
    {
        // SAFETY: TIOCGWINSZ fills the winsize it is given; fd 1 may be anything.
        let mut size: libc::winsize = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut size) } == 0;
        if ok && size.ws_col > 0 {
            return Some(usize::from(size.ws_col));
        }
    }
    None
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum SortArg {
    /// Sampled self time (the CPU time the trace's samples found in the function itself,
    /// docs/views.md "Sampled times"), then exclusive time; exclusive time where the trace
    /// has no samples, or fewer than 1000 in functions.
    Sampled,
    /// Exclusive time (time in the function itself).
    Exclusive,
    /// Inclusive time.
    Inclusive,
    /// Number of calls.
    Calls,
    /// Average inclusive time per call.
    Avg,
    /// Longest single call.
    Max,
    /// Function name.
    Name,
}

impl From<SortArg> for crate::output::report::SortKey {
    fn from(s: SortArg) -> Self {
        use crate::output::report::SortKey as K;
        match s {
            SortArg::Sampled => K::Sampled,
            SortArg::Exclusive => K::Exclusive,
            SortArg::Inclusive => K::Inclusive,
            SortArg::Calls => K::Calls,
            SortArg::Avg => K::Avg,
            SortArg::Max => K::Max,
            SortArg::Name => K::Name,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FormatArg {
    /// Aligned columns and a summary line.
    Text,
    /// Comma-separated values with a header row.
    Csv,
    /// One JSON object with "summary", "threads" and "functions".
    Json,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Text => Format::Text,
            FormatArg::Csv => Format::Csv,
            FormatArg::Json => Format::Json,
        }
    }
}

impl From<&ReportArgs> for ReportOptions {
    fn from(a: &ReportArgs) -> ReportOptions {
        ReportOptions {
            exe: a.exe.clone(),
            format: a.format.into(),
            per_thread: a.per_thread,
            sort: a.sort.into(),
            top: a.top,
            percentiles: a.percentiles,
            callers: a.callers,
            mixed_programs: a.mixed_programs,
            text: crate::output::report::columns::TextOptions {
                columns: a.columns.clone().map(|c| c.0),
                wide: a.wide,
                full_names: a.full_names,
                // A file is read later, anywhere: the default width.
                width: if a.output.is_none() {
                    terminal_width()
                } else {
                    None
                },
            },
            time: a.time.into(),
        }
    }
}

/// `hookprof report --help`'s text after the options: the columns, each once.
pub const REPORT_AFTER_HELP: &str = "\
Text columns (--columns=LIST; the name is always last):
  percent            the sort key's share of the whole (self% where the key has none)
  sampled_self       sampled self time (CPU time by the trace's samples; in the default
                     set when the rows are in its order)
  exclusive (self), inclusive (total), calls, avg (per_call), min, max
  p50, p90, p99      with --percentiles
  exclusive_oncpu, exclusive_offcpu, inclusive_oncpu, inclusive_offcpu
                     where the trace has context switches
  sampled_total, sampled_percent
                     where the trace has samples
CSV columns: [thread,]function,calls,inclusive_ns,exclusive_ns,min_ns,max_ns,avg_ns,percent
             [,p50_ns,p90_ns,p99_ns with --percentiles]
             [,inclusive_oncpu_ns,inclusive_offcpu_ns,exclusive_oncpu_ns,exclusive_offcpu_ns
               where the trace has context switches]
             [,sampled_self_ns,sampled_total_ns,sampled_percent where it has samples]
             [,callers with --callers]
  thread    with --per-thread: the THREAD chunk's sequence number (1 = first thread),
            or the Linux TID if the trace has no THREAD chunk for the thread
  min/max   shortest and longest inclusive time of a single call
  avg       mean inclusive time per call
  percent   share of the total exclusive time of all rows (two decimals), also with --top
  p50..p99  percentiles of the inclusive time of single calls (exact up to 1024 calls of a
            function, else within 0.1 %; never outside min..max)
  callers   with --callers: caller×calls;… (<spontaneous>: bottom of a thread's stack)";
