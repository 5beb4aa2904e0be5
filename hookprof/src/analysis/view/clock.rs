//! A view's threads and time: TIDs numbered in order, the time base, each event's time.

use crate::analysis::ids::HashMap;

/// Numbers the TIDs a view meets 0, 1, 2, … in the order it meets them, for its per-thread
/// `Vec`s. The last TID asked for is answered without a look-up: a thread's records come in
/// chunks, so nearly every question is about the same thread as the one before.
#[derive(Debug, Default)]
pub struct TidIndex {
    by_tid: HashMap<u64, usize>,
    last: Option<(u64, usize)>,
}

impl TidIndex {
    /// The number of `tid`, and whether it is new (then it is the number of TIDs met
    /// before it: the caller adds its per-thread state at that index now).
    #[inline(always)]
    pub fn index(&mut self, tid: u64) -> (usize, bool) {
        match self.last {
            Some((last, index)) if last == tid => (index, false),
            _ => self.index_slow(tid),
        }
    }

    #[cold]
    #[inline(never)]
    fn index_slow(&mut self, tid: u64) -> (usize, bool) {
        let next = self.by_tid.len();
        let index = *self.by_tid.entry(tid).or_insert(next);
        self.last = Some((tid, index));
        (index, index == next)
    }
}

/// Converts ticks to nanoseconds since the trace's earliest record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBase {
    /// The earliest timestamp of any thread.
    pub base: u64,
    /// `None` when the trace has no clock rate: times stay in ticks.
    pub ticks_per_second: Option<u64>,
    /// Added to every [`TimeBase::time`]: where this trace's earliest record falls on a view of
    /// several traces (`hookprof timeline A B …`), in ns; 0 for one.
    pub offset: u64,
}

impl TimeBase {
    /// A duration in ticks as nanoseconds (rounded), or ticks without a clock rate.
    #[inline]
    pub fn duration(&self, ticks: u64) -> u64 {
        const NS: u64 = 1_000_000_000;
        match self.ticks_per_second {
            None => ticks,
            Some(tps) => {
                let tps = tps.max(1);
                // round(ticks * 1e9 / tps), in 64 bits where that is exact (views convert
                // every event's time: a 128-bit division is a library call).
                if let Some(scaled) = ticks.checked_mul(NS).and_then(|t| t.checked_add(tps / 2)) {
                    return scaled / tps;
                }
                if tps < 1 << 33 {
                    // ticks = q·tps + r: the q whole seconds are exact, r·1e9 < 2^63.
                    let (q, r) = (ticks / tps, ticks % tps);
                    return q
                        .saturating_mul(NS)
                        .saturating_add((r * NS + tps / 2) / tps);
                }
                let tps = u128::from(tps);
                u64::try_from((u128::from(ticks) * u128::from(NS) + tps / 2) / tps)
                    .unwrap_or(u64::MAX)
            }
        }
    }

    /// A timestamp as nanoseconds (or ticks) since the earliest record (of all traces, in a
    /// view of several).
    pub fn time(&self, ticks: u64) -> u64 {
        self.duration(ticks.saturating_sub(self.base)) + self.offset
    }

    /// A duration given in nanoseconds as ticks (rounded up, so that "at least" stays so).
    pub fn ticks_from_ns(&self, ns: u64) -> u64 {
        match self.ticks_per_second {
            None => ns,
            Some(tps) => u64::try_from((u128::from(ns) * u128::from(tps)).div_ceil(1_000_000_000))
                .unwrap_or(u64::MAX),
        }
    }

    /// The unit of [`TimeBase::duration`]: `ns` or `ticks`.
    pub fn unit(&self) -> &'static str {
        if self.ticks_per_second.is_some() {
            "ns"
        } else {
            "ticks"
        }
    }
}

/// [`TimeBase::time`] for every event of a streamed view: the same values, with the
/// division by the clock rate done as a multiplication by its reciprocal and one
/// correction (a 64-bit `div` takes some 40 cycles here, twice a call in a timeline).
#[derive(Clone, Copy, Debug)]
pub struct EventClock {
    clock: TimeBase,
    /// The clock rate (at least 1) and `floor(2^64 / rate)` (0 for a rate of 1).
    rate: u64,
    reciprocal: u64,
}

impl EventClock {
    pub fn new(clock: TimeBase) -> Self {
        let rate = clock.ticks_per_second.unwrap_or(1).max(1);
        let reciprocal = if rate > 1 {
            ((1u128 << 64) / u128::from(rate)) as u64
        } else {
            0
        };
        EventClock {
            clock,
            rate,
            reciprocal,
        }
    }

    /// What [`TimeBase::time`] gives for `ticks`.
    #[inline(always)]
    pub fn time(&self, ticks: u64) -> u64 {
        const NS: u64 = 1_000_000_000;
        let ticks = ticks.saturating_sub(self.clock.base);
        let duration = if self.clock.ticks_per_second.is_none() {
            ticks
        } else if let Some(n) = ticks
            .checked_mul(NS)
            .and_then(|t| t.checked_add(self.rate / 2))
        {
            self.divide(n)
        } else {
            self.clock.duration(ticks)
        };
        duration + self.clock.offset
    }

    /// `n / rate`: the reciprocal's quotient is the exact one or one less (`n · reciprocal /
    /// 2^64` lies within 1 below `n / rate`, as `n < 2^64`).
    #[inline(always)]
    fn divide(&self, n: u64) -> u64 {
        if self.rate == 1 {
            return n;
        }
        let q = ((u128::from(n) * u128::from(self.reciprocal)) >> 64) as u64;
        if n - q * self.rate >= self.rate {
            q + 1
        } else {
            q
        }
    }
}

/// A thread as the chunks describe it before the records are replayed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadInfo {
    pub tid: u64,
    /// From the THREAD chunk (1 = first thread), if any.
    pub sequence: Option<u64>,
    pub name: Option<String>,
}

impl ThreadInfo {
    /// The number views show for the thread: its sequence number, else its TID.
    pub fn label(&self) -> u64 {
        self.sequence.unwrap_or(self.tid)
    }

    /// The thread's name as a viewer's track shows it: `name (thread N, tid T)` from its
    /// THREAD chunk, else `tid T`.
    pub fn title(&self) -> String {
        match (&self.name, self.sequence) {
            (Some(name), Some(seq)) => format!("{name} (thread {seq}, tid {})", self.tid),
            _ => format!("tid {}", self.tid),
        }
    }
}

/// A duration with its unit (`ns`, `us` or `µs`, `ms`, `s`) in nanoseconds: `500ns`, `20us`,
/// `1.5ms`, `2s`; `0` alone needs none. A bare number is refused, as the runtime's
/// `HOOKCC_MIN_DURATION` refuses it: `--min-duration=5` read as 5 ns by one and rejected by the
/// other was two syntaxes for one thing (issue 34).
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale = match unit.trim() {
        "" => {
            if number.parse::<f64>().is_ok_and(|v| v == 0.0) {
                return Ok(0);
            }
            if number.parse::<f64>().is_ok() {
                return Err(format!(
                    "{text:?}: a duration needs a unit: {number}ns, {number}us, {number}ms or \
                     {number}s"
                ));
            }
            1.0
        }
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        other => {
            return Err(format!(
                "{text:?}: unknown unit {other:?} (use ns, us, ms or s)"
            ))
        }
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration such as 500ns, 20us, 1.5ms or 2s"))?;
    Ok((value * scale).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use super::EventClock;
    use super::TimeBase;

    #[test]
    fn a_duration_needs_its_unit_but_zero() {
        assert_eq!(parse_duration("500ns"), Ok(500));
        assert_eq!(parse_duration("20us"), Ok(20_000));
        assert_eq!(parse_duration("20µs"), Ok(20_000));
        assert_eq!(parse_duration("1.5ms"), Ok(1_500_000));
        assert_eq!(parse_duration("2s"), Ok(2_000_000_000));
        assert_eq!(parse_duration("0"), Ok(0));
        let e = parse_duration("5").unwrap_err();
        assert!(
            e.contains("needs a unit") && e.contains("5ns") && e.contains("5us"),
            "{e}"
        );
        assert!(parse_duration("1.5").unwrap_err().contains("1.5ms"));
        assert!(parse_duration("5parsecs")
            .unwrap_err()
            .contains("unknown unit"));
    }

    /// xorshift64 from `x`: the tests' random numbers.
    fn xorshift(mut x: u64) -> impl FnMut() -> u64 {
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// [`EventClock::time`] gives what [`TimeBase::time`] gives.
    #[test]
    fn the_event_clock_is_the_time_base_s() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let rates = [
            None,
            Some(0),
            Some(1),
            Some(2),
            Some(3),
            Some(999_999_937),
            Some(1_000_000_000),
            Some(2_200_000_095),
            Some(2_918_400_000),
            Some((1 << 33) - 1),
            Some(1 << 33),
            Some(1 << 40),
            Some(u64::MAX - 1),
            Some(u64::MAX),
        ];
        for ticks_per_second in rates {
            for (base, offset) in [(0, 0), (52_550_664_521_779, 0), (12_345, 1_000_000)] {
                let clock = TimeBase {
                    base,
                    ticks_per_second,
                    offset,
                };
                let fast = EventClock::new(clock);
                let tps = ticks_per_second.unwrap_or(1).max(1);
                let edges = [
                    0,
                    base,
                    base + 1,
                    base + tps / 2,
                    base.saturating_add(tps - 1),
                    base.saturating_add(tps),
                    base.saturating_add(u64::MAX / 1_000_000_000),
                    base.saturating_add(u64::MAX / 1_000_000_000 + 1),
                    u64::MAX / 2,
                ];
                for ticks in edges
                    .into_iter()
                    .chain((0..20_000).map(|i| base.saturating_add(next() >> (i % 64))))
                {
                    // (`time` overflows past u64::MAX ns after the offset, both ways.)
                    let duration = clock.duration(ticks.saturating_sub(base));
                    if duration.checked_add(offset).is_some() {
                        assert_eq!(
                            fast.time(ticks),
                            clock.time(ticks),
                            "{ticks} ticks at {ticks_per_second:?}/s from {base}"
                        );
                    }
                }
            }
        }
    }

    /// The 64-bit paths of `duration` give what the exact 128-bit formula gives.
    #[test]
    fn duration_is_the_rounded_exact_quotient() {
        let exact = |ticks: u64, tps: u64| {
            let tps = u128::from(tps);
            u64::try_from((u128::from(ticks) * 1_000_000_000 + tps / 2) / tps).unwrap_or(u64::MAX)
        };
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let rates = [
            1,
            3,
            999_999_937,
            1_000_000_000,
            2_918_400_000,
            (1 << 33) - 1,
            1 << 33,
            u64::MAX,
        ];
        for &tps in &rates {
            let clock = TimeBase {
                base: 0,
                ticks_per_second: Some(tps),
                offset: 0,
            };
            let edges = [
                0,
                1,
                tps / 2,
                tps - 1,
                tps,
                u64::MAX / 1_000_000_000,
                u64::MAX,
            ];
            for ticks in edges
                .into_iter()
                .chain((0..20_000).map(|i| next() >> (i % 64)))
            {
                assert_eq!(
                    clock.duration(ticks),
                    exact(ticks, tps),
                    "{ticks} ticks at {tps}/s"
                );
            }
        }
    }
}
