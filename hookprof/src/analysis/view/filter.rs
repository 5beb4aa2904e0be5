//! The filters every view shares, and the sizes and durations they are given in.

use crate::analysis::replay::TimeBasis;
use crate::input::error::Error;

use super::clock::*;
use super::frames::*;

/// The filters every view shares, independent of any command line.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Show only matching functions and what they call (any of the patterns).
    pub functions: Vec<glob::Pattern>,
    /// Hide matching functions and what they call.
    pub exclude: Vec<glob::Pattern>,
    /// Show only these threads: a Linux TID or a thread's number (`hookprof info`).
    pub threads: Vec<u64>,
    /// Show at most this many levels of shown frames (1 = the outermost shown frames only).
    pub depth: Option<usize>,
    /// Hide calls shorter than this many nanoseconds (ticks when the trace has no clock rate).
    pub min_duration_ns: u64,
    /// Show only calls that start in `[start, end)`, nanoseconds since the trace's earliest
    /// record (ticks without a clock rate).
    pub time_range_ns: Option<(u64, u64)>,
    /// The clock of the times (`--time=cpu|wall`): not a filter, but every view reads it
    /// alike. A view in time order ([`View::IN_TIME_ORDER`]) may ask for the wall clock with
    /// the switched-out intervals instead ([`View::switched_out`]).
    pub time: TimeBasis,
}

/// The output size above which `timeline` and `speedscope` leave out short calls unless told
/// otherwise (docs/views.md, "Large traces"): what Perfetto UI, chrome://tracing and
/// speedscope still open in a browser tab.
pub const DEFAULT_SIZE_LIMIT: u64 = 512 << 20;
/// The cuts the large-output default tries, shortest first: it hides the calls shorter than
/// the first under which the output fits (docs/views.md, "Large traces").
pub const SIZE_CUTS_NS: [u64; 13] = [
    1_000,
    2_000,
    5_000,
    10_000,
    20_000,
    50_000,
    100_000,
    200_000,
    500_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
];

/// `1us`, `20us`, `5ms`, `1s`: a cut as `--min-duration` takes it.
fn human_duration(ns: u64) -> String {
    match ns {
        n if n >= 1_000_000_000 && n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n >= 1_000 && n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

/// A view that counts the calls at least as long as each of [`SIZE_CUTS_NS`] (in ticks of
/// the trace's clock): how many a size cut would keep.
#[derive(Debug)]
pub struct CallsAtLeast {
    cuts: [u64; SIZE_CUTS_NS.len()],
    counts: [u64; SIZE_CUTS_NS.len()],
}

impl CallsAtLeast {
    pub fn new(clock: &TimeBase) -> Self {
        CallsAtLeast {
            cuts: SIZE_CUTS_NS.map(|ns| clock.ticks_from_ns(ns)),
            counts: [0; SIZE_CUTS_NS.len()],
        }
    }

    /// The calls at or above each cut.
    pub fn counts(&self) -> [u64; SIZE_CUTS_NS.len()] {
        let mut at_least = self.counts;
        for i in (0..at_least.len() - 1).rev() {
            at_least[i] += at_least[i + 1];
        }
        at_least
    }
}

impl View for CallsAtLeast {
    fn enter(&mut self, _tid: u64, _stack: &mut [ViewFrame], _names: &Names) {}

    fn exit(&mut self, _tid: u64, time: u64, stack: &[ViewFrame], _names: &Names) {
        let Some(frame) = stack.last() else { return };
        let duration = time.saturating_sub(frame.entry_time);
        // The last cut at or below the duration.
        let below = self.cuts.partition_point(|&cut| cut <= duration);
        if below > 0 {
            self.counts[below - 1] += 1;
        }
    }
}

impl Filter {
    /// No filter at all: every call of every thread.
    pub fn is_everything(&self) -> bool {
        self.functions.is_empty()
            && self.exclude.is_empty()
            && self.threads.is_empty()
            && self.depth.is_none()
            && self.min_duration_ns == 0
            && self.time_range_ns.is_none()
    }

    /// The filter a view of about `bytes_per_record` output bytes per record uses: this one,
    /// or, when it is no filter at all and the output of every record would pass
    /// `size_limit` (`None`: never), this one hiding the calls shorter than the least of
    /// [`SIZE_CUTS_NS`] that brings the output under the limit, by `durations` (the calls
    /// at or above each cut, [`CallsAtLeast`]) — the largest cut if none does; then also the
    /// note that says so, how large the output is without and with the cut, and how to
    /// choose. `durations` is asked only when the limit is passed.
    pub fn sized(
        &self,
        records: u64,
        bytes_per_record: u64,
        size_limit: Option<u64>,
        what: &str,
        durations: impl FnOnce() -> Result<[u64; SIZE_CUTS_NS.len()], Error>,
    ) -> Result<(Filter, Option<String>), Error> {
        let estimate = records.saturating_mul(bytes_per_record);
        let limit = match size_limit {
            Some(limit) if self.is_everything() && estimate > limit => limit,
            _ => return Ok((self.clone(), None)),
        };
        let at_least = durations()?;
        // Two records (an entry and an exit) a call shown.
        let size = |calls: u64| calls.saturating_mul(2).saturating_mul(bytes_per_record);
        let fits = SIZE_CUTS_NS
            .iter()
            .zip(at_least)
            .find(|&(_, calls)| size(calls) <= limit);
        let (cut, calls, fits) = match fits {
            Some((&cut, calls)) => (cut, calls, true),
            None => (
                SIZE_CUTS_NS[SIZE_CUTS_NS.len() - 1],
                at_least[SIZE_CUTS_NS.len() - 1],
                false,
            ),
        };
        let filter = Filter {
            min_duration_ns: cut,
            ..self.clone()
        };
        let outcome = if fits {
            format!("about {}, under the limit", human_bytes(size(calls)))
        } else {
            format!(
                "still about {}, OVER the limit: choose what to keep below",
                human_bytes(size(calls))
            )
        };
        let note = format!(
            "the {what} of all {} records would take {} or more, over --size-limit={} \
             (what a browser's trace viewer opens): calls shorter than {} are left out (their \
             callers are kept, their time stays in them): {calls} calls shown, {outcome}. \
             --min-duration=0 keeps every call; --min-duration=DURATION, --function=GLOB, \
             --thread=N, --time-range=START..END or --depth=N choose what to keep; an output \
             name ending in .gz is compressed",
            records,
            human_bytes(estimate),
            human_bytes(limit),
            human_duration(cut),
        );
        Ok((filter, Some(note)))
    }

    /// Parses a glob pattern (`*`, `?`, `[...]`) as the command line gives it.
    pub fn pattern(text: &str) -> Result<glob::Pattern, String> {
        glob::Pattern::new(text).map_err(|e| format!("{text:?} is not a valid pattern: {e}"))
    }
}

/// A byte count for people: 1.4 GB, 512 MB, 20 KB (powers of 1024, as --size-limit takes them).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 || value >= 100.0 || value.fract() == 0.0 {
        format!("{value:.0} {}", UNITS[unit])
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    /// Over the limit, the shortest cut that fits; where none does, the longest, said plainly.
    #[test]
    fn sized_raises_the_cut_until_the_output_fits() {
        use super::{Filter, SIZE_CUTS_NS};
        // Calls at or above each cut: 1000 at 1us, 100 at 2us, 10 at 5us, then 1 up to 1s.
        let mut counts = [1u64; SIZE_CUTS_NS.len()];
        counts[..3].copy_from_slice(&[1000, 100, 10]);
        let everything = Filter::default();
        let sized = |records, limit| {
            everything
                .sized(records, 100, Some(limit), "timeline", || Ok(counts))
                .unwrap()
        };
        // Under the limit: no cut, no note, no counting.
        let (f, note) = everything
            .sized(10, 100, Some(1000), "timeline", || panic!("counted"))
            .unwrap();
        assert_eq!((f.min_duration_ns, note), (0, None));
        // 10 calls of 5us or more take 2 000 bytes: the 5us cut.
        let (f, note) = sized(1_000_000, 2_000);
        assert_eq!(f.min_duration_ns, 5_000);
        let note = note.unwrap();
        assert!(
            note.contains("shorter than 5us are left out") && note.contains(": 10 calls shown"),
            "{note}"
        );
        // One call of a second is 200 bytes: over 100, the longest cut, said plainly.
        let (f, note) = sized(1_000_000, 100);
        assert_eq!(f.min_duration_ns, 1_000_000_000);
        assert!(note.unwrap().contains("OVER the limit"));
        // A filter of the user's own is kept as it is.
        let mine = Filter {
            depth: Some(2),
            ..Filter::default()
        };
        let (f, note) = mine
            .sized(1_000_000, 100, Some(1), "timeline", || panic!("counted"))
            .unwrap();
        assert_eq!((f.depth, f.min_duration_ns, note), (Some(2), 0, None));
    }
}
