//! Hook-overhead compensation (docs/trace-format.md, "OVERHEAD"): each thread's timestamps
//! moved back by its hooks' own time so far, before the replay ([`crate::analysis::replay`])
//! or anything else sees them. On unless [`set_compensation`] turns it off.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::input::format::{Overhead, Record, RecordKind, COUNT_MARK};

static COMPENSATION: AtomicBool = AtomicBool::new(true);

/// Whether replays subtract the hooks' own time (the default) or show the raw timestamps
/// (`hookprof --no-compensation`). Process-wide: every replay after the call uses it.
pub fn set_compensation(on: bool) {
    COMPENSATION.store(on, Ordering::Relaxed);
}

/// See [`set_compensation`].
pub fn compensation() -> bool {
    COMPENSATION.load(Ordering::Relaxed)
}

/// Hook-overhead compensation of one thread's records (docs/trace-format.md, "OVERHEAD").
///
/// Between two consecutive records of a thread lies the part of the first record's hook after
/// its timestamp and the part of the next one's before it. The runtime measured two sums of
/// such parts: entry→exit of an empty function (`self_ticks`: the hooks' time inside a call's
/// window) and exit→next entry (`child_ticks`: their time outside it). Each record's time is
/// moved back by the hooks' time since the thread's first record: `self_ticks` for an
/// entry→exit gap, `child_ticks` for exit→entry, and half a pair for entry→entry and
/// exit→exit, whose parts are not measured apart but come in equal numbers within any call.
/// Within every call this subtracts exactly `self_ticks` for the call itself and a whole pair
/// (`self_ticks + child_ticks`) for each call made inside it; a gap is never shortened below
/// zero, so times stay in order. Resync records (longjmp) move nothing. A PAUSE (the runtime
/// writing the thread's buffer from inside a hook) is taken out of the gap it falls in, the
/// one before the thread's next record. A count mark (a record like the hooks', written every
/// `count_calls` counted calls) adds `count_ticks` to what is owed, which comes out of the gap
/// before it and, where that gap is shorter, out of the next ones, so that the enclosing calls
/// lose all of it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Compensator {
    pub(crate) overhead: Overhead,
    /// Ticks subtracted so far.
    shift: u64,
    /// The raw time of the thread's last record, and whether it is an exit.
    prev: Option<(u64, bool)>,
    /// The last record was a resync escape: the next one is its target.
    in_resync: bool,
    /// Ticks of PAUSE chunks to take out of the gap before the next record.
    pub(crate) pause: u64,
    /// Ticks of counted calls (count marks) not yet taken out.
    owed: u64,
}

impl Compensator {
    pub(crate) fn new(overhead: Overhead) -> Self {
        Compensator {
            overhead,
            shift: 0,
            prev: None,
            in_resync: false,
            pause: 0,
            owed: 0,
        }
    }

    pub(crate) fn apply(&mut self, records: &mut [Record]) {
        let Some(first) = records.first() else {
            return;
        };
        // The thread's first record has no gap before it: it is its own "previous" record
        // (a gap of 0).
        self.prev.get_or_insert((first.time, false));
        let mut rest = records;
        loop {
            if self.pause == 0 && self.owed == 0 && !self.in_resync {
                let done = self.plain_run(rest);
                rest = &mut rest[done..];
            }
            let Some((r, after)) = rest.split_first_mut() else {
                break;
            };
            self.step(r);
            rest = after;
        }
    }

    /// The hooks' time in a gap, by (previous record is an exit, this one is an exit).
    #[inline(always)]
    fn hooks_in_gap(&self) -> [u64; 4] {
        let o = self.overhead;
        let half_pair = o.self_ticks / 2 + o.child_ticks / 2 + (o.self_ticks & o.child_ticks & 1);
        [half_pair, o.self_ticks, o.child_ticks, half_pair]
    }

    /// Nearly every record, from the start of `records` while nothing is paused, owed or
    /// pending: an entry, or an exit of a function (not a resync escape, address 0, nor a
    /// count mark, address 4): its gap less the hooks' time in it, never below zero, which is
    /// what [`Self::step`] does for it, in a third of the instructions (its state in locals,
    /// for the loop that runs on every record of a report). Returns how many it took.
    #[inline(always)]
    fn plain_run(&mut self, records: &mut [Record]) -> usize {
        let hooks_in_gap = self.hooks_in_gap();
        let Some((mut prev_time, mut prev_exit)) = self.prev else {
            return 0;
        };
        let mut shift = self.shift;
        let mut done = 0;
        for r in records.iter_mut() {
            let exit = r.kind == RecordKind::Exit;
            if exit && (r.address & !COUNT_MARK) == 0 {
                break;
            }
            let raw = r.time;
            let hooks = hooks_in_gap[(usize::from(prev_exit) << 1) | usize::from(exit)];
            shift = shift.wrapping_add(hooks.min(raw.saturating_sub(prev_time)));
            (prev_time, prev_exit) = (raw, exit);
            r.time = raw.saturating_sub(shift);
            done += 1;
        }
        self.prev = Some((prev_time, prev_exit));
        self.shift = shift;
        done
    }

    /// One record, of any kind (the general step).
    fn step(&mut self, r: &mut Record) {
        let raw = r.time;
        let exit = r.kind == RecordKind::Exit;
        let escape = exit & (r.address == 0);
        let (prev_time, prev_exit) = self.prev.unwrap_or((raw, false));
        if !(escape | self.in_resync) {
            let hooks = self.hooks_in_gap()[(usize::from(prev_exit) << 1) | usize::from(exit)]
                .wrapping_add(self.pause);
            self.pause = 0;
            let o = self.overhead;
            if exit & (r.address == COUNT_MARK) && o.count_calls != 0 {
                self.owed = self.owed.saturating_add(o.count_ticks);
            }
            // Each step is at most the gap, so that times stay in order; the sum of the
            // steps is at most the thread's time span (wrapping only on a corrupt trace,
            // whose times are wrong anyway, never a panic).
            let gap = raw.saturating_sub(prev_time);
            let step = hooks.min(gap);
            let paid = self.owed.min(gap - step);
            self.owed -= paid;
            self.shift = self.shift.wrapping_add(step + paid);
            self.prev = Some((raw, exit));
        }
        self.in_resync = escape;
        r.time = raw.saturating_sub(self.shift);
    }

    /// A raw time after the thread's last record (its end), compensated like it.
    pub(crate) fn end(&self, raw: u64) -> u64 {
        raw.saturating_sub(self.shift)
    }
}

/// What the compensation's tests share: hooks of a known cost and a seeded record generator.
#[cfg(test)]
pub(crate) mod test_support {
    use crate::input::format::Overhead;

    /// Hooks of 11 ticks (7 of them in the child's gap), counted calls 40 ticks a 64.
    pub(crate) const OVERHEAD: Overhead = Overhead {
        self_ticks: 11,
        child_ticks: 7,
        pairs: 255,
        count_ticks: 40,
        count_calls: 64,
    };

    /// A xorshift generator: the same numbers on every run.
    pub(crate) fn numbers() -> impl FnMut() -> u64 {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{numbers, OVERHEAD};
    use super::*;

    /// The general step of [`Compensator::apply`] alone, for every record: what the fast
    /// path must give.
    fn apply_slowly(c: &mut Compensator, records: &mut [Record]) {
        if let Some(first) = records.first() {
            c.prev.get_or_insert((first.time, false));
        }
        records.iter_mut().for_each(|r| c.step(r));
    }

    /// Batches of every kind of record (escapes and their targets, count marks, pauses
    /// between batches, gaps shorter than the hooks) give the same times as the records one
    /// at a time.
    #[test]
    fn the_fast_path_gives_the_general_step_s_times() {
        let overhead = OVERHEAD;
        let mut next = numbers();
        for round in 0..200 {
            let mut time = 1000u64;
            let records: Vec<Record> = (0..300)
                .map(|_| {
                    time += next() % 30;
                    match next() % 20 {
                        0 => Record::exit(time, 0),
                        1 => Record::exit(time, COUNT_MARK),
                        2..=9 => Record::entry(time, 0x1000 + (next() % 4) * 16),
                        _ => Record::exit(time, 0x1000 + (next() % 4) * 16),
                    }
                })
                .collect();
            let (mut fast, mut slow) = (records.clone(), records.clone());
            let (mut a, mut b) = (Compensator::new(overhead), Compensator::new(overhead));
            let mut at = 0;
            while at < records.len() {
                let len = (next() % 40) as usize + 1;
                let end = (at + len).min(records.len());
                if round % 2 == 1 && next().is_multiple_of(3) {
                    let pause = next() % 50;
                    a.pause += pause;
                    b.pause += pause;
                }
                a.apply(&mut fast[at..end]);
                apply_slowly(&mut b, &mut slow[at..end]);
                at = end;
            }
            assert_eq!(fast, slow, "round {round}");
        }
    }

    /// A gap shorter than the hooks' time is not made negative: times stay in order.
    #[test]
    fn compensation_never_reorders_records() {
        let mut c = Compensator::new(Overhead {
            self_ticks: 100,
            child_ticks: 100,
            pairs: 1,
            ..Overhead::default()
        });
        let mut records = [
            Record::entry(1000, 0xa),
            Record::exit(1005, 0xa),
            Record::entry(1006, 0xa),
            Record::exit(1300, 0xa),
        ];
        c.apply(&mut records);
        let times: Vec<u64> = records.iter().map(|r| r.time).collect();
        assert_eq!(times, [1000, 1000, 1000, 1194]);
    }

    /// A count mark takes its counted calls' cost out of the gap before it, and what that gap
    /// cannot hold out of the next ones: the enclosing call loses all of it either way.
    #[test]
    fn a_count_mark_takes_its_calls_cost_out() {
        let overhead = Overhead {
            self_ticks: 10,
            child_ticks: 6,
            pairs: 255,
            count_ticks: 64,
            count_calls: 64,
        };
        for (mark_at, want_mark) in [(200, 126), (20, 0)] {
            let mut c = Compensator::new(overhead);
            let mut records = [
                Record::entry(0, 0xa),
                Record::exit(mark_at, COUNT_MARK),
                Record::exit(300, 0xa),
            ];
            c.apply(&mut records);
            let times: Vec<u64> = records.iter().map(|r| r.time).collect();
            // 300 - 10 (entry to mark) - 8 (half a pair: mark to exit) - 64 (the calls).
            assert_eq!(times, [0, want_mark, 218], "mark at {mark_at}");
        }
        // Without the cost measured (an older OVERHEAD chunk), a mark is only a record.
        let mut c = Compensator::new(Overhead {
            count_ticks: 0,
            count_calls: 0,
            ..overhead
        });
        let mut records = [
            Record::entry(0, 0xa),
            Record::exit(200, COUNT_MARK),
            Record::exit(300, 0xa),
        ];
        c.apply(&mut records);
        assert_eq!(records[2].time, 282);
    }
}
