//! `hookprof timeline`.

use std::io;
use std::path::{Path, PathBuf};

use crate::analysis::replay::TimeBasis;
use crate::analysis::view;
use crate::commands::view_options::SizeLimitArgs;
use crate::commands::view_options::ViewArgs;
use crate::commands::view_options::{write_error, ViewOptions};
use crate::input::error::Error;
use crate::input::lines;
use crate::output::report;
use clap::ValueEnum;

/// The output of `hookprof timeline`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimelineFormat {
    /// Chrome trace-event JSON ([`report::timeline`]).
    Json,
    /// A Perfetto protobuf trace ([`report::perfetto`]).
    Perfetto,
}

/// Writes the timeline of `trace_path` to `out` as it is replayed: Chrome trace-event JSON
/// ([`report::timeline`]) or a Perfetto trace ([`report::perfetto`]). Returns the warnings
/// to show.
pub fn timeline_file(
    trace_path: &Path,
    options: &ViewOptions,
    format: TimelineFormat,
    out: &mut dyn io::Write,
) -> Result<Vec<String>, Error> {
    let mut prepared = view::Prepared::open(trace_path, options.exe.as_deref())?;
    prepared.needs_records()?;
    prepared.check_time(options.filter.time, true)?;
    let switched_out = options.filter.time == TimeBasis::Cpu;
    prepared.progress = options.progress.clone();
    let lines = lines::SourceLines::for_executable(&prepared.info.summary, options.exe.as_deref());
    // Bytes a record makes at least, measured on short C names without -g (docs/views.md's
    // table: 106–110 and 20–21; -g adds each call's source to the JSON, long names more).
    let (per_record, what) = match format {
        TimelineFormat::Json => (110, "timeline (Chrome JSON)"),
        TimelineFormat::Perfetto => (21, "timeline (Perfetto trace)"),
    };
    let (mut filter, note) =
        prepared.sized(&options.filter, per_record, options.size_limit, what)?;
    // A timeline stays on the wall clock: CPU time is drawn as what is left beside the
    // switched-out slices.
    filter.time = TimeBasis::Wall;
    let mut warnings = match format {
        TimelineFormat::Json => {
            let timeline = report::timeline::Timeline::start(out, &prepared.info)
                .map_err(write_error)?
                .with_lines(lines)
                .with_switched_out(switched_out);
            let (timeline, _, warnings) = prepared.run(timeline, &filter)?;
            timeline.finish().map_err(write_error)?;
            warnings
        }
        TimelineFormat::Perfetto => {
            let trace = report::perfetto::Perfetto::start(out, &prepared.info)
                .map_err(write_error)?
                .with_lines(lines)
                .with_switched_out(switched_out);
            let (trace, _, warnings) = prepared.run(trace, &filter)?;
            trace.finish().map_err(write_error)?;
            warnings
        }
    };
    warnings.extend(note);
    Ok(warnings)
}

/// Writes one timeline of several traces (`hookprof timeline A B …`): each process with its
/// threads, named after its executable and shown with its pid, all on one time axis — each
/// trace's wall clock at its first record ([`view::TraceInfo::wall_start_ns`]), from the
/// earliest of them. A pid two traces share (runs on two machines) is shown for the second as
/// pid + 1 000 000 × n. Every trace needs a clock rate. Returns the warnings, each naming its
/// trace.
pub fn timeline_files(
    trace_paths: &[PathBuf],
    options: &ViewOptions,
    format: TimelineFormat,
    out: &mut dyn io::Write,
) -> Result<Vec<String>, Error> {
    if let [one] = trace_paths {
        return timeline_file(one, options, format, out);
    }
    let mut traces = Vec::new();
    for path in trace_paths {
        let prepared = view::Prepared::open(path, options.exe.as_deref())?;
        prepared.needs_records()?;
        prepared.check_time(options.filter.time, true)?;
        let Some(wall) = prepared.info.wall_start_ns() else {
            return Err(Error::Unsupported {
                path: path.clone(),
                message: "the trace has no clock rate, so it cannot be put on one time axis with \
                          other traces (view it alone)"
                    .to_string(),
            });
        };
        traces.push((path, prepared, wall));
    }
    let earliest = traces.iter().map(|t| t.2).min().unwrap_or(0);
    let (per_record, what) = match format {
        TimelineFormat::Json => (110, "timeline (Chrome JSON)"),
        TimelineFormat::Perfetto => (21, "timeline (Perfetto trace)"),
    };
    let mut pids = std::collections::HashSet::new();
    let mut warnings = Vec::new();
    let mut json = None;
    let mut perfetto = None;
    let switched_out = options.filter.time == TimeBasis::Cpu;
    match format {
        TimelineFormat::Json => {
            json =
                Some(report::timeline::Timeline::begin(&mut *out).with_switched_out(switched_out))
        }
        TimelineFormat::Perfetto => {
            perfetto =
                Some(report::perfetto::Perfetto::begin(&mut *out).with_switched_out(switched_out))
        }
    }
    for (path, mut prepared, wall) in traces {
        prepared.progress = options.progress.clone();
        prepared.info.clock.offset = wall - earliest;
        let mut pid = prepared.info.summary.header.pid;
        while !pids.insert(pid) {
            pid += 1_000_000;
        }
        let lines =
            lines::SourceLines::for_executable(&prepared.info.summary, options.exe.as_deref());
        let (mut filter, note) =
            prepared.sized(&options.filter, per_record, options.size_limit, what)?;
        filter.time = TimeBasis::Wall;
        let mut named = |w: Vec<String>| {
            warnings.extend(w.into_iter().map(|w| format!("{}: {w}", path.display())));
        };
        if let Some(mut timeline) = json.take() {
            timeline.process(&prepared.info, pid);
            timeline.set_lines(lines);
            let (timeline, _, w) = prepared.run(timeline, &filter)?;
            json = Some(timeline);
            named(w);
        } else if let Some(mut trace) = perfetto.take() {
            trace.process(&prepared.info, pid);
            trace.set_lines(lines);
            let (trace, _, w) = prepared.run(trace, &filter)?;
            perfetto = Some(trace);
            named(w);
        }
        named(note.into_iter().collect());
    }
    if let Some(timeline) = json {
        timeline.finish().map_err(write_error)?;
    }
    if let Some(trace) = perfetto {
        trace.finish().map_err(write_error)?;
    }
    Ok(warnings)
}

#[derive(clap::Args, Debug)]
pub struct TimelineArgs {
    #[command(flatten)]
    pub view: ViewArgs,
    /// More traces for the same timeline (a fork/exec family, a client and its server, the runs
    /// of a test suite): each its own process, aligned on the wall clock each trace recorded;
    /// the traces are named on stderr.
    #[arg(value_name = "MORE")]
    pub more: Vec<PathBuf>,
    /// Chrome trace-event JSON, or a Perfetto protobuf trace (a fifth of the size). Default:
    /// perfetto for an output name ending in .pftrace or .perfetto-trace (before any .gz),
    /// else json. An output name ending in .gz is gzip-compressed (both formats).
    #[arg(long, value_enum)]
    pub format: Option<TimelineFormatArg>,
    #[command(flatten)]
    pub size: SizeLimitArgs,
}

impl TimelineArgs {
    pub fn format(&self) -> TimelineFormat {
        let by_name = self.view.output.as_deref().and_then(|path| {
            let name = path.file_name()?.to_str()?;
            let name = name.strip_suffix(".gz").unwrap_or(name);
            (name.ends_with(".pftrace") || name.ends_with(".perfetto-trace"))
                .then_some(TimelineFormat::Perfetto)
        });
        match self.format {
            Some(TimelineFormatArg::Json) => TimelineFormat::Json,
            Some(TimelineFormatArg::Perfetto) => TimelineFormat::Perfetto,
            None => by_name.unwrap_or(TimelineFormat::Json),
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum TimelineFormatArg {
    /// Chrome trace-event JSON: Perfetto UI, chrome://tracing, speedscope.
    Json,
    /// Perfetto's protobuf trace format: Perfetto UI, trace_processor.
    Perfetto,
}
