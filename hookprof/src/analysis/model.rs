//! Per-function statistics and caller→callee arcs, per thread and for the whole process.
//! Built by [`ProfileBuilder`], one consumer of the replay layer ([`crate::analysis::replay`]).

use crate::analysis::ids::{DenseIds, HashMap};
use crate::analysis::replay::{
    replay, replay_bytes, Aggregate, CloseReason, Frame, ReplayVisitor, TimeBasis, TraceSummary,
};
use crate::input::format::{FormatError, Trace};

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
    /// Of `inclusive_ticks`, the time its thread was switched out (off the CPU: blocked or
    /// preempted), from the trace's SWITCH chunks; 0 without them.
    pub inclusive_offcpu_ticks: u64,
    /// Of `exclusive_ticks`, the time switched out while the function was the top frame.
    pub exclusive_offcpu_ticks: u64,
    /// Samples of the thread's CPU time (SAMPLE chunks) that came while the function was
    /// open, once per sample however deep the recursion (its sampled total time); 0 without
    /// samples. Its sampled self time needs the samples' addresses named:
    /// [`FunctionTable::samples`].
    pub sampled_total: u64,
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
        self.inclusive_offcpu_ticks = self
            .inclusive_offcpu_ticks
            .saturating_add(other.inclusive_offcpu_ticks);
        self.exclusive_offcpu_ticks = self
            .exclusive_offcpu_ticks
            .saturating_add(other.exclusive_offcpu_ticks);
        self.sampled_total += other.sampled_total;
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
    /// Samples of the CPU time (SAMPLE chunks) by the address they were at and the entry
    /// point of the top frame then: a report gives each to the function at its address when
    /// that is a traced one, else to the top frame (docs/trace-format.md, "SAMPLE").
    pub samples: HashMap<(u64, u64), u64>,
}

impl FunctionTable {
    pub fn merge(&mut self, other: &FunctionTable) {
        for (addr, stats) in &other.functions {
            self.functions.entry(*addr).or_default().merge(stats);
        }
        for (arc, stats) in &other.arcs {
            self.arcs.entry(*arc).or_default().merge(stats);
        }
        for (key, n) in &other.samples {
            *self.samples.entry(*key).or_default() += n;
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

    /// Replays the trace in `data` (the whole file) and builds its profile: the same as
    /// [`Profile::from_trace`], faster ([`replay_bytes`] reads ahead).
    pub fn from_bytes(data: &[u8]) -> Result<Profile, FormatError> {
        Profile::from_bytes_on(data, TimeBasis::Wall)
    }

    /// [`Profile::from_bytes`] with times on the clock `time`: with [`TimeBasis::Cpu`] every
    /// time is the threads' CPU time (where the trace has their switches).
    pub fn from_bytes_on(data: &[u8], time: TimeBasis) -> Result<Profile, FormatError> {
        let mut builder = ProfileBuilder {
            time,
            ..ProfileBuilder::default()
        };
        let summary = replay_bytes(data, &mut builder)?;
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

    /// The samples of all threads merged ([`FunctionTable::samples`]).
    pub fn merged_samples(&self) -> HashMap<(u64, u64), u64> {
        let mut total: HashMap<(u64, u64), u64> = HashMap::default();
        for thread in &self.threads {
            for (key, n) in &thread.table.samples {
                *total.entry(*key).or_default() += n;
            }
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
///
/// While the trace is replayed, the statistics of a TID are kept in `Vec`s: functions
/// indexed by [`Frame::function`] (the replay numbers them per TID), arcs by a number of
/// their own. Closing a frame updates one cache line of the function and one entry of the
/// arc, with no lookup when the function's caller is the same as at its last exit
/// (remembered in the function's line) and one [`DenseIds`] lookup otherwise.
/// [`ProfileBuilder::finish`] turns them into the address-keyed [`FunctionTable`]s of the
/// [`Profile`].
#[derive(Default)]
pub struct ProfileBuilder {
    /// The tables of the TID of the last event: a thread's records come in chunks of
    /// thousands, so they are swapped in when another TID's chunk starts rather than looked
    /// up for every event.
    active: ThreadTables,
    /// `active`'s TID, `None` before the first event.
    active_tid: Option<u64>,
    /// The tables of the other TIDs (the entry of `active_tid` is empty while it is active),
    /// in order of first appearance.
    tables: Vec<ThreadTables>,
    /// Index in `tables` of every TID.
    by_tid: HashMap<u64, usize>,
    /// The clock the times are on.
    time: TimeBasis,
}

/// The statistics of one TID while they are built.
#[derive(Default)]
struct ThreadTables {
    /// Indexed by [`Frame::function`].
    functions: Vec<FunctionLine>,
    /// Frames closed by an outer exit and at the end of the thread, per function: rare, so
    /// kept out of `functions`.
    unwound: Vec<(u64, u64)>,
    /// Numbers the arcs by `(caller's function number + 1) << 32 | callee's function number`
    /// (caller 0 for a frame at the bottom of the stack).
    arc_ids: DenseIds,
    /// Indexed by the numbers of `arc_ids`, the statistics apart from the keys, which are
    /// only read at the end.
    arcs: Vec<ArcStats>,
    arc_keys: Vec<Arc>,
    /// Exits that matched no open frame, per address (such an address may have no function
    /// number).
    unmatched_exits: HashMap<u64, u64>,
    /// Off-CPU ticks per function, inclusive and exclusive: only frames the thread was
    /// switched out in add to them, so they are kept out of `functions`.
    offcpu: Vec<(u64, u64)>,
    /// Samples per function, their total time (SAMPLE chunks), kept out of `functions` as
    /// `offcpu` is; and by address and top frame ([`FunctionTable::samples`]).
    sampled: Vec<u64>,
    samples: HashMap<(u64, u64), u64>,
}

/// What closing a frame updates for its function, in one cache line.
#[derive(Clone, Debug)]
#[repr(align(64))]
struct FunctionLine {
    /// The function's address (0 in a line no frame has closed yet).
    address: u64,
    calls: u64,
    inclusive_ticks: u64,
    exclusive_ticks: u64,
    call_ticks_sum: u64,
    /// `u64::MAX` and 0 until the first call, so that a call updates them without a test.
    min_ticks: u64,
    max_ticks: u64,
    /// The arc of the function's last closed frame: its caller's function number + 1 (0 for
    /// none; [`FunctionLine::NO_CALLER`] before the first) and the arc's number.
    last_caller: u32,
    last_arc: u32,
}

impl FunctionLine {
    /// Never a caller's number + 1: [`DenseIds`] numbers stay below `u32::MAX - 1`.
    const NO_CALLER: u32 = u32::MAX;
    const NEW: FunctionLine = FunctionLine {
        address: 0,
        calls: 0,
        inclusive_ticks: 0,
        exclusive_ticks: 0,
        call_ticks_sum: 0,
        min_ticks: u64::MAX,
        max_ticks: 0,
        last_caller: FunctionLine::NO_CALLER,
        last_arc: 0,
    };
}

impl ThreadTables {
    /// The line of the function numbered `function`, made if it is new.
    #[inline]
    fn line(&mut self, function: u32) -> &mut FunctionLine {
        let index = function as usize;
        if index >= self.functions.len() {
            self.grow(index);
        }
        &mut self.functions[index]
    }

    #[cold]
    #[inline(never)]
    fn grow(&mut self, index: usize) {
        self.functions.resize(index + 1, FunctionLine::NEW);
    }

    /// The number of the arc from the function numbered `caller` - 1 (none if 0) to the
    /// function numbered `callee`; `key` is the arc by address, for a new arc.
    #[inline]
    fn arc(&mut self, caller: u32, callee: u32, key: impl FnOnce() -> Arc) -> u32 {
        let arc = self
            .arc_ids
            .id((u64::from(caller) << 32) | u64::from(callee));
        if arc as usize == self.arcs.len() {
            self.new_arc(key());
        }
        arc
    }

    #[cold]
    #[inline(never)]
    fn new_arc(&mut self, key: Arc) {
        self.arc_keys.push(key);
        self.arcs.push(ArcStats::default());
    }

    /// Counts a frame closed by an outer exit or at the end of its thread.
    #[cold]
    #[inline(never)]
    fn unwound(&mut self, function: u32, reason: CloseReason, count: u64) {
        let function = function as usize;
        if function >= self.unwound.len() {
            self.unwound.resize(function + 1, (0, 0));
        }
        match reason {
            CloseReason::Exit => {}
            CloseReason::UnwoundByOuterExit => self.unwound[function].0 += count,
            CloseReason::EndOfThread => self.unwound[function].1 += count,
        }
    }

    /// Adds a frame's off-CPU ticks.
    #[cold]
    #[inline(never)]
    fn offcpu(&mut self, function: u32, inclusive: u64, exclusive: u64) {
        let function = function as usize;
        if function >= self.offcpu.len() {
            self.offcpu.resize(function + 1, (0, 0));
        }
        let line = &mut self.offcpu[function];
        line.0 = line.0.saturating_add(inclusive);
        line.1 = line.1.saturating_add(exclusive);
    }

    /// The address-keyed table of the profile: every function with a closed frame or an
    /// unmatched exit, every arc.
    fn into_function_table(self) -> FunctionTable {
        let mut functions: HashMap<u64, FunctionStats> = HashMap::default();
        functions.reserve(self.functions.len());
        for (function, line) in self.functions.iter().enumerate() {
            if line.calls == 0 {
                // A function whose frames are all still open (only while replaying).
                continue;
            }
            let (unmatched_entries, closed_at_end) =
                self.unwound.get(function).copied().unwrap_or_default();
            let (inclusive_offcpu_ticks, exclusive_offcpu_ticks) =
                self.offcpu.get(function).copied().unwrap_or_default();
            let sampled_total = self.sampled.get(function).copied().unwrap_or_default();
            let stats = FunctionStats {
                calls: line.calls,
                inclusive_ticks: line.inclusive_ticks,
                exclusive_ticks: line.exclusive_ticks,
                call_ticks_sum: line.call_ticks_sum,
                min_ticks: line.min_ticks,
                max_ticks: line.max_ticks,
                unmatched_entries,
                unmatched_exits: 0,
                closed_at_end,
                inclusive_offcpu_ticks,
                exclusive_offcpu_ticks,
                sampled_total,
            };
            functions.insert(line.address, stats);
        }
        for (address, count) in self.unmatched_exits {
            functions.entry(address).or_default().unmatched_exits += count;
        }
        FunctionTable {
            functions,
            arcs: self.arc_keys.into_iter().zip(self.arcs).collect(),
            samples: self.samples,
        }
    }
}

impl ProfileBuilder {
    /// Makes `tid`'s tables the active ones.
    #[inline]
    fn activate(&mut self, tid: u64) {
        // One compare: `!tid` is never `tid`.
        if self.active_tid.unwrap_or(!tid) != tid {
            self.switch_to(tid);
        }
    }

    #[cold]
    #[inline(never)]
    fn switch_to(&mut self, tid: u64) {
        if let Some(old) = self.active_tid {
            std::mem::swap(&mut self.active, &mut self.tables[self.by_tid[&old]]);
        }
        let next = self.tables.len();
        let index = *self.by_tid.entry(tid).or_insert(next);
        if index == next {
            self.tables.push(ThreadTables::default());
        }
        std::mem::swap(&mut self.active, &mut self.tables[index]);
        self.active_tid = Some(tid);
    }

    /// Attaches the per-thread tables to `summary`'s threads. Tables are kept per TID: when
    /// a TID was reused by a later thread, the first thread with that TID gets the
    /// statistics of both.
    pub fn finish(mut self, summary: TraceSummary) -> Profile {
        if let Some(tid) = self.active_tid.take() {
            std::mem::swap(&mut self.active, &mut self.tables[self.by_tid[&tid]]);
        }
        let threads = summary
            .threads
            .iter()
            .map(|t| ThreadProfile {
                tid: t.tid,
                table: self
                    .by_tid
                    .remove(&t.tid)
                    .map(|i| std::mem::take(&mut self.tables[i]).into_function_table())
                    .unwrap_or_default(),
            })
            .collect();
        Profile { summary, threads }
    }
}

impl ReplayVisitor for ProfileBuilder {
    const AGGREGATES: bool = true;

    fn time_basis(&self) -> TimeBasis {
        self.time
    }

    /// Inlined into the replay's loop, where it runs for every call.
    #[inline(always)]
    fn exit(&mut self, tid: u64, time: u64, reason: CloseReason, stack: &[Frame]) {
        let Some((frame, callers)) = stack.split_last() else {
            return;
        };
        self.activate(tid);
        let tables = &mut self.active;
        let duration = time.saturating_sub(frame.entry_time);
        let exclusive = duration.saturating_sub(frame.child_ticks);

        let line = tables.line(frame.function);
        line.address = frame.address;
        line.calls += 1;
        line.min_ticks = line.min_ticks.min(duration);
        line.max_ticks = line.max_ticks.max(duration);
        line.call_ticks_sum = line.call_ticks_sum.saturating_add(duration);
        line.exclusive_ticks = line.exclusive_ticks.saturating_add(exclusive);
        if frame.outermost {
            line.inclusive_ticks = line.inclusive_ticks.saturating_add(duration);
        }

        let parent = callers.last();
        let caller = parent.map_or(0, |c| c.function + 1);
        let arc = if line.last_caller == caller {
            line.last_arc
        } else {
            let arc = tables.arc(caller, frame.function, || Arc {
                caller: parent.map(|c| c.address),
                callee: frame.address,
            });
            let line = &mut tables.functions[frame.function as usize];
            line.last_caller = caller;
            line.last_arc = arc;
            arc
        };
        let arc = &mut tables.arcs[arc as usize];
        arc.calls += 1;
        arc.exclusive_ticks = arc.exclusive_ticks.saturating_add(exclusive);
        if frame.outermost {
            arc.inclusive_ticks = arc.inclusive_ticks.saturating_add(duration);
        }

        if reason != CloseReason::Exit {
            tables.unwound(frame.function, reason, 1);
        }
        if frame.offcpu != 0 {
            // Counted as the inclusive time is (the outermost frame of a recursion alone);
            // exclusive: the switches that came while it was on top.
            let inclusive = if frame.outermost { frame.offcpu } else { 0 };
            let exclusive = frame.offcpu.saturating_sub(frame.child_offcpu);
            tables.offcpu(frame.function, inclusive, exclusive);
        }
    }

    fn sample(&mut self, tid: u64, ip: u64, stack: &[Frame]) {
        self.activate(tid);
        let tables = &mut self.active;
        for frame in stack.iter().filter(|f| f.outermost) {
            let function = frame.function as usize;
            if function >= tables.sampled.len() {
                tables.sampled.resize(function + 1, 0);
            }
            tables.sampled[function] += 1;
        }
        if let Some(top) = stack.last() {
            *tables.samples.entry((ip, top.address)).or_default() += 1;
        }
    }

    fn unmatched_exit(&mut self, tid: u64, _time: u64, address: u64, _stack: &[Frame]) {
        self.activate(tid);
        *self.active.unmatched_exits.entry(address).or_default() += 1;
    }

    fn unmatched_exits(&mut self, tid: u64, _time: u64, address: u64, count: u64) {
        self.activate(tid);
        let n = self.active.unmatched_exits.entry(address).or_default();
        *n = n.saturating_add(count);
    }

    /// A call path of a profile: what [`Self::exit`] adds for one frame, for all of them.
    fn aggregate(&mut self, tid: u64, stack: &[Frame], calls: &Aggregate) {
        let Some((frame, callers)) = stack.split_last() else {
            return;
        };
        if calls.calls == 0 {
            return;
        }
        self.activate(tid);
        let tables = &mut self.active;
        let line = tables.line(frame.function);
        line.address = frame.address;
        if line.calls == 0 {
            line.min_ticks = calls.min;
            line.max_ticks = calls.max;
        } else {
            line.min_ticks = line.min_ticks.min(calls.min);
            line.max_ticks = line.max_ticks.max(calls.max);
        }
        line.calls = line.calls.saturating_add(calls.calls);
        line.call_ticks_sum = line.call_ticks_sum.saturating_add(calls.ticks);
        line.exclusive_ticks = line.exclusive_ticks.saturating_add(calls.exclusive);
        if frame.outermost {
            line.inclusive_ticks = line.inclusive_ticks.saturating_add(calls.ticks);
        }
        let parent = callers.last();
        let caller = parent.map_or(0, |c| c.function + 1);
        let arc = tables.arc(caller, frame.function, || Arc {
            caller: parent.map(|c| c.address),
            callee: frame.address,
        });
        let stats = &mut tables.arcs[arc as usize];
        stats.calls = stats.calls.saturating_add(calls.calls);
        stats.exclusive_ticks = stats.exclusive_ticks.saturating_add(calls.exclusive);
        if frame.outermost {
            stats.inclusive_ticks = stats.inclusive_ticks.saturating_add(calls.ticks);
        }
        if calls.unwound != 0 {
            tables.unwound(
                frame.function,
                CloseReason::UnwoundByOuterExit,
                calls.unwound,
            );
        }
        if calls.closed_at_end != 0 {
            tables.unwound(
                frame.function,
                CloseReason::EndOfThread,
                calls.closed_at_end,
            );
        }
    }
}
