//! The typed payloads of the chunks other than EVENTS.

use std::path::PathBuf;

use super::events::*;
use super::layout::*;

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
    pub(super) thread: u64,
    /// The bytes of the chunk just before it (header and payload) and their offset; `None` if
    /// there is none (the CHECK chunk comes first, or after a hole or another CHECK chunk).
    pub(super) covered: Option<(u64, &'a [u8])>,
    pub(super) endian: Endian,
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
    pub(super) total_len: u64,
}

impl ChunkAt<'_> {
    /// Bytes the chunk occupies in the file, header included.
    pub fn total_len(&self) -> u64 {
        self.total_len
    }
}
