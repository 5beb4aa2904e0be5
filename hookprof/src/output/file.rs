//! How hookprof writes a file, one policy for every subcommand (docs/reliability.md,
//! "hookprof, writing"):
//!
//! - An output that does not exist yet, or exists as a regular file (or as a symbolic link,
//!   which is replaced, never written through), is written to a new temporary file in the
//!   same directory and renamed over the output once complete. The temporary is created
//!   exclusively (`O_CREAT|O_EXCL`, so a link planted at its name is never followed) under a
//!   random name (`.NAME.XXXXXXXX.hookprof-partial`), and removed if anything fails: a
//!   failed write (a full disk) leaves the previous output as it was and nothing beside it.
//!   SIGINT, SIGTERM and SIGHUP (at their default action) remove it too before they end
//!   hookprof, so that a Ctrl-C during a long timeline leaves no gigabytes behind.
//! - An existing output that is not a regular file (`/dev/null`, a FIFO, a terminal,
//!   `/dev/stdout`) is written in place: renaming over it would replace the device node.
//! - The new file gets the permission bits of the input it was made from (a 0600 trace
//!   gives 0600 outputs), less the umask; without an input, 0666 less the umask.
//! - [`OutputFile::create_new`] (`hookprof export`'s dataset files, never overwritten) is the
//!   same, except that the temporary is linked to the output only if nothing is there yet.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::input::error::Error;

/// An output file being written; [`OutputFile::commit`] makes it the output. Dropped
/// without a commit, it leaves the output as it was (a device may have had part of it).
pub struct OutputFile {
    path: PathBuf,
    target: Target,
    /// Whether an existing output is an error at the commit instead of being replaced.
    keep_existing: bool,
}

enum Target {
    /// A temporary beside the output, deleted when dropped (and by a signal meanwhile).
    Replace(tempfile::NamedTempFile, Pending),
    /// A device, a FIFO, a socket: written as it is.
    InPlace(File),
}

fn error(path: &Path, action: &'static str, error: io::Error) -> Error {
    Error::Output {
        path: path.to_path_buf(),
        action,
        error,
    }
}

/// The permission bits an output made from `input` gets (before the umask).
fn mode_like(input: Option<&Path>) -> u32 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Some(meta) = input.and_then(|i| std::fs::metadata(i).ok()) {
            return meta.permissions().mode() & 0o666;
        }
    }
    let _ = input;
    0o666
}

impl OutputFile {
    /// Starts writing `path`, made from the file `input` (whose mode it takes), if any.
    pub fn create(path: &Path, input: Option<&Path>) -> Result<OutputFile, Error> {
        // `metadata` follows links: a link to /dev/null is written in place too.
        let existing = std::fs::metadata(path).ok();
        if existing.as_ref().is_some_and(|m| m.is_dir()) {
            return Err(error(
                path,
                "write",
                io::Error::new(io::ErrorKind::InvalidInput, "is a directory"),
            ));
        }
        if existing.is_some_and(|m| !m.is_file()) {
            let mut options = std::fs::OpenOptions::new();
            options.write(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.custom_flags(libc::O_NOCTTY);
            }
            let file = options.open(path).map_err(|e| error(path, "open", e))?;
            return Ok(OutputFile {
                path: path.to_path_buf(),
                target: Target::InPlace(file),
                keep_existing: false,
            });
        }
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let mut prefix = std::ffi::OsString::from(".");
        prefix.push(path.file_name().unwrap_or_default());
        prefix.push(".");
        let pending = Pending::prepare();
        let mut builder = tempfile::Builder::new();
        builder
            .prefix(&prefix)
            .suffix(".hookprof-partial")
            .rand_bytes(8);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(mode_like(input)));
        }
        let temp = builder
            .tempfile_in(dir)
            .map_err(|e| error(path, "create a temporary file in its directory", e))?;
        pending.register(temp.path());
        Ok(OutputFile {
            path: path.to_path_buf(),
            target: Target::Replace(temp, pending),
            keep_existing: false,
        })
    }

    /// Starts writing `path`, which must not exist, neither now nor when it is committed
    /// (anything found there then, a link included, is an error and left as it is). Written
    /// to a temporary as [`OutputFile::create`] does, with `input`'s mode.
    pub fn create_new(path: &Path, input: Option<&Path>) -> Result<OutputFile, Error> {
        if std::fs::symlink_metadata(path).is_ok() {
            return Err(error(
                path,
                "create",
                io::Error::new(io::ErrorKind::AlreadyExists, "it exists: never overwritten"),
            ));
        }
        let mut out = OutputFile::create(path, input)?;
        out.keep_existing = true;
        Ok(out)
    }

    /// The output's path (not the temporary's).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes what was written the output: renames the temporary over it.
    pub fn commit(self) -> Result<(), Error> {
        match self.target {
            Target::InPlace(mut file) => file.flush().map_err(|e| error(&self.path, "write", e)),
            Target::Replace(temp, pending) if self.keep_existing => {
                // A hard link, which fails if anything (a link too) is at the name.
                temp.persist_noclobber(&self.path).map_err(|e| {
                    let detail = if e.error.kind() == io::ErrorKind::AlreadyExists {
                        io::Error::new(e.error.kind(), "it exists: never overwritten")
                    } else {
                        e.error
                    };
                    error(&self.path, "create", detail)
                })?;
                drop(pending);
                Ok(())
            }
            Target::Replace(temp, pending) => {
                temp.persist(&self.path)
                    .map_err(|e| error(&self.path, "replace", e.error))?;
                drop(pending);
                Ok(())
            }
        }
    }

    fn file(&mut self) -> &mut File {
        match &mut self.target {
            Target::Replace(temp, _) => temp.as_file_mut(),
            Target::InPlace(file) => file,
        }
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file().write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file().flush()
    }
}

/// How many temporaries can be pending at once (`export` writes two files of a trace
/// together); one more is written as well, but a signal leaves it behind.
#[cfg(unix)]
const PENDING_SLOTS: usize = 4;

/// The temporaries being written, for [`remove_pending_and_die`]: NUL-terminated paths, each
/// owned by the [`Pending`] that claimed its slot.
#[cfg(unix)]
#[allow(clippy::declare_interior_mutable_const)]
static PENDING: [std::sync::atomic::AtomicPtr<libc::c_char>; PENDING_SLOTS] =
    [const { std::sync::atomic::AtomicPtr::new(std::ptr::null_mut()) }; PENDING_SLOTS];

/// Which slots of [`PENDING`] a [`Pending`] holds.
#[cfg(unix)]
static CLAIMED: [std::sync::atomic::AtomicBool; PENDING_SLOTS] =
    [const { std::sync::atomic::AtomicBool::new(false) }; PENDING_SLOTS];

/// While alive, a signal that ends hookprof removes this temporary first.
struct Pending {
    /// Its slot in [`PENDING`], if one was free.
    #[cfg(unix)]
    slot: Option<usize>,
}

impl Pending {
    /// Installs the signal handlers (once), before the temporary exists.
    fn prepare() -> Pending {
        #[cfg(unix)]
        {
            use std::sync::atomic::Ordering;
            static HANDLERS: std::sync::Once = std::sync::Once::new();
            HANDLERS.call_once(install_signal_handlers);
            let slot = CLAIMED.iter().position(|c| {
                c.compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
            });
            Pending { slot }
        }
        #[cfg(not(unix))]
        Pending {}
    }

    /// The temporary a signal is to remove.
    fn register(&self, path: &Path) {
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            let Some(slot) = self.slot else { return };
            if let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) {
                let old = PENDING[slot].swap(c.into_raw(), std::sync::atomic::Ordering::SeqCst);
                free_pending(old);
            }
        }
        let _ = path;
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(slot) = self.slot {
            use std::sync::atomic::Ordering;
            free_pending(PENDING[slot].swap(std::ptr::null_mut(), Ordering::SeqCst));
            CLAIMED[slot].store(false, Ordering::SeqCst);
        }
    }
}

#[cfg(unix)]
fn free_pending(path: *mut libc::c_char) {
    if !path.is_null() {
        // SAFETY: every non-null PENDING came from CString::into_raw, and was swapped out of
        // PENDING before this, so no one else frees or reads it.
        drop(unsafe { std::ffi::CString::from_raw(path) });
    }
}

/// SIGINT, SIGTERM and SIGHUP, where they are at their default action (a `nohup`'s ignored
/// SIGHUP stays ignored): remove the pending temporary, then die of the signal.
#[cfg(unix)]
fn install_signal_handlers() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: sigaction with a zeroed, then filled, struct; the handler only calls
        // async-signal-safe functions (unlink, signal, raise) and an atomic swap.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut old) != 0
                || old.sa_sigaction != libc::SIG_DFL
            {
                continue;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = remove_pending_and_die as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

#[cfg(unix)]
extern "C" fn remove_pending_and_die(signal: libc::c_int) {
    // SAFETY: each `path` is a live NUL-terminated string (leaked: the process is ending);
    // unlink, signal and raise are async-signal-safe.
    unsafe {
        for slot in &PENDING {
            let path = slot.swap(std::ptr::null_mut(), std::sync::atomic::Ordering::SeqCst);
            if !path.is_null() {
                libc::unlink(path);
            }
        }
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}

/// Writes `bytes` as the whole of `path` by the policy above; `input` gives the mode.
pub fn write_file(path: &Path, input: Option<&Path>, bytes: &[u8]) -> Result<(), Error> {
    let mut out = OutputFile::create(path, input)?;
    out.write_all(bytes).map_err(|e| error(path, "write", e))?;
    out.commit()
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

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn partials(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".hookprof-partial"))
            .collect()
    }

    #[test]
    fn replaces_a_link_and_leaves_its_target_alone() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let out = dir.path().join("out.txt");
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        // The old, predictable temporary name, planted as a link to the victim.
        let old_partial = dir.path().join("out.txt.hookprof-partial");
        std::os::unix::fs::symlink(&victim, &old_partial).unwrap();
        write_file(&out, None, b"report").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "report");
        assert!(!std::fs::symlink_metadata(&out).unwrap().is_symlink());
        assert_eq!(partials(dir.path()), ["out.txt.hookprof-partial"]);
    }

    #[test]
    fn takes_the_mode_of_the_input() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("t.hktrace");
        std::fs::write(&input, "x").unwrap();
        std::fs::set_permissions(&input, std::fs::Permissions::from_mode(0o600)).unwrap();
        let out = dir.path().join("report.txt");
        std::fs::write(&out, "old").unwrap();
        std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_file(&out, Some(&input), b"new").unwrap();
        let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn writes_a_device_in_place() {
        use std::os::unix::fs::FileTypeExt;
        write_file(Path::new("/dev/null"), None, b"gone").unwrap();
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
    }

    #[test]
    fn an_uncommitted_output_leaves_the_old_one_and_no_temporary() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("gmon.out");
        std::fs::write(&out, "old").unwrap();
        let mut file = OutputFile::create(&out, None).unwrap();
        file.write_all(b"half").unwrap();
        drop(file);
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
        assert!(partials(dir.path()).is_empty());
    }

    #[test]
    fn a_directory_is_refused_with_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_file(dir.path(), None, b"x").unwrap_err().to_string();
        assert!(err.starts_with(&dir.path().display().to_string()), "{err}");
        assert!(err.contains("is a directory"), "{err}");
    }
}

/// Runs `write` on `out`, through a gzip encoder when `gzip`.
pub fn maybe_gzip(
    gzip: bool,
    out: &mut dyn Write,
    write: impl FnOnce(&mut dyn Write) -> Result<Vec<String>, crate::input::error::Error>,
) -> Result<Vec<String>, crate::input::error::Error> {
    if !gzip {
        return write(out);
    }
    // Level 3: on the timeline's JSON, 95 % of level 6's ratio at three times its speed.
    let mut encoder = flate2::write::GzEncoder::new(out, flate2::Compression::new(3));
    let warnings = write(&mut encoder)?;
    encoder
        .finish()
        .map_err(|error| crate::input::error::Error::Write { error })?;
    Ok(warnings)
}
