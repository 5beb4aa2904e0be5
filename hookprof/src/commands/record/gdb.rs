//! [`Source::Gdb`]: the GDB remote serial protocol, just what reading the ring needs, and
//! the poll that drains it.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::input::format::Endian;

use super::connect::*;
use super::options::*;
use super::sink::*;

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

pub(super) fn record_gdb<C: Consumer>(
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
