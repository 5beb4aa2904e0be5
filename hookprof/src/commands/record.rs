//! `hookprof record`: a bare-metal target's stream (the runtime's RTT up-buffer,
//! runtime/src/trace_stream.h) read while the firmware runs, into a `.hktrace`
//! (docs/baremetal.md, "Streaming").
//!
//! Three ways in, one decoder ([`crate::input::stream`]), and what takes the records behind a
//! [`Consumer`]: the trace file here, the live view in `hookprof top --gdb`
//! ([`crate::commands::top`]):
//! - [`Source::Gdb`]: the GDB remote serial protocol (qemu's gdbstub, OpenOCD, J-Link GDB
//!   Server, pyOCD): the control block found by its ELF symbol `_SEGGER_RTT`, then, every poll
//!   interval, the target halted (a `^C`), `WrOff`/`RdOff` and the new bytes read (`m`),
//!   `RdOff` written back (`M`), and the target continued (`c`). All-stop stubs (qemu's among
//!   them) answer no packet while the target runs, hence the halt; under qemu's `-icount`
//!   the target's clock stands still meanwhile.
//! - [`Source::Tcp`]: the raw up-buffer bytes from a probe's RTT server (OpenOCD's `rtt server`,
//!   J-Link's RTT telnet port, probe-rs, pyOCD).
//! - [`Source::Serial`]: the same bytes from a UART (a device, a FIFO, or a file qemu's
//!   chardev wrote).
//!
//! The recording ends when the target ends (the stub says it exited, the connection closes,
//! or the stream's END record has been read from a byte stream) or when `stop` is set
//! (Ctrl-C); the trace is finished either way. Where the stream is cut instead (a connection
//! reset, a byte that is not the stream's, a GDB server that stops making sense) the trace
//! keeps what came before, with a LOST mark where it stops, and is finished without its
//! *complete* flag; the error says where ([`RecordError::Cut`]).
//!
//! Every reader is bounded: a GDB exchange has [`REPLY_TIMEOUT`] to finish and takes at most
//! [`MAX_PACKET`] bytes of a packet, [`MAX_NOISE`] bytes that are no packet and
//! [`MAX_CONSOLE_PACKETS`] console packets; every blocking read wakes up at least every
//! [`WAKE`] to see Ctrl-C; the ring's place and size must lie in the firmware's RAM (its ELF's
//! writable segments and sections); and the trace's work per record is constant.

use std::fs::File;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use object::{Object, ObjectSymbol};

use crate::input::format::Endian;
use crate::input::stream::{Decoder, Event, PushError, StreamCounts};
use crate::output::stream_trace::TraceBuilder;

/// How long a GDB server has to complete a reply (or a stop reply after a halt).
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest GDB packet taken: a memory read's reply is at most 32 KiB of hex.
pub const MAX_PACKET: usize = 1 << 20;
/// Bytes that are not a packet (before its `$`) taken while waiting for one.
pub const MAX_NOISE: usize = 1 << 16;
/// Console-output packets (`O…`) taken while waiting for one reply.
pub const MAX_CONSOLE_PACKETS: usize = 4096;
/// The longest a blocking read waits before it looks at Ctrl-C (and the deadline) again.
pub const WAKE: Duration = Duration::from_millis(200);

/// Where the stream comes from.
#[derive(Clone, Debug)]
pub enum Source {
    /// A GDB server at `address` (HOST:PORT); the firmware's ELF names the control block.
    Gdb { address: String, exe: PathBuf },
    /// An RTT server's TCP port: the up-buffer's bytes as they are.
    Tcp { address: String },
    /// A UART device, FIFO or file carrying the same bytes.
    Serial { path: PathBuf, follow: bool },
}

#[derive(Clone, Debug)]
pub struct Options {
    pub output: PathBuf,
    /// Time between two reads of the ring (the GDB transport), or between two looks at a
    /// file that has not grown (`follow`).
    pub poll_interval: Duration,
    /// Print bytes, events and losses on stderr while recording.
    pub progress: bool,
    /// The target's byte order and pointer size, if the ELF is known (else little-endian).
    pub exe: Option<PathBuf>,
}

/// What the recording took in.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub bytes: u64,
    pub records: u64,
    /// Bytes of the stream's entries and exits (the rest: task switches, creations, LOST).
    pub call_bytes: u64,
    /// The records by kind and the losses; `lost_markers` counts a cut's mark too.
    pub counts: StreamCounts,
    /// Polls of the ring (GDB), and how the recording ended.
    pub polls: u64,
    /// The most bytes one poll found in the ring, and the ring's size (GDB): how close the
    /// reader came to losing records.
    pub high_water: Option<(u32, u32)>,
    pub ended_by: String,
    /// Bytes received after the last whole record (a stream cut inside a record).
    pub trailing_bytes: usize,
    /// Where the writes went.
    pub output: PathBuf,
}

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{address}: {message}")]
    Connect { address: String, message: String },
    #[error("{address}: {message}")]
    Gdb { address: String, message: String },
    #[error("{}: {message}", path.display())]
    File { path: PathBuf, message: String },
    #[error("{}: {error}", path.display())]
    Stream {
        path: PathBuf,
        error: crate::input::stream::StreamError,
    },
    /// The recording was cut by `cause` after the trace was begun: the trace holds what came
    /// before, finished, with a LOST mark where it stops.
    #[error(
        "{cause}; the recording stopped there: {} keeps the {} calls' records read before it, \
         a LOST mark where it stops, and is marked incomplete",
        kept.output.display(),
        kept.counts.calls
    )]
    Cut {
        cause: Box<RecordError>,
        kept: Box<Summary>,
    },
}

/// The firmware's RAM as its ELF describes it: the writable segments and allocated sections
/// (`.data`, `.bss`, a linker script's own), `(start, end)`.
fn ram_ranges(file: &object::File<'_>) -> Vec<(u64, u64)> {
    use object::{ObjectSection, ObjectSegment, SectionFlags};
    let mut ranges: Vec<(u64, u64)> = file
        .segments()
        .filter(|s| s.permissions().writable())
        .map(|s| (s.address(), s.address().saturating_add(s.size())))
        .collect();
    for section in file.sections() {
        if let SectionFlags::Elf { sh_flags, .. } = section.flags() {
            if sh_flags.contains(object::elf::SHF_WRITE)
                && sh_flags.contains(object::elf::SHF_ALLOC)
            {
                let start = section.address();
                ranges.push((start, start.saturating_add(section.size())));
            }
        }
    }
    ranges.retain(|&(start, end)| end > start);
    // Sections lie within segments: one range each stretch (the error lists them).
    ranges.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (start, end) in ranges {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// What `hookprof record` takes from the firmware's ELF.
struct Firmware {
    endian: Endian,
    pointer: u8,
    /// `_SEGGER_RTT`'s address.
    control_block: Option<u64>,
    ram: Vec<(u64, u64)>,
}

impl Firmware {
    /// Whether `len` bytes at `address` lie within one range of the RAM.
    fn in_ram(&self, address: u64, len: u64) -> bool {
        let Some(end) = address.checked_add(len) else {
            return false;
        };
        self.ram.iter().any(|&(s, e)| s <= address && end <= e)
    }
}

fn elf_facts(path: &Path) -> Result<(Endian, u8, Option<u64>), RecordError> {
    let f = firmware(path)?;
    Ok((f.endian, f.pointer, f.control_block))
}

fn firmware(path: &Path) -> Result<Firmware, RecordError> {
    let err = |message: String| RecordError::File {
        path: path.to_path_buf(),
        message,
    };
    let data = std::fs::read(path).map_err(|e| err(e.to_string()))?;
    let file = object::File::parse(&*data).map_err(|e| err(format!("not an ELF file: {e}")))?;
    let endian = if file.is_little_endian() {
        Endian::Little
    } else {
        Endian::Big
    };
    let pointer = if file.is_64() { 8 } else { 4 };
    let cb = file
        .symbols()
        .find(|s| s.name() == Ok("_SEGGER_RTT"))
        .map(|s| s.address());
    Ok(Firmware {
        endian,
        pointer,
        control_block: cb,
        ram: ram_ranges(&file),
    })
}

/// What takes the decoded records: the trace file ([`TraceBuilder`], `hookprof record`) or
/// the live view (`hookprof top --gdb`, [`crate::analysis::live`]). The transports and the
/// decoder are the same for both.
pub trait Consumer {
    /// Takes one decoded record.
    fn event(&mut self, event: Event) -> io::Result<()>;
    /// The records of one read have all been given (the live view publishes them then).
    fn pushed(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// What the stream said so far, for the summary.
    fn counts(&self) -> StreamCounts;
    /// The stream ended (`cut`: where it should have gone on).
    fn finish(self, cut: bool) -> io::Result<()>;
}

impl Consumer for TraceBuilder {
    fn event(&mut self, event: Event) -> io::Result<()> {
        TraceBuilder::event(self, event)
    }

    fn counts(&self) -> StreamCounts {
        self.counts
    }

    fn finish(self, cut: bool) -> io::Result<()> {
        if cut {
            self.finish_cut()
        } else {
            TraceBuilder::finish(self)
        }
    }
}

/// `hookprof record`'s consumer: the trace file at `options.output`.
fn trace_file(options: &Options, endian: Endian) -> Result<TraceBuilder, RecordError> {
    TraceBuilder::create(&options.output, endian, options.exe.as_deref()).map_err(|e| {
        RecordError::File {
            path: options.output.clone(),
            message: format!("cannot create the trace: {e}"),
        }
    })
}

/// The decoder and what takes its records, with the progress line.
struct Sink<C: Consumer> {
    decoder: Decoder,
    consumer: Option<C>,
    output: PathBuf,
    progress: bool,
    last_progress: Instant,
    ended: bool,
}

impl<C: Consumer> Sink<C> {
    fn new(options: &Options, consumer: C) -> Self {
        Sink {
            decoder: Decoder::new(),
            consumer: Some(consumer),
            output: options.output.clone(),
            progress: options.progress,
            last_progress: Instant::now(),
            ended: false,
        }
    }

    fn push(&mut self, bytes: &[u8]) -> Result<(), RecordError> {
        let consumer = self.consumer.as_mut().expect("not finished");
        let ended = &mut self.ended;
        let result = self.decoder.push(bytes, &mut |event| {
            if matches!(event, Event::End { .. }) {
                *ended = true;
            }
            consumer.event(event)
        });
        let result = result.and_then(|()| consumer.pushed().map_err(PushError::Io));
        match result {
            Ok(()) => {}
            Err(PushError::Stream(error)) => {
                return Err(RecordError::Stream {
                    path: self.output.clone(),
                    error,
                })
            }
            Err(PushError::Io(e)) => {
                return Err(RecordError::File {
                    path: self.output.clone(),
                    message: e.to_string(),
                })
            }
        }
        if self.progress && self.last_progress.elapsed() >= Duration::from_millis(500) {
            self.last_progress = Instant::now();
            let lost = self.consumer.as_ref().expect("not finished").counts().lost;
            eprint!(
                "\rhookprof record: {} bytes, {} events, {lost} lost   ",
                self.decoder.bytes, self.decoder.records
            );
        }
        Ok(())
    }

    fn finish(self, ended_by: &str, polls: u64) -> Result<Summary, RecordError> {
        self.finish_as(ended_by, polls, false)
    }

    /// Finishes the trace where `cause` cut the stream (a LOST mark there, not marked
    /// complete) and returns the error to report, which says so.
    fn cut(self, cause: RecordError, polls: u64) -> RecordError {
        let how = cause.to_string();
        match self.finish_as(&how, polls, true) {
            Ok(kept) => RecordError::Cut {
                cause: Box::new(cause),
                kept: Box::new(kept),
            },
            // The trace could not be finished either: that is the error to see first.
            Err(e) => e,
        }
    }

    fn finish_as(mut self, ended_by: &str, polls: u64, cut: bool) -> Result<Summary, RecordError> {
        let consumer = self.consumer.take().expect("not finished");
        let counts = consumer.counts();
        let summary = Summary {
            bytes: self.decoder.bytes,
            records: self.decoder.records,
            call_bytes: self.decoder.call_bytes,
            counts: StreamCounts {
                lost_markers: counts.lost_markers + u64::from(cut),
                ..counts
            },
            polls,
            high_water: None,
            ended_by: ended_by.to_string(),
            trailing_bytes: self.decoder.pending_bytes(),
            output: self.output.clone(),
        };
        consumer.finish(cut).map_err(|e| RecordError::File {
            path: self.output.clone(),
            message: format!("cannot finish the trace: {e}"),
        })?;
        if self.progress {
            eprintln!();
        }
        Ok(summary)
    }
}

/// Records from `source` until the target ends or `stop` is set.
pub fn record(
    source: &Source,
    options: &Options,
    stop: &AtomicBool,
) -> Result<Summary, RecordError> {
    read_stream(source, options, stop, |endian| trace_file(options, endian))
}

/// Reads the stream from `source` until the target ends or `stop` is set, decodes it and hands
/// its records to the consumer `make` returns for the target's byte order (made once the
/// source is open: a source that cannot be opened leaves nothing behind).
pub fn read_stream<C: Consumer>(
    source: &Source,
    options: &Options,
    stop: &AtomicBool,
    make: impl FnOnce(Endian) -> Result<C, RecordError>,
) -> Result<Summary, RecordError> {
    match source {
        Source::Gdb { address, exe } => record_gdb(address, exe, options, stop, make),
        Source::Tcp { address } => {
            let endian = endian_of(options)?;
            let mut stream = connect(address, stop)?;
            stream
                .set_read_timeout(Some(WAKE))
                .map_err(|e| connect_error(address, e))?;
            let mut sink = Sink::new(options, make(endian)?);
            let ended_by = read_bytes(&mut stream, &mut sink, stop, None, |e| {
                RecordError::Connect {
                    address: address.clone(),
                    message: format!("read failed: {e}"),
                }
            });
            match ended_by {
                Ok(ended_by) => sink.finish(ended_by, 0),
                Err(cause) => Err(sink.cut(cause, 0)),
            }
        }
        Source::Serial { path, follow } => {
            let endian = endian_of(options)?;
            let mut file = File::open(path).map_err(|e| RecordError::File {
                path: path.clone(),
                message: e.to_string(),
            })?;
            let regular = file.metadata().map(|m| m.is_file()).unwrap_or(false);
            let mut sink = Sink::new(options, make(endian)?);
            // A regular file ends at its end, unless followed as it grows.
            let idle = (regular && *follow).then_some(options.poll_interval);
            let ended_by = read_bytes(&mut file, &mut sink, stop, idle, |e| RecordError::File {
                path: path.clone(),
                message: format!("read failed: {e}"),
            });
            match ended_by {
                Ok(ended_by) => sink.finish(ended_by, 0),
                Err(cause) => Err(sink.cut(cause, 0)),
            }
        }
    }
}

fn endian_of(options: &Options) -> Result<Endian, RecordError> {
    match &options.exe {
        Some(exe) => Ok(elf_facts(exe)?.0),
        None => Ok(Endian::Little),
    }
}

fn connect_error(address: &str, e: io::Error) -> RecordError {
    RecordError::Connect {
        address: address.to_string(),
        message: e.to_string(),
    }
}

/// Connects to `address`, trying 50 times, 100 ms apart (a server started just before may not
/// listen yet), each try 1 s at most; Ctrl-C (`stop`) ends the tries. Writes to the connection time out after
/// [`REPLY_TIMEOUT`] (a server that reads nothing).
fn connect(address: &str, stop: &AtomicBool) -> Result<TcpStream, RecordError> {
    let addrs: Vec<_> = address
        .to_socket_addrs()
        .map_err(|e| RecordError::Connect {
            address: address.to_string(),
            message: format!("not a HOST:PORT address: {e}"),
        })?
        .collect();
    // A server started just before (qemu -gdb, an RTT server) may not listen yet: a few tries.
    let mut last = None;
    for attempt in 0..50 {
        for a in &addrs {
            if stop.load(Ordering::Relaxed) {
                return Err(RecordError::Connect {
                    address: address.to_string(),
                    message: "interrupted (Ctrl-C) before a connection was made".to_string(),
                });
            }
            // Long enough for a distant server's handshake, short enough to see Ctrl-C soon.
            match TcpStream::connect_timeout(a, Duration::from_secs(1)) {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    let _ = s.set_write_timeout(Some(REPLY_TIMEOUT));
                    return Ok(s);
                }
                Err(e) => last = Some(e),
            }
        }
        if attempt < 49 {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    Err(RecordError::Connect {
        address: address.to_string(),
        message: format!(
            "cannot connect: {} (is the GDB or RTT server running there?)",
            last.map_or("no address".to_string(), |e| e.to_string())
        ),
    })
}

/// Bytes from `input` into `sink` until its end, the stream's END record, or `stop`.
/// `idle`: at the end of the input, wait this long and read again (a file that grows).
fn read_bytes<C: Consumer>(
    input: &mut dyn Read,
    sink: &mut Sink<C>,
    stop: &AtomicBool,
    idle: Option<Duration>,
    error: impl Fn(io::Error) -> RecordError,
) -> Result<&'static str, RecordError> {
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok("interrupted");
        }
        match input.read(&mut buf) {
            Ok(0) => match idle {
                Some(wait) if !sink.ended => std::thread::sleep(wait),
                _ => {
                    return Ok(if sink.ended {
                        "end of stream"
                    } else {
                        "end of input"
                    })
                }
            },
            Ok(n) => {
                sink.push(&buf[..n])?;
                if sink.ended {
                    return Ok("end of stream");
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) => {}
            Err(e) => return Err(error(e)),
        }
    }
}

/// A client of the GDB remote serial protocol: just what reading and writing memory of an
/// all-stop target takes. Every exchange is bounded (see the module's documentation): a
/// server that sends garbage, console output without end or a packet without its end is an
/// error within [`REPLY_TIMEOUT`], and Ctrl-C (`stop`) ends any wait within [`WAKE`].
struct Gdb<'s> {
    stream: TcpStream,
    address: String,
    /// Largest packet the stub takes (qSupported's PacketSize).
    packet_size: usize,
    /// Bytes received and not yet taken: `pending[taken..]`.
    pending: Vec<u8>,
    taken: usize,
    stop: &'s AtomicBool,
    /// When the exchange in progress must be complete.
    deadline: Instant,
}

/// How a halt ended.
enum Stopped {
    Halted,
    Exited(String),
}

/// A GDB exchange ended by Ctrl-C: the recording stops, as between two polls.
fn interrupted() -> io::Error {
    io::Error::new(io::ErrorKind::Interrupted, "interrupted (Ctrl-C)")
}

impl Gdb<'_> {
    fn error(&self, message: String) -> RecordError {
        RecordError::Gdb {
            address: self.address.clone(),
            message,
        }
    }

    /// An exchange starts: it has [`REPLY_TIMEOUT`] to complete.
    fn start_exchange(&mut self) {
        self.deadline = Instant::now() + REPLY_TIMEOUT;
    }

    fn send(&mut self, payload: &str) -> Result<(), RecordError> {
        let sum = payload.bytes().fold(0u8, |a, b| a.wrapping_add(b));
        let packet = format!("${payload}#{sum:02x}");
        if std::env::var_os("HOOKPROF_GDB_DEBUG").is_some() {
            eprintln!("-> {}", short(payload));
        }
        self.stream
            .write_all(packet.as_bytes())
            .map_err(|e| self.error(format!("cannot send `{}`: {e}", short(payload))))
    }

    fn byte(&mut self) -> io::Result<u8> {
        if self.taken == self.pending.len() {
            self.pending.clear();
            self.taken = 0;
            let mut buf = [0u8; 4096];
            let n = loop {
                if self.stop.load(Ordering::Relaxed) {
                    return Err(interrupted());
                }
                if Instant::now() > self.deadline {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!("no complete reply within {} s", REPLY_TIMEOUT.as_secs()),
                    ));
                }
                // The socket's read timeout ([`WAKE`]) brings the loop back to look at the
                // flag and the deadline; Ctrl-C interrupts a read too (no SA_RESTART).
                match self.stream.read(&mut buf) {
                    Err(e)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::Interrupted
                                | io::ErrorKind::WouldBlock
                                | io::ErrorKind::TimedOut
                        ) =>
                    {
                        continue
                    }
                    other => break other?,
                }
            };
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            self.pending.extend_from_slice(&buf[..n]);
        }
        let b = self.pending[self.taken];
        self.taken += 1;
        Ok(b)
    }

    /// The next packet's payload (acknowledged), `Err(UnexpectedEof)` if the stub closed the
    /// connection.
    fn packet(&mut self) -> io::Result<Vec<u8>> {
        let mut noise = 0usize;
        loop {
            if self.byte()? == b'$' {
                break;
            }
            noise += 1;
            if noise > MAX_NOISE {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{MAX_NOISE} bytes that are not a GDB packet (is it a GDB server?)"),
                ));
            }
        }
        let mut payload = Vec::new();
        loop {
            if payload.len() > MAX_PACKET {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("a packet of more than {MAX_PACKET} bytes without its end (`#`)"),
                ));
            }
            let b = self.byte()?;
            if b == b'#' {
                break;
            }
            if b == b'*' {
                // Run-length encoding: the previous byte repeated (n - 29) more times.
                let n = self.byte()?;
                let last = *payload.last().unwrap_or(&b'0');
                payload.extend(std::iter::repeat_n(last, usize::from(n.saturating_sub(29))));
                continue;
            }
            payload.push(b);
        }
        self.byte()?;
        self.byte()?;
        self.stream.write_all(b"+")?;
        if std::env::var_os("HOOKPROF_GDB_DEBUG").is_some() {
            eprintln!(
                "<- {}",
                String::from_utf8_lossy(&payload[..payload.len().min(40)])
            );
        }
        Ok(payload)
    }

    /// Sends a packet and returns the reply; `what` names it in errors.
    fn request(&mut self, payload: &str, what: &str) -> Result<Vec<u8>, RecordError> {
        self.start_exchange();
        self.send(payload)?;
        let mut console = 0usize;
        loop {
            let reply = self
                .packet()
                .map_err(|e| self.error(format!("{what}: no reply: {e}")))?;
            // Console output while waiting: not the reply.
            if reply.first() == Some(&b'O')
                && reply != b"OK"
                && reply[1..].iter().all(u8::is_ascii_hexdigit)
                && payload != "?"
            {
                console += 1;
                if console > MAX_CONSOLE_PACKETS {
                    return Err(self.error(format!(
                        "{what}: no reply, only {MAX_CONSOLE_PACKETS} packets of console output"
                    )));
                }
                continue;
            }
            return Ok(reply);
        }
    }

    fn read_memory(&mut self, address: u64, len: usize) -> Result<Vec<u8>, RecordError> {
        let max = ((self.packet_size.saturating_sub(16)) / 2).clamp(64, 16384);
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            let at = address + out.len() as u64;
            let n = (len - out.len()).min(max);
            let reply = self.request(&format!("m{at:x},{n:x}"), "memory read")?;
            // An error is `Exx`; data is two hex digits a byte (which may begin with `E` too),
            // all of them: a short reply is an error as well.
            if reply.len() != 2 * n {
                return Err(self.error(format!(
                    "cannot read {n} bytes at {at:#x}: the stub answered `{}`",
                    String::from_utf8_lossy(&reply[..reply.len().min(64)])
                )));
            }
            for pair in reply.chunks(2) {
                let hex = std::str::from_utf8(pair).unwrap_or("zz");
                let byte = u8::from_str_radix(hex, 16).map_err(|_| {
                    self.error(format!("memory read at {at:#x}: `{hex}` is not hex"))
                })?;
                out.push(byte);
            }
        }
        Ok(out)
    }

    fn write_memory(&mut self, address: u64, bytes: &[u8]) -> Result<(), RecordError> {
        let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let reply = self.request(
            &format!("M{address:x},{:x}:{hex}", bytes.len()),
            "memory write",
        )?;
        if reply != b"OK" {
            return Err(self.error(format!(
                "cannot write {} bytes at {address:#x}: the stub answered `{}`",
                bytes.len(),
                String::from_utf8_lossy(&reply[..reply.len().min(64)])
            )));
        }
        Ok(())
    }

    /// Halts the running target (^C) and waits for its stop reply. A target that stopped on
    /// its own meanwhile (a breakpoint, a fault, its exit) has sent its stop reply already,
    /// and a stub may ignore a ^C then: that reply is taken instead.
    fn halt(&mut self) -> Result<Stopped, RecordError> {
        self.start_exchange();
        if self.taken == self.pending.len() {
            let mut buf = [0u8; 4096];
            let _ = self.stream.set_nonblocking(true);
            if let Ok(n) = self.stream.read(&mut buf) {
                if n == 0 {
                    let _ = self.stream.set_nonblocking(false);
                    return Ok(Stopped::Exited("connection closed".into()));
                }
                self.pending.extend_from_slice(&buf[..n]);
            }
            let _ = self.stream.set_nonblocking(false);
        }
        if self.pending[self.taken..].contains(&b'$') {
            return self.wait_stop();
        }
        if let Err(e) = self.stream.write_all(&[3]) {
            return Ok(Stopped::Exited(format!("connection closed ({e})")));
        }
        self.wait_stop()
    }

    fn wait_stop(&mut self) -> Result<Stopped, RecordError> {
        let mut console = 0usize;
        loop {
            match self.packet() {
                Ok(reply) => match reply.first() {
                    Some(b'T') | Some(b'S') => return Ok(Stopped::Halted),
                    Some(b'W') | Some(b'X') => {
                        return Ok(Stopped::Exited(format!(
                            "target exited ({})",
                            String::from_utf8_lossy(&reply[..reply.len().min(64)])
                        )))
                    }
                    _ => {
                        // Console output ('O'), or a late reply.
                        console += 1;
                        if console > MAX_CONSOLE_PACKETS {
                            return Err(self.error(format!(
                                "waiting for the target to stop: no stop reply, only \
                                 {MAX_CONSOLE_PACKETS} other packets"
                            )));
                        }
                    }
                },
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::UnexpectedEof
                            | io::ErrorKind::ConnectionReset
                            | io::ErrorKind::ConnectionAborted
                            | io::ErrorKind::BrokenPipe
                    ) =>
                {
                    return Ok(Stopped::Exited("connection closed".into()))
                }
                Err(e) => return Err(self.error(format!("waiting for the target to stop: {e}"))),
            }
        }
    }
}

fn short(payload: &str) -> &str {
    &payload[..payload.len().min(24)]
}

/// The up-buffer 0 of the control block: where its fields are, and the ring.
struct UpBuffer {
    wr_off: u64,
    buffer: u64,
    size: u32,
}

fn record_gdb<C: Consumer>(
    address: &str,
    exe: &Path,
    options: &Options,
    stop: &AtomicBool,
    make: impl FnOnce(Endian) -> Result<C, RecordError>,
) -> Result<Summary, RecordError> {
    let firmware = firmware(exe)?;
    let cb = firmware.control_block.ok_or_else(|| RecordError::File {
        path: exe.to_path_buf(),
        message:
            "no symbol _SEGGER_RTT: the firmware does not stream (HOOKCC_TRACE_STREAM_BUFFER, \
                  make HOOKS=stream)"
                .into(),
    })?;
    let stream = connect(address, stop)?;
    stream
        .set_read_timeout(Some(WAKE))
        .map_err(|e| connect_error(address, e))?;
    let mut gdb = Gdb {
        stream,
        address: address.to_string(),
        packet_size: 400,
        pending: Vec::new(),
        taken: 0,
        stop,
        deadline: Instant::now() + REPLY_TIMEOUT,
    };
    let result = (|| {
        let features = gdb.request("qSupported:swbreak+;hwbreak+", "qSupported")?;
        for f in String::from_utf8_lossy(&features).split(';') {
            if let Some(size) = f.strip_prefix("PacketSize=") {
                gdb.packet_size = usize::from_str_radix(size, 16).unwrap_or(400);
            }
        }
        // A stub reports its state on `?`; a target that is running is halted by the
        // connection (qemu, OpenOCD, J-Link and pyOCD halt it).
        let state = gdb.request("?", "the target's state")?;
        if matches!(state.first(), Some(b'W') | Some(b'X')) {
            return Err(gdb.error("the target has exited already".into()));
        }
        poll_gdb(&mut gdb, cb, &firmware, exe, options, stop, make)
    })();
    if result.is_err() {
        // Leave the target running, whatever went wrong.
        let _ = gdb.send("D");
    }
    result
}

fn poll_gdb<C: Consumer>(
    gdb: &mut Gdb<'_>,
    cb: u64,
    firmware: &Firmware,
    exe: &Path,
    options: &Options,
    stop: &AtomicBool,
    make: impl FnOnce(Endian) -> Result<C, RecordError>,
) -> Result<Summary, RecordError> {
    let (endian, pointer) = (firmware.endian, firmware.pointer);
    let word = |b: &[u8]| -> u64 {
        let mut v = 0u64;
        for (i, &x) in b.iter().enumerate() {
            v |= u64::from(x)
                << (8 * match endian {
                    Endian::Little => i,
                    Endian::Big => b.len() - 1 - i,
                });
        }
        v
    };
    let p = usize::from(pointer);
    // The control block is initialized data: a target halted at reset (qemu -S) has not
    // copied it to RAM yet. Let it run until it is there (10 s at most).
    let waited = Instant::now();
    let head = loop {
        let head = gdb.read_memory(cb, 24 + 2 * p + 16)?;
        // The id first, then the up-buffer's pointer and size (crt0 copies in order).
        let ready = head.starts_with(b"SEGGER RTT\0")
            && word(&head[24 + 2 * p..28 + 2 * p]) != 0
            && word(&head[24 + p..24 + 2 * p]) != 0;
        if ready || waited.elapsed() > Duration::from_secs(10) || stop.load(Ordering::Relaxed) {
            break head;
        }
        gdb.send("c")?;
        std::thread::sleep(Duration::from_millis(1));
        if let Stopped::Exited(how) = gdb.halt()? {
            return Err(gdb.error(format!("{how} before its RTT control block was set up")));
        }
    };
    if !head.starts_with(b"SEGGER RTT\0") {
        return Err(gdb.error(format!(
            "no RTT control block at _SEGGER_RTT ({cb:#x}): its id reads `{}` (the firmware \
             there is not {})",
            String::from_utf8_lossy(&head[..16]).trim_end_matches('\0'),
            exe.display()
        )));
    }
    let max_up = word(&head[16..20]);
    let up_at = 24 + p; // sName skipped
    let up = UpBuffer {
        buffer: word(&head[up_at..up_at + p]),
        size: word(&head[up_at + p..up_at + p + 4]) as u32,
        wr_off: cb + (24 + 2 * p + 4) as u64,
    };
    if max_up < 1 || up.size < 2 {
        return Err(gdb.error(format!(
            "the RTT control block at {cb:#x} has {max_up} up-buffers, the first of {} bytes",
            up.size
        )));
    }
    // The target's word for where its ring is and how large: only within its RAM (a damaged
    // or foreign control block said 0xFFFFFFF0 bytes, and every poll would have read them).
    if !firmware.ram.is_empty() && !firmware.in_ram(up.buffer, u64::from(up.size)) {
        let ram: Vec<String> = firmware
            .ram
            .iter()
            .map(|(s, e)| format!("{s:#x}..{e:#x}"))
            .collect();
        return Err(gdb.error(format!(
            "the RTT control block at {cb:#x} says its up-buffer is {} bytes at {:#x}, which \
             is not in the RAM of {} (its writable parts: {}): a damaged control block, or \
             another firmware's",
            up.size,
            up.buffer,
            exe.display(),
            ram.join(", ")
        )));
    }
    let mut sink = Sink::new(options, make(endian)?);
    let mut polls = 0u64;
    let mut high_water = 0u32;
    let result = drain(
        gdb,
        &up,
        endian,
        &mut sink,
        &mut polls,
        &mut high_water,
        options,
        stop,
    );
    let mut summary = match result {
        Ok(ended_by) => sink.finish(&ended_by, polls)?,
        Err(_) if stop.load(Ordering::Relaxed) => {
            // Ctrl-C in the middle of an exchange: the target goes on without us, and what it
            // had not handed over is still in its ring.
            let _ = gdb.send("D");
            sink.finish("interrupted", polls)?
        }
        Err(cause) => return Err(sink.cut(cause, polls)),
    };
    summary.high_water = Some((high_water, up.size));
    Ok(summary)
}

/// Polls the ring until the target ends or Ctrl-C: how the recording ended.
#[allow(clippy::too_many_arguments)]
fn drain<C: Consumer>(
    gdb: &mut Gdb<'_>,
    up: &UpBuffer,
    endian: Endian,
    sink: &mut Sink<C>,
    polls: &mut u64,
    high_water: &mut u32,
    options: &Options,
    stop: &AtomicBool,
) -> Result<String, RecordError> {
    let word = |b: &[u8]| -> u32 {
        let a: [u8; 4] = b.try_into().expect("4 bytes");
        match endian {
            Endian::Little => u32::from_le_bytes(a),
            Endian::Big => u32::from_be_bytes(a),
        }
    };
    let to_bytes = |v: u32| match endian {
        Endian::Little => v.to_le_bytes(),
        Endian::Big => v.to_be_bytes(),
    };
    loop {
        // Halted: read what the target wrote, free it, let it run.
        *polls += 1;
        let offs = gdb.read_memory(up.wr_off, 8)?;
        let (wr, rd) = (word(&offs[0..4]), word(&offs[4..8]));
        if wr >= up.size || rd >= up.size {
            return Err(gdb.error(format!(
                "the up-buffer's offsets are out of its {} bytes: WrOff {wr}, RdOff {rd} (at {:#x})",
                up.size, up.wr_off
            )));
        }
        let fill = if wr >= rd { wr - rd } else { up.size - rd + wr };
        *high_water = (*high_water).max(fill);
        if wr != rd {
            let mut data = if wr > rd {
                gdb.read_memory(up.buffer + u64::from(rd), (wr - rd) as usize)?
            } else {
                gdb.read_memory(up.buffer + u64::from(rd), (up.size - rd) as usize)?
            };
            if wr < rd && wr > 0 {
                data.extend(gdb.read_memory(up.buffer, wr as usize)?);
            }
            gdb.write_memory(up.wr_off + 4, &to_bytes(wr))?;
            sink.push(&data)?;
        }
        if stop.load(Ordering::Relaxed) {
            // Ctrl-C: the target goes on without us.
            let _ = gdb.send("D");
            let _ = gdb.packet();
            return Ok("interrupted".to_string());
        }
        gdb.send("c")?;
        let deadline = Instant::now() + options.poll_interval;
        while Instant::now() < deadline && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(
                deadline
                    .saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(20)),
            );
        }
        match gdb.halt()? {
            Stopped::Halted => {}
            Stopped::Exited(how) => return Ok(how),
        }
    }
}
