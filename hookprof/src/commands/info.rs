//! `hookprof info`'s arguments: a trace described ([`crate::output::info`]).

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct InfoArgs {
    /// The .hktrace file.
    pub trace: PathBuf,
    /// Raw times: do not subtract the hooks' own time (which the runtime measured at start).
    #[arg(long)]
    pub no_compensation: bool,
}
