//! A thread's context switches: why it was switched out, and its timeline of runs.

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
pub(super) struct SwitchTimeline {
    /// `(out, in)` in ticks.
    pub(super) intervals: Vec<(u64, u64)>,
    /// Where the trace says why (its header's `FLAG_SWITCH_REASONS`): the switch-outs that were
    /// preemptions, in ticks, in order. `None`: the trace does not say.
    pub(super) preempted: Option<Vec<u64>>,
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
    pub(super) fn new(intervals: Vec<(u64, u64)>, pauses: Vec<(u64, u64)>) -> Self {
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
    pub(super) fn offcpu_until(&mut self, time: u64) -> u64 {
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
    pub(super) fn constant_over(&mut self, first: u64, last: u64) -> Option<u64> {
        let at_first = self.offcpu_until(first);
        let i = self.cursor;
        let ended = i == 0 || self.intervals[i - 1].1 <= first;
        let none_starts = self.intervals.get(i).is_none_or(|&(out, _)| out >= last);
        (ended && none_starts && last >= first).then_some(at_first)
    }

    /// The intervals (raw ticks) that overlap `(from, to)`, clipped to it: what the thread was
    /// switched out for between two of its records.
    pub(super) fn between(
        &self,
        from: u64,
        to: u64,
    ) -> impl Iterator<Item = (u64, u64, SwitchReason)> + '_ {
        let first = self.intervals.partition_point(|&(_, back)| back <= from);
        self.intervals[first..]
            .iter()
            .take_while(move |&&(out, _)| out < to)
            .map(move |&(out, back)| (out.max(from), back.min(to), self.reason(out, back)))
            .filter(|&(out, back, _)| back > out)
    }

    pub(super) fn total(&self) -> u64 {
        match (self.intervals.last(), self.before.last()) {
            (Some(&(out, back)), Some(&before)) => before.saturating_add(back - out),
            _ => 0,
        }
    }
}
