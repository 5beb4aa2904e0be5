//! Percentiles of the inclusive time of single calls, per function (`hookprof report
//! --percentiles`), as `llvm-xray account` shows them.
//!
//! A [`View`] that puts every call's duration in a histogram per thread and function (the
//! `hdrhistogram` crate, two significant digits: within 1 %), so memory grows with the
//! functions, not with the calls. Every call counts, recursive ones too, as for the min, max
//! and average columns.

use hdrhistogram::Histogram;

use crate::analysis::ids::HashMap;
use crate::analysis::view::{Names, TraceInfo, View, ViewFrame};
use crate::output::report::flat::{FlatReport, Unit};

/// Histograms of call durations in ticks, per (TID, function).
#[derive(Default)]
pub struct CallDurations {
    histograms: HashMap<(u64, u32), Histogram<u64>>,
}

impl CallDurations {
    pub fn new() -> Self {
        Self::default()
    }

    /// Fills the `percentiles` of `report`'s rows (per thread or merged, as the report is).
    pub fn fill(&self, report: &mut FlatReport, info: &TraceInfo, names: &Names) {
        let unit = report.summary.unit;
        // (thread label or None, address) → merged histogram.
        let mut merged: HashMap<(Option<u64>, u64), Histogram<u64>> = HashMap::default();
        for (&(tid, function), histogram) in &self.histograms {
            let thread = report.per_thread.then(|| info.label(tid));
            let key = (thread, names.addresses[function as usize]);
            match merged.get_mut(&key) {
                Some(h) => {
                    // Both histograms auto-resize: adding cannot fail.
                    let _ = h.add(histogram);
                }
                None => {
                    merged.insert(key, histogram.clone());
                }
            }
        }
        for row in &mut report.rows {
            if let Some(h) = merged.get(&(row.thread, row.address)) {
                let at = |q: f64| convert(unit, h.value_at_quantile(q));
                row.percentiles = Some([at(0.5), at(0.9), at(0.99)]);
            }
        }
    }
}

fn convert(unit: Unit, ticks: u64) -> u64 {
    unit.convert(ticks)
}

impl View for CallDurations {
    const IN_TIME_ORDER: bool = true;

    fn enter(&mut self, _tid: u64, _stack: &mut [ViewFrame], _names: &Names) {}

    fn exit(&mut self, tid: u64, time: u64, stack: &[ViewFrame], _names: &Names) {
        let Some(frame) = stack.last() else { return };
        let histogram = self
            .histograms
            .entry((tid, frame.function))
            .or_insert_with(|| Histogram::new(2).expect("2 significant digits are valid"));
        histogram.saturating_record(time.saturating_sub(frame.entry_time));
    }
}
