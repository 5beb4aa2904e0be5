//! TI dumps (`hookprof ti`, docs/ti-post.md): a binary or CCS "32-bit Hex - C Style" dump
//! (detected) into records in time order ([`Dump::parse`], [`parse_dump`]); a wrapped circular
//! buffer is rotated to start at its oldest record (the record after the largest backward step
//! of the timestamp). Errors carry the byte offset (and the line of a `.dat` file); nothing
//! panics on any input. The ELF file the names come from: [`crate::input::ti_program`].

use std::fmt;

use crate::input::format::Endian;

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
