//! Percentiles of the inclusive time of single calls, per function (`hookprof report
//! --percentiles`), as `llvm-xray account` shows them.
//!
//! A [`View`] that keeps every call's duration per thread and function: the durations
//! themselves up to [`EXACT_CALLS`] of them (percentiles then exact, by nearest rank), beyond
//! that a histogram (the `hdrhistogram` crate, three significant digits: within 0.1 %), so
//! memory grows with the functions, not with the calls. Every answer lies in the function's
//! [shortest, longest] call. Every call counts, recursive ones too, as for the min, max and
//! average columns.

use hdrhistogram::Histogram;

use crate::analysis::ids::HashMap;
use crate::analysis::view::{Names, TraceInfo, View, ViewFrame};
use crate::output::report::flat::FlatReport;

/// Up to this many calls of a function (per thread, and merged) are kept one by one: a
/// percentile of them is exact. 8 KiB a function at most.
pub const EXACT_CALLS: usize = 1024;

/// The durations of one function's calls: exact while few, a histogram beyond.
#[derive(Clone, Debug, Default)]
pub struct Durations {
    exact: Vec<u64>,
    histogram: Option<Histogram<u64>>,
    count: u64,
    min: u64,
    max: u64,
}

impl Durations {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one call's duration.
    pub fn record(&mut self, value: u64) {
        self.min = if self.count == 0 {
            value
        } else {
            self.min.min(value)
        };
        self.max = self.max.max(value);
        self.count += 1;
        match &mut self.histogram {
            Some(h) => record(h, value, 1),
            None if self.exact.len() < EXACT_CALLS => self.exact.push(value),
            None => {
                let mut h = new_histogram();
                for &v in &self.exact {
                    record(&mut h, v, 1);
                }
                record(&mut h, value, 1);
                self.exact = Vec::new();
                self.histogram = Some(h);
            }
        }
    }

    /// Adds every duration of `other`.
    pub fn add(&mut self, other: &Durations) {
        if other.count == 0 {
            return;
        }
        match &other.histogram {
            None => other.exact.iter().for_each(|&v| self.record(v)),
            Some(theirs) => {
                let mut h = self.histogram.take().unwrap_or_else(new_histogram);
                for &v in &self.exact {
                    record(&mut h, v, 1);
                }
                self.exact = Vec::new();
                // Both auto-resize: adding cannot fail.
                let _ = h.add(theirs);
                self.min = if self.count == 0 {
                    other.min
                } else {
                    self.min.min(other.min)
                };
                self.max = self.max.max(other.max);
                self.count += other.count;
                self.histogram = Some(h);
            }
        }
    }

    /// The number of calls.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The durations at quantiles `qs` (each 0 < q ≤ 1): the smallest duration that at least
    /// `q` of the calls do not exceed (nearest rank). Exact while [`EXACT_CALLS`] or fewer
    /// calls were recorded, else within 0.1 %; always within [shortest, longest]. `None`
    /// without calls.
    pub fn quantiles<const N: usize>(&self, qs: [f64; N]) -> Option<[u64; N]> {
        if self.count == 0 {
            return None;
        }
        let mut sorted = Vec::new();
        if self.histogram.is_none() {
            sorted = self.exact.clone();
            sorted.sort_unstable();
        }
        Some(qs.map(|q| {
            let value = match &self.histogram {
                Some(h) => h.value_at_quantile(q),
                None => {
                    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
                    sorted[rank - 1]
                }
            };
            value.clamp(self.min, self.max)
        }))
    }

    /// The duration at quantile `q` ([`Durations::quantiles`]).
    pub fn quantile(&self, q: f64) -> Option<u64> {
        self.quantiles([q]).map(|[v]| v)
    }

    /// p50, p90, p99.
    pub fn p50_p90_p99(&self) -> Option<[u64; 3]> {
        self.quantiles([0.5, 0.9, 0.99])
    }
}

fn new_histogram() -> Histogram<u64> {
    // Auto-resizing (`Histogram::new`): it grows to the longest call recorded.
    Histogram::new(3).expect("3 significant digits are valid")
}

fn record(h: &mut Histogram<u64>, value: u64, count: u64) {
    // `record_n` resizes an auto-resizing histogram; `saturating_record` would clamp to its
    // current highest value first (which answered 1 ns for a 6 ms call).
    if h.record_n(value, count).is_err() {
        h.saturating_record_n(value, count);
    }
}

/// Call durations in ticks, per (TID, function).
#[derive(Default)]
pub struct CallDurations {
    durations: HashMap<(u64, u32), Durations>,
}

impl CallDurations {
    pub fn new() -> Self {
        Self::default()
    }

    /// Fills the `percentiles` of `report`'s rows (per thread or merged, as the report is).
    pub fn fill(&self, report: &mut FlatReport, info: &TraceInfo, names: &Names) {
        let unit = report.summary.unit;
        // (thread label or None, address) → merged durations.
        let mut merged: HashMap<(Option<u64>, u64), Durations> = HashMap::default();
        for (&(tid, function), durations) in &self.durations {
            let thread = report.per_thread.then(|| info.label(tid));
            let key = (thread, names.addresses[function as usize]);
            merged.entry(key).or_default().add(durations);
        }
        for row in &mut report.rows {
            if let Some(p) = merged
                .get(&(row.thread, row.address))
                .and_then(Durations::p50_p90_p99)
            {
                // Converted as the min and max columns are: within them.
                row.percentiles = Some(p.map(|ticks| unit.convert(ticks)));
            }
        }
    }
}

impl View for CallDurations {
    const IN_TIME_ORDER: bool = true;

    fn enter(&mut self, _tid: u64, _stack: &mut [ViewFrame], _names: &Names) {}

    fn exit(&mut self, tid: u64, time: u64, stack: &[ViewFrame], _names: &Names) {
        let Some(frame) = stack.last() else { return };
        self.durations
            .entry((tid, frame.function))
            .or_default()
            .record(time.saturating_sub(frame.entry_time));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(values: impl IntoIterator<Item = u64>) -> Durations {
        let mut d = Durations::new();
        values.into_iter().for_each(|v| d.record(v));
        d
    }

    #[test]
    fn one_call_is_every_percentile() {
        // The report's `main`: one call of 6.4 ms (in ticks of a 2.5 GHz clock).
        let d = of([16_000_000]);
        assert_eq!(d.p50_p90_p99(), Some([16_000_000; 3]));
        assert_eq!(Durations::new().p50_p90_p99(), None);
    }

    #[test]
    fn uniform_exact_and_by_histogram() {
        // 1..=1000: exact, nearest rank.
        let d = of(1..=1000);
        assert_eq!(d.p50_p90_p99(), Some([500, 900, 990]));
        // 1..=100 000 (past EXACT_CALLS: the histogram), scaled to long durations.
        let d = of((1..=100_000u64).map(|v| v * 1000));
        let [p50, p90, p99] = d.p50_p90_p99().unwrap();
        for (got, want) in [(p50, 50_000_000u64), (p90, 90_000_000), (p99, 99_000_000)] {
            let error = got.abs_diff(want) as f64 / want as f64;
            assert!(error < 0.001, "{got} for {want}");
        }
    }

    #[test]
    fn two_modes() {
        // 900 short calls (100 ticks) and 100 long ones (1 000 000): p50 and p90 short,
        // p99 long; the same with ten times as many calls (histogram).
        for times in [1, 10] {
            let mut d = Durations::new();
            for _ in 0..times {
                (0..900).for_each(|_| d.record(100));
                (0..100).for_each(|_| d.record(1_000_000));
            }
            let [p50, p90, p99] = d.p50_p90_p99().unwrap();
            assert_eq!(p50, 100, "{times}");
            assert!(p90.abs_diff(100) <= 1, "{times}: {p90}");
            assert!(p99.abs_diff(1_000_000) <= 1000, "{times}: {p99}");
        }
    }

    #[test]
    fn never_outside_the_calls() {
        // A histogram's bucket can end above the longest call: clamped to it.
        let d = of((0..5000).map(|i| 123_456_789 + (i % 3)));
        let [p50, p90, p99] = d.p50_p90_p99().unwrap();
        for p in [p50, p90, p99] {
            assert!((123_456_789..=123_456_791).contains(&p), "{p}");
        }
        let zeros = of([0, 0, 0]);
        assert_eq!(zeros.p50_p90_p99(), Some([0, 0, 0]));
    }

    #[test]
    fn merged_threads() {
        let mut a = of([10, 20]);
        let b = of((0..2000).map(|_| 1_000_000u64));
        a.add(&b);
        assert_eq!(a.count(), 2002);
        assert_eq!(a.quantile(0.0001), Some(10));
        assert!(a.quantile(0.5).unwrap().abs_diff(1_000_000) <= 1000);
        let mut empty = Durations::new();
        empty.add(&b);
        assert_eq!(empty.quantile(1.0), Some(1_000_000));
    }
}
