//! `hookprof core`'s arguments: a trace out of a core file ([`crate::input::coredump`]).

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct CoreArgs {
    /// The program (the same executable the core is of: its symbols find the runtime).
    pub program: PathBuf,
    /// The core file (`core`, `core.PID`, or gcore's).
    pub core: PathBuf,
    /// Where to write the trace (default: CORE.hktrace).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The clock's rate, where the target does not fix it (x86's TSC): by default measured on
    /// this machine, right if the core was taken here.
    #[arg(long, value_name = "N")]
    pub ticks_per_second: Option<u64>,
}
