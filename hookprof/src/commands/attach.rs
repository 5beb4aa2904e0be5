//! `hookprof ps`, `attach`, `detach`: the client of the runtime's control channel
//! (runtime/src/trace/control.h; the protocol in docs/control-protocol.md).
//!
//! Each traced process listens on `<dir>/<pid>.sock`, `<dir>` being `$XDG_RUNTIME_DIR/hookcc`
//! or `/tmp/hookcc-<uid>`. A request is one line; the reply is one line, `ok key=value …` or
//! `error MESSAGE`. One request a connection: the runtime serves one client at a time.

use crate::commands::arguments::parse_duration;
use anyhow::{bail, Context, Result};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a request may take: the runtime answers within its own 2 s per client, and a
/// `stop` finishes a file (the last buffers written, the clock calibrated).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The directory of the control sockets of this user's processes (the runtime's rule).
pub fn control_dir() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(dir) if Path::new(&dir).is_absolute() => Path::new(&dir).join("hookcc"),
        // SAFETY: geteuid has no preconditions and cannot fail.
        _ => PathBuf::from(format!("/tmp/hookcc-{}", unsafe { libc::geteuid() })),
    }
}

/// A reply's fields, in order (`path` is always last: it may hold spaces).
#[derive(Debug, Clone, Default)]
pub struct Reply {
    pub fields: Vec<(String, String)>,
}

impl Reply {
    fn parse(line: &str) -> Result<Reply> {
        let line = line.trim_end_matches('\n');
        if let Some(message) = line.strip_prefix("error ") {
            bail!("{message}");
        }
        let rest = line
            .strip_prefix("ok")
            .with_context(|| format!("not a control channel's reply: {line:?}"))?;
        let mut fields = Vec::new();
        let mut rest = rest.trim_start();
        while !rest.is_empty() {
            let (key, value_and_more) = rest
                .split_once('=')
                .with_context(|| format!("a reply field without '=': {rest:?}"))?;
            if key == "path" {
                fields.push((key.to_string(), value_and_more.to_string()));
                break;
            }
            let (value, more) = value_and_more
                .split_once(' ')
                .unwrap_or((value_and_more, ""));
            fields.push((key.to_string(), value.to_string()));
            rest = more;
        }
        Ok(Reply { fields })
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    fn number(&self, key: &str) -> u64 {
        self.get(key).and_then(|v| v.parse().ok()).unwrap_or(0)
    }
}

/// The directories to look in: this user's; for root also every user's (root may attach to
/// any process: the runtime accepts root's connections).
pub fn control_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![control_dir()];
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        for pattern in ["/tmp/hookcc-*", "/run/user/*/hookcc"] {
            for dir in glob::glob(pattern).into_iter().flatten().flatten() {
                if dir.is_dir() && !dirs.contains(&dir) {
                    dirs.push(dir);
                }
            }
        }
    }
    dirs
}

/// The socket of process `pid` (in this user's directory if it is in none).
pub fn socket_path(pid: u32) -> PathBuf {
    let name = format!("{pid}.sock");
    control_dirs()
        .into_iter()
        .map(|dir| dir.join(&name))
        .find(|path| path.exists())
        .unwrap_or_else(|| control_dir().join(name))
}

/// Sends one request line to the socket and returns the reply (an `error` reply is an Err).
pub fn request_at(socket: &Path, line: &str) -> Result<Reply> {
    let mut stream = UnixStream::connect(socket)
        .with_context(|| format!("cannot connect to {}", socket.display()))?;
    stream.set_read_timeout(Some(REQUEST_TIMEOUT))?;
    stream.set_write_timeout(Some(REQUEST_TIMEOUT))?;
    // A refused peer gets its reply before it has written: read it even if writing failed.
    let written = stream.write_all(format!("{line}\n").as_bytes());
    let mut reply = String::new();
    BufReader::new(stream)
        .read_line(&mut reply)
        .with_context(|| format!("no reply to {line:?} from {}", socket.display()))?;
    if reply.is_empty() {
        written?;
        bail!("{} closed the connection without a reply", socket.display());
    }
    Reply::parse(&reply)
}

/// Sends one request to process `pid`; says what to do when it has no channel.
pub fn request(pid: u32, line: &str) -> Result<Reply> {
    let socket = socket_path(pid);
    if !socket.exists() {
        bail!(
            "process {pid} has no control channel at {} (is it built with `hookcc --trace`, \
             run by this user, without HOOKCC_CONTROL=0? `hookprof ps` lists the ones there are)",
            socket.display()
        );
    }
    request_at(&socket, line).with_context(|| format!("process {pid}"))
}

/// One traced process, as `status` describes it.
#[derive(Debug, Clone)]
pub struct Process {
    pub pid: u32,
    pub status: Reply,
}

/// The traced processes whose sockets answer. A name nobody listens on (a process that ended
/// without its exit handlers, an exec into a program without hookcc's runtime) is removed.
pub fn ps() -> Result<Vec<Process>> {
    let mut processes = Vec::new();
    for dir in control_dirs() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot read {}", dir.display())),
        };
        ps_in(entries, &mut processes)?;
    }
    processes.sort_by_key(|p| p.pid);
    Ok(processes)
}

fn ps_in(entries: std::fs::ReadDir, processes: &mut Vec<Process>) -> Result<()> {
    for entry in entries {
        let path = entry?.path();
        let Some(pid) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".sock"))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        match request_at(&path, "status") {
            Ok(status) => processes.push(Process { pid, status }),
            Err(e) => {
                let refused = e.chain().any(|c| {
                    c.downcast_ref::<std::io::Error>()
                        .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
                });
                if refused {
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
    }
    Ok(())
}

/// `hookprof ps`'s table.
pub fn ps_text(processes: &[Process]) -> String {
    let mut text = format!(
        "{:>8}  {:<16} {:<12} {:<9}  {}\n",
        "PID", "PROGRAM", "MODE", "RECORDING", "TRACE"
    );
    for p in processes {
        let s = &p.status;
        text.push_str(&format!(
            "{:>8}  {:<16} {:<12} {:<9}  {}\n",
            p.pid,
            s.get("program").unwrap_or("?"),
            s.get("mode").unwrap_or("?"),
            if s.get("recording") == Some("1") {
                "yes"
            } else {
                "no"
            },
            s.get("path").unwrap_or("")
        ));
    }
    text
}

/// What `hookprof attach` does.
#[derive(Debug, Clone)]
pub struct AttachOptions {
    pub pid: u32,
    /// Until Ctrl-C when None.
    pub duration: Option<Duration>,
    /// HOOKCC_FUNCTIONS's syntax: comma-separated globs, `!` leaves out.
    pub functions: Option<String>,
    /// The trace to write (made absolute here: the process opens it).
    pub output: PathBuf,
    /// Called once recording is on (the path the process opened).
    pub on_started: fn(&str),
    /// The records come to hookprof, which writes `output` (default mode only): the process
    /// writes its trace into a FIFO hookprof reads, and nothing on its own.
    pub stream: bool,
}

/// What an attach recorded.
#[derive(Debug, Clone)]
pub struct AttachSummary {
    pub path: PathBuf,
    pub records: u64,
    pub seconds: f64,
    /// The mode the process records in: "trace", or "ring"/"profile" (then a snapshot was
    /// taken and copied); "stream" where the records came to hookprof (`--stream`).
    pub mode: String,
}

fn absolute(path: &Path) -> Result<PathBuf> {
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    Ok(std::env::current_dir()?.join(path))
}

/// Waits for the duration or the stop flag (Ctrl-C), whichever is first.
fn wait(duration: Option<Duration>, stop: &AtomicBool) {
    let start = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        if duration.is_some_and(|d| start.elapsed() >= d) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Switches recording on in process `pid` into `output`, waits, switches it off: the file is
/// then a finished trace. In ring or profile mode, waits, takes a snapshot and copies the
/// process's file. Functions chosen by `--functions` get back the process's own choice at the
/// end, also when the wait was cut short.
pub fn attach(options: &AttachOptions, stop: &AtomicBool) -> Result<AttachSummary> {
    let pid = options.pid;
    let status = request(pid, "status")?;
    let mode = status.get("mode").unwrap_or("trace").to_string();
    let output = absolute(&options.output)?;
    if let Some(list) = &options.functions {
        if list.contains('\n') {
            bail!("--functions: a list of globs on one line");
        }
        let reply = request(pid, &format!("functions {list}"))?;
        if reply.number("chosen") == 0 {
            let _ = request(pid, "functions");
            bail!(
                "--functions {list:?} chooses none of the process's {} functions",
                reply.number("functions")
            );
        }
    }
    let result = if mode == "trace" && options.stream {
        attach_stream(options, &output, stop)
    } else if mode == "trace" {
        attach_trace(options, &output, stop)
    } else if options.stream {
        Err(anyhow::anyhow!(
            "process {pid} records in {mode} mode: --stream is for the default mode (without \
             it, attach takes a snapshot)"
        ))
    } else {
        attach_snapshot(options, &output, &mode, stop)
    };
    if options.functions.is_some() {
        request(pid, "functions").context("giving the process back its functions")?;
    }
    result
}

fn attach_trace(
    options: &AttachOptions,
    output: &Path,
    stop: &AtomicBool,
) -> Result<AttachSummary> {
    let pid = options.pid;
    let started = request(pid, &format!("start {}", output.display()))
        .with_context(|| format!("starting a trace into {}", output.display()))?;
    let path = started.get("path").unwrap_or_default().to_string();
    (options.on_started)(&path);
    let start = Instant::now();
    wait(options.duration, stop);
    let stopped = request(pid, "stop").context("stopping the trace")?;
    Ok(AttachSummary {
        path: PathBuf::from(
            stopped
                .get("path")
                .filter(|p| !p.is_empty())
                .unwrap_or(&path),
        ),
        records: stopped.number("records"),
        seconds: start.elapsed().as_secs_f64(),
        mode: "trace".into(),
    })
}

/// `--stream`: the process writes its trace into a FIFO of a private directory of ours (its
/// runtime writes a FIFO as a stream: docs/reliability.md, "HOOKCC_OUTPUT a FIFO"), and a
/// thread of ours copies what comes into `output`, until the process finishes the stream at
/// `stop` (its CLOCK chunk, then the end of the FIFO). A client killed meanwhile: the process's
/// writes fail (EPIPE), its records are counted lost, it runs on; `output` holds what came,
/// decodable up to there; `hookprof detach` ends the recording. The FIFO's name is removed
/// once both ends are open.
fn attach_stream(
    options: &AttachOptions,
    output: &Path,
    stop: &AtomicBool,
) -> Result<AttachSummary> {
    let pid = options.pid;
    let dir = tempfile::Builder::new()
        .prefix("hookprof-attach")
        .tempdir()
        .context("a directory for the FIFO")?;
    let fifo = dir.path().join("trace.fifo");
    let c_fifo = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes())?;
    // SAFETY: mkfifo with a NUL-terminated path of ours.
    if unsafe { libc::mkfifo(c_fifo.as_ptr(), 0o600) } != 0 {
        bail!(
            "cannot make {}: {}",
            fifo.display(),
            std::io::Error::last_os_error()
        );
    }
    let owner = std::fs::metadata(format!("/proc/{pid}")).map(|m| {
        use std::os::unix::fs::MetadataExt;
        m.uid()
    });
    // SAFETY: geteuid has no preconditions and cannot fail.
    if let (0, Ok(uid)) = (unsafe { libc::geteuid() }, owner) {
        // Root attaching to another user's process: that user opens the FIFO.
        std::os::unix::fs::chown(dir.path(), Some(uid), None)?;
        std::os::unix::fs::chown(&fifo, Some(uid), None)?;
    }
    // Open for reading first, without waiting for a writer: the runtime's open then finds a
    // reader at once (it waits 5 s at most).
    let reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .with_context(|| format!("opening {}", fifo.display()))?;
    let mut file =
        std::fs::File::create(output).with_context(|| format!("creating {}", output.display()))?;
    let writer_opened = AtomicBool::new(false);
    let abandon = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let copier = scope.spawn(|| copy_stream(reader, &mut file, &writer_opened, &abandon));
        let started = request(pid, &format!("start {}", fifo.display()));
        let started = match started {
            Ok(reply) => reply,
            Err(e) => {
                abandon.store(true, Ordering::Relaxed);
                let _ = copier.join();
                let _ = std::fs::remove_file(output);
                return Err(e.context("starting a stream"));
            }
        };
        // The runtime has opened the FIFO (and written its header): an end of it from now on
        // is the end of the stream.
        writer_opened.store(true, Ordering::Release);
        drop(started);
        // Both ends are open: the name is no longer needed, and a client killed later leaves
        // nothing behind.
        let _ = std::fs::remove_file(&fifo);
        let _ = std::fs::remove_dir(dir.path());
        (options.on_started)(&output.display().to_string());
        let start = Instant::now();
        wait(options.duration, stop);
        let stopped = request(pid, "stop").context("stopping the stream");
        if stopped.is_err() {
            abandon.store(true, Ordering::Relaxed);
        }
        let copied = copier
            .join()
            .map_err(|_| anyhow::anyhow!("the stream's reader panicked"))?
            .with_context(|| format!("writing {}", output.display()));
        let stopped = stopped?;
        copied?;
        Ok(AttachSummary {
            path: output.to_path_buf(),
            records: stopped.number("records"),
            seconds: start.elapsed().as_secs_f64(),
            mode: "stream".into(),
        })
    })
}

/// Copies the FIFO into `out` until its end after `writer_opened` (before, the FIFO has no
/// writer yet and reads nothing), or until `abandon`. Returns the bytes copied.
fn copy_stream(
    mut fifo: std::fs::File,
    out: &mut std::fs::File,
    writer_opened: &AtomicBool,
    abandon: &AtomicBool,
) -> std::io::Result<u64> {
    use std::io::Read;
    let mut buf = vec![0u8; 1 << 16];
    let mut copied = 0u64;
    while !abandon.load(Ordering::Relaxed) {
        // Read the flag before the read: an end seen after the writer opened is the end.
        let opened = writer_opened.load(Ordering::Acquire);
        match fifo.read(&mut buf) {
            Ok(0) if opened => break,
            Ok(0) => std::thread::sleep(Duration::from_millis(2)),
            Ok(n) => {
                out.write_all(&buf[..n])?;
                copied += n as u64;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                let mut p = libc::pollfd {
                    fd: std::os::unix::io::AsRawFd::as_raw_fd(&fifo),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one pollfd of ours.
                unsafe { libc::poll(&mut p, 1, 50) };
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    out.flush()?;
    Ok(copied)
}

/// Ring and profile mode: the process keeps its own file; a snapshot at the end writes what
/// its rings or trees hold, and the file as it is then is copied (a snapshot's file is read as
/// a trace by every view, finished or not).
fn attach_snapshot(
    options: &AttachOptions,
    output: &Path,
    mode: &str,
    stop: &AtomicBool,
) -> Result<AttachSummary> {
    let pid = options.pid;
    let start = Instant::now();
    (options.on_started)("");
    wait(options.duration, stop);
    let reply = request(pid, "snapshot").context("taking a snapshot")?;
    let source = reply
        .get("path")
        .filter(|p| !p.is_empty())
        .with_context(|| format!("process {pid} has no trace file to copy"))?;
    std::fs::copy(source, output)
        .with_context(|| format!("copying {source} to {}", output.display()))?;
    Ok(AttachSummary {
        path: output.to_path_buf(),
        records: 0,
        seconds: start.elapsed().as_secs_f64(),
        mode: mode.to_string(),
    })
}

/// `hookprof detach PID`: stops a recording an attach left on (its client killed).
pub fn detach(pid: u32) -> Result<Reply> {
    request(pid, "stop")
}

#[derive(clap::Args, Debug)]
pub struct AttachArgs {
    /// The process to attach to.
    pub pid: u32,
    /// How long to record: a number and its unit (10s, 500ms). Default: until Ctrl-C.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<u64>,
    /// Record only these functions while attached (HOOKCC_FUNCTIONS's syntax: comma-separated
    /// globs, `!` leaves out: 'parse_*,!parse_space'); the program's own choice is back after.
    #[arg(long, value_name = "GLOBS")]
    pub functions: Option<String>,
    /// The trace to write (the program writes it, as its user; with --stream, hookprof).
    /// Default: <program>.<pid>.attach.hktrace.
    // <program>.<pid> above is help text clap prints as it is, not an HTML tag for rustdoc.
    #[allow(rustdoc::invalid_html_tags)]
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Have the records sent to hookprof as they are written (the program writes its trace
    /// into a FIFO hookprof reads), and write the trace here: the program needs no access to
    /// the output's place and writes nothing on its own. Default mode only.
    #[arg(long)]
    pub stream: bool,
}

#[derive(clap::Args, Debug)]
pub struct DetachArgs {
    /// The process to stop recording.
    pub pid: u32,
}
