//! The layout defined once: magic, versions, sizes, flags, chunk types, the header, byte
//! order, and the errors a reader reports (with their byte offset).

use std::fmt;

/// The bytes every trace starts with.
pub const MAGIC: [u8; 8] = *b"HKTRACE\0";
/// The newest format version: the runtime writes 4 for a trace, 5 for a call-path profile
/// (`HOOKCC_MODE=profile`); the [`Writer`](super::Writer)'s default is 4.
pub const VERSION: u16 = 5;
/// The version of a trace (records), what [`Header::new`] writes.
pub const TRACE_VERSION: u16 = 4;
/// The oldest version this reader understands (it reads every one up to [`VERSION`]).
pub const MIN_VERSION: u16 = 1;
/// Size of the fixed header (every version).
pub const HEADER_SIZE: u32 = 64;
/// Size of a chunk header.
pub const CHUNK_HEADER_SIZE: usize = 16;
/// Size of one EVENTS record.
pub const RECORD_SIZE: usize = 16;
/// `flags` bit 0: the runtime finished the file.
pub const FLAG_COMPLETE: u64 = 1;
/// `flags` bit 1: every chunk is followed by its CHECK chunk, and the CLOCK chunk carries
/// the header's checksum (added to version 3 without a new version).
pub const FLAG_CHECKED: u64 = 2;
/// Bit 0 of each SWITCH pair's switch-out time says the thread was preempted (still ready to
/// run); clear, it blocked or yielded. The times are then to 2 ns.
pub const FLAG_SWITCH_REASONS: u64 = 4;
/// `flags` bit 3: written in order to a FIFO, terminal or socket, where nothing can be
/// rewritten: the header stays as written first (never *complete*); the CLOCK chunk ends a
/// finished trace.
pub const FLAG_STREAM: u64 = 8;

/// Version 1: bits 0–61 of a record's first word hold the timestamp, bits 62–63 its kind.
pub const V1_TIME_MASK: u64 = (1 << 62) - 1;
pub(super) const V1_KIND_SHIFT: u32 = 62;
/// Version 2: bit 1 of a record's address word marks an exit (functions are 4-byte aligned);
/// the first word is the whole timestamp.
pub const EXIT_BIT: u64 = 2;

/// Chunk type numbers (section "Chunk types" of the format document).
pub mod chunk_type {
    pub const EXE: u32 = 1;
    pub const MODULE: u32 = 2;
    pub const EVENTS: u32 = 3;
    pub const LOST: u32 = 4;
    pub const THREAD: u32 = 5;
    pub const CLOCK: u32 = 6;
    /// Added without a new version: older readers skip it as an unknown chunk.
    pub const END: u32 = 7;
    /// The checksum of the chunk just before it; also added without a new version.
    pub const CHECK: u32 = 8;
    /// What the hooks cost, measured by the runtime at start; also without a new version.
    pub const OVERHEAD: u32 = 9;
    /// A thread's time inside the runtime writing its buffer; also without a new version.
    pub const PAUSE: u32 = 10;
    /// Version 4: a thread's records, packed (section "PACKED" of the format document).
    pub const PACKED: u32 = 11;
    /// HOOKCC_MODE=ring: a window of a thread's ring starts here.
    pub const RING: u32 = 12;
    /// Version 5, HOOKCC_MODE=profile: a thread's calling-context tree ([`crate::input::cct`]).
    pub const PROFILE: u32 = 13;
    /// Version 5, HOOKCC_MIN_DURATION: a thread's calls left out of its records.
    pub const FOLDED: u32 = 14;
    /// A thread's context switches (Linux perf): when it was switched out. Added to version 4
    /// without a new version: an older reader loses only the on-CPU/off-CPU split.
    pub const SWITCH: u32 = 15;
    /// A thread's CPU time sampled (Linux perf): the address and instant of each sample.
    /// Added to version 4 without a new version: an older reader loses only sampled times.
    pub const SAMPLE: u32 = 16;
    /// What the runtime's writer thread got of the CPUs (Linux schedstat), at the end.
    /// Optional: an older reader skips it.
    pub const WRITER: u32 = 17;
    /// Functions the runtime throttled: timed for their first calls, counted after.
    /// Optional: an older reader skips it (and counts only the recorded calls).
    pub const THROTTLE: u32 = 18;
    /// A module `dlclose` unloaded, and when (optional: an older reader skips it).
    pub const UNLOAD: u32 = 19;
    /// A thread's counted calls of throttled functions, by function (optional: an older
    /// reader skips it, and has the THROTTLE chunks' totals only).
    pub const COUNTED: u32 = 20;
}

/// The PACKED encoding (version 4), as `runtime/src/trace_pack.h` writes it: the reader
/// mirrors every step of the writer's predictor.
pub mod pack {
    /// Fixed part of a PACKED payload: records (u32), stream bytes (u32), first time (u64).
    pub const FIXED_SIZE: usize = 16;
    /// Addresses one chunk's table holds.
    pub const TABLE_MAX: usize = 4096;
    /// Frames of the predicted stack (a ring).
    pub const STACK: usize = 256;
    pub const EXIT_TOP: u64 = 0;
    pub const ENTRY_INDEX: u64 = 1;
    pub const ENTRY_NEW: u64 = 2;
    pub const OTHER: u64 = 3;
    pub const OTHER_EXIT_NEW: u64 = 0;
    pub const OTHER_CLOCK: u64 = 1;
    pub const OTHER_EXIT_INDEX: u64 = 2;
}

/// The format's checksum of a chunk (header and payload) or of the file header: the sum,
/// modulo 2^64, of its 64-bit words read in the trace's byte order. A trailing part shorter
/// than a word (never in a well-formed chunk) is ignored.
pub fn checksum(bytes: &[u8], endian: Endian) -> u64 {
    let words = bytes.chunks_exact(8);
    // Two loops, each with a fixed byte order, so that the compiler vectorizes them.
    match endian {
        Endian::Little => words.fold(0u64, |sum, w| {
            sum.wrapping_add(u64::from_le_bytes(w.try_into().unwrap_or_default()))
        }),
        Endian::Big => words.fold(0u64, |sum, w| {
            sum.wrapping_add(u64::from_be_bytes(w.try_into().unwrap_or_default()))
        }),
    }
}

/// Byte order of every field after the magic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endian {
    Little,
    Big,
}

impl Endian {
    /// The unsigned integer in `bytes` (at most 8) in this byte order: the dumps of the TI,
    /// PFP and gprof runtimes are read with it.
    pub fn uint(self, bytes: &[u8]) -> u64 {
        let fold = |v: u64, &b: &u8| v << 8 | u64::from(b);
        match self {
            Endian::Little => bytes.iter().rev().fold(0, fold),
            Endian::Big => bytes.iter().fold(0, fold),
        }
    }

    /// The byte order of the host running hookprof.
    pub fn native() -> Self {
        if cfg!(target_endian = "big") {
            Endian::Big
        } else {
            Endian::Little
        }
    }

    /// The value of header byte 8 for this order.
    pub fn code(self) -> u8 {
        match self {
            Endian::Little => 1,
            Endian::Big => 2,
        }
    }

    fn from_code(code: u8) -> Option<Self> {
        match code {
            1 => Some(Endian::Little),
            2 => Some(Endian::Big),
            _ => None,
        }
    }

    pub(super) fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }

    pub(super) fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }

    pub(super) fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }

    pub(super) fn u16_bytes(self, v: u16) -> [u8; 2] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }

    pub(super) fn u32_bytes(self, v: u32) -> [u8; 4] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }

    pub(super) fn u64_bytes(self, v: u64) -> [u8; 8] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }
}

impl fmt::Display for Endian {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Endian::Little => "little-endian",
            Endian::Big => "big-endian",
        })
    }
}

/// Reads fixed-size integers at absolute file offsets of a byte slice, in the trace's order.
/// Every read is bounds-checked by the caller having checked the length; `get` keeps it
/// panic-free even if a caller got that wrong.
#[derive(Clone, Copy)]
pub(super) struct Bytes<'a> {
    pub(super) data: &'a [u8],
    pub(super) endian: Endian,
}

impl<'a> Bytes<'a> {
    pub(super) fn array<const N: usize>(&self, at: usize) -> Option<[u8; N]> {
        let end = at.checked_add(N)?;
        self.data.get(at..end)?.try_into().ok()
    }

    pub(super) fn u32(&self, at: usize) -> Option<u32> {
        self.array(at).map(|b| self.endian.u32(b))
    }

    pub(super) fn u64(&self, at: usize) -> Option<u64> {
        self.array(at).map(|b| self.endian.u64(b))
    }
}

/// The 64-byte file header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub endian: Endian,
    /// Target pointer size in bytes: 4 or 8.
    pub pointer_size: u8,
    pub version: u16,
    /// Bytes before the first chunk (64 in version 1; larger values are accepted and skipped).
    pub header_size: u32,
    /// 0 while the program runs; then the reader uses the CLOCK chunk.
    pub ticks_per_second: u64,
    pub pid: u64,
    pub flags: u64,
    pub start_realtime_ns: u64,
    /// Records written to the file, as counted by the runtime (set when complete).
    pub records: u64,
    /// Records the runtime could not keep (set when complete).
    pub lost: u64,
}

impl Header {
    /// A header for a new trace written in `endian` order by a 64-bit target, not yet complete.
    pub fn new(endian: Endian) -> Self {
        Header {
            endian,
            pointer_size: 8,
            version: TRACE_VERSION,
            header_size: HEADER_SIZE,
            ticks_per_second: 0,
            pid: 0,
            flags: 0,
            start_realtime_ns: 0,
            records: 0,
            lost: 0,
        }
    }

    /// The runtime finished the file (flags bit 0).
    pub fn is_complete(&self) -> bool {
        self.flags & FLAG_COMPLETE != 0
    }

    /// Written as a stream (flags bit 3): finished where it has its CLOCK chunk
    /// ([`crate::analysis::replay::TraceSummary::finished`]).
    pub fn is_stream(&self) -> bool {
        self.flags & FLAG_STREAM != 0
    }

    /// Mask applied to every address: the low 32 bits on a 32-bit target.
    pub fn address_mask(&self) -> u64 {
        if self.pointer_size == 4 {
            u32::MAX as u64
        } else {
            u64::MAX
        }
    }

    /// Validates and decodes the header at the start of `data`.
    pub fn parse(data: &[u8]) -> Result<Header, FormatError> {
        let file_len = data.len() as u64;
        let err = |offset: u64, kind| Err(FormatError { offset, kind });
        if data.len() < HEADER_SIZE as usize {
            return err(0, FormatErrorKind::ShortHeader { len: file_len });
        }
        let magic: [u8; 8] = data[0..8].try_into().unwrap_or_default();
        if magic != MAGIC {
            return err(0, FormatErrorKind::BadMagic { found: magic });
        }
        let Some(endian) = Endian::from_code(data[8]) else {
            return err(8, FormatErrorKind::BadEndian { found: data[8] });
        };
        let pointer_size = data[9];
        if pointer_size != 4 && pointer_size != 8 {
            return err(
                9,
                FormatErrorKind::BadPointerSize {
                    found: pointer_size,
                },
            );
        }
        let version = endian.u16([data[10], data[11]]);
        if !(MIN_VERSION..=VERSION).contains(&version) {
            return err(10, FormatErrorKind::UnsupportedVersion { found: version });
        }
        let b = Bytes { data, endian };
        // Every read below is inside the 64 bytes checked above.
        let field = |at: usize| b.u64(at).unwrap_or(0);
        let header_size = b.u32(12).unwrap_or(0);
        if header_size < HEADER_SIZE
            || !header_size.is_multiple_of(8)
            || u64::from(header_size) > file_len
        {
            return err(
                12,
                FormatErrorKind::BadHeaderSize {
                    found: header_size,
                    file_len,
                },
            );
        }
        Ok(Header {
            endian,
            pointer_size,
            version,
            header_size,
            ticks_per_second: field(16),
            pid: field(24),
            flags: field(32),
            start_realtime_ns: field(40),
            records: field(48),
            lost: field(56),
        })
    }

    /// The header's bytes (`header_size` of them, zero-filled past byte 64).
    pub fn encode(&self) -> Vec<u8> {
        let e = self.endian;
        let mut out = Vec::with_capacity(self.header_size.max(HEADER_SIZE) as usize);
        out.extend_from_slice(&MAGIC);
        out.push(e.code());
        out.push(self.pointer_size);
        out.extend_from_slice(&e.u16_bytes(self.version));
        out.extend_from_slice(&e.u32_bytes(self.header_size));
        for v in [
            self.ticks_per_second,
            self.pid,
            self.flags,
            self.start_realtime_ns,
            self.records,
            self.lost,
        ] {
            out.extend_from_slice(&e.u64_bytes(v));
        }
        out.resize(self.header_size.max(HEADER_SIZE) as usize, 0);
        out
    }
}

/// What went wrong at [`FormatError::offset`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FormatErrorKind {
    #[error("file is {len} bytes long, too short for the 64-byte header (is the program still starting, or is this not a trace?)")]
    ShortHeader { len: u64 },
    #[error(
        "magic is {}, expected \"HKTRACE\\0\" ({})",
        escape(found),
        other_format(found)
    )]
    BadMagic { found: [u8; 8] },
    #[error("endian byte is {found}, expected 1 (little-endian) or 2 (big-endian)")]
    BadEndian { found: u8 },
    #[error("pointer size is {found}, expected 4 or 8")]
    BadPointerSize { found: u8 },
    #[error("format version is {found}, but this hookprof reads versions {MIN_VERSION} to {VERSION} only")]
    UnsupportedVersion { found: u16 },
    #[error("header_size is {found}, expected a multiple of 8 between 64 and the file size ({file_len})")]
    BadHeaderSize { found: u32, file_len: u64 },
    #[error("truncated: a chunk header needs 16 bytes but only {remaining} remain")]
    TruncatedChunkHeader { remaining: u64 },
    #[error(
        "truncated: {chunk} chunk declares {declared} payload bytes but only {remaining} remain"
    )]
    TruncatedChunk {
        chunk: ChunkName,
        declared: u32,
        remaining: u64,
    },
    #[error("{chunk} chunk length {length} is not a multiple of {multiple}")]
    BadChunkLength {
        chunk: ChunkName,
        length: u32,
        multiple: u32,
    },
    #[error("{chunk} chunk length {length} is too short: expected at least {min} bytes")]
    ChunkTooShort {
        chunk: ChunkName,
        length: u32,
        min: u32,
    },
    #[error("{chunk} chunk: the {what} is not NUL-terminated within the chunk")]
    Unterminated {
        chunk: ChunkName,
        what: &'static str,
    },
    #[error("CHECK chunk length {length}, expected 8")]
    CheckLength { length: u32 },
    #[error("record has reserved kind {kind}, expected 0 (entry) or 1 (exit)")]
    ReservedKind { kind: u8 },
    #[error(
        "PACKED chunk: its stream of {stream} bytes does not fit in its {length}-byte payload"
    )]
    PackedStreamLength { stream: u32, length: u32 },
    #[error("PACKED record {index}: {what}")]
    BadPacked { index: u32, what: &'static str },
    #[error("PROFILE chunk: {what}")]
    BadProfile { what: &'static str },
    #[error("THROTTLE chunk declares {count} functions but its payload holds {room}")]
    BadThrottle { count: u64, room: usize },
    #[error("COUNTED chunk declares {count} functions but its payload holds {room}")]
    BadCounted { count: u64, room: usize },
}

impl From<crate::input::cct::BadProfile> for FormatErrorKind {
    fn from(e: crate::input::cct::BadProfile) -> FormatErrorKind {
        FormatErrorKind::BadProfile { what: e.what }
    }
}

/// What a file with another magic is, and the command that reads it.
fn other_format(magic: &[u8; 8]) -> &'static str {
    if magic == b"HKNITRO\0" {
        "a NITRO buffer: `hookprof nitro DUMP --exe PROGRAM` decodes it, and the views read a \
         function cost buffer given --exe"
    } else {
        "not a hookcc trace; a TI dump is read by `hookprof ti DUMP --exe PROGRAM`, and by the \
         views given --exe"
    }
}

fn escape(bytes: &[u8]) -> String {
    let mut s = String::from("\"");
    for &b in bytes {
        s.extend(std::ascii::escape_default(b).map(char::from));
    }
    s.push('"');
    s
}

/// A chunk type as shown in messages: its name for known types, else its number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkName(pub u32);

impl fmt::Display for ChunkName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            chunk_type::EXE => f.write_str("EXE"),
            chunk_type::MODULE => f.write_str("MODULE"),
            chunk_type::EVENTS => f.write_str("EVENTS"),
            chunk_type::LOST => f.write_str("LOST"),
            chunk_type::THREAD => f.write_str("THREAD"),
            chunk_type::CLOCK => f.write_str("CLOCK"),
            chunk_type::END => f.write_str("END"),
            chunk_type::CHECK => f.write_str("CHECK"),
            chunk_type::OVERHEAD => f.write_str("OVERHEAD"),
            chunk_type::PAUSE => f.write_str("PAUSE"),
            chunk_type::PACKED => f.write_str("PACKED"),
            chunk_type::RING => f.write_str("RING"),
            chunk_type::PROFILE => f.write_str("PROFILE"),
            chunk_type::FOLDED => f.write_str("FOLDED"),
            chunk_type::SWITCH => f.write_str("SWITCH"),
            chunk_type::SAMPLE => f.write_str("SAMPLE"),
            chunk_type::WRITER => f.write_str("WRITER"),
            chunk_type::THROTTLE => f.write_str("THROTTLE"),
            chunk_type::UNLOAD => f.write_str("UNLOAD"),
            chunk_type::COUNTED => f.write_str("COUNTED"),
            other => write!(f, "type-{other}"),
        }
    }
}

/// A malformed trace: where (absolute byte offset in the file) and what was expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("byte {offset}: {kind}")]
pub struct FormatError {
    pub offset: u64,
    pub kind: FormatErrorKind,
}

impl FormatError {
    /// The file ends inside a chunk (or a chunk header): what a program killed in the
    /// middle of a write leaves behind.
    pub fn is_truncation(&self) -> bool {
        matches!(
            self.kind,
            FormatErrorKind::TruncatedChunk { .. } | FormatErrorKind::TruncatedChunkHeader { .. }
        )
    }
}
