//! The replay layer: every report reads the trace through it, so all reports agree on how
//! entries and exits pair up.
//!
//! [`replay`] walks the chunks in file order, keeps one call stack per thread, and pairs
//! records exactly as the section "How the reader pairs records" of docs/trace-format.md
//! says:
//!
//! - an entry pushes a frame;
//! - an exit closes the nearest frame (searching from the top of the stack down) with the
//!   same address; frames above it are closed at the exit's time and counted as
//!   *unmatched entries*;
//! - an exit with no such frame is an *unmatched exit* and is otherwise ignored;
//! - frames still open when the trace ends are closed when the thread ended (its END chunk:
//!   `pthread_exit` inside calls), else when the trace was finished (the CLOCK chunk), else
//!   at the thread's last timestamp, and counted as *closed at end*.
//!
//! A [`ReplayVisitor`] sees every frame open and close with the whole stack, which is what
//! a flat profile, a call graph, Chrome trace events and folded stacks all need. Memory
//! grows with the number of threads, functions and the stack depths, not with the number of
//! records.
//!
//! Every record costs a few array updates: an entry looks its address up once to number the
//! function ([`Frame::function`], in a small hash table that is nearly always hit on the
//! first probe), and the open frames per function that decide [`Frame::outermost`] are
//! counted in a `Vec` indexed by that number; an exit compares its address with the frame
//! on top of the stack. [`replay_bytes`], given the file's bytes, also reads ahead of the
//! records it replays (`hookprof` itself uses it).
//!
//! **Hook-overhead compensation** (on unless
//! [`set_compensation`](crate::analysis::compensation::set_compensation) turns it off): when
//! the trace has an OVERHEAD chunk (the runtime timed its own hooks at start), each thread's
//! timestamps are moved back by the hooks' time so far before anything else sees them
//! ([`crate::analysis::compensation`]), so every report and view shows the same compensated
//! times.

use crate::analysis::compensation::{compensation, Compensator};
use crate::analysis::ids::{DenseIds, HashMap};
use crate::analysis::unload::Unloads;
use crate::input::cct::CallTree;
use std::path::PathBuf;

use std::fmt;

use crate::input::format::{
    BadChunk, Chunk, Clock, Events, FormatError, Header, Integrity, Module, Overhead, Record,
    RecordKind, Samples, Switches, Trace, CHUNK_HEADER_SIZE, COUNT_MARK, RECORD_SIZE,
};

/// Why a thread was switched out, where the trace says (`FLAG_SWITCH_REASONS`: the kernel's
/// `PERF_RECORD_MISC_SWITCH_OUT_PREEMPT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SwitchReason {
    /// Preempted: still ready to run, another thread took the CPU.
    Preempted,
    /// It blocked (a lock, I/O, a sleep) or yielded.
    Blocked,
    /// The trace does not say.
    Unknown,
}

impl SwitchReason {
    /// The name of a switched-out slice in a timeline.
    pub fn slice_name(self) -> &'static str {
        match self {
            SwitchReason::Preempted => "switched out (preempted)",
            SwitchReason::Blocked => "switched out (blocked)",
            SwitchReason::Unknown => "switched out",
        }
    }
}

/// When one thread was switched out (its SWITCH chunks), on the trace's raw clock: the
/// intervals in time order, overlaps merged, and the off-CPU ticks before each.
#[derive(Clone, Debug, Default)]
struct SwitchTimeline {
    /// `(out, in)` in ticks.
    intervals: Vec<(u64, u64)>,
    /// Where the trace says why (its header's `FLAG_SWITCH_REASONS`): the switch-outs that were
    /// preemptions, in ticks, in order. `None`: the trace does not say.
    preempted: Option<Vec<u64>>,
    /// `before[i]`: the ticks of `intervals[..i]`.
    before: Vec<u64>,
    /// Intervals that start before the last time asked about: a thread's records come in time
    /// order, so each look-up moves this on by a compare or two instead of a search.
    cursor: usize,
}

/// `intervals` sorted, overlaps merged, empty ones dropped.
fn merged(mut intervals: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    intervals.retain(|&(from, to)| to > from);
    intervals.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(intervals.len());
    for (from, to) in intervals {
        match merged.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => merged.push((from, to)),
        }
    }
    merged
}

impl SwitchTimeline {
    /// The timeline of switched-out `intervals`, less the `pauses` (the runtime's own time,
    /// which compensation takes out of the times: a wait for the writer thread inside one is
    /// not the program's off-CPU time).
    fn new(intervals: Vec<(u64, u64)>, pauses: Vec<(u64, u64)>) -> Self {
        let pauses = merged(pauses);
        let mut merged_intervals = Vec::new();
        let mut p = 0;
        for (mut from, to) in merged(intervals) {
            while p < pauses.len() && pauses[p].1 <= from {
                p += 1;
            }
            let mut q = p;
            while from < to {
                match pauses.get(q) {
                    Some(&(cut_from, cut_to)) if cut_from < to => {
                        if cut_from > from {
                            merged_intervals.push((from, cut_from));
                        }
                        from = from.max(cut_to);
                        q += 1;
                    }
                    _ => {
                        merged_intervals.push((from, to));
                        break;
                    }
                }
            }
        }
        let merged = merged_intervals;
        let mut before = Vec::with_capacity(merged.len());
        let mut sum = 0u64;
        for &(out, back) in &merged {
            before.push(sum);
            sum = sum.saturating_add(back - out);
        }
        SwitchTimeline {
            intervals: merged,
            preempted: None,
            before,
            cursor: 0,
        }
    }

    /// Why the thread was out over `[out, back)` of its intervals: preempted if a preemption
    /// began in it (intervals that touch were merged), else blocked.
    fn reason(&self, out: u64, back: u64) -> SwitchReason {
        match &self.preempted {
            None => SwitchReason::Unknown,
            Some(list) => {
                let i = list.partition_point(|&p| p < out);
                if list.get(i).is_some_and(|&p| p < back.max(out + 1)) {
                    SwitchReason::Preempted
                } else {
                    SwitchReason::Blocked
                }
            }
        }
    }

    /// Ticks switched out before `time` (raw): of a frame open from `a` to `b`, the thread
    /// was off the CPU for `offcpu_until(b) - offcpu_until(a)`.
    #[inline]
    fn offcpu_until(&mut self, time: u64) -> u64 {
        let mut i = self.cursor;
        if i > 0 && self.intervals[i - 1].0 >= time {
            // Back in time (a clock that is not in step across CPUs): a search.
            i = self.intervals.partition_point(|&(out, _)| out < time);
        }
        while i < self.intervals.len() && self.intervals[i].0 < time {
            i += 1;
        }
        self.cursor = i;
        if i == 0 {
            return 0;
        }
        let (out, back) = self.intervals[i - 1];
        self.before[i - 1].saturating_add(back.min(time) - out)
    }

    /// The off-CPU ticks before every time from `first` to `last` (times in order), if they
    /// are all the same: no interval ends after `first` or starts before `last`.
    #[inline]
    fn constant_over(&mut self, first: u64, last: u64) -> Option<u64> {
        let at_first = self.offcpu_until(first);
        let i = self.cursor;
        let ended = i == 0 || self.intervals[i - 1].1 <= first;
        let none_starts = self.intervals.get(i).is_none_or(|&(out, _)| out >= last);
        (ended && none_starts && last >= first).then_some(at_first)
    }

    /// The intervals (raw ticks) that overlap `(from, to)`, clipped to it: what the thread was
    /// switched out for between two of its records.
    fn between(&self, from: u64, to: u64) -> impl Iterator<Item = (u64, u64, SwitchReason)> + '_ {
        let first = self.intervals.partition_point(|&(_, back)| back <= from);
        self.intervals[first..]
            .iter()
            .take_while(move |&&(out, _)| out < to)
            .map(move |&(out, back)| (out.max(from), back.min(to), self.reason(out, back)))
            .filter(|&(out, back, _)| back > out)
    }

    fn total(&self) -> u64 {
        match (self.intervals.last(), self.before.last()) {
            (Some(&(out, back)), Some(&before)) => before.saturating_add(back - out),
            _ => 0,
        }
    }
}

/// Every thread's switch timeline and samples, by TID and by how many threads with that TID
/// ended before it (Linux reuses TIDs; a thread's SWITCH and SAMPLE chunks come before its
/// THREAD chunk), with the switches counted and the switch records the kernel dropped. A
/// pre-pass over the chunks: the writer writes a switch when the thread is running again, and
/// samples every 10 ms, after records that came while they happened, so the replay needs them
/// before the records.
fn side_chunks(trace: &Trace<'_>, compensate: bool) -> SidePass {
    let mut chunks: Vec<(u64, u32, Switches)> = Vec::new();
    let mut sample_chunks: Vec<(u64, u32, Samples)> = Vec::new();
    let mut pauses: HashMap<(u64, u32), Vec<(u64, u64)>> = HashMap::default();
    let mut generation: HashMap<u64, u32> = HashMap::default();
    let mut clock_tps = 0;
    let mut first_clock = None;
    let mut unloads = Vec::new();
    for chunk in trace.chunks() {
        let Ok(chunk) = chunk else { break };
        match chunk.chunk {
            Chunk::Unload { module, tick } => unloads.push((module, tick, chunk.offset)),
            Chunk::Switch(switches) => {
                let g = generation.get(&chunk.thread).copied().unwrap_or(0);
                chunks.push((chunk.thread, g, switches));
            }
            Chunk::Sample(samples) => {
                let g = generation.get(&chunk.thread).copied().unwrap_or(0);
                sample_chunks.push((chunk.thread, g, samples));
            }
            Chunk::Thread { .. } => *generation.entry(chunk.thread).or_default() += 1,
            Chunk::Clock(clock) => {
                clock_tps = clock.ticks_per_second;
                first_clock.get_or_insert(clock);
            }
            Chunk::Pause { from, to } if compensate => {
                let g = generation.get(&chunk.thread).copied().unwrap_or(0);
                pauses
                    .entry((chunk.thread, g))
                    .or_default()
                    .push((from, to));
            }
            _ => {}
        }
    }
    let mut side = SidePass {
        clock: first_clock,
        unloads: Unloads::new(unloads),
        ..SidePass::default()
    };
    let tps = match trace.header().ticks_per_second {
        0 => clock_tps,
        tps => tps,
    };
    if tps == 0 {
        return side;
    }
    for (tid, g, samples) in sample_chunks {
        side.sample_period_ns = samples.period_ns;
        side.samples_in_hooks = side.samples_in_hooks.saturating_add(samples.in_hooks);
        let list = side.samples.entry((tid, g)).or_default();
        list.extend(
            samples
                .points
                .iter()
                .map(|&(ns, ip)| (samples.ticks_at(ns, tps), ip)),
        );
    }
    if chunks.is_empty() {
        return side;
    }
    let reasons = trace.header().flags & crate::input::format::FLAG_SWITCH_REASONS != 0;
    let mut intervals: HashMap<(u64, u32), Vec<(u64, u64)>> = HashMap::default();
    let mut preempted: HashMap<(u64, u32), Vec<u64>> = HashMap::default();
    for (tid, g, switches) in chunks {
        side.switches += switches.pairs.len() as u64;
        side.switches_lost = side.switches_lost.saturating_add(switches.lost);
        let list = intervals.entry((tid, g)).or_default();
        let preempts = preempted.entry((tid, g)).or_default();
        for &(out, back) in &switches.pairs {
            // Bit 0 of the switch-out: a preemption (the time itself to 2 ns).
            let (out, was_preempted) = if reasons {
                (out & !1, out & 1 == 1)
            } else {
                (out, false)
            };
            let out = switches.ticks_at(out, tps);
            if was_preempted {
                preempts.push(out);
            }
            list.push((out, switches.ticks_at(back, tps).max(out)));
        }
    }
    for (key, list) in intervals {
        let cuts = pauses.remove(&key).unwrap_or_default();
        let mut timeline = SwitchTimeline::new(list, cuts);
        if reasons {
            let mut list = preempted.remove(&key).unwrap_or_default();
            list.sort_unstable();
            timeline.preempted = Some(list);
        }
        side.timelines.insert(key, timeline);
    }
    side
}

/// What [`side_chunks`]' pre-pass finds beside the records: every thread's switch
/// timeline and the instants of its samples (raw ticks, in order), keyed by TID and by how
/// many threads with that TID ended before it, with their counts.
#[derive(Default)]
struct SidePass {
    timelines: HashMap<(u64, u32), SwitchTimeline>,
    switches: u64,
    switches_lost: u64,
    samples: HashMap<(u64, u32), Vec<(u64, u64)>>,
    sample_period_ns: u64,
    samples_in_hooks: u64,
    /// The first CLOCK chunk (a hosted trace's is its last chunk; the replay checks every
    /// records chunk against the run it gives).
    clock: Option<Clock>,
    /// The UNLOAD chunks: records are named by the module loaded when they were made.
    unloads: Unloads,
}

/// An open frame on a thread's stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Entry point of the function.
    pub address: u64,
    /// The function's number in its thread: the distinct addresses entered by a TID are
    /// numbered 0, 1, 2, … in order of first entry, so that a visitor can keep what it
    /// counts per function in a `Vec` indexed by this number instead of a map keyed by
    /// address. A TID reused by a later thread continues the numbering of the earlier one.
    pub function: u32,
    /// Timestamp of the entry, in ticks.
    pub entry_time: u64,
    /// Sum of the inclusive ticks of the frame's direct children closed so far.
    pub child_ticks: u64,
    /// No other frame of the same function is below this one on the stack: only this frame
    /// counts towards the function's inclusive time (recursion is not counted twice).
    pub outermost: bool,
    /// Ticks the thread had spent switched out (SWITCH chunks) before the frame's entry, on
    /// the thread's raw clock: what [`Frame::offcpu`] is measured from.
    pub offcpu_at_entry: u64,
    /// In [`ReplayVisitor::exit`]: the ticks the thread was switched out while the frame was
    /// open (its inclusive off-CPU time); 0 before, and in a trace without SWITCH chunks.
    pub offcpu: u64,
    /// Sum of the off-CPU ticks of the frame's direct children closed so far: its exclusive
    /// off-CPU time is `offcpu - child_offcpu`, the switches that came while it was on top.
    pub child_offcpu: u64,
}

/// Which time the replay's timestamps measure (`hookprof … --time=cpu|wall`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TimeBasis {
    /// The clock on the wall: a call lasts from its entry to its exit, whether its thread ran
    /// or waited.
    #[default]
    Wall,
    /// The thread's CPU time: each thread's timestamps less the time it was switched out
    /// before them (its SWITCH chunks), so that every duration, exclusive time and percentile
    /// counts only the time the thread ran. A thread without SWITCH chunks keeps its wall
    /// times: a view refuses `--time=cpu` for a trace without them (see
    /// [`TraceSummary::has_switches`]).
    Cpu,
}

impl TimeBasis {
    /// `cpu` or `wall`, as the command line spells it.
    pub fn name(self) -> &'static str {
        match self {
            TimeBasis::Wall => "wall",
            TimeBasis::Cpu => "cpu",
        }
    }
}

/// Why a frame was closed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CloseReason {
    /// Its own exit record.
    Exit,
    /// An exit of a frame below it on the stack (an *unmatched entry*, e.g. a `longjmp` or
    /// an exception that skipped the exit hook).
    UnwoundByOuterExit,
    /// Still open when the thread's records ended (`exit()` called inside it, or tracing
    /// disabled).
    EndOfThread,
}

/// Receives the replayed events. Every method has an empty default.
///
/// `stack` is the thread's whole stack, outermost frame first. In [`ReplayVisitor::enter`]
/// its last element is the new frame; in [`ReplayVisitor::exit`] its last element is the
/// frame being closed (still on the stack), so `stack[stack.len() - 2]` is the caller.
pub trait ReplayVisitor {
    fn enter(&mut self, _tid: u64, _stack: &[Frame]) {}
    fn exit(&mut self, _tid: u64, _time: u64, _reason: CloseReason, _stack: &[Frame]) {}
    fn unmatched_exit(&mut self, _tid: u64, _time: u64, _address: u64, _stack: &[Frame]) {}
    /// `count` exits of `address` that matched no frame, at the end of a calling-context
    /// tree's thread (by default [`Self::unmatched_exit`] once each, up to 2^20).
    fn unmatched_exits(&mut self, tid: u64, time: u64, address: u64, count: u64) {
        for _ in 0..count.min(1 << 20) {
            self.unmatched_exit(tid, time, address, &[]);
        }
    }
    /// Calls of one call path, summed (a PROFILE chunk's node, `HOOKCC_MODE=profile`):
    /// `stack` is the path, outermost first, its last frame the function called; the frames'
    /// `entry_time` and `child_ticks` are 0. Times are compensated as a trace's are.
    fn aggregate(&mut self, _tid: u64, _stack: &[Frame], _calls: &Aggregate) {}
    /// `count` records were dropped here (a stream's LOST chunk, `hookprof record`), the
    /// first at `time` (compensated as the thread's times are). The thread's frames open
    /// then were closed just before ([`CloseReason::EndOfThread`], counted as closed at a
    /// gap): their exits may be among the records dropped.
    fn lost(&mut self, _tid: u64, _time: u64, _count: u64) {}
    /// A sample of the thread's CPU time (a SAMPLE chunk, outside the hooks) at address
    /// `ip` came while `stack` was open (never empty): the function at `ip` gets the sample's
    /// self time when it is a traced one, else the last frame (docs/trace-format.md,
    /// "SAMPLE"); every function on the stack its total time.
    fn sample(&mut self, _tid: u64, _ip: u64, _stack: &[Frame]) {}
    /// The thread was switched out (blocked or preempted, `reason` where the trace says: its
    /// SWITCH chunks) from `from` to `to`, on the records' clock, while `stack` was open (never empty), between two of its
    /// records. Only on the wall clock ([`TimeBasis::Wall`]): on the CPU clock that time is not
    /// there.
    fn switched_out(
        &mut self,
        _tid: u64,
        _from: u64,
        _to: u64,
        _reason: SwitchReason,
        _stack: &[Frame],
    ) {
    }
    /// The clock the visitor wants the times on, asked once before the replay.
    fn time_basis(&self) -> TimeBasis {
        TimeBasis::Wall
    }
    /// Where a thread has both records and a tree (`HOOKCC_MIN_DURATION`: the records leave
    /// the short calls out, the tree has every call), the visitor gets the tree (`true`: a
    /// profile, exact) or the records (`false`: calls in time order, the long ones).
    const AGGREGATES: bool = false;
}

/// The calls of one call path of a calling-context tree ([`ReplayVisitor::aggregate`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Aggregate {
    /// Frames closed: by their exit, an outer exit or a longjmp, or at the thread's end.
    pub calls: u64,
    /// Sum of their durations.
    pub ticks: u64,
    /// Sum of their durations less their direct callees'.
    pub exclusive: u64,
    /// Shortest and longest duration.
    pub min: u64,
    pub max: u64,
    /// Of the calls, frames closed by an outer exit or a longjmp ([`CloseReason::UnwoundByOuterExit`]).
    pub unwound: u64,
    /// Of the calls, frames still open at the thread's end ([`CloseReason::EndOfThread`]).
    pub closed_at_end: u64,
}

/// A visitor that does nothing: replay only for the counts in [`TraceSummary`] (those of the
/// trees, where a file has trees and records: every call).
impl ReplayVisitor for () {
    const AGGREGATES: bool = true;
}

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
    fn misplaced(&mut self, chunk: BadChunk, earlier: u64, how: OutOfPlace) {
        self.misplaced += 1;
        self.first_misplaced.get_or_insert(Misplaced {
            chunk,
            earlier,
            how,
        });
    }

    /// Notes a chunk with a time outside the run.
    fn outside_run(&mut self, chunk: BadChunk, tick: u64, run: (u64, u64)) {
        self.outside_run += 1;
        self.first_outside_run
            .get_or_insert(OutsideRun { chunk, tick, run });
    }
}

/// The run's ticks from the CLOCK chunk, and how far outside them a time may lie before it is
/// reported ([`TraceSummary::first_outside_run`]): the run's own length. Clocks that are not in
/// step across CPUs, compensation and a fork child's records before its own start move times
/// by far less; a damaged time (a delta of 2^62) by far more. None: no CLOCK chunk, or one
/// whose ticks do not go forward (a counter that wrapped: nothing to compare with).
#[derive(Clone, Copy)]
struct RunTicks {
    first: u64,
    last: u64,
}

impl RunTicks {
    fn of(clock: Option<Clock>) -> Option<RunTicks> {
        let c = clock?;
        (c.last_tick > c.first_tick).then_some(RunTicks {
            first: c.first_tick,
            last: c.last_tick,
        })
    }

    /// Whether `tick` is further from the run than its length.
    fn far_outside(self, tick: u64) -> bool {
        let length = self.last - self.first;
        tick < self.first.saturating_sub(length) || tick > self.last.saturating_add(length)
    }
}

/// Times of the last records chunk and PAUSE chunk of a TID, to see a chunk that repeats or
/// goes back: `(first time, last time, offset)`. Kept across the threads that reuse a TID:
/// Linux gives a TID again only after its thread ended, so the later thread's records are
/// later.
#[derive(Clone, Copy, Default)]
struct ChunkTimes {
    records: Option<(u64, u64, u64)>,
    pause: Option<(u64, u64, u64)>,
}

/// Whether a chunk whose first time is `first` goes back from the one before it, `before`
/// (its first and last time). Strictly earlier than its start, or the same start where that
/// chunk spanned time: clocks that are not in step across CPUs or coarse ones may repeat a
/// tick from one chunk to the next, never a chunk's start.
fn goes_back(first: u64, before: (u64, u64)) -> bool {
    first < before.0 || (first == before.0 && before.1 != before.0)
}

struct ThreadState {
    summary: ThreadSummary,
    /// Offset of the thread's END chunk, for [`TraceSummary::misplaced`].
    end_at: Option<u64>,
    /// Raw (uncompensated) times of the first and last records of the chunk [`Self::events`]
    /// just read, if it had any.
    chunk_span: Option<(u64, u64)>,
    order: usize,
    stack: Vec<Frame>,
    /// Open frames per function, indexed by [`Frame::function`], to know whether a new
    /// frame is the outermost one, and whether an exit has a frame to close at all.
    open: Vec<u32>,
    /// The last record was a resync escape: the next one names the frame to return to.
    resync_pending: bool,
    /// A RING chunk came: exits without a frame were entered before the window.
    windowed: bool,
    /// Hook-overhead compensation of this thread's times, if on.
    compensator: Option<Compensator>,
    /// The thread's calling-context tree (its last PROFILE chunk), replayed at its end, and
    /// then the records given to it and of those the ones it kept (the others counted lost).
    tree: Option<Box<CallTree>>,
    tree_records: (u64, u64),
    /// When the thread was switched out (its SWITCH chunks), looked up at its first records
    /// chunk, and its off-CPU ticks up to its last record.
    switches: Option<SwitchTimeline>,
    switches_looked_up: bool,
    offcpu_now: u64,
    /// [`TimeBasis::Cpu`] and the thread has switches: its times are moved onto its CPU
    /// clock (less the time switched out since its first record, `cpu_origin`), never back
    /// before `cpu_last`, the last time given.
    cpu_time: bool,
    cpu_origin: Option<u64>,
    cpu_last: u64,
    /// On the wall clock, where switched-out time falls among a batch's records (before the
    /// record at the index, after the one before it, raw times `from`..`to` of those two), for
    /// [`ReplayVisitor::switched_out`]; and the raw time of the thread's last record.
    switch_cuts: Vec<(usize, u64, u64)>,
    last_raw: u64,
    /// The thread's samples (its SAMPLE chunks: raw ticks, in order, and addresses), looked
    /// up with its switches, the next one to replay, and where a batch is cut for them.
    samples: Vec<(u64, u64)>,
    next_sample: usize,
    sample_cuts: Vec<usize>,
    /// Frames an exit's search for its frame looked at (tests check it stays linear).
    #[cfg(test)]
    searched: u64,
}

impl ThreadState {
    fn new(tid: u64, order: usize, overhead: Option<Overhead>) -> Self {
        ThreadState {
            summary: ThreadSummary {
                tid,
                ..ThreadSummary::default()
            },
            order,
            end_at: None,
            chunk_span: None,
            stack: Vec::new(),
            open: Vec::new(),
            resync_pending: false,
            windowed: false,
            compensator: overhead.map(Compensator::new),
            tree: None,
            tree_records: (0, 0),
            switches: None,
            switches_looked_up: false,
            offcpu_now: 0,
            cpu_time: false,
            cpu_origin: None,
            cpu_last: 0,
            switch_cuts: Vec::new(),
            last_raw: 0,
            samples: Vec::new(),
            next_sample: 0,
            sample_cuts: Vec::new(),
            #[cfg(test)]
            searched: 0,
        }
    }

    /// Records are decoded in batches of this many (4 KiB of EVENTS records, some 800 bytes
    /// of a PACKED stream), then replayed: the decoder's loop and the replay's loop each stay
    /// short, and the trace ahead is prefetched once per batch. (With 16-byte records,
    /// batches of 8 to 64 measured the same and 256 10 % slower; since the PACKED decoder
    /// and the views were made lighter, 2026-11-28, 256 against 32 takes a packed micro
    /// trace's `flame` from 21.2 to 18.7 ms, `report` from 177 to 158 ms on 20 M records,
    /// and an EVENTS trace's `report` 2-3 % longer; 512 and 1024 measured as 256.)
    const BATCH: usize = 256;

    /// Replays the records of one EVENTS chunk of the thread and returns their number. `ids`
    /// numbers the functions of the thread's TID. A malformed record ends the replay after
    /// the records before it. `data` is empty, or the bytes of the whole trace, which are
    /// then asked for ahead of time (see [`Prefetch`]).
    fn events<V: ReplayVisitor>(
        &mut self,
        events: &Events<'_>,
        ids: &mut DenseIds,
        unloads: &Unloads,
        visitor: &mut V,
        data: &[u8],
    ) -> Result<u64, FormatError> {
        let mut records = events.iter();
        let mut batch = [Record::entry(0, 0); Self::BATCH];
        // Per record, the thread's off-CPU ticks up to it (0 without SWITCH chunks).
        let mut offcpu = [0u64; Self::BATCH];
        let mut replayed = 0u64;
        let mut ahead = Prefetch::new(data, events.offset());
        self.chunk_span = None;
        if events.version() >= 2 {
            // Every 16-byte record is valid, and a PACKED stream can only end early: decoded a
            // batch at a time, with no error per record.
            let mut cursor = events.cursor();
            loop {
                if !events.is_packed() {
                    ahead.next::<{ Self::BATCH * RECORD_SIZE / Prefetch::LINE }>();
                }
                let (len, error) = cursor.fill(&mut batch);
                unloads.remap(&mut batch[..len]);
                self.note_span(&batch[..len]);
                self.offcpu_of(&batch[..len], &mut offcpu);
                self.replay_batch(&mut batch[..len], &offcpu[..len], ids, visitor);
                replayed += len as u64;
                if let Some(err) = error {
                    return Err(err);
                }
                if len < Self::BATCH {
                    return Ok(replayed);
                }
            }
        }
        loop {
            ahead.next::<{ Self::BATCH * RECORD_SIZE / Prefetch::LINE }>();
            let mut len = 0;
            let mut error = None;
            for slot in batch.iter_mut() {
                match records.next() {
                    Some(Ok(record)) => {
                        *slot = record;
                        len += 1;
                    }
                    Some(Err(err)) => {
                        error = Some(err);
                        break;
                    }
                    None => break,
                }
            }
            unloads.remap(&mut batch[..len]);
            self.note_span(&batch[..len]);
            self.offcpu_of(&batch[..len], &mut offcpu);
            self.replay_batch(&mut batch[..len], &offcpu[..len], ids, visitor);
            replayed += len as u64;
            if let Some(err) = error {
                return Err(err);
            }
            if len < Self::BATCH {
                return Ok(replayed);
            }
        }
    }

    /// Compensates a batch of raw records and replays it, with the thread's samples that fall
    /// among them at their places: a sample comes after the records up to its instant.
    fn replay_batch<V: ReplayVisitor>(
        &mut self,
        batch: &mut [Record],
        offcpu: &[u64],
        ids: &mut DenseIds,
        visitor: &mut V,
    ) {
        self.sample_cuts.clear();
        if let Some(last) = batch.last() {
            while let Some(&(at, _)) = self.samples.get(self.next_sample) {
                if at > last.time {
                    break;
                }
                self.sample_cuts
                    .push(batch.partition_point(|r| r.time <= at));
                self.next_sample += 1;
            }
        }
        if let Some(compensator) = &mut self.compensator {
            compensator.apply(batch);
        }
        if self.cpu_time {
            self.onto_cpu_clock(batch, offcpu);
        }
        if self.sample_cuts.is_empty() && self.switch_cuts.is_empty() {
            // Nearly every batch.
            self.records(batch, offcpu, ids, visitor);
            return;
        }
        let mut from = 0;
        let first = self.next_sample - self.sample_cuts.len();
        let (mut s, mut w) = (0, 0);
        loop {
            // The next cut: a switch before a sample at the same place (the switch came
            // between the records, the sample's instant is at most the record's).
            let sample_at = self.sample_cuts.get(s).copied();
            let switch_at = self.switch_cuts.get(w).map(|&(at, _, _)| at);
            let cut = match (sample_at, switch_at) {
                (None, None) => break,
                (Some(a), Some(b)) => a.min(b),
                (Some(a), None) => a,
                (None, Some(b)) => b,
            }
            .max(from);
            self.records(&batch[from..cut], &offcpu[from..cut], ids, visitor);
            from = cut;
            if switch_at.is_some_and(|b| b.max(cut) == cut) {
                let (at, raw_from, raw_to) = self.switch_cuts[w];
                w += 1;
                // On the records' clock: moved as compensation moved the record after the
                // switch (whose raw time is `raw_to`), never before the record before it.
                let shift = raw_to.saturating_sub(batch[at].time);
                let floor = if at > 0 { batch[at - 1].time } else { 0 };
                if let (Some(timeline), false) = (&self.switches, self.stack.is_empty()) {
                    for (out, back, reason) in timeline.between(raw_from, raw_to) {
                        let out = out.saturating_sub(shift).max(floor);
                        let back = back.saturating_sub(shift).max(out);
                        visitor.switched_out(self.summary.tid, out, back, reason, &self.stack);
                    }
                }
            } else {
                self.sample(self.samples[first + s].1, visitor);
                s += 1;
            }
        }
        self.records(&batch[from..], &offcpu[from..], ids, visitor);
    }

    /// Moves a compensated batch onto the thread's CPU clock ([`TimeBasis::Cpu`]): each time
    /// less the ticks switched out between the thread's first record and it.
    fn onto_cpu_clock(&mut self, batch: &mut [Record], offcpu: &[u64]) {
        let Some(&first) = offcpu.first() else { return };
        let origin = *self.cpu_origin.get_or_insert(first);
        for (r, &off) in batch.iter_mut().zip(offcpu) {
            // Compensation's steps and the switches' may overlap by a hook's few ticks: times
            // stay in order.
            let time = r
                .time
                .saturating_sub(off.saturating_sub(origin))
                .max(self.cpu_last);
            self.cpu_last = time;
            r.time = time;
        }
    }

    /// A time after the thread's last record (compensated), on its clock: the same on the
    /// wall clock, less the time switched out (`off` ticks so far) on the CPU clock.
    fn on_clock(&self, time: u64, off: u64) -> u64 {
        if !self.cpu_time {
            return time;
        }
        let origin = self.cpu_origin.unwrap_or(off);
        time.saturating_sub(off.saturating_sub(origin))
            .max(self.cpu_last)
    }

    /// One sample of the thread's CPU time, at `ip`, with the stack as it is now.
    fn sample<V: ReplayVisitor>(&mut self, ip: u64, visitor: &mut V) {
        self.summary.samples += 1;
        if self.stack.is_empty() {
            self.summary.samples_outside += 1;
        } else {
            visitor.sample(self.summary.tid, ip, &self.stack);
        }
    }

    /// The thread's off-CPU ticks up to each of a batch of raw records (nothing to do
    /// without SWITCH chunks: the zeros stay).
    fn offcpu_of(&mut self, batch: &[Record], offcpu: &mut [u64; Self::BATCH]) {
        self.switch_cuts.clear();
        if let Some(switches) = &mut self.switches {
            let (Some(first), Some(last)) = (batch.first(), batch.last()) else {
                return;
            };
            let before = self.offcpu_now;
            let constant = switches.constant_over(first.time, last.time);
            if let Some(same) = constant {
                // Nearly every batch: no switch in it.
                offcpu[..batch.len()].fill(same);
            } else {
                for (r, off) in batch.iter().zip(offcpu.iter_mut()) {
                    *off = switches.offcpu_until(r.time);
                }
            }
            if !self.cpu_time && (constant != Some(before)) {
                // Where the thread was switched out between two records (wall clock only).
                let mut previous = (before, self.last_raw);
                for (i, (r, &off)) in batch.iter().zip(offcpu.iter()).enumerate() {
                    if off > previous.0 {
                        self.switch_cuts.push((i, previous.1, r.time));
                    }
                    previous = (off, r.time);
                }
            }
            if let Some(&last) = offcpu[..batch.len()].last() {
                self.offcpu_now = last;
            }
            self.last_raw = last.time;
        }
    }

    /// Widens [`Self::chunk_span`] by a batch of raw records, in the thread's order.
    fn note_span(&mut self, batch: &[Record]) {
        if let (Some(first), Some(last)) = (batch.first(), batch.last()) {
            let start = self.chunk_span.map_or(first.time, |(start, _)| start);
            self.chunk_span = Some((start, last.time));
        }
    }

    /// Replays decoded records of the thread. This loop is where `hookprof report` spends
    /// its time: it keeps few values live across records (the summary's counters stay in
    /// memory), and the common exit, the one of the frame on top, is handled inline. Not
    /// inlined itself, so that the loop gets the registers to itself.
    #[inline(never)]
    fn records<V: ReplayVisitor>(
        &mut self,
        records: &[Record],
        offcpu: &[u64],
        ids: &mut DenseIds,
        visitor: &mut V,
    ) {
        let Some(first) = records.first() else {
            return;
        };
        let tid = self.summary.tid;
        if self.summary.first_time.is_none() {
            self.summary.first_time = Some(first.time);
        }
        let mut last_time = self.summary.last_time.unwrap_or(0);
        for (record, &off) in records.iter().zip(offcpu) {
            last_time = last_time.max(record.time);
            match record.kind {
                RecordKind::Entry => {
                    if self.resync_pending {
                        self.resync(record.time, off, record.address, ids, visitor);
                        continue;
                    }
                    self.summary.entries += 1;
                    let function = ids.id(record.address);
                    let index = function as usize;
                    if index >= self.open.len() {
                        self.open.resize(index + 1, 0);
                    }
                    let outermost = self.open[index] == 0;
                    self.open[index] += 1;
                    self.stack.push(Frame {
                        address: record.address,
                        function,
                        entry_time: record.time,
                        child_ticks: 0,
                        outermost,
                        offcpu_at_entry: off,
                        offcpu: 0,
                        child_offcpu: 0,
                    });
                    let depth = self.stack.len() as u64;
                    if depth > self.summary.max_depth {
                        self.summary.max_depth = depth;
                    }
                    visitor.enter(tid, &self.stack);
                }
                RecordKind::Exit => {
                    self.summary.exits += 1;
                    if self
                        .stack
                        .last()
                        .is_some_and(|f| f.address == record.address)
                    {
                        self.close(record.time, off, CloseReason::Exit, visitor);
                    } else {
                        self.exit_below_top(record.time, off, record.address, ids, visitor);
                    }
                }
            }
        }
        self.summary.records += records.len() as u64;
        self.summary.last_time = Some(last_time);
    }

    /// An exit that does not match the frame on top: it closes the nearest frame with its
    /// address and every frame above it, or is an unmatched exit. Linear overall: whether
    /// the function has an open frame is one look-up (its count in `open`), so an unmatched
    /// exit never searches the stack; a matched one searches only the frames it closes.
    #[cold]
    #[inline(never)]
    fn exit_below_top<V: ReplayVisitor>(
        &mut self,
        time: u64,
        off: u64,
        address: u64,
        ids: &DenseIds,
        visitor: &mut V,
    ) {
        if address == 0 {
            // A resync escape (version 3), not an exit: the next record names the frame.
            self.summary.exits -= 1;
            self.resync_pending = true;
            return;
        }
        if address == COUNT_MARK {
            // Not an exit: counted calls, whose time the compensation took out.
            self.summary.exits -= 1;
            self.summary.count_marks += 1;
            return;
        }
        let has_frame = ids
            .get(address)
            .and_then(|function| self.open.get(function as usize))
            .is_some_and(|&open| open > 0);
        let found = if has_frame {
            let found = self.stack.iter().rposition(|f| f.address == address);
            #[cfg(test)]
            {
                self.searched += (self.stack.len() - found.unwrap_or(0)) as u64;
            }
            found
        } else {
            None
        };
        match found {
            None if self.windowed => self.summary.entered_before_window += 1,
            None => {
                self.summary.unmatched_exits += 1;
                visitor.unmatched_exit(self.summary.tid, time, address, &self.stack);
            }
            Some(index) => {
                while self.stack.len() > index + 1 {
                    self.summary.unmatched_entries += 1;
                    self.close(time, off, CloseReason::UnwoundByOuterExit, visitor);
                }
                self.close(time, off, CloseReason::Exit, visitor);
            }
        }
    }

    /// A resync record (the entry record after an escape): a `longjmp` came back to the
    /// innermost frame of the function at `address`, so the frames above it are closed at
    /// `time` and counted. Without such a frame (tracing started below it) nothing happens.
    #[cold]
    #[inline(never)]
    fn resync<V: ReplayVisitor>(
        &mut self,
        time: u64,
        off: u64,
        address: u64,
        ids: &DenseIds,
        visitor: &mut V,
    ) {
        self.resync_pending = false;
        let has_frame = ids
            .get(address)
            .and_then(|function| self.open.get(function as usize))
            .is_some_and(|&open| open > 0);
        if !has_frame {
            return;
        }
        if let Some(index) = self.stack.iter().rposition(|f| f.address == address) {
            while self.stack.len() > index + 1 {
                self.summary.closed_by_longjmp += 1;
                self.close(time, off, CloseReason::UnwoundByOuterExit, visitor);
            }
        }
    }

    /// Closes the frame on top of the stack at `time`, when the thread's off-CPU ticks were
    /// `off`.
    #[inline(always)]
    fn close<V: ReplayVisitor>(
        &mut self,
        time: u64,
        off: u64,
        reason: CloseReason,
        visitor: &mut V,
    ) {
        let Some(top) = self.stack.last_mut() else {
            return;
        };
        top.offcpu = off.saturating_sub(top.offcpu_at_entry);
        // Copied before the visitor runs, so that the values stay in registers.
        let frame = *top;
        visitor.exit(self.summary.tid, time, reason, &self.stack);
        self.stack.pop();
        let duration = time.saturating_sub(frame.entry_time);
        // Every frame on the stack was counted when it was pushed.
        self.open[frame.function as usize] -= 1;
        if let Some(parent) = self.stack.last_mut() {
            parent.child_ticks = parent.child_ticks.saturating_add(duration);
            parent.child_offcpu = parent.child_offcpu.saturating_add(frame.offcpu);
        }
    }

    /// A window of the thread's ring starts (a RING chunk): after a gap (`dropped` records
    /// not in the file), the frames still open are closed at the last record before it, and
    /// later exits without a frame are of frames entered before the window.
    /// Records dropped here, the first at `at` (a stream's LOST chunk): the open frames are
    /// closed at the last record before (their exits may be among the dropped), later exits
    /// without a frame were entered before the gap, and the visitor hears of the loss.
    fn gap<V: ReplayVisitor>(&mut self, at: u64, count: u64, visitor: &mut V) {
        self.window(1, visitor);
        let at = self.compensator.map_or(at, |c| c.end(at));
        let at = self.on_clock(at, self.offcpu_now);
        visitor.lost(self.summary.tid, at, count);
    }

    fn window<V: ReplayVisitor>(&mut self, dropped: u64, visitor: &mut V) {
        self.windowed = true;
        if dropped == 0 {
            return;
        }
        let last = self.summary.last_time.unwrap_or(0);
        let last = self.compensator.map_or(last, |c| c.end(last));
        while !self.stack.is_empty() {
            self.summary.closed_at_gap += 1;
            self.close(last, self.offcpu_now, CloseReason::EndOfThread, visitor);
        }
    }

    /// Replays the thread's calling-context tree (HOOKCC_MODE=profile): every call path with
    /// calls goes to the visitor as an [`Aggregate`], depth first; the frames still open when
    /// the tree was written are closed at the thread's end, as [`Self::finish`] closes a
    /// trace's, and exits that matched no frame are unmatched exits. Compensation subtracts
    /// what the trace's would (without its per-gap clamping): `self_ticks` per call and a
    /// whole pair per call made inside it, the exclusive time `self_ticks` per call and
    /// `child_ticks` per direct callee (what a node's exclusive time has not, its parent's
    /// gives, so that a path's exclusive times add up to its inclusive time).
    fn calling_context_tree<V: ReplayVisitor>(
        &mut self,
        tree: &CallTree,
        end: Option<u64>,
        ids: &mut DenseIds,
        visitor: &mut V,
    ) {
        const NONE: u32 = u32::MAX;
        let tid = self.summary.tid;
        let n = tree.nodes.len();
        let (self_t, child_t) = self
            .compensator
            .map_or((0, 0), |c| (c.overhead.self_ticks, c.overhead.child_ticks));
        let pair = self_t.saturating_add(child_t);
        // Share `part / of` of `total`, rounded down.
        let share = |total: u64, part: u64, of: u64| -> u64 {
            if of == 0 {
                0
            } else {
                (u128::from(total) * u128::from(part) / u128::from(of)) as u64
            }
        };
        // The open frames form one path: at most one per node.
        let mut open_at = vec![NONE; n];
        for (j, f) in tree.open.iter().enumerate() {
            open_at[f.node as usize] = j as u32;
        }
        let own = |i: usize| {
            tree.nodes[i]
                .calls
                .saturating_add(u64::from(open_at[i] != NONE))
        };
        // Calls in each subtree, and each node's direct callees' calls (a parent comes
        // before its children, so one backward pass sums them).
        let mut subtree = vec![0u64; n];
        let mut callees = vec![0u64; n];
        let mut first_child = vec![NONE; n];
        let mut next_sibling = vec![NONE; n];
        let mut roots = Vec::new();
        for i in (0..n).rev() {
            subtree[i] = subtree[i].saturating_add(own(i));
            match tree.nodes[i].parent {
                Some(p) => {
                    let p = p as usize;
                    subtree[p] = subtree[p].saturating_add(subtree[i]);
                    callees[p] = callees[p].saturating_add(own(i));
                    next_sibling[i] = first_child[p];
                    first_child[p] = i as u32;
                }
                None => roots.push(i as u32),
            }
        }
        roots.reverse();
        // What a node's closed calls' exclusive time cannot give up (the hooks' time to take
        // from it is more than it has, where the hooks overlapped its work) is taken from its
        // parent's, and so on up: a path's exclusive times then still add up to its inclusive
        // time, as a trace's do (its compensation moves times, and never reorders them).
        let mut carried = vec![0u64; n];
        for i in (0..n).rev() {
            let node = tree.nodes[i];
            let Some(parent) = node.parent else { continue };
            let due = if node.calls == 0 {
                carried[i]
            } else {
                let callees_closed = share(callees[i], node.calls, own(i));
                node.calls
                    .saturating_mul(self_t)
                    .saturating_add(callees_closed.saturating_mul(child_t))
                    .saturating_add(carried[i])
                    .saturating_sub(node.exclusive)
            };
            carried[parent as usize] = carried[parent as usize].saturating_add(due);
        }
        // Raw durations of the open frames, closed at the thread's end.
        let last = tree.last_tick;
        let end = self
            .summary
            .end_time
            .or(end)
            .filter(|&e| e >= last)
            .unwrap_or(last);
        let open_ticks: Vec<u64> = tree
            .open
            .iter()
            .map(|f| end.saturating_sub(f.entry))
            .collect();

        let total_calls = tree
            .nodes
            .iter()
            .fold(0u64, |sum, n| sum.saturating_add(n.calls));
        let first = tree.first_tick;
        let shifted_last = last
            .saturating_sub(total_calls.saturating_mul(pair))
            .max(first);
        self.summary.first_time = Some(self.summary.first_time.map_or(first, |t| t.min(first)));
        self.summary.last_time = Some(
            self.summary
                .last_time
                .map_or(shifted_last, |t| t.max(shifted_last)),
        );
        let (entries_before, exits_before) = (self.summary.entries, self.summary.exits);

        let mut path: Vec<Frame> = Vec::new();
        let mut on_path: Vec<u32> = Vec::new();
        for &root in &roots {
            let mut next = root;
            'tree: loop {
                let i = next as usize;
                let node = tree.nodes[i];
                let function = ids.id(node.address);
                let index = function as usize;
                if index >= self.open.len() {
                    self.open.resize(index + 1, 0);
                }
                let outermost = self.open[index] == 0;
                self.open[index] += 1;
                path.push(Frame {
                    address: node.address,
                    function,
                    entry_time: 0,
                    child_ticks: 0,
                    outermost,
                    offcpu_at_entry: 0,
                    offcpu: 0,
                    child_offcpu: 0,
                });
                on_path.push(next);
                self.summary.max_depth = self.summary.max_depth.max(path.len() as u64);

                let all = own(i);
                let inside = subtree[i].saturating_sub(all);
                let inside_closed = share(inside, node.calls, all);
                let callees_closed = share(callees[i], node.calls, all);
                // Every node goes to the visitor, in depth-first order (one without closed calls
                // too, with none), so that a visitor can follow the path a frame at a time.
                let mut closed = Aggregate::default();
                if node.calls > 0 {
                    let ticks = node.ticks.saturating_sub(
                        node.calls
                            .saturating_mul(self_t)
                            .saturating_add(inside_closed.saturating_mul(pair)),
                    );
                    let exclusive = node
                        .exclusive
                        .saturating_sub(
                            node.calls
                                .saturating_mul(self_t)
                                .saturating_add(callees_closed.saturating_mul(child_t))
                                .saturating_add(carried[i]),
                        )
                        .min(ticks);
                    let per_call =
                        self_t.saturating_add((inside_closed / node.calls).saturating_mul(pair));
                    let average = ticks / node.calls;
                    closed = Aggregate {
                        calls: node.calls,
                        ticks,
                        exclusive,
                        min: node.min.saturating_sub(per_call).min(average),
                        max: node.max.saturating_sub(per_call).max(average),
                        unwound: node.unwound,
                        closed_at_end: 0,
                    };
                    let s = &mut self.summary;
                    s.entries = s.entries.saturating_add(node.calls);
                    s.exits = s.exits.saturating_add(node.calls - node.unwound);
                    s.unmatched_entries = s
                        .unmatched_entries
                        .saturating_add(node.unwound - node.longjmp);
                    s.closed_by_longjmp = s.closed_by_longjmp.saturating_add(node.longjmp);
                }
                visitor.aggregate(tid, &path, &closed);
                if let Some(&j) = open_at.get(i).filter(|&&j| j != NONE) {
                    let j = j as usize;
                    let raw = open_ticks[j];
                    let above = open_ticks.get(j + 1).copied().unwrap_or(0);
                    let exclusive_raw =
                        raw.saturating_sub(tree.open[j].child).saturating_sub(above);
                    let ticks = raw.saturating_sub(
                        self_t.saturating_add((inside - inside_closed).saturating_mul(pair)),
                    );
                    let exclusive =
                        exclusive_raw
                            .saturating_sub(self_t.saturating_add(
                                (callees[i] - callees_closed).saturating_mul(child_t),
                            ))
                            .min(ticks);
                    visitor.aggregate(
                        tid,
                        &path,
                        &Aggregate {
                            calls: 1,
                            ticks,
                            exclusive,
                            min: ticks,
                            max: ticks,
                            unwound: 0,
                            closed_at_end: 1,
                        },
                    );
                    self.summary.entries += 1;
                    self.summary.closed_at_end += 1;
                }

                if first_child[i] != NONE {
                    next = first_child[i];
                    continue;
                }
                loop {
                    let (Some(done), Some(frame)) = (on_path.pop(), path.pop()) else {
                        break 'tree;
                    };
                    self.open[frame.function as usize] -= 1;
                    if next_sibling[done as usize] != NONE {
                        next = next_sibling[done as usize];
                        continue 'tree;
                    }
                }
            }
        }
        for &(address, count) in &tree.unmatched {
            self.summary.unmatched_exits = self.summary.unmatched_exits.saturating_add(count);
            self.summary.exits = self.summary.exits.saturating_add(count);
            visitor.unmatched_exits(tid, shifted_last, address, count);
        }
        // The tree's `records` counts every record given to it, also those of paths it had no
        // room for (HOOKCC_PROFILE_NODES), which the thread's LOST chunk counts too: kept are
        // at least the entries and exits in the tree, and at least what the losses leave.
        let in_tree = (self.summary.entries - entries_before)
            .saturating_add(self.summary.exits - exits_before)
            .min(tree.records);
        let kept = tree.records.saturating_sub(self.summary.lost).max(in_tree);
        self.summary.records = self.summary.records.saturating_add(kept);
        self.tree_records = (tree.records, kept);
    }

    /// Closes the frames still open: when the thread ended, if it did on its own (its END
    /// chunk: it called `pthread_exit` inside them), else at `end`, when the trace was
    /// finished (the CLOCK chunk's last tick): a program that called `exit()` inside them ran
    /// until then.
    fn finish<V: ReplayVisitor>(&mut self, end: Option<u64>, ids: &mut DenseIds, visitor: &mut V) {
        if let Some(tree) = self.tree.take() {
            self.calling_context_tree(&tree, end, ids, visitor);
        }
        let last = self.summary.last_time.unwrap_or(0);
        let raw_end = self.summary.end_time.or(end);
        let end = raw_end
            .map(|e| self.compensator.map_or(e, |c| c.end(e)))
            .filter(|&e| e >= last)
            .unwrap_or(last);
        let off = match (&mut self.switches, raw_end) {
            (Some(switches), Some(raw)) if end > last => {
                switches.offcpu_until(raw).max(self.offcpu_now)
            }
            _ => self.offcpu_now,
        };
        // Samples after the thread's last record: in the frames still open.
        while let Some(&(_, ip)) = self.samples.get(self.next_sample) {
            self.next_sample += 1;
            self.sample(ip, visitor);
        }
        let end = self.on_clock(end, off);
        while !self.stack.is_empty() {
            self.summary.closed_at_end += 1;
            self.close(end, off, CloseReason::EndOfThread, visitor);
        }
    }
}

/// Replays `trace`, calling `visitor` for every frame, and returns the trace's summary.
/// Stops at the first malformed chunk or record, except that the cut-short last chunk of an
/// incomplete trace is ignored (see [`TraceSummary::truncated_tail`]).
pub fn replay<V: ReplayVisitor>(
    trace: &Trace<'_>,
    visitor: &mut V,
) -> Result<TraceSummary, FormatError> {
    replay_with(trace, &[], visitor)
}

/// [`replay`] of the trace in `data` (the whole file, as [`Trace::new`] takes it), reading
/// ahead: while it replays records, it asks the processor for the trace's next cache lines
/// ([`Prefetch`]), which makes `hookprof report` about a sixth faster (docs/performance.md,
/// "Post tool").
pub fn replay_bytes<V: ReplayVisitor>(
    data: &[u8],
    visitor: &mut V,
) -> Result<TraceSummary, FormatError> {
    replay_with(&Trace::new(data)?, data, visitor)
}

/// Asks the processor to load the trace's bytes a little ahead of the records being
/// replayed (software prefetch). The replay reads the file from start to end, so the bytes
/// that follow a chunk are the next ones it reads, whatever chunk they belong to.
///
/// The decoder's loop does not keep enough reads of the trace in flight to hide the
/// memory's latency: without this, `hookprof report` spent about a fifth of its time on
/// the instructions that wait for the trace's cache lines (perf, docs/performance.md). A
/// prefetch is only a hint: the bytes are read through the format's decoder as always. Only
/// on x86-64 for now; elsewhere this does nothing.
struct Prefetch<'a> {
    data: &'a [u8],
    /// Offset of the next cache line to ask for.
    next: usize,
}

impl<'a> Prefetch<'a> {
    /// How far ahead of the records being decoded (four batches; 1 to 8 KiB measured the
    /// same).
    const DISTANCE: usize = 2048;
    const LINE: usize = 64;

    /// Prefetching in `data` (nothing if it is empty) for a chunk whose records start at
    /// offset `start`.
    fn new(data: &'a [u8], start: u64) -> Self {
        Prefetch {
            data,
            next: usize::try_from(start)
                .unwrap_or(usize::MAX)
                .saturating_add(Self::DISTANCE),
        }
    }

    /// Asks for the next `LINES` cache lines.
    #[inline]
    fn next<const LINES: usize>(&mut self) {
        for _ in 0..LINES {
            if self.next >= self.data.len() {
                return;
            }
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a prefetch is a hint that never faults, and the address is inside
            // `data` anyway; SSE, which has the instruction, is part of x86-64.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>(self.data.as_ptr().add(self.next).cast());
            }
            self.next += Self::LINE;
        }
    }
}

/// [`replay`], prefetching in `data` if it is not empty.
fn replay_with<V: ReplayVisitor>(
    trace: &Trace<'_>,
    data: &[u8],
    visitor: &mut V,
) -> Result<TraceSummary, FormatError> {
    let mut summary = TraceSummary::new(trace);
    summary.integrity = Integrity::new(trace);
    summary.overhead = overhead(trace);
    summary.compensated = summary.overhead.is_some() && compensation();
    let compensate = summary.overhead.filter(|_| summary.compensated);
    let complete = trace.header().is_complete();
    let mut threads: HashMap<u64, ThreadState> = HashMap::default();
    // The numbering of functions per TID (see `Frame::function`): kept apart from the
    // threads so that a thread reusing a TID continues it.
    let mut function_ids: HashMap<u64, DenseIds> = HashMap::default();
    // Threads whose THREAD chunk (their last) was seen: Linux reuses thread ids, so a later
    // chunk with the same id is a new thread.
    let mut finished: Vec<ThreadState> = Vec::new();
    // Offsets of the EXE, CLOCK and OVERHEAD chunks, and of each THREAD chunk by its sequence
    // number: chunks that appear once.
    let mut written_once: [Option<u64>; 3] = [None; 3];
    let mut sequences: HashMap<u64, u64> = HashMap::default();
    let mut chunk_times: HashMap<u64, ChunkTimes> = HashMap::default();
    // Per thread sequence number, its latest PROFILE chunk: records, last tick, offset.
    let mut trees_seen: HashMap<u64, (u64, u64, u64)> = HashMap::default();
    // A file with trees and records (HOOKCC_MIN_DURATION): one or the other, as the visitor
    // asks; a file of trees alone is read as trees, of records alone as records.
    let (has_trees, has_records) = contents(trace);
    let use_trees = has_trees && (V::AGGREGATES || !has_records);
    summary.records_skipped = use_trees && has_records;
    let mut side = side_chunks(trace, compensate.is_some());
    let time_basis = visitor.time_basis();
    let (switches, switches_lost) = (side.switches, side.switches_lost);
    // A tree's calls (HOOKCC_MIN_DURATION's report) have no times to split.
    summary.has_switches = (switches != 0 || switches_lost != 0) && !use_trees;
    if summary.has_switches {
        summary.time = time_basis;
    }
    (summary.switches, summary.switches_lost) = (switches, switches_lost);
    let run = RunTicks::of(side.clock);
    if !use_trees {
        summary.sample_period_ns = side.sample_period_ns;
        summary.samples_in_hooks = side.samples_in_hooks;
    }
    // Threads with each TID that ended so far (their THREAD chunk), for `timelines`' keys.
    let mut generations: HashMap<u64, u32> = HashMap::default();
    // MODULE chunks and their offsets: which of them hold at the end depends on UNLOAD chunks.
    let mut module_chunks = Vec::new();
    for chunk in trace.chunks() {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(err) if !complete && err.is_truncation() => {
                summary.truncated_tail = Some(err);
                break;
            }
            Err(err) => return Err(err),
        };
        summary.integrity.observe(&chunk);
        summary.end_offset = chunk.offset + chunk.total_len();
        let at = BadChunk {
            offset: chunk.offset,
            chunk_type: chunk.chunk_type,
            thread: chunk.thread,
        };
        // Chunks written once per file: a second one is a copy.
        let once = match chunk.chunk {
            Chunk::Exe { .. } => Some(0),
            Chunk::Clock(_) => Some(1),
            Chunk::Overhead(_) => Some(2),
            _ => None,
        };
        if let Some(kind) = once {
            match written_once[kind] {
                Some(earlier) => summary.misplaced(at, earlier, OutOfPlace::Repeats),
                None => written_once[kind] = Some(chunk.offset),
            }
        }
        match chunk.chunk {
            Chunk::Exe { path } => {
                if summary.exe.is_none() {
                    summary.exe = Some(path);
                }
            }
            Chunk::Module(module) => module_chunks.push((module, chunk.offset)),
            Chunk::Unload { .. } => {} /* read by side_chunks */
            Chunk::Events(events) => {
                summary.record_bytes += events.encoded_bytes() + CHUNK_HEADER_SIZE as u64;
                if use_trees {
                    summary.kept_records += events.len() as u64;
                    continue;
                }
                let state = get_thread(&mut threads, chunk.thread, compensate);
                if !state.switches_looked_up {
                    state.switches_looked_up = true;
                    let generation = generations.get(&chunk.thread).copied().unwrap_or(0);
                    state.switches = side.timelines.remove(&(chunk.thread, generation));
                    state.samples = side
                        .samples
                        .remove(&(chunk.thread, generation))
                        .unwrap_or_default();
                    if let Some(s) = &state.switches {
                        state.summary.offcpu_ticks = s.total();
                        state.summary.switches = s.intervals.len() as u64;
                        state.cpu_time = time_basis == TimeBasis::Cpu;
                    }
                }
                let ids = function_ids.entry(chunk.thread).or_default();
                let latest_before = state.summary.last_time;
                let replayed = state.events(&events, ids, &side.unloads, visitor, data);
                // What the chunk's records did to the thread, also when a damaged record ended
                // them: the chunks are checked first.
                if let Some((first, last)) = state.chunk_span {
                    let times = chunk_times.entry(chunk.thread).or_default();
                    let before = times.records.replace((first, last, chunk.offset));
                    let back = before.filter(|&(start, end, _)| goes_back(first, (start, end)));
                    if let Some((start, _, earlier)) = back {
                        // The same start: a copy of that chunk.
                        let how = if first == start {
                            OutOfPlace::Repeats
                        } else {
                            OutOfPlace::GoesBack
                        };
                        summary.misplaced(at, earlier, how);
                    } else if let Some((_, _, earlier)) = times.pause.filter(|p| first < p.1) {
                        // Records of a buffer before the hand-over that ended the buffer before
                        // it: a PAUSE moved after them, or they before it.
                        summary.misplaced(at, earlier, OutOfPlace::BeforePause);
                    }
                    if let Some(run) = run {
                        // The latest time the thread reached (compensated: earlier by far less
                        // than the run's length), if this chunk moved it.
                        let latest = state
                            .summary
                            .last_time
                            .filter(|&t| Some(t) != latest_before);
                        if run.far_outside(first) {
                            summary.outside_run(at, first, (run.first, run.last));
                        } else if let Some(t) = latest.filter(|&t| run.far_outside(t)) {
                            summary.outside_run(at, t, (run.first, run.last));
                        }
                    }
                }
                summary.records += replayed?;
            }
            Chunk::Lost { count, at } => {
                let state = get_thread(&mut threads, chunk.thread, compensate);
                state.summary.lost = state.summary.lost.saturating_add(count);
                summary.lost_in_chunks = summary.lost_in_chunks.saturating_add(count);
                if let Some(at) = at {
                    // A marker of no records is another thread's side of a loss that took
                    // task switches too: a gap, not another place.
                    summary.lost_markers += u64::from(count > 0);
                    if !use_trees {
                        state.gap(at, count, visitor);
                    }
                }
            }
            Chunk::Thread { sequence, name } => {
                let order = threads.len() + finished.len();
                let mut state = threads
                    .remove(&chunk.thread)
                    .unwrap_or_else(|| ThreadState::new(chunk.thread, order, compensate));
                // Every thread has its own sequence number, even one reusing a TID.
                match sequences.get(&sequence) {
                    Some(&earlier) => summary.misplaced(at, earlier, OutOfPlace::Repeats),
                    None => {
                        sequences.insert(sequence, chunk.offset);
                    }
                }
                state.summary.sequence = Some(sequence);
                state.summary.name = Some(name);
                finished.push(state);
                *generations.entry(chunk.thread).or_default() += 1;
            }
            Chunk::Clock(clock) => summary.clock = Some(clock),
            Chunk::End { tick } => {
                let state = get_thread(&mut threads, chunk.thread, compensate);
                // One END chunk per thread, just before its THREAD chunk.
                match state.end_at {
                    Some(earlier) => summary.misplaced(at, earlier, OutOfPlace::Repeats),
                    None => state.end_at = Some(chunk.offset),
                }
                state.summary.end_time = Some(tick);
            }
            Chunk::Ring { dropped } => {
                summary.ring_dropped = summary.ring_dropped.saturating_add(dropped);
                summary.ring_windows += 1;
                get_thread(&mut threads, chunk.thread, compensate).window(dropped, visitor);
            }
            Chunk::Pause { from, to } => {
                summary.pauses += 1;
                summary.pause_ticks = summary.pause_ticks.saturating_add(to.saturating_sub(from));
                let state = get_thread(&mut threads, chunk.thread, compensate);
                let times = chunk_times.entry(chunk.thread).or_default();
                let before = times.pause.replace((from, to, chunk.offset));
                let back = before.filter(|&(start, end, _)| goes_back(from, (start, end)));
                if let Some((start, _, earlier)) = back {
                    let how = if from == start {
                        OutOfPlace::Repeats
                    } else {
                        OutOfPlace::GoesBack
                    };
                    summary.misplaced(at, earlier, how);
                } else if let Some((_, _, earlier)) = times.records.filter(|r| from < r.1) {
                    // The hand-over starts before the last record of the buffer it ends: the
                    // PAUSE was moved before its buffer's records.
                    summary.misplaced(at, earlier, OutOfPlace::PauseBeforeRecords);
                }
                if let Some(run) = run.filter(|r| r.far_outside(from) || r.far_outside(to)) {
                    let tick = if run.far_outside(from) { from } else { to };
                    summary.outside_run(at, tick, (run.first, run.last));
                }
                if let Some(c) = &mut state.compensator {
                    c.pause = c.pause.saturating_add(to.saturating_sub(from));
                }
            }
            Chunk::Profile(tree) => {
                summary.profile_chunks += 1;
                // Everything since the thread began: the last one of the thread is the one,
                // unless it is out of place (a copy after the thread's end would count the
                // thread twice; an older copy after a newer tree would count it short).
                let seen = trees_seen.get(&tree.sequence).copied();
                let out_of_place = if let Some(&ended) = sequences.get(&tree.sequence) {
                    Some((ended, OutOfPlace::AfterThreadEnd))
                } else if let Some((records, last, earlier)) = seen {
                    (tree.records < records || tree.last_tick < last)
                        .then_some((earlier, OutOfPlace::OlderTree))
                } else {
                    None
                };
                if let Some(run) = run {
                    if let Some(&tick) = [tree.first_tick, tree.last_tick]
                        .iter()
                        .find(|&&t| run.far_outside(t))
                    {
                        summary.outside_run(at, tick, (run.first, run.last));
                    }
                }
                if let Some((earlier, how)) = out_of_place {
                    summary.misplaced(at, earlier, how);
                } else {
                    trees_seen.insert(tree.sequence, (tree.records, tree.last_tick, chunk.offset));
                    if use_trees {
                        get_thread(&mut threads, chunk.thread, compensate).tree = Some(tree);
                    }
                }
            }
            Chunk::Folded { min_ticks, calls } => {
                summary.folded_calls = summary.folded_calls.saturating_add(calls);
                summary.folded_min_ticks = summary.folded_min_ticks.max(min_ticks);
            }
            Chunk::Writer(writer) => summary.writer = Some(writer),
            Chunk::Throttle(throttle) => summary.add_throttle(throttle),
            Chunk::Counted(list) => {
                let state = get_thread(&mut threads, chunk.thread, compensate);
                for (address, calls) in list {
                    *state.summary.counted.entry(address).or_insert(0) += calls;
                }
            }
            Chunk::Check(_) | Chunk::Overhead(_) | Chunk::Switch(_) | Chunk::Sample(_) => {}
            Chunk::Unknown => summary.unknown_chunks += 1,
            Chunk::Hole => summary.hole_bytes += chunk.total_len(),
        }
    }
    summary.modules = side.unloads.modules(module_chunks);
    summary.integrity.finish();
    let mut states: Vec<ThreadState> = finished;
    states.extend(threads.into_values());
    states.sort_by_key(|s| (s.summary.sequence.unwrap_or(u64::MAX), s.order));
    let end = summary.clock.as_ref().map(|c| c.last_tick);
    for state in &mut states {
        if let Some(tree) = &state.tree {
            summary.profile_nodes += tree.nodes.len() as u64;
        }
        let ids = function_ids.entry(state.summary.tid).or_default();
        state.finish(end, ids, visitor);
        let (given, kept) = state.tree_records;
        summary.records = summary.records.saturating_add(kept);
        summary.tree_records_given = summary.tree_records_given.saturating_add(given);
    }
    summary.threads = states.into_iter().map(|s| s.summary).collect();
    Ok(summary)
}

fn get_thread(
    threads: &mut HashMap<u64, ThreadState>,
    tid: u64,
    overhead: Option<Overhead>,
) -> &mut ThreadState {
    let order = threads.len() + 1_000_000; // after every thread already finished, in order
    threads
        .entry(tid)
        .or_insert_with(|| ThreadState::new(tid, order, overhead))
}

/// Whether `trace` has PROFILE chunks, and records (EVENTS or PACKED chunks).
fn contents(trace: &Trace<'_>) -> (bool, bool) {
    let (mut trees, mut records) = (false, false);
    for chunk in trace.chunks() {
        match chunk.map(|c| c.chunk) {
            Ok(Chunk::Profile(_)) => trees = true,
            // An empty one (a firmware's profile keeps its EVENTS chunk's header) holds none.
            Ok(Chunk::Events(events)) => records |= events.len() > 0,
            Ok(_) => {}
            Err(_) => break,
        }
        if trees && records {
            break;
        }
    }
    (trees, records)
}

/// The OVERHEAD chunk, which the runtime writes before any EVENTS chunk: looked for up to the
/// first one, so that a thread's times are compensated from its first record.
fn overhead(trace: &Trace<'_>) -> Option<Overhead> {
    for chunk in trace.chunks() {
        match chunk.ok()?.chunk {
            Chunk::Overhead(o) if o.pairs > 0 => return Some(o),
            Chunk::Events(_) => return None,
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::format::{Endian, Writer};

    #[derive(Default)]
    struct Log(Vec<String>);

    impl ReplayVisitor for Log {
        fn enter(&mut self, tid: u64, stack: &[Frame]) {
            let f = stack.last().unwrap();
            self.0
                .push(format!("{tid} enter {:x} depth {}", f.address, stack.len()));
        }
        fn exit(&mut self, tid: u64, time: u64, reason: CloseReason, stack: &[Frame]) {
            let f = stack.last().unwrap();
            self.0.push(format!(
                "{tid} exit {:x} at {time} {reason:?} depth {}",
                f.address,
                stack.len()
            ));
        }
        fn unmatched_exit(&mut self, tid: u64, time: u64, address: u64, _: &[Frame]) {
            self.0
                .push(format!("{tid} unmatched exit {address:x} at {time}"));
        }
    }

    /// Version 1, which takes any address: the tests name functions 0xa, 0xb, … to read well.
    fn trace(records: &[Record]) -> Vec<u8> {
        let mut header = crate::input::format::Header::new(Endian::Little);
        header.version = 1;
        let mut w = Writer::new(Vec::new(), &header).unwrap();
        w.events(5, records).unwrap();
        w.into_inner()
    }

    #[test]
    fn pairs_as_the_format_document_says() {
        use Record as R;
        let bytes = trace(&[
            R::entry(0, 0xa),
            R::entry(1, 0xb),
            R::entry(2, 0xc),
            R::exit(3, 0xd), // no frame: unmatched exit
            R::exit(4, 0xb), // closes c (unmatched entry) then b
            R::entry(5, 0xe),
        ]);
        let trace = Trace::new(&bytes).unwrap();
        let mut log = Log::default();
        let summary = replay(&trace, &mut log).unwrap();
        assert_eq!(
            log.0,
            [
                "5 enter a depth 1",
                "5 enter b depth 2",
                "5 enter c depth 3",
                "5 unmatched exit d at 3",
                "5 exit c at 4 UnwoundByOuterExit depth 3",
                "5 exit b at 4 Exit depth 2",
                "5 enter e depth 2",
                "5 exit e at 5 EndOfThread depth 2",
                "5 exit a at 5 EndOfThread depth 1",
            ]
        );
        let t = &summary.threads[0];
        assert_eq!(
            (t.unmatched_entries, t.unmatched_exits, t.closed_at_end),
            (1, 1, 2)
        );
        assert_eq!(t.end_time, None);
        assert_eq!(t.max_depth, 3);
        assert_eq!(summary.records, 6);
    }

    /// The docs' example (docs/trace-format.md, "OVERHEAD"): each call loses the hooks' time
    /// inside its window, and a whole pair per call made inside it.
    #[test]
    fn compensation_subtracts_the_measured_hook_time() {
        use crate::input::format::Overhead;
        use Record as R;
        let records = [
            R::entry(0, 0xa),
            R::entry(20, 0xb),
            R::exit(50, 0xb),
            R::entry(70, 0xb),
            R::exit(100, 0xb),
            R::exit(130, 0xa),
        ];
        let mut header = crate::input::format::Header::new(Endian::Little);
        header.version = 1;
        let mut w = Writer::new(Vec::new(), &header).unwrap();
        w.overhead(&Overhead {
            self_ticks: 10,
            child_ticks: 6,
            pairs: 255,
            ..Overhead::default()
        })
        .unwrap();
        w.events(5, &records).unwrap();
        let bytes = w.into_inner();
        let mut log = Log::default();
        let summary = replay(&Trace::new(&bytes).unwrap(), &mut log).unwrap();
        assert!(summary.compensated);
        // b: 30 - 10 = 20 each; a: 130 - 10 - 2 * (10 + 6) = 88.
        assert_eq!(
            log.0,
            [
                "5 enter a depth 1",
                "5 enter b depth 2",
                "5 exit b at 32 Exit depth 2",
                "5 enter b depth 2",
                "5 exit b at 66 Exit depth 2",
                "5 exit a at 88 Exit depth 1",
            ]
        );
        // Without the chunk, the same records keep their times.
        let raw = trace(&records);
        let mut log = Log::default();
        let summary = replay(&Trace::new(&raw).unwrap(), &mut log).unwrap();
        assert!(!summary.compensated);
        assert_eq!(log.0[5], "5 exit a at 130 Exit depth 1");
    }

    /// A PAUSE chunk (the runtime writing the buffer inside a hook) comes out of the gap before
    /// the thread's next record, the first of its next EVENTS chunk.
    #[test]
    fn compensation_takes_the_runtime_s_pauses_out() {
        use crate::input::format::Overhead;
        use Record as R;
        let mut header = crate::input::format::Header::new(Endian::Little);
        header.version = 1;
        let mut w = Writer::new(Vec::new(), &header).unwrap();
        w.overhead(&Overhead {
            self_ticks: 2,
            child_ticks: 2,
            pairs: 255,
            ..Overhead::default()
        })
        .unwrap();
        w.events(5, &[R::entry(0, 0xa), R::entry(10, 0xb)]).unwrap();
        w.pause(5, 20, 1020).unwrap();
        w.events(5, &[R::exit(1030, 0xb), R::exit(1040, 0xa)])
            .unwrap();
        let bytes = w.into_inner();
        let mut log = Log::default();
        replay(&Trace::new(&bytes).unwrap(), &mut log).unwrap();
        // b: 1020 - 1000 - 2 = 18 (entered at 8); a: 1040 - 1000 - 2 - 4 = 34.
        assert_eq!(
            log.0[2..],
            ["5 exit b at 26 Exit depth 2", "5 exit a at 34 Exit depth 1"]
        );
    }

    /// The trace the two tests below read: thread 5 calls a (0x10) at tick 100, which calls b
    /// (0x20) from 200 to 700, and returns at 1000 (2 ticks a ns); it was switched out at ns
    /// 1150..1250 = ticks 300..500 (in b) and ns 1400..1450 = ticks 800..900 (in a only, the
    /// anchor's ns 1000 being tick 0); then, after its THREAD chunk, a thread of TID
    /// `second_tid` calls a from 2000 to 2500, with no switches of its own.
    fn switched_trace(second_tid: u64) -> Vec<u8> {
        use crate::input::format::{Clock, Switches};
        use Record as R;
        let mut header = crate::input::format::Header::new(Endian::Little);
        header.ticks_per_second = 2_000_000_000;
        let mut w = Writer::new(Vec::new(), &header).unwrap();
        w.events(
            5,
            &[
                R::entry(100, 0x10),
                R::entry(200, 0x20),
                R::exit(700, 0x20),
                R::exit(1000, 0x10),
            ],
        )
        .unwrap();
        let switches = Switches {
            anchor_ticks: 0,
            anchor_ns: 1000,
            lost: 0,
            pairs: vec![(1150, 1250), (1400, 1450)],
        };
        w.switches(5, &switches).unwrap();
        w.thread(5, 1, "first").unwrap();
        w.events(second_tid, &[R::entry(2000, 0x10), R::exit(2500, 0x10)])
            .unwrap();
        w.clock(&Clock {
            ticks_per_second: 2_000_000_000,
            first_tick: 0,
            last_tick: 3000,
            header_check: None,
        })
        .unwrap();
        w.into_inner()
    }

    /// Off-CPU time (SWITCH chunks, written after the records they fall among): a frame gets
    /// the switched-out time while it is open, its exclusive part the switches while it is on
    /// top; the anchor maps the pairs' ns to ticks (here 2 ticks a ns, anchor 1000 ns = tick
    /// 0); a thread that reuses a TID after another one's THREAD chunk has its own.
    #[test]
    fn switched_out_time_goes_to_the_frames_open_during_it() {
        use crate::analysis::model::Profile;
        // The next thread with TID 5 (after the first's THREAD chunk): no switches of its own.
        let bytes = switched_trace(5);
        let profile = Profile::from_trace(&Trace::new(&bytes).unwrap()).unwrap();
        assert!(profile.summary.has_switches);
        assert_eq!(profile.summary.switches, 2);
        let first = &profile.threads[0].table.functions;
        assert_eq!(
            (
                first[&0x10].inclusive_offcpu_ticks,
                first[&0x10].exclusive_offcpu_ticks
            ),
            (300, 100)
        );
        assert_eq!(
            (
                first[&0x20].inclusive_offcpu_ticks,
                first[&0x20].exclusive_offcpu_ticks
            ),
            (200, 200)
        );
        // The profile keeps a reused TID's functions together: the second thread's call of
        // a added no off-CPU time.
        assert_eq!(first[&0x10].calls, 2);
        assert_eq!(profile.summary.threads[0].offcpu_ticks, 300);
        assert_eq!(profile.summary.threads[1].offcpu_ticks, 0);
    }

    /// `--time=cpu`: each thread's times less its time switched out, so a frame's durations
    /// are its on-CPU ones (what the wall clock gives less the off-CPU time above); a thread
    /// without switches keeps its wall times. On the wall clock, a visitor hears of each
    /// switched-out interval between the records it fell between, with the stack open then.
    #[test]
    fn the_cpu_clock_leaves_the_switched_out_time_out() {
        use crate::analysis::model::Profile;
        let bytes = switched_trace(6);

        let cpu = Profile::from_bytes_on(&bytes, TimeBasis::Cpu).unwrap();
        assert_eq!(cpu.summary.time, TimeBasis::Cpu);
        let first = &cpu.threads[0].table.functions;
        let times = |s: &crate::analysis::model::FunctionStats| {
            (
                s.inclusive_ticks,
                s.exclusive_ticks,
                s.min_ticks,
                s.max_ticks,
            )
        };
        // a: 900 on the wall, 300 of it out (100 while on top); b: 500, 200 out.
        assert_eq!(times(&first[&0x10]), (600, 300, 600, 600));
        assert_eq!(times(&first[&0x20]), (300, 300, 300, 300));
        // The off-CPU columns stay what they were measured.
        assert_eq!(first[&0x10].inclusive_offcpu_ticks, 300);
        // Thread 6 has no switches: its wall time.
        assert_eq!(
            times(&cpu.threads[1].table.functions[&0x10]),
            (500, 500, 500, 500)
        );
        let wall = Profile::from_bytes_on(&bytes, TimeBasis::Wall).unwrap();
        assert_eq!(wall.summary.time, TimeBasis::Wall);
        assert_eq!(
            times(&wall.threads[0].table.functions[&0x10]),
            (900, 400, 900, 900)
        );

        #[derive(Default)]
        struct Out {
            time: TimeBasis,
            seen: Vec<(u64, u64, u64, u64)>,
        }
        impl ReplayVisitor for Out {
            fn switched_out(
                &mut self,
                tid: u64,
                from: u64,
                to: u64,
                _reason: SwitchReason,
                stack: &[Frame],
            ) {
                self.seen
                    .push((tid, from, to, stack.last().unwrap().address));
            }
            fn time_basis(&self) -> TimeBasis {
                self.time
            }
        }
        let mut out = Out::default();
        replay(&Trace::new(&bytes).unwrap(), &mut out).unwrap();
        assert_eq!(out.seen, [(5, 300, 500, 0x20), (5, 800, 900, 0x10)]);
        // On the CPU clock the time is not there: no interval.
        let mut out = Out {
            time: TimeBasis::Cpu,
            ..Out::default()
        };
        replay(&Trace::new(&bytes).unwrap(), &mut out).unwrap();
        assert!(out.seen.is_empty());
    }

    /// Switch records the kernel dropped (a ring the writer thread did not read in time) are
    /// said in every view's warnings, with what they make of the times on each clock.
    #[test]
    fn dropped_switch_records_are_a_warning_on_either_clock() {
        use crate::analysis::model::Profile;
        use crate::analysis::warnings::profile_warnings;
        use crate::input::format::Switches;
        use Record as R;
        let mut header = crate::input::format::Header::new(Endian::Little);
        header.ticks_per_second = 1_000_000_000;
        let mut w = Writer::new(Vec::new(), &header).unwrap();
        w.events(5, &[R::entry(100, 0x10), R::exit(1000, 0x10)])
            .unwrap();
        let switches = Switches {
            anchor_ticks: 0,
            anchor_ns: 0,
            lost: 7,
            pairs: vec![(300, 500)],
        };
        w.switches(5, &switches).unwrap();
        let bytes = w.into_inner();
        for (time, says) in [
            (
                TimeBasis::Cpu,
                "the CPU times (--time=cpu) are upper bounds",
            ),
            (TimeBasis::Wall, "the off-CPU times are lower bounds"),
        ] {
            let profile = Profile::from_bytes_on(&bytes, time).unwrap();
            let warnings = profile_warnings(&profile.summary);
            assert!(
                warnings.iter().any(|w| w.starts_with(
                    "the kernel dropped 7 context-switch records (a thread's ring was full"
                ) && w.ends_with(says)),
                "{warnings:?}"
            );
        }
    }

    /// Samples come at their places among the records: the frames open at a sample's
    /// instant get its total time, the samples are kept by address and top frame (which
    /// the report names), and the ones before the first record, between two calls and after
    /// the last record's frames closed count as outside; the anchor maps ns to ticks as for
    /// switches (2 ticks a ns, anchor 1000 ns = tick 0), across the batches of the replay.
    #[test]
    fn samples_go_to_the_frames_open_at_their_instant() {
        use crate::analysis::model::Profile;
        use crate::input::format::{Clock, Samples};
        use Record as R;
        let mut header = crate::input::format::Header::new(Endian::Little);
        header.ticks_per_second = 2_000_000_000;
        let mut w = Writer::new(Vec::new(), &header).unwrap();
        // a (0x10) from 100 to 1000, b (0x20) inside it from 200 to 700, then 40 calls of c
        // (0x30) from 2000 on, 10 ticks each: more than a batch of records.
        let mut records = vec![
            R::entry(100, 0x10),
            R::entry(200, 0x20),
            R::exit(700, 0x20),
            R::exit(1000, 0x10),
        ];
        for i in 0..40u64 {
            records.push(R::entry(2000 + 20 * i, 0x30));
            records.push(R::exit(2010 + 20 * i, 0x30));
        }
        w.events(5, &records).unwrap();
        let at = |tick: u64| 1000 + tick / 2; // ns of a tick
        let samples = Samples {
            anchor_ticks: 0,
            anchor_ns: 1000,
            period_ns: 100_000,
            in_hooks: 3,
            points: vec![
                (at(50), 0x1),    // before any record: outside
                (at(300), 0x25),  // in b
                (at(800), 0x14),  // in a, after b
                (at(1500), 0x2),  // between a and the c calls: outside
                (at(2004), 0x31), // in the first c
                (at(2784), 0x33), // in the 40th c: the last batch
                (at(2900), 0x3),  // after every record: outside
            ],
        };
        w.samples(5, &samples).unwrap();
        w.thread(5, 1, "main").unwrap();
        w.clock(&Clock {
            ticks_per_second: 2_000_000_000,
            first_tick: 0,
            last_tick: 3000,
            header_check: None,
        })
        .unwrap();
        let bytes = w.into_inner();
        let profile = Profile::from_trace(&Trace::new(&bytes).unwrap()).unwrap();
        let s = &profile.summary;
        assert_eq!((s.sample_period_ns, s.samples_in_hooks), (100_000, 3));
        assert_eq!(s.samples(), (7, 4));
        assert_eq!(s.threads[0].samples_outside, 3);
        let table = &profile.threads[0].table;
        let total = |f: u64| table.functions[&f].sampled_total;
        assert_eq!((total(0x10), total(0x20), total(0x30)), (2, 1, 2));
        let mut by_place: Vec<_> = table.samples.iter().map(|(&k, &n)| (k, n)).collect();
        by_place.sort_unstable();
        assert_eq!(
            by_place,
            [
                ((0x14, 0x10), 1),
                ((0x25, 0x20), 1),
                ((0x31, 0x30), 1),
                ((0x33, 0x30), 1)
            ]
        );
    }

    /// Switched-out time inside the runtime's pauses (waiting for the writer thread) is cut
    /// out when times are compensated, as the pauses are; overlapping switches merge.
    #[test]
    fn pauses_are_cut_out_of_the_switched_out_time() {
        let mut t = SwitchTimeline::new(
            vec![(60, 100), (10, 50), (15, 20)],
            vec![(20, 30), (40, 70), (90, 200)],
        );
        assert_eq!(t.intervals, [(10, 20), (30, 40), (70, 90)]);
        assert_eq!(t.total(), 40);
        assert_eq!(
            [5, 15, 25, 35, 80, 300].map(|time| t.offcpu_until(time)),
            [0, 5, 10, 15, 30, 40]
        );
        // Back in time: a search, the same answers.
        assert_eq!(t.offcpu_until(15), 5);
        assert_eq!(t.constant_over(41, 69), Some(20));
        assert_eq!(t.constant_over(41, 71), None);
    }

    #[test]
    fn frames_of_a_thread_that_ended_close_at_its_end_not_at_the_clock() {
        use Record as R;
        let mut header = crate::input::format::Header::new(Endian::Little);
        header.version = 1;
        let mut w = Writer::new(Vec::new(), &header).unwrap();
        // Thread 5 called pthread_exit inside b; thread 6 was still in c at exit().
        w.events(5, &[R::entry(10, 0xa), R::entry(11, 0xb)])
            .unwrap();
        w.end(5, 12).unwrap();
        w.thread(5, 2, "worker").unwrap();
        w.events(6, &[R::entry(20, 0xc)]).unwrap();
        w.clock(&Clock {
            ticks_per_second: 1,
            first_tick: 0,
            last_tick: 100,
            header_check: None,
        })
        .unwrap();
        let bytes = w.into_inner();
        let mut log = Log::default();
        let summary = replay(&Trace::new(&bytes).unwrap(), &mut log).unwrap();
        assert_eq!(
            log.0,
            [
                "5 enter a depth 1",
                "5 enter b depth 2",
                "6 enter c depth 1",
                "5 exit b at 12 EndOfThread depth 2",
                "5 exit a at 12 EndOfThread depth 1",
                "6 exit c at 100 EndOfThread depth 1",
            ]
        );
        assert_eq!(summary.thread(5).unwrap().end_time, Some(12));
        assert_eq!(summary.unknown_chunks, 0);
    }

    #[test]
    fn unmatched_exits_do_not_search_the_stack() {
        use Record as R;
        let n = 2000u64;
        let mut records: Vec<Record> = (0..n).map(|i| R::entry(i, 0xa)).collect();
        records.extend((0..n).map(|i| R::exit(n + i, 0xb)));
        records.push(R::exit(2 * n, 0xa)); // matches the top frame
        let mut state = ThreadState::new(5, 0, None);
        let mut ids = DenseIds::default();
        state.records(&records, &vec![0; records.len()], &mut ids, &mut ());
        assert_eq!(state.summary.unmatched_exits, n);
        assert_eq!(state.stack.len() as u64, n - 1);
        assert_eq!(
            state.searched, 0,
            "searched the stack for exits that have no frame"
        );
        // A matched exit below the top searches only the frames it closes.
        let mut nested: Vec<Record> = (0..n).map(|i| R::entry(i, 0xc + 4 * (i % 2))).collect();
        nested.push(R::exit(n, 0xc));
        let mut state = ThreadState::new(6, 0, None);
        let mut ids = DenseIds::default();
        state.records(&nested, &vec![0; nested.len()], &mut ids, &mut ());
        assert_eq!(state.summary.unmatched_entries, 1);
        assert!(state.searched <= 2, "searched {}", state.searched);
    }
}
