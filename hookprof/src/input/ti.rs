//! `hookprof ti`: the post-processing tool of TI's "Profiling on the C6000 using Function
//! Hooks" (seeds/ti-c6000-function-hooks.txt) for dumps of hookcc's TI runtime
//! (docs/ti-runtime.md; this module's own page is docs/ti-post.md).
//!
//! Layers:
//! - [`Dump::parse`]: a binary or CCS "32-bit Hex - C Style" dump (detected) into records in
//!   time order; a wrapped circular buffer is rotated to start at its oldest record (the
//!   record after the largest backward step of the timestamp). Errors carry the byte offset
//!   (and the line of a `.dat` file); nothing panics on any input.
//! - [`Program::parse`]: the ELF file: pointer size and byte order (which the dump does not
//!   hold), and the names of addresses, global symbols or all of them.
//! - [`Analysis::run`]: the seed's tool: a call stack per task, task switches changing the
//!   stack in use; every completed call with its inclusive and exclusive cycles, where the
//!   time a task was switched out is not counted in the calls it had in progress.
//! - [`Analysis::write_call_list`], [`Analysis::write_profile`]: the two CSV files;
//!   [`Analysis::to_hktrace`]: the calls as an in-memory `.hktrace` (tasks as threads, times in
//!   cycles of task time), so that `hookprof callgraph` reads TI dumps through the same
//!   replay, model and call graph code as native traces.
//! - [`process_file`], [`callgraph_file`]: what the `hookprof` binary calls.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use object::{Architecture, Object, ObjectKind, ObjectSection, ObjectSymbol, SymbolKind};

use crate::input::error::TiError as Error;
use crate::input::format::{Endian, Header, Record as TraceRecord, Writer, FLAG_COMPLETE};
use crate::input::symbols::{demangle, hex_name};

/// The record type in the low 2 bits of `address_type` (the seed's `Hook_Record_Type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecordType {
    FuncEntry,
    FuncExit,
    /// The task switched to.
    TaskEntry,
    /// The task switched from.
    TaskExit,
}

impl RecordType {
    fn from_bits(bits: u64) -> RecordType {
        match bits & 3 {
            0 => RecordType::FuncEntry,
            1 => RecordType::FuncExit,
            2 => RecordType::TaskEntry,
            _ => RecordType::TaskExit,
        }
    }
}

/// The target's pointer size and byte order: a dump holds neither, the ELF file says them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// 4 or 8: the size of `address_type`.
    pub pointer_size: u8,
    pub endian: Endian,
}

impl Layout {
    /// Bytes per record: 12 on 32-bit targets, 16 on 64-bit ones.
    pub fn record_size(self) -> u64 {
        u64::from(self.pointer_size) + 8
    }

    fn invalid_address(self) -> u64 {
        if self.pointer_size == 4 {
            u64::from(u32::MAX)
        } else {
            u64::MAX
        }
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}-word ({}-bit address) {}",
            self.record_size() / 4,
            self.pointer_size * 8,
            self.endian
        )
    }
}

/// How the record layout of a dump was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutChoice {
    /// The ELF file's pointer size: the only layout a dump of its size could have, or a 32-bit
    /// program's.
    Elf,
    /// `--record-words`.
    Given,
    /// Of the 3- and 4-word layouts a 64-bit program's dump could have, the 3-word one: its
    /// timestamps run in order, and read as 4-word records they step back
    /// `other_backward_steps` times (`None`: the dump's size is no whole number of 4-word
    /// records).
    Detected { other_backward_steps: Option<u64> },
}

/// Decodes `data` with the record layout `--record-words` gives, or the one the data shows.
///
/// A 64-bit program's dump may hold hookcc's records (4 words: a 64-bit address, TSCL, TSCH)
/// or the seed's (3 words: `Hook_Record`'s `unsigned int address_type`, from its own hook.c).
/// Read with the wrong size, records come apart and their timestamps jump back and forth:
/// the layout whose timestamps run in order is taken if the other steps back at least four
/// times as often; otherwise the dump cannot tell, and it is an error naming `--record-words`.
pub fn parse_dump(
    data: &[u8],
    elf: Layout,
    record_words: Option<u8>,
) -> Result<(Dump, LayoutChoice), DumpError> {
    let with_words = |words: u8| Layout {
        pointer_size: if words == 3 { 4 } else { 8 },
        endian: elf.endian,
    };
    if let Some(words) = record_words {
        return Ok((Dump::parse(data, with_words(words))?, LayoutChoice::Given));
    }
    if elf.pointer_size == 4 {
        return Ok((Dump::parse(data, elf)?, LayoutChoice::Elf));
    }
    let native = Dump::parse(data, elf);
    let seed = Dump::parse(data, with_words(3));
    match (native, seed) {
        (Ok(native), Err(_)) => Ok((native, LayoutChoice::Elf)),
        (Err(_), Ok(seed)) if seed.records.len() >= 2 && seed.backward_steps == 0 => Ok((
            seed,
            LayoutChoice::Detected {
                other_backward_steps: None,
            },
        )),
        (Err(error), _) => Err(error),
        (Ok(native), Ok(seed)) => {
            let (n, s) = (native.backward_steps, seed.backward_steps);
            if native.records.len() < 2 || n * 4 < s {
                Ok((native, LayoutChoice::Elf))
            } else if s * 4 < n {
                Ok((
                    seed,
                    LayoutChoice::Detected {
                        other_backward_steps: Some(n),
                    },
                ))
            } else {
                Err(DumpError {
                    offset: 0,
                    line: None,
                    kind: DumpErrorKind::AmbiguousLayout {
                        four_words: n,
                        three_words: s,
                    },
                })
            }
        }
    }
}

/// One valid record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Index of the record's slot in the dump (memory order).
    pub slot: u64,
    /// Function address or task handle, low 2 bits cleared.
    pub address: u64,
    pub kind: RecordType,
    /// TSCH:TSCL.
    pub time: u64,
}

/// How the dump was stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DumpFormat {
    /// The buffer's memory (`PREFIX.bin`, a debugger's binary save).
    Binary,
    /// CCS "32-bit Hex - C Style" text (`PREFIX.dat`).
    CcsHex {
        /// The header's StartingAddress: where `ProfileData` was in the program.
        start_address: u64,
        /// The header's Length, in words.
        declared_words: u64,
    },
}

/// A decoded dump.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dump {
    pub format: DumpFormat,
    pub layout: Layout,
    /// The valid records, oldest first.
    pub records: Vec<Record>,
    /// Records in the dump, valid or not.
    pub slots: u64,
    /// Records skipped because their `address_type` is all ones (never written, or being
    /// written).
    pub invalid: u64,
    /// For a wrapped circular buffer: the slot of the oldest record.
    pub oldest_slot: Option<u64>,
    /// Places where the timestamp goes backwards in the records as ordered (the wrap point
    /// excluded): records of several threads or cores.
    pub backward_steps: u64,
}

/// What went wrong at [`DumpError::offset`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DumpErrorKind {
    #[error("the dump is empty")]
    Empty,
    #[error(
        "truncated: the last record has {have} of its {record_size} bytes ({layout} records, \
         as the ELF file says: is it the program that wrote the dump?)"
    )]
    PartialRecord {
        have: u64,
        record_size: u64,
        layout: Layout,
    },
    #[error(
        "CCS data file header {found:?}: {why} (expected \"1651 1 START 0 LENGTH\", as CCS \
         saves \"32-bit Hex - C Style\")"
    )]
    CcsHeader { found: String, why: &'static str },
    #[error("{found:?} is not a 32-bit hex word of 8 digits (0xXXXXXXXX)")]
    CcsWord { found: String },
    #[error(
        "truncated: {words} words is not a whole number of records ({layout} records, as \
         the ELF file says); the last record has {have} of its {words_per_record} words"
    )]
    CcsPartialRecord {
        words: u64,
        words_per_record: u64,
        have: u64,
        layout: Layout,
    },
    #[error(
        "cannot tell the record layout: read as hookcc's 4-word records (64-bit address, TSCL, \
         TSCH) the timestamps step back {four_words} times, as the seed's 3-word Hook_Record \
         {three_words} times; give --record-words=4 or --record-words=3"
    )]
    AmbiguousLayout { four_words: u64, three_words: u64 },
}

/// A malformed dump: where (byte offset, and line in a `.dat` file) and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct DumpError {
    pub offset: u64,
    /// 1-based line of a CCS text dump.
    pub line: Option<u64>,
    pub kind: DumpErrorKind,
}

impl fmt::Display for DumpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line} (byte {}): {}", self.offset, self.kind),
            None => write!(f, "byte {}: {}", self.offset, self.kind),
        }
    }
}

/// The magic number that starts a CCS data file.
pub const CCS_MAGIC: &str = "1651";

/// Whether `data` is a CCS data file rather than a binary dump: it starts with the CCS magic
/// number and a space.
pub fn is_ccs_hex(data: &[u8]) -> bool {
    data.starts_with(b"1651 ")
}

/// The words of a CCS text dump, as the target's memory bytes, with the line of each word.
struct CcsWords {
    bytes: Vec<u8>,
    start_address: u64,
    declared_words: u64,
    /// Byte offset of each line in the file (for errors).
    word_offsets: Vec<u64>,
}

fn parse_ccs(data: &[u8], endian: Endian) -> Result<CcsWords, DumpError> {
    let mut lines = Vec::new();
    let mut at = 0usize;
    for line in data.split(|&b| b == b'\n') {
        lines.push((at as u64, line.strip_suffix(b"\r").unwrap_or(line)));
        at += line.len() + 1;
    }
    let header_err = |why: &'static str, found: &[u8]| DumpError {
        offset: 0,
        line: Some(1),
        kind: DumpErrorKind::CcsHeader {
            found: String::from_utf8_lossy(found).into_owned(),
            why,
        },
    };
    let (_, header) = lines[0];
    let fields: Vec<&[u8]> = header
        .split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty())
        .collect();
    if fields.len() < 5 {
        return Err(header_err("fewer than 5 fields", header));
    }
    let hex = |f: &[u8]| {
        std::str::from_utf8(f)
            .ok()
            .and_then(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).ok())
    };
    if fields[0] != CCS_MAGIC.as_bytes() {
        return Err(header_err("the magic number is not 1651", header));
    }
    if fields[1] != b"1" {
        return Err(header_err("the format is not 1 (hexadecimal)", header));
    }
    let start_address = hex(fields[2])
        .ok_or_else(|| header_err("the starting address is not hexadecimal", header))?;
    let declared_words =
        hex(fields[4]).ok_or_else(|| header_err("the length is not hexadecimal", header))?;
    let mut bytes = Vec::new();
    let mut word_offsets = Vec::new();
    for (index, &(offset, line)) in lines.iter().enumerate().skip(1) {
        let text = line.trim_ascii();
        if text.is_empty() {
            continue;
        }
        let digits = text
            .strip_prefix(b"0x")
            .or_else(|| text.strip_prefix(b"0X"))
            .unwrap_or(text);
        // Exactly 8 digits, as CCS writes them: a line cut short is an error, not a
        // smaller value.
        let word = (digits.len() == 8)
            .then(|| std::str::from_utf8(digits).ok())
            .flatten()
            .and_then(|s| u32::from_str_radix(s, 16).ok())
            .ok_or_else(|| DumpError {
                offset,
                line: Some(index as u64 + 1),
                kind: DumpErrorKind::CcsWord {
                    found: String::from_utf8_lossy(text).into_owned(),
                },
            })?;
        bytes.extend_from_slice(&match endian {
            Endian::Little => word.to_le_bytes(),
            Endian::Big => word.to_be_bytes(),
        });
        word_offsets.push(offset);
    }
    Ok(CcsWords {
        bytes,
        start_address,
        declared_words,
        word_offsets,
    })
}

impl Dump {
    /// Decodes a binary or CCS text dump (detected) of records laid out as `layout` says.
    pub fn parse(data: &[u8], layout: Layout) -> Result<Dump, DumpError> {
        if data.is_empty() {
            return Err(DumpError {
                offset: 0,
                line: None,
                kind: DumpErrorKind::Empty,
            });
        }
        let record_size = layout.record_size();
        let (format, memory) = if is_ccs_hex(data) {
            let ccs = parse_ccs(data, layout.endian)?;
            let words = ccs.bytes.len() as u64 / 4;
            let per_record = record_size / 4;
            if !words.is_multiple_of(per_record) {
                let first_of_last = (words - words % per_record) as usize;
                let offset = ccs.word_offsets.get(first_of_last).copied().unwrap_or(0);
                let line = line_of(data, offset);
                return Err(DumpError {
                    offset,
                    line: Some(line),
                    kind: DumpErrorKind::CcsPartialRecord {
                        words,
                        words_per_record: per_record,
                        have: words % per_record,
                        layout,
                    },
                });
            }
            (
                DumpFormat::CcsHex {
                    start_address: ccs.start_address,
                    declared_words: ccs.declared_words,
                },
                std::borrow::Cow::Owned(ccs.bytes),
            )
        } else {
            let len = data.len() as u64;
            if !len.is_multiple_of(record_size) {
                return Err(DumpError {
                    offset: len - len % record_size,
                    line: None,
                    kind: DumpErrorKind::PartialRecord {
                        have: len % record_size,
                        record_size,
                        layout,
                    },
                });
            }
            (DumpFormat::Binary, std::borrow::Cow::Borrowed(data))
        };
        let invalid_address = layout.invalid_address();
        let mut records = Vec::new();
        let mut invalid = 0u64;
        let w = layout.pointer_size as usize;
        for (slot, chunk) in memory.chunks_exact(record_size as usize).enumerate() {
            let address_type = layout.endian.uint(&chunk[..w]);
            if address_type == invalid_address {
                invalid += 1;
                continue;
            }
            let lo = layout.endian.uint(&chunk[w..w + 4]);
            let hi = layout.endian.uint(&chunk[w + 4..w + 8]);
            records.push(Record {
                slot: slot as u64,
                address: address_type & !3,
                kind: RecordType::from_bits(address_type),
                time: hi << 32 | lo,
            });
        }
        let slots = memory.len() as u64 / record_size;
        let (oldest_slot, backward_steps) = unwrap_circular(&mut records);
        Ok(Dump {
            format,
            layout,
            records,
            slots,
            invalid,
            oldest_slot,
            backward_steps,
        })
    }
}

fn line_of(data: &[u8], offset: u64) -> u64 {
    let end = (offset as usize).min(data.len());
    data[..end].iter().filter(|&&b| b == b'\n').count() as u64 + 1
}

/// Rotates a wrapped circular buffer's records to start at the oldest: the record after the
/// largest backward step of the timestamp (docs/ti-runtime.md), provided that the rotation
/// joins the last slot to the first with a forward step, as a wrapped buffer's memory does (a
/// buffer that did not wrap has its oldest record first, and its last-to-first junction goes
/// backwards). Returns the oldest record's slot if rotated, and the other backward steps.
fn unwrap_circular(records: &mut [Record]) -> (Option<u64>, u64) {
    let steps: Vec<(usize, u64)> = records
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[1].time < w[0].time)
        .map(|(i, w)| (i + 1, w[0].time - w[1].time))
        .collect();
    let Some(&(at, _)) = steps
        .iter()
        .max_by(|(ia, da), (ib, db)| da.cmp(db).then(ib.cmp(ia)))
    else {
        return (None, 0);
    };
    let (first, last) = (records[0].time, records[records.len() - 1].time);
    if last > first {
        return (None, steps.len() as u64);
    }
    records.rotate_left(at);
    (Some(records[0].slot), steps.len() as u64 - 1)
}

/// Why the ELF file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    #[error("not an ELF file: {0}")]
    NotElf(object::Error),
}

/// A named address of the program.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Named {
    /// ELF address; bit 0 cleared for Thumb functions.
    address: u64,
    names: Vec<String>,
}

/// What the post tool needs from the program's ELF file.
#[derive(Clone, Debug)]
pub struct Program {
    pub layout: Layout,
    /// Position-independent (ET_DYN): recorded addresses are the ELF's plus a load bias.
    pub position_independent: bool,
    /// The ELF value of `ProfileData`, if the file has the symbol.
    pub profile_data: Option<u64>,
    /// Named addresses, sorted by address.
    named: Vec<Named>,
    /// Every function symbol's address (local ones too), to infer a load bias.
    functions: Vec<u64>,
}

impl Program {
    /// Reads `elf`: names from its global symbols, or all symbols (local ones too) with
    /// `all_symbols`. Function and data symbols are names; with `all_symbols` also untyped
    /// ones (labels) and section symbols (named after their section: the seed's
    /// `.text - SL2MemoryBufInit`, where a section starts with a function); file and Arm
    /// mapping symbols (`$a`, `$t`, `$d`, `$x`) never.
    pub fn parse(elf: &[u8], all_symbols: bool) -> Result<Program, ElfError> {
        let file = object::File::parse(elf).map_err(ElfError::NotElf)?;
        let layout = Layout {
            pointer_size: if file.is_64() { 8 } else { 4 },
            endian: if file.is_little_endian() {
                Endian::Little
            } else {
                Endian::Big
            },
        };
        let thumb = file.architecture() == Architecture::Arm;
        let mut by_address: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        let mut functions = Vec::new();
        let mut profile_data = None;
        // .symtab, or .dynsym in a stripped file.
        let mut symbols: Vec<object::Symbol<'_, '_>> = file.symbols().collect();
        if symbols.is_empty() {
            symbols = file.dynamic_symbols().collect();
        }
        for s in symbols {
            // object counts no section symbol as a definition; a defined one has its section.
            let section_symbol = s.kind() == SymbolKind::Section && s.section_index().is_some();
            if !s.is_definition() && !section_symbol {
                continue;
            }
            let Ok(mut name) = s.name() else { continue };
            if name.is_empty() && s.kind() == SymbolKind::Section && all_symbols {
                // ELF section symbols are nameless: they stand for their section.
                name = s
                    .section_index()
                    .and_then(|i| file.section_by_index(i).ok())
                    .and_then(|section| section.name().ok())
                    .unwrap_or("");
            }
            if name.is_empty() || name.starts_with('$') {
                continue;
            }
            let mut address = s.address();
            if thumb && s.kind() == SymbolKind::Text {
                address &= !1;
            }
            if s.kind() == SymbolKind::Text {
                functions.push(address);
            }
            if name == "ProfileData" {
                profile_data = Some(address);
            }
            let wanted_kind = match s.kind() {
                SymbolKind::Text | SymbolKind::Data => true,
                SymbolKind::Unknown | SymbolKind::Section => all_symbols,
                _ => false,
            };
            if wanted_kind && (all_symbols || s.is_global()) {
                by_address.entry(address).or_default().push(demangle(name));
            }
        }
        let named = by_address
            .into_iter()
            .map(|(address, mut names)| {
                names.sort();
                names.dedup();
                Named { address, names }
            })
            .collect();
        functions.sort_unstable();
        functions.dedup();
        Ok(Program {
            layout,
            position_independent: file.kind() == ObjectKind::Dynamic,
            profile_data,
            named,
            functions,
        })
    }

    /// A program from names given directly (tests, or names from elsewhere).
    pub fn from_names(layout: Layout, names: impl IntoIterator<Item = (u64, String)>) -> Program {
        let mut by_address: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        for (address, name) in names {
            by_address.entry(address).or_default().push(name);
        }
        Program {
            layout,
            position_independent: false,
            profile_data: None,
            functions: by_address.keys().copied().collect(),
            named: by_address
                .into_iter()
                .map(|(address, mut names)| {
                    names.sort();
                    names.dedup();
                    Named { address, names }
                })
                .collect(),
        }
    }

    /// The name of the ELF address `address` (low 2 bits clear): the names of the symbol
    /// there, else of the first symbol in `[address, address + 3]` (functions aligned to
    /// less than 4 bytes), joined with " - ".
    pub fn name(&self, address: u64) -> Option<String> {
        let i = self.named.partition_point(|n| n.address < address);
        let n = self.named.get(i)?;
        (n.address - address <= 3).then(|| n.names.join(" - "))
    }
}

/// Where the load bias came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bias {
    /// Not position-independent: recorded addresses are ELF addresses.
    Fixed,
    /// `--profile-data`, or the CCS header's StartingAddress, minus the ELF's `ProfileData`.
    FromProfileData { runtime: u64, given: bool },
    /// Inferred from the recorded function addresses: `matched` of `considered` distinct
    /// addresses are function symbols with this bias.
    Inferred { matched: usize, considered: usize },
    /// Could not be determined: names are not resolved.
    Unknown,
}

/// Page size the load bias of a position-independent executable is a multiple of (the
/// smallest in use; larger pages are multiples of it).
const PAGE: u64 = 0x1000;

/// The load bias of `program` for `dump`, and how it was found.
pub fn load_bias(program: &Program, dump: &Dump, profile_data: Option<u64>) -> (u64, Bias) {
    if !program.position_independent {
        return (0, Bias::Fixed);
    }
    let from_dump = match dump.format {
        DumpFormat::CcsHex { start_address, .. } => Some(start_address),
        DumpFormat::Binary => None,
    };
    if let (Some(elf), Some(runtime)) = (program.profile_data, profile_data.or(from_dump)) {
        return (
            runtime.wrapping_sub(elf),
            Bias::FromProfileData {
                runtime,
                given: profile_data.is_some(),
            },
        );
    }
    // Vote: for each recorded function address, every function symbol at the same offset in
    // a page proposes address - symbol. The true bias gets a vote from every address.
    let mut by_page_offset: HashMap<u64, Vec<u64>> = HashMap::new();
    for &f in &program.functions {
        by_page_offset
            .entry(f & (PAGE - 1) & !3)
            .or_default()
            .push(f);
    }
    let mut seen = HashSet::new();
    let mut votes: HashMap<u64, usize> = HashMap::new();
    for r in &dump.records {
        if !matches!(r.kind, RecordType::FuncEntry | RecordType::FuncExit)
            || !seen.insert(r.address)
        {
            continue;
        }
        if seen.len() > 256 {
            break;
        }
        let mut proposed = HashSet::new();
        for &f in by_page_offset
            .get(&(r.address & (PAGE - 1)))
            .map_or(&[][..], Vec::as_slice)
        {
            // Same offset in a page: the bias is a multiple of PAGE. A program is loaded at
            // or above its link-time addresses.
            let Some(bias) = r.address.checked_sub(f & !3) else {
                continue;
            };
            if proposed.insert(bias) {
                *votes.entry(bias).or_default() += 1;
            }
        }
    }
    let considered = seen.len().min(256);
    match votes
        .into_iter()
        .max_by(|(ba, va), (bb, vb)| va.cmp(vb).then(bb.cmp(ba)))
    {
        Some((bias, matched)) if matched * 2 >= considered => (
            bias,
            Bias::Inferred {
                matched,
                considered,
            },
        ),
        _ => (0, Bias::Unknown),
    }
}

/// A task: its handle, or `None` for records with no task switch before them to name it.
pub type TaskKey = Option<u64>;

/// One completed call, in the call list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub address: u64,
    pub task: TaskKey,
    /// 1 for the outermost frame of the task.
    pub depth: usize,
    /// Timestamps of the entry and exit records.
    pub enter_time: u64,
    pub exit_time: u64,
    /// Cycles in the function and its callees while its task ran.
    pub inclusive: u64,
    /// Inclusive cycles minus those of the calls it made.
    pub exclusive: u64,
    /// Closed by the exit of a caller (its own exit record is missing).
    pub unwound: bool,
}

/// Per-function totals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionStats {
    pub calls: u64,
    pub total_exclusive: u64,
    pub max_exclusive: u64,
    pub min_exclusive: u64,
    pub total_inclusive: u64,
    pub max_inclusive: u64,
}

/// Per-task totals: each time the task ran (from its TASK_ENTRY, or the first record, to its
/// TASK_EXIT, or the last record) is one execution.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskStats {
    pub runs: u64,
    pub total: u64,
    pub max: u64,
    pub min: u64,
}

fn add_run(s: &mut TaskStats, cycles: u64) {
    if s.runs == 0 {
        s.min = cycles;
    }
    s.runs += 1;
    s.total = s.total.saturating_add(cycles);
    s.max = s.max.max(cycles);
    s.min = s.min.min(cycles);
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    address: u64,
    enter_time: u64,
    /// Task time at entry.
    enter_task_time: u64,
    child_inclusive: u64,
    serial: usize,
}

/// An entry or exit in task time, for [`Analysis::to_hktrace`].
#[derive(Clone, Copy, Debug)]
struct TaskEvent {
    entry: bool,
    address: u64,
    task_time: u64,
    serial: usize,
}

#[derive(Debug, Default)]
struct TaskState {
    stack: Vec<Frame>,
    /// Cycles the task ran before its current run.
    ran: u64,
    /// Start of the current run, if it is running.
    running_since: Option<u64>,
    stats: TaskStats,
    events: Vec<TaskEvent>,
}

impl TaskState {
    fn task_time(&self, t: u64) -> u64 {
        self.ran
            .saturating_add(self.running_since.map_or(0, |s| t.saturating_sub(s)))
    }

    fn stop(&mut self, t: u64) {
        if let Some(start) = self.running_since.take() {
            let cycles = t.saturating_sub(start);
            self.ran = self.ran.saturating_add(cycles);
            add_run(&mut self.stats, cycles);
        }
    }
}

/// The result of replaying a dump: everything the CSV files, the status report and the call
/// graph show. Addresses are run-time addresses; [`Analysis::function_name`] and
/// [`Analysis::task_name`] name them.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// Completed calls, in order of completion (exit).
    pub calls: Vec<Call>,
    /// Per function address.
    pub functions: HashMap<u64, FunctionStats>,
    /// Tasks in order of first appearance, with their totals.
    pub tasks: Vec<(TaskKey, TaskStats)>,
    pub first_time: Option<u64>,
    pub last_time: Option<u64>,
    /// Distinct function addresses in the records.
    pub functions_found: usize,
    /// Distinct task handles in the records.
    pub tasks_found: usize,
    /// Entries whose exit is not in the dump (still running at its end, or left without an
    /// exit record): their calls are not in the call list, except those closed by a caller's
    /// exit ([`Call::unwound`]).
    pub enters_without_exit: u64,
    /// Exits whose entry is not in the dump (entered before recording began).
    pub exits_without_enter: u64,
    /// TASK_EXIT records naming another task than the one running.
    pub task_mismatches: u64,
    pub max_depth: usize,
    /// Function addresses no symbol names (shown as `?function #n`).
    pub unnamed_functions: usize,
    /// Recorded addresses minus this are ELF addresses.
    bias: u64,
    names: HashMap<u64, String>,
    task_names: HashMap<u64, String>,
    /// Events per task, same order as `tasks`.
    events: Vec<Vec<TaskEvent>>,
    closed: Vec<bool>,
}

impl Analysis {
    /// Replays `dump` as the seed's tool does, naming addresses with `program` (ELF addresses
    /// are recorded ones minus `bias`).
    pub fn run(dump: &Dump, program: &Program, bias: u64) -> Analysis {
        let mut tasks: Vec<(TaskKey, TaskState)> = Vec::new();
        let mut index: HashMap<TaskKey, usize> = HashMap::new();
        fn task_index(
            tasks: &mut Vec<(TaskKey, TaskState)>,
            index: &mut HashMap<TaskKey, usize>,
            key: TaskKey,
        ) -> usize {
            *index.entry(key).or_insert_with(|| {
                tasks.push((key, TaskState::default()));
                tasks.len() - 1
            })
        }
        let mut a = Analysis {
            calls: Vec::new(),
            functions: HashMap::new(),
            tasks: Vec::new(),
            first_time: dump.records.first().map(|r| r.time),
            last_time: dump.records.last().map(|r| r.time),
            functions_found: 0,
            tasks_found: 0,
            enters_without_exit: 0,
            exits_without_enter: 0,
            task_mismatches: 0,
            max_depth: 0,
            unnamed_functions: 0,
            bias,
            names: HashMap::new(),
            task_names: HashMap::new(),
            events: Vec::new(),
            closed: Vec::new(),
        };
        // The task running now (between a TASK_EXIT and its TASK_ENTRY: the one that left,
        // stopped). Records before the first task record go to the task key `None`, which
        // the first TASK_EXIT names.
        let mut current: Option<usize> = None;
        // In order of first appearance: unnamed ones are numbered in that order.
        let mut function_addresses: Vec<u64> = Vec::new();
        let mut seen_functions = HashSet::new();
        let mut task_handles: Vec<u64> = Vec::new();
        let mut serial = 0usize;
        // The task of each call, by index: the task `None` may be named later.
        let mut call_tasks: Vec<usize> = Vec::new();
        for r in &dump.records {
            match r.kind {
                RecordType::TaskExit | RecordType::TaskEntry => {
                    if !task_handles.contains(&r.address) {
                        task_handles.push(r.address);
                    }
                }
                _ => {
                    if seen_functions.insert(r.address) {
                        function_addresses.push(r.address);
                    }
                }
            }
            match r.kind {
                RecordType::TaskExit => {
                    let i = match current {
                        // The records so far belong to the task the first switch leaves.
                        Some(i) if tasks[i].0.is_none() => {
                            index.remove(&None);
                            tasks[i].0 = Some(r.address);
                            index.insert(Some(r.address), i);
                            i
                        }
                        Some(i) => {
                            if tasks[i].0 != Some(r.address) {
                                a.task_mismatches += 1;
                            }
                            i
                        }
                        None => task_index(&mut tasks, &mut index, Some(r.address)),
                    };
                    tasks[i].1.stop(r.time);
                    current = Some(i);
                }
                RecordType::TaskEntry => {
                    if let Some(i) = current {
                        // Stopped already, unless its TASK_EXIT is missing (then the records
                        // before stay with the task `None` if no switch named it).
                        tasks[i].1.stop(r.time);
                    }
                    let i = task_index(&mut tasks, &mut index, Some(r.address));
                    tasks[i].1.running_since = Some(r.time);
                    current = Some(i);
                }
                RecordType::FuncEntry | RecordType::FuncExit => {
                    let i = match current {
                        Some(i) => i,
                        None => {
                            let i = task_index(&mut tasks, &mut index, None);
                            tasks[i].1.running_since = Some(r.time);
                            current = Some(i);
                            i
                        }
                    };
                    let state = &mut tasks[i].1;
                    let task_time = state.task_time(r.time);
                    if r.kind == RecordType::FuncEntry {
                        state.stack.push(Frame {
                            address: r.address,
                            enter_time: r.time,
                            enter_task_time: task_time,
                            child_inclusive: 0,
                            serial,
                        });
                        state.events.push(TaskEvent {
                            entry: true,
                            address: r.address,
                            task_time,
                            serial,
                        });
                        a.closed.push(false);
                        serial += 1;
                        a.max_depth = a.max_depth.max(state.stack.len());
                        continue;
                    }
                    let Some(at) = state.stack.iter().rposition(|f| f.address == r.address) else {
                        a.exits_without_enter += 1;
                        continue;
                    };
                    while state.stack.len() > at {
                        let unwound = state.stack.len() > at + 1;
                        if unwound {
                            a.enters_without_exit += 1;
                        }
                        let Some(frame) = state.stack.pop() else {
                            break;
                        };
                        let inclusive = task_time.saturating_sub(frame.enter_task_time);
                        let exclusive = inclusive.saturating_sub(frame.child_inclusive);
                        if let Some(parent) = state.stack.last_mut() {
                            parent.child_inclusive =
                                parent.child_inclusive.saturating_add(inclusive);
                        }
                        state.events.push(TaskEvent {
                            entry: false,
                            address: frame.address,
                            task_time,
                            serial: frame.serial,
                        });
                        a.closed[frame.serial] = true;
                        let s = a.functions.entry(frame.address).or_default();
                        if s.calls == 0 {
                            s.min_exclusive = exclusive;
                        }
                        s.calls += 1;
                        s.total_exclusive = s.total_exclusive.saturating_add(exclusive);
                        s.max_exclusive = s.max_exclusive.max(exclusive);
                        s.min_exclusive = s.min_exclusive.min(exclusive);
                        s.total_inclusive = s.total_inclusive.saturating_add(inclusive);
                        s.max_inclusive = s.max_inclusive.max(inclusive);
                        call_tasks.push(i);
                        a.calls.push(Call {
                            address: frame.address,
                            task: None,
                            depth: state.stack.len() + 1,
                            enter_time: frame.enter_time,
                            exit_time: r.time,
                            inclusive,
                            exclusive,
                            unwound,
                        });
                    }
                }
            }
        }
        if let (Some(i), Some(last)) = (current, a.last_time) {
            tasks[i].1.stop(last);
        }
        a.enters_without_exit += tasks.iter().map(|(_, t)| t.stack.len() as u64).sum::<u64>();
        for (call, &i) in a.calls.iter_mut().zip(&call_tasks) {
            call.task = tasks[i].0;
        }
        a.functions_found = function_addresses.len();
        a.tasks_found = task_handles.len();

        // Names: functions and tasks from the ELF, else "?function #n" and "?task #n" in order
        // of first appearance, as the seed's tool names "task or function" it cannot find in
        // the .out file (seeds/ti-c6000-function-hooks.txt: "in the format like ?task #1").
        // The Address column keeps each function's ELF address.
        for &address in &function_addresses {
            let elf_address = address.wrapping_sub(bias);
            let name = program.name(elf_address).unwrap_or_else(|| {
                a.unnamed_functions += 1;
                format!("?function #{}", a.unnamed_functions)
            });
            a.names.insert(address, name);
        }
        let mut unnamed = 0;
        for &handle in &task_handles {
            // A null handle is no task's: what ran before a scheduler's first task (FreeRTOS's
            // first switch is from NULL), not whatever symbols sit at address 0.
            if handle == 0 {
                a.task_names.insert(handle, "(no task)".to_string());
                continue;
            }
            let name = program.name(handle.wrapping_sub(bias)).unwrap_or_else(|| {
                unnamed += 1;
                format!("?task #{unnamed}")
            });
            a.task_names.insert(handle, name);
        }
        for (key, state) in tasks {
            a.tasks.push((key, state.stats));
            a.events.push(state.events);
        }
        a
    }

    /// The name of a function address.
    pub fn function_name(&self, address: u64) -> String {
        self.names
            .get(&address)
            .cloned()
            .unwrap_or_else(|| hex_name(address))
    }

    /// The ELF address of a recorded function address, as the CSVs' Address column shows it
    /// (the same in every run of a position-independent executable, as `nm` shows it).
    pub fn elf_address(&self, address: u64) -> String {
        hex_name(address.wrapping_sub(self.bias))
    }

    /// The name of a task: its symbol, `?task #n`, or `(no task)` for records before any
    /// task switch names their task.
    pub fn task_name(&self, task: TaskKey) -> String {
        match task {
            None => "(no task)".to_string(),
            Some(h) => self
                .task_names
                .get(&h)
                .cloned()
                .unwrap_or_else(|| hex_name(h)),
        }
    }

    /// Timestamp of the last record minus that of the first.
    pub fn total_cycles(&self) -> u64 {
        match (self.first_time, self.last_time) {
            (Some(f), Some(l)) => l.saturating_sub(f),
            _ => 0,
        }
    }

    /// Cycles spent in recorded functions: the sum of every call's exclusive cycles.
    pub fn function_valid_cycles(&self) -> u64 {
        self.functions
            .values()
            .fold(0u64, |s, f| s.saturating_add(f.total_exclusive))
    }

    /// Cycles the named tasks ran.
    pub fn task_valid_cycles(&self) -> u64 {
        self.tasks
            .iter()
            .filter(|(k, _)| k.is_some())
            .fold(0u64, |s, (_, t)| s.saturating_add(t.total))
    }

    /// `PREFIX_call_list.csv`: one line per completed call, in order of completion.
    pub fn write_call_list(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        w.write_record([
            "Function",
            "EnterTSC",
            "ExitTSC",
            "InclusiveCycles",
            "ExclusiveCycles",
            "Task",
            "Depth",
            "Address",
        ])?;
        for c in &self.calls {
            w.write_record([
                self.function_name(c.address),
                c.enter_time.to_string(),
                c.exit_time.to_string(),
                c.inclusive.to_string(),
                c.exclusive.to_string(),
                c.task.map_or(String::new(), |_| self.task_name(c.task)),
                c.depth.to_string(),
                self.elf_address(c.address),
            ])?;
        }
        w.flush()
    }

    /// `PREFIX_profile.csv`: the totals line, the functions' part and the tasks' part.
    pub fn write_profile(&self, out: &mut dyn Write) -> io::Result<()> {
        let total = self.total_cycles();
        let mut buf = Vec::new();
        {
            let mut w = csv::WriterBuilder::new()
                .flexible(true)
                .from_writer(&mut buf);
            let (first, last) = (self.first_time.unwrap_or(0), self.last_time.unwrap_or(0));
            w.write_record([
                "FirstTSC".to_string(),
                first.to_string(),
                "LastTSC".to_string(),
                last.to_string(),
                "TotalCycles".to_string(),
                total.to_string(),
            ])?;
            let valid = self.function_valid_cycles();
            w.write_record([
                "Functions ValidCycles".to_string(),
                valid.to_string(),
                "TotalCycles".to_string(),
                total.to_string(),
                "Valid/Total %".to_string(),
                percent(valid, total),
            ])?;
            w.write_record([
                "Function",
                "ExecuteTimes",
                "TotalExcluCycle",
                "AverageExcluCycle",
                "MaxExcluCycle",
                "MinExcluCycle",
                "AverageIncluCycle",
                "MaxIncluCycle",
                "Percentage",
                "Address",
            ])?;
            let mut rows: Vec<(String, u64, &FunctionStats)> = self
                .functions
                .iter()
                .map(|(&a, s)| (self.function_name(a), a, s))
                .collect();
            rows.sort_by(|(na, aa, a), (nb, ab, b)| {
                b.total_exclusive
                    .cmp(&a.total_exclusive)
                    .then_with(|| na.cmp(nb))
                    .then(aa.cmp(ab))
            });
            for (name, address, s) in rows {
                w.write_record([
                    name,
                    s.calls.to_string(),
                    s.total_exclusive.to_string(),
                    average(s.total_exclusive, s.calls).to_string(),
                    s.max_exclusive.to_string(),
                    s.min_exclusive.to_string(),
                    average(s.total_inclusive, s.calls).to_string(),
                    s.max_inclusive.to_string(),
                    percent(s.total_exclusive, valid),
                    self.elf_address(address),
                ])?;
            }
            w.flush()?;
        }
        buf.push(b'\n');
        {
            let mut w = csv::WriterBuilder::new()
                .flexible(true)
                .from_writer(&mut buf);
            let valid = self.task_valid_cycles();
            w.write_record([
                "Tasks ValidCycles".to_string(),
                valid.to_string(),
                "TotalCycles".to_string(),
                total.to_string(),
                "Valid/Total %".to_string(),
                percent(valid, total),
            ])?;
            w.write_record([
                "Task",
                "ExecuteTimes",
                "TotalCycle",
                "AverageCycle",
                "MaxCycle",
                "MinCycle",
                "Percentage",
            ])?;
            let mut rows: Vec<(String, &TaskStats)> = self
                .tasks
                .iter()
                .filter(|(k, _)| k.is_some())
                .map(|(k, s)| (self.task_name(*k), s))
                .collect();
            rows.sort_by(|(na, a), (nb, b)| b.total.cmp(&a.total).then_with(|| na.cmp(nb)));
            for (name, s) in rows {
                w.write_record([
                    name,
                    s.runs.to_string(),
                    s.total.to_string(),
                    average(s.total, s.runs).to_string(),
                    s.max.to_string(),
                    s.min.to_string(),
                    percent(s.total, valid),
                ])?;
            }
            w.flush()?;
        }
        out.write_all(&buf)
    }

    /// The calls as a `.hktrace`: one thread per task (thread id = its position, 1 = first;
    /// THREAD chunk named after the task), timestamps in cycles of the task's own running
    /// time, no clock rate. Only calls in the call list are in it, so the replay layer finds
    /// every entry matched.
    pub fn to_hktrace(&self) -> Vec<u8> {
        let threads: Vec<Vec<TraceRecord>> = self
            .events
            .iter()
            .map(|events| {
                events
                    .iter()
                    .filter(|e| self.closed.get(e.serial).copied().unwrap_or(false))
                    .map(|e| {
                        let time = e.task_time;
                        if e.entry {
                            TraceRecord::entry(time, e.address)
                        } else {
                            TraceRecord::exit(time, e.address)
                        }
                    })
                    .collect()
            })
            .collect();
        let mut header = Header::new(Endian::native());
        header.flags = FLAG_COMPLETE;
        header.records = threads.iter().map(|t| t.len() as u64).sum();
        // TI addresses have their 2 type bits cleared, so bit 1 (format version 2's exit mark)
        // is free and writing cannot fail.
        let mut w = Writer::new(Vec::new(), &header).expect("writing to a Vec cannot fail");
        for (i, ((key, _), records)) in self.tasks.iter().zip(&threads).enumerate() {
            let tid = i as u64 + 1;
            for chunk in records.chunks(65536) {
                w.events(tid, chunk).expect("writing to a Vec cannot fail");
            }
            w.thread(tid, tid, &self.task_name(*key))
                .expect("writing to a Vec cannot fail");
        }
        w.into_inner()
    }

    /// The function names, by address, for the call graph.
    pub fn function_names(&self) -> HashMap<u64, String> {
        self.names.clone()
    }
}

/// Mean rounded to the nearest integer.
fn average(total: u64, n: u64) -> u64 {
    if n == 0 {
        0
    } else {
        ((u128::from(total) + u128::from(n) / 2) / u128::from(n)) as u64
    }
}

/// `part` as a percentage of `whole`, two decimals.
fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "0.00".to_string()
    } else {
        format!("{:.2}", part as f64 * 100.0 / whole as f64)
    }
}

/// Options of `hookprof ti`, independent of any command line.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The program's ELF file.
    pub exe: PathBuf,
    /// Names from every symbol, not only global ones.
    pub all_symbols: bool,
    /// The run-time address of `ProfileData` (for a binary dump of a position-independent
    /// executable).
    pub profile_data: Option<u64>,
    /// Words per record (3: the seed's `Hook_Record`, 4: hookcc's on a 64-bit target); `None`:
    /// from the ELF file and the dump ([`parse_dump`]).
    pub record_words: Option<u8>,
}

/// Fewer distinct function addresses than this say too little to refuse a dump: its size alone
/// cannot tell a headerless record dump from noise, its agreement with the ELF can.
const MIN_ADDRESSES_TO_JUDGE: usize = 32;

/// How many of the distinct function addresses of the dump's entry and exit records, less the
/// load bias, are function symbols of the program (local ones too), and of how many.
pub fn agreement(program: &Program, dump: &Dump, bias: u64) -> (usize, usize) {
    let addresses: HashSet<u64> = dump
        .records
        .iter()
        .filter(|r| matches!(r.kind, RecordType::FuncEntry | RecordType::FuncExit))
        .map(|r| r.address)
        .collect();
    let agreeing = addresses
        .iter()
        .filter(|&&a| {
            program
                .functions
                .binary_search(&(a.wrapping_sub(bias) & !3))
                .is_ok()
        })
        .count();
    (agreeing, addresses.len())
}

/// A dump read, replayed and rendered.
#[derive(Clone, Debug)]
pub struct Processed {
    pub dump: Dump,
    /// How the dump's record layout was chosen.
    pub layout_choice: LayoutChoice,
    pub bias: (u64, Bias),
    pub analysis: Analysis,
    pub call_list: Vec<u8>,
    pub profile: Vec<u8>,
    pub warnings: Vec<String>,
}

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|error| Error::Io {
        path: path.to_path_buf(),
        error,
    })
}

/// Reads, replays and renders the dump at `dump_path`.
pub fn process_file(dump_path: &Path, options: &Options) -> Result<Processed, Error> {
    let elf = read(&options.exe)?;
    let program = Program::parse(&elf, options.all_symbols).map_err(|error| Error::Elf {
        path: options.exe.clone(),
        error,
    })?;
    let data =
        crate::input::read::read_bounded(dump_path, crate::input::read::MAX_DUMP_BYTES).map_err(|error| Error::Io {
            path: dump_path.to_path_buf(),
            error,
        })?;
    let (dump, choice) =
        parse_dump(&data, program.layout, options.record_words).map_err(|error| Error::Dump {
            path: dump_path.to_path_buf(),
            error,
        })?;
    let mut processed = process(dump, &program, options.profile_data);
    processed.layout_choice = choice;
    // Fewer than a quarter of the addresses agreeing, with enough of them to judge: noise,
    // or another program's dump (whose names would all be wrong).
    let (agreeing, distinct) = agreement(&program, &processed.dump, processed.bias.0);
    if distinct >= MIN_ADDRESSES_TO_JUDGE && agreeing * 4 < distinct {
        return Err(Error::NotThisProgram {
            path: dump_path.to_path_buf(),
            exe: options.exe.clone(),
            agreeing,
            distinct,
        });
    }
    Ok(processed)
}

/// Replays and renders `dump`.
pub fn process(dump: Dump, program: &Program, profile_data: Option<u64>) -> Processed {
    let bias = load_bias(program, &dump, profile_data);
    // Without the bias, any name would be a guess.
    let no_names;
    let names = if bias.1 == Bias::Unknown {
        no_names = Program::from_names(program.layout, []);
        &no_names
    } else {
        program
    };
    let analysis = Analysis::run(&dump, names, bias.0);
    let mut call_list = Vec::new();
    analysis
        .write_call_list(&mut call_list)
        .expect("writing to a Vec cannot fail");
    let mut profile = Vec::new();
    analysis
        .write_profile(&mut profile)
        .expect("writing to a Vec cannot fail");
    let warnings = warnings(&dump, program, &bias, &analysis);
    Processed {
        dump,
        layout_choice: LayoutChoice::Elf,
        bias,
        analysis,
        call_list,
        profile,
        warnings,
    }
}

fn warnings(dump: &Dump, program: &Program, bias: &(u64, Bias), a: &Analysis) -> Vec<String> {
    let mut w = Vec::new();
    if dump.records.is_empty() {
        w.push(
            "the dump holds no valid record (was hook_init called, and the dump taken from \
             ProfileData?)"
                .to_string(),
        );
    }
    if let DumpFormat::CcsHex { declared_words, .. } = dump.format {
        let words = dump.slots * dump.layout.record_size() / 4;
        if declared_words != words {
            w.push(format!(
                "the CCS header's length is 0x{declared_words:x} words but 0x{words:x} follow; \
                 the words that follow were read"
            ));
        }
    }
    match bias.1 {
        Bias::Unknown => w.push(
            "the program is position-independent and the load bias could not be found (a \
             binary dump has no address, and the recorded addresses match no bias of the \
             ELF's functions): names are not resolved. Give --profile-data with ProfileData's \
             address (HOOKCC_TI_VERBOSE=1 prints it), decode the .dat file, or build with \
             -no-pie"
                .to_string(),
        ),
        Bias::FromProfileData { .. } | Bias::Fixed | Bias::Inferred { .. } => {}
    }
    if program.position_independent && program.profile_data.is_none() {
        if let DumpFormat::CcsHex { .. } = dump.format {
            w.push(
                "the ELF file has no ProfileData symbol, so the CCS header's starting address \
                 cannot give the load bias; it was inferred from the function addresses"
                    .to_string(),
            );
        }
    }
    if a.unnamed_functions > 0 && bias.1 != Bias::Unknown {
        w.push(format!(
            "{} of the {} function addresses have no symbol in the ELF file and are \
             shown as ?function #1, #2, …, their ELF addresses in the Address column (is it the program \
             that wrote the dump?)",
            a.unnamed_functions,
            a.names.len()
        ));
    }
    if dump.backward_steps > 0 {
        w.push(format!(
            "the timestamp goes backwards {} times between consecutive records (several \
             threads or cores recording, or a counter that is not monotonic): cycles around \
             those points are not exact",
            dump.backward_steps
        ));
    }
    if a.task_mismatches > 0 {
        w.push(format!(
            "{} TASK_EXIT records name another task than the one running (records lost?)",
            a.task_mismatches
        ));
    }
    w
}

impl Processed {
    /// The status report: what the seed's tool shows in its status window.
    pub fn status(&self) -> String {
        let d = &self.dump;
        let a = &self.analysis;
        let format = match d.format {
            DumpFormat::Binary => "binary".to_string(),
            DumpFormat::CcsHex { start_address, .. } => {
                format!("CCS hex, saved from 0x{start_address:x}")
            }
        };
        let how = match self.layout_choice {
            LayoutChoice::Elf => "as the ELF file says".to_string(),
            LayoutChoice::Given => "--record-words".to_string(),
            LayoutChoice::Detected {
                other_backward_steps: Some(steps),
            } => format!(
                "the seed's Hook_Record, detected: read as 4-word records the timestamps step \
                 back {steps} times"
            ),
            LayoutChoice::Detected {
                other_backward_steps: None,
            } => "the seed's Hook_Record, detected: the dump is no whole number of 4-word \
                  records, and its timestamps run in order"
                .to_string(),
        };
        let mut s = format!(
            "Records: {} valid, {} invalid ({format}, {} records: {how})\n",
            d.records.len(),
            d.invalid,
            d.layout
        );
        if let Some(slot) = d.oldest_slot {
            s.push_str(&format!(
                "Circular buffer wrapped: the oldest record is record {slot} of the dump\n"
            ));
        }
        match &self.bias.1 {
            Bias::Fixed => {}
            Bias::FromProfileData { runtime, given } => s.push_str(&format!(
                "Load bias: 0x{:x} (ProfileData at 0x{runtime:x}, {})\n",
                self.bias.0,
                if *given {
                    "--profile-data"
                } else {
                    "the CCS header"
                }
            )),
            Bias::Inferred {
                matched,
                considered,
            } => s.push_str(&format!(
                "Load bias: 0x{:x} (inferred: {matched} of {considered} function addresses are \
                 symbols with it)\n",
                self.bias.0
            )),
            Bias::Unknown => s.push_str("Load bias: unknown\n"),
        }
        s.push_str(&format!("Functions found: {}\n", a.functions_found));
        s.push_str(&format!("Tasks found: {}\n", a.tasks_found));
        s.push_str(&format!(
            "Enter records without exit: {}\n",
            a.enters_without_exit
        ));
        s.push_str(&format!(
            "Exit records without enter: {}\n",
            a.exits_without_enter
        ));
        s.push_str(&format!("Maximum call stack depth: {}\n", a.max_depth));
        s
    }

    /// Writes `PREFIX_call_list.csv` and `PREFIX_profile.csv`, never over `input`; returns
    /// their paths.
    pub fn write_files(&self, prefix: &Path, input: &Path) -> Result<[PathBuf; 2], Error> {
        let path = |suffix: &str| {
            let mut p = prefix.as_os_str().to_owned();
            p.push(suffix);
            PathBuf::from(p)
        };
        let files = [path("_call_list.csv"), path("_profile.csv")];
        for f in &files {
            if crate::output::file::same_file(input, f) {
                return Err(Error::OutputIsInput { path: f.clone() });
            }
        }
        for (f, bytes) in files.iter().zip([&self.call_list, &self.profile]) {
            crate::output::file::write_file(f, Some(input), bytes)
                .map_err(|error| Error::Output(Box::new(error)))?;
        }
        Ok(files)
    }
}

/// The default output prefix: the dump's path without its extension.
pub fn default_prefix(dump: &Path) -> PathBuf {
    dump.with_extension("")
}

/// Whether the file at `path` is a `.hktrace` (else `hookprof callgraph` reads it as a TI
/// dump).
pub fn is_hktrace(path: &Path) -> Result<bool, Error> {
    use std::io::Read;
    let mut magic = [0u8; 8];
    let mut f = std::fs::File::open(path).map_err(|error| Error::Io {
        path: path.to_path_buf(),
        error,
    })?;
    let n = f.read(&mut magic).map_err(|error| Error::Io {
        path: path.to_path_buf(),
        error,
    })?;
    Ok(n == 8 && magic == crate::input::format::MAGIC)
}

/// The Dynamic Call Graph of a TI dump, one section per task. Returns the text and the
/// warnings to show.
pub fn callgraph_file(
    dump_path: &Path,
    options: &Options,
) -> Result<(Vec<u8>, Vec<String>), Error> {
    let processed = process_file(dump_path, options)?;
    Ok((callgraph(&processed.analysis), processed.warnings))
}

/// The Dynamic Call Graph of an analysis: its calls through the replay layer, tasks as
/// threads, cycles of task time.
pub fn callgraph(analysis: &Analysis) -> Vec<u8> {
    let trace = analysis.to_hktrace();
    // Written just now by format::Writer: reading it back is the reader's round trip, which
    // its own tests check; a failure would be a bug here, not bad input.
    let profile = crate::input::format::Trace::new(&trace)
        .and_then(|t| crate::analysis::model::Profile::from_trace(&t))
        .expect("the trace Analysis::to_hktrace writes reads back");
    let mut names = analysis.function_names();
    let mut out = Vec::new();
    crate::output::callgraph::render(
        &profile,
        &mut names,
        crate::output::callgraph::Times::Cycles,
        &mut out,
    )
    .expect("writing to a Vec cannot fail");
    out
}
