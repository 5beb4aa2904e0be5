//! `hookprof report`: the flat profile of one trace or several.

use std::path::{Path, PathBuf};

use crate::analysis::model::Profile;
use crate::analysis::replay::TimeBasis;
use crate::analysis::view;
use crate::analysis::warnings::profile_warnings;
use crate::commands::several::{several_traces, Combine};
use crate::input::error::Error;
use crate::input::symbols::{Resolve, Symbolizer};
use crate::input::trace_file::TraceFile;
use crate::output::report::columns::TextOptions;
use crate::output::report::{self, text_columns, FlatReport, Format};

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
