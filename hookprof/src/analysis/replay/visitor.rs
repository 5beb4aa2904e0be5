//! What a view sees of the replay: frames, the time basis, why a frame closed, and the
//! [`ReplayVisitor`] trait.

use super::switches::*;

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
    /// Free for the visitor: 0 when the frame is pushed, set in [`ReplayVisitor::enter`] and
    /// read back in [`ReplayVisitor::exit`] (a view's node for the frame: the views keep no
    /// stack of their own beside this one when they need no more, docs/performance.md).
    pub user: u32,
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
    /// [`TraceSummary::has_switches`](super::TraceSummary::has_switches)).
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
/// its last element is the new frame, whose [`Frame::user`] the visitor may set; in
/// [`ReplayVisitor::exit`] its last element is the frame being closed (still on the stack), so
/// `stack[stack.len() - 2]` is the caller.
pub trait ReplayVisitor {
    fn enter(&mut self, _tid: u64, _stack: &mut [Frame]) {}
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
    /// `records` more records of a thread were replayed (after their events; once per batch
    /// of a few hundred, for a progress bar).
    fn replayed(&mut self, _records: u64) {}
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

/// A visitor that does nothing: replay only for the counts in [`TraceSummary`](super::TraceSummary) (those of the
/// trees, where a file has trees and records: every call).
impl ReplayVisitor for () {
    const AGGREGATES: bool = true;
}
