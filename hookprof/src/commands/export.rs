//! `hookprof export`: a run of the Parquet dataset.

use std::io;
use std::path::{Path, PathBuf};

use crate::analysis::view;
use crate::commands::view_options::ViewOptions;
use crate::input::error::Error;
use crate::input::lines;
use crate::output::file::OutputFile;
use crate::output::{info, report};
use clap::ValueEnum;

/// What `hookprof export` is told beyond the traces.
pub struct ExportOptions {
    /// The dataset's directory: `DIR/calls/run=RUN/PID.parquet`, `DIR/functions/…`.
    pub dir: PathBuf,
    /// The run's id (the `run` partition); `None`: the earliest trace's start, UTC, and its
    /// pid (`20261126T013000Z-4242`).
    pub run: Option<String>,
    /// The `host` column; `None`: this machine's host name.
    pub host: Option<String>,
    /// For traces without a clock rate (TI and NITRO dumps): their ticks per second.
    pub ticks_per_second: Option<u64>,
}

/// What `hookprof export` wrote, per trace: its two files and their rows.
pub struct Exported {
    pub run: String,
    pub files: Vec<(PathBuf, u64, PathBuf, u64)>,
}

/// The machine's host name, for the `host` column.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

/// Exports `trace_paths` as one run of the Parquet dataset `export.dir`
/// ([`report::parquet`], docs/export.md). Each trace's files are written under a random
/// temporary name, created exclusively with the trace's mode, and linked into place when
/// complete; a file already there (a run exported before) is an error, never overwritten.
pub fn export_files(
    trace_paths: &[PathBuf],
    options: &ViewOptions,
    export: &ExportOptions,
) -> Result<(Exported, Vec<String>), Error> {
    let mut traces = Vec::new();
    for path in trace_paths {
        let mut prepared = view::Prepared::open(path, options.exe.as_deref())?;
        if prepared.info.clock.ticks_per_second.is_none() {
            prepared.info.clock.ticks_per_second = export.ticks_per_second;
        }
        let Some(wall) = prepared.info.wall_start_ns() else {
            return Err(Error::Unsupported {
                path: path.clone(),
                message: "the trace has no clock rate, and the tables hold nanoseconds: give \
                          its counter's rate with --ticks-per-second"
                    .to_string(),
            });
        };
        traces.push((path, prepared, wall));
    }
    let run = match &export.run {
        Some(run) => run.clone(),
        None => {
            let (_, first, wall) = traces
                .iter()
                .min_by_key(|t| t.2)
                .expect("at least one trace");
            let stamp = info::utc(*wall);
            let digits: String = stamp.chars().filter(char::is_ascii_digit).collect();
            format!(
                "{}T{}Z-{}",
                &digits[..8],
                &digits[8..14],
                first.info.summary.header.pid
            )
        }
    };
    if run.is_empty() || run.contains(['/', '\0']) || run == "." || run == ".." {
        return Err(Error::Unsupported {
            path: export.dir.clone(),
            message: format!("{run:?} cannot be a run's directory name (--run)"),
        });
    }
    let host = export.host.clone().unwrap_or_else(host_name);
    let mut exported = Exported {
        run: run.clone(),
        files: Vec::new(),
    };
    let mut warnings = Vec::new();
    for (path, mut prepared, wall) in traces {
        prepared.progress = options.progress.clone();
        let pid = prepared.info.summary.header.pid;
        let destination = report::parquet::Destination::new(&export.dir, &run, pid);
        for file in [&destination.calls, &destination.functions] {
            if std::fs::symlink_metadata(file).is_ok() {
                return Err(Error::Unsupported {
                    path: file.clone(),
                    message: "already exported (a run's files are never overwritten: choose \
                              another --run, or remove them)"
                        .to_string(),
                });
            }
            if let Some(parent) = file.parent() {
                std::fs::create_dir_all(parent).map_err(|e| Error::Output {
                    path: parent.to_path_buf(),
                    action: "create the directory",
                    error: e,
                })?;
            }
        }
        let lines =
            lines::SourceLines::for_executable(&prepared.info.summary, options.exe.as_deref());
        let output_error = |file: &Path, error: io::Error| Error::Output {
            path: file.to_path_buf(),
            action: "write",
            error,
        };
        // Both files by the one output policy (docs/reliability.md, "hookprof, writing"):
        // random temporaries created exclusively, the trace's mode, and here linked into place
        // only where nothing is (a link planted at the name included).
        let calls_file = OutputFile::create_new(&destination.calls, Some(path))?;
        let functions_file = OutputFile::create_new(&destination.functions, Some(path))?;
        let mut describer = report::parquet::Describer::new(&host, &prepared.info, lines);
        // First what `report` reads (every call, a profile's trees), which meets every
        // function: same-named ones are then told apart as `report` tells them.
        let (mut totals, names, mut w) =
            prepared.run(report::parquet::FunctionTotals::default(), &options.filter)?;
        // Calls of throttled functions counted without records (COUNTED chunks): in the
        // thread's `functions` rows, unless a filter chose calls (counts have no time, depth
        // or callers to choose them by).
        let counted: u64 = prepared.info.counted.iter().map(|c| c.2).sum();
        let filtered = !options.filter.is_everything();
        if counted > 0 && !filtered {
            totals.add_counted(&names, &prepared.info.counted);
        }
        prepared.tell_apart(names.addresses.iter().copied());
        let (functions_file, functions) = totals
            .write(
                &names,
                &|address| prepared.label(address).map(str::to_string),
                &mut describer,
                functions_file,
            )
            .map_err(|e| output_error(&destination.functions, e))?;
        // Then the calls the trace has records of, in time order.
        let view = report::parquet::ParquetCalls::start(calls_file, describer, wall)
            .map_err(|e| output_error(&destination.calls, e))?;
        let view = if prepared.info.records > 0 {
            let (view, _, more) = prepared.run(view, &options.filter)?;
            w.extend(
                more.into_iter()
                    .filter(|m| !w.contains(m))
                    .collect::<Vec<_>>(),
            );
            view
        } else {
            view
        };
        let (calls_file, calls) = view
            .finish()
            .map_err(|e| output_error(&destination.calls, e))?;
        if counted > 0 {
            w.push(if filtered {
                format!(
                    "{counted} calls of throttled functions were counted, not recorded: with a \
                     filter they are in neither table"
                )
            } else {
                format!(
                    "{counted} calls of throttled functions were counted, not recorded: \
                     `functions` counts them (in `calls`, without times), `calls` has rows for \
                     the timed calls only"
                )
            });
        }
        if prepared.info.profiles > 0 {
            w.push(if prepared.info.records == 0 {
                format!(
                    "a call-path profile (HOOKCC_MODE=profile) has sums per call path, not \
                     single calls: `calls` has no rows, `functions` has the {functions} rows \
                     of its trees"
                )
            } else {
                format!(
                    "the trace keeps the records of its long calls only (HOOKCC_MIN_DURATION): \
                     `calls` has the {calls} calls it kept, `functions` counts every call \
                     (from its trees)"
                )
            });
        }
        calls_file.commit()?;
        if let Err(e) = functions_file.commit() {
            // The pair is all or nothing: the calls just linked are removed again.
            let _ = std::fs::remove_file(&destination.calls);
            return Err(e);
        }
        warnings.extend(w.into_iter().map(|w| format!("{}: {w}", path.display())));
        exported
            .files
            .push((destination.calls, calls, destination.functions, functions));
    }
    Ok((exported, warnings))
}

/// What `hookprof export --format=pprof` wrote: its samples' traces and whether they have a
/// CPU time.
pub struct ExportedProfile {
    pub traces: usize,
    pub with_cpu: bool,
}

/// Exports `trace_paths` as one pprof profile, `export.dir` being the file
/// ([`crate::output::pprof`], docs/export.md): every trace a process, its call paths the
/// samples. The CPU time is there when every trace recorded its context switches (what
/// `report --time=cpu` needs); otherwise it is left out and a warning names the traces
/// without them.
pub fn export_pprof(
    trace_paths: &[PathBuf],
    options: &ViewOptions,
    export: &ExportOptions,
) -> Result<(ExportedProfile, Vec<String>), Error> {
    use crate::analysis::replay::TimeBasis;
    use crate::output::pprof;
    let mut traces = Vec::new();
    for path in trace_paths {
        let mut prepared = view::Prepared::open(path, options.exe.as_deref())?;
        if prepared.info.clock.ticks_per_second.is_none() {
            prepared.info.clock.ticks_per_second = export.ticks_per_second;
        }
        if prepared.info.clock.ticks_per_second.is_none() {
            return Err(Error::Unsupported {
                path: path.clone(),
                message: "the trace has no clock rate, and a profile's times are nanoseconds: \
                          give its counter's rate with --ticks-per-second"
                    .to_string(),
            });
        }
        prepared.progress = options.progress.clone();
        traces.push((path, prepared));
    }
    let without_cpu: Vec<String> = traces
        .iter()
        .filter(|(_, p)| p.check_time(TimeBasis::Cpu, false).is_err())
        .map(|(path, _)| path.display().to_string())
        .collect();
    let with_cpu = without_cpu.is_empty();
    let mut warnings = Vec::new();
    if !with_cpu && without_cpu.len() < traces.len() {
        warnings.push(format!(
            "the profile has no cpu/nanoseconds: these traces have no context switches (or \
             are call-path profiles): {}",
            without_cpu.join(", ")
        ));
    }
    let mut builder = pprof::ProfileBuilder::new(with_cpu);
    for (path, mut prepared) in traces {
        // First on the wall clock (every call, as `report` counts), which meets every
        // function: same-named ones are then told apart as `report` tells them.
        let (mut paths, names, w) = prepared.run(pprof::CallPaths::new(), &options.filter)?;
        paths.learn_names(&names);
        prepared.tell_apart(names.addresses.iter().copied());
        if with_cpu {
            let cpu_filter = view::Filter {
                time: TimeBasis::Cpu,
                ..options.filter.clone()
            };
            let (more, names, _) = prepared.run(paths.then_cpu(), &cpu_filter)?;
            paths = more;
            paths.learn_names(&names);
        }
        let mut w = w;
        // Calls of throttled functions counted without records (COUNTED chunks): under a
        // marker of their thread, their callers unknown, unless a filter chose calls.
        let counted: u64 = prepared.info.counted.iter().map(|c| c.2).sum();
        if counted > 0 && !options.filter.is_everything() {
            w.push(format!(
                "{counted} calls of throttled functions were counted, not recorded: with a \
                 filter they are left out"
            ));
        } else if counted > 0 {
            paths.add_counted(&prepared.info.counted);
        }
        warnings.extend(w.into_iter().map(|w| format!("{}: {w}", path.display())));
        let lines =
            lines::SourceLines::for_executable(&prepared.info.summary, options.exe.as_deref());
        let label = |address: u64| prepared.label(address).map(str::to_string);
        builder.add(
            &pprof::Process {
                info: &prepared.info,
                lines,
                label: &label,
                host: export.host.as_deref(),
                run: export.run.as_deref(),
            },
            &paths,
        );
    }
    let comments = vec![format!(
        "hookprof {}: {} trace(s)",
        env!("CARGO_PKG_VERSION"),
        trace_paths.len()
    )];
    let mut file = OutputFile::create(&export.dir, trace_paths.first().map(PathBuf::as_path))?;
    builder
        .write(&comments, &mut file)
        .map_err(|e| Error::Output {
            path: export.dir.clone(),
            action: "write",
            error: e,
        })?;
    file.commit()?;
    Ok((
        ExportedProfile {
            traces: trace_paths.len(),
            with_cpu,
        },
        warnings,
    ))
}

#[derive(clap::Args, Debug)]
pub struct ExportArgs {
    /// The traces of the run (each a process), or a TI dump or NITRO function cost buffer with
    /// --exe and --ticks-per-second.
    #[arg(required = true, value_name = "TRACE")]
    pub traces: Vec<PathBuf>,
    /// The dataset's directory (created if missing); with --format=pprof, the profile's file.
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// The table format.
    #[arg(long, value_enum, default_value_t = ExportFormatArg::Parquet)]
    pub format: ExportFormatArg,
    /// The run's id, its partition: run=ID. Default: the earliest trace's start (UTC) and
    /// pid, e.g. 20261126T013000Z-4242. With --format=pprof: a `run` label, if given.
    #[arg(long, value_name = "ID")]
    pub run: Option<String>,
    /// The host column. Default: this machine's host name. With --format=pprof: a `host`
    /// label, if given.
    #[arg(long, value_name = "NAME")]
    pub host: Option<String>,
    /// Raw times: do not subtract the hooks' own time (which the runtime measured at start).
    #[arg(long)]
    pub no_compensation: bool,
    /// Take symbols from this executable instead of the path recorded in the trace.
    #[arg(long, value_name = "ELF")]
    pub exe: Option<PathBuf>,
    /// The counter's rate of a trace that does not record one (a TI or NITRO dump), Hz.
    #[arg(long, value_name = "HZ")]
    pub ticks_per_second: Option<u64>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum ExportFormatArg {
    /// Apache Parquet, snappy-compressed, Hive-partitioned by run.
    Parquet,
    /// A gzipped pprof profile.proto (-o is the file): one sample per call path and
    /// thread, calls/count, cpu/nanoseconds (where switches were recorded), wall/nanoseconds.
    Pprof,
}

/// `hookprof export --help`'s text after the options: how to query what it writes.
pub const EXPORT_AFTER_HELP: &str = "\
DuckDB: SELECT function, sum(exclusive_ns) FROM read_parquet('DIR/calls/*/*.parquet',
        hive_partitioning = true) GROUP BY ALL ORDER BY 2 DESC LIMIT 10;
pprof: hookprof export --format=pprof prog.*.hktrace -o prog.pb.gz; go tool pprof -top prog.pb.gz
Schema (version 1), the questions it answers, Spark SQL and pprof: docs/export.md.";
