//! hookprof: reads the `.hktrace` files written by the hookcc runtime and reports on them.
//!
//! Layers, each usable on its own:
//! - [`format`](mod@format): the trace format (reader and [`format::Writer`]), per docs/trace-format.md;
//! - [`replay`]: pairs entries and exits per thread and feeds a [`replay::ReplayVisitor`];
//!   every report reads the trace through it;
//! - [`model`]: per-function statistics and caller→callee arcs, per thread and merged;
//! - [`symbols`]: function names from the ELF files of the traced program; [`lines`]: source
//!   lines from its DWARF;
//! - [`view`]: the replay's frames named and filtered (`--function`, `--exclude`, `--thread`,
//!   `--depth`, `--min-duration`, `--time-range`) for the views;
//! - [`report`]: the flat profile in text, CSV and JSON, and one module per view over
//!   [`view`]: `timeline` (Chrome trace events), `flame` (folded stacks, SVG), `speedscope`,
//!   `callgrind`, `calltree` (`hookprof replay`), `percentiles`; and over [`model`]: `gmon`
//!   (gprof) and `diff`;
//! - [`info`]: the description printed by `hookprof info`;
//! - [`output`]: how every output file is written (temporary, rename, mode).
//!
//! [`TraceFile`] memory-maps a trace and [`report_file`] runs a whole report, which is all
//! the `hookprof` binary does.

pub mod analysis;
pub mod commands;
pub mod fuzz;
pub mod input;
pub mod output;

use analysis::{model, replay, view};
use input::{format, lines, nitro, symbols, ti};
use output::{callgraph, info, report};

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use format::{FormatError, Trace};
use model::Profile;
use replay::TraceSummary;
use report::{FlatReport, Format};
use symbols::{Resolve, SymbolError, Symbolizer};

/// Everything that can go wrong in hookprof's library, with the file it concerns.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    // The underlying errors are part of the message, not `source()`, so that printing the
    // chain does not repeat them.
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
    #[error("{}: {error}", path.display())]
    Format { path: PathBuf, error: FormatError },
    #[error(transparent)]
    Symbols(#[from] SymbolError),
    #[error("{}: refusing to write the report over the input trace", path.display())]
    OutputIsInput { path: PathBuf },
    #[error("cannot write the output: {error}")]
    Write { error: io::Error },
    /// Creating, writing or replacing an output file ([`output`]).
    #[error("{}: cannot {action}: {error}", path.display())]
    Output {
        path: PathBuf,
        action: &'static str,
        error: io::Error,
    },
    #[error("{}: {message}", path.display())]
    Unsupported { path: PathBuf, message: String },
    #[error(transparent)]
    Ti(#[from] ti::Error),
    #[error(transparent)]
    Nitro(#[from] nitro::Error),
    #[error("{} has times in {} and {} in {}: they cannot be compared", a.display(), unit_a, b.display(), unit_b)]
    DiffUnits {
        a: PathBuf,
        unit_a: &'static str,
        b: PathBuf,
        unit_b: &'static str,
    },
}

/// A trace file: memory-mapped while this process holds a shared `flock` on it, else read
/// into memory.
///
/// The hookcc runtime keeps an exclusive `flock` on the trace it writes for as long as it
/// runs, and never truncates a file another process has locked (it writes `<name>.<pid>`
/// instead; docs/trace-format.md, `HOOKCC_OUTPUT`). So a file we could lock shared is one no
/// runtime is writing and none will truncate while we hold the lock: mapping it is safe from
/// the SIGBUS that reading a mapping past a shrunken end gives. A file a runtime is writing
/// (the lock is refused) is copied as it is now.
pub struct TraceFile {
    path: PathBuf,
    contents: Contents,
    /// Holds the shared lock of a mapped file until the map is gone (`None`: a trace made in
    /// memory, [`TraceFile::from_bytes`]).
    _file: Option<File>,
}

enum Contents {
    Empty,
    Mapped(memmap2::Mmap),
    Copied(Vec<u8>),
}

/// Takes a shared `flock` on `file` without waiting: false if a writer holds it exclusively.
#[cfg(unix)]
fn try_lock_shared(file: &File) -> bool {
    use std::os::unix::io::AsRawFd;
    loop {
        // SAFETY: flock on a file descriptor this File owns and keeps open.
        let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) };
        if r == 0 {
            return true;
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) => return false,
            // No locks on this file system: nothing to coordinate with, map it.
            _ => return true,
        }
    }
}

#[cfg(not(unix))]
fn try_lock_shared(_file: &File) -> bool {
    true
}

impl TraceFile {
    pub fn open(path: &Path) -> Result<TraceFile, Error> {
        let io_err = |error| Error::Io {
            path: path.to_path_buf(),
            error,
        };
        let mut file = File::open(path).map_err(io_err)?;
        let meta = file.metadata().map_err(io_err)?;
        if meta.is_dir() {
            // Mapping one fails with ENODEV, "No such device": say what it is instead.
            return Err(io_err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "is a directory, not a trace file",
            )));
        }
        let len = meta.len();
        let contents = if len == 0 {
            // Mapping an empty file fails on some systems; an empty trace is reported by the
            // header check instead.
            Contents::Empty
        } else if try_lock_shared(&file) {
            // SAFETY: the map is read-only, and while we hold the shared lock no hookcc
            // runtime writes or truncates the file (see above). The reader treats every byte
            // as untrusted and bounds-checks every read, so bytes changed by anything else
            // give wrong numbers or a format error, never unchecked memory access; only a
            // truncation by a program that ignores the lock could still fault.
            Contents::Mapped(unsafe { memmap2::Mmap::map(&file) }.map_err(io_err)?)
        } else {
            let mut data = Vec::new();
            io::Read::read_to_end(&mut io::Read::take(&mut file, len), &mut data)
                .map_err(io_err)?;
            Contents::Copied(data)
        };
        Ok(TraceFile {
            path: path.to_path_buf(),
            contents,
            _file: Some(file),
        })
    }

    /// A trace made in memory from the file at `path` (a TI dump converted for a view): errors
    /// name `path`.
    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> TraceFile {
        TraceFile {
            path: path.to_path_buf(),
            contents: Contents::Copied(bytes),
            _file: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn bytes(&self) -> &[u8] {
        match &self.contents {
            Contents::Empty => &[],
            Contents::Mapped(map) => map,
            Contents::Copied(data) => data,
        }
    }

    fn format_error(&self, error: FormatError) -> Error {
        Error::Format {
            path: self.path.clone(),
            error,
        }
    }

    /// The trace with its header validated.
    pub fn trace(&self) -> Result<Trace<'_>, Error> {
        Trace::new(self.bytes()).map_err(|e| self.format_error(e))
    }

    /// Replays the trace for its summary only (what `hookprof info` shows).
    pub fn summary(&self) -> Result<TraceSummary, Error> {
        replay::replay_bytes(self.bytes(), &mut ()).map_err(|e| self.format_error(e))
    }

    /// Replays the trace into per-function statistics.
    pub fn profile(&self) -> Result<Profile, Error> {
        Profile::from_bytes(self.bytes()).map_err(|e| self.format_error(e))
    }
}

/// The largest dump `hookprof ti` and `hookprof nitro` read (a target's record buffer is far
/// smaller; CCS hex text takes 2.75 bytes per byte of memory). Without a bound, `/dev/zero` or
/// a huge sparse file would be read until memory ran out.
pub const MAX_DUMP_BYTES: u64 = 256 << 20;

/// Reads at most `limit` bytes of the file at `path`: an error, before reading anything, if
/// it is a regular file larger than that, or once more than `limit` bytes came (a device, a
/// pipe).
pub fn read_bounded(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    use io::Read;
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a directory",
        ));
    }
    let too_large = |what: String| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{what}, more than the {} MiB hookprof reads as a dump (a target's record \
                 buffer is smaller): is this the dump?",
                limit >> 20
            ),
        )
    };
    if meta.is_file() && meta.len() > limit {
        return Err(too_large(format!("{} bytes", meta.len())));
    }
    let mut data = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut data)?;
    if data.len() as u64 > limit {
        return Err(too_large(format!("more than {limit} bytes")));
    }
    Ok(data)
}

/// The first `limit` bytes of the file at `path` (fewer if it is shorter).
pub fn read_bounded_prefix(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    use io::Read;
    let file = File::open(path)?;
    if file.metadata()?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a directory",
        ));
    }
    let mut data = Vec::new();
    file.take(limit).read_to_end(&mut data)?;
    Ok(data)
}

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
}

/// A rendered report and the warnings to show the user.
#[derive(Clone, Debug)]
pub struct ReportOutput {
    pub bytes: Vec<u8>,
    pub warnings: Vec<String>,
    pub report: FlatReport,
}

/// Reads `trace_path`, symbolizes it and renders the flat profile.
pub fn report_file(trace_path: &Path, options: &ReportOptions) -> Result<ReportOutput, Error> {
    let trace = TraceFile::open(trace_path)?;
    let profile = trace.profile()?;
    let mut names = Symbolizer::new(&profile.summary, options.exe.as_deref())?;
    let durations = if options.percentiles {
        let mut prepared = view::Prepared::open(trace_path, options.exe.as_deref())?;
        let (durations, view_names, _) = prepared.run(
            report::percentiles::CallDurations::new(),
            &view::Filter::default(),
        )?;
        Some((durations, prepared.info, view_names))
    } else {
        None
    };
    Ok(render_report_with(
        &profile,
        &mut names,
        options,
        |report| {
            if let Some((durations, info, view_names)) = &durations {
                durations.fill(report, info, view_names);
            }
        },
    ))
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
        let profile = trace.profile()?;
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
    let mut bytes = Vec::new();
    report
        .render(options.format, &mut bytes)
        .expect("writing to a Vec cannot fail");
    Ok(ReportOutput {
        bytes,
        warnings,
        report,
    })
}

/// Reads `trace_path`, symbolizes it and renders the Dynamic Call Graph ([`callgraph`]).
/// Returns the text and the warnings to show.
pub fn callgraph_file(
    trace_path: &Path,
    exe: Option<&Path>,
) -> Result<(Vec<u8>, Vec<String>), Error> {
    let trace = TraceFile::open(trace_path)?;
    let profile = trace.profile()?;
    let mut names = Symbolizer::new(&profile.summary, exe)?;
    let mut bytes = Vec::new();
    callgraph::render(&profile, &mut names, callgraph::Times::Trace, &mut bytes)
        .expect("writing to a Vec cannot fail");
    let mut warnings = profile_warnings(&profile.summary);
    warnings.extend(names.take_warnings());
    Ok((bytes, warnings))
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
    let mut warnings = profile_warnings(&profile.summary);
    warnings.extend(names.take_warnings());
    let mut bytes = Vec::new();
    report
        .render(options.format, &mut bytes)
        .expect("writing to a Vec cannot fail");
    ReportOutput {
        bytes,
        warnings,
        report,
    }
}

/// Warnings about the trace itself that every report shares.
pub fn profile_warnings(s: &TraceSummary) -> Vec<String> {
    let mut warnings = Vec::new();
    if !s.header.is_complete() {
        warnings.push(
            "the trace is incomplete (the program was killed or is still running): \
             frames still open are closed at each thread's last record"
                .to_string(),
        );
    }
    if let Some(err) = &s.truncated_tail {
        warnings.push(format!(
            "the last chunk of this incomplete trace is cut short and was ignored ({err})"
        ));
    }
    if s.ticks_per_second().is_none() {
        warnings.push(
            "the trace has no clock rate (ticks_per_second is 0 and there is no CLOCK chunk): \
             times are in ticks and the columns are named *_ticks"
                .to_string(),
        );
    }
    if s.lost() > 0 && s.lost_markers > 0 {
        // A stream's (hookprof record): the target dropped them, at the places its LOST
        // chunks say.
        warnings.push(format!(
            "{} records were dropped by the target at {} places, where the host did not read \
             its stream in time (the ring's size, the poll interval: docs/baremetal.md, \
             \"Streaming\"); frames open there were closed at the gap, and the profile is \
             missing those calls",
            s.lost(),
            s.lost_markers
        ));
    } else if s.lost() > 0 {
        // The LOST chunks count what threads could not keep; the header counts those and the
        // records nobody's chunk could take (made after their thread's last chunk).
        let in_chunks = s.lost_in_chunks.min(s.lost());
        let after = s.lost() - in_chunks;
        let mut causes = Vec::new();
        if in_chunks > 0 {
            causes.push(format!(
                "{in_chunks} not kept by their threads (HOOKCC_MAX_BYTES or the disk's \
                 free-space reserve reached, the file not writable, or hooks re-entered from \
                 inside the runtime)"
            ));
        }
        if after > 0 {
            causes.push(format!(
                "{after} made after their thread's last records were written (in thread-exit \
                 destructors that ran after the runtime's last round, in a thread that got no \
                 buffer, or after the file was finished at exit)"
            ));
        }
        warnings.push(format!(
            "{} records were lost by the runtime: {}; the profile is missing those calls",
            s.lost(),
            causes.join("; ")
        ));
    }
    if s.hole_bytes > 0 {
        warnings.push(format!(
            "{} zero bytes were skipped where chunks were expected (space reserved by a thread \
             that never wrote it)",
            s.hole_bytes
        ));
    }
    warnings.extend(s.integrity.warnings());
    warnings.extend(disagreement_warnings(s));
    warnings
}

/// Where what was read disagrees with what the trace promises: the finished header's counts,
/// the CLOCK chunk every finished trace ends with, chunks written once or in time order. A
/// chunk copied together with its CHECK chunk, or a file cut at a chunk boundary, passes
/// every checksum: these are what show it.
fn disagreement_warnings(s: &TraceSummary) -> Vec<String> {
    let mut warnings = Vec::new();
    let h = &s.header;
    let check = "(`hookprof info` shows what was read)";
    // Under HOOKCC_MIN_DURATION the header counts the records kept, the trees every call.
    let read = if s.records_skipped {
        s.kept_records
    } else {
        s.records
    };
    if h.is_complete() && h.records != read {
        let what = if read < h.records {
            "chunks are missing (the file was cut or overwritten)"
        } else {
            "chunks are repeated (copied) or the header is corrupt"
        };
        warnings.push(format!(
            "the header (byte 48) says the finished trace holds {} records, but {} were read: \
             {what}; the profile is not the program's {check}",
            h.records, read
        ));
    }
    if h.is_complete() && s.lost_in_chunks > h.lost {
        warnings.push(format!(
            "the LOST chunks count {} lost records, more than the header's {} (byte 56), which \
             counts them all: a LOST chunk is repeated or the header is corrupt {check}",
            s.lost_in_chunks, h.lost
        ));
    }
    // Only what a runtime wrote: its EXE (hosted) or MODULE (bare metal) chunk comes first. A
    // TI or NITRO dump converted by hookprof (neither, and no CLOCK) has nothing to miss.
    let from_a_runtime = s.exe.is_some() || !s.modules.is_empty();
    if h.is_complete() && s.clock.is_none() && s.truncated_tail.is_none() && from_a_runtime {
        warnings.push(format!(
            "the trace is marked finished but has no CLOCK chunk, which the runtime writes when \
             it finishes the file: the file was cut at byte {} (its end), and what came after \
             is missing (records, THREAD chunks); times at the end may be wrong {check}",
            s.end_offset
        ));
    }
    if let Some(first) = s.first_misplaced {
        warnings.push(format!(
            "{} of the trace's chunks are out of place, the first: {first}: the file was \
             copied or pasted in part (checksums cannot see it); counts and times may be \
             doubled or wrong {check}",
            s.misplaced
        ));
    }
    warnings
}

/// Whether writing to `output` would overwrite `input` (same file, possibly under another
/// name). A missing output file is never the input.
pub fn same_file(input: &Path, output: &Path) -> bool {
    match (std::fs::metadata(input), std::fs::metadata(output)) {
        (Ok(a), Ok(b)) => {
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                a.dev() == b.dev() && a.ino() == b.ino()
            }
            #[cfg(not(unix))]
            {
                let _ = (a, b);
                std::fs::canonicalize(input).ok() == std::fs::canonicalize(output).ok()
            }
        }
        _ => false,
    }
}

/// Options every view shares (`hookprof timeline`, `flame`, `callgrind`, `replay`).
#[derive(Clone, Debug, Default)]
pub struct ViewOptions {
    /// The executable to take symbols from instead of the path in the trace.
    pub exe: Option<PathBuf>,
    pub filter: view::Filter,
    /// Told of the replay's progress (the `hookprof` binary draws a bar with it).
    pub progress: Option<view::Progress>,
    /// `timeline` and `speedscope`: leave out short calls when an unfiltered output would pass
    /// this many bytes ([`view::Filter::sized`]); `None`: never.
    pub size_limit: Option<u64>,
}

fn write_error(error: io::Error) -> Error {
    Error::Write { error }
}

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
    prepared.progress = options.progress.clone();
    let lines = lines::SourceLines::for_executable(&prepared.info.summary, options.exe.as_deref());
    // Bytes a record makes at least, measured on short C names without -g (docs/views.md's
    // table: 106–110 and 20–21; -g adds each call's source to the JSON, long names more).
    let (per_record, what) = match format {
        TimelineFormat::Json => (110, "timeline (Chrome JSON)"),
        TimelineFormat::Perfetto => (21, "timeline (Perfetto trace)"),
    };
    let (filter, note) = options
        .filter
        .sized(&prepared.info, per_record, options.size_limit, what);
    let mut warnings = match format {
        TimelineFormat::Json => {
            let timeline = report::timeline::Timeline::start(out, &prepared.info)
                .map_err(write_error)?
                .with_lines(lines);
            let (timeline, _, warnings) = prepared.run(timeline, &filter)?;
            timeline.finish().map_err(write_error)?;
            warnings
        }
        TimelineFormat::Perfetto => {
            let trace = report::perfetto::Perfetto::start(out, &prepared.info)
                .map_err(write_error)?
                .with_lines(lines);
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
    match format {
        TimelineFormat::Json => json = Some(report::timeline::Timeline::begin(&mut *out)),
        TimelineFormat::Perfetto => perfetto = Some(report::perfetto::Perfetto::begin(&mut *out)),
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
        let (filter, note) =
            options
                .filter
                .sized(&prepared.info, per_record, options.size_limit, what);
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

/// What `hookprof export` is told beyond the traces.
pub struct ExportOptions {
    /// The dataset's directory: `DIR/calls/run=RUN/PID.parquet`, `DIR/functions/…`.
    pub dir: PathBuf,
    /// The run's id (the `run` partition); `None`: the earliest trace's start, UTC, and its
    /// pid (`20261126T013000Z-4242`).
    pub run: Option<String>,
    /// The `host` column; `None`: this machine's host name.
    pub host: Option<String>,
    /// For traces without a clock rate (TI and NITRO dumps): their ticks per second.
    pub ticks_per_second: Option<u64>,
}

/// What `hookprof export` wrote, per trace: its two files and their rows.
pub struct Exported {
    pub run: String,
    pub files: Vec<(PathBuf, u64, PathBuf, u64)>,
}

/// The machine's host name, for the `host` column.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// Exports `trace_paths` as one run of the Parquet dataset `export.dir`
/// ([`report::parquet`], docs/export.md). Each trace's files are written under a temporary
/// name and renamed when complete; a file already there (a run exported before) is an error,
/// never overwritten.
pub fn export_files(
    trace_paths: &[PathBuf],
    options: &ViewOptions,
    export: &ExportOptions,
) -> Result<(Exported, Vec<String>), Error> {
    let mut traces = Vec::new();
    for path in trace_paths {
        let mut prepared = view::Prepared::open(path, options.exe.as_deref())?;
        if prepared.info.clock.ticks_per_second.is_none() {
            prepared.info.clock.ticks_per_second = export.ticks_per_second;
        }
        let Some(wall) = prepared.info.wall_start_ns() else {
            return Err(Error::Unsupported {
                path: path.clone(),
                message: "the trace has no clock rate, and the tables hold nanoseconds: give \
                          its counter's rate with --ticks-per-second"
                    .to_string(),
            });
        };
        traces.push((path, prepared, wall));
    }
    let run = match &export.run {
        Some(run) => run.clone(),
        None => {
            let (_, first, wall) = traces
                .iter()
                .min_by_key(|t| t.2)
                .expect("at least one trace");
            let stamp = info::utc(*wall);
            let digits: String = stamp.chars().filter(char::is_ascii_digit).collect();
            format!(
                "{}T{}Z-{}",
                &digits[..8],
                &digits[8..14],
                first.info.summary.header.pid
            )
        }
    };
    if run.is_empty() || run.contains(['/', '\0']) || run == "." || run == ".." {
        return Err(Error::Unsupported {
            path: export.dir.clone(),
            message: format!("{run:?} cannot be a run's directory name (--run)"),
        });
    }
    let host = export.host.clone().unwrap_or_else(host_name);
    let mut exported = Exported {
        run: run.clone(),
        files: Vec::new(),
    };
    let mut warnings = Vec::new();
    for (path, mut prepared, wall) in traces {
        prepared.progress = options.progress.clone();
        let pid = prepared.info.summary.header.pid;
        let destination = report::parquet::Destination::new(&export.dir, &run, pid, &host);
        for file in [&destination.calls, &destination.functions] {
            if file.exists() {
                return Err(Error::Unsupported {
                    path: file.clone(),
                    message: "already exported (a run's files are never overwritten: choose \
                              another --run, or remove them)"
                        .to_string(),
                });
            }
        }
        let partial = |p: &Path| p.with_extension("parquet.partial");
        let temporary = report::parquet::Destination {
            calls: partial(&destination.calls),
            functions: partial(&destination.functions),
            host: host.clone(),
        };
        let lines =
            lines::SourceLines::for_executable(&prepared.info.summary, options.exe.as_deref());
        let output_error = |file: &Path, error: io::Error| Error::Output {
            path: file.to_path_buf(),
            action: "write",
            error,
        };
        let result = (|| {
            let view =
                report::parquet::ParquetExport::start(&temporary, &prepared.info, wall, lines)
                    .map_err(|e| output_error(&destination.calls, e))?;
            let (view, names, w) = prepared.run(view, &options.filter)?;
            let (calls, functions) = view
                .finish(&names)
                .map_err(|e| output_error(&destination.calls, e))?;
            for (from, to) in [
                (&temporary.calls, &destination.calls),
                (&temporary.functions, &destination.functions),
            ] {
                std::fs::rename(from, to).map_err(|e| Error::Output {
                    path: to.clone(),
                    action: "rename into place",
                    error: e,
                })?;
            }
            Ok::<_, Error>((calls, functions, w))
        })();
        match result {
            Ok((calls, functions, w)) => {
                warnings.extend(w.into_iter().map(|w| format!("{}: {w}", path.display())));
                exported
                    .files
                    .push((destination.calls, calls, destination.functions, functions));
            }
            Err(e) => {
                let _ = std::fs::remove_file(&temporary.calls);
                let _ = std::fs::remove_file(&temporary.functions);
                return Err(e);
            }
        }
    }
    Ok((exported, warnings))
}

/// Writes the call tree of `trace_path` (`hookprof replay`, [`report::calltree`]) to `out`
/// as it is replayed. Returns the warnings to show.
pub fn calltree_file(
    trace_path: &Path,
    options: &ViewOptions,
    out: &mut dyn io::Write,
) -> Result<Vec<String>, Error> {
    let mut prepared = view::Prepared::open(trace_path, options.exe.as_deref())?;
    prepared.needs_records()?;
    prepared.progress = options.progress.clone();
    let tree = report::calltree::CallTree::start(out, &prepared.info).map_err(write_error)?;
    let (tree, names, warnings) = prepared.run(tree, &options.filter)?;
    tree.finish(&names).map_err(write_error)?;
    Ok(warnings)
}

/// The output of `hookprof flame`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlameFormat {
    /// Folded stacks, one `frame;frame;… count` line per distinct stack.
    Folded,
    /// An SVG flame graph (inferno).
    Svg,
}

/// Options of `hookprof flame` besides the shared ones.
#[derive(Clone, Copy, Debug)]
pub struct FlameOptions {
    pub format: FlameFormat,
    /// Icicle graph: the outermost frames at the top (SVG only).
    pub inverted: bool,
    /// A `thread N` frame at the bottom of every stack.
    pub per_thread: bool,
}

/// Writes the folded stacks or flame graph of `trace_path` to `out` ([`report::flame`]).
/// Returns the warnings to show.
pub fn flame_file(
    trace_path: &Path,
    options: &ViewOptions,
    flame: &FlameOptions,
    out: &mut dyn io::Write,
) -> Result<Vec<String>, Error> {
    let mut prepared = view::Prepared::open(trace_path, options.exe.as_deref())?;
    prepared.progress = options.progress.clone();
    let stacks = report::flame::FoldedStacks::new(&prepared.info, flame.per_thread);
    let (stacks, names, warnings) = prepared.run(stacks, &options.filter)?;
    let clock = prepared.info.clock;
    match flame.format {
        FlameFormat::Folded => stacks.write_folded(&names, &clock, out),
        FlameFormat::Svg => {
            let title = match &prepared.info.summary.exe {
                Some(exe) => format!("{} (hookprof)", exe.display()),
                None => "hookprof flame graph".to_string(),
            };
            stacks.write_svg(&names, &clock, &title, flame.inverted, out)
        }
    }
    .map_err(write_error)?;
    Ok(warnings)
}

/// The flame graph of several traces (`hookprof flame A B …`): each trace's stacks under a
/// root frame of its process, `program [pid]` (the executable's file name), so the graph
/// shows the processes side by side and the folded lines can be told apart. The traces'
/// times must be in one unit (all with a clock rate, or none). Returns the warnings, each
/// naming its trace.
pub fn flame_files(
    trace_paths: &[PathBuf],
    options: &ViewOptions,
    flame: &FlameOptions,
    out: &mut dyn io::Write,
) -> Result<Vec<String>, Error> {
    if let [one] = trace_paths {
        return flame_file(one, options, flame, out);
    }
    let mut lines = Vec::new();
    let mut warnings = Vec::new();
    let mut unit = None;
    for path in trace_paths {
        let mut prepared = view::Prepared::open(path, options.exe.as_deref())?;
        prepared.progress = options.progress.clone();
        let this_unit = prepared.info.clock.unit();
        if *unit.get_or_insert(this_unit) != this_unit {
            return Err(Error::Unsupported {
                path: path.clone(),
                message: format!(
                    "its times are {this_unit} and the traces before it {}: a flame graph of \
                     several traces needs one unit (every trace with a clock rate, or none)",
                    unit.unwrap_or_default()
                ),
            });
        }
        let stacks = report::flame::FoldedStacks::new(&prepared.info, flame.per_thread);
        let (stacks, names, w) = prepared.run(stacks, &options.filter)?;
        warnings.extend(w.into_iter().map(|w| format!("{}: {w}", path.display())));
        let mut folded = Vec::new();
        stacks
            .write_folded(&names, &prepared.info.clock, &mut folded)
            .map_err(write_error)?;
        let program = prepared.info.program();
        let program = program.rsplit('/').next().unwrap_or(&program);
        let root = format!("{program} [{}]", prepared.info.summary.header.pid);
        for line in String::from_utf8_lossy(&folded).lines() {
            lines.push(format!("{};{line}", root.replace(';', ":")));
        }
    }
    lines.sort();
    match flame.format {
        FlameFormat::Folded => {
            let mut text = String::new();
            for line in &lines {
                text.push_str(line);
                text.push('\n');
            }
            out.write_all(text.as_bytes())
        }
        FlameFormat::Svg => {
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            let title = format!("{} processes (hookprof)", trace_paths.len());
            report::flame::draw_svg(&lines, unit.unwrap_or("ns"), &title, flame.inverted, out)
        }
    }
    .map_err(write_error)?;
    Ok(warnings)
}

/// Writes a callgrind profile of `trace_path` to `out` ([`report::callgrind`]). Returns the
/// warnings to show.
pub fn callgrind_file(
    trace_path: &Path,
    options: &ViewOptions,
    out: &mut dyn io::Write,
) -> Result<Vec<String>, Error> {
    let mut prepared = view::Prepared::open(trace_path, options.exe.as_deref())?;
    prepared.progress = options.progress.clone();
    let profile = report::callgrind::CallgrindProfile::new();
    let (profile, names, warnings) = prepared.run(profile, &options.filter)?;
    let clock = prepared.info.clock;
    let lines = lines::SourceLines::for_executable(&prepared.info.summary, options.exe.as_deref());
    let location = |address: u64| lines.as_ref().and_then(|l| l.location(address));
    profile
        .write(
            &prepared.info,
            options.exe.as_deref(),
            &names,
            &clock,
            &location,
            out,
        )
        .map_err(write_error)?;
    Ok(warnings)
}

/// Writes the speedscope profile of `trace_path` to `out` ([`report::speedscope`]): one
/// replay per thread, so memory stays flat. Returns the warnings to show.
pub fn speedscope_file(
    trace_path: &Path,
    options: &ViewOptions,
    out: &mut dyn io::Write,
) -> Result<Vec<String>, Error> {
    let mut prepared = view::Prepared::open(trace_path, options.exe.as_deref())?;
    prepared.needs_records()?;
    prepared.progress = options.progress.clone();
    // Bytes a record makes at least: 34.5–36.5 measured on short C names (docs/views.md).
    let (sized, note) =
        options
            .filter
            .sized(&prepared.info, 35, options.size_limit, "speedscope profile");
    let mut speedscope =
        report::speedscope::Speedscope::start(out, prepared.info.clock).map_err(write_error)?;
    let wanted = &sized.threads;
    let mut threads: Vec<view::ThreadInfo> = Vec::new();
    for t in &prepared.info.threads {
        let shown = wanted.is_empty()
            || wanted.contains(&t.tid)
            || t.sequence.is_some_and(|s| wanted.contains(&s));
        if shown && !threads.iter().any(|seen| seen.tid == t.tid) {
            threads.push(t.clone());
        }
    }
    let mut warnings: Vec<String> = Vec::new();
    for thread in threads {
        speedscope
            .begin_thread(&thread.title())
            .map_err(write_error)?;
        let filter = view::Filter {
            threads: vec![thread.tid],
            ..sized.clone()
        };
        let (view, _, more) = prepared.run(speedscope, &filter)?;
        speedscope = view;
        speedscope.end_thread().map_err(write_error)?;
        for w in more {
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
    }
    let title = match &prepared.info.summary.exe {
        Some(exe) => format!("{} (hookprof)", exe.display()),
        None => "hookprof".to_string(),
    };
    speedscope.finish(&title).map_err(write_error)?;
    warnings.extend(note);
    Ok(warnings)
}

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

/// Writes a gmon.out for GNU gprof from `trace_path` ([`report::gmon`]). Returns the
/// warnings to show and the sampling rate of the synthesized histogram.
pub fn gmon_file(trace_path: &Path, out: &mut dyn io::Write) -> Result<(Vec<String>, u32), Error> {
    let trace = TraceFile::open(trace_path)?;
    let profile = trace.profile()?;
    let s = &profile.summary;
    let unsupported = |message: &str| Error::Unsupported {
        path: trace_path.to_path_buf(),
        message: message.to_string(),
    };
    let Some(ticks_per_second) = s.ticks_per_second() else {
        return Err(unsupported(
            "the trace has no clock rate, and gmon.out needs times in seconds",
        ));
    };
    let Some(module) = s
        .modules
        .iter()
        .find(|m| m.path.is_none() || (s.exe.is_some() && m.path == s.exe))
    else {
        return Err(unsupported(
            "the trace has no MODULE chunk for its executable, so its addresses cannot be \
             turned into the ELF file's",
        ));
    };
    let target = report::gmon::Target {
        endian: s.header.endian,
        pointer_size: s.header.pointer_size,
        bias: module.bias,
        start: module.start,
        end: module.end,
        ticks_per_second,
    };
    let rate = report::gmon::write(&profile, &target, out).map_err(write_error)?;
    Ok((profile_warnings(s), rate))
}
