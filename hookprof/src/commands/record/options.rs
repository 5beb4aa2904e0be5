//! What a recording is given and gives back, its bounds and errors, and what it takes from
//! the firmware's ELF.

use std::path::{Path, PathBuf};
use std::time::Duration;

use object::{Object, ObjectSymbol};

use crate::input::format::Endian;
use crate::input::stream::StreamCounts;

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
pub(super) struct Firmware {
    pub(super) endian: Endian,
    pub(super) pointer: u8,
    /// `_SEGGER_RTT`'s address.
    pub(super) control_block: Option<u64>,
    pub(super) ram: Vec<(u64, u64)>,
}

impl Firmware {
    /// Whether `len` bytes at `address` lie within one range of the RAM.
    pub(super) fn in_ram(&self, address: u64, len: u64) -> bool {
        let Some(end) = address.checked_add(len) else {
            return false;
        };
        self.ram.iter().any(|&(s, e)| s <= address && end <= e)
    }
}

pub(super) fn elf_facts(path: &Path) -> Result<(Endian, u8, Option<u64>), RecordError> {
    let f = firmware(path)?;
    Ok((f.endian, f.pointer, f.control_block))
}

pub(super) fn firmware(path: &Path) -> Result<Firmware, RecordError> {
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
