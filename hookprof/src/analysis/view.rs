//! The layer every view (`timeline`, `flame`, `callgrind`, `replay`) reads the trace
//! through: the replay layer's frames, named, with the shared filters applied.
//!
//! [`Viewer`] is a [`ReplayVisitor`]: it names each function once (per address, by the
//! [`Resolve`] it is given), decides for every frame whether the [`Filter`] shows it, and
//! hands the shown frames to a [`View`], with a stack of its own that holds only the shown
//! frames. What a filter hides is hidden alike in every view:
//!
//! - `--thread`: frames of other threads;
//! - `--function=GLOB`: frames that are not a matching function or inside one;
//! - `--exclude=GLOB`: a matching function and everything it calls;
//! - `--depth=N`: frames deeper than N shown frames;
//! - `--min-duration`: calls shorter than the duration (and so everything they call);
//! - `--time-range`: calls that start outside the range (the calls they make that start
//!   inside it are shown).
//!
//! The time of a hidden call counts as the own (exclusive) time of the nearest shown frame
//! around it: [`ViewFrame::child_ticks`] sums only the shown children.
//!
//! Memory grows with the threads, the distinct functions and the stack depths, never with
//! the number of records: a call's visibility under `--min-duration` is known only at its
//! exit, so the shown frames still open are handed to the view ([`View::enter`]) when their
//! first long-enough descendant (or they themselves) closes — which keeps every thread's
//! events in time order, since a frame whose descendant is long enough is long enough too.
//!
//! The views themselves are outputs ([`crate::output::report`]: each implements [`View`] and
//! writes through [`crate::output::block_writer::BlockWriter`]); this module is the analysis
//! they share, and [`Prepared`] opens a view's input: a `.hktrace`, or a TI or NITRO dump
//! converted by [`crate::analysis::ti`] or [`crate::analysis::nitro`].

use std::path::{Path, PathBuf};

use crate::analysis::ids::HashMap;
use crate::analysis::replay::{
    replay_bytes, Aggregate, CloseReason, Frame, ReplayVisitor, SwitchReason, TimeBasis,
    TraceSummary,
};
use crate::analysis::unload::Unloads;
use crate::analysis::warnings::profile_warnings;
use crate::input::error::Error;
use crate::input::format::{Chunk, FormatError, Trace};
use crate::input::symbols::{hex_name, Resolve, Symbolizer};
use crate::input::trace_file::TraceFile;

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

/// Told how many records have been replayed so far, every 65536 (`hookprof` draws a progress
/// bar with it). Arguments: records replayed, records in the trace.
#[derive(Clone)]
pub struct Progress(pub std::sync::Arc<dyn Fn(u64, u64) + Send + Sync>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Progress")
    }
}

/// A frame the filter shows, on the view's stack (outermost first).
///
/// In this order (`repr(C)`), so that no two fields the view layer copies from the
/// replay's new frame lie side by side: the compiler copied `address` and `entry_time` in
/// one 16-byte load, right after the replay had stored them as two 8-byte words, and a
/// load that spans two stores waits for them to reach the cache (`perf` put a quarter of
/// the replay loop's samples just after it). Timeline 43.6 -> 41.5 ms, Perfetto 43.2 ->
/// 38.5 on 2 M records; the flame graph's time did not change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct ViewFrame {
    /// Entry point of the function.
    pub address: u64,
    /// The function's number in [`Names`] (one per address, for the whole trace).
    pub function: u32,
    /// Free for the view: set in [`View::enter`], read back in [`View::exit`].
    pub user: u32,
    /// Timestamp of the entry, in ticks.
    pub entry_time: u64,
    /// From the replay: no other frame of the same function is below this one.
    pub outermost: bool,
    /// Inclusive ticks of the shown children closed so far.
    pub child_ticks: u64,
}

impl ViewFrame {
    /// The view's frame for the replay's `frame`, the view's function number `function`.
    #[inline(always)]
    fn new(frame: &Frame, function: u32) -> Self {
        ViewFrame {
            address: frame.address,
            function,
            entry_time: frame.entry_time,
            child_ticks: 0,
            outermost: frame.outermost,
            user: 0,
        }
    }
}

/// The names of the functions seen so far, numbered as in [`ViewFrame::function`].
#[derive(Clone, Debug, Default)]
pub struct Names {
    pub names: Vec<String>,
    pub addresses: Vec<u64>,
}

impl Names {
    pub fn name(&self, function: u32) -> &str {
        &self.names[function as usize]
    }
}

/// A view of the shown frames. Times are in ticks; [`TraceInfo::clock`] converts them.
pub trait View {
    /// A shown frame opens: it is the last of `stack`. Called in time order per thread,
    /// but possibly later than the entry itself (see the module's documentation).
    fn enter(&mut self, tid: u64, stack: &mut [ViewFrame], names: &Names);
    /// The last frame of `stack` closes at `time` (the frame is still on the stack).
    fn exit(&mut self, tid: u64, time: u64, stack: &[ViewFrame], names: &Names);
    /// The summed calls of one call path of a profile (`HOOKCC_MODE=profile`): `stack` is
    /// the path (its frames' times are 0). Only views that do not need calls in time order
    /// take them.
    fn aggregate(&mut self, _tid: u64, _stack: &[ViewFrame], _calls: &Aggregate, _names: &Names) {}
    /// `count` records were dropped at `time` on this thread (a stream's loss, `hookprof
    /// record`); its frames open then were closed just before.
    fn lost(&mut self, _tid: u64, _time: u64, _count: u64, _names: &Names) {}
    /// The thread was switched out from `from` to `to` (ticks, wall clock), for `reason`,
    /// while the last frame of `stack` was the innermost shown one (only with
    /// [`TimeBasis::Wall`]).
    fn switched_out(
        &mut self,
        _tid: u64,
        _from: u64,
        _to: u64,
        _reason: SwitchReason,
        _stack: &[ViewFrame],
        _names: &Names,
    ) {
    }
    /// The view shows calls in time order (a timeline, a call tree, per-call durations): a
    /// profile, which has only sums per call path, is refused.
    const IN_TIME_ORDER: bool = false;
}

/// The refusal of `--time=cpu` for a trace that cannot give CPU time: it has no context
/// switches (`profile`: it is a call-path profile, HOOKCC_MODE=profile, which records none),
/// or (`summed`) its calls are read as sums per call path, which keep no times to split.
pub fn no_cpu_time(path: &Path, switch_pairs: u64, summed: bool, profile: bool) -> Error {
    let message = if switch_pairs == 0 && profile {
        "--time=cpu needs the threads' context switches, and a call-path profile \
         (HOOKCC_MODE=profile) records none: record the program in HOOKCC_MODE=trace (the \
         default) for CPU time, or use --time=wall"
            .to_string()
    } else if switch_pairs > 0 && summed {
        "--time=cpu: the calls of this trace are sums per call path (HOOKCC_MODE=profile, or \
         the trees of HOOKCC_MIN_DURATION), which keep no times to take the switched-out time \
         from; use --time=wall, or `hookprof timeline`/`replay` of its records"
            .to_string()
    } else {
        "--time=cpu needs the threads' context switches, and this trace has none (no SWITCH \
         chunks). The runtime records them on Linux in HOOKCC_MODE=trace unless \
         HOOKCC_SWITCHES=0, where the kernel allows perf events (perf_event_paranoid 2 or \
         lower, not under qemu-user or a seccomp profile that forbids perf_event_open; when it \
         cannot, the program prints `hookcc: context switches and samples are not recorded`): \
         record the program again so, or use --time=wall"
            .to_string()
    };
    Error::Unsupported {
        path: path.to_path_buf(),
        message,
    }
}

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

/// What a view needs to know before the replay: read from the chunk headers alone (no
/// record is decoded), so it costs little next to the replay.
#[derive(Clone, Debug)]
pub struct TraceInfo {
    /// Enough of the summary to symbolize (header, executable, modules, clock).
    pub summary: TraceSummary,
    /// In order of first appearance; a TID reused by a later thread appears once per THREAD
    /// chunk.
    pub threads: Vec<ThreadInfo>,
    pub clock: TimeBase,
    /// Records in the EVENTS chunks (each is one [`View`] event at most): what a progress
    /// report counts towards.
    pub records: u64,
    /// PROFILE chunks (HOOKCC_MODE=profile): the file is a call-path profile, which views
    /// of calls in time order cannot show.
    pub profiles: u64,
    /// The threads' counted calls of throttled functions (COUNTED chunks): (TID, address,
    /// calls), calls that have no records.
    pub counted: Vec<(u64, u64, u64)>,
}

/// A path's file name (the whole path if it has none), as tables and profiles name modules.
pub fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

impl TraceInfo {
    /// The executable's file name, `?` where the trace does not name it.
    pub fn executable_name(&self) -> String {
        self.summary
            .exe
            .as_deref()
            .map_or_else(|| "?".to_string(), file_name)
    }

    /// The file name of the module holding `address`: a shared library's, else the
    /// executable's.
    pub fn module_name(&self, address: u64) -> String {
        self.summary
            .modules
            .iter()
            .find(|m| (m.start..m.end).contains(&address))
            .and_then(|m| m.path.as_deref().map(file_name))
            .unwrap_or_else(|| self.executable_name())
    }

    /// The traced executable's path as the trace gives it, for a view's process name.
    pub fn program(&self) -> String {
        self.summary
            .exe
            .as_ref()
            .map_or_else(|| "traced program".to_string(), |p| p.display().to_string())
    }

    /// The wall-clock time of the trace's earliest record, ns since the Unix epoch: the
    /// header's start (the wall clock at the CLOCK chunk's first tick) moved by the ticks
    /// from that tick to the earliest record. `None` without a clock rate. Without a CLOCK
    /// chunk (a trace cut short) the start is taken as the earliest record's time.
    pub fn wall_start_ns(&self) -> Option<u64> {
        self.clock.ticks_per_second?;
        let start = self.summary.header.start_realtime_ns;
        let Some(clock) = &self.summary.clock else {
            return Some(start);
        };
        Some(if self.clock.base >= clock.first_tick {
            start.saturating_add(self.clock.duration(self.clock.base - clock.first_tick))
        } else {
            start.saturating_sub(self.clock.duration(clock.first_tick - self.clock.base))
        })
    }

    /// Walks the chunks of `trace`. A cut-short last chunk of an incomplete trace is left to
    /// the replay, which reports it.
    pub fn scan(trace: &Trace<'_>) -> Result<TraceInfo, FormatError> {
        // The replay checks the checksums (it reads every chunk anyway), and knows the
        // overhead and the pauses.
        let mut summary = TraceSummary::new(trace);
        let complete = trace.header().is_complete();
        let mut threads: Vec<ThreadInfo> = Vec::new();
        let mut base: Option<u64> = None;
        let mut records = 0u64;
        let mut profiles = 0u64;
        let mut counted = Vec::new();
        let (mut module_chunks, mut unloads) = (Vec::new(), Vec::new());
        for chunk in trace.chunks() {
            let chunk = match chunk {
                Ok(chunk) => chunk,
                Err(err) if !complete && err.is_truncation() => break,
                Err(err) => return Err(err),
            };
            let open_thread = |threads: &mut Vec<ThreadInfo>, tid: u64| {
                if !threads.iter().any(|t| t.tid == tid && t.sequence.is_none()) {
                    threads.push(ThreadInfo {
                        tid,
                        sequence: None,
                        name: None,
                    });
                }
            };
            match chunk.chunk {
                Chunk::Exe { path } => {
                    summary.exe.get_or_insert(path);
                }
                Chunk::Module(module) => module_chunks.push((module, chunk.offset)),
                Chunk::Unload { module, tick } => unloads.push((module, tick, chunk.offset)),
                Chunk::Events(events) => {
                    open_thread(&mut threads, chunk.thread);
                    records += events.len() as u64;
                    // Records of one thread are in time order: its first is its earliest.
                    if let Some(Ok(first)) = events.iter().next() {
                        base = Some(base.map_or(first.time, |b| b.min(first.time)));
                    }
                }
                Chunk::Thread { sequence, name } => {
                    open_thread(&mut threads, chunk.thread);
                    if let Some(t) = threads
                        .iter_mut()
                        .find(|t| t.tid == chunk.thread && t.sequence.is_none())
                    {
                        t.sequence = Some(sequence);
                        t.name = Some(name);
                    }
                }
                Chunk::Clock(clock) => summary.clock = Some(clock),
                Chunk::Profile(tree) => {
                    open_thread(&mut threads, chunk.thread);
                    profiles += 1;
                    base = Some(base.map_or(tree.first_tick, |b| b.min(tree.first_tick)));
                }
                Chunk::Folded { .. }
                | Chunk::Lost { .. }
                | Chunk::End { .. }
                | Chunk::Check(_)
                | Chunk::Overhead(_)
                | Chunk::Pause { .. }
                | Chunk::Ring { .. }
                | Chunk::Sample(_)
                | Chunk::Unknown
                | Chunk::Hole => {}
                Chunk::Writer(writer) => summary.writer = Some(writer),
                Chunk::Throttle(_) => {}
                Chunk::Counted(list) => counted.extend(
                    list.into_iter()
                        .map(|(address, calls)| (chunk.thread, address, calls)),
                ),
                Chunk::Switch(switches) => {
                    summary.switches += switches.pairs.len() as u64;
                }
            }
        }
        summary.modules = Unloads::new(unloads).modules(module_chunks);
        // What the replay will find: switches, unless it reads trees (a profile).
        summary.has_switches = summary.switches > 0 && profiles == 0;
        let ticks_per_second = summary.ticks_per_second();
        Ok(TraceInfo {
            summary,
            threads,
            clock: TimeBase {
                base: base.unwrap_or(0),
                ticks_per_second,
                offset: 0,
            },
            records,
            profiles,
            counted,
        })
    }

    /// The number views show for the thread with this TID.
    pub fn label(&self, tid: u64) -> u64 {
        self.threads
            .iter()
            .find(|t| t.tid == tid)
            .map_or(tid, ThreadInfo::label)
    }
}

/// What [`Viewer`] keeps per TID.
#[derive(Default)]
struct ThreadView {
    /// The thread passes `--thread`.
    shown: bool,
    /// [`Frame::function`] (numbered per TID by the replay) → [`ViewFrame::function`].
    functions: Vec<u32>,
    /// Per frame of the replay's stack: [`SHOWN`], [`MATCHES`], [`EXCLUDED`].
    raw: Vec<u8>,
    /// Open frames that match `--function` / `--exclude`.
    matching: u32,
    excluded: u32,
    /// The shown frames.
    stack: Vec<ViewFrame>,
    /// How many of `stack` the view has been told about.
    told: usize,
}

const SHOWN: u8 = 1;
const MATCHES: u8 = 2;
const EXCLUDED: u8 = 4;
const UNNAMED: u32 = u32::MAX;

/// Filters and names the replayed frames for a [`View`] (see the module's documentation).
pub struct Viewer<'r, V> {
    pub view: V,
    names: Names,
    /// Per function: [`MATCHES`] and [`EXCLUDED`].
    flags: Vec<u8>,
    by_address: HashMap<u64, u32>,
    resolve: &'r mut dyn Resolve,
    filter: Filter,
    /// Threads shown by `--thread`, by TID; empty for all.
    shown_tids: Vec<u64>,
    min_ticks: u64,
    depth: usize,
    /// `--time-range` as timestamps: `[start, end)`.
    time_range: (u64, u64),
    /// No filter at all: every frame is shown, and [`Viewer::enter`] and [`Viewer::exit`]
    /// take a shorter way (a tenth of the flame graph's instructions on a trace of small calls).
    plain: bool,
    threads: Vec<ThreadView>,
    /// TID → index in `threads`.
    tids: TidIndex,
    /// Replayed entries and exits, and whom to tell about them.
    replayed: u64,
    records: u64,
    progress: Option<Progress>,
    /// The names to show, where they are not the symbols' (same-named functions told apart,
    /// [`Prepared::tell_apart`]); the filters still match the symbols' names.
    labels: Option<&'r std::collections::HashMap<u64, String>>,
}

impl<'r, V: View> Viewer<'r, V> {
    pub fn new(view: V, info: &TraceInfo, filter: &Filter, resolve: &'r mut dyn Resolve) -> Self {
        let shown_tids = info
            .threads
            .iter()
            .filter(|t| {
                filter.threads.contains(&t.tid)
                    || t.sequence.is_some_and(|s| filter.threads.contains(&s))
            })
            .map(|t| t.tid)
            .collect();
        Viewer {
            view,
            names: Names::default(),
            flags: Vec::new(),
            by_address: HashMap::default(),
            resolve,
            min_ticks: info.clock.ticks_from_ns(filter.min_duration_ns),
            time_range: filter.time_range_ns.map_or((0, u64::MAX), |(start, end)| {
                let at = |ns: u64| info.clock.base.saturating_add(info.clock.ticks_from_ns(ns));
                (at(start), if end == u64::MAX { u64::MAX } else { at(end) })
            }),
            depth: filter.depth.unwrap_or(usize::MAX),
            plain: filter.functions.is_empty()
                && filter.exclude.is_empty()
                && filter.threads.is_empty()
                && filter.depth.is_none()
                && filter.min_duration_ns == 0
                && filter.time_range_ns.is_none(),
            filter: filter.clone(),
            shown_tids,
            threads: Vec::new(),
            tids: TidIndex::default(),
            replayed: 0,
            records: info.records,
            progress: None,
            labels: None,
        }
    }

    /// Shows the functions of `labels` by those names ([`Viewer::labels`]).
    pub fn with_labels(
        mut self,
        labels: Option<&'r std::collections::HashMap<u64, String>>,
    ) -> Self {
        self.labels = labels;
        self
    }

    /// Reports progress to `progress` while replaying.
    pub fn with_progress(mut self, progress: Option<Progress>) -> Self {
        self.progress = progress;
        self
    }

    #[inline]
    fn count_record(&mut self) {
        self.replayed += 1;
        if self.replayed & 0xffff == 0 {
            if let Some(progress) = &self.progress {
                (progress.0)(self.replayed, self.records);
            }
        }
    }

    pub fn names(&self) -> &Names {
        &self.names
    }

    /// The view and the names it refers to.
    pub fn into_parts(self) -> (V, Names) {
        (self.view, self.names)
    }

    /// The index of `tid` in `threads`.
    #[inline(always)]
    fn thread_index(&mut self, tid: u64) -> usize {
        let (index, new) = self.tids.index(tid);
        if new {
            self.add_thread(tid);
        }
        index
    }

    #[cold]
    #[inline(never)]
    fn add_thread(&mut self, tid: u64) {
        let shown = self.filter.threads.is_empty() || self.shown_tids.contains(&tid);
        self.threads.push(ThreadView {
            shown,
            ..ThreadView::default()
        });
    }

    /// The view's number of the function at `address`, named now if new.
    #[cold]
    fn name_function(&mut self, address: u64) -> u32 {
        if let Some(&f) = self.by_address.get(&address) {
            return f;
        }
        let f = self.names.names.len() as u32;
        let name = self
            .resolve
            .resolve(address)
            .unwrap_or_else(|| hex_name(address));
        let mut flags = 0;
        if self.filter.functions.iter().any(|p| p.matches(&name)) {
            flags |= MATCHES;
        }
        if self.filter.exclude.iter().any(|p| p.matches(&name)) {
            flags |= EXCLUDED;
        }
        self.flags.push(flags);
        let name = match self.labels.and_then(|l| l.get(&address)) {
            Some(label) => label.clone(),
            None => name,
        };
        self.names.names.push(name);
        self.names.addresses.push(address);
        self.by_address.insert(address, f);
        f
    }
}

impl<V: View> Viewer<'_, V> {
    /// The view's number of the replay's `frame` on thread `t`.
    #[inline(always)]
    fn function(&mut self, t: usize, frame: &Frame) -> u32 {
        let local = frame.function as usize;
        let function = self.threads[t]
            .functions
            .get(local)
            .copied()
            .unwrap_or(UNNAMED);
        if function != UNNAMED {
            return function;
        }
        let function = self.name_function(frame.address);
        let functions = &mut self.threads[t].functions;
        if functions.len() <= local {
            functions.resize(local + 1, UNNAMED);
        }
        functions[local] = function;
        function
    }

    /// [`ReplayVisitor::enter`] without filters: every frame is shown at once.
    #[inline(always)]
    fn enter_plain(&mut self, tid: u64, frame: &Frame) {
        let t = self.thread_index(tid);
        let function = self.function(t, frame);
        let thread = &mut self.threads[t];
        thread.stack.push(ViewFrame::new(frame, function));
        thread.told = thread.stack.len();
        self.view.enter(tid, &mut thread.stack, &self.names);
    }

    /// A hidden path's time, given to the shown frames above it (`frames`, if any) as their
    /// exclusive time.
    fn give_to_caller(&mut self, tid: u64, frames: &[ViewFrame], calls: &Aggregate) {
        if !frames.is_empty() && calls.ticks != 0 {
            let hidden = Aggregate {
                exclusive: calls.ticks,
                ..Aggregate::default()
            };
            self.view.aggregate(tid, frames, &hidden, &self.names);
        }
    }

    /// [`ReplayVisitor::aggregate`] without filters. The replay hands every node of a tree
    /// over in depth-first order, so the path of a node's parent is a prefix of the path just
    /// seen: the thread's stack is cut to it and the node's frame pushed, and the view hears of
    /// that frame alone ([`View::enter`]), as it would in a trace (constant work per node, where
    /// building every path from its root would cost its depth: a recursion 100 000 deep).
    fn aggregate_plain(&mut self, t: usize, tid: u64, stack: &[Frame], calls: &Aggregate) {
        let Some(frame) = stack.last() else { return };
        let function = self.function(t, frame);
        let thread = &mut self.threads[t];
        thread.stack.truncate(stack.len() - 1);
        if thread.stack.len() + 1 < stack.len() {
            // Not depth-first after all (cannot be from the replay): the path from its root.
            thread.stack.clear();
            for f in &stack[..stack.len() - 1] {
                let function = self.function(t, f);
                let thread = &mut self.threads[t];
                thread.stack.push(ViewFrame::new(f, function));
                self.view.enter(tid, &mut thread.stack, &self.names);
            }
        }
        let thread = &mut self.threads[t];
        thread.stack.push(ViewFrame::new(frame, function));
        thread.told = thread.stack.len();
        self.view.enter(tid, &mut thread.stack, &self.names);
        if calls.calls != 0 {
            self.view.aggregate(tid, &thread.stack, calls, &self.names);
        }
    }

    /// [`ReplayVisitor::exit`] without filters.
    #[inline(always)]
    fn exit_plain(&mut self, tid: u64, time: u64) {
        let t = self.thread_index(tid);
        let thread = &mut self.threads[t];
        let Some(frame) = thread.stack.last() else {
            return;
        };
        let duration = time.saturating_sub(frame.entry_time);
        self.view.exit(tid, time, &thread.stack, &self.names);
        thread.stack.pop();
        if let Some(parent) = thread.stack.last_mut() {
            parent.child_ticks = parent.child_ticks.saturating_add(duration);
        }
        thread.told = thread.stack.len();
    }
}

impl<V: View> ReplayVisitor for Viewer<'_, V> {
    const AGGREGATES: bool = !V::IN_TIME_ORDER;

    fn time_basis(&self) -> TimeBasis {
        self.filter.time
    }

    /// To the innermost shown frame open (none: nothing to show). Under `--min-duration` an
    /// interval shorter than the duration is left out, as a short call is; the shown frames
    /// around a longer one (as long, since they hold it) are told to the view first.
    fn switched_out(
        &mut self,
        tid: u64,
        from: u64,
        to: u64,
        reason: SwitchReason,
        _stack: &[Frame],
    ) {
        let t = self.thread_index(tid);
        let thread = &mut self.threads[t];
        if !thread.shown || thread.stack.is_empty() || to.saturating_sub(from) < self.min_ticks {
            return;
        }
        while thread.told < thread.stack.len() {
            thread.told += 1;
            self.view
                .enter(tid, &mut thread.stack[..thread.told], &self.names);
        }
        self.view
            .switched_out(tid, from, to, reason, &thread.stack, &self.names);
    }

    fn aggregate(&mut self, tid: u64, stack: &[Frame], calls: &Aggregate) {
        let t = self.thread_index(tid);
        if self.plain {
            return self.aggregate_plain(t, tid, stack, calls);
        }
        if !self.threads[t].shown {
            return;
        }
        // The frames a trace would show for this path (the filters' rules of `enter`): from
        // the outermost one --function matches, none below an --exclude'd one, at most --depth.
        // A path hidden at its last frame leaves its time to the shown frame above it, as a
        // hidden call does in a trace.
        let only_functions = !self.filter.functions.is_empty();
        let mut frames: Vec<ViewFrame> = Vec::with_capacity(stack.len());
        let mut showing = !only_functions;
        for (i, frame) in stack.iter().enumerate() {
            let function = self.function(t, frame);
            let flags = self.flags[function as usize];
            let last = i + 1 == stack.len();
            showing |= flags & MATCHES != 0;
            if flags & EXCLUDED != 0 || (showing && frames.len() >= self.depth) {
                if last {
                    self.give_to_caller(tid, &frames, calls);
                }
                return;
            }
            if showing {
                let mut view_frame = ViewFrame::new(frame, function);
                view_frame.user = u32::MAX; // not through View::enter
                frames.push(view_frame);
            }
        }
        if frames.is_empty() || calls.calls == 0 {
            return;
        }
        if calls.ticks / calls.calls < self.min_ticks {
            frames.pop();
            return self.give_to_caller(tid, &frames, calls);
        }
        self.view.aggregate(tid, &frames, calls, &self.names);
    }

    /// Without filters, inlined into the replay's loop (the call's saving and restoring of
    /// registers was a fifth of the view layer's instructions).
    #[inline(always)]
    fn enter(&mut self, tid: u64, stack: &[Frame]) {
        self.count_record();
        let Some(frame) = stack.last() else { return };
        if self.plain {
            return self.enter_plain(tid, frame);
        }
        self.enter_filtered(tid, frame);
    }

    fn lost(&mut self, tid: u64, time: u64, count: u64) {
        // Another thread's side of a loss (no records of its own dropped) is only a gap.
        if count == 0 || time < self.time_range.0 || time >= self.time_range.1 {
            return;
        }
        if !self.plain {
            let t = self.thread_index(tid);
            if !self.threads[t].shown {
                return;
            }
        }
        self.view.lost(tid, time, count, &self.names);
    }

    /// Inlined as [`Self::enter`] is.
    #[inline(always)]
    fn exit(&mut self, tid: u64, time: u64, _reason: CloseReason, _stack: &[Frame]) {
        self.count_record();
        if self.plain {
            return self.exit_plain(tid, time);
        }
        self.exit_filtered(tid, time);
    }
}

impl<V: View> Viewer<'_, V> {
    /// [`ReplayVisitor::enter`] with filters.
    #[inline(never)]
    fn enter_filtered(&mut self, tid: u64, frame: &Frame) {
        let t = self.thread_index(tid);
        if !self.threads[t].shown {
            return;
        }
        let function = self.function(t, frame);
        let flags = self.flags[function as usize];
        let only_functions = !self.filter.functions.is_empty();
        let thread = &mut self.threads[t];
        let mut bits = flags;
        if flags & MATCHES != 0 {
            thread.matching += 1;
        }
        if flags & EXCLUDED != 0 {
            thread.excluded += 1;
        }
        let shown = thread.excluded == 0
            && (!only_functions || thread.matching > 0)
            && thread.stack.len() < self.depth
            && frame.entry_time >= self.time_range.0
            && frame.entry_time < self.time_range.1;
        if shown {
            bits |= SHOWN;
            thread.stack.push(ViewFrame::new(frame, function));
            if self.min_ticks == 0 {
                thread.told = thread.stack.len();
                self.view.enter(tid, &mut thread.stack, &self.names);
            }
        }
        thread.raw.push(bits);
    }

    /// [`ReplayVisitor::exit`] with filters.
    #[inline(never)]
    fn exit_filtered(&mut self, tid: u64, time: u64) {
        let t = self.thread_index(tid);
        let thread = &mut self.threads[t];
        if !thread.shown {
            return;
        }
        let Some(bits) = thread.raw.pop() else { return };
        if bits & MATCHES != 0 {
            thread.matching -= 1;
        }
        if bits & EXCLUDED != 0 {
            thread.excluded -= 1;
        }
        if bits & SHOWN == 0 {
            return;
        }
        let Some(frame) = thread.stack.last() else {
            return;
        };
        let duration = time.saturating_sub(frame.entry_time);
        if duration >= self.min_ticks {
            while thread.told < thread.stack.len() {
                thread.told += 1;
                self.view
                    .enter(tid, &mut thread.stack[..thread.told], &self.names);
            }
            self.view.exit(tid, time, &thread.stack, &self.names);
            thread.stack.pop();
            if let Some(parent) = thread.stack.last_mut() {
                parent.child_ticks = parent.child_ticks.saturating_add(duration);
            }
        } else {
            thread.stack.pop();
        }
        thread.told = thread.told.min(thread.stack.len());
    }
}

/// Where a view's function names come from.
pub enum Symbols {
    /// The ELF files of the trace's modules.
    Elf(Symbolizer),
    /// A table by address: a TI dump's functions (named by the TI post tool's rules), or a NITRO
    /// buffer's (from their name strings).
    Table(std::collections::HashMap<u64, String>),
}

impl Resolve for Symbols {
    fn resolve(&mut self, address: u64) -> Option<String> {
        match self {
            Symbols::Elf(s) => s.resolve(address),
            Symbols::Table(t) => t.resolve(address),
        }
    }

    fn origin(&mut self, address: u64) -> Option<crate::input::symbols::SymbolOrigin> {
        match self {
            Symbols::Elf(s) => s.origin(address),
            Symbols::Table(_) => None,
        }
    }
}

impl Symbols {
    fn take_warnings(&mut self) -> Vec<String> {
        match self {
            Symbols::Elf(s) => s.take_warnings(),
            Symbols::Table(_) => Vec::new(),
        }
    }
}

/// A trace opened for a view: its [`TraceInfo`] and the names of its functions.
pub struct Prepared {
    pub trace: TraceFile,
    pub info: TraceInfo,
    pub symbols: Symbols,
    /// Told of the replay's progress.
    pub progress: Option<Progress>,
    /// Warnings from reading the input (a dump's conversion), shown with the replay's.
    warnings: Vec<String>,
    /// The input is a TI or NITRO dump: its times are ticks by nature, not for want of a clock
    /// rate.
    from_dump: bool,
    /// Names for functions that share one ([`Prepared::tell_apart`]).
    labels: Option<std::collections::HashMap<u64, String>>,
}

impl Prepared {
    /// Opens `trace_path`, scans its chunks and prepares its symbols (`exe` overrides the
    /// executable recorded in the trace). A file that is not a `.hktrace` is read as a NITRO
    /// function cost measurement buffer or a TI dump of the program `exe` (required then):
    /// for TI its calls, one thread per task, in cycles of task time, as `hookprof ti` reads
    /// them.
    pub fn open(trace_path: &Path, exe: Option<&Path>) -> Result<Prepared, Error> {
        let (trace, symbols, warnings) = if crate::input::detect::is_hktrace(trace_path)? {
            (TraceFile::open(trace_path)?, None, Vec::new())
        } else {
            let Some(exe) = exe else {
                return Err(Error::Unsupported {
                    path: trace_path.to_path_buf(),
                    message: "not a .hktrace file (it does not start with \"HKTRACE\"); to \
                              read it as a TI dump (hookcc --hook-runtime=ti) or a NITRO \
                              function cost buffer, give the program with --exe"
                        .to_string(),
                });
            };
            if crate::input::detect::is_nitro_dump(trace_path)? {
                let converted = crate::analysis::nitro::hktrace_file(trace_path, exe)?;
                let trace = TraceFile::from_bytes(trace_path, converted.trace);
                return Prepared::finish(
                    trace_path,
                    trace,
                    Some(Symbols::Table(converted.names)),
                    Some(exe),
                    converted.warnings,
                );
            }
            let options = crate::analysis::ti::Options {
                exe: exe.to_path_buf(),
                all_symbols: false,
                profile_data: None,
                record_words: None,
            };
            let processed = crate::analysis::ti::analyse_file(trace_path, &options)?;
            let names = processed.analysis.function_names();
            let bytes = processed.analysis.to_hktrace();
            (
                TraceFile::from_bytes(trace_path, bytes),
                Some(Symbols::Table(names)),
                processed.warnings,
            )
        };
        Prepared::finish(trace_path, trace, symbols, exe, warnings)
    }

    /// Scans `trace` and takes its names from `symbols`, else from its modules' ELF files.
    fn finish(
        trace_path: &Path,
        trace: TraceFile,
        symbols: Option<Symbols>,
        exe: Option<&Path>,
        warnings: Vec<String>,
    ) -> Result<Prepared, Error> {
        let info = TraceInfo::scan(&trace.trace()?).map_err(|error| Error::Format {
            path: PathBuf::from(trace_path),
            error,
        })?;
        let symbols = match symbols {
            Some(table) => table,
            None => Symbols::Elf(Symbolizer::new(&info.summary, exe)?),
        };
        Ok(Prepared {
            trace,
            info,
            from_dump: matches!(symbols, Symbols::Table(_)),
            symbols,
            progress: None,
            warnings,
            labels: None,
        })
    }

    /// From now on, views show the functions at `addresses` (every function a view of this
    /// trace may meet) as `report` does: functions that share a name (`static` ones of
    /// different files, names that are not UTF-8 and read the same) told apart by their file
    /// or address ([`crate::input::symbols::function_labels`]).
    pub fn tell_apart(&mut self, addresses: impl IntoIterator<Item = u64>) {
        let (labels, _) = crate::input::symbols::function_labels(addresses, &mut self.symbols);
        self.labels = Some(labels);
    }

    /// The name views show for `address`, after [`Prepared::tell_apart`].
    pub fn label(&self, address: u64) -> Option<&str> {
        self.labels.as_ref()?.get(&address).map(String::as_str)
    }

    /// Replays the trace into `view` through `filter`. Returns the view, the names it refers
    /// to and the warnings to show (those of `hookprof report`).
    /// Refuses a call-path profile (HOOKCC_MODE=profile) for a view of calls in time order:
    /// called before the view writes anything.
    pub fn needs_records(&self) -> Result<(), Error> {
        if self.info.profiles > 0 && self.info.records == 0 {
            return Err(Error::Unsupported {
                path: self.trace.path().to_path_buf(),
                message: "a call-path profile (HOOKCC_MODE=profile) has sums per call path, \
                          not calls in time order: this view needs a trace (HOOKCC_MODE=trace \
                          or ring); report, flame, callgrind, gmon and diff read a profile"
                    .to_string(),
            });
        }
        Ok(())
    }

    /// [`Filter::sized`] for this trace: counts the calls' durations by a first replay only
    /// when the output would pass the limit (its warnings kept for the view's replay).
    pub fn sized(
        &mut self,
        filter: &Filter,
        bytes_per_record: u64,
        size_limit: Option<u64>,
        what: &str,
    ) -> Result<(Filter, Option<String>), Error> {
        let clock = self.info.clock;
        filter.sized(
            self.info.records,
            bytes_per_record,
            size_limit,
            what,
            || {
                let kept = self.warnings.clone();
                let (calls, _, _) = self.run(CallsAtLeast::new(&clock), &Filter::default())?;
                self.warnings = kept;
                Ok(calls.counts())
            },
        )
    }

    /// Refuses `--time=cpu` (`time`) where the trace cannot give CPU time ([`no_cpu_time`]);
    /// `in_time_order`: the view reads the records, not a profile's sums.
    pub fn check_time(&self, time: TimeBasis, in_time_order: bool) -> Result<(), Error> {
        let switches = self.info.summary.switches;
        let summed = self.info.profiles > 0 && !(in_time_order && self.info.records > 0);
        if time == TimeBasis::Cpu && (switches == 0 || summed) {
            let profile = self.info.profiles > 0 && self.info.records == 0;
            return Err(no_cpu_time(self.trace.path(), switches, summed, profile));
        }
        Ok(())
    }

    pub fn run<V: View>(
        &mut self,
        view: V,
        filter: &Filter,
    ) -> Result<(V, Names, Vec<String>), Error> {
        if V::IN_TIME_ORDER {
            self.needs_records()?;
        }
        self.check_time(filter.time, V::IN_TIME_ORDER)?;
        let mut viewer = Viewer::new(view, &self.info, filter, &mut self.symbols)
            .with_progress(self.progress.clone())
            .with_labels(self.labels.as_ref());
        let summary =
            replay_bytes(self.trace.bytes(), &mut viewer).map_err(|error| Error::Format {
                path: self.trace.path().to_path_buf(),
                error,
            })?;
        let (view, names) = viewer.into_parts();
        let mut warnings = std::mem::take(&mut self.warnings);
        warnings.extend(
            profile_warnings(&summary)
                .into_iter()
                .filter(|w| !(self.from_dump && w.starts_with("the trace has no clock rate"))),
        );
        warnings.extend(self.symbols.take_warnings());
        Ok((view, names, warnings))
    }
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
