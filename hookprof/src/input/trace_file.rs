//! Opening a `.hktrace` file: mapped or copied, see [`TraceFile`].

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use crate::input::error::Error;
use crate::input::format::{FormatError, Trace};

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

    pub(crate) fn format_error(&self, error: FormatError) -> Error {
        Error::Format {
            path: self.path.clone(),
            error,
        }
    }

    /// The process that wrote the trace: its pid (the header's) and the executable its EXE
    /// chunk names, read from the first chunks only (no record is decoded).
    pub fn process(&self) -> Result<(u64, Option<PathBuf>), Error> {
        let trace = self.trace()?;
        let exe = trace
            .chunks()
            .map_while(Result::ok)
            .find_map(|c| match c.chunk {
                crate::input::format::Chunk::Exe { path } => Some(path.to_path_buf()),
                _ => None,
            });
        Ok((trace.header().pid, exe))
    }

    /// The trace with its header validated.
    pub fn trace(&self) -> Result<Trace<'_>, Error> {
        Trace::new(self.bytes()).map_err(|e| self.format_error(e))
    }
}
