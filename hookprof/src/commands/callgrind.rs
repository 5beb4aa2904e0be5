//! `hookprof callgrind`.

use std::io;
use std::path::Path;

use crate::analysis::view;
use crate::commands::view_options::ViewArgs;
use crate::commands::view_options::{write_error, ViewOptions};
use crate::input::error::Error;
use crate::input::lines;
use crate::output::report;

/// Writes a callgrind profile of `trace_path` to `out` ([`report::callgrind`]). Returns the
/// warnings to show.
pub fn callgrind_file(
    trace_path: &Path,
    options: &ViewOptions,
    out: &mut dyn io::Write,
) -> Result<Vec<String>, Error> {
    let mut prepared = view::Prepared::open(trace_path, options.exe.as_deref())?;
    prepared.progress = options.progress.clone();
    let profile = report::callgrind::CallgrindProfile::new();
    let (profile, names, warnings) = prepared.run(profile, &options.filter)?;
    let clock = prepared.info.clock;
    let lines = lines::SourceLines::for_executable(&prepared.info.summary, options.exe.as_deref());
    let location = |address: u64| lines.as_ref().and_then(|l| l.location(address));
    profile
        .write(
            &prepared.info,
            options.exe.as_deref(),
            &names,
            &clock,
            &location,
            out,
        )
        .map_err(write_error)?;
    Ok(warnings)
}

#[derive(clap::Args, Debug)]
pub struct CallgrindViewArgs {
    #[command(flatten)]
    pub view: ViewArgs,
}
