//! `hookprof`: the command line over the hookprof library. Parses arguments, calls the
//! library, prints warnings and errors. Exit codes: 0 success, 1 error, 2 usage error.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{CommandFactory, Parser, Subcommand};

mod install_docs;

use hookprof::commands::attach::{AttachArgs, DetachArgs};
use hookprof::commands::callgraph::{callgraph_file, CallgraphArgs};
use hookprof::commands::callgrind::CallgrindViewArgs;
use hookprof::commands::coredump::CoreArgs;
use hookprof::commands::diff::{DiffArgs, DiffFormatArg};
use hookprof::commands::export::{ExportArgs, ExportFormatArg};
use hookprof::commands::flame::{FlameArgs, FlameFormat, FlameFormatArg, FlameOptions};
use hookprof::commands::gmon::GmonArgs;
use hookprof::commands::gprof::GprofArgs;
use hookprof::commands::info::InfoArgs;
use hookprof::commands::nitro::NitroArgs;
use hookprof::commands::pfp::PfpArgs;
use hookprof::commands::record::RecordArgs;
use hookprof::commands::replay::ReplayArgs;
use hookprof::commands::report::{ReportArgs, ReportOptions};
use hookprof::commands::speedscope::SpeedscopeArgs;
use hookprof::commands::ti::TiArgs;
use hookprof::commands::timeline::TimelineArgs;
use hookprof::commands::top::TopArgs;
use hookprof::commands::tui::TuiArgs;
use hookprof::commands::view_options::{ViewArgs, ViewOptions, VIEW_HELP};
use hookprof::commands::{export, nitro, report, ti};
use hookprof::input::trace_file::TraceFile;
use hookprof::output::file::{maybe_gzip, same_file};
use hookprof::output::progress::ProgressBar;

/// Reads the .hktrace files written by programs built with `hookcc --trace` and reports
/// where the time went.
#[derive(Parser, Debug)]
#[command(name = "hookprof", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Flat profile: calls, self and total time per function.
    ///
    /// One row per function. The text (the default) starts with a line saying how the rows
    /// are sorted and what the times are, then: the share of the sort key (self%, sampled%,
    /// total% or calls%), self time (in the function itself, not its callees), total time
    /// (with its callees; only the outermost frame of a recursive function counts), calls,
    /// time per call (total / calls), and the function's name last, its long template and
    /// generic arguments elided and cut to fit the terminal's width (100 columns when not
    /// a terminal; --full-names keeps names whole). Times are in human units (456 ns,
    /// 1.23 ms), or clock ticks when the trace has no clock rate. By default the rows are in
    /// order of sampled self time when the trace has 1000 samples or more in functions (then
    /// a "sampled" column shows it beside the traced times), else of self time. The other
    /// columns on request: --columns=LIST, --wide. A summary ends the text: counts, lost
    /// records, the hooks' time subtracted, and what the trace lacks and why. CSV and JSON
    /// have every column, raw nanoseconds (or ticks), with stable names. Function names come
    /// from the ELF symbol tables of the traced executable and its shared libraries; unknown
    /// addresses are shown as 0x<hex>.
    #[command(after_help = report::REPORT_AFTER_HELP)]
    Report(ReportArgs),
    /// Describe a trace: header, executable, modules, threads and record counts.
    ///
    /// Prints the header fields, whether the runtime finished the file, the executable and
    /// loaded modules with their address ranges, every thread with its name and record
    /// counts, lost records, and the entries and exits that did not pair up.
    Info(InfoArgs),
    /// Dynamic Call Graph: per thread, each function with its parents and children.
    ///
    /// The gprof-like format of TI's Dynamic Call Graph: every function of a thread once as
    /// the function of interest ([index], total exclusive cycles, calls), its immediate
    /// parents above it and its immediate children below it, each with the exclusive cycles
    /// and the calls on that arc (n/total); <spontaneous> marks a thread's roots. Cycles are
    /// the trace's clock ticks.
    ///
    /// TRACE may also be a TI dump (hookcc --hook-runtime=ti; binary or CCS hex, given with
    /// --exe): one section per task, cycles counted while the task ran (docs/ti-post.md).
    Callgraph(CallgraphArgs),
    /// Decode a memory dump of a NITRO profiler buffer into the text the program prints.
    ///
    /// DUMP is the raw memory of a buffer given to OS_InitCallTrace, OS_InitFunctionCost or
    /// OS_InitStatistics by a program built with `hookcc -profile
    /// --hook-runtime=calltrace|functioncost` (a debugger's memory save, or the program's own
    /// fwrite of the buffer). Prints what OS_DumpCallTrace or OS_DumpStatistics would print;
    /// a measurement buffer prints what OS_CalcStatistics into an empty statistics buffer and
    /// OS_DumpStatistics would. Names are read from the program's ELF file (--exe).
    #[command(after_help = nitro::NITRO_AFTER_HELP)]
    Nitro(NitroArgs),
    /// Print the measurement lines of TI profile points from a dump of pfpInst.
    ///
    /// DUMP is the memory of pfpInst in a program linked with `hookcc --hook-runtime=pfp` (a
    /// debugger's save of &pfpInst, sizeof pfpInst bytes, or the program's own fwrite). Prints
    /// what the program's pfpPrintStats() prints: "ID: 00, n=1000, C=49265, Cmin=49, Cmax=314,
    /// C-avg=49.265, Avg-T=6.56867e-05ms" per point with measurements. The ELF file gives the
    /// byte order.
    #[command(after_help = "See docs/pfp.md.")]
    Pfp(PfpArgs),
    /// Write the gmon.out GNU gprof reads from a dump of a program's gprof data.
    ///
    /// DUMP is hookcc_gprof_data_size bytes from hookcc_gprof_data in a program linked with
    /// `hookcc --hook-runtime=gprof` (a bare-metal target's debugger save: scripts/gprof.gdb).
    /// A hosted program writes gmon.out itself at exit. Then: `gprof ELF gmon.out`.
    #[command(after_help = "See docs/gprof.md.")]
    Gprof(GprofArgs),
    /// TI's post tool: call list and profile CSVs from a TI dump (hookcc --hook-runtime=ti).
    ///
    /// DUMP is the record buffer ProfileData: a binary dump (PREFIX.bin, a debugger's binary
    /// save) or CCS "32-bit Hex - C Style" text (PREFIX.dat), detected; a wrapped circular
    /// buffer is read from its oldest record. The ELF file gives the pointer size, byte order
    /// and names. Writes PREFIX_call_list.csv and PREFIX_profile.csv and prints the status.
    #[command(after_help = ti::TI_AFTER_HELP)]
    Ti(TiArgs),
    /// Record a bare-metal target's stream while it runs, into a trace.
    ///
    /// The firmware streams with HOOKCC_TRACE_STREAM_BUFFER (make HOOKS=stream): the hooks
    /// write a few bytes per event into a SEGGER RTT up-buffer in RAM (`_SEGGER_RTT`). With
    /// --gdb, hookprof reads it through a GDB server (qemu -gdb, OpenOCD :3333, J-Link GDB
    /// Server :2331, pyOCD :3333): every poll interval it halts the target, reads the new
    /// bytes, frees them and lets the target run. With --tcp it reads the bytes an RTT server
    /// gives (OpenOCD's `rtt server start`, J-Link's RTT telnet port 19021, probe-rs, pyOCD);
    /// with --serial, from a UART device, FIFO or file. Ends when the target exits, the
    /// connection closes, the stream's end has been read, or on Ctrl-C; the trace is finished
    /// in every case. Records the target had to drop are counted where they were dropped.
    /// See docs/baremetal.md, "Streaming".
    Record(RecordArgs),
    /// Attach to a running traced program: record for a while, into a trace every view reads.
    ///
    /// The program is one built with `hookcc --trace`, started with tracing off
    /// (HOOKCC_DISABLE=1) or in ring or profile mode (HOOKCC_MODE), by this user (root may
    /// attach to anyone's). Through its control channel (a Unix socket of its own runtime,
    /// docs/recording.md, "Attaching and watching live") hookprof has it open the trace file
    /// -o names, switch recording on, and after --duration or Ctrl-C switch it off and finish
    /// the file. With --stream the records come to hookprof through a FIFO and hookprof writes
    /// the trace. In ring or profile mode it takes a snapshot at the end instead and copies the
    /// program's file. `hookprof ps` lists the programs there are.
    Attach(AttachArgs),
    /// Stop a recording `hookprof attach` left on (its client was killed): finish the file.
    Detach(DetachArgs),
    /// List the running traced programs this user may attach to.
    Ps,
    /// A live view of a running traced program (or of a trace being written, --follow, or of a
    /// firmware's stream, --gdb/--tcp/--serial): its functions by self time over the last
    /// seconds, calls a second, records lost, each thread's or task's open functions.
    ///
    /// As `attach` (the program started with HOOKCC_DISABLE=1, default mode), but in windows:
    /// every --interval the program finishes its window's file and goes on in the next, and
    /// the view adds up the last --windows of them. A firmware's stream is read as `hookprof
    /// record` reads it and profiled as it comes (the target's clock, each task's CPU time).
    /// Keys: s, t, c, n sort by self time, total time, calls, name; / filters by name (Enter
    /// ends, Esc clears); f freezes; q quits. Recording is switched off at the end.
    Top(TopArgs),
    /// Browse a trace's calls in the terminal: the call tree beside the flat report.
    ///
    /// The tree has the flame graph's numbers (total and self time of each function on each
    /// path). Keys: up/down (j/k) move, right (l) expands, left (h) folds, Enter toggles, /
    /// searches by name (Enter jumps, n to the next), c shows the selected function's callers
    /// (and back to the call tree), q quits. The report is beside the tree from 140 columns.
    Tui(TuiArgs),
    /// Timeline: every call as Chrome trace-event JSON (or a Perfetto trace), for Perfetto UI.
    ///
    /// One track per thread (named from the trace's THREAD chunks), a B event at every shown
    /// call's entry (name, depth, address) and an E event at its exit; ts in microseconds
    /// since the first record. --format=perfetto writes the same slices as a Perfetto
    /// protobuf trace, a quarter of the size, for traces too big for a JSON viewer. Written
    /// as the trace is replayed: memory stays flat whatever the trace's length. Open the file
    /// at https://ui.perfetto.dev ("Open trace file").
    #[command(after_help = VIEW_HELP)]
    Timeline(TimelineArgs),
    /// Flame graph: folded stacks (--format=folded) or an SVG flame graph (--format=svg).
    ///
    /// Each distinct call stack with the time spent in its last function itself (exclusive
    /// time, nanoseconds), all threads together unless --per-thread. Folded lines
    /// (`main;a;b 1234`) are what flamegraph.pl, inferno-flamegraph and speedscope read;
    /// the SVG is drawn by the inferno crate. Stacks deeper than 512 frames are cut: the
    /// deeper frames' time goes to one `[deeper than 512 frames]` frame (docs/views.md).
    #[command(after_help = VIEW_HELP)]
    Flame(FlameArgs),
    /// Callgrind profile for callgrind_annotate and KCachegrind.
    ///
    /// Exclusive time per function and the calls and inclusive time of every caller→callee
    /// arc, in nanoseconds (event "ns"), all threads together. With DWARF in the executable
    /// (-g), each function is at the file and line of its entry point (its calls too: the
    /// trace has no call sites); without, at line 0 of file ???. Read it with
    /// `callgrind_annotate FILE` (--inclusive=yes for inclusive times, --tree=calling for
    /// call counts) or `kcachegrind FILE`.
    #[command(after_help = VIEW_HELP)]
    Callgrind(CallgrindViewArgs),
    /// Call tree: every call in order, indented, with its duration and thread (uftrace
    /// replay style).
    ///
    /// A call with no shown callee is one line `name();` with its duration; others open with
    /// `name() {` and close with `} /* name */` and their duration. Threads are numbered as
    /// in `hookprof info`; lines of several threads interleave in trace order. Streamed.
    #[command(after_help = VIEW_HELP)]
    Replay(ReplayArgs),
    /// speedscope profile: one evented profile per thread, for https://www.speedscope.app.
    ///
    /// Every shown call opens (O) and closes (C) its frame, at nanoseconds since the first
    /// record. The trace is replayed once per thread so that each thread's events come
    /// together while memory stays flat.
    #[command(after_help = VIEW_HELP)]
    Speedscope(SpeedscopeArgs),
    /// Compare two traces: calls and times per function, A beside B, with the changes.
    ///
    /// Functions are matched by name (addresses change between builds), all threads
    /// together, and sorted by the largest change of exclusive time. `change` is the
    /// relative change of exclusive time (new: only in B; gone: only in A). Times in ns.
    Diff(DiffArgs),
    /// Export traces as Parquet tables for DuckDB, Spark, Trino, ClickHouse or pandas.
    ///
    /// Writes two tables of one run into the dataset directory DIR, Hive-partitioned by run:
    /// DIR/calls/run=RUN/PID.parquet (one row per call: host, pid, thread, function, module,
    /// file:line where DWARF has it, depth, call and parent ids, start on the wall clock,
    /// duration and exclusive time in ns) and DIR/functions/run=RUN/PID.parquet (calls and
    /// times per thread and function). Every trace given is a process of the run; export
    /// each run into the same DIR and query them as one dataset. Existing files are never
    /// overwritten. With --format=pprof, one gzipped profile.proto FILE of all the traces
    /// for `go tool pprof`, Pyroscope or Perfetto (a sample per call path and thread).
    #[command(after_help = export::EXPORT_AFTER_HELP)]
    Export(ExportArgs),
    /// gmon.out for GNU gprof: call counts per arc and a histogram of exclusive times.
    ///
    /// Read it with `gprof PROGRAM gmon.out` (the traced build). Arcs carry the call counts
    /// the trace saw; the histogram is synthesized from exclusive times (each function's time
    /// in the bin at its entry point, at a sampling rate chosen so that the largest fits), so
    /// gprof's "self seconds" are the trace's exclusive times. Only the executable's
    /// functions; all threads together. See docs/views.md.
    Gmon(GmonArgs),
    /// A trace of the records a program still held in memory, read out of its core file.
    ///
    /// For a program built with `hookcc --trace` that died without writing them: under
    /// HOOKCC_MODE=ring its threads' last calls (killed by SIGKILL, SIGQUIT's core dump, or a
    /// hang caught with `gcore`), in the default mode the records since each thread's last
    /// full buffer. Every view reads the trace it writes. See docs/recording.md.
    Core(CoreArgs),
    /// Shell completions: `hookprof completions bash > ~/.local/share/bash-completion/completions/hookprof`.
    ///
    /// For bash, zsh, fish, elvish and PowerShell, generated from this program's own options.
    Completions(install_docs::CompletionsArgs),
    /// The manual pages in roff: `hookprof man | man -l -`, or `hookprof man -o DIR`.
    ///
    /// Without -o, hookprof(1) on standard output. With -o DIR: hookprof.1 and one page per
    /// subcommand (hookprof-report.1, …) in DIR, for `man -M` or a man1 directory.
    Man(install_docs::ManArgs),
}

fn gmon(args: &GmonArgs) -> Result<()> {
    check_output(&args.trace, Some(&args.output))?;
    let mut bytes = Vec::new();
    let (warnings, _rate) = hookprof::commands::gmon::gmon_file(&args.trace, &mut bytes)?;
    emit(&warnings, &bytes, &args.trace, Some(&args.output))
}

fn core(args: &CoreArgs) -> Result<()> {
    let output = args.output.clone().unwrap_or_else(|| {
        let mut name = args.core.clone().into_os_string();
        name.push(".hktrace");
        PathBuf::from(name)
    });
    check_output(&args.core, Some(&output))?;
    check_output(&args.program, Some(&output))?;
    let s = hookprof::input::coredump::core_to_trace(
        &args.program,
        &args.core,
        &output,
        args.ticks_per_second,
    )?;
    eprintln!(
        "hookprof: {}: {} records of {} threads{}{}",
        output.display(),
        s.records,
        s.threads,
        if s.ring {
            format!(
                " (HOOKCC_MODE=ring: {} records before them no longer in the rings)",
                s.dropped
            )
        } else {
            " (the records not yet written to the program's trace)".to_string()
        },
        if s.rate_measured {
            format!(
                "; clock rate {} ticks/s measured on this machine (--ticks-per-second \
                 otherwise)",
                s.ticks_per_second
            )
        } else {
            String::new()
        }
    );
    Ok(())
}

fn export(args: &ExportArgs) -> Result<()> {
    let options = ViewOptions {
        exe: args.exe.clone(),
        ..ViewOptions::default()
    };
    let export_options = hookprof::commands::export::ExportOptions {
        dir: args.output.clone(),
        run: args.run.clone(),
        host: args.host.clone(),
        ticks_per_second: args.ticks_per_second,
    };
    if let ExportFormatArg::Pprof = args.format {
        let (exported, warnings) =
            hookprof::commands::export::export_pprof(&args.traces, &options, &export_options)?;
        for w in &warnings {
            warn(w);
        }
        eprintln!(
            "hookprof: {}: a pprof profile of {} trace(s), sample types calls/count, {}wall/nanoseconds",
            args.output.display(),
            exported.traces,
            if exported.with_cpu { "cpu/nanoseconds, " } else { "" }
        );
        return Ok(());
    }
    let (exported, warnings) =
        hookprof::commands::export::export_files(&args.traces, &options, &export_options)?;
    for w in &warnings {
        warn(w);
    }
    for (calls, call_rows, functions, function_rows) in &exported.files {
        eprintln!(
            "hookprof: {}: {call_rows} calls; {}: {function_rows} functions",
            calls.display(),
            functions.display()
        );
    }
    println!("run={}", exported.run);
    Ok(())
}

/// Exit status of `diff --fail-if` when a rule is broken (1 is an error, 2 a usage error).
const EXIT_REGRESSION: u8 = 3;

fn diff(args: &DiffArgs) -> Result<ExitCode> {
    check_output(&args.a, args.output.as_ref())?;
    check_output(&args.b, args.output.as_ref())?;
    let format = if !args.fail_if.is_empty() {
        if !matches!(args.format, DiffFormatArg::Text | DiffFormatArg::Markdown) {
            anyhow::bail!("--fail-if prints its verdict as Markdown: leave out --format");
        }
        hookprof::commands::diff::DiffFormat::Gate {
            rules: &args.fail_if,
            min_time_ns: args.min_time.unwrap_or(0),
        }
    } else {
        match args.format {
            DiffFormatArg::Text => hookprof::commands::diff::DiffFormat::Text,
            DiffFormatArg::Csv => hookprof::commands::diff::DiffFormat::Csv,
            DiffFormatArg::Markdown => hookprof::commands::diff::DiffFormat::Markdown,
        }
    };
    let out = hookprof::commands::diff::diff_files(
        &args.a,
        &args.b,
        [args.exe_a.as_deref(), args.exe_b.as_deref()],
        format,
        args.top,
        args.time.map(Into::into),
    )?;
    emit(&out.warnings, &out.bytes, &args.a, args.output.as_ref())?;
    Ok(if out.breaches > 0 {
        ExitCode::from(EXIT_REGRESSION)
    } else {
        ExitCode::SUCCESS
    })
}

/// The output goes through gzip: its name ends in `.gz`.
fn gzipped(view: &ViewArgs) -> bool {
    view.output
        .as_deref()
        .and_then(|p| p.file_name())
        .is_some_and(|n| n.to_string_lossy().ends_with(".gz"))
}

fn warn(message: &str) {
    eprintln!("hookprof: warning: {message}");
}

fn note(message: &str) {
    eprintln!("hookprof: note: {message}");
}

/// Names the traces a view puts side by side (`flame`, `timeline` with MORE traces):
/// [`hookprof::commands::several`].
fn note_side_by_side(traces: &[PathBuf]) -> Result<()> {
    use hookprof::commands::several::{several_traces, Combine};
    if let Some(n) = several_traces(traces, Combine::SideBySide)? {
        note(&n);
    }
    Ok(())
}

/// Refuses an output path that is the input trace (under any name).
fn check_output(trace: &std::path::Path, output: Option<&PathBuf>) -> Result<()> {
    if let Some(output) = output {
        if same_file(trace, output) {
            bail!(hookprof::input::error::Error::OutputIsInput {
                path: output.clone()
            });
        }
    }
    Ok(())
}

/// Prints the warnings, then writes `bytes` to `output` (by [`hookprof::output::file`]'s policy,
/// with the mode of `input`) or standard output.
fn emit(
    warnings: &[String],
    bytes: &[u8],
    input: &std::path::Path,
    output: Option<&PathBuf>,
) -> Result<()> {
    for w in warnings {
        warn(w);
    }
    match output {
        Some(path) => hookprof::output::file::write_file(path, Some(input), bytes)?,
        None => {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(bytes)
                .and_then(|()| stdout.flush())
                .context("cannot write the report to standard output")?;
        }
    }
    Ok(())
}

fn report(args: &ReportArgs) -> Result<()> {
    check_output(&args.trace, args.output.as_ref())?;
    for trace in &args.more {
        check_output(trace, args.output.as_ref())?;
    }
    let traces: Vec<PathBuf> = std::iter::once(&args.trace)
        .chain(&args.more)
        .cloned()
        .collect();
    let out = hookprof::commands::report::report_files(&traces, &ReportOptions::from(args))?;
    for n in &out.notes {
        note(n);
    }
    emit(&out.warnings, &out.bytes, &args.trace, args.output.as_ref())
}

fn callgraph(args: &CallgraphArgs) -> Result<()> {
    check_output(&args.trace, args.output.as_ref())?;
    let (bytes, warnings) = if hookprof::input::kind(&args.trace)? == hookprof::input::Kind::Trace {
        if args.all_symbols || args.profile_data.is_some() || args.record_words.is_some() {
            bail!(
                "--all-symbols, --profile-data and --record-words are for TI dumps, and {} is a .hktrace file",
                args.trace.display()
            );
        }
        callgraph_file(&args.trace, args.exe.as_deref())?
    } else {
        let Some(exe) = &args.exe else {
            bail!(
                "{}: not a .hktrace file (it does not start with \"HKTRACE\"); to read it as a \
                 TI dump (hookcc --hook-runtime=ti), give the program with --exe",
                args.trace.display()
            );
        };
        let options = hookprof::input::ti_calls::Options {
            exe: exe.clone(),
            all_symbols: args.all_symbols,
            profile_data: args.profile_data,
            record_words: args.record_words,
        };
        hookprof::commands::ti::callgraph_file(&args.trace, &options)?
    };
    emit(&warnings, &bytes, &args.trace, args.output.as_ref())
}

/// Set by SIGINT while `hookprof record` runs: finish the trace and stop.
static RECORD_STOP: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[cfg(unix)]
extern "C" fn record_on_sigint(_: libc::c_int) {
    RECORD_STOP.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Ctrl-C sets RECORD_STOP (`record`, `attach`).
fn stop_on_sigint() {
    #[cfg(unix)]
    // SAFETY: the handler only stores to an atomic; no SA_RESTART, so that a blocking read
    // returns and the loop sees the flag.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = record_on_sigint as *const () as usize;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut());
    }
}

fn attach(args: &AttachArgs) -> Result<()> {
    use hookprof::commands::attach::{attach, request, AttachOptions};
    let output = match &args.output {
        Some(path) => path.clone(),
        None => {
            let status = request(args.pid, "status")?;
            let program = status.get("program").unwrap_or("program").to_string();
            PathBuf::from(format!("{program}.{}.attach.hktrace", args.pid))
        }
    };
    stop_on_sigint();
    let options = AttachOptions {
        pid: args.pid,
        duration: args.duration.map(std::time::Duration::from_nanos),
        functions: args.functions.clone(),
        output,
        stream: args.stream,
        on_started: |path| {
            if path.is_empty() {
                eprintln!("hookprof attach: recording (a snapshot at the end); Ctrl-C stops");
            } else {
                eprintln!("hookprof attach: recording into {path}; Ctrl-C stops");
            }
        },
    };
    let s = attach(&options, &RECORD_STOP)?;
    if s.mode == "trace" || s.mode == "stream" {
        eprintln!(
            "hookprof attach: {} records in {:.2} s; wrote {}",
            s.records,
            s.seconds,
            s.path.display()
        );
    } else {
        eprintln!(
            "hookprof attach: a snapshot of the {} after {:.2} s; wrote {}",
            s.mode,
            s.seconds,
            s.path.display()
        );
    }
    Ok(())
}

fn top(args: &TopArgs) -> Result<()> {
    use hookprof::commands::top::{follow, stream, top, TopOptions};
    stop_on_sigint();
    let temporary = match &args.dir {
        Some(_) => None,
        None if args.pid.is_none() => None,
        None => Some(tempfile::Builder::new().prefix("hookprof-top").tempdir()?),
    };
    let options = TopOptions {
        pid: args.pid.unwrap_or(0),
        interval: std::time::Duration::from_nanos(args.interval.max(1_000_000)),
        windows: args.windows,
        dir: args
            .dir
            .clone()
            .or_else(|| temporary.as_ref().map(|t| t.path().to_path_buf()))
            .unwrap_or_default(),
        rows: args.rows,
        iterations: args.iterations,
    };
    let source = args.stream.source(false)?;
    if let Some(source) = source {
        let poll = std::time::Duration::from_nanos(args.stream.poll_interval);
        return stream(
            &source,
            args.stream.exe.as_deref(),
            poll,
            &options,
            &RECORD_STOP,
        );
    }
    match &args.follow {
        Some(trace) => follow(trace, &options, &RECORD_STOP),
        None => top(&options, &RECORD_STOP),
    }
}

fn record(args: &RecordArgs) -> Result<()> {
    use hookprof::commands::record::Options;
    stop_on_sigint();
    let source = args
        .stream
        .source(args.follow)?
        .context("one of --gdb, --tcp or --serial is needed")?;
    let options = Options {
        output: args.output.clone(),
        poll_interval: std::time::Duration::from_nanos(args.stream.poll_interval),
        progress: !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        exe: args.stream.exe.clone(),
    };
    let summary = hookprof::commands::record::record(&source, &options, &RECORD_STOP)?;
    let s = &summary.counts;
    let firmware = match s.end {
        Some((records, lost)) => format!(
            "; the firmware made {records} records and dropped {lost}{}",
            if records == s.records_kept() + lost + s.overwritten {
                ""
            } else {
                " (they do not add up: records are missing)"
            }
        ),
        None => "; the stream has no end record (the firmware did not end it)".to_string(),
    };
    let firmware = if s.overwritten != 0 {
        format!(
            "; a flight recorder: {} records written over before these{firmware}",
            s.overwritten
        )
    } else {
        firmware
    };
    let polls = match summary.high_water {
        Some((most, size)) => format!(
            "{} polls (the fullest found {most} of the ring's {size} bytes), ",
            summary.polls
        ),
        None => String::new(),
    };
    eprintln!(
        "hookprof record: {} bytes, {} calls' records ({:.2} bytes each), {} task switches, {} \
         tasks created, {} lost ({} places), {polls}{}{firmware}; wrote {}",
        summary.bytes,
        s.calls,
        summary.call_bytes as f64 / s.calls.max(1) as f64,
        s.switches,
        s.created,
        s.lost,
        s.lost_markers,
        summary.ended_by,
        args.output.display()
    );
    if let Some((records, lost)) = s.end {
        if records != s.records_kept() + lost + s.overwritten {
            warn(&format!(
                "the trace holds {} records and the firmware says it dropped {lost} of the \
                 {records} it made: {} are missing without a LOST record (a damaged stream, or \
                 bytes another reader took from the ring)",
                s.records_kept(),
                records.saturating_sub(s.records_kept() + lost + s.overwritten)
            ));
        }
    }
    if summary.trailing_bytes != 0 {
        warn(&format!(
            "the stream ends inside a record ({} bytes after the last whole one)",
            summary.trailing_bytes
        ));
    }
    Ok(())
}

fn ti(args: &TiArgs) -> Result<()> {
    let options = hookprof::input::ti_calls::Options {
        exe: args.exe.clone(),
        all_symbols: args.all_symbols,
        profile_data: args.profile_data,
        record_words: args.record_words,
    };
    let processed = hookprof::commands::ti::process_file(&args.dump, &options)?;
    for w in &processed.warnings {
        warn(w);
    }
    let prefix = args
        .out
        .clone()
        .unwrap_or_else(|| hookprof::commands::ti::default_prefix(&args.dump));
    let [call_list, profile] = processed.write_files(&prefix, &args.dump)?;
    let mut stdout = std::io::stdout().lock();
    write!(
        stdout,
        "{}Wrote {} and {}\nProfile data processing complete.\n",
        processed.status(),
        call_list.display(),
        profile.display()
    )
    .and_then(|()| stdout.flush())
    .context("cannot write to standard output")?;
    Ok(())
}

fn gprof(args: &GprofArgs) -> Result<()> {
    check_output(&args.dump, Some(&args.output))?;
    let (gmon, warnings) = hookprof::commands::gprof::convert_file(&args.dump, &args.exe)?;
    emit(&warnings, &gmon, &args.dump, Some(&args.output))
}

fn pfp(args: &PfpArgs) -> Result<()> {
    check_output(&args.dump, args.output.as_ref())?;
    let text = hookprof::commands::pfp::decode_file(&args.dump, &args.exe)?;
    emit(&[], text.as_bytes(), &args.dump, args.output.as_ref())
}

fn nitro(args: &NitroArgs) -> Result<()> {
    check_output(&args.dump, args.output.as_ref())?;
    let options = hookprof::output::nitro::Options {
        lr: args.lr,
        inclusive: args.inclusive,
    };
    let decoded = hookprof::commands::nitro::decode_file(&args.dump, &args.exe, &options)?;
    emit(
        &decoded.warnings,
        &decoded.text,
        &args.dump,
        args.output.as_ref(),
    )
}

fn info(args: &InfoArgs) -> Result<()> {
    let trace = TraceFile::open(&args.trace)?;
    let summary = trace.summary()?;
    let text = hookprof::output::info::render(&args.trace, &summary);
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .context("cannot write to standard output")?;
    Ok(())
}

/// Runs a view that writes as it goes: to standard output, or to a temporary file beside
/// FILE renamed to FILE once complete, so that an error never leaves a truncated file.
/// The view's trace and the MORE traces after it, none of them the output.
fn with_more(view: &ViewArgs, more: &[PathBuf]) -> Result<Vec<PathBuf>> {
    for trace in more {
        check_output(trace, view.output.as_ref())?;
    }
    Ok(std::iter::once(&view.trace).chain(more).cloned().collect())
}

fn stream_view(
    args: &ViewArgs,
    write: impl FnOnce(
        &ViewOptions,
        &mut dyn Write,
    ) -> Result<Vec<String>, hookprof::input::error::Error>,
) -> Result<()> {
    check_output(&args.trace, args.output.as_ref())?;
    let mut options = ViewOptions::from(args);
    let bar = ProgressBar::new();
    let for_replay = bar.clone();
    options.progress = Some(hookprof::analysis::view::Progress(std::sync::Arc::new(
        move |done, total| for_replay.update(done, total),
    )));
    let result = stream_to_output(args, &options, write);
    bar.finish();
    let warnings = result?;
    for w in &warnings {
        warn(w);
    }
    Ok(())
}

/// The output part of [`stream_view`]: returns the warnings. A file is written by
/// [`hookprof::output::file`]'s policy: complete or not at all.
fn stream_to_output(
    args: &ViewArgs,
    options: &ViewOptions,
    write: impl FnOnce(
        &ViewOptions,
        &mut dyn Write,
    ) -> Result<Vec<String>, hookprof::input::error::Error>,
) -> Result<Vec<String>> {
    let options = options.clone();
    let warnings = match &args.output {
        None => {
            let mut stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            let warnings = write(&options, &mut stdout)?;
            stdout.flush().context("cannot write to standard output")?;
            warnings
        }
        Some(path) => {
            let file = hookprof::output::file::OutputFile::create(path, Some(&args.trace))?;
            let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
            // A view's write error is the output's: name it.
            let warnings = write(&options, &mut out).map_err(|e| match e {
                hookprof::input::error::Error::Write { error } => {
                    hookprof::input::error::Error::Output {
                        path: path.clone(),
                        action: "write",
                        error,
                    }
                }
                other => other,
            })?;
            let file = out
                .into_inner()
                .map_err(|e| e.into_error())
                .with_context(|| format!("{}: cannot write", path.display()))?;
            file.commit()?;
            warnings
        }
    };
    Ok(warnings)
}

/// Refuses a trace a command would read that does not exist, saying why where the program
/// that should have written it can be looked at (`--exe`, or the one the name suggests:
/// `prog` for `prog.*.hktrace`; [`hookprof::input::missing`]). Only names ending in
/// `.hktrace`, or a glob the shell left as it was: a missing TI or NITRO dump is a plain
/// "no such file".
fn check_traces_exist(command: &Command) -> Result<()> {
    let with_exe =
        |traces: Vec<&PathBuf>, exe: &Option<PathBuf>| -> Vec<(PathBuf, Option<PathBuf>)> {
            traces
                .into_iter()
                .map(|t| (t.clone(), exe.clone()))
                .collect()
        };
    let view = |v: &ViewArgs, more: &[PathBuf]| {
        with_exe(std::iter::once(&v.trace).chain(more).collect(), &v.exe)
    };
    let traces = match command {
        Command::Report(a) => with_exe(std::iter::once(&a.trace).chain(&a.more).collect(), &a.exe),
        Command::Info(a) => with_exe(vec![&a.trace], &None),
        Command::Callgraph(a) => with_exe(vec![&a.trace], &a.exe),
        Command::Gmon(a) => with_exe(vec![&a.trace], &None),
        Command::Diff(a) => {
            let mut both = with_exe(vec![&a.a], &a.exe_a);
            both.extend(with_exe(vec![&a.b], &a.exe_b));
            both
        }
        Command::Export(a) => with_exe(a.traces.iter().collect(), &a.exe),
        Command::Timeline(a) => view(&a.view, &a.more),
        Command::Flame(a) => view(&a.view, &a.more),
        Command::Replay(a) => view(&a.view, &[]),
        Command::Callgrind(a) => view(&a.view, &[]),
        Command::Speedscope(a) => view(&a.view, &[]),
        _ => Vec::new(),
    };
    for (trace, exe) in traces {
        let text = trace.to_string_lossy();
        let named_as_trace = text.ends_with(".hktrace") || text.contains(['*', '?', '[']);
        let missing = std::fs::symlink_metadata(&trace)
            .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound);
        if named_as_trace && missing {
            bail!(hookprof::input::missing::no_trace(&trace, exe.as_deref()));
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let raw = match &cli.command {
        Command::Report(args) => args.no_compensation,
        Command::Info(args) => args.no_compensation,
        Command::Callgraph(args) => args.no_compensation,
        Command::Diff(args) => args.no_compensation,
        Command::Export(args) => args.no_compensation,
        Command::Gmon(args) => args.no_compensation,
        Command::Timeline(args) => args.view.no_compensation,
        Command::Replay(args) => args.view.no_compensation,
        Command::Speedscope(args) => args.view.no_compensation,
        Command::Callgrind(args) => args.view.no_compensation,
        Command::Flame(args) => args.view.no_compensation,
        _ => false,
    };
    hookprof::analysis::compensation::set_compensation(!raw);
    if let Err(err) = check_traces_exist(&cli.command) {
        eprintln!("hookprof: error: {err:#}");
        return ExitCode::FAILURE;
    }
    let result = match &cli.command {
        Command::Report(args) => report(args),
        Command::Info(args) => info(args),
        Command::Callgraph(args) => callgraph(args),
        Command::Nitro(args) => nitro(args),
        Command::Pfp(args) => pfp(args),
        Command::Gprof(args) => gprof(args),
        Command::Ti(args) => ti(args),
        Command::Record(args) => record(args),
        Command::Attach(args) => attach(args),
        Command::Top(args) => top(args),
        Command::Tui(args) => hookprof::commands::tui::tui(&args.trace),
        Command::Detach(args) => hookprof::commands::attach::detach(args.pid).map(|reply| {
            let records = reply.get("records").unwrap_or("0");
            match reply.get("path").filter(|p| !p.is_empty()) {
                // A killed `attach --stream`'s FIFO, its name removed: no file to name.
                Some(path) if !std::path::Path::new(path).exists() => eprintln!(
                    "hookprof detach: recording off; the stream's reader ({path}) had gone: \
                     its records since are counted as lost"
                ),
                Some(path) => eprintln!("hookprof detach: {records} records; wrote {path}"),
                None => eprintln!("hookprof detach: recording off (no file was open)"),
            }
        }),
        Command::Ps => hookprof::commands::attach::ps().map(|processes| {
            print!("{}", hookprof::commands::attach::ps_text(&processes));
        }),
        Command::Timeline(args) => {
            let traces = with_more(&args.view, &args.more)
                .and_then(|traces| note_side_by_side(&traces).map(|()| traces));
            traces.and_then(|traces| {
                stream_view(&args.view, |o, out| {
                    let options = ViewOptions {
                        size_limit: args.size.limit(&args.view),
                        ..o.clone()
                    };
                    maybe_gzip(gzipped(&args.view), out, |out| {
                        hookprof::commands::timeline::timeline_files(
                            &traces,
                            &options,
                            args.format(),
                            out,
                        )
                    })
                })
            })
        }
        Command::Replay(args) => stream_view(&args.view, |o, out| {
            hookprof::commands::replay::calltree_file(&args.view.trace, o, out)
        }),
        Command::Diff(args) => match diff(args) {
            Ok(ExitCode::SUCCESS) => Ok(()),
            Ok(code) => return code,
            Err(e) => Err(e),
        },
        Command::Gmon(args) => gmon(args),
        Command::Export(args) => export(args),
        Command::Core(args) => core(args),
        Command::Completions(args) => install_docs::completions(args, Cli::command()),
        Command::Man(args) => install_docs::man(args, Cli::command()),
        Command::Speedscope(args) => stream_view(&args.view, |o, out| {
            let options = ViewOptions {
                size_limit: args.size.limit(&args.view),
                ..o.clone()
            };
            maybe_gzip(gzipped(&args.view), out, |out| {
                hookprof::commands::speedscope::speedscope_file(&args.view.trace, &options, out)
            })
        }),
        Command::Callgrind(args) => stream_view(&args.view, |o, out| {
            hookprof::commands::callgrind::callgrind_file(&args.view.trace, o, out)
        }),
        Command::Flame(args) => {
            let flame = FlameOptions {
                format: match args.format {
                    FlameFormatArg::Folded => FlameFormat::Folded,
                    FlameFormatArg::Svg => FlameFormat::Svg,
                },
                inverted: args.inverted,
                per_thread: args.per_thread,
            };
            if args.inverted && flame.format != FlameFormat::Svg {
                eprintln!(
                    "hookprof: error: --inverted draws an icicle graph: it needs --format=svg"
                );
                return ExitCode::from(2);
            }
            let traces = with_more(&args.view, &args.more)
                .and_then(|traces| note_side_by_side(&traces).map(|()| traces));
            traces.and_then(|traces| {
                stream_view(&args.view, |o, out| {
                    hookprof::commands::flame::flame_files(&traces, o, &flame, out)
                })
            })
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // A closed pipe (`hookprof report t | head`) is not worth an error message.
            if let Some(io) = err.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::BrokenPipe {
                    return ExitCode::SUCCESS;
                }
            }
            if let Some(hookprof::input::error::Error::Write { error }) =
                err.downcast_ref::<hookprof::input::error::Error>()
            {
                if error.kind() == std::io::ErrorKind::BrokenPipe {
                    return ExitCode::SUCCESS;
                }
            }
            eprintln!("hookprof: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
