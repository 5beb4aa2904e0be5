//! The writer: a header, then chunks, in the layout [`super::layout`] defines.

use std::io::{self, Write};
use std::path::Path;

use super::chunks::*;
use super::events::*;
use super::layout::*;

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
