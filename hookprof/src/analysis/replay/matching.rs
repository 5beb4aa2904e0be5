//! Pairing entries and exits: one thread's stack and how each record moves it.

use crate::analysis::compensation::Compensator;
use crate::analysis::ids::DenseIds;
use crate::analysis::unload::Unloads;
use crate::input::cct::CallTree;
use crate::input::format::{
    Clock, Events, FormatError, Overhead, Record, RecordKind, COUNT_MARK, RECORD_SIZE,
};

use super::prefetch::*;
use super::summary::*;
use super::switches::*;
use super::visitor::*;

/// The run's ticks from the CLOCK chunk, and how far outside them a time may lie before it is
/// reported ([`TraceSummary::first_outside_run`]): the run's own length. Clocks that are not in
/// step across CPUs, compensation and a fork child's records before its own start move times
/// by far less; a damaged time (a delta of 2^62) by far more. None: no CLOCK chunk, or one
/// whose ticks do not go forward (a counter that wrapped: nothing to compare with).
#[derive(Clone, Copy)]
pub(super) struct RunTicks {
    pub(super) first: u64,
    pub(super) last: u64,
}

impl RunTicks {
    pub(super) fn of(clock: Option<Clock>) -> Option<RunTicks> {
        let c = clock?;
        (c.last_tick > c.first_tick).then_some(RunTicks {
            first: c.first_tick,
            last: c.last_tick,
        })
    }

    /// Whether `tick` is further from the run than its length.
    pub(super) fn far_outside(self, tick: u64) -> bool {
        let length = self.last - self.first;
        tick < self.first.saturating_sub(length) || tick > self.last.saturating_add(length)
    }
}

/// Times of the last records chunk and PAUSE chunk of a TID, to see a chunk that repeats or
/// goes back: `(first time, last time, offset)`. Kept across the threads that reuse a TID:
/// Linux gives a TID again only after its thread ended, so the later thread's records are
/// later.
#[derive(Clone, Copy, Default)]
pub(super) struct ChunkTimes {
    pub(super) records: Option<(u64, u64, u64)>,
    pub(super) pause: Option<(u64, u64, u64)>,
}

/// Whether a chunk whose first time is `first` goes back from the one before it, `before`
/// (its first and last time). Strictly earlier than its start, or the same start where that
/// chunk spanned time: clocks that are not in step across CPUs or coarse ones may repeat a
/// tick from one chunk to the next, never a chunk's start.
pub(super) fn goes_back(first: u64, before: (u64, u64)) -> bool {
    first < before.0 || (first == before.0 && before.1 != before.0)
}

pub(super) struct ThreadState {
    pub(super) summary: ThreadSummary,
    /// Offset of the thread's END chunk, for [`TraceSummary::misplaced`].
    pub(super) end_at: Option<u64>,
    /// Raw (uncompensated) times of the first and last records of the chunk [`Self::events`]
    /// just read, if it had any.
    pub(super) chunk_span: Option<(u64, u64)>,
    pub(super) order: usize,
    pub(super) stack: Vec<Frame>,
    /// Open frames per function, indexed by [`Frame::function`], to know whether a new
    /// frame is the outermost one, and whether an exit has a frame to close at all.
    open: Vec<u32>,
    /// The last record was a resync escape: the next one names the frame to return to.
    resync_pending: bool,
    /// A RING chunk came: exits without a frame were entered before the window.
    windowed: bool,
    /// Hook-overhead compensation of this thread's times, if on.
    pub(super) compensator: Option<Compensator>,
    /// The thread's calling-context tree (its last PROFILE chunk), replayed at its end, and
    /// then the records given to it and of those the ones it kept (the others counted lost).
    pub(super) tree: Option<Box<CallTree>>,
    pub(super) tree_records: (u64, u64),
    /// When the thread was switched out (its SWITCH chunks), looked up at its first records
    /// chunk, and its off-CPU ticks up to its last record.
    pub(super) switches: Option<SwitchTimeline>,
    pub(super) switches_looked_up: bool,
    offcpu_now: u64,
    /// [`TimeBasis::Cpu`] and the thread has switches: its times are moved onto its CPU
    /// clock (less the time switched out since its first record, `cpu_origin`), never back
    /// before `cpu_last`, the last time given.
    pub(super) cpu_time: bool,
    cpu_origin: Option<u64>,
    cpu_last: u64,
    /// On the wall clock, where switched-out time falls among a batch's records (before the
    /// record at the index, after the one before it, raw times `from`..`to` of those two), for
    /// [`ReplayVisitor::switched_out`]; and the raw time of the thread's last record.
    switch_cuts: Vec<(usize, u64, u64)>,
    last_raw: u64,
    /// The thread's samples (its SAMPLE chunks: raw ticks, in order, and addresses), looked
    /// up with its switches, the next one to replay, and where a batch is cut for them.
    pub(super) samples: Vec<(u64, u64)>,
    next_sample: usize,
    sample_cuts: Vec<usize>,
    /// Frames an exit's search for its frame looked at (tests check it stays linear).
    #[cfg(test)]
    pub(super) searched: u64,
}

impl ThreadState {
    pub(super) fn new(tid: u64, order: usize, overhead: Option<Overhead>) -> Self {
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
    pub(super) fn events<V: ReplayVisitor>(
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
    pub(super) fn records<V: ReplayVisitor>(
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
                        user: 0,
                    });
                    let depth = self.stack.len() as u64;
                    if depth > self.summary.max_depth {
                        self.summary.max_depth = depth;
                    }
                    visitor.enter(tid, &mut self.stack);
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
        visitor.replayed(records.len() as u64);
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
    pub(super) fn gap<V: ReplayVisitor>(&mut self, at: u64, count: u64, visitor: &mut V) {
        self.window(1, visitor);
        let at = self.compensator.map_or(at, |c| c.end(at));
        let at = self.on_clock(at, self.offcpu_now);
        visitor.lost(self.summary.tid, at, count);
    }

    pub(super) fn window<V: ReplayVisitor>(&mut self, dropped: u64, visitor: &mut V) {
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
                    user: 0,
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
    pub(super) fn finish<V: ReplayVisitor>(
        &mut self,
        end: Option<u64>,
        ids: &mut DenseIds,
        visitor: &mut V,
    ) {
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
