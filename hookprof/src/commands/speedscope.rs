//! `hookprof speedscope`.

use std::io;
use std::path::Path;

use crate::analysis::view;
use crate::commands::view_options::SizeLimitArgs;
use crate::commands::view_options::ViewArgs;
use crate::commands::view_options::{write_error, ViewOptions};
use crate::input::error::Error;
use crate::output::report;

/// Writes the speedscope profile of `trace_path` to `out` ([`report::speedscope`]): one
/// replay per thread, so memory stays flat. Returns the warnings to show.
pub fn speedscope_file(
    trace_path: &Path,
    options: &ViewOptions,
    out: &mut dyn io::Write,
) -> Result<Vec<String>, Error> {
    let mut prepared = view::Prepared::open(trace_path, options.exe.as_deref())?;
    prepared.needs_records()?;
    prepared.check_time(options.filter.time, true)?;
    prepared.progress = options.progress.clone();
    // Bytes a record makes at least: 34.5–36.5 measured on short C names (docs/views.md).
    let (sized, note) = prepared.sized(
        &options.filter,
        35,
        options.size_limit,
        "speedscope profile",
    )?;
    let mut speedscope =
        report::speedscope::Speedscope::start(out, prepared.info.clock).map_err(write_error)?;
    let wanted = &sized.threads;
    let mut threads: Vec<view::ThreadInfo> = Vec::new();
    for t in &prepared.info.threads {
        let shown = wanted.is_empty()
            || wanted.contains(&t.tid)
            || t.sequence.is_some_and(|s| wanted.contains(&s));
        if shown && !threads.iter().any(|seen| seen.tid == t.tid) {
            threads.push(t.clone());
        }
    }
    let mut warnings: Vec<String> = Vec::new();
    for thread in threads {
        speedscope
            .begin_thread(&thread.title())
            .map_err(write_error)?;
        let filter = view::Filter {
            threads: vec![thread.tid],
            ..sized.clone()
        };
        let (view, _, more) = prepared.run(speedscope, &filter)?;
        speedscope = view;
        speedscope.end_thread().map_err(write_error)?;
        for w in more {
            if !warnings.contains(&w) {
                warnings.push(w);
            }
        }
    }
    let cpu = match options.filter.time {
        crate::analysis::replay::TimeBasis::Cpu => ", CPU time",
        crate::analysis::replay::TimeBasis::Wall => "",
    };
    let title = match &prepared.info.summary.exe {
        Some(exe) => format!("{} (hookprof{cpu})", exe.display()),
        None => format!("hookprof{cpu}"),
    };
    speedscope.finish(&title).map_err(write_error)?;
    warnings.extend(note);
    Ok(warnings)
}

#[derive(clap::Args, Debug)]
pub struct SpeedscopeArgs {
    #[command(flatten)]
    pub view: ViewArgs,
    #[command(flatten)]
    pub size: SizeLimitArgs,
}
