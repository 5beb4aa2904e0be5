//! Per-function statistics and caller→callee arcs, per thread and for the whole process.
//! Built by [`ProfileBuilder`], one consumer of the replay layer ([`crate::replay`]).

use std::collections::HashMap as StdHashMap;

/// The maps of the model: one lookup per replayed record, so a fast non-cryptographic hash
/// (FxHash) instead of the standard library's DoS-resistant SipHash, which took more than half
/// of `hookprof report`'s time (docs/performance.md). The keys are addresses from the trace,
/// not attacker-chosen strings.
pub type HashMap<K, V> = StdHashMap<K, V, rustc_hash::FxBuildHasher>;

use crate::format::{FormatError, Trace};
use crate::replay::{replay, CloseReason, Frame, ReplayVisitor, TraceSummary};

/// Statistics of one function (one entry-point address), in ticks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionStats {
    /// Frames of the function that were closed (by their exit, by an outer exit, or at the
    /// end of the thread).
    pub calls: u64,
    /// Time inside the function including its callees, counted only for the outermost
    /// active frame of the function, so recursion is not counted twice and the inclusive
    /// time never exceeds the thread's span.
    pub inclusive_ticks: u64,
    /// Time inside the function excluding its direct callees.
    pub exclusive_ticks: u64,
    /// Sum of every call's own inclusive duration (recursive calls included); divided by
    /// `calls` this is the average inclusive time per call.
    pub call_ticks_sum: u64,
    /// Shortest and longest inclusive duration of a single call (0 when `calls` is 0).
    pub min_ticks: u64,
    pub max_ticks: u64,
    /// Frames of this function closed by an exit of a frame below them.
    pub unmatched_entries: u64,
    /// Exits of this function that matched no open frame.
    pub unmatched_exits: u64,
    /// Frames of this function still open at the end of their thread.
    pub closed_at_end: u64,
}

impl FunctionStats {
    /// Average inclusive ticks per call (rounded to nearest), always between min and max.
    pub fn avg_ticks(&self) -> u64 {
        if self.calls == 0 {
            0
        } else {
            ((u128::from(self.call_ticks_sum) + u128::from(self.calls) / 2)
                / u128::from(self.calls)) as u64
        }
    }

    fn record_call(&mut self, duration: u64, exclusive: u64, outermost: bool) {
        if self.calls == 0 {
            self.min_ticks = duration;
            self.max_ticks = duration;
        } else {
            self.min_ticks = self.min_ticks.min(duration);
            self.max_ticks = self.max_ticks.max(duration);
        }
        self.calls += 1;
        self.call_ticks_sum = self.call_ticks_sum.saturating_add(duration);
        self.exclusive_ticks = self.exclusive_ticks.saturating_add(exclusive);
        if outermost {
            self.inclusive_ticks = self.inclusive_ticks.saturating_add(duration);
        }
    }

    /// Adds `other` (the same function in another thread).
    pub fn merge(&mut self, other: &FunctionStats) {
        if other.calls != 0 {
            if self.calls == 0 {
                self.min_ticks = other.min_ticks;
                self.max_ticks = other.max_ticks;
            } else {
                self.min_ticks = self.min_ticks.min(other.min_ticks);
                self.max_ticks = self.max_ticks.max(other.max_ticks);
            }
        }
        self.calls += other.calls;
        self.inclusive_ticks = self.inclusive_ticks.saturating_add(other.inclusive_ticks);
        self.exclusive_ticks = self.exclusive_ticks.saturating_add(other.exclusive_ticks);
        self.call_ticks_sum = self.call_ticks_sum.saturating_add(other.call_ticks_sum);
        self.unmatched_entries += other.unmatched_entries;
        self.unmatched_exits += other.unmatched_exits;
        self.closed_at_end += other.closed_at_end;
    }
}

/// A caller→callee edge. `caller` is `None` for a frame at the bottom of its thread's stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Arc {
    pub caller: Option<u64>,
    pub callee: u64,
}

/// Statistics of an arc, in ticks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ArcStats {
    pub calls: u64,
    /// Inclusive ticks of the callee's frames on this arc that were the callee's outermost
    /// frame (as for [`FunctionStats::inclusive_ticks`]).
    pub inclusive_ticks: u64,
    /// Exclusive ticks of the callee's frames on this arc (the Dynamic Call Graph's
    /// `excl_cycles` of a parent or child line).
    pub exclusive_ticks: u64,
}

impl ArcStats {
    pub fn merge(&mut self, other: &ArcStats) {
        self.calls += other.calls;
        self.inclusive_ticks = self.inclusive_ticks.saturating_add(other.inclusive_ticks);
        self.exclusive_ticks = self.exclusive_ticks.saturating_add(other.exclusive_ticks);
    }
}

/// Functions and arcs of one thread, or of several merged.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionTable {
    /// Keyed by entry-point address.
    pub functions: HashMap<u64, FunctionStats>,
    pub arcs: HashMap<Arc, ArcStats>,
}

impl FunctionTable {
    pub fn merge(&mut self, other: &FunctionTable) {
        for (addr, stats) in &other.functions {
            self.functions.entry(*addr).or_default().merge(stats);
        }
        for (arc, stats) in &other.arcs {
            self.arcs.entry(*arc).or_default().merge(stats);
        }
    }
}

/// Statistics of one thread.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadProfile {
    pub tid: u64,
    pub table: FunctionTable,
}

/// The whole trace: its summary and per-thread statistics (same order as
/// `summary.threads`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Profile {
    pub summary: TraceSummary,
    pub threads: Vec<ThreadProfile>,
}

impl Profile {
    /// Replays `trace` and builds its profile.
    pub fn from_trace(trace: &Trace<'_>) -> Result<Profile, FormatError> {
        let mut builder = ProfileBuilder::default();
        let summary = replay(trace, &mut builder)?;
        Ok(builder.finish(summary))
    }

    /// All threads merged: the process totals.
    pub fn merged(&self) -> FunctionTable {
        let mut total = FunctionTable::default();
        for thread in &self.threads {
            total.merge(&thread.table);
        }
        total
    }

    /// The per-function statistics of all threads merged (without the arcs, which the
    /// flat profile does not need).
    pub fn merged_functions(&self) -> HashMap<u64, FunctionStats> {
        let mut total: HashMap<u64, FunctionStats> = HashMap::default();
        for thread in &self.threads {
            for (addr, stats) in &thread.table.functions {
                total.entry(*addr).or_default().merge(stats);
            }
        }
        total
    }

    /// Every address that appears in the profile (functions and callers), sorted.
    pub fn addresses(&self) -> Vec<u64> {
        let mut addrs: Vec<u64> = self
            .threads
            .iter()
            .flat_map(|t| t.table.functions.keys().copied())
            .collect();
        addrs.sort_unstable();
        addrs.dedup();
        addrs
    }
}

/// Builds a [`Profile`] from replayed events.
#[derive(Default)]
pub struct ProfileBuilder {
    threads: HashMap<u64, FunctionTable>,
}

impl ProfileBuilder {
    /// Attaches the per-thread tables to `summary`'s threads.
    pub fn finish(mut self, summary: TraceSummary) -> Profile {
        let threads = summary
            .threads
            .iter()
            .map(|t| ThreadProfile {
                tid: t.tid,
                table: self.threads.remove(&t.tid).unwrap_or_default(),
            })
            .collect();
        Profile { summary, threads }
    }
}

impl ReplayVisitor for ProfileBuilder {
    fn exit(&mut self, tid: u64, time: u64, reason: CloseReason, stack: &[Frame]) {
        let Some((frame, callers)) = stack.split_last() else {
            return;
        };
        let table = self.threads.entry(tid).or_default();
        let duration = time.saturating_sub(frame.entry_time);
        let exclusive = duration.saturating_sub(frame.child_ticks);
        let stats = table.functions.entry(frame.address).or_default();
        stats.record_call(duration, exclusive, frame.outermost);
        match reason {
            CloseReason::Exit => {}
            CloseReason::UnwoundByOuterExit => stats.unmatched_entries += 1,
            CloseReason::EndOfThread => stats.closed_at_end += 1,
        }
        let arc = table
            .arcs
            .entry(Arc {
                caller: callers.last().map(|f| f.address),
                callee: frame.address,
            })
            .or_default();
        arc.calls += 1;
        arc.exclusive_ticks = arc.exclusive_ticks.saturating_add(exclusive);
        if frame.outermost {
            arc.inclusive_ticks = arc.inclusive_ticks.saturating_add(duration);
        }
    }

    fn unmatched_exit(&mut self, tid: u64, _time: u64, address: u64, _stack: &[Frame]) {
        let table = self.threads.entry(tid).or_default();
        table.functions.entry(address).or_default().unmatched_exits += 1;
    }
}
