//! What a view is handed: shown frames, names, progress, and the [`View`] trait.

use std::path::Path;

use crate::analysis::replay::{Aggregate, Frame, SwitchReason};
use crate::input::error::Error;

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
    pub(super) fn new(frame: &Frame, function: u32) -> Self {
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
    /// Each function as the trace names it (its record, in a `hookcc --trace` build).
    pub addresses: Vec<u64>,
    /// Each function's run-time address, as the outputs show it
    /// ([`crate::input::symbols::Resolve::entry_point`]).
    pub entry_points: Vec<u64>,
}

impl Names {
    pub fn name(&self, function: u32) -> &str {
        &self.names[function as usize]
    }
}

/// A view of the shown frames. Times are in ticks; [`TraceInfo::clock`](super::TraceInfo::clock) converts them.
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
    /// [`TimeBasis::Wall`](crate::analysis::replay::TimeBasis::Wall)).
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
    /// The view keeps of a frame only a number of its own (a path tree's node: `flame`,
    /// `pprof`) and, when it closes, its exclusive time. Then without filters the [`Viewer`]
    /// keeps nothing per frame: the number goes to the replay's frame ([`Frame::user`]), whose
    /// times are the ones a stack of [`ViewFrame`]s would have (without filters every child
    /// is shown), and the view hears of the trace's frames by [`View::known_node`],
    /// [`View::enter_node`] and [`View::exit_node`] instead of [`View::enter`] and
    /// [`View::exit`] (with filters, and for a profile's paths, it gets those as any view).
    /// The Viewer's second stack, mirroring the replay's frame for frame with a thread
    /// look-up at every entry and exit, was a quarter of `hookprof flame`'s instructions.
    /// Such a view takes nothing in [`View::switched_out`].
    ///
    /// [`Viewer`]: super::Viewer
    const NODES: bool = false;
    /// With [`View::NODES`], no filter: the number of a frame `depth` deep (1: outermost) of
    /// the function at `address` inside the frame numbered `parent`, if the view knows it
    /// without the function's number (which costs the [`Viewer`](super::Viewer) a look-up of
    /// the thread): a loop calls the same function again. Else [`View::enter_node`] is asked.
    fn known_node(&self, _parent: u32, _depth: usize, _address: u64) -> Option<u32> {
        None
    }
    /// With [`View::NODES`], no filter: a frame opens, `depth` frames deep (1: outermost),
    /// of the function `function` at `address`, inside the frame whose number is `parent`
    /// (`None` for the outermost); returns the new frame's number.
    fn enter_node(
        &mut self,
        _tid: u64,
        _parent: Option<u32>,
        _depth: usize,
        _function: u32,
        _address: u64,
    ) -> u32 {
        0
    }
    /// With [`View::NODES`], no filter: the innermost open frame, whose number is `node`,
    /// closes after `exclusive` ticks of its own (its duration less its children's).
    fn exit_node(&mut self, _tid: u64, _node: u32, _exclusive: u64) {}
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
