//! What the replay knows of a trace and of each thread when it ends: counts, misplaced
//! records, records outside the run.

use std::fmt;
use std::path::PathBuf;

use crate::analysis::ids::HashMap;
use crate::input::format::{
    BadChunk, Clock, FormatError, Header, Integrity, Module, Overhead, Trace,
};

use super::visitor::*;

/// What is known about one thread after replay.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadSummary {
    /// Linux TID from the chunk headers.
    pub tid: u64,
    /// Sequence number from the THREAD chunk (1 = first thread seen), if any.
    pub sequence: Option<u64>,
    /// Name from the THREAD chunk, if any.
    pub name: Option<String>,
    pub records: u64,
    pub entries: u64,
    pub exits: u64,
    /// Sum of the thread's LOST chunks.
    pub lost: u64,
    pub unmatched_entries: u64,
    pub unmatched_exits: u64,
    pub closed_at_end: u64,
    /// HOOKCC_MODE=ring: exits of frames entered before the thread's first window (their
    /// entries fell out of the ring): not errors, and not in the profile (no entry time).
    pub entered_before_window: u64,
    /// HOOKCC_MODE=ring: frames left open where records were dropped between two windows,
    /// closed at the last record before the gap (their times are lower bounds).
    pub closed_at_gap: u64,
    /// Frames closed by resync records (a `longjmp` came back to a frame below them;
    /// format version 3, docs/trace-format.md).
    pub closed_by_longjmp: u64,
    /// Count marks among the records (each `count_calls` counted calls of throttled
    /// functions: not calls; docs/trace-format.md, "Count marks").
    pub count_marks: u64,
    /// The thread's calls of throttled functions that were counted, not recorded, by address
    /// (its COUNTED chunks; empty in traces before them).
    pub counted: HashMap<u64, u64>,
    /// Timestamp of the thread's first record.
    pub first_time: Option<u64>,
    /// Largest timestamp of the thread (its last one when the clock is monotonic).
    pub last_time: Option<u64>,
    /// When the thread ended on its own, from its END chunk (none if the process's end
    /// finished it, or the trace is older than that chunk).
    pub end_time: Option<u64>,
    pub max_depth: u64,
    /// Ticks the thread was switched out (its SWITCH chunks), and the switches.
    pub offcpu_ticks: u64,
    pub switches: u64,
    /// Samples of the thread's CPU time outside the hooks (its SAMPLE chunks), and of them
    /// those that came while no frame was open.
    pub samples: u64,
    pub samples_outside: u64,
}

impl ThreadSummary {
    /// The number reports use for the thread: its sequence number from the THREAD chunk
    /// when the trace has one, else its TID.
    pub fn label(&self) -> u64 {
        self.sequence.unwrap_or(self.tid)
    }

    /// Ticks from the thread's first record to its last.
    pub fn span_ticks(&self) -> u64 {
        match (self.first_time, self.last_time) {
            (Some(first), Some(last)) => last.saturating_sub(first),
            _ => 0,
        }
    }
}

/// Everything about the trace apart from per-function statistics.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceSummary {
    pub header: Header,
    /// Path from the EXE chunk.
    pub exe: Option<PathBuf>,
    /// The first MODULE chunk for each distinct `(bias, path)`, in file order.
    pub modules: Vec<Module>,
    pub clock: Option<Clock>,
    /// Threads ordered by sequence number, then threads without one in order of appearance.
    pub threads: Vec<ThreadSummary>,
    /// Records read from EVENTS and PACKED chunks.
    pub records: u64,
    /// HOOKCC_MODE=ring: windows (RING chunks) and the records they say were dropped.
    pub ring_windows: u64,
    pub ring_dropped: u64,
    /// Bytes of the chunks that hold them (chunk headers included, CHECK chunks not).
    pub record_bytes: u64,
    /// Sum of all LOST chunks.
    pub lost_in_chunks: u64,
    /// LOST chunks that say where records were dropped (a stream's: `hookprof record`).
    pub lost_markers: u64,
    /// Chunks of types this reader does not know (skipped).
    pub unknown_chunks: u64,
    /// Zero bytes skipped where chunks were expected (reservations never written).
    pub hole_bytes: u64,
    /// In an incomplete trace, the last chunk may be cut short (the program was killed
    /// during its write): the chunk is ignored and the error kept here. In a complete
    /// trace this is an error instead.
    pub truncated_tail: Option<FormatError>,
    /// What the chunks' and the header's checksums say.
    pub integrity: Integrity,
    /// Chunks that repeat an earlier one, or whose records go back in time from the thread's
    /// chunk before: a chunk copied or moved together with its CHECK chunk, which then still
    /// matches. How many, and the first.
    pub misplaced: u64,
    pub first_misplaced: Option<Misplaced>,
    /// Chunks holding a time far outside the run (the CLOCK chunk's ticks): a damaged time,
    /// which would give a call years of duration. How many, and the first.
    pub outside_run: u64,
    pub first_outside_run: Option<OutsideRun>,
    /// Where the last chunk read ends (the file's length, unless a chunk cut short was
    /// ignored): where a trace cut at a chunk boundary was cut.
    pub end_offset: u64,
    /// The hooks' cost from the OVERHEAD chunk, if the trace has one.
    pub overhead: Option<Overhead>,
    /// Times are compensated for it (it is there, and compensation is on).
    pub compensated: bool,
    /// PAUSE chunks (a hook writing its thread's full buffer) and their total ticks.
    pub pauses: u64,
    pub pause_ticks: u64,
    /// HOOKCC_MODE=profile: PROFILE chunks read (a later one of a thread replaces its earlier
    /// ones), and the call paths of the ones used.
    pub profile_chunks: u64,
    pub profile_nodes: u64,
    /// The records given to the trees used, some of which they had no room for and counted
    /// lost (`records` counts those kept, at least: which of a thread's losses were its tree's
    /// the tree does not say).
    pub tree_records_given: u64,
    /// HOOKCC_MIN_DURATION: calls left out of the records (FOLDED chunks), and the threshold
    /// in ticks. The replay reads the trees or the records ([`ReplayVisitor::AGGREGATES`]);
    /// `records_skipped` says it left the records out.
    pub folded_calls: u64,
    pub folded_min_ticks: u64,
    pub records_skipped: bool,
    /// The records of the EVENTS and PACKED chunks when the replay left them out for the
    /// trees (what the header's `records` counts then; `records` counts the trees').
    pub kept_records: u64,
    /// SWITCH chunks (Linux: the threads' context switches): whether the trace has any, the
    /// switches, and the switch records the kernel dropped. With them, frames carry their
    /// off-CPU time ([`Frame::offcpu`]).
    pub has_switches: bool,
    pub switches: u64,
    pub switches_lost: u64,
    /// The clock the times are on: [`TimeBasis::Cpu`] only when the visitor asked for it and
    /// the trace has switches.
    pub time: TimeBasis,
    /// The threads' CPU time between two samples (SAMPLE chunks; 0: no samples), and the
    /// samples that were in the hooks (left out: their own time).
    pub sample_period_ns: u64,
    pub samples_in_hooks: u64,
    /// What the runtime's writer thread got of the CPUs (a WRITER chunk), if the trace says.
    pub writer: Option<crate::input::format::WriterStats>,
    /// The functions the runtime throttled (THROTTLE chunks), their entries added up: timed
    /// for their first calls, then counted without records ([`Self::counted_calls`]).
    pub throttle: Option<crate::input::format::Throttle>,
}

impl TraceSummary {
    /// Adds a THROTTLE chunk's functions (a file may have several).
    pub fn add_throttle(&mut self, chunk: crate::input::format::Throttle) {
        match &mut self.throttle {
            Some(t) => t.functions.extend(chunk.functions),
            None => self.throttle = Some(chunk),
        }
    }

    /// The calls of each throttled function (by address) that were counted, not recorded.
    pub fn counted_calls(&self) -> HashMap<u64, u64> {
        let mut counted = HashMap::default();
        for f in self.throttle.iter().flat_map(|t| &t.functions) {
            *counted.entry(f.address).or_insert(0u64) += f.counted;
        }
        counted
    }

    /// Samples of the threads' CPU time outside the hooks, and of them those with a frame
    /// open (the ones that give functions sampled times).
    pub fn samples(&self) -> (u64, u64) {
        let all: u64 = self.threads.iter().map(|t| t.samples).sum();
        let outside: u64 = self.threads.iter().map(|t| t.samples_outside).sum();
        (all, all - outside)
    }
}

impl crate::input::symbols::TraceModules for TraceSummary {
    fn header(&self) -> &Header {
        &self.header
    }
    fn exe(&self) -> &Option<PathBuf> {
        &self.exe
    }
    fn modules(&self) -> &[Module] {
        &self.modules
    }
}

impl TraceSummary {
    /// Nothing read yet but the header of `trace`: what the replay and a view's scan start
    /// from.
    pub fn new(trace: &Trace<'_>) -> Self {
        TraceSummary {
            header: trace.header().clone(),
            exe: None,
            modules: Vec::new(),
            clock: None,
            threads: Vec::new(),
            records: 0,
            record_bytes: 0,
            ring_windows: 0,
            ring_dropped: 0,
            lost_in_chunks: 0,
            lost_markers: 0,
            unknown_chunks: 0,
            hole_bytes: 0,
            truncated_tail: None,
            integrity: Integrity::default(),
            misplaced: 0,
            first_misplaced: None,
            outside_run: 0,
            first_outside_run: None,
            end_offset: u64::from(trace.header().header_size),
            overhead: None,
            compensated: false,
            pauses: 0,
            pause_ticks: 0,
            profile_chunks: 0,
            profile_nodes: 0,
            tree_records_given: 0,
            folded_calls: 0,
            folded_min_ticks: 0,
            records_skipped: false,
            kept_records: 0,
            has_switches: false,
            switches: 0,
            switches_lost: 0,
            time: TimeBasis::Wall,
            sample_period_ns: 0,
            samples_in_hooks: 0,
            writer: None,
            throttle: None,
        }
    }

    /// The writer finished the trace: its header says so, or, written as a stream (a FIFO,
    /// `hookprof attach --stream`), whose header is never rewritten, it ends with its CLOCK
    /// chunk.
    pub fn finished(&self) -> bool {
        self.header.is_complete() || (self.header.is_stream() && self.clock.is_some())
    }

    /// Ticks per second from the header, else from the CLOCK chunk; `None` if neither
    /// knows (reports then show ticks).
    pub fn ticks_per_second(&self) -> Option<u64> {
        if self.header.ticks_per_second != 0 {
            Some(self.header.ticks_per_second)
        } else {
            self.clock
                .map(|c| c.ticks_per_second)
                .filter(|&tps| tps != 0)
        }
    }

    /// Lost records: the header's count, or the LOST chunks' sum if larger (the header is
    /// only set when the trace is complete).
    pub fn lost(&self) -> u64 {
        self.header.lost.max(self.lost_in_chunks)
    }

    pub fn unmatched_entries(&self) -> u64 {
        self.threads.iter().map(|t| t.unmatched_entries).sum()
    }

    pub fn unmatched_exits(&self) -> u64 {
        self.threads.iter().map(|t| t.unmatched_exits).sum()
    }

    pub fn entered_before_window(&self) -> u64 {
        self.threads.iter().map(|t| t.entered_before_window).sum()
    }

    pub fn closed_at_gap(&self) -> u64 {
        self.threads.iter().map(|t| t.closed_at_gap).sum()
    }

    pub fn closed_at_end(&self) -> u64 {
        self.threads.iter().map(|t| t.closed_at_end).sum()
    }

    pub fn closed_by_longjmp(&self) -> u64 {
        self.threads.iter().map(|t| t.closed_by_longjmp).sum()
    }

    /// Count marks in every thread's records.
    pub fn count_marks(&self) -> u64 {
        self.threads.iter().map(|t| t.count_marks).sum()
    }

    /// The thread with this TID.
    pub fn thread(&self, tid: u64) -> Option<&ThreadSummary> {
        self.threads.iter().find(|t| t.tid == tid)
    }
}

/// A chunk out of its place: [`TraceSummary::first_misplaced`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Misplaced {
    pub chunk: BadChunk,
    /// Offset of the chunk it repeats, of the thread's chunk whose records are later, or of
    /// the thread's THREAD chunk.
    pub earlier: u64,
    pub how: OutOfPlace,
}

/// How a chunk is out of its place ([`Misplaced`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutOfPlace {
    /// It repeats the chunk at `earlier` (a chunk written once, or the thread's chunk before
    /// with the same first time).
    Repeats,
    /// Its records (or its PAUSE, or its tree) go back in time from the thread's chunk at
    /// `earlier`.
    GoesBack,
    /// Its records start before the end of the thread's PAUSE chunk at `earlier`: the
    /// hand-over a PAUSE times comes after one buffer's records and before the next one's.
    BeforePause,
    /// A PAUSE chunk that starts before the last record of the thread's chunk at `earlier`.
    PauseBeforeRecords,
    /// A PROFILE chunk after its thread's THREAD chunk at `earlier`, which is the thread's last.
    AfterThreadEnd,
    /// A PROFILE chunk older than the thread's one at `earlier` (fewer records, or an earlier
    /// last tick), which it would replace.
    OlderTree,
}

impl fmt::Display for Misplaced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (chunk, earlier) = (self.chunk, self.earlier);
        match self.how {
            OutOfPlace::GoesBack => write!(
                f,
                "{chunk} starts before the thread's chunk at byte {earlier} (each thread's \
                 chunks are written in time order)"
            ),
            OutOfPlace::BeforePause => write!(
                f,
                "{chunk} starts before the end of the thread's PAUSE chunk at byte {earlier} \
                 (a PAUSE times the hand-over after a buffer's records, before the next \
                 buffer's: it comes between their chunks)"
            ),
            OutOfPlace::PauseBeforeRecords => write!(
                f,
                "{chunk} starts before the last record of the thread's chunk at byte {earlier} \
                 (a PAUSE times the hand-over after a buffer's records, before the next \
                 buffer's: it comes between their chunks)"
            ),
            OutOfPlace::AfterThreadEnd => write!(
                f,
                "{chunk} comes after the thread's THREAD chunk at byte {earlier}, which is the \
                 last chunk of a thread"
            ),
            OutOfPlace::OlderTree => write!(
                f,
                "{chunk} holds less than the thread's PROFILE chunk at byte {earlier} (fewer \
                 records or an earlier last tick), which it would replace (a thread's later \
                 trees hold all its earlier ones did): the older one is not used"
            ),
            OutOfPlace::Repeats => write!(f, "{chunk} repeats the one at byte {earlier}"),
        }
    }
}

/// A chunk whose times lie outside the run: [`TraceSummary::first_outside_run`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutsideRun {
    pub chunk: BadChunk,
    /// The time (raw ticks) furthest outside.
    pub tick: u64,
    /// The run, from the CLOCK chunk: its first and last tick.
    pub run: (u64, u64),
}

impl fmt::Display for OutsideRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (first, last) = self.run;
        let side = if self.tick < first { "before" } else { "after" };
        write!(
            f,
            "{} holds a time at tick {}, {side} the run (the CLOCK chunk's ticks {first}..{last}) \
             by more than its length",
            self.chunk, self.tick
        )
    }
}

impl TraceSummary {
    /// Notes a chunk out of its place.
    pub(super) fn misplaced(&mut self, chunk: BadChunk, earlier: u64, how: OutOfPlace) {
        self.misplaced += 1;
        self.first_misplaced.get_or_insert(Misplaced {
            chunk,
            earlier,
            how,
        });
    }

    /// Notes a chunk with a time outside the run.
    pub(super) fn outside_run(&mut self, chunk: BadChunk, tick: u64, run: (u64, u64)) {
        self.outside_run += 1;
        self.first_outside_run
            .get_or_insert(OutsideRun { chunk, tick, run });
    }
}
