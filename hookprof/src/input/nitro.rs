//! `hookprof nitro`: decodes a raw memory dump of a NITRO-SDK profiler buffer (hookcc's
//! `calltrace` and `functioncost` runtimes, docs/nitro.md) into the text the program itself
//! prints with `OS_DumpCallTrace` or `OS_DumpStatistics`.
//!
//! The buffer describes itself (section "Buffer layouts" of docs/nitro.md): a 56-byte header
//! with the magic `HKNITRO\0`, the target's pointer size and byte order, the buffer's kind,
//! its own address in the program (`self`) and the address of `__PROFILE_ENTRY` (`anchor`).
//! Pointers inside the buffer become dump offsets through `self`; function names are string
//! pointers into the program, read from the loadable segments of its ELF file after
//! subtracting the load bias (`anchor` minus the ELF's `__PROFILE_ENTRY`).
//!
//! Layers: [`Dump::parse`] (here) validates and decodes the buffer (every error carries the
//! byte offset in the dump, nothing panics on any input); [`crate::output::nitro::render`]
//! prints it with names from a [`crate::input::nitro_program::NameSource`], such as
//! [`crate::input::nitro_program::ProgramImage`] (the ELF);
//! [`crate::analysis::nitro`] pairs a function cost buffer's calls, and
//! [`crate::input::nitro_trace`] converts them for the views; [`crate::commands::nitro::decode_file`]
//! decodes a dump file.
//!
//! What the dump cannot hold: the `lr` of `OS_DumpCallTrace`'s first line is where the
//! program called it from. [`crate::output::nitro::Options::lr`] supplies it; without it the
//! line reads `OS_DumpCallTrace: lr=????????`.

use std::fmt;

use crate::input::format::Endian;

/// The bytes every buffer header starts with.
pub const MAGIC: [u8; 8] = *b"HKNITRO\0";
/// The only layout version this decoder understands.
pub const VERSION: u16 = 1;
/// Size of the header common to every kind of buffer.
pub const HEADER_SIZE: u64 = 56;
/// The name field of a function cost exit record.
pub const EXIT_TAG: u64 = u64::MAX;
/// Dump offsets at which the header may start: the buffer's first 8-byte aligned address is
/// at offset 0 or, for a 4-byte aligned `u32` array, at offset 4.
pub const HEADER_OFFSETS: [u64; 2] = [0, 4];
/// Log-mode indentation stops growing at this call level, as NITRO-SDK's dump does.
pub const MAX_INDENT: u64 = 10;
/// Call trace `flags` bit 0: r0–r3 are recorded.
pub const FLAG_REGISTERS: u16 = 1;
/// Size of a function cost record and of a statistics line, on every target.
pub const COST_RECORD_SIZE: u64 = 24;
/// The symbol whose run-time address is the header's `anchor`.
pub const ANCHOR_SYMBOL: &str = "__PROFILE_ENTRY";

/// What a buffer holds (header byte 12).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `OS_InitCallTrace`.
    CallTrace,
    /// `OS_InitFunctionCost`: a thread's measurement buffer.
    FunctionCost,
    /// `OS_InitStatistics`.
    Statistics,
}

impl Kind {
    fn from_code(code: u8) -> Option<Kind> {
        match code {
            1 => Some(Kind::CallTrace),
            2 => Some(Kind::FunctionCost),
            3 => Some(Kind::Statistics),
            _ => None,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::CallTrace => "call trace",
            Kind::FunctionCost => "function cost measurement",
            Kind::Statistics => "statistics",
        })
    }
}

/// Call trace mode (header byte 13), NITRO's `OSCallTraceMode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallTraceMode {
    /// Entries push, exits pop: the calls in progress.
    Stack,
    /// Entries write into a ring: the newest calls.
    Log,
}

/// The 56-byte header, and where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// Dump offset of the header (0 or 4).
    pub offset: u64,
    pub endian: Endian,
    /// W: 4 or 8.
    pub pointer_size: u8,
    pub kind: Kind,
    /// Call trace: the mode byte (0 stack, 1 log); else 0.
    pub mode: u8,
    pub flags: u16,
    pub header_size: u32,
    pub record_size: u32,
    pub capacity: u32,
    /// Linux TID of the thread that initialised the buffer, or 0.
    pub thread: u32,
    pub enabled: u32,
    pub busy: u32,
    /// The header's address in the program.
    pub self_address: u64,
    /// The address of `__PROFILE_ENTRY` in the program.
    pub anchor: u64,
}

impl Header {
    /// Bytes from the header to the end of the last record, as the layout says.
    pub fn buffer_len(&self) -> u64 {
        u64::from(self.header_size) + u64::from(self.record_size) * u64::from(self.capacity)
    }

    /// Address of the first record.
    pub fn first_record(&self) -> u64 {
        self.self_address.wrapping_add(u64::from(self.header_size))
    }
}

/// One call trace record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallRecord {
    /// Dump offset of the record.
    pub offset: u64,
    /// Address of the function's name string (0: none).
    pub name: u64,
    pub lr: u64,
    pub level: u64,
    /// r0–r3, when the buffer records them.
    pub registers: Option<[u64; 4]>,
}

/// A call trace buffer (`kind` 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallTrace {
    pub mode: CallTraceMode,
    /// The records in the order the dump prints them: newest first.
    pub records: Vec<CallRecord>,
    /// Call level of the next entry.
    pub level: u64,
    pub unmatched_exits: u32,
    pub overflow_depth: u32,
    pub overflow_calls: u32,
}

/// One function cost record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CostRecord {
    /// Dump offset of the record.
    pub offset: u64,
    /// Name string address, or [`EXIT_TAG`].
    pub name: u64,
    pub tick: u64,
    /// Ticks the thread spent switched out after this record.
    pub interval: u64,
}

/// A function cost measurement buffer (`kind` 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionCost {
    /// The records from the first to `current`, in the order written.
    pub records: Vec<CostRecord>,
    /// Tick at which its user-level thread was switched out; 0 while running.
    pub switched_out_at: u64,
    /// Records not kept since the last summary (the buffer was full).
    pub lost: u64,
    /// Exits that earlier summaries found without an entry.
    pub unmatched_exits: u64,
}

/// One line of a statistics buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StatLine {
    /// Name string address.
    pub name: u64,
    pub count: u64,
    /// Total cost in ticks.
    pub cost: u64,
}

/// A statistics buffer (`kind` 3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Statistics {
    /// The lines in use, in the dump's order (functions in the order first summarized).
    pub lines: Vec<StatLine>,
    pub dropped_calls: u64,
    /// A thread was summarizing into the buffer or dumping it when the dump was taken.
    pub locked: bool,
}

/// What follows the header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Contents {
    CallTrace(CallTrace),
    FunctionCost(FunctionCost),
    Statistics(Statistics),
}

/// A decoded buffer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dump {
    pub header: Header,
    pub contents: Contents,
    /// Bytes in the dump.
    pub dump_len: u64,
}

/// What went wrong at [`DumpError::offset`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DumpErrorKind {
    #[error(
        "no NITRO buffer header: expected the magic \"HKNITRO\\0\" at byte 0 or 4, the dump \
         starts with {}{}",
        escape(start),
        match elsewhere {
            Some(at) => format!("; the magic is at byte {at}: dump from the buffer's address, or cut the dump there (tail -c +{})", at + 1),
            None => " (dump the memory from the address given to OS_InitCallTrace, \
                     OS_InitFunctionCost or OS_InitStatistics)".to_string(),
        }
    )]
    NoMagic {
        start: Vec<u8>,
        elsewhere: Option<u64>,
    },
    #[error("layout version is {found}, but this hookprof reads version {VERSION} only")]
    UnsupportedVersion { found: u16 },
    #[error("pointer size is {found}, expected 4 or 8")]
    BadPointerSize { found: u8 },
    #[error("endian byte is {found}, expected 1 (little-endian) or 2 (big-endian)")]
    BadEndian { found: u8 },
    #[error("kind is {found}, expected 1 (call trace), 2 (function cost) or 3 (statistics)")]
    BadKind { found: u8 },
    #[error("call trace mode is {found}, expected 0 (stack) or 1 (log)")]
    BadMode { found: u8 },
    #[error("the dump is empty")]
    Empty,
    #[error("{field} is {found}, expected {expected}")]
    BadField {
        field: &'static str,
        /// The value as the message shows it (decimal, or hex for an address).
        found: String,
        expected: String,
    },
    #[error(
        "{field} is 0x{address:x}, outside the records (0x{first:x} to 0x{limit:x}) or not at \
         a record boundary: the dump is corrupt or not of this buffer"
    )]
    BadPointer {
        field: &'static str,
        address: u64,
        first: u64,
        limit: u64,
    },
    #[error("truncated: {what} needs {needed} bytes here but the dump is only {len} bytes long")]
    Truncated { what: String, needed: u64, len: u64 },
}

fn escape(bytes: &[u8]) -> String {
    let mut s = String::from("\"");
    for &b in bytes {
        s.extend(std::ascii::escape_default(b).map(char::from));
    }
    s.push('"');
    s
}

/// A malformed dump: where (byte offset in the dump) and what was expected there.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("byte {offset}: {kind}")]
pub struct DumpError {
    pub offset: u64,
    pub kind: DumpErrorKind,
}

/// Reads the target's integers at offsets relative to the header, bounds-checked.
struct Reader<'a> {
    data: &'a [u8],
    /// Dump offset of the header.
    base: u64,
    endian: Endian,
}

impl<'a> Reader<'a> {
    fn truncated(&self, at: u64, needed: u64, what: impl Into<String>) -> DumpError {
        DumpError {
            offset: at,
            kind: DumpErrorKind::Truncated {
                what: what.into(),
                needed,
                len: self.data.len() as u64,
            },
        }
    }

    /// `n` bytes at header offset `rel`.
    fn bytes(&self, rel: u64, n: u64, what: &dyn Fn() -> String) -> Result<&'a [u8], DumpError> {
        let at = self.base.saturating_add(rel);
        let range = usize::try_from(at)
            .ok()
            .and_then(|start| Some(start..start.checked_add(usize::try_from(n).ok()?)?));
        range
            .and_then(|r| self.data.get(r))
            .ok_or_else(|| self.truncated(at, n, what()))
    }

    /// An unsigned integer of `size` bytes (1, 2, 4 or 8) at header offset `rel`.
    fn uint(&self, rel: u64, size: u64, what: &dyn Fn() -> String) -> Result<u64, DumpError> {
        let b = self.bytes(rel, size, what)?;
        let mut v = 0u64;
        match self.endian {
            Endian::Little => {
                for &byte in b.iter().rev() {
                    v = v << 8 | u64::from(byte);
                }
            }
            Endian::Big => {
                for &byte in b {
                    v = v << 8 | u64::from(byte);
                }
            }
        }
        Ok(v)
    }
}

fn error(offset: u64, kind: DumpErrorKind) -> DumpError {
    DumpError { offset, kind }
}

fn bad_field(offset: u64, field: &'static str, found: u64, expected: String) -> DumpError {
    error(
        offset,
        DumpErrorKind::BadField {
            field,
            found: found.to_string(),
            expected,
        },
    )
}

/// [`bad_field`] for an address, shown in hex.
fn bad_address(offset: u64, field: &'static str, found: u64, expected: String) -> DumpError {
    error(
        offset,
        DumpErrorKind::BadField {
            field,
            found: format!("0x{found:x}"),
            expected,
        },
    )
}

impl Dump {
    /// Validates and decodes the buffer at the start of `data` (header at byte 0 or 4).
    pub fn parse(data: &[u8]) -> Result<Dump, DumpError> {
        if data.is_empty() {
            return Err(error(0, DumpErrorKind::Empty));
        }
        let base = header_offset(data).ok_or_else(|| {
            error(
                0,
                DumpErrorKind::NoMagic {
                    start: data[..data.len().min(8)].to_vec(),
                    elsewhere: data
                        .windows(MAGIC.len())
                        .position(|w| w == MAGIC)
                        .map(|p| p as u64),
                },
            )
        })?;
        let header = parse_header(data, base)?;
        let r = Reader {
            data,
            base,
            endian: header.endian,
        };
        let contents = match header.kind {
            Kind::CallTrace => Contents::CallTrace(parse_call_trace(&r, &header)?),
            Kind::FunctionCost => Contents::FunctionCost(parse_function_cost(&r, &header)?),
            Kind::Statistics => Contents::Statistics(parse_statistics(&r, &header)?),
        };
        Ok(Dump {
            header,
            contents,
            dump_len: data.len() as u64,
        })
    }
}

fn parse_header(data: &[u8], base: u64) -> Result<Header, DumpError> {
    let at = |rel: u64| base + rel;
    let byte = |rel: u64| data.get(at(rel) as usize).copied();
    let short = || DumpError {
        offset: base,
        kind: DumpErrorKind::Truncated {
            what: "the buffer header".to_string(),
            needed: HEADER_SIZE,
            len: data.len() as u64,
        },
    };
    if (data.len() as u64) < base + HEADER_SIZE {
        return Err(short());
    }
    let endian = match byte(11) {
        Some(1) => Endian::Little,
        Some(2) => Endian::Big,
        found => {
            return Err(error(
                at(11),
                DumpErrorKind::BadEndian {
                    found: found.unwrap_or(0),
                },
            ))
        }
    };
    let r = Reader { data, base, endian };
    let what = || "the buffer header".to_string();
    // Every read below is inside the 56 bytes checked above.
    let u = |rel: u64, size: u64| r.uint(rel, size, &what);
    let version = u(8, 2)? as u16;
    if version != VERSION {
        return Err(error(
            at(8),
            DumpErrorKind::UnsupportedVersion { found: version },
        ));
    }
    let pointer_size = u(10, 1)? as u8;
    if pointer_size != 4 && pointer_size != 8 {
        return Err(error(
            at(10),
            DumpErrorKind::BadPointerSize {
                found: pointer_size,
            },
        ));
    }
    let kind_code = u(12, 1)? as u8;
    let kind = Kind::from_code(kind_code)
        .ok_or_else(|| error(at(12), DumpErrorKind::BadKind { found: kind_code }))?;
    let header = Header {
        offset: base,
        endian,
        pointer_size,
        kind,
        mode: u(13, 1)? as u8,
        flags: u(14, 2)? as u16,
        header_size: u(16, 4)? as u32,
        record_size: u(20, 4)? as u32,
        capacity: u(24, 4)? as u32,
        thread: u(28, 4)? as u32,
        enabled: u(32, 4)? as u32,
        busy: u(36, 4)? as u32,
        self_address: u(40, 8)?,
        anchor: u(48, 8)?,
    };
    let w = u64::from(pointer_size);
    // The kind's control area and record size, as the runtime lays them out.
    let (expected_header, expected_record) = match kind {
        Kind::CallTrace => {
            if header.mode > 1 {
                return Err(error(at(13), DumpErrorKind::BadMode { found: header.mode }));
            }
            let words = if header.flags & FLAG_REGISTERS != 0 {
                7
            } else {
                3
            };
            (HEADER_SIZE + 6 * w + 16, words * w)
        }
        Kind::FunctionCost => (HEADER_SIZE + 2 * w + 24, COST_RECORD_SIZE),
        Kind::Statistics => (HEADER_SIZE + 24, COST_RECORD_SIZE),
    };
    let layout = format!("for a {kind} buffer with {pointer_size}-byte pointers");
    if u64::from(header.header_size) != expected_header {
        return Err(bad_field(
            at(16),
            "header_size",
            header.header_size.into(),
            format!("{expected_header} {layout}"),
        ));
    }
    if u64::from(header.record_size) != expected_record {
        let registers = match kind {
            Kind::CallTrace if header.flags & FLAG_REGISTERS != 0 => " with r0-r3 (flags bit 0)",
            Kind::CallTrace => " without r0-r3 (flags bit 0 clear)",
            _ => "",
        };
        return Err(bad_field(
            at(20),
            "record_size",
            header.record_size.into(),
            format!("{expected_record} {layout}{registers}"),
        ));
    }
    if header.capacity == 0 {
        return Err(bad_field(
            at(24),
            "capacity",
            0,
            "at least 1 (the runtime refuses smaller buffers)".to_string(),
        ));
    }
    if header.self_address == 0 || !header.self_address.is_multiple_of(8) {
        return Err(bad_address(
            at(40),
            "self",
            header.self_address,
            "the header's address in the program, non-zero and 8-byte aligned".to_string(),
        ));
    }
    let address_max = if pointer_size == 4 {
        u64::from(u32::MAX)
    } else {
        u64::MAX
    };
    if header
        .self_address
        .checked_add(header.buffer_len())
        .is_none_or(|end| end - 1 > address_max)
    {
        return Err(bad_address(
            at(40),
            "self",
            header.self_address,
            format!(
                "an address at which the {} bytes of the buffer fit in the {}-bit address space",
                header.buffer_len(),
                w * 8
            ),
        ));
    }
    if header.anchor == 0 {
        return Err(bad_field(
            at(48),
            "anchor",
            0,
            format!("the address of {ANCHOR_SYMBOL} in the program"),
        ));
    }
    Ok(header)
}

/// The W-sized pointer field at `rel` that must be a record boundary in `[first, limit]`;
/// returns it with its index.
fn record_pointer(
    r: &Reader<'_>,
    h: &Header,
    rel: u64,
    field: &'static str,
    limit: u64,
) -> Result<(u64, u64), DumpError> {
    let w = u64::from(h.pointer_size);
    let value = r.uint(rel, w, &|| format!("the control area ({field})"))?;
    let first = h.first_record();
    let record_size = u64::from(h.record_size);
    if value < first || value > limit || !(value - first).is_multiple_of(record_size) {
        return Err(error(
            r.base + rel,
            DumpErrorKind::BadPointer {
                field,
                address: value,
                first,
                limit,
            },
        ));
    }
    Ok((value, (value - first) / record_size))
}

/// The `limit` field: one past the last record.
fn check_limit(r: &Reader<'_>, h: &Header, rel: u64) -> Result<u64, DumpError> {
    let w = u64::from(h.pointer_size);
    let limit = r.uint(rel, w, &|| "the control area (limit)".to_string())?;
    let expected = h.self_address + h.buffer_len();
    if limit != expected {
        return Err(bad_address(
            r.base + rel,
            "limit",
            limit,
            format!(
                "0x{expected:x} (self + header_size + capacity × record_size = 0x{:x} + {} + {} × {})",
                h.self_address, h.header_size, h.capacity, h.record_size
            ),
        ));
    }
    Ok(limit)
}

fn parse_call_trace(r: &Reader<'_>, h: &Header) -> Result<CallTrace, DumpError> {
    let w = u64::from(h.pointer_size);
    let control = |rel: u64, size: u64, field: &'static str| {
        r.uint(rel, size, &|| format!("the control area ({field})"))
    };
    let mode = if h.mode == 0 {
        CallTraceMode::Stack
    } else {
        CallTraceMode::Log
    };
    let limit = check_limit(r, h, HEADER_SIZE + w)?;
    let (current, _) = record_pointer(r, h, HEADER_SIZE, "current", limit)?;
    let record_size = u64::from(h.record_size);
    let pop = control(HEADER_SIZE + 3 * w, w, "pop")?;
    let expected_pop = match mode {
        CallTraceMode::Stack => record_size,
        CallTraceMode::Log => 0,
    };
    if pop != expected_pop {
        return Err(bad_field(
            r.base + HEADER_SIZE + 3 * w,
            "pop",
            pop,
            format!(
                "{expected_pop} in {} mode",
                if expected_pop == 0 { "log" } else { "stack" }
            ),
        ));
    }
    let step = control(HEADER_SIZE + 4 * w, w, "step")?;
    if step != record_size {
        return Err(bad_field(
            r.base + HEADER_SIZE + 4 * w,
            "step",
            step,
            format!("{record_size} (record_size)"),
        ));
    }
    let level = control(HEADER_SIZE + 5 * w, w, "level")?;
    let counters = HEADER_SIZE + 6 * w;
    let unmatched_exits = control(counters, 4, "unmatched_exits")? as u32;
    let overflow_depth = control(counters + 4, 4, "overflow_depth")? as u32;
    let overflow_calls = control(counters + 8, 4, "overflow_calls")? as u32;

    let first = h.first_record();
    let read = |address: u64, index: u64| -> Result<CallRecord, DumpError> {
        let rel = address - h.self_address;
        let what = || format!("record {index} (at 0x{address:x})");
        let word = |i: u64| r.uint(rel + i * w, w, &what);
        // Read the whole record first, so that a record cut short is one error at its start.
        r.bytes(rel, record_size, &what)?;
        Ok(CallRecord {
            offset: r.base + rel,
            name: word(0)?,
            lr: word(1)?,
            level: word(2)?,
            registers: if h.flags & FLAG_REGISTERS != 0 {
                Some([word(3)?, word(4)?, word(5)?, word(6)?])
            } else {
                None
            },
        })
    };
    let index = |address: u64| (address - first) / record_size;
    let mut records = Vec::new();
    match mode {
        CallTraceMode::Stack => {
            // From the newest (below current) down to the first record.
            let mut p = current;
            while p > first {
                p -= record_size;
                records.push(read(p, index(p))?);
            }
        }
        CallTraceMode::Log => {
            // The ring, newest first, until a slot never written or once round.
            let mut p = current;
            for _ in 0..h.capacity {
                if p == first {
                    p = limit;
                }
                p -= record_size;
                let record = read(p, index(p))?;
                if record.name == 0 {
                    break;
                }
                records.push(record);
            }
        }
    }
    Ok(CallTrace {
        mode,
        records,
        level,
        unmatched_exits,
        overflow_depth,
        overflow_calls,
    })
}

fn parse_function_cost(r: &Reader<'_>, h: &Header) -> Result<FunctionCost, DumpError> {
    let w = u64::from(h.pointer_size);
    let limit = check_limit(r, h, HEADER_SIZE + w)?;
    let (current, count) = record_pointer(r, h, HEADER_SIZE, "current", limit)?;
    let control =
        |rel: u64, field: &'static str| r.uint(rel, 8, &|| format!("the control area ({field})"));
    let switched_out_at = control(HEADER_SIZE + 2 * w, "switched_out_at")?;
    let lost = control(HEADER_SIZE + 2 * w + 8, "lost")?;
    let unmatched_exits = control(HEADER_SIZE + 2 * w + 16, "unmatched_exits")?;
    let mut records = Vec::new();
    let first_rel = u64::from(h.header_size);
    for i in 0..count {
        let rel = first_rel + i * COST_RECORD_SIZE;
        let what = || format!("record {i} of {count} (current is 0x{current:x})");
        r.bytes(rel, COST_RECORD_SIZE, &what)?;
        records.push(CostRecord {
            offset: r.base + rel,
            name: r.uint(rel, 8, &what)?,
            tick: r.uint(rel + 8, 8, &what)?,
            interval: r.uint(rel + 16, 8, &what)?,
        });
    }
    Ok(FunctionCost {
        records,
        switched_out_at,
        lost,
        unmatched_exits,
    })
}

fn parse_statistics(r: &Reader<'_>, h: &Header) -> Result<Statistics, DumpError> {
    let control = |rel: u64, size: u64, field: &'static str| {
        r.uint(rel, size, &|| format!("the control area ({field})"))
    };
    let used = control(HEADER_SIZE, 8, "used")?;
    if used > u64::from(h.capacity) {
        return Err(bad_field(
            r.base + HEADER_SIZE,
            "used",
            used,
            format!("at most capacity ({})", h.capacity),
        ));
    }
    let dropped_calls = control(HEADER_SIZE + 8, 8, "dropped_calls")?;
    let lock = control(HEADER_SIZE + 16, 4, "lock")?;
    let mut lines = Vec::new();
    let first_rel = u64::from(h.header_size);
    for i in 0..used {
        let rel = first_rel + i * COST_RECORD_SIZE;
        let what = || format!("line {i} of {used}");
        r.bytes(rel, COST_RECORD_SIZE, &what)?;
        lines.push(StatLine {
            name: r.uint(rel, 8, &what)?,
            count: r.uint(rel + 8, 8, &what)?,
            cost: r.uint(rel + 16, 8, &what)?,
        });
    }
    Ok(Statistics {
        lines,
        dropped_calls,
        locked: lock != 0,
    })
}

/// The first of [`HEADER_OFFSETS`] at which `data` has the magic.
pub fn header_offset(data: &[u8]) -> Option<u64> {
    HEADER_OFFSETS
        .into_iter()
        .find(|&at| data.get(at as usize..at as usize + MAGIC.len()) == Some(&MAGIC[..]))
}
