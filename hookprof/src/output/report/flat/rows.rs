//! What a flat profile holds: its unit, summary, rows and sort keys.

use crate::analysis::replay::TimeBasis;

/// The unit of the time columns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Ticks converted with this many ticks per second.
    Nanoseconds { ticks_per_second: u64 },
    /// The trace does not say how fast its clock ticks: raw ticks.
    Ticks,
}

impl Unit {
    /// Column name suffix: `ns` or `ticks`.
    pub fn suffix(self) -> &'static str {
        match self {
            Unit::Nanoseconds { .. } => "ns",
            Unit::Ticks => "ticks",
        }
    }

    /// Converts a tick count, rounding to the nearest nanosecond.
    pub fn convert(self, ticks: u64) -> u64 {
        match self {
            Unit::Ticks => ticks,
            Unit::Nanoseconds { ticks_per_second } => {
                let tps = u128::from(ticks_per_second.max(1));
                let ns = (u128::from(ticks) * 1_000_000_000 + tps / 2) / tps;
                u64::try_from(ns).unwrap_or(u64::MAX)
            }
        }
    }
}

/// Trace-wide numbers shown with every report.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub complete: bool,
    pub unit: Unit,
    pub threads: usize,
    pub records: u64,
    pub lost: u64,
    pub unmatched_entries: u64,
    pub unmatched_exits: u64,
    pub closed_at_end: u64,
    /// Frames closed where a `longjmp` landed (resync records, format version 3).
    pub closed_by_longjmp: u64,
    /// HOOKCC_MODE=ring: windows of the threads' rings, records dropped before them, exits of
    /// frames entered before them, frames closed at a gap between two.
    pub ring: Option<(u64, u64, u64, u64)>,
    /// HOOKCC_MIN_DURATION: calls left out of the trace's records (the report has them, from
    /// the trees), and the threshold in `unit`.
    pub folded: Option<(u64, u64)>,
    /// A stream's losses (`hookprof record`): the places records were dropped, frames closed
    /// there, exits of frames entered before them (not counted).
    pub stream_loss: Option<(u64, u64, u64)>,
    /// Distinct function addresses no symbol was found for (shown as `0x…`).
    pub unknown_addresses: u64,
    /// The hooks' time subtracted per call (inside the call's window, outside it), in `unit`;
    /// `None` if times are raw (no OVERHEAD chunk, or `--no-compensation`).
    pub compensation: Option<(u64, u64)>,
    /// Functions the runtime throttled (THROTTLE chunks): how many, the calls it counted
    /// without records, and the throttle's settings (timed calls first, factor).
    pub throttled: Option<Throttled>,
    /// Sum of the exclusive column, in `unit`.
    pub total_exclusive: u64,
    /// Sum of the calls column (of every row, before `--top`).
    pub total_calls: u64,
    /// The trace has the threads' context switches (SWITCH chunks): the switches, and the
    /// switch records the kernel dropped. Rows then have [`Row::offcpu`].
    pub switches: Option<(u64, u64)>,
    /// The trace has samples of the threads' CPU time (SAMPLE chunks). Rows then have
    /// [`Row::sampled`].
    pub samples: Option<SampleSummary>,
    /// One entry per thread, in report order.
    pub thread_list: Vec<ThreadLine>,
    /// Why the trace has neither on/off-CPU nor sampled columns (its mode, or what the
    /// runtime could not record); `None` when it has one of them.
    pub lacking: Option<String>,
    /// The time the rows carry (`--time`): with [`TimeBasis::Cpu`] every time column
    /// (inclusive, exclusive, percent, min, max, avg, percentiles) is on-CPU time.
    pub time: TimeBasis,
}

/// The throttle's part of the summary ([`Summary::throttled`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Throttled {
    pub functions: u64,
    pub counted: u64,
    pub min_calls: u64,
    pub factor: u64,
    /// What the counted calls' cost the compensation took out (count marks): the time of
    /// so many calls (in the report's unit), when it did.
    pub count_cost: Option<(u64, u64)>,
}

/// The samples of a trace's CPU time (SAMPLE chunks), for the summary line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SampleSummary {
    /// Samples with a frame open: the ones in the rows' sampled times.
    pub in_functions: u64,
    /// Samples with no frame open (before `main`, code of a thread without hooks).
    pub outside: u64,
    /// Samples in the hooks: their own time, left out.
    pub in_hooks: u64,
    /// The CPU time between two samples, in the summary's unit.
    pub period: u64,
}

impl SampleSummary {
    /// Samples in functions below which `--sort=sampled` (the default) orders by exclusive
    /// time: with n samples a function's share is known to about 1/√n of the whole, so a
    /// thousand (0.25 s of CPU time at the default rate) tell the leading functions apart.
    pub const TO_ORDER: u64 = 1000;
}

/// Per-thread numbers for the JSON report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadLine {
    /// The THREAD chunk's sequence number if present, else the TID (see [`Row::thread`]).
    pub thread: u64,
    pub tid: u64,
    pub name: Option<String>,
    pub records: u64,
    pub lost: u64,
    pub unmatched_entries: u64,
    pub unmatched_exits: u64,
    pub closed_at_end: u64,
}

/// One line of the flat profile. Times are in the summary's unit.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// With `--per-thread`: the thread's sequence number from its THREAD chunk (1 = first
    /// thread), or its Linux TID when the trace has no THREAD chunk for it.
    pub thread: Option<u64>,
    pub function: String,
    /// The function as the trace names it (its record, in a `hookcc --trace` build): what
    /// tells rows apart.
    pub address: u64,
    /// Its run-time address, as the outputs show it ([`crate::input::symbols::Resolve::entry_point`]).
    pub entry_point: u64,
    pub calls: u64,
    pub inclusive: u64,
    pub exclusive: u64,
    pub min: u64,
    pub max: u64,
    /// Average inclusive time per call.
    pub avg: u64,
    /// Share of the report's total exclusive time, in percent.
    pub percent: f64,
    pub unmatched_entries: u64,
    pub unmatched_exits: u64,
    pub closed_at_end: u64,
    /// Of `calls`, those the runtime counted without recording them (the function was
    /// throttled: timed for its first `calls - counted`); 0 otherwise. In a thread's row, the
    /// thread's (COUNTED chunks; 0 in traces before them).
    /// The times, `avg`, `min`, `max` and percentiles are of the timed calls.
    pub counted: u64,
    /// With `--percentiles`: the 50th, 90th and 99th percentile of the inclusive time of
    /// a single call (within 1 %, from a histogram).
    pub percentiles: Option<[u64; 3]>,
    /// With `--callers`: who called the function and how often, most calls first;
    /// `<spontaneous>` for calls at the bottom of a thread's stack.
    pub callers: Option<Vec<(String, u64)>>,
    /// When the trace has context switches ([`Summary::switches`]): how much of the
    /// inclusive and the exclusive time the thread was off the CPU.
    pub offcpu: Option<OffCpu>,
    /// When the trace has samples ([`Summary::samples`]): the function's sampled self time
    /// (samples at an address in it, or in code without hooks while it was the top frame)
    /// and sampled total time (while it was open), in the summary's unit, and its share of
    /// the samples in functions, in percent.
    pub sampled: Option<Sampled>,
    pub(super) exclusive_ticks: u64,
    /// The row's times are on-CPU times already ([`Summary::time`]).
    pub(super) on_cpu: bool,
}

/// A row's times from the samples of the CPU time (SAMPLE chunks): the hooks' own time is
/// not in them, and no model of what a hook costs is either.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Sampled {
    pub self_time: u64,
    pub total: u64,
    pub percent: f64,
}

/// Of a row's times, the part its thread spent switched out (blocked or preempted), in the
/// summary's unit. On-CPU time is the rest.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OffCpu {
    pub inclusive: u64,
    pub exclusive: u64,
}

impl Row {
    /// The on-CPU and off-CPU columns, in their order: `inclusive_oncpu`, `inclusive_offcpu`,
    /// `exclusive_oncpu`, `exclusive_offcpu`; `None` without context switches.
    pub fn cpu_columns(&self) -> Option<[u64; 4]> {
        let on = |time: u64, off: u64| {
            if self.on_cpu {
                time
            } else {
                time.saturating_sub(off)
            }
        };
        self.offcpu.map(|o| {
            [
                on(self.inclusive, o.inclusive),
                o.inclusive,
                on(self.exclusive, o.exclusive),
                o.exclusive,
            ]
        })
    }

    /// The sampled columns' cells, in [`sampled_columns`]' order (zeros in a row without
    /// samples: a function no sample found).
    pub fn sampled_cells(&self) -> [String; 3] {
        let s = self.sampled.unwrap_or_default();
        [
            s.self_time.to_string(),
            s.total.to_string(),
            percent(s.percent),
        ]
    }
}

/// Names of the on-CPU and off-CPU columns ([`Row::cpu_columns`]) for a unit's suffix
/// ([`Unit::suffix`]).
pub fn cpu_columns(u: &str) -> [String; 4] {
    [
        "inclusive_oncpu",
        "inclusive_offcpu",
        "exclusive_oncpu",
        "exclusive_offcpu",
    ]
    .map(|c| format!("{c}_{u}"))
}

/// Names of the sampled columns ([`Row::sampled`]) for a unit's suffix.
pub fn sampled_columns(u: &str) -> [String; 3] {
    [
        format!("sampled_self_{u}"),
        format!("sampled_total_{u}"),
        "sampled_percent".to_string(),
    ]
}

/// The order of the rows (`hookprof report --sort`), largest first except by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SortKey {
    #[default]
    Exclusive,
    /// Sampled self time (exclusive time where there are no samples).
    Sampled,
    Inclusive,
    Calls,
    Avg,
    Max,
    Name,
}

/// Formats a percentage with two decimals.
pub(crate) fn percent(p: f64) -> String {
    format!("{p:.2}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_ticks_to_rounded_ns() {
        let u = Unit::Nanoseconds {
            ticks_per_second: 3_000_000_000,
        };
        assert_eq!(u.convert(3), 1);
        assert_eq!(u.convert(4), 1);
        assert_eq!(u.convert(5), 2);
        assert_eq!(u.convert(u64::MAX), 6_148_914_691_236_517_205);
        assert_eq!(Unit::Ticks.convert(7), 7);
        assert_eq!(
            Unit::Nanoseconds {
                ticks_per_second: 1
            }
            .convert(u64::MAX),
            u64::MAX
        );
    }
}
