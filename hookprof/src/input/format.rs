//! The `.hktrace` format, versions 1 to 5: a reader that never panics and a [`Writer`].
//!
//! The layout is defined once here for the Rust side and once in
//! `runtime/src/trace_format.h` for the C side; `docs/trace-format.md` is the contract
//! between them. Every error carries the byte offset where reading went wrong and says
//! what was expected there.
//!
//! Reading is zero-copy over a byte slice (usually a memory map, see [`crate::input::trace_file::TraceFile`]):
//! chunks and records are decoded one at a time as they are iterated, so memory does not
//! grow with the length of the trace.

use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The bytes every trace starts with.
pub const MAGIC: [u8; 8] = *b"HKTRACE\0";
/// The newest format version: the runtime writes 4 for a trace, 5 for a call-path profile
/// (`HOOKCC_MODE=profile`); the [`Writer`]'s default is 4.
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
const V1_KIND_SHIFT: u32 = 62;
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

    fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }

    fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }

    fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }

    fn u16_bytes(self, v: u16) -> [u8; 2] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }

    fn u32_bytes(self, v: u32) -> [u8; 4] {
        match self {
            Endian::Little => v.to_le_bytes(),
            Endian::Big => v.to_be_bytes(),
        }
    }

    fn u64_bytes(self, v: u64) -> [u8; 8] {
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
struct Bytes<'a> {
    data: &'a [u8],
    endian: Endian,
}

impl<'a> Bytes<'a> {
    fn array<const N: usize>(&self, at: usize) -> Option<[u8; N]> {
        let end = at.checked_add(N)?;
        self.data.get(at..end)?.try_into().ok()
    }

    fn u32(&self, at: usize) -> Option<u32> {
        self.array(at).map(|b| self.endian.u32(b))
    }

    fn u64(&self, at: usize) -> Option<u64> {
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

/// What the hooks cost (OVERHEAD chunk), in ticks: the mean time (of the fastest 90 %) from an
/// entry record to the exit record of an empty function, and from an exit record to the next
/// entry record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Overhead {
    pub self_ticks: u64,
    pub child_ticks: u64,
    /// Hook pairs the runtime timed.
    pub pairs: u64,
    /// What `count_calls` calls of a throttled function cost, in all (0 in traces before
    /// count marks).
    pub count_ticks: u64,
    /// The calls a count mark stands for ([`COUNT_MARK`]); 0: not measured.
    pub count_calls: u64,
}

/// A count mark's `address_kind` (docs/trace-format.md, "Count marks"): an exit of address 4,
/// which no function has: the thread made `count_calls` more calls of throttled functions,
/// counted, not recorded, since its previous mark.
pub const COUNT_MARK: u64 = 4;

/// A loaded object (MODULE chunk).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Module {
    /// Run-time address = ELF virtual address + bias.
    pub bias: u64,
    /// Lowest run-time address of the PT_LOAD segments.
    pub start: u64,
    /// One past the highest.
    pub end: u64,
    /// `None` for the executable (empty path in the chunk).
    pub path: Option<PathBuf>,
}

impl Module {
    pub fn contains(&self, address: u64) -> bool {
        self.start <= address && address < self.end
    }
}

/// Clock calibration (CLOCK chunk).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Clock {
    pub ticks_per_second: u64,
    pub first_tick: u64,
    pub last_tick: u64,
    /// In a file with checksums: the checksum of the header as the runtime finished it.
    pub header_check: Option<u64>,
}

/// Kind of an EVENTS record.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecordKind {
    Entry,
    Exit,
}

/// One decoded EVENTS record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Timestamp in ticks (62 bits in version 1, 64 in version 2).
    pub time: u64,
    pub kind: RecordKind,
    /// Entry point of the instrumented function (masked to 32 bits on 32-bit targets).
    pub address: u64,
}

impl Record {
    /// A version 2 record from its two words: the exit bit is the address's top bit, and
    /// `mask` keeps the target's pointer width.
    #[inline]
    fn from_v2(time: u64, address: u64, mask: u64) -> Self {
        Record {
            time,
            kind: if address & EXIT_BIT != 0 {
                RecordKind::Exit
            } else {
                RecordKind::Entry
            },
            address: address & !EXIT_BIT & mask,
        }
    }

    pub fn entry(time: u64, address: u64) -> Self {
        Record {
            time,
            kind: RecordKind::Entry,
            address,
        }
    }

    pub fn exit(time: u64, address: u64) -> Self {
        Record {
            time,
            kind: RecordKind::Exit,
            address,
        }
    }
}

/// The records of one EVENTS or PACKED chunk, decoded lazily.
#[derive(Clone, Copy)]
pub struct Events<'a> {
    /// The 16-byte records (EVENTS), or the stream (PACKED).
    bytes: Bytes<'a>,
    /// File offset of the first record, or of the stream.
    offset: u64,
    mask: u64,
    version: u16,
    packed: Option<PackedHead>,
}

/// The fixed part of a PACKED chunk.
#[derive(Clone, Copy, Debug)]
struct PackedHead {
    records: u32,
    first_time: u64,
}

impl<'a> Events<'a> {
    /// Number of records in the chunk.
    pub fn len(&self) -> usize {
        match self.packed {
            Some(head) => head.records as usize,
            None => self.bytes.data.len() / RECORD_SIZE,
        }
    }

    /// Bytes the chunk's records take in the file (its payload).
    pub fn encoded_bytes(&self) -> u64 {
        self.bytes.data.len() as u64
            + if self.packed.is_some() {
                pack::FIXED_SIZE as u64
            } else {
                0
            }
    }

    /// Whether the records are packed (a PACKED chunk).
    pub fn is_packed(&self) -> bool {
        self.packed.is_some()
    }

    /// A reader of the records a batch at a time, in order.
    pub fn cursor(&self) -> Cursor<'a> {
        Cursor {
            events: *self,
            index: 0,
            packed: self.packed.map(|head| PackDecoder::new(self, head)),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// File offset of the first record.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The records in order; a record of a reserved kind, or a damaged PACKED stream, is an
    /// error at its offset (and the last item).
    pub fn iter(&self) -> EventsIter<'a> {
        EventsIter {
            events: *self,
            index: 0,
            packed: self.packed.map(|head| PackDecoder::new(self, head)),
        }
    }

    /// Decodes the records from number `start` on into `out`, as many as fit; returns how
    /// many. Only for version 2 and later, where every bit pattern is a valid record (what
    /// [`Events::iter`] gives, without a `Result` per record: the replay's inner loop).
    pub fn decode_into(&self, start: usize, out: &mut [Record]) -> usize {
        debug_assert!(self.version >= 2 && self.packed.is_none());
        let data = self
            .bytes
            .data
            .get(start * RECORD_SIZE..)
            .unwrap_or_default();
        let n = out.len().min(data.len() / RECORD_SIZE);
        let mask = self.mask;
        let decode = |slot: &mut Record, raw: &[u8], read: fn([u8; 8]) -> u64| {
            let time = read(raw[..8].try_into().expect("8 bytes"));
            let address = read(raw[8..16].try_into().expect("8 bytes"));
            *slot = Record::from_v2(time, address, mask);
        };
        let records = out[..n].iter_mut().zip(data.chunks_exact(RECORD_SIZE));
        match self.bytes.endian {
            Endian::Little => records.for_each(|(slot, raw)| decode(slot, raw, u64::from_le_bytes)),
            Endian::Big => records.for_each(|(slot, raw)| decode(slot, raw, u64::from_be_bytes)),
        }
        n
    }

    /// The format version of the trace (records of version 2 and later are all valid).
    pub fn version(&self) -> u16 {
        self.version
    }
}

impl fmt::Debug for Events<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Events")
            .field("offset", &self.offset)
            .field("records", &self.len())
            .finish()
    }
}

/// Reads an [`Events`] chunk's records a batch at a time (the replay's inner loop): no
/// `Result` per record.
pub struct Cursor<'a> {
    events: Events<'a>,
    index: usize,
    packed: Option<PackDecoder<'a>>,
}

impl Cursor<'_> {
    /// Decodes the next records into `out`, as many as fit; returns how many (fewer than
    /// `out.len()` only at the end) and, for a damaged PACKED stream, the error that ended it
    /// (the records before it are in `out[..n]`; nothing follows).
    pub fn fill(&mut self, out: &mut [Record]) -> (usize, Option<FormatError>) {
        match &mut self.packed {
            Some(decoder) => decoder.fill(out),
            None => {
                let n = self.events.decode_into(self.index, out);
                self.index += n;
                (n, None)
            }
        }
    }
}

/// The PACKED reader's state: the writer's table and predicted stack, rebuilt as it goes.
struct PackDecoder<'a> {
    stream: &'a [u8],
    pos: usize,
    /// File offset of the stream's first byte.
    offset: u64,
    mask: u64,
    index: u32,
    records: u32,
    now: u64,
    last_new: u64,
    depth: u64,
    after_escape: bool,
    failed: bool,
    table: Vec<u64>,
    ring: Box<[u64; pack::STACK]>,
}

impl<'a> PackDecoder<'a> {
    fn new(events: &Events<'a>, head: PackedHead) -> Self {
        PackDecoder {
            stream: events.bytes.data,
            pos: 0,
            offset: events.offset,
            mask: events.mask,
            index: 0,
            records: head.records,
            now: head.first_time,
            last_new: 0,
            depth: 0,
            after_escape: false,
            failed: false,
            table: Vec::new(),
            ring: Box::new([0; pack::STACK]),
        }
    }

    fn error(&mut self, what: &'static str) -> FormatError {
        self.failed = true;
        FormatError {
            offset: self.offset + self.pos as u64,
            kind: FormatErrorKind::BadPacked {
                index: self.index,
                what,
            },
        }
    }

    #[inline]
    fn varint(&mut self) -> Result<u64, FormatError> {
        let mut value = 0u64;
        let mut shift = 0u32;
        loop {
            let Some(&byte) = self.stream.get(self.pos) else {
                return Err(self.error("the stream ends inside it"));
            };
            self.pos += 1;
            if shift == 63 && byte > 1 {
                return Err(self.error("a number longer than 64 bits"));
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Ok(value);
            }
            shift += 7;
            if shift > 63 {
                return Err(self.error("a number longer than 64 bits"));
            }
        }
    }

    fn new_address(&mut self) -> Result<u64, FormatError> {
        let z = self.varint()?;
        Ok(self.add_new_address(z))
    }

    /// A new address from its zigzag delta `z`; it joins the table while there is room.
    #[inline(always)]
    fn add_new_address(&mut self, z: u64) -> u64 {
        let delta = (z >> 1) ^ (z & 1).wrapping_neg();
        let address = self.last_new.wrapping_add(delta);
        self.last_new = address;
        if self.table.len() < pack::TABLE_MAX {
            self.table.push(address);
        }
        address
    }

    fn table_entry(&mut self, index: u64) -> Result<u64, FormatError> {
        match self.table.get(index as usize) {
            Some(&address) => Ok(address),
            None => Err(self.error("a table index past the addresses seen so far")),
        }
    }

    /// The innermost frame of `address` in the ring's window, as a depth, or `depth`.
    fn search(&self, address: u64) -> u64 {
        let lowest = self.depth.saturating_sub(pack::STACK as u64);
        let mut d = self.depth;
        while d > lowest {
            if self.ring[((d - 1) as usize) & (pack::STACK - 1)] == address {
                return d - 1;
            }
            d -= 1;
        }
        self.depth
    }

    fn next_record(&mut self) -> Result<Record, FormatError> {
        let mut v = self.varint()?;
        if v & 3 == pack::OTHER && v >> 2 == 0 {
            // A clock escape comes first when the delta did not fit.
            let save = self.pos;
            if self.varint()? == pack::OTHER_CLOCK {
                self.now = self.varint()?;
                v = self.varint()?;
            } else {
                self.pos = save;
            }
        }
        let delta = v >> 2;
        self.now = self.now.wrapping_add(delta);
        let time = self.now;
        let record = match v & 3 {
            pack::EXIT_TOP => {
                if self.depth == 0 {
                    return Err(self.error("an exit of the top frame with no frame open"));
                }
                self.depth -= 1;
                let address = self.ring[(self.depth as usize) & (pack::STACK - 1)];
                self.after_escape = address == 0;
                Record::exit(time, address & self.mask)
            }
            pack::ENTRY_INDEX | pack::ENTRY_NEW => {
                let address = if v & 3 == pack::ENTRY_INDEX {
                    let index = self.varint()?;
                    self.table_entry(index)?
                } else {
                    self.new_address()?
                };
                let found = if self.after_escape {
                    self.search(address)
                } else {
                    self.depth
                };
                if found < self.depth {
                    self.depth = found + 1;
                } else {
                    self.ring[(self.depth as usize) & (pack::STACK - 1)] = address;
                    self.depth += 1;
                }
                self.after_escape = false;
                Record::entry(time, address & self.mask)
            }
            _ => {
                let address = match self.varint()? {
                    pack::OTHER_EXIT_NEW => self.new_address()?,
                    pack::OTHER_CLOCK => {
                        return Err(self.error("a clock escape with a delta, or two in a row"))
                    }
                    s => self.table_entry(s - pack::OTHER_EXIT_INDEX)?,
                };
                self.depth = self.search(address);
                self.after_escape = address == 0;
                Record::exit(time, address & self.mask)
            }
        };
        self.index += 1;
        Ok(record)
    }

    /// The common records, decoded without a check per byte and without a `Result`: an exit
    /// of the top frame, an entry of a table address or of a new one (not after a resync
    /// escape). `None`, with nothing changed, for everything else — other exits, clock
    /// escapes, the entry after an escape, damage, the stream's last [`FAST_WINDOW`] bytes —
    /// which [`Self::next_record`] then decodes, reporting any damage at its byte as before.
    /// The caller has checked that a record is still due.
    #[inline(always)]
    fn fast_record(&mut self) -> Option<Record> {
        // One length check per record: what follows reads inside the window.
        let window: &[u8; FAST_WINDOW] = self
            .stream
            .get(self.pos..self.pos.wrapping_add(FAST_WINDOW))?
            .try_into()
            .ok()?;
        let (v, used) = window_varint(window, 0)?;
        let time = self.now.wrapping_add(v >> 2);
        let (kind, address, used) = match v & 3 {
            pack::EXIT_TOP => {
                let depth = self.depth.checked_sub(1)?;
                self.depth = depth;
                let address = self.ring[(depth as usize) & (pack::STACK - 1)];
                self.after_escape = address == 0;
                (RecordKind::Exit, address, used)
            }
            pack::ENTRY_INDEX if !self.after_escape => {
                let (index, used) = window_varint(window, used)?;
                let &address = self.table.get(usize::try_from(index).ok()?)?;
                self.push(address);
                (RecordKind::Entry, address, used)
            }
            pack::ENTRY_NEW if !self.after_escape => {
                let (z, used) = window_varint(window, used)?;
                let address = self.add_new_address(z);
                self.push(address);
                (RecordKind::Entry, address, used)
            }
            _ => return None,
        };
        self.pos += used;
        self.now = time;
        self.index += 1;
        Some(Record {
            time,
            kind,
            address: address & self.mask,
        })
    }

    /// An entry that is not a resync target: its address becomes the top frame.
    #[inline(always)]
    fn push(&mut self, address: u64) {
        self.ring[(self.depth as usize) & (pack::STACK - 1)] = address;
        self.depth += 1;
    }

    fn next(&mut self) -> Option<Result<Record, FormatError>> {
        if self.failed {
            return None;
        }
        if self.index >= self.records {
            return self.after_last().map(Err);
        }
        if let Some(record) = self.fast_record() {
            return Some(Ok(record));
        }
        Some(self.next_record())
    }

    /// Once every record is decoded: the stream must end with the last one (the padding is
    /// not in it).
    fn after_last(&mut self) -> Option<FormatError> {
        if self.pos != self.stream.len() {
            return Some(self.error("bytes after the chunk's last record"));
        }
        None
    }

    fn fill(&mut self, out: &mut [Record]) -> (usize, Option<FormatError>) {
        let mut n = 0;
        loop {
            n = self.fast_run(out, n);
            if n == out.len() || self.failed {
                return (n, None);
            }
            if self.index >= self.records {
                return (n, self.after_last());
            }
            // A record the fast path leaves: a rarer kind, damage, or the stream's end.
            match self.next_record() {
                Ok(record) => {
                    out[n] = record;
                    n += 1;
                }
                Err(err) => return (n, Some(err)),
            }
        }
    }

    /// The replay's fast path: exits of the top frame and entries of table addresses into
    /// `out[n..]`, with the decoder's state in locals, until a record is another kind (an
    /// entry of a new address too: once a function a chunk, and its `Vec::push` would cost
    /// the loop its registers), `out` is full or the chunk's records are done; returns the
    /// new `n`. Nothing is reported here: the careful path takes the record it stopped at.
    #[inline(always)]
    fn fast_run(&mut self, out: &mut [Record], n: usize) -> usize {
        if self.failed {
            return n;
        }
        let due = (self.records.saturating_sub(self.index) as usize).min(out.len() - n);
        let (stream, mask, ring, table) =
            (self.stream, self.mask, &mut *self.ring, &self.table[..]);
        let (mut pos, mut now, mut depth, mut after_escape) =
            (self.pos, self.now, self.depth, self.after_escape);
        // The records from `pos` to `last_window` have a whole window after their start.
        let Some(last_window) = stream.len().checked_sub(FAST_WINDOW) else {
            return n;
        };
        let slots = &mut out[n..n + due];
        let mut done = 0;
        while done < slots.len() && pos <= last_window {
            // One length check per record: what follows reads inside the window.
            let Some(window) = stream[pos..].first_chunk::<FAST_WINDOW>() else {
                break;
            };
            // The two commonest records first, each a path of its own: an exit of the top
            // frame with a delta under 32 ticks (one byte), an entry of a table address with
            // an index under 128 and a delta under 32 ticks (two bytes).
            let first = window[0];
            if first & 0x83 == pack::EXIT_TOP as u8 && depth > 0 {
                depth -= 1;
                let address = ring[(depth as usize) & (pack::STACK - 1)];
                after_escape = address == 0;
                now = now.wrapping_add(u64::from(first >> 2));
                pos += 1;
                slots[done] = Record::exit(now, address & mask);
                done += 1;
                continue;
            }
            if first & 0x83 == pack::ENTRY_INDEX as u8 && window[1] < 0x80 && !after_escape {
                if let Some(&address) = table.get(usize::from(window[1])) {
                    ring[(depth as usize) & (pack::STACK - 1)] = address;
                    depth += 1;
                    now = now.wrapping_add(u64::from(first >> 2));
                    pos += 2;
                    slots[done] = Record::entry(now, address & mask);
                    done += 1;
                    continue;
                }
            }
            let Some((v, used)) = window_varint(window, 0) else {
                break;
            };
            let time = now.wrapping_add(v >> 2);
            let k = v & 3;
            let (kind, address, used) = if k == pack::EXIT_TOP {
                let Some(below) = depth.checked_sub(1) else {
                    break;
                };
                depth = below;
                let address = ring[(depth as usize) & (pack::STACK - 1)];
                after_escape = address == 0;
                (RecordKind::Exit, address, used)
            } else if after_escape {
                break;
            } else if k == pack::ENTRY_INDEX {
                let Some((index, used)) = window_varint(window, used) else {
                    break;
                };
                let Some(&address) = usize::try_from(index).ok().and_then(|i| table.get(i)) else {
                    break;
                };
                ring[(depth as usize) & (pack::STACK - 1)] = address;
                depth += 1;
                (RecordKind::Entry, address, used)
            } else {
                break;
            };
            pos += used;
            now = time;
            slots[done] = Record {
                time,
                kind,
                address: address & mask,
            };
            done += 1;
        }
        self.pos = pos;
        self.now = now;
        self.depth = depth;
        self.after_escape = after_escape;
        self.index += done as u32;
        n + done
    }
}

/// Bytes [`PackDecoder::fast_record`] may read without a further check: a record's first two
/// numbers, each at most 10 bytes.
const FAST_WINDOW: usize = 20;

/// The LEB128 number at `at` in `window` and the offset after it; `None` for a number longer
/// than 64 bits (the careful path reports it).
#[inline(always)]
fn window_varint(window: &[u8; FAST_WINDOW], at: usize) -> Option<(u64, usize)> {
    let bytes = window.get(at..at + 10)?;
    let first = bytes[0];
    if first < 0x80 {
        return Some((u64::from(first), at + 1));
    }
    let mut value = u64::from(first & 0x7f);
    for (i, &byte) in bytes.iter().enumerate().skip(1) {
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte < 0x80 {
            // The tenth byte holds bit 63 only.
            return (i < 9 || byte <= 1).then_some((value, at + i + 1));
        }
    }
    None
}

/// Iterator over the records of an [`Events`] chunk.
pub struct EventsIter<'a> {
    events: Events<'a>,
    index: usize,
    packed: Option<PackDecoder<'a>>,
}

impl Iterator for EventsIter<'_> {
    type Item = Result<Record, FormatError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if let Some(decoder) = &mut self.packed {
            return decoder.next();
        }
        let at = self.index.checked_mul(RECORD_SIZE)?;
        let time_kind = self.events.bytes.u64(at)?;
        let address = self.events.bytes.u64(at + 8)?;
        self.index += 1;
        if self.events.version >= 2 {
            // Every bit pattern is a valid record: nothing to reject.
            return Some(Ok(Record::from_v2(time_kind, address, self.events.mask)));
        }
        let kind = match time_kind >> V1_KIND_SHIFT {
            0 => RecordKind::Entry,
            1 => RecordKind::Exit,
            k => {
                // Stop after the first bad record.
                self.index = usize::MAX;
                return Some(Err(FormatError {
                    offset: self.events.offset + at as u64,
                    kind: FormatErrorKind::ReservedKind { kind: k as u8 },
                }));
            }
        };
        Some(Ok(Record {
            time: time_kind & V1_TIME_MASK,
            kind,
            address: address & self.events.mask,
        }))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.events.len().saturating_sub(self.index);
        (0, Some(left))
    }
}

/// The typed payload of a chunk.
#[derive(Clone, Debug)]
pub enum Chunk<'a> {
    Exe {
        path: PathBuf,
    },
    Module(Module),
    Events(Events<'a>),
    Lost {
        count: u64,
        /// Where the records were dropped (the time of the first), in a stream's trace
        /// (`hookprof record`): the chunk then sits between the thread's records before and
        /// after the loss. `None` in the runtimes' LOST chunks, which count a thread's losses.
        at: Option<u64>,
    },
    Thread {
        sequence: u64,
        name: String,
    },
    Clock(Clock),
    /// The thread ended on its own (`pthread_exit` or a return from its start routine) at
    /// this tick: frames it left open close here, not when the trace was finished.
    End {
        tick: u64,
    },
    /// A CHECK chunk: the checksum of the chunk just before it.
    Check(Check<'a>),
    /// What the hooks cost, for compensation.
    Overhead(Overhead),
    /// The thread was inside the runtime, writing its buffer, from `from` to `to`: just before
    /// the first record of its next EVENTS chunk.
    Pause {
        from: u64,
        to: u64,
    },
    /// A window of the thread's ring (HOOKCC_MODE=ring) starts: `dropped` records the thread
    /// made before it (since its previous window) are not in the file.
    Ring {
        dropped: u64,
    },
    /// A thread's calling-context tree (HOOKCC_MODE=profile), everything since the thread
    /// began: a later one of the same thread replaces it.
    Profile(Box<crate::input::cct::CallTree>),
    /// HOOKCC_MIN_DURATION: `calls` of the thread's calls, shorter than `min_ticks`, are left
    /// out of its records (its PROFILE chunk has them).
    Folded {
        min_ticks: u64,
        calls: u64,
    },
    /// The thread's context switches (a SWITCH chunk): when it was switched out.
    Switch(Switches),
    /// The thread's CPU time sampled (a SAMPLE chunk).
    Sample(Samples),
    /// The writer thread's time on and waiting for a CPU (a WRITER chunk).
    Writer(WriterStats),
    /// Functions throttled (a THROTTLE chunk).
    Throttle(Throttle),
    /// The chunk's thread's counted calls of throttled functions (a COUNTED chunk):
    /// (address as in its records, calls).
    Counted(Vec<(u64, u64)>),
    /// A module `dlclose` unloaded (an UNLOAD chunk), and the tick when it was gone: records
    /// made before that tick in its address range are its.
    Unload {
        module: Module,
        tick: u64,
    },
    /// A chunk type this reader does not know; skipped.
    Unknown,
    /// Zero bytes where a chunk header was expected: a byte range a thread reserved but
    /// never wrote (the program was killed between the reservation and the `pwrite`).
    /// [`ChunkAt::total_len`] is the number of zero bytes skipped.
    Hole,
}

/// A WRITER chunk (docs/trace-format.md, "WRITER"): what the runtime's writer thread, which
/// packs and writes the threads' full buffers, got of the CPUs, from the kernel's schedstat at
/// the end of the trace. All in ns but `slices`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriterStats {
    /// The time it ran.
    pub cpu_ns: u64,
    /// The time it was ready to run and waited for a CPU.
    pub wait_ns: u64,
    /// The times it got a CPU.
    pub slices: u64,
    /// From its start to the end of the trace.
    pub wall_ns: u64,
}

impl WriterStats {
    /// The wait for a CPU that says the writer had no core free: at least 10 ms, and at
    /// least a tenth of the time it ran (an idle core takes it at once; a busy machine's
    /// run queue makes it wait for whole time slices).
    pub fn starved(&self) -> bool {
        self.wait_ns >= 10_000_000 && self.wait_ns.saturating_mul(10) >= self.cpu_ns
    }
}

/// A THROTTLE chunk (docs/trace-format.md, "THROTTLE"): the runtime's throttle settings and
/// the functions it throttled — recorded for their first calls, then only counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Throttle {
    /// Timed calls a function had before it could be throttled.
    pub min_calls: u64,
    /// A function was throttled when its mean call was under `factor` × `pair_ticks`.
    pub factor: u64,
    /// A hook pair's cost in ticks, as the runtime measured it.
    pub pair_ticks: u64,
    pub functions: Vec<Throttled>,
}

impl Throttle {
    pub const FIXED_SIZE: usize = 32;
    pub const ENTRY_SIZE: usize = 32;
}

/// One throttled function.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Throttled {
    /// Its address, as in its records.
    pub address: u64,
    /// Its calls timed before the throttle (as the runtime's writer counted them).
    pub timed: u64,
    /// Its calls after, counted and not recorded.
    pub counted: u64,
    /// The tick it was throttled at.
    pub at: u64,
}

/// A SWITCH chunk: times the thread was switched out, from the kernel's perf records, in
/// CLOCK_MONOTONIC ns, and one instant read on that clock and the trace's counter
/// (docs/trace-format.md, "SWITCH").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Switches {
    pub anchor_ticks: u64,
    pub anchor_ns: u64,
    /// Switch records the kernel dropped since the thread's previous SWITCH chunk.
    pub lost: u64,
    /// `(out, in)`: switched out at `out`, running again at `in` (ns).
    pub pairs: Vec<(u64, u64)>,
}

impl Switches {
    /// Fixed part of the payload: anchor ticks, anchor ns, lost.
    pub const FIXED_SIZE: usize = 24;

    /// The trace's counter at `ns` (CLOCK_MONOTONIC): the anchor moved by `ns - anchor_ns`
    /// at `ticks_per_second`.
    pub fn ticks_at(&self, ns: u64, ticks_per_second: u64) -> u64 {
        anchored_ticks(self.anchor_ticks, self.anchor_ns, ns, ticks_per_second)
    }
}

/// The trace's counter at `ns` (CLOCK_MONOTONIC), from one instant read on both (a SWITCH or
/// SAMPLE chunk's anchor) and the trace's rate.
fn anchored_ticks(anchor_ticks: u64, anchor_ns: u64, ns: u64, ticks_per_second: u64) -> u64 {
    let delta = i128::from(ns) - i128::from(anchor_ns);
    let ticks = delta * i128::from(ticks_per_second) / 1_000_000_000;
    (i128::from(anchor_ticks) + ticks).clamp(0, i128::from(u64::MAX)) as u64
}

/// A SAMPLE chunk: the thread's CPU time sampled every `period_ns` (a perf task-clock event,
/// user mode), each sample's instant (CLOCK_MONOTONIC ns) and address, with the anchor of a
/// SWITCH chunk (docs/trace-format.md, "SAMPLE").
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Samples {
    pub anchor_ticks: u64,
    pub anchor_ns: u64,
    /// The thread's CPU time between two samples.
    pub period_ns: u64,
    /// Samples in the hooks (their own time, not in `points`) since the thread's previous
    /// SAMPLE chunk.
    pub in_hooks: u64,
    /// `(ns, address)`, in time order.
    pub points: Vec<(u64, u64)>,
}

impl Samples {
    /// Fixed part of the payload: anchor ticks, anchor ns, period, samples in the hooks.
    pub const FIXED_SIZE: usize = 32;

    /// The trace's counter at `ns`, as [`Switches::ticks_at`].
    pub fn ticks_at(&self, ns: u64, ticks_per_second: u64) -> u64 {
        anchored_ticks(self.anchor_ticks, self.anchor_ns, ns, ticks_per_second)
    }
}

/// A CHECK chunk and the chunk it covers.
#[derive(Clone, Debug)]
pub struct Check<'a> {
    /// The checksum it holds.
    pub sum: u64,
    /// Its thread field, which must be the covered chunk's.
    thread: u64,
    /// The bytes of the chunk just before it (header and payload) and their offset; `None` if
    /// there is none (the CHECK chunk comes first, or after a hole or another CHECK chunk).
    covered: Option<(u64, &'a [u8])>,
    endian: Endian,
}

impl Check<'_> {
    /// File offset of the chunk it covers.
    pub fn covered_offset(&self) -> Option<u64> {
        self.covered.map(|(offset, _)| offset)
    }

    /// Whether the covered chunk's checksum is the one this chunk holds, and its thread this
    /// chunk's (reads the whole covered chunk).
    pub fn matches(&self) -> bool {
        self.covered.is_some_and(|(_, bytes)| {
            let thread = Bytes {
                data: bytes,
                endian: self.endian,
            }
            .u64(8);
            thread == Some(self.thread) && checksum(bytes, self.endian) == self.sum
        })
    }
}

/// A chunk with its position and header fields.
#[derive(Clone, Debug)]
pub struct ChunkAt<'a> {
    /// File offset of the chunk header.
    pub offset: u64,
    /// The raw type number (0 for a [`Chunk::Hole`]).
    pub chunk_type: u32,
    /// Payload length from the chunk header (0 for a hole; see [`ChunkAt::total_len`]).
    pub length: u32,
    /// The thread (Linux TID) the chunk belongs to; 0 for process-wide chunks.
    pub thread: u64,
    pub chunk: Chunk<'a>,
    total_len: u64,
}

impl ChunkAt<'_> {
    /// Bytes the chunk occupies in the file, header included.
    pub fn total_len(&self) -> u64 {
        self.total_len
    }
}

/// A trace in memory (usually a memory map) whose header has been validated; iterate its
/// chunks with [`Trace::chunks`].
#[derive(Clone)]
pub struct Trace<'a> {
    data: &'a [u8],
    header: Header,
}

impl<'a> Trace<'a> {
    /// Validates the header of `data`.
    pub fn new(data: &'a [u8]) -> Result<Self, FormatError> {
        let header = Header::parse(data)?;
        Ok(Trace { data, header })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Total size of the trace in bytes.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The chunks in file order. After the first error the iterator ends.
    pub fn chunks(&self) -> Chunks<'a> {
        Chunks {
            bytes: Bytes {
                data: self.data,
                endian: self.header.endian,
            },
            pos: self.header.header_size as usize,
            mask: self.header.address_mask(),
            version: self.header.version,
            failed: false,
            uncovered: None,
        }
    }

    /// The checksum of the file header as it is now (compare with [`Clock::header_check`]).
    pub fn header_checksum(&self) -> u64 {
        checksum(
            self.data.get(..HEADER_SIZE as usize).unwrap_or(&[]),
            self.header.endian,
        )
    }
}

/// Iterator over the chunks of a trace.
pub struct Chunks<'a> {
    bytes: Bytes<'a>,
    pos: usize,
    mask: u64,
    version: u16,
    failed: bool,
    /// The last chunk read, until a CHECK chunk covers it: (offset, end).
    uncovered: Option<(usize, usize)>,
}

impl<'a> Chunks<'a> {
    fn fail(
        &mut self,
        offset: usize,
        kind: FormatErrorKind,
    ) -> Option<Result<ChunkAt<'a>, FormatError>> {
        self.failed = true;
        Some(Err(FormatError {
            offset: offset as u64,
            kind,
        }))
    }

    /// Skips a run of zero 8-byte words starting at `self.pos`; returns the hole if any.
    fn hole(&mut self) -> Option<ChunkAt<'a>> {
        let start = self.pos;
        let data = self.bytes.data;
        let mut pos = start;
        while let Some(word) = data.get(pos..pos.saturating_add(8)) {
            if word.len() < 8 || word.iter().any(|&b| b != 0) {
                break;
            }
            pos += 8;
        }
        // The type and length words of a real chunk are never both zero (type 0 is not a
        // chunk type), so zeros here can only be an unwritten reservation. The trailing
        // 0–7 bytes of a file that is not a multiple of 8 are also skipped when zero.
        if pos == start {
            let rest = data.get(start..).unwrap_or(&[]);
            if !rest.is_empty() && rest.len() < 8 && rest.iter().all(|&b| b == 0) {
                pos = data.len();
            } else {
                return None;
            }
        }
        self.pos = pos;
        self.uncovered = None;
        Some(ChunkAt {
            offset: start as u64,
            chunk_type: 0,
            length: 0,
            thread: 0,
            chunk: Chunk::Hole,
            total_len: (pos - start) as u64,
        })
    }
}

impl<'a> Iterator for Chunks<'a> {
    type Item = Result<ChunkAt<'a>, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let data = self.bytes.data;
        let at = self.pos;
        if at >= data.len() {
            return None;
        }
        if let Some(hole) = self.hole() {
            return Some(Ok(hole));
        }
        let remaining = data.len() - at;
        if remaining < CHUNK_HEADER_SIZE {
            return self.fail(
                at,
                FormatErrorKind::TruncatedChunkHeader {
                    remaining: remaining as u64,
                },
            );
        }
        let (Some(chunk_type), Some(length), Some(thread)) = (
            self.bytes.u32(at),
            self.bytes.u32(at + 4),
            self.bytes.u64(at + 8),
        ) else {
            return self.fail(
                at,
                FormatErrorKind::TruncatedChunkHeader {
                    remaining: remaining as u64,
                },
            );
        };
        let name = ChunkName(chunk_type);
        let payload_start = at + CHUNK_HEADER_SIZE;
        let payload_remaining = (remaining - CHUNK_HEADER_SIZE) as u64;
        if !length.is_multiple_of(8) {
            return self.fail(
                at,
                FormatErrorKind::BadChunkLength {
                    chunk: name,
                    length,
                    multiple: 8,
                },
            );
        }
        if u64::from(length) > payload_remaining {
            return self.fail(
                at,
                FormatErrorKind::TruncatedChunk {
                    chunk: name,
                    declared: length,
                    remaining: payload_remaining,
                },
            );
        }
        let payload_end = payload_start + length as usize;
        let payload = Bytes {
            data: &data[payload_start..payload_end],
            endian: self.bytes.endian,
        };
        let chunk = match decode_payload(
            chunk_type,
            length,
            payload,
            payload_start as u64,
            self.mask,
            self.version,
        ) {
            Ok(Chunk::Check(check)) => Chunk::Check(Check {
                thread,
                covered: self
                    .uncovered
                    .take()
                    .map(|(from, to)| (from as u64, &data[from..to])),
                ..check
            }),
            Ok(chunk) => {
                self.uncovered = Some((at, payload_end));
                chunk
            }
            Err(kind) => return self.fail(at, kind),
        };
        self.pos = payload_end;
        Some(Ok(ChunkAt {
            offset: at as u64,
            chunk_type,
            length,
            thread,
            chunk,
            total_len: (CHUNK_HEADER_SIZE + length as usize) as u64,
        }))
    }
}

fn decode_payload<'a>(
    chunk_type: u32,
    length: u32,
    payload: Bytes<'a>,
    payload_offset: u64,
    mask: u64,
    version: u16,
) -> Result<Chunk<'a>, FormatErrorKind> {
    let name = ChunkName(chunk_type);
    let need = |min: u32| {
        if length < min {
            Err(FormatErrorKind::ChunkTooShort {
                chunk: name,
                length,
                min,
            })
        } else {
            Ok(())
        }
    };
    let string = |from: usize, what: &'static str| -> Result<&'a [u8], FormatErrorKind> {
        let tail = payload.data.get(from..).unwrap_or(&[]);
        match tail.iter().position(|&b| b == 0) {
            Some(nul) => Ok(&tail[..nul]),
            None => Err(FormatErrorKind::Unterminated { chunk: name, what }),
        }
    };
    let u64_at = |at: usize| payload.u64(at).unwrap_or(0);
    // A loaded object as MODULE and UNLOAD give it: bias, start, end, then (at `path_at`) its
    // path, none if empty.
    let module_at = |path_at: usize| -> Result<Module, FormatErrorKind> {
        let path = string(path_at, "path")?;
        Ok(Module {
            bias: u64_at(0) & mask,
            start: u64_at(8) & mask,
            end: u64_at(16) & mask,
            path: (!path.is_empty()).then(|| bytes_to_path(path)),
        })
    };
    Ok(match chunk_type {
        chunk_type::EXE => {
            need(8)?;
            Chunk::Exe {
                path: bytes_to_path(string(0, "path")?),
            }
        }
        chunk_type::MODULE => {
            need(32)?;
            Chunk::Module(module_at(24)?)
        }
        chunk_type::EVENTS => {
            if !(length as usize).is_multiple_of(RECORD_SIZE) {
                return Err(FormatErrorKind::BadChunkLength {
                    chunk: name,
                    length,
                    multiple: RECORD_SIZE as u32,
                });
            }
            Chunk::Events(Events {
                bytes: payload,
                offset: payload_offset,
                mask,
                version,
                packed: None,
            })
        }
        chunk_type::PACKED => {
            need(pack::FIXED_SIZE as u32)?;
            let records = payload.u32(0).unwrap_or(0);
            let stream = payload.u32(4).unwrap_or(0);
            if u64::from(stream) > u64::from(length) - pack::FIXED_SIZE as u64 {
                return Err(FormatErrorKind::PackedStreamLength { stream, length });
            }
            let start = pack::FIXED_SIZE;
            Chunk::Events(Events {
                bytes: Bytes {
                    data: &payload.data[start..start + stream as usize],
                    endian: payload.endian,
                },
                offset: payload_offset + start as u64,
                mask,
                version,
                packed: Some(PackedHead {
                    records,
                    first_time: u64_at(8),
                }),
            })
        }
        chunk_type::LOST => {
            need(8)?;
            Chunk::Lost {
                count: u64_at(0),
                at: payload.u64(8),
            }
        }
        chunk_type::THREAD => {
            need(16)?;
            Chunk::Thread {
                sequence: u64_at(0),
                name: String::from_utf8_lossy(string(8, "name")?).into_owned(),
            }
        }
        chunk_type::CLOCK => {
            need(24)?;
            Chunk::Clock(Clock {
                ticks_per_second: u64_at(0),
                first_tick: u64_at(8),
                last_tick: u64_at(16),
                header_check: payload.u64(24),
            })
        }
        chunk_type::OVERHEAD => {
            need(24)?;
            Chunk::Overhead(Overhead {
                self_ticks: u64_at(0),
                child_ticks: u64_at(8),
                pairs: u64_at(16),
                count_ticks: payload.u64(24).unwrap_or(0),
                count_calls: payload.u64(32).unwrap_or(0),
            })
        }
        chunk_type::PAUSE => {
            need(16)?;
            Chunk::Pause {
                from: u64_at(0),
                to: u64_at(8),
            }
        }
        chunk_type::RING => {
            need(8)?;
            Chunk::Ring { dropped: u64_at(0) }
        }
        chunk_type::FOLDED => {
            need(16)?;
            Chunk::Folded {
                min_ticks: u64_at(0),
                calls: u64_at(8),
            }
        }
        chunk_type::PROFILE => {
            need(crate::input::cct::FIXED_SIZE as u32)?;
            let u32_at = |at: usize| payload.u32(at).unwrap_or(0);
            let fixed = (
                [u64_at(0), u64_at(8), u64_at(16), u64_at(24)],
                [u32_at(32), u32_at(36), u32_at(40), u32_at(44)],
            );
            let stream = &payload.data[crate::input::cct::FIXED_SIZE..];
            Chunk::Profile(Box::new(crate::input::cct::CallTree::decode(
                fixed, stream, mask,
            )?))
        }
        chunk_type::CHECK => {
            if length != 8 {
                // Exactly one word: a longer one would swallow the chunks after it.
                return Err(FormatErrorKind::CheckLength { length });
            }
            Chunk::Check(Check {
                sum: u64_at(0),
                thread: 0,
                covered: None,
                endian: payload.endian,
            })
        }
        chunk_type::END => {
            need(8)?;
            Chunk::End { tick: u64_at(0) }
        }
        chunk_type::SWITCH => {
            need(Switches::FIXED_SIZE as u32)?;
            let pairs = (Switches::FIXED_SIZE..payload.data.len().saturating_sub(15))
                .step_by(16)
                .map(|at| (u64_at(at), u64_at(at + 8)))
                .collect();
            Chunk::Switch(Switches {
                anchor_ticks: u64_at(0),
                anchor_ns: u64_at(8),
                lost: u64_at(16),
                pairs,
            })
        }
        chunk_type::SAMPLE => {
            need(Samples::FIXED_SIZE as u32)?;
            let points = (Samples::FIXED_SIZE..payload.data.len().saturating_sub(15))
                .step_by(16)
                .map(|at| (u64_at(at), u64_at(at + 8)))
                .collect();
            Chunk::Sample(Samples {
                anchor_ticks: u64_at(0),
                anchor_ns: u64_at(8),
                period_ns: u64_at(16),
                in_hooks: u64_at(24),
                points,
            })
        }
        chunk_type::THROTTLE => {
            need(Throttle::FIXED_SIZE as u32)?;
            let count = u64_at(24);
            let room = (payload.data.len() - Throttle::FIXED_SIZE) / Throttle::ENTRY_SIZE;
            if count > room as u64 {
                return Err(FormatErrorKind::BadThrottle { count, room });
            }
            let functions = (0..count as usize)
                .map(|i| {
                    let at = Throttle::FIXED_SIZE + i * Throttle::ENTRY_SIZE;
                    Throttled {
                        address: u64_at(at) & mask,
                        timed: u64_at(at + 8),
                        counted: u64_at(at + 16),
                        at: u64_at(at + 24),
                    }
                })
                .collect();
            Chunk::Throttle(Throttle {
                min_calls: u64_at(0),
                factor: u64_at(8),
                pair_ticks: u64_at(16),
                functions,
            })
        }
        chunk_type::WRITER => {
            need(32)?;
            Chunk::Writer(WriterStats {
                cpu_ns: u64_at(0),
                wait_ns: u64_at(8),
                slices: u64_at(16),
                wall_ns: u64_at(24),
            })
        }
        chunk_type::COUNTED => {
            need(8)?;
            let count = u64_at(0);
            let room = (payload.data.len() - 8) / 16;
            if count > room as u64 {
                return Err(FormatErrorKind::BadCounted { count, room });
            }
            Chunk::Counted(
                (0..count as usize)
                    .map(|i| (u64_at(8 + 16 * i) & mask, u64_at(16 + 16 * i)))
                    .collect(),
            )
        }
        chunk_type::UNLOAD => {
            need(40)?;
            Chunk::Unload {
                module: module_at(32)?,
                tick: u64_at(24),
            }
        }
        _ => Chunk::Unknown,
    })
}

/// What the checksums of a trace say (docs/trace-format.md, "Checksums"): fed every chunk
/// in order by [`Integrity::observe`], then [`Integrity::finish`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Integrity {
    /// The header has [`FLAG_CHECKED`]: every chunk must have its CHECK chunk.
    pub flagged: bool,
    header_sum: u64,
    /// The last chunk, until its CHECK chunk: (offset, type, thread).
    pending: Option<(u64, u32, u64)>,
    /// Chunks whose CHECK chunk matches.
    pub verified: u64,
    /// Chunks whose CHECK chunk does not match, and the first of them.
    pub mismatched: u64,
    pub first_mismatch: Option<BadChunk>,
    /// Chunks without a CHECK chunk in a file whose header has [`FLAG_CHECKED`].
    pub unchecked: u64,
    pub first_unchecked: Option<BadChunk>,
    /// CHECK chunks that follow no chunk (after a hole or another CHECK chunk).
    pub stray_checks: u64,
    /// The header's checksum in the CLOCK chunk: `Some(true)` if it matches.
    pub header_matches: Option<bool>,
    /// Offset of the CLOCK chunk that holds it.
    pub header_check_at: u64,
}

/// A chunk that failed a check: where it is, its type and thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadChunk {
    pub offset: u64,
    pub chunk_type: u32,
    pub thread: u64,
}

impl fmt::Display for BadChunk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the {} chunk at byte {}",
            ChunkName(self.chunk_type),
            self.offset
        )?;
        if self.thread != 0 {
            write!(f, " (thread {})", self.thread)?;
        }
        Ok(())
    }
}

impl Integrity {
    pub fn new(trace: &Trace<'_>) -> Self {
        Integrity {
            flagged: trace.header().flags & FLAG_CHECKED != 0,
            header_sum: trace.header_checksum(),
            ..Integrity::default()
        }
    }

    /// Takes the next chunk of the trace (checking a CHECK chunk reads the chunk it covers).
    pub fn observe(&mut self, chunk: &ChunkAt<'_>) {
        match &chunk.chunk {
            Chunk::Check(check) => {
                match (self.pending.take(), check.covered_offset()) {
                    (Some((offset, chunk_type, thread)), Some(_)) => {
                        if check.matches() {
                            self.verified += 1;
                        } else {
                            self.mismatched += 1;
                            self.first_mismatch.get_or_insert(BadChunk {
                                offset,
                                chunk_type,
                                thread,
                            });
                        }
                    }
                    _ => self.stray_checks += 1,
                }
                return;
            }
            Chunk::Clock(clock) => {
                if let Some(sum) = clock.header_check {
                    self.header_matches = Some(sum == self.header_sum);
                    self.header_check_at = chunk.offset;
                }
            }
            _ => {}
        }
        self.close_pending();
        if !matches!(chunk.chunk, Chunk::Hole) {
            self.pending = Some((chunk.offset, chunk.chunk_type, chunk.thread));
        }
    }

    /// After the last chunk.
    pub fn finish(&mut self) {
        self.close_pending();
    }

    fn close_pending(&mut self) {
        if let Some((offset, chunk_type, thread)) = self.pending.take() {
            if self.flagged {
                self.unchecked += 1;
                self.first_unchecked.get_or_insert(BadChunk {
                    offset,
                    chunk_type,
                    thread,
                });
            }
        }
    }

    /// Nothing failed a check.
    pub fn is_clean(&self) -> bool {
        self.mismatched == 0
            && self.unchecked == 0
            && self.stray_checks == 0
            && self.header_matches != Some(false)
    }

    /// One line per kind of failure, for the user.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if let Some(first) = self.first_mismatch {
            warnings.push(format!(
                "{} of the trace's chunks do not match their checksums, the first is {first}: the \
                 file is corrupt there, and what the report shows of those chunks (records, \
                 thread, module addresses) may be wrong",
                self.mismatched
            ));
        }
        if let Some(first) = self.first_unchecked {
            warnings.push(format!(
                "{} of the trace's chunks have no CHECK chunk after them, though the header \
                 says every chunk has one, the first is {first}: the file is corrupt there",
                self.unchecked
            ));
        }
        if self.stray_checks > 0 {
            warnings.push(format!(
                "{} CHECK chunks follow no chunk: the file is corrupt before them",
                self.stray_checks
            ));
        }
        if self.header_matches == Some(false) {
            warnings.push(format!(
                "the header (bytes 0-63) does not match its checksum in the CLOCK chunk at byte \
                 {}: its fields (complete flag, clock rate, records, lost) are corrupt, or the \
                 program was killed while it finished the file",
                self.header_check_at
            ));
        }
        warnings
    }
}

#[cfg(unix)]
fn bytes_to_path(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
fn bytes_to_path(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

#[cfg(unix)]
fn path_to_bytes(path: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    path.as_os_str().as_bytes().to_vec()
}

#[cfg(not(unix))]
fn path_to_bytes(path: &Path) -> Vec<u8> {
    path.to_string_lossy().as_bytes().to_vec()
}

/// Writes the `.hktrace` format: the Rust-side definition used by tests to build synthetic
/// traces and by the round-trip test against the reader.
///
/// The header is written as given; to produce a *complete* trace, set `flags`,
/// `ticks_per_second`, `records` and `lost` in the header before creating the writer.
pub struct Writer<W: Write> {
    out: W,
    endian: Endian,
    /// The header's version: EVENTS records are encoded as it says.
    version: u16,
    written: u64,
    /// The header says [`FLAG_CHECKED`]: every chunk gets its CHECK chunk, and CLOCK the
    /// checksum of the header as given to [`Writer::new`].
    header_check: Option<u64>,
}

impl<W: Write> Writer<W> {
    /// Writes `header` and returns a writer for the chunks that follow it.
    pub fn new(mut out: W, header: &Header) -> io::Result<Self> {
        let bytes = header.encode();
        out.write_all(&bytes)?;
        Ok(Writer {
            out,
            endian: header.endian,
            version: header.version,
            written: bytes.len() as u64,
            header_check: (header.flags & FLAG_CHECKED != 0)
                .then(|| checksum(&bytes, header.endian)),
        })
    }

    /// Bytes written so far (the offset of the next chunk).
    pub fn position(&self) -> u64 {
        self.written
    }

    /// Writes a chunk with the payload exactly as given (no padding, no checks), so that
    /// tests can produce malformed chunks too; then, if the header says [`FLAG_CHECKED`],
    /// its CHECK chunk.
    pub fn raw_chunk(&mut self, chunk_type: u32, thread: u64, payload: &[u8]) -> io::Result<()> {
        let head = self.chunk_header(chunk_type, thread, payload.len())?;
        self.out.write_all(&head)?;
        self.out.write_all(payload)?;
        self.written += (CHUNK_HEADER_SIZE + payload.len()) as u64;
        if self.header_check.is_some() {
            let e = self.endian;
            let sum = checksum(&head, e).wrapping_add(checksum(payload, e));
            let check = self.chunk_header(chunk_type::CHECK, thread, 8)?;
            self.out.write_all(&check)?;
            self.out.write_all(&e.u64_bytes(sum))?;
            self.written += (CHUNK_HEADER_SIZE + 8) as u64;
        }
        Ok(())
    }

    fn chunk_header(
        &self,
        chunk_type: u32,
        thread: u64,
        length: usize,
    ) -> io::Result<[u8; CHUNK_HEADER_SIZE]> {
        let length = u32::try_from(length)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "chunk payload over 4 GiB"))?;
        let e = self.endian;
        let mut head = [0u8; CHUNK_HEADER_SIZE];
        head[0..4].copy_from_slice(&e.u32_bytes(chunk_type));
        head[4..8].copy_from_slice(&e.u32_bytes(length));
        head[8..16].copy_from_slice(&e.u64_bytes(thread));
        Ok(head)
    }

    fn padded_string(payload: &mut Vec<u8>, s: &[u8]) {
        payload.extend_from_slice(s);
        payload.push(0);
        while !payload.len().is_multiple_of(8) {
            payload.push(0);
        }
    }

    /// EXE chunk: the executable's path.
    pub fn exe(&mut self, path: &Path) -> io::Result<()> {
        let mut payload = Vec::new();
        Self::padded_string(&mut payload, &path_to_bytes(path));
        self.raw_chunk(chunk_type::EXE, 0, &payload)
    }

    /// MODULE chunk.
    pub fn module(&mut self, module: &Module) -> io::Result<()> {
        let e = self.endian;
        let mut payload = Vec::new();
        for v in [module.bias, module.start, module.end] {
            payload.extend_from_slice(&e.u64_bytes(v));
        }
        let path = module
            .path
            .as_deref()
            .map(path_to_bytes)
            .unwrap_or_default();
        Self::padded_string(&mut payload, &path);
        self.raw_chunk(chunk_type::MODULE, 0, &payload)
    }

    /// EVENTS chunk of `thread`, in the header's version: in version 2 an address must have
    /// bit 1 clear (the exit mark), in version 1 a timestamp must fit in 62 bits.
    pub fn events(&mut self, thread: u64, records: &[Record]) -> io::Result<()> {
        let e = self.endian;
        let invalid = |message: String| io::Error::new(io::ErrorKind::InvalidInput, message);
        let mut payload = Vec::with_capacity(records.len() * RECORD_SIZE);
        for r in records {
            let exit = r.kind == RecordKind::Exit;
            let (first, second) = if self.version >= 2 {
                if r.address & EXIT_BIT != 0 {
                    return Err(invalid(format!(
                        "address {:#x} has bit 1 set, which format version 2 uses for the \
                         record's kind (instrumented functions are 4-byte aligned)",
                        r.address
                    )));
                }
                (r.time, r.address | if exit { EXIT_BIT } else { 0 })
            } else {
                if r.time > V1_TIME_MASK {
                    return Err(invalid(format!(
                        "timestamp {} does not fit in 62 bits",
                        r.time
                    )));
                }
                (r.time | (u64::from(exit) << V1_KIND_SHIFT), r.address)
            };
            payload.extend_from_slice(&e.u64_bytes(first));
            payload.extend_from_slice(&e.u64_bytes(second));
        }
        self.raw_chunk(chunk_type::EVENTS, thread, &payload)
    }

    /// PACKED chunk of `thread` (version 4): `records` encoded as `runtime/src/trace_pack.h`'s
    /// `hkt_pack` encodes them, step for step (the table of addresses in order of first
    /// appearance, the predicted stack, the clock escape), so that the reader decodes them
    /// back exactly. An address must have bit 1 clear, as in [`Writer::events`].
    pub fn packed(&mut self, thread: u64, records: &[Record]) -> io::Result<()> {
        use std::collections::HashMap;
        fn put(out: &mut Vec<u8>, mut v: u64) {
            while v >= 0x80 {
                out.push(v as u8 | 0x80);
                v >>= 7;
            }
            out.push(v as u8);
        }
        let zigzag = |d: u64| (d << 1) ^ ((d as i64 >> 63) as u64);
        let mut table: HashMap<u64, u64> = HashMap::new();
        let mut ring = [0u64; pack::STACK];
        let mask = pack::STACK as u64 - 1;
        let search = |ring: &[u64; pack::STACK], depth: u64, address: u64| -> u64 {
            let lowest = depth.saturating_sub(pack::STACK as u64);
            (lowest + 1..=depth)
                .rev()
                .find(|d| ring[((d - 1) & mask) as usize] == address)
                .map_or(depth, |d| d - 1)
        };
        let mut stream = Vec::with_capacity(records.len() * 3);
        let first = records.first().map_or(0, |r| r.time);
        let (mut now, mut last_new, mut depth, mut after_escape) = (first, 0u64, 0u64, false);
        let mut new_address = |stream: &mut Vec<u8>, table: &mut HashMap<u64, u64>, a: u64| {
            put(stream, zigzag(a.wrapping_sub(last_new)));
            last_new = a;
            if table.len() < pack::TABLE_MAX {
                let index = table.len() as u64;
                table.insert(a, index);
            }
        };
        for r in records {
            if r.address & EXIT_BIT != 0 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("address {:#x} has bit 1 set", r.address),
                ));
            }
            let mut delta = r.time.wrapping_sub(now);
            now = r.time;
            if delta >= 1 << 58 {
                put(&mut stream, pack::OTHER);
                put(&mut stream, pack::OTHER_CLOCK);
                put(&mut stream, r.time);
                delta = 0;
            }
            let address = r.address;
            if r.kind == RecordKind::Exit {
                if depth > 0 && ring[((depth - 1) & mask) as usize] == address {
                    put(&mut stream, delta << 2 | pack::EXIT_TOP);
                    depth -= 1;
                } else {
                    put(&mut stream, delta << 2 | pack::OTHER);
                    match table.get(&address) {
                        Some(&i) => put(&mut stream, pack::OTHER_EXIT_INDEX + i),
                        None => {
                            put(&mut stream, pack::OTHER_EXIT_NEW);
                            new_address(&mut stream, &mut table, address);
                        }
                    }
                    depth = search(&ring, depth, address);
                }
                after_escape = address == 0;
            } else {
                match table.get(&address) {
                    Some(&i) => {
                        put(&mut stream, delta << 2 | pack::ENTRY_INDEX);
                        put(&mut stream, i);
                    }
                    None => {
                        put(&mut stream, delta << 2 | pack::ENTRY_NEW);
                        new_address(&mut stream, &mut table, address);
                    }
                }
                let found = if after_escape {
                    search(&ring, depth, address)
                } else {
                    depth
                };
                if found < depth {
                    depth = found + 1; // a longjmp came back to this frame
                } else {
                    ring[(depth & mask) as usize] = address;
                    depth += 1;
                }
                after_escape = false;
            }
        }
        let e = self.endian;
        let stream_len = u32::try_from(stream.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "PACKED stream over 4 GiB"))?;
        let mut payload = Vec::with_capacity(pack::FIXED_SIZE + stream.len() + 8);
        payload.extend_from_slice(&e.u32_bytes(records.len() as u32));
        payload.extend_from_slice(&e.u32_bytes(stream_len));
        payload.extend_from_slice(&e.u64_bytes(first));
        payload.extend_from_slice(&stream);
        while !payload.len().is_multiple_of(8) {
            payload.push(0);
        }
        self.raw_chunk(chunk_type::PACKED, thread, &payload)
    }

    /// LOST chunk of `thread`.
    pub fn lost(&mut self, thread: u64, count: u64) -> io::Result<()> {
        let payload = self.endian.u64_bytes(count);
        self.raw_chunk(chunk_type::LOST, thread, &payload)
    }

    /// LOST chunk of `thread` placed where `count` records were dropped, the first at `at`
    /// (a stream's loss, `hookprof record`).
    pub fn lost_at(&mut self, thread: u64, count: u64, at: u64) -> io::Result<()> {
        let mut payload = self.endian.u64_bytes(count).to_vec();
        payload.extend_from_slice(&self.endian.u64_bytes(at));
        self.raw_chunk(chunk_type::LOST, thread, &payload)
    }

    /// THREAD chunk: the thread's sequence number (1 = first) and name.
    pub fn thread(&mut self, thread: u64, sequence: u64, name: &str) -> io::Result<()> {
        let mut payload = self.endian.u64_bytes(sequence).to_vec();
        Self::padded_string(&mut payload, name.as_bytes());
        self.raw_chunk(chunk_type::THREAD, thread, &payload)
    }

    /// END chunk of `thread`: it ended at `tick`.
    pub fn end(&mut self, thread: u64, tick: u64) -> io::Result<()> {
        let payload = self.endian.u64_bytes(tick);
        self.raw_chunk(chunk_type::END, thread, &payload)
    }

    /// CLOCK chunk.
    pub fn clock(&mut self, clock: &Clock) -> io::Result<()> {
        let e = self.endian;
        let mut payload = Vec::with_capacity(32);
        for v in [clock.ticks_per_second, clock.first_tick, clock.last_tick] {
            payload.extend_from_slice(&e.u64_bytes(v));
        }
        if let Some(sum) = self.header_check {
            payload.extend_from_slice(&e.u64_bytes(sum));
        }
        self.raw_chunk(chunk_type::CLOCK, 0, &payload)
    }

    /// OVERHEAD chunk.
    pub fn overhead(&mut self, overhead: &Overhead) -> io::Result<()> {
        let e = self.endian;
        let mut payload = Vec::with_capacity(40);
        for v in [overhead.self_ticks, overhead.child_ticks, overhead.pairs] {
            payload.extend_from_slice(&e.u64_bytes(v));
        }
        if overhead.count_calls != 0 {
            for v in [overhead.count_ticks, overhead.count_calls] {
                payload.extend_from_slice(&e.u64_bytes(v));
            }
        }
        self.raw_chunk(chunk_type::OVERHEAD, 0, &payload)
    }

    /// PAUSE chunk of `thread`.
    pub fn pause(&mut self, thread: u64, from: u64, to: u64) -> io::Result<()> {
        let e = self.endian;
        let mut payload = e.u64_bytes(from).to_vec();
        payload.extend_from_slice(&e.u64_bytes(to));
        self.raw_chunk(chunk_type::PAUSE, thread, &payload)
    }

    /// SWITCH chunk of `thread`.
    pub fn switches(&mut self, thread: u64, switches: &Switches) -> io::Result<()> {
        let e = self.endian;
        let mut payload = Vec::new();
        for v in [switches.anchor_ticks, switches.anchor_ns, switches.lost] {
            payload.extend_from_slice(&e.u64_bytes(v));
        }
        for &(out, back) in &switches.pairs {
            payload.extend_from_slice(&e.u64_bytes(out));
            payload.extend_from_slice(&e.u64_bytes(back));
        }
        self.raw_chunk(chunk_type::SWITCH, thread, &payload)
    }

    /// SAMPLE chunk of `thread`.
    pub fn samples(&mut self, thread: u64, samples: &Samples) -> io::Result<()> {
        let e = self.endian;
        let mut payload = Vec::new();
        let fixed = [
            samples.anchor_ticks,
            samples.anchor_ns,
            samples.period_ns,
            samples.in_hooks,
        ];
        for v in fixed {
            payload.extend_from_slice(&e.u64_bytes(v));
        }
        for &(ns, address) in &samples.points {
            payload.extend_from_slice(&e.u64_bytes(ns));
            payload.extend_from_slice(&e.u64_bytes(address));
        }
        self.raw_chunk(chunk_type::SAMPLE, thread, &payload)
    }

    /// Zero bytes, as left by a reservation that was never written.
    pub fn hole(&mut self, bytes: usize) -> io::Result<()> {
        self.out.write_all(&vec![0u8; bytes])?;
        self.written += bytes as u64;
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(endian: Endian, version: u16) -> Vec<u8> {
        sample_with_flags(endian, version, FLAG_COMPLETE)
    }

    fn sample_with_flags(endian: Endian, version: u16, flags: u64) -> Vec<u8> {
        let mut header = Header::new(endian);
        header.version = version;
        header.ticks_per_second = 1_000_000_000;
        header.flags = flags;
        header.pid = 42;
        let mut w = Writer::new(Vec::new(), &header).unwrap();
        w.exe(Path::new("/bin/prog")).unwrap();
        w.module(&Module {
            bias: 0x1000,
            start: 0x2000,
            end: 0x3000,
            path: None,
        })
        .unwrap();
        w.events(7, &[Record::entry(10, 0x2100), Record::exit(20, 0x2100)])
            .unwrap();
        w.lost(7, 3).unwrap();
        w.thread(7, 1, "main").unwrap();
        w.raw_chunk(99, 0, &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        w.clock(&Clock {
            ticks_per_second: 5,
            first_tick: 1,
            last_tick: 2,
            header_check: None,
        })
        .unwrap();
        w.into_inner()
    }

    /// Writer::packed against the reader: a thread's records of every shape (calls, exits
    /// below the top, unmatched exits, a resync, recursion deeper than the predicted stack,
    /// more functions than the table holds, clock jumps) come back exactly.
    #[test]
    fn packed_writer_round_trips_through_the_reader() {
        let mut records = Vec::new();
        let mut time = 1000u64;
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            seed >> 33
        };
        let mut stack: Vec<u64> = Vec::new();
        for i in 0..60_000u64 {
            time += next() % 100;
            if i % 9973 == 0 {
                time = time.wrapping_add(1 << 60); // a clock jump
            }
            let r = next() % 10;
            let (kind, address) = if r < 5 || stack.is_empty() {
                let a = 0x1000 + (next() % 5000) * 4 + 1; // Thumb, 5000 functions
                stack.push(a);
                (RecordKind::Entry, a)
            } else if r < 9 {
                (RecordKind::Exit, stack.pop().unwrap())
            } else if r == 9 && stack.len() > 3 {
                let a = stack[stack.len() - 3]; // an exit below the top
                stack.truncate(stack.len() - 3);
                (RecordKind::Exit, a)
            } else {
                (RecordKind::Exit, 0x8000_0001) // matches nothing
            };
            records.push(Record {
                time,
                kind,
                address,
            });
            if i == 30_000 {
                // A resync pair: the escape, then its target.
                records.push(Record {
                    time,
                    kind: RecordKind::Exit,
                    address: 0,
                });
                records.push(Record {
                    time,
                    kind: RecordKind::Entry,
                    address: stack.first().copied().unwrap_or(0x1001),
                });
            }
        }
        for i in 0..600u64 {
            records.push(Record {
                time: time + i,
                kind: RecordKind::Entry,
                address: 0x40_0001,
            });
        }
        for endian in [Endian::Little, Endian::Big] {
            let mut header = Header::new(endian);
            header.pointer_size = 4;
            let mut out = Vec::new();
            Writer::new(&mut out, &header)
                .unwrap()
                .packed(5, &records)
                .unwrap();
            let trace = Trace::new(&out).unwrap();
            let mut back = Vec::new();
            for chunk in trace.chunks() {
                let chunk = chunk.unwrap();
                assert_eq!(chunk.chunk_type, chunk_type::PACKED);
                if let Chunk::Events(events) = chunk.chunk {
                    back.extend(events.iter().map(|r| r.unwrap()));
                }
            }
            assert_eq!(back.len(), records.len());
            for (i, (a, b)) in back.iter().zip(&records).enumerate() {
                assert_eq!(a, b, "record {i}");
            }
            assert!(out.len() < records.len() * 6, "{} bytes", out.len());
        }
    }

    #[test]
    fn round_trip_both_byte_orders_and_versions() {
        for (endian, version) in [
            (Endian::Little, 1),
            (Endian::Big, 1),
            (Endian::Little, 2),
            (Endian::Big, 2),
        ] {
            let bytes = sample(endian, version);
            let trace = Trace::new(&bytes).unwrap();
            assert_eq!(trace.header().endian, endian);
            assert_eq!(trace.header().pid, 42);
            assert!(trace.header().is_complete());
            let chunks: Vec<_> = trace.chunks().collect::<Result<_, _>>().unwrap();
            assert_eq!(chunks.len(), 7);
            assert!(
                matches!(&chunks[0].chunk, Chunk::Exe { path } if path == Path::new("/bin/prog"))
            );
            assert!(
                matches!(&chunks[1].chunk, Chunk::Module(m) if m.bias == 0x1000 && m.path.is_none())
            );
            let Chunk::Events(ev) = &chunks[2].chunk else {
                panic!("expected EVENTS")
            };
            assert_eq!(chunks[2].thread, 7);
            let recs: Vec<_> = ev.iter().collect::<Result<_, _>>().unwrap();
            assert_eq!(
                recs,
                vec![Record::entry(10, 0x2100), Record::exit(20, 0x2100)]
            );
            assert!(matches!(
                chunks[3].chunk,
                Chunk::Lost { count: 3, at: None }
            ));
            assert!(
                matches!(&chunks[4].chunk, Chunk::Thread { sequence: 1, name } if name == "main")
            );
            assert!(matches!(chunks[5].chunk, Chunk::Unknown));
            assert_eq!(chunks[5].chunk_type, 99);
            assert!(matches!(chunks[6].chunk, Chunk::Clock(c) if c.ticks_per_second == 5));
        }
    }

    /// Every chunk of `bytes` through [`Integrity`].
    fn integrity(bytes: &[u8]) -> Result<Integrity, FormatError> {
        let trace = Trace::new(bytes)?;
        let mut integrity = Integrity::new(&trace);
        for chunk in trace.chunks() {
            integrity.observe(&chunk?);
        }
        integrity.finish();
        Ok(integrity)
    }

    #[test]
    fn checksums_of_every_chunk_and_the_header_match_in_both_byte_orders() {
        for endian in [Endian::Little, Endian::Big] {
            let bytes = sample_with_flags(endian, VERSION, FLAG_COMPLETE | FLAG_CHECKED);
            let i = integrity(&bytes).unwrap();
            assert!(i.is_clean(), "{i:?}");
            assert_eq!((i.verified, i.header_matches), (7, Some(true)));
            // The same chunks as without checksums, each followed by its CHECK chunk.
            let trace = Trace::new(&bytes).unwrap();
            let chunks: Vec<_> = trace.chunks().collect::<Result<_, _>>().unwrap();
            assert_eq!(chunks.len(), 14);
            for pair in chunks.chunks(2) {
                let Chunk::Check(check) = &pair[1].chunk else {
                    panic!("chunk at {} is not a CHECK chunk", pair[1].offset)
                };
                assert_eq!(check.covered_offset(), Some(pair[0].offset));
                assert!(check.matches());
            }
            // A file without the flag has nothing to check, and nothing fails.
            let plain = integrity(&sample(endian, VERSION)).unwrap();
            assert!(plain.is_clean() && !plain.flagged && plain.verified == 0);
        }
    }

    /// Issue 15, item 9: bit flips in a trace's metadata went unnoticed. Now every single-bit
    /// flip anywhere in the file is either a format error or a failed check.
    #[test]
    fn every_single_bit_flip_is_an_error_or_a_failed_check() {
        let bytes = sample_with_flags(Endian::Little, VERSION, FLAG_COMPLETE | FLAG_CHECKED);
        let mut unnoticed = Vec::new();
        for bit in 0..bytes.len() * 8 {
            let mut flipped = bytes.clone();
            flipped[bit / 8] ^= 1 << (bit % 8);
            if matches!(integrity(&flipped), Ok(i) if i.is_clean()) {
                unnoticed.push(bit);
            }
        }
        assert!(
            unnoticed.is_empty(),
            "flipped bits not noticed: {unnoticed:?}"
        );
    }

    #[test]
    fn a_failed_check_names_the_chunk_and_its_offset() {
        let mut bytes = sample_with_flags(Endian::Little, VERSION, FLAG_COMPLETE | FLAG_CHECKED);
        let module_at = {
            let trace = Trace::new(&bytes).unwrap();
            let module = trace.chunks().nth(2).unwrap().unwrap();
            assert!(matches!(module.chunk, Chunk::Module(_)));
            module.offset
        };
        let at = module_at as usize + CHUNK_HEADER_SIZE; // its bias
        bytes[at + 2] ^= 0x10;
        bytes[HEADER_SIZE as usize - 8] ^= 1; // the header's lost count
        let i = integrity(&bytes).unwrap();
        let warnings = i.warnings().join("\n");
        assert!(
            warnings.contains(&format!(
                "1 of the trace's chunks do not match their checksums, the first is the MODULE \
                 chunk at byte {}:",
                module_at
            )),
            "{warnings}"
        );
        assert!(
            warnings.contains("the header (bytes 0-63) does not match its checksum"),
            "{warnings}"
        );
    }

    #[test]
    fn events_length_must_be_a_multiple_of_16() {
        let mut w = Writer::new(Vec::new(), &Header::new(Endian::Little)).unwrap();
        w.raw_chunk(chunk_type::EVENTS, 1, &[0u8; 24]).unwrap();
        let bytes = w.into_inner();
        let trace = Trace::new(&bytes).unwrap();
        let err = trace.chunks().next().unwrap().unwrap_err();
        assert_eq!(err.offset, 64);
        assert_eq!(
            err.to_string(),
            "byte 64: EVENTS chunk length 24 is not a multiple of 16"
        );
    }

    #[test]
    fn truncated_chunk_names_offset_and_sizes() {
        let mut w = Writer::new(Vec::new(), &Header::new(Endian::Little)).unwrap();
        w.events(1, &[Record::entry(1, 4), Record::exit(3, 4)])
            .unwrap();
        let mut bytes = w.into_inner();
        bytes.truncate(bytes.len() - 8);
        let trace = Trace::new(&bytes).unwrap();
        let err = trace.chunks().next().unwrap().unwrap_err();
        assert_eq!(
            err.to_string(),
            "byte 64: truncated: EVENTS chunk declares 32 payload bytes but only 24 remain"
        );
    }

    #[test]
    fn version_1_reserved_kind_is_rejected_at_its_record() {
        let mut header = Header::new(Endian::Big);
        header.version = 1;
        let mut w = Writer::new(Vec::new(), &header).unwrap();
        let mut payload = Vec::new();
        payload.extend_from_slice(&0u64.to_be_bytes());
        payload.extend_from_slice(&5u64.to_be_bytes());
        payload.extend_from_slice(&(2u64 << 62 | 9).to_be_bytes());
        payload.extend_from_slice(&5u64.to_be_bytes());
        w.raw_chunk(chunk_type::EVENTS, 1, &payload).unwrap();
        let bytes = w.into_inner();
        let trace = Trace::new(&bytes).unwrap();
        let chunk = trace.chunks().next().unwrap().unwrap();
        let Chunk::Events(ev) = chunk.chunk else {
            panic!()
        };
        let results: Vec<_> = ev.iter().collect();
        assert_eq!(results.len(), 2);
        assert!(results[0].is_ok());
        let err = results[1].clone().unwrap_err();
        assert_eq!(err.offset, 64 + 16 + 16);
        assert_eq!(err.kind, FormatErrorKind::ReservedKind { kind: 2 });
    }

    #[test]
    fn header_errors_point_at_the_field() {
        let good = Header::new(Endian::Little).encode();
        let mut bad = good.clone();
        bad[0] = b'X';
        assert_eq!(Trace::new(&bad).err().unwrap().offset, 0);
        let mut bad = good.clone();
        bad[8] = 3;
        assert_eq!(Trace::new(&bad).err().unwrap().offset, 8);
        let mut bad = good.clone();
        bad[9] = 2;
        assert_eq!(Trace::new(&bad).err().unwrap().offset, 9);
        let mut bad = good.clone();
        bad[10] = 6;
        let err = Trace::new(&bad).err().unwrap();
        assert_eq!(err.offset, 10);
        assert!(err.to_string().contains("version is 6"), "{err}");
        bad[10] = 0;
        assert!(Trace::new(&bad).is_err());
        let mut bad = good.clone();
        bad[12] = 72;
        assert_eq!(Trace::new(&bad).err().unwrap().offset, 12);
        assert!(Trace::new(&good[..63]).is_err());
    }

    /// A PACKED payload from hand-written stream items (each a list of varints).
    fn packed_payload(records: u32, first_time: u64, items: &[u64]) -> Vec<u8> {
        let mut stream = Vec::new();
        for &item in items {
            let mut v = item;
            while v >= 0x80 {
                stream.push((v as u8) | 0x80);
                v >>= 7;
            }
            stream.push(v as u8);
        }
        let mut payload = Vec::new();
        payload.extend_from_slice(&records.to_le_bytes());
        payload.extend_from_slice(&(stream.len() as u32).to_le_bytes());
        payload.extend_from_slice(&first_time.to_le_bytes());
        payload.extend_from_slice(&stream);
        while payload.len() % 8 != 0 {
            payload.push(0);
        }
        payload
    }

    fn packed_records(payload: &[u8]) -> Vec<Result<Record, FormatError>> {
        let mut w = Writer::new(Vec::new(), &Header::new(Endian::Little)).unwrap();
        w.raw_chunk(chunk_type::PACKED, 7, payload).unwrap();
        let bytes = w.into_inner();
        let trace = Trace::new(&bytes).unwrap();
        let chunk = trace.chunks().next().unwrap().unwrap();
        let Chunk::Events(events) = chunk.chunk else {
            panic!("expected records")
        };
        events.iter().collect()
    }

    fn zigzag(d: i64) -> u64 {
        ((d << 1) ^ (d >> 63)) as u64
    }

    #[test]
    fn packed_stream_decodes_every_kind_of_item() {
        let (f, g) = (0x1000u64, 0x1040u64);
        let items = [
            (5 << 2) | pack::ENTRY_NEW,
            zigzag(f as i64), // enter f at 105
            (3 << 2) | pack::ENTRY_NEW,
            zigzag((g - f) as i64),    // enter g at 108
            (2 << 2) | pack::EXIT_TOP, // exit g at 110
            (1 << 2) | pack::ENTRY_INDEX,
            1, // enter g at 111
            pack::OTHER,
            pack::OTHER_CLOCK,
            5000, // the clock jumps to 5000
            pack::OTHER,
            pack::OTHER_EXIT_INDEX, // exit f at 5000 (g unwound)
            (4 << 2) | pack::OTHER,
            pack::OTHER_EXIT_NEW,
            zigzag(-(g as i64)), // escape (exit 0)
            (0 << 2) | pack::ENTRY_INDEX,
            0,                         // resync target f: pushed
            (1 << 2) | pack::EXIT_TOP, // exit f at 5005
        ];
        let records: Vec<Record> = packed_records(&packed_payload(8, 100, &items))
            .into_iter()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            records,
            vec![
                Record::entry(105, f),
                Record::entry(108, g),
                Record::exit(110, g),
                Record::entry(111, g),
                Record::exit(5000, f),
                Record::exit(5004, 0),
                Record::entry(5004, f),
                Record::exit(5005, f),
            ]
        );
    }

    #[test]
    fn damaged_packed_streams_are_errors_at_their_byte() {
        // Stream starts at byte 64 + 16 (chunk header) + 16 (fixed part) = 96.
        let index_past = packed_payload(1, 0, &[pack::ENTRY_INDEX, 3]);
        let err = packed_records(&index_past).pop().unwrap().unwrap_err();
        assert_eq!(err.offset, 98, "{err}");
        assert!(
            err.to_string().contains("PACKED record 0: a table index"),
            "{err}"
        );
        let short = packed_payload(2, 0, &[pack::ENTRY_NEW, 8]);
        let err = packed_records(&short).pop().unwrap().unwrap_err();
        assert!(
            err.to_string()
                .contains("record 1: the stream ends inside it"),
            "{err}"
        );
        let exit_none = packed_payload(1, 0, &[pack::EXIT_TOP]);
        assert!(packed_records(&exit_none).pop().unwrap().is_err());
        let trailing = packed_payload(1, 0, &[pack::ENTRY_NEW, 8, 0]);
        let err = packed_records(&trailing).pop().unwrap().unwrap_err();
        assert!(
            err.to_string()
                .contains("bytes after the chunk's last record"),
            "{err}"
        );
        let mut long = packed_payload(0, 0, &[]);
        long[4] = 200; // a stream longer than the payload
        let mut w = Writer::new(Vec::new(), &Header::new(Endian::Little)).unwrap();
        w.raw_chunk(chunk_type::PACKED, 7, &long).unwrap();
        let bytes = w.into_inner();
        let err = Trace::new(&bytes)
            .unwrap()
            .chunks()
            .next()
            .unwrap()
            .unwrap_err();
        assert_eq!(err.offset, 64);
        assert!(err.to_string().contains("does not fit"), "{err}");
    }

    #[test]
    fn zero_holes_are_skipped() {
        let mut w = Writer::new(Vec::new(), &Header::new(Endian::Little)).unwrap();
        w.hole(24).unwrap();
        w.lost(1, 2).unwrap();
        let bytes = w.into_inner();
        let trace = Trace::new(&bytes).unwrap();
        let chunks: Vec<_> = trace.chunks().collect::<Result<_, _>>().unwrap();
        assert_eq!(chunks.len(), 2);
        assert!(matches!(chunks[0].chunk, Chunk::Hole));
        assert_eq!(chunks[0].total_len(), 24);
        assert!(matches!(
            chunks[1].chunk,
            Chunk::Lost { count: 2, at: None }
        ));
    }

    #[test]
    fn pointer_size_4_masks_addresses() {
        let mut header = Header::new(Endian::Little);
        header.pointer_size = 4;
        let mut w = Writer::new(Vec::new(), &header).unwrap();
        w.events(1, &[Record::entry(1, 0xffff_ffff_8000_1000)])
            .unwrap();
        let bytes = w.into_inner();
        let trace = Trace::new(&bytes).unwrap();
        let Chunk::Events(ev) = trace.chunks().next().unwrap().unwrap().chunk else {
            panic!()
        };
        assert_eq!(ev.iter().next().unwrap().unwrap().address, 0x8000_1000);
    }

    /// Version 2: the kind is bit 1 of the address word, the timestamp all 64 bits; the bytes
    /// are exactly what the C runtime stores.
    #[test]
    fn version_2_record_layout() {
        let mut w = Writer::new(Vec::new(), &Header::new(Endian::Little)).unwrap();
        let late = u64::MAX - 5;
        w.events(
            1,
            &[Record::entry(late, 0x4010), Record::exit(late + 1, 0x4010)],
        )
        .unwrap();
        let bytes = w.into_inner();
        let payload = &bytes[64 + 16..];
        assert_eq!(&payload[0..8], &late.to_le_bytes());
        assert_eq!(&payload[8..16], &0x4010u64.to_le_bytes());
        assert_eq!(&payload[24..32], &0x4012u64.to_le_bytes());
        let trace = Trace::new(&bytes).unwrap();
        let Chunk::Events(ev) = trace.chunks().next().unwrap().unwrap().chunk else {
            panic!()
        };
        let recs: Vec<_> = ev.iter().collect::<Result<_, _>>().unwrap();
        assert_eq!(
            recs,
            vec![Record::entry(late, 0x4010), Record::exit(late + 1, 0x4010)]
        );
    }

    #[test]
    fn version_2_writer_rejects_an_address_with_the_exit_bit() {
        let mut w = Writer::new(Vec::new(), &Header::new(Endian::Little)).unwrap();
        let err = w.events(1, &[Record::entry(1, 0x4012)]).unwrap_err();
        assert!(err.to_string().contains("bit 1"), "{err}");
    }

    /// Records of many shapes for the PACKED decoder's paths: calls from a few functions (the
    /// fast path), recursion deeper than the predicted stack, more functions than the table
    /// holds, exits below the top, unmatched exits, resync pairs (a target on the stack and
    /// one not), clock escapes (a clock that goes back, huge jumps, a delta just under and at
    /// 2^58), deltas of every width, addresses far apart (long zigzag deltas).
    fn records_of_every_shape(seed: u64, len: usize) -> Vec<Record> {
        let mut state = seed | 1;
        let mut next = move || {
            // xorshift64*
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_F491_4F6C_DD1D)
        };
        let mut records = Vec::with_capacity(len + 2048);
        let mut stack: Vec<u64> = Vec::new();
        let mut time = 1_000u64;
        while records.len() < len {
            let r = next();
            time = time.wrapping_add(match r % 64 {
                0 => next() >> 6,               // up to 2^58: a clock escape or nearly
                1 => (1 << 58) - 1 - (r >> 60), // just under the escape
                2 => 1 << 58,
                3 => 0u64.wrapping_sub(next() % 5000), // the clock went back
                4..=9 => next() % (1 << 20),
                _ => r >> 59, // 0 to 31 ticks: one byte
            });
            let address = |n: u64| 0x40_1000 + n * 16;
            let far = |n: u64| 0xffff_8000_0000_0000u64.wrapping_add(n << 4) | 1; // Thumb bit
            let push = |records: &mut Vec<Record>, time, kind, address| {
                records.push(Record {
                    time,
                    kind,
                    address,
                })
            };
            match (next() % 1000, stack.is_empty()) {
                (0..=459, _) | (_, true) => {
                    let a = address(next() % 6);
                    stack.push(a);
                    push(&mut records, time, RecordKind::Entry, a);
                }
                (460..=919, false) => {
                    push(&mut records, time, RecordKind::Exit, stack.pop().unwrap())
                }
                (920..=959, false) => {
                    // A function seldom seen: the table fills, then overflows.
                    let a = if next() % 2 == 0 {
                        address(6 + next() % 6000)
                    } else {
                        far(next() % 100_000)
                    };
                    stack.push(a);
                    push(&mut records, time, RecordKind::Entry, a);
                }
                (960..=974, false) => {
                    // An exit below the top: the frames above it unwound.
                    let at = (next() as usize) % stack.len();
                    let a = stack[at];
                    stack.truncate(at);
                    push(&mut records, time, RecordKind::Exit, a);
                }
                (975..=977, false) => {
                    // An entry of address 0 and its exit, which pops a 0 off the predicted
                    // stack: the next entry is read as a resync target.
                    push(&mut records, time, RecordKind::Entry, 0);
                    push(&mut records, time, RecordKind::Exit, 0);
                }
                (978..=984, false) => {
                    let a = if next() % 3 == 0 {
                        0x7700_0001
                    } else {
                        address(next() % 20)
                    };
                    push(&mut records, time, RecordKind::Exit, a); // may match nothing
                }
                (985..=994, false) => {
                    // A resync: the escape, then its target, on the stack or not.
                    push(&mut records, time, RecordKind::Exit, 0);
                    let at = (next() as usize) % (stack.len() + 1);
                    let a = stack.get(at).copied().unwrap_or(address(next() % 30));
                    if at < stack.len() {
                        stack.truncate(at + 1);
                    } else {
                        stack.push(a);
                    }
                    push(&mut records, time, RecordKind::Entry, a);
                }
                _ => {
                    // Recursion deeper than the ring, then back out.
                    let a = address(next() % 8);
                    let depth = 200 + next() % 700;
                    for _ in 0..depth {
                        push(&mut records, time, RecordKind::Entry, a);
                        time += 3;
                    }
                    for _ in 0..depth {
                        push(&mut records, time, RecordKind::Exit, a);
                        time += 2;
                    }
                }
            }
        }
        records
    }

    /// The PACKED chunk's records through the careful path alone, and the error that ended
    /// them.
    fn careful_records(events: &Events<'_>) -> (Vec<Record>, Option<FormatError>) {
        let mut decoder = PackDecoder::new(events, events.packed.unwrap());
        let mut out = Vec::new();
        loop {
            if decoder.index >= decoder.records {
                return (out, decoder.after_last());
            }
            match decoder.next_record() {
                Ok(record) => out.push(record),
                Err(err) => return (out, Some(err)),
            }
        }
    }

    /// The same through [`Cursor::fill`] (the fast path first), `batch` records at a time.
    fn filled_records(events: &Events<'_>, batch: usize) -> (Vec<Record>, Option<FormatError>) {
        let mut cursor = events.cursor();
        let mut buffer = vec![Record::entry(0, 0); batch];
        let mut out = Vec::new();
        loop {
            let (n, error) = cursor.fill(&mut buffer);
            out.extend_from_slice(&buffer[..n]);
            if error.is_some() || n < batch {
                return (out, error);
            }
        }
    }

    /// The same through [`Events::iter`].
    fn iterated_records(events: &Events<'_>) -> (Vec<Record>, Option<FormatError>) {
        let mut out = Vec::new();
        for item in events.iter() {
            match item {
                Ok(record) => out.push(record),
                Err(err) => return (out, Some(err)),
            }
        }
        (out, None)
    }

    /// Every way of decoding gives the careful path's records and error, record by record.
    fn assert_paths_agree(events: &Events<'_>, what: &str) -> (Vec<Record>, Option<FormatError>) {
        let careful = careful_records(events);
        for batch in [1, 3, 32, 4096] {
            let fast = filled_records(events, batch);
            assert_eq!(fast.1, careful.1, "{what}, batches of {batch}: the error");
            assert_eq!(fast.0.len(), careful.0.len(), "{what}, batches of {batch}");
            for (i, (a, b)) in fast.0.iter().zip(&careful.0).enumerate() {
                assert_eq!(a, b, "{what}, batches of {batch}: record {i}");
            }
        }
        assert_eq!(iterated_records(events), careful, "{what}, through iter");
        careful
    }

    /// A large generated PACKED stream decodes the same through the fast path as through the
    /// careful one, losslessly; and so does every damaged copy of it (a byte changed, the
    /// stream cut short, a wrong record count), with the same error at the same byte.
    #[test]
    fn fast_and_careful_packed_decoding_agree_record_by_record() {
        let records = records_of_every_shape(0x5eed, 400_000);
        let mut header = Header::new(Endian::Little);
        header.pointer_size = 8;
        let mut w = Writer::new(Vec::new(), &header).unwrap();
        // Chunks of many lengths, as the runtime's (65 536 records) and shorter.
        let mut at = 0;
        for len in [1usize, 2, 31, 32, 33, 100, 4097, 65_536].iter().cycle() {
            if at >= records.len() {
                break;
            }
            let end = (at + len).min(records.len());
            w.packed(1, &records[at..end]).unwrap();
            at = end;
        }
        let bytes = w.into_inner();
        let trace = Trace::new(&bytes).unwrap();
        let mut back = Vec::new();
        let mut streams = Vec::new();
        for chunk in trace.chunks() {
            let chunk = chunk.unwrap();
            let Chunk::Events(events) = chunk.chunk else {
                panic!("{:?}", chunk.chunk)
            };
            let (decoded, error) = assert_paths_agree(&events, "the stream as written");
            assert_eq!(error, None);
            back.extend(decoded);
            streams.push(events);
        }
        assert_eq!(back.len(), records.len());
        for (i, (a, b)) in back.iter().zip(&records).enumerate() {
            assert_eq!(a, b, "record {i}");
        }

        // Damaged copies of the longer chunks.
        let mut state = 0x0dd_ba11u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        let mut errors = 0;
        for events in streams.iter().filter(|e| e.len() >= 4097) {
            let head = events.packed.unwrap();
            for round in 0..100 {
                let mut stream = events.bytes.data.to_vec();
                let mut records = head.records;
                match round % 5 {
                    0 => {
                        let at = next() as usize % stream.len();
                        stream[at] ^= 1 << (next() % 8);
                    }
                    1 => {
                        let at = next() as usize % stream.len();
                        stream[at] = next() as u8;
                    }
                    2 => {
                        // A number of 10 bytes or more: its last byte decides.
                        let at = next() as usize % (stream.len() - 12);
                        stream[at..at + 9].fill(0x80 | next() as u8);
                        stream[at + 9] = (next() % 4) as u8 | if round % 3 == 0 { 0x80 } else { 0 };
                    }
                    3 => {
                        let keep = next() as usize % stream.len();
                        stream.truncate(keep);
                    }
                    _ => records = (next() as u32) % (records + 2),
                }
                let damaged = Events {
                    bytes: Bytes {
                        data: &stream,
                        endian: Endian::Little,
                    },
                    packed: Some(PackedHead { records, ..head }),
                    ..*events
                };
                let (_, error) = assert_paths_agree(&damaged, &format!("damage {round}"));
                errors += usize::from(error.is_some());
            }
        }
        assert!(errors > 100, "only {errors} damaged streams were errors");
    }
}
