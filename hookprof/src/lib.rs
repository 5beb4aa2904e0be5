//! hookprof: reads the `.hktrace` files written by the hookcc runtime and reports on them.
//!
//! Layers, each usable on its own:
//! - [`format`](mod@format): the trace format (reader and [`format::Writer`]), per docs/trace-format.md;
//! - [`replay`]: pairs entries and exits per thread and feeds a [`replay::ReplayVisitor`];
//!   every report reads the trace through it;
//! - [`model`]: per-function statistics and caller→callee arcs, per thread and merged;
//! - [`symbols`]: function names from the ELF files of the traced program;
//! - [`report`]: the flat profile in text, CSV and JSON;
//! - [`info`]: the description printed by `hookprof info`.
//!
//! [`TraceFile`] memory-maps a trace and [`report_file`] runs a whole report, which is all
//! the `hookprof` binary does.

pub mod callgraph;
pub mod format;
pub mod gprof;
pub mod info;
pub mod model;
pub mod nitro;
pub mod pfp;
pub mod replay;
pub mod report;
pub mod symbols;
pub mod ti;

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
    /// Holds the shared lock of a mapped file until the map is gone.
    _file: File,
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
            _file: file,
        })
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
    Ok(render_report(&profile, &mut names, options))
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
    callgraph::render(&profile, &mut names, &mut bytes).expect("writing to a Vec cannot fail");
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
    let report = FlatReport::build(profile, names, options.per_thread);
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
    if s.lost() > 0 {
        warnings.push(format!(
            "{} records were lost by the runtime (HOOKCC_MAX_BYTES reached, file not writable, \
             or hooks re-entered); the profile is missing those calls",
            s.lost()
        ));
    }
    if s.hole_bytes > 0 {
        warnings.push(format!(
            "{} zero bytes were skipped where chunks were expected (space reserved by a thread \
             that never wrote it)",
            s.hole_bytes
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
