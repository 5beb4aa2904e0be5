//! `hookprof core`: the records a traced program still held in memory when it died, read out of
//! its core file (a kernel's core dump, or `gcore`'s of a live process) into a trace.
//!
//! Under `HOOKCC_MODE=ring` nothing is written until a snapshot: a program killed by a signal
//! the runtime does not see (SIGKILL, the OOM killer, SIGQUIT with a core dump), or one that
//! hangs, leaves its last calls only in memory. Under the default mode the same holds for the
//! records since each thread's last full buffer. The runtime exports `hookcc_trace_state`
//! (runtime/src/trace_format.h, `struct hkt_state`): where the list of threads is and where each
//! thread's fields are. This module finds it through the executable's symbol table, follows the
//! list in the core's memory, and writes each thread's records as the runtime's snapshot would
//! (a RING chunk with what the ring no longer held, then the records, oldest first).
//!
//! The clock's rate is not in memory where it is measured (x86's TSC): it is then measured on
//! this machine (right when the core was taken here; `--ticks-per-second` otherwise).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use object::elf::{NT_FILE, PT_LOAD, PT_NOTE};
use object::read::elf::{ElfFile64, FileHeader, ProgramHeader};
use object::{Endianness, Object, ObjectSegment, ObjectSymbol};

use crate::input::format::{
    chunk_type, Clock, Endian, Header, Module, Record, Writer, FLAG_COMPLETE,
};

/// `HKT_STATE_MAGIC`, `HKT_STATE_VERSION` and the size of `struct hkt_state`.
const STATE_MAGIC: &[u8; 8] = b"HKSTATE\0";
const STATE_VERSION: u32 = 1;
const STATE_SIZE: usize = 88;
/// Threads followed at most (a corrupt list must not loop).
const MAX_THREADS: usize = 1 << 16;

/// What went wrong, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
    #[error("{}: {what}", path.display())]
    Bad { path: PathBuf, what: String },
}

/// What was found.
#[derive(Debug, Default)]
pub struct CoreSummary {
    pub threads: usize,
    pub records: u64,
    /// Records the rings had overwritten since their last snapshot.
    pub dropped: u64,
    pub ring: bool,
    /// The clock's rate was measured here, not known from the target.
    pub rate_measured: bool,
    pub ticks_per_second: u64,
}

/// The core's memory: its PT_LOAD segments by address.
struct Memory<'a> {
    segments: Vec<(u64, &'a [u8])>,
}

impl Memory<'_> {
    fn bytes(&self, address: u64, len: usize) -> Option<&[u8]> {
        self.segments.iter().find_map(|&(start, data)| {
            let from = address.checked_sub(start)? as usize;
            data.get(from..from.checked_add(len)?)
        })
    }

    fn u64(&self, address: u64) -> Option<u64> {
        self.bytes(address, 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
    }

    fn u32(&self, address: u64) -> Option<u32> {
        self.bytes(address, 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
    }

    fn u16_at(bytes: &[u8], at: usize) -> u64 {
        u64::from(u16::from_le_bytes([bytes[at], bytes[at + 1]]))
    }
}

/// A file the core says was mapped: its name, its mappings (start, end, file offset).
type Mappings = BTreeMap<PathBuf, Vec<(u64, u64, u64)>>;

/// The NT_FILE note: the files mapped into the process.
fn mapped_files(elf: &ElfFile64<'_, Endianness>, data: &[u8]) -> Mappings {
    let endian = elf.endian();
    let mut files = Mappings::new();
    for phdr in elf.elf_program_headers() {
        if phdr.p_type(endian) != PT_NOTE {
            continue;
        }
        let Ok(Some(mut notes)) = phdr.notes(endian, data) else {
            continue;
        };
        while let Ok(Some(note)) = notes.next() {
            if note.n_type(endian) != NT_FILE || note.name() != b"CORE" {
                continue;
            }
            let desc = note.desc();
            let word = |i: usize| {
                desc.get(i * 8..i * 8 + 8)
                    .map(|b| u64::from_le_bytes(b.try_into().unwrap()))
            };
            let (Some(count), Some(page)) = (word(0), word(1)) else {
                continue;
            };
            let count = count.min(1 << 20) as usize;
            let mut names = desc
                .get(16 + count * 24..)
                .unwrap_or(&[])
                .split(|&b| b == 0);
            for i in 0..count {
                let (Some(start), Some(end), Some(offset)) =
                    (word(2 + i * 3), word(3 + i * 3), word(4 + i * 3))
                else {
                    break;
                };
                let Some(name) = names.next() else { break };
                let name = PathBuf::from(String::from_utf8_lossy(name).into_owned());
                files
                    .entry(name)
                    .or_default()
                    .push((start, end, offset.saturating_mul(page)));
            }
        }
    }
    files
}

/// The clock's rate on this machine: x86's TSC against the monotonic clock over 50 ms.
pub fn measured_rate() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc has no preconditions on x86-64.
        let tsc = || unsafe { std::arch::x86_64::_rdtsc() };
        let (t0, i0) = (tsc(), std::time::Instant::now());
        std::thread::sleep(std::time::Duration::from_millis(50));
        let (t1, elapsed) = (tsc(), i0.elapsed());
        Some(((t1 - t0) as f64 / elapsed.as_secs_f64()) as u64)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// Reads `program`'s records out of `core` into a trace at `output`.
pub fn core_to_trace(
    program: &Path,
    core: &Path,
    output: &Path,
    ticks_per_second: Option<u64>,
) -> Result<CoreSummary, CoreError> {
    let io_err = |path: &Path| {
        let path = path.to_path_buf();
        move |error| CoreError::Io {
            path: path.clone(),
            error,
        }
    };
    let bad = |path: &Path, what: String| CoreError::Bad {
        path: path.to_path_buf(),
        what,
    };
    let core_data = std::fs::read(core).map_err(io_err(core))?;
    let exe_data = std::fs::read(program).map_err(io_err(program))?;
    let elf = ElfFile64::<Endianness>::parse(&*core_data).map_err(|e| {
        bad(
            core,
            format!(
                "not a 64-bit ELF core file ({e}); hookprof core reads x86-64 and AArch64 cores"
            ),
        )
    })?;
    if elf.elf_header().e_type(elf.endian()) != object::elf::ET_CORE {
        return Err(bad(core, "an ELF file, but not a core file".into()));
    }
    if elf.endian() != Endianness::Little {
        return Err(bad(core, "a big-endian core: not read yet".into()));
    }
    let endian = elf.endian();
    let mut segments = Vec::new();
    for phdr in elf.elf_program_headers() {
        if phdr.p_type(endian) == PT_LOAD {
            if let Ok(data) = phdr.data(endian, &*core_data) {
                segments.push((phdr.p_vaddr(endian), data));
            }
        }
    }
    let memory = Memory { segments };
    let files = mapped_files(&elf, &core_data);

    let exe = object::File::parse(&*exe_data)
        .map_err(|e| bad(program, format!("not an ELF executable ({e})")))?;
    let state_symbol = exe
        .symbols()
        .chain(exe.dynamic_symbols())
        .find(|s| s.name() == Ok("hookcc_trace_state"))
        .ok_or_else(|| {
            bad(
                program,
                "has no symbol hookcc_trace_state: not linked with the trace runtime of \
                 hookcc --trace (or stripped)"
                    .into(),
            )
        })?;
    // Where the executable was loaded: its mappings in the core, against its lowest segment.
    let canonical = program
        .canonicalize()
        .unwrap_or_else(|_| program.to_path_buf());
    let low_vaddr = exe.segments().map(|s| s.address()).min().unwrap_or(0) & !0xfff;
    let exe_maps = files
        .get(&canonical)
        .or_else(|| {
            files
                .iter()
                .find(|(p, _)| p.file_name() == program.file_name())
                .map(|(_, m)| m)
        })
        .ok_or_else(|| {
            bad(
                core,
                format!(
                    "has no mapping of {}: not a core of this program",
                    program.display()
                ),
            )
        })?;
    let exe_start = exe_maps.iter().map(|m| m.0).min().unwrap_or(0);
    let bias = if exe.kind() == object::ObjectKind::Dynamic {
        exe_start.wrapping_sub(low_vaddr)
    } else {
        0
    };

    let state_address = state_symbol.address().wrapping_add(bias);
    let state = memory.bytes(state_address, STATE_SIZE).ok_or_else(|| {
        bad(
            core,
            format!("does not hold hookcc_trace_state at {state_address:#x}"),
        )
    })?;
    if &state[..8] != STATE_MAGIC {
        return Err(bad(
            core,
            "the trace runtime had not started (hookcc_trace_state is empty)".into(),
        ));
    }
    let word = |at: usize| u64::from_le_bytes(state[at..at + 8].try_into().unwrap());
    let version = u32::from_le_bytes(state[8..12].try_into().unwrap());
    if version != STATE_VERSION {
        return Err(bad(
            core,
            format!("hookcc_trace_state version {version}; this hookprof reads {STATE_VERSION}"),
        ));
    }
    let ring = u32::from_le_bytes(state[12..16].try_into().unwrap()) != 0;
    let (threads_at, start_ticks, fixed_rate, pid, start_ns) =
        (word(16), word(24), word(32), word(40), word(48));
    let buffer_records = u64::from(u32::from_le_bytes(state[56..60].try_into().unwrap()));
    let off = |i: usize| Memory::u16_at(state, 60 + 2 * i);
    let (o_next, o_buf, o_end, o_pos, o_held) = (off(0), off(1), off(2), off(3), off(4));
    let (o_tid, o_seq, o_laps, o_mark, o_life, o_final) =
        (off(6), off(7), off(8), off(9), off(10), off(11));
    let live = Memory::u16_at(state, 84);

    let mut summary = CoreSummary {
        ring,
        ..CoreSummary::default()
    };
    let cut = |what: &str| bad(core, format!("{what} is not in the core's memory"));
    let read_records = |from: u64, to: u64| -> Result<Vec<Record>, CoreError> {
        let n = to.saturating_sub(from) / 16;
        let bytes = memory
            .bytes(from, (n * 16) as usize)
            .ok_or_else(|| cut("a thread's buffer"))?;
        Ok(bytes
            .chunks_exact(16)
            .map(|r| {
                let time = u64::from_le_bytes(r[..8].try_into().unwrap());
                let word = u64::from_le_bytes(r[8..].try_into().unwrap());
                if word & 2 != 0 {
                    Record::exit(time, word & !2)
                } else {
                    Record::entry(time, word)
                }
            })
            .collect())
    };
    // Per thread, in list order: (tid, sequence, dropped, records).
    let mut threads = Vec::new();
    let mut t = memory
        .u64(threads_at)
        .ok_or_else(|| cut("the list of threads"))?;
    while t != 0 && threads.len() < MAX_THREADS {
        let field = |o: u64| memory.u64(t + o).ok_or_else(|| cut("a thread's state"));
        let next = field(o_next)?;
        let life = u64::from(
            memory
                .u32(t + o_life)
                .ok_or_else(|| cut("a thread's state"))?,
        );
        let written = memory.u32(t + o_final).unwrap_or(0) != 0;
        if life == live && !written {
            let (buf, end) = (field(o_buf)?, field(o_end)?);
            let pos = field(o_pos)?;
            let upto = if pos != 0 { pos } else { field(o_held)? };
            let (tid, sequence) = (field(o_tid)?, field(o_seq)?);
            if buf != 0 && buf <= upto && upto <= end && (end - buf) / 16 <= buffer_records {
                let mut records = Vec::new();
                let mut dropped = 0;
                if ring {
                    // As the runtime's snapshot: what the ring holds since the last one.
                    let laps = field(o_laps)?;
                    let mark = field(o_mark)?;
                    let mark = if mark >= buf && mark <= end {
                        mark
                    } else {
                        buf
                    };
                    let n = (end - buf) / 16;
                    let since = laps
                        .saturating_mul(n)
                        .saturating_add((upto - buf) / 16)
                        .saturating_sub((mark - buf) / 16);
                    if laps > 0 {
                        let from = if laps == 1 && mark > upto { mark } else { upto };
                        records.extend(read_records(from, end)?);
                        records.extend(read_records(buf, upto)?);
                    } else if upto >= mark {
                        records.extend(read_records(mark, upto)?);
                    }
                    dropped = since.saturating_sub(records.len() as u64);
                } else {
                    records = read_records(buf, upto)?;
                }
                summary.records += records.len() as u64;
                summary.dropped += dropped;
                threads.push((tid, sequence, dropped, records));
            }
        }
        t = next;
    }
    summary.threads = threads.len();

    let rate = match (ticks_per_second, fixed_rate) {
        (Some(r), _) => r,
        (None, r) if r != 0 => r,
        _ => {
            summary.rate_measured = true;
            measured_rate().unwrap_or(0)
        }
    };
    summary.ticks_per_second = rate;
    let last_tick = threads
        .iter()
        .filter_map(|t| t.3.iter().map(|r| r.time).max())
        .max()
        .unwrap_or(start_ticks);

    let mut header = Header::new(Endian::Little);
    header.pid = pid;
    header.start_realtime_ns = start_ns;
    header.ticks_per_second = rate;
    header.flags = FLAG_COMPLETE;
    header.records = summary.records;
    let file = File::create(output).map_err(io_err(output))?;
    let write = || -> io::Result<()> {
        let mut w = Writer::new(BufWriter::new(file), &header)?;
        w.exe(&canonical)?;
        for (path, maps) in &files {
            let Some(&(start, _, _)) = maps.iter().find(|m| m.2 == 0) else {
                continue;
            };
            let end = maps.iter().map(|m| m.1).max().unwrap_or(start);
            let is_exe = path == &canonical || maps == exe_maps;
            w.module(&Module {
                bias: if is_exe { bias } else { start },
                start,
                end,
                path: (!is_exe).then(|| path.clone()),
            })?;
        }
        for (tid, sequence, dropped, records) in &threads {
            if ring {
                w.raw_chunk(chunk_type::RING, *tid, &dropped.to_le_bytes())?;
            }
            for part in records.chunks(1 << 16) {
                w.events(*tid, part)?;
            }
            w.thread(*tid, *sequence, "")?;
        }
        w.clock(&Clock {
            ticks_per_second: rate,
            first_tick: start_ticks,
            last_tick,
            header_check: None,
        })?;
        w.into_inner().into_inner().map_err(|e| e.into_error())?;
        Ok(())
    };
    write().map_err(io_err(output))?;
    Ok(summary)
}
