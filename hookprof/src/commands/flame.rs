//! `hookprof flame`.

use std::io;
use std::path::{Path, PathBuf};

use crate::analysis::view;
use crate::commands::view_options::ViewArgs;
use crate::commands::view_options::{write_error, ViewOptions};
use crate::input::error::Error;
use crate::output::report;
use clap::ValueEnum;

/// The output of `hookprof flame`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlameFormat {
    /// Folded stacks, one `frame;frame;… count` line per distinct stack.
    Folded,
    /// An SVG flame graph (inferno).
    Svg,
}

/// Options of `hookprof flame` besides the shared ones.
#[derive(Clone, Copy, Debug)]
pub struct FlameOptions {
    pub format: FlameFormat,
    /// Icicle graph: the outermost frames at the top (SVG only).
    pub inverted: bool,
    /// A `thread N` frame at the bottom of every stack.
    pub per_thread: bool,
}

/// Writes the folded stacks or flame graph of `trace_path` to `out` ([`report::flame`]).
/// Returns the warnings to show.
pub fn flame_file(
    trace_path: &Path,
    options: &ViewOptions,
    flame: &FlameOptions,
    out: &mut dyn io::Write,
) -> Result<Vec<String>, Error> {
    let mut prepared = view::Prepared::open(trace_path, options.exe.as_deref())?;
    prepared.progress = options.progress.clone();
    let stacks = report::flame::FoldedStacks::new(&prepared.info, flame.per_thread);
    let (stacks, names, warnings) = prepared.run(stacks, &options.filter)?;
    let clock = prepared.info.clock;
    match flame.format {
        FlameFormat::Folded => stacks.write_folded(&names, &clock, out),
        FlameFormat::Svg => {
            let title = match &prepared.info.summary.exe {
                Some(exe) => format!("{} (hookprof{})", exe.display(), cpu_note(options)),
                None => format!("hookprof flame graph{}", cpu_note(options)),
            };
            stacks.write_svg(&names, &clock, &title, flame.inverted, out)
        }
    }
    .map_err(write_error)?;
    Ok(warnings)
}

/// The flame graph of several traces (`hookprof flame A B …`): each trace's stacks under a
/// root frame of its process, `program [pid]` (the executable's file name), so the graph
/// shows the processes side by side and the folded lines can be told apart. The traces'
/// times must be in one unit (all with a clock rate, or none). Returns the warnings, each
/// naming its trace.
pub fn flame_files(
    trace_paths: &[PathBuf],
    options: &ViewOptions,
    flame: &FlameOptions,
    out: &mut dyn io::Write,
) -> Result<Vec<String>, Error> {
    if let [one] = trace_paths {
        return flame_file(one, options, flame, out);
    }
    let mut lines = Vec::new();
    let mut warnings = Vec::new();
    let mut unit = None;
    for path in trace_paths {
        let mut prepared = view::Prepared::open(path, options.exe.as_deref())?;
        prepared.progress = options.progress.clone();
        let this_unit = prepared.info.clock.unit();
        if *unit.get_or_insert(this_unit) != this_unit {
            return Err(Error::Unsupported {
                path: path.clone(),
                message: format!(
                    "its times are {this_unit} and the traces before it {}: a flame graph of \
                     several traces needs one unit (every trace with a clock rate, or none)",
                    unit.unwrap_or_default()
                ),
            });
        }
        let stacks = report::flame::FoldedStacks::new(&prepared.info, flame.per_thread);
        let (stacks, names, w) = prepared.run(stacks, &options.filter)?;
        warnings.extend(w.into_iter().map(|w| format!("{}: {w}", path.display())));
        let mut folded = Vec::new();
        stacks
            .write_folded(&names, &prepared.info.clock, &mut folded)
            .map_err(write_error)?;
        let program = prepared.info.program();
        let program = program.rsplit('/').next().unwrap_or(&program);
        let root = format!("{program} [{}]", prepared.info.summary.header.pid);
        for line in String::from_utf8_lossy(&folded).lines() {
            lines.push(format!("{};{line}", root.replace(';', ":")));
        }
    }
    lines.sort();
    match flame.format {
        FlameFormat::Folded => {
            let mut text = String::new();
            for line in &lines {
                text.push_str(line);
                text.push('\n');
            }
            out.write_all(text.as_bytes())
        }
        FlameFormat::Svg => {
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            let title = format!(
                "{} processes (hookprof{})",
                trace_paths.len(),
                cpu_note(options)
            );
            report::flame::draw_svg(&lines, unit.unwrap_or("ns"), &title, flame.inverted, out)
        }
    }
    .map_err(write_error)?;
    Ok(warnings)
}

/// What the SVG's title adds with `--time=cpu`: the widths are CPU time.
fn cpu_note(options: &ViewOptions) -> &'static str {
    match options.filter.time {
        crate::analysis::replay::TimeBasis::Cpu => ", CPU time",
        crate::analysis::replay::TimeBasis::Wall => "",
    }
}

#[derive(clap::Args, Debug)]
pub struct FlameArgs {
    #[command(flatten)]
    pub view: ViewArgs,
    /// More traces: each trace's stacks under a `program [pid]` frame of its own (the traces
    /// are named on stderr).
    #[arg(value_name = "MORE")]
    pub more: Vec<PathBuf>,
    /// Folded stacks (text) or an SVG flame graph.
    #[arg(long, value_enum, default_value_t = FlameFormatArg::Folded)]
    pub format: FlameFormatArg,
    /// Icicle graph: the outermost calls at the top (SVG).
    #[arg(long)]
    pub inverted: bool,
    /// Put each thread's stacks under a `thread N` frame.
    #[arg(long)]
    pub per_thread: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FlameFormatArg {
    /// `frame;frame;… count` lines, sorted.
    Folded,
    /// An SVG flame graph.
    Svg,
}
