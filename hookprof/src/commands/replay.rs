//! `hookprof replay`: the call tree.

use std::io;
use std::path::Path;

use crate::analysis::replay::TimeBasis;
use crate::analysis::view;
use crate::commands::view_options::ViewArgs;
use crate::commands::view_options::{write_error, ViewOptions};
use crate::input::error::Error;
use crate::output::report;

/// Writes the call tree of `trace_path` (`hookprof replay`, [`report::calltree`]) to `out`
/// as it is replayed. Returns the warnings to show.
pub fn calltree_file(
    trace_path: &Path,
    options: &ViewOptions,
    out: &mut dyn io::Write,
) -> Result<Vec<String>, Error> {
    let mut prepared = view::Prepared::open(trace_path, options.exe.as_deref())?;
    prepared.needs_records()?;
    prepared.check_time(options.filter.time, true)?;
    prepared.progress = options.progress.clone();
    if options.filter.time == TimeBasis::Cpu {
        writeln!(
            out,
            "# durations are CPU time (--time=cpu): the time each thread was switched out is \
             left out"
        )
        .map_err(write_error)?;
    }
    let tree = report::calltree::CallTree::start(out, &prepared.info).map_err(write_error)?;
    let (tree, names, warnings) = prepared.run(tree, &options.filter)?;
    tree.finish(&names).map_err(write_error)?;
    Ok(warnings)
}

#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    #[command(flatten)]
    pub view: ViewArgs,
}
