//! [`record`] and [`read_stream`]: the source opened and read until the target ends or
//! Ctrl-C.

use std::fs::File;
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::input::format::Endian;

use super::connect::*;
use super::gdb::*;
use super::options::*;
use super::sink::*;

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
