//! Records and the EVENTS chunk's decoder (plain and packed records), one at a time.

use std::fmt;
use std::path::PathBuf;

use super::layout::*;

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
    pub(super) bytes: Bytes<'a>,
    /// File offset of the first record, or of the stream.
    pub(super) offset: u64,
    pub(super) mask: u64,
    pub(super) version: u16,
    pub(super) packed: Option<PackedHead>,
}

/// The fixed part of a PACKED chunk.
#[derive(Clone, Copy, Debug)]
pub(super) struct PackedHead {
    pub(super) records: u32,
    pub(super) first_time: u64,
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
pub(super) struct PackDecoder<'a> {
    stream: &'a [u8],
    pos: usize,
    /// File offset of the stream's first byte.
    offset: u64,
    mask: u64,
    pub(super) index: u32,
    pub(super) records: u32,
    now: u64,
    last_new: u64,
    depth: u64,
    after_escape: bool,
    failed: bool,
    table: Vec<u64>,
    ring: Box<[u64; pack::STACK]>,
}

impl<'a> PackDecoder<'a> {
    pub(super) fn new(events: &Events<'a>, head: PackedHead) -> Self {
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

    pub(super) fn next_record(&mut self) -> Result<Record, FormatError> {
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
    pub(super) fn after_last(&mut self) -> Option<FormatError> {
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
