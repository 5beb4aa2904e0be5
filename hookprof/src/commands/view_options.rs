//! What every view command shares.

use std::io;
use std::path::PathBuf;

use crate::analysis::view;
use crate::analysis::view::Filter;
use crate::commands::arguments::parse_duration;
use crate::commands::arguments::parse_size;
use crate::commands::arguments::parse_time_range;
use crate::commands::arguments::TimeArg;
use crate::input::error::Error;

/// Options every view shares (`hookprof timeline`, `flame`, `callgrind`, `replay`).
#[derive(Clone, Debug, Default)]
pub struct ViewOptions {
    /// The executable to take symbols from instead of the path in the trace.
    pub exe: Option<PathBuf>,
    pub filter: view::Filter,
    /// Told of the replay's progress (the `hookprof` binary draws a bar with it).
    pub progress: Option<view::Progress>,
    /// `timeline` and `speedscope`: leave out short calls when an unfiltered output would pass
    /// this many bytes ([`view::Filter::sized`]); `None`: never.
    pub size_limit: Option<u64>,
}

pub(crate) fn write_error(error: io::Error) -> Error {
    Error::Write { error }
}

pub const VIEW_HELP: &str = "\
Filters (the same in timeline, flame, callgrind, replay and speedscope):
  --function=GLOB   only calls of matching functions and the calls made inside them
  --exclude=GLOB    hide matching functions and the calls made inside them
  --thread=N        only this thread (its number from `hookprof info`, or its TID)
  --depth=N         at most N levels of shown calls
  --min-duration=D  hide calls shorter than D (e.g. 500ns, 20us, 1.5ms, 2s: a number
                    needs its unit, only 0 goes without)
  --time-range=A..B only calls starting between A and B after the first record
                    (e.g. 10ms..20ms, 2s.., ..500us)
GLOB matches the demangled name: * any text, ? one character, [abc] one of a set.
The time of a hidden call counts as the own time of the shown call around it.
--time=cpu counts only the time each thread ran (from the trace's context switches);
the timeline stays on the wall clock and shows the time switched out as slices.
See docs/views.md.";

/// The trace, symbols, output and filters every view takes.
#[derive(clap::Args, Debug)]
pub struct ViewArgs {
    /// The .hktrace file, or a TI dump (PREFIX.bin or PREFIX.dat) or a NITRO function cost
    /// buffer (both with --exe).
    pub trace: PathBuf,
    /// Raw times: do not subtract the hooks' own time (which the runtime measured at start).
    #[arg(long)]
    pub no_compensation: bool,
    /// Take symbols from this executable instead of the path recorded in the trace (required
    /// for a TI dump or a NITRO buffer: the program that wrote it).
    #[arg(long, value_name = "ELF")]
    pub exe: Option<PathBuf>,
    /// Write to FILE instead of standard output (never the input trace).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Only calls of functions matching GLOB, and the calls inside them (repeatable).
    #[arg(long = "function", value_name = "GLOB", value_parser = Filter::pattern)]
    pub functions: Vec<glob::Pattern>,
    /// Hide functions matching GLOB and the calls inside them (repeatable).
    #[arg(long, value_name = "GLOB", value_parser = Filter::pattern)]
    pub exclude: Vec<glob::Pattern>,
    /// Only this thread: its number from `hookprof info`, or its TID (repeatable).
    #[arg(long = "thread", value_name = "N")]
    pub threads: Vec<u64>,
    /// At most N levels of shown calls (1 = only the outermost).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub depth: Option<u64>,
    /// Hide calls shorter than this: a number with its unit, ns, us, ms or s (`0` alone
    /// needs none).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub min_duration: Option<u64>,
    /// Only calls starting in START..END, times since the first record (e.g. 10ms..20ms,
    /// 2s.., ..500us).
    #[arg(long, value_name = "START..END", value_parser = parse_time_range)]
    pub time_range: Option<(u64, u64)>,
    /// cpu: count only the time each thread ran (the trace's context switches; refused for a
    /// trace without them). The timeline keeps the wall clock and draws each switched-out
    /// interval as a "switched out" slice inside the call that was open. See docs/views.md.
    #[arg(long, value_enum, default_value_t = TimeArg::Wall)]
    pub time: TimeArg,
}

impl From<&ViewArgs> for ViewOptions {
    fn from(a: &ViewArgs) -> ViewOptions {
        ViewOptions {
            progress: None,
            exe: a.exe.clone(),
            filter: Filter {
                functions: a.functions.clone(),
                exclude: a.exclude.clone(),
                threads: a.threads.clone(),
                depth: a.depth.map(|d| d as usize),
                min_duration_ns: a.min_duration.unwrap_or(0),
                time_range_ns: a.time_range,
                time: a.time.into(),
            },
            size_limit: None,
        }
    }
}

/// `--size-limit` of the timeline and speedscope views.
#[derive(clap::Args, Debug)]
pub struct SizeLimitArgs {
    /// Above this output size (estimated from the records), an unfiltered view leaves out
    /// calls shorter than 1us and says so; 0: never (K, M, G; a bare number is bytes).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "512M")]
    pub size_limit: u64,
}

impl SizeLimitArgs {
    /// What the library takes: none when the user chose a minimum duration, or 0.
    pub fn limit(&self, view: &ViewArgs) -> Option<u64> {
        (view.min_duration.is_none() && self.size_limit != 0).then_some(self.size_limit)
    }
}
