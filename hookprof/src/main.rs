//! `hookprof`: the command line over the hookprof library. Parses arguments, calls the
//! library, prints warnings and errors. Exit codes: 0 success, 1 error, 2 usage error.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

mod install_docs;

use hookprof::analysis::view::Filter;
use hookprof::commands::callgraph::callgraph_file;
use hookprof::commands::flame::{FlameFormat, FlameOptions};
use hookprof::commands::report::ReportOptions;
use hookprof::commands::timeline::TimelineFormat;
use hookprof::commands::view_options::ViewOptions;
use hookprof::input::trace_file::TraceFile;
use hookprof::output::file::same_file;
use hookprof::output::report::Format;

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
    #[command(after_help = "\
Text columns (--columns=LIST; the name is always last):
  percent            the sort key's share of the whole (self% where the key has none)
  sampled_self       sampled self time (CPU time by the trace's samples; in the default
                     set when the rows are in its order)
  exclusive (self), inclusive (total), calls, avg (per_call), min, max
  p50, p90, p99      with --percentiles
  exclusive_oncpu, exclusive_offcpu, inclusive_oncpu, inclusive_offcpu
                     where the trace has context switches
  sampled_total, sampled_percent
                     where the trace has samples
CSV columns: [thread,]function,calls,inclusive_ns,exclusive_ns,min_ns,max_ns,avg_ns,percent
             [,p50_ns,p90_ns,p99_ns with --percentiles]
             [,inclusive_oncpu_ns,inclusive_offcpu_ns,exclusive_oncpu_ns,exclusive_offcpu_ns
               where the trace has context switches]
             [,sampled_self_ns,sampled_total_ns,sampled_percent where it has samples]
             [,callers with --callers]
  thread    with --per-thread: the THREAD chunk's sequence number (1 = first thread),
            or the Linux TID if the trace has no THREAD chunk for the thread
  min/max   shortest and longest inclusive time of a single call
  avg       mean inclusive time per call
  percent   share of the total exclusive time of all rows (two decimals), also with --top
  p50..p99  percentiles of the inclusive time of single calls (exact up to 1024 calls of a
            function, else within 0.1 %; never outside min..max)
  callers   with --callers: caller×calls;… (<spontaneous>: bottom of a thread's stack)")]
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
    #[command(after_help = "\
The first line of a call trace, OS_DumpCallTrace: lr=..., shows where the program called
OS_DumpCallTrace, which the buffer does not hold: give it with --lr, else it reads lr=????????.
See docs/nitro.md, \"Decoding a dump with hookprof nitro\".")]
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
    #[command(after_help = "\
PREFIX_call_list.csv: Function,EnterTSC,ExitTSC,InclusiveCycles,ExclusiveCycles,Task,Depth
  one line per completed call, in order of completion (exit)
PREFIX_profile.csv: FirstTSC/LastTSC/TotalCycles; Functions ValidCycles and Valid/Total %;
  per function ExecuteTimes,TotalExcluCycle,AverageExcluCycle,MaxExcluCycle,MinExcluCycle,
  AverageIncluCycle,MaxIncluCycle,Percentage, by total exclusive cycles; then the tasks.
Cycles are the dump's timestamp ticks; a task's time switched out is not counted in the
calls it had in progress. See docs/ti-post.md.")]
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
    #[command(after_help = "\
DuckDB: SELECT function, sum(exclusive_ns) FROM read_parquet('DIR/calls/*/*.parquet',
        hive_partitioning = true) GROUP BY ALL ORDER BY 2 DESC LIMIT 10;
pprof: hookprof export --format=pprof prog.*.hktrace -o prog.pb.gz; go tool pprof -top prog.pb.gz
Schema (version 1), the questions it answers, Spark SQL and pprof: docs/export.md.")]
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

#[derive(clap::Args, Debug)]
struct GmonArgs {
    /// The .hktrace file.
    trace: PathBuf,
    /// Raw times: do not subtract the hooks' own time (which the runtime measured at start).
    #[arg(long)]
    no_compensation: bool,
    /// Where to write (never the input trace).
    #[arg(short, long, value_name = "FILE", default_value = "gmon.out")]
    output: PathBuf,
}

fn gmon(args: &GmonArgs) -> Result<()> {
    check_output(&args.trace, Some(&args.output))?;
    let mut bytes = Vec::new();
    let (warnings, _rate) = hookprof::commands::gmon::gmon_file(&args.trace, &mut bytes)?;
    emit(&warnings, &bytes, &args.trace, Some(&args.output))
}

#[derive(clap::Args, Debug)]
struct CoreArgs {
    /// The program (the same executable the core is of: its symbols find the runtime).
    program: PathBuf,
    /// The core file (`core`, `core.PID`, or gcore's).
    core: PathBuf,
    /// Where to write the trace (default: CORE.hktrace).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// The clock's rate, where the target does not fix it (x86's TSC): by default measured on
    /// this machine, right if the core was taken here.
    #[arg(long, value_name = "N")]
    ticks_per_second: Option<u64>,
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

#[derive(clap::Args, Debug)]
struct DiffArgs {
    /// The first (baseline) trace.
    a: PathBuf,
    /// The second trace.
    b: PathBuf,
    /// Raw times: do not subtract the hooks' own time (which the runtime measured at start).
    #[arg(long)]
    no_compensation: bool,
    /// Symbols of A from this executable instead of the path recorded in A.
    #[arg(long, value_name = "ELF")]
    exe_a: Option<PathBuf>,
    /// Symbols of B from this executable instead of the path recorded in B.
    #[arg(long, value_name = "ELF")]
    exe_b: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DiffFormatArg::Text)]
    format: DiffFormatArg,
    /// Only the N largest changes.
    #[arg(long, value_name = "N")]
    top: Option<usize>,
    /// The regression gate: exit with status 3 when a function's METRIC grew by more than
    /// LIMIT from A to B (`exclusive > +10%`, `calls > +1000`, `inclusive > +2ms`; METRIC is
    /// calls, exclusive or inclusive). Repeatable. Prints the verdict and the breaches as
    /// Markdown, for a CI job to post.
    #[arg(long = "fail-if", value_name = "RULE", value_parser = parse_rule)]
    fail_if: Vec<hookprof::output::report::diff::Rule>,
    /// With --fail-if: judge only functions whose time (the rule's, or their inclusive time
    /// for `calls`) reaches DURATION in A or B (e.g. 1ms): shorter ones are noise.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "fail_if")]
    min_time: Option<u64>,
    /// Compare CPU time (only the time the threads ran, from the traces' context switches) or
    /// wall time. Default: wall, except that --fail-if judges CPU time when both traces have
    /// context switches (a busy machine's waiting is not a regression); its verdict says which.
    #[arg(long, value_enum)]
    time: Option<TimeArg>,
    /// Write to FILE instead of standard output (never an input trace).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

fn parse_rule(text: &str) -> Result<hookprof::output::report::diff::Rule, String> {
    text.parse()
}

#[derive(clap::Args, Debug)]
struct ExportArgs {
    /// The traces of the run (each a process), or a TI dump or NITRO function cost buffer with
    /// --exe and --ticks-per-second.
    #[arg(required = true, value_name = "TRACE")]
    traces: Vec<PathBuf>,
    /// The dataset's directory (created if missing); with --format=pprof, the profile's file.
    #[arg(short, long, value_name = "DIR")]
    output: PathBuf,
    /// The table format.
    #[arg(long, value_enum, default_value_t = ExportFormatArg::Parquet)]
    format: ExportFormatArg,
    /// The run's id, its partition: run=ID. Default: the earliest trace's start (UTC) and
    /// pid, e.g. 20261126T013000Z-4242. With --format=pprof: a `run` label, if given.
    #[arg(long, value_name = "ID")]
    run: Option<String>,
    /// The host column. Default: this machine's host name. With --format=pprof: a `host`
    /// label, if given.
    #[arg(long, value_name = "NAME")]
    host: Option<String>,
    /// Raw times: do not subtract the hooks' own time (which the runtime measured at start).
    #[arg(long)]
    no_compensation: bool,
    /// Take symbols from this executable instead of the path recorded in the trace.
    #[arg(long, value_name = "ELF")]
    exe: Option<PathBuf>,
    /// The counter's rate of a trace that does not record one (a TI or NITRO dump), Hz.
    #[arg(long, value_name = "HZ")]
    ticks_per_second: Option<u64>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ExportFormatArg {
    /// Apache Parquet, snappy-compressed, Hive-partitioned by run.
    Parquet,
    /// A gzipped pprof profile.proto (-o is the file): one sample per call path and
    /// thread, calls/count, cpu/nanoseconds (where switches were recorded), wall/nanoseconds.
    Pprof,
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

#[derive(Clone, Copy, Debug, ValueEnum)]
enum DiffFormatArg {
    /// Aligned columns and a total line.
    Text,
    /// Comma-separated values with a header row (with inclusive deltas).
    Csv,
    /// A Markdown table (the format of --fail-if's verdict).
    Markdown,
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

const VIEW_HELP: &str = "\
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
struct ViewArgs {
    /// The .hktrace file, or a TI dump (PREFIX.bin or PREFIX.dat) or a NITRO function cost
    /// buffer (both with --exe).
    trace: PathBuf,
    /// Raw times: do not subtract the hooks' own time (which the runtime measured at start).
    #[arg(long)]
    no_compensation: bool,
    /// Take symbols from this executable instead of the path recorded in the trace (required
    /// for a TI dump or a NITRO buffer: the program that wrote it).
    #[arg(long, value_name = "ELF")]
    exe: Option<PathBuf>,
    /// Write to FILE instead of standard output (never the input trace).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Only calls of functions matching GLOB, and the calls inside them (repeatable).
    #[arg(long = "function", value_name = "GLOB", value_parser = Filter::pattern)]
    functions: Vec<glob::Pattern>,
    /// Hide functions matching GLOB and the calls inside them (repeatable).
    #[arg(long, value_name = "GLOB", value_parser = Filter::pattern)]
    exclude: Vec<glob::Pattern>,
    /// Only this thread: its number from `hookprof info`, or its TID (repeatable).
    #[arg(long = "thread", value_name = "N")]
    threads: Vec<u64>,
    /// At most N levels of shown calls (1 = only the outermost).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    depth: Option<u64>,
    /// Hide calls shorter than this: a number with its unit, ns, us, ms or s (`0` alone
    /// needs none).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    min_duration: Option<u64>,
    /// Only calls starting in START..END, times since the first record (e.g. 10ms..20ms,
    /// 2s.., ..500us).
    #[arg(long, value_name = "START..END", value_parser = parse_time_range)]
    time_range: Option<(u64, u64)>,
    /// cpu: count only the time each thread ran (the trace's context switches; refused for a
    /// trace without them). The timeline keeps the wall clock and draws each switched-out
    /// interval as a "switched out" slice inside the call that was open. See docs/views.md.
    #[arg(long, value_enum, default_value_t = TimeArg::Wall)]
    time: TimeArg,
}

/// `--time`: which time the views count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum TimeArg {
    /// The wall clock: from a call's entry to its exit, running or waiting.
    Wall,
    /// Only the time the thread ran: switched-out time (blocked, preempted) left out.
    Cpu,
}

impl From<TimeArg> for hookprof::analysis::replay::TimeBasis {
    fn from(t: TimeArg) -> Self {
        match t {
            TimeArg::Wall => Self::Wall,
            TimeArg::Cpu => Self::Cpu,
        }
    }
}

/// `START..END` with either side optional, each a duration as [`parse_duration`] takes it.
fn parse_time_range(text: &str) -> Result<(u64, u64), String> {
    let Some((start, end)) = text.split_once("..") else {
        return Err(format!(
            "{text:?} is not a time range such as 10ms..20ms, 2s.. or ..500us"
        ));
    };
    let start = if start.trim().is_empty() {
        0
    } else {
        parse_duration(start)?
    };
    let end = if end.trim().is_empty() {
        u64::MAX
    } else {
        parse_duration(end)?
    };
    if end <= start {
        return Err(format!("{text:?}: the range ends before it starts"));
    }
    Ok((start, end))
}

/// A progress bar on standard error, shown only once a replay has taken more than a second
/// and only when standard error is a terminal.
struct ProgressBar {
    bar: indicatif::ProgressBar,
    started: std::time::Instant,
}

impl ProgressBar {
    fn new() -> std::sync::Arc<ProgressBar> {
        std::sync::Arc::new(ProgressBar {
            bar: indicatif::ProgressBar::hidden(),
            started: std::time::Instant::now(),
        })
    }

    fn update(&self, done: u64, total: u64) {
        if self.bar.is_hidden()
            && self.started.elapsed() > std::time::Duration::from_secs(1)
            && std::io::IsTerminal::is_terminal(&std::io::stderr())
        {
            self.bar
                .set_draw_target(indicatif::ProgressDrawTarget::stderr());
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "{spinner} replaying {human_pos}/{human_len} records, {eta} left {wide_bar}",
            ) {
                self.bar.set_style(style);
            }
        }
        self.bar.set_length(total.max(done));
        self.bar.set_position(done);
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
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

/// A size in bytes, with an optional unit: K, M, G, T (powers of 1024; `B` or `iB` may follow).
fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let unit = unit.trim();
    let unit = unit
        .strip_suffix("iB")
        .or_else(|| unit.strip_suffix('B'))
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(unit);
    let shift = match unit {
        "" => 0,
        "k" | "K" => 10,
        "m" | "M" => 20,
        "g" | "G" => 30,
        "t" | "T" => 40,
        other => {
            return Err(format!(
                "{text:?}: unknown unit {other:?} (use K, M, G or T)"
            ))
        }
    };
    let value: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a size such as 512M, 2G or 1000000"))?;
    value
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("{text:?} is too large"))
}

/// `--size-limit` of the timeline and speedscope views.
#[derive(clap::Args, Debug)]
struct SizeLimitArgs {
    /// Above this output size (estimated from the records), an unfiltered view leaves out
    /// calls shorter than 1us and says so; 0: never (K, M, G; a bare number is bytes).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "512M")]
    size_limit: u64,
}

impl SizeLimitArgs {
    /// What the library takes: none when the user chose a minimum duration, or 0.
    fn limit(&self, view: &ViewArgs) -> Option<u64> {
        (view.min_duration.is_none() && self.size_limit != 0).then_some(self.size_limit)
    }
}

/// A duration with its unit (`ns`, `us`, `ms`, `s`; only `0` without) in nanoseconds.
fn parse_duration(text: &str) -> Result<u64, String> {
    hookprof::analysis::view::parse_duration(text)
}

#[derive(clap::Args, Debug)]
struct TimelineArgs {
    #[command(flatten)]
    view: ViewArgs,
    /// More traces for the same timeline (a fork/exec family, a client and its server, the runs
    /// of a test suite): each its own process, aligned on the wall clock each trace recorded;
    /// the traces are named on stderr.
    #[arg(value_name = "MORE")]
    more: Vec<PathBuf>,
    /// Chrome trace-event JSON, or a Perfetto protobuf trace (a fifth of the size). Default:
    /// perfetto for an output name ending in .pftrace or .perfetto-trace (before any .gz),
    /// else json. An output name ending in .gz is gzip-compressed (both formats).
    #[arg(long, value_enum)]
    format: Option<TimelineFormatArg>,
    #[command(flatten)]
    size: SizeLimitArgs,
}

impl TimelineArgs {
    fn format(&self) -> TimelineFormat {
        let by_name = self.view.output.as_deref().and_then(|path| {
            let name = path.file_name()?.to_str()?;
            let name = name.strip_suffix(".gz").unwrap_or(name);
            (name.ends_with(".pftrace") || name.ends_with(".perfetto-trace"))
                .then_some(TimelineFormat::Perfetto)
        });
        match self.format {
            Some(TimelineFormatArg::Json) => TimelineFormat::Json,
            Some(TimelineFormatArg::Perfetto) => TimelineFormat::Perfetto,
            None => by_name.unwrap_or(TimelineFormat::Json),
        }
    }
}

/// The output goes through gzip: its name ends in `.gz`.
fn gzipped(view: &ViewArgs) -> bool {
    view.output
        .as_deref()
        .and_then(|p| p.file_name())
        .is_some_and(|n| n.to_string_lossy().ends_with(".gz"))
}

/// Runs `write` on `out`, through a gzip encoder when `gzip`.
fn maybe_gzip(
    gzip: bool,
    out: &mut dyn Write,
    write: impl FnOnce(&mut dyn Write) -> Result<Vec<String>, hookprof::input::error::Error>,
) -> Result<Vec<String>, hookprof::input::error::Error> {
    if !gzip {
        return write(out);
    }
    // Level 3: on the timeline's JSON, 95 % of level 6's ratio at three times its speed.
    let mut encoder = flate2::write::GzEncoder::new(out, flate2::Compression::new(3));
    let warnings = write(&mut encoder)?;
    encoder
        .finish()
        .map_err(|error| hookprof::input::error::Error::Write { error })?;
    Ok(warnings)
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum TimelineFormatArg {
    /// Chrome trace-event JSON: Perfetto UI, chrome://tracing, speedscope.
    Json,
    /// Perfetto's protobuf trace format: Perfetto UI, trace_processor.
    Perfetto,
}

#[derive(clap::Args, Debug)]
struct CallgrindViewArgs {
    #[command(flatten)]
    view: ViewArgs,
}

#[derive(clap::Args, Debug)]
struct SpeedscopeArgs {
    #[command(flatten)]
    view: ViewArgs,
    #[command(flatten)]
    size: SizeLimitArgs,
}

#[derive(clap::Args, Debug)]
struct ReplayArgs {
    #[command(flatten)]
    view: ViewArgs,
}

#[derive(clap::Args, Debug)]
struct FlameArgs {
    #[command(flatten)]
    view: ViewArgs,
    /// More traces: each trace's stacks under a `program [pid]` frame of its own (the traces
    /// are named on stderr).
    #[arg(value_name = "MORE")]
    more: Vec<PathBuf>,
    /// Folded stacks (text) or an SVG flame graph.
    #[arg(long, value_enum, default_value_t = FlameFormatArg::Folded)]
    format: FlameFormatArg,
    /// Icicle graph: the outermost calls at the top (SVG).
    #[arg(long)]
    inverted: bool,
    /// Put each thread's stacks under a `thread N` frame.
    #[arg(long)]
    per_thread: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FlameFormatArg {
    /// `frame;frame;… count` lines, sorted.
    Folded,
    /// An SVG flame graph.
    Svg,
}

#[derive(clap::Args, Debug)]
struct TiArgs {
    /// The TI dump: binary or CCS hex.
    dump: PathBuf,
    /// The program's ELF file (the build that wrote the dump).
    #[arg(long, value_name = "ELF")]
    exe: PathBuf,
    /// Names from all symbols (static functions and objects too), not only global ones.
    #[arg(long)]
    all_symbols: bool,
    /// Words per record: 4 (hookcc's TI runtime on a 64-bit target: 64-bit address, TSCL,
    /// TSCH) or 3 (32-bit address: 32-bit targets, and the seed's own hook.c anywhere).
    /// Default: a 32-bit program's dump has 3; a 64-bit program's is read both ways and the
    /// layout whose timestamps run in order is used (an error if the dump cannot tell).
    #[arg(long, value_name = "3|4", value_parser = clap::value_parser!(u8).range(3..=4))]
    record_words: Option<u8>,
    /// Output prefix (default: DUMP without its extension).
    #[arg(long, value_name = "PREFIX")]
    out: Option<PathBuf>,
    /// The run-time address of ProfileData (hex), for a binary dump of a position-independent
    /// executable (HOOKCC_TI_VERBOSE=1 prints it); else the load bias is inferred.
    #[arg(long, value_name = "HEX", value_parser = parse_hex)]
    profile_data: Option<u64>,
}

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["gdb", "tcp", "serial"])))]
struct RecordArgs {
    #[command(flatten)]
    stream: StreamArgs,
    /// With --serial on a regular file: keep reading as it grows, until the stream's end or
    /// Ctrl-C.
    #[arg(long)]
    follow: bool,
    /// The trace to write.
    #[arg(short, long, value_name = "FILE", default_value = "firmware.hktrace")]
    output: PathBuf,
    /// No progress line on stderr.
    #[arg(short, long)]
    quiet: bool,
}

/// Where a firmware's stream comes from (`record`, `top`): docs/baremetal.md, "Streaming".
#[derive(clap::Args, Debug)]
struct StreamArgs {
    /// A firmware's stream through a GDB server at HOST:PORT (qemu's gdb stub, OpenOCD, J-Link
    /// GDB Server, pyOCD); needs --exe, whose `_SEGGER_RTT` symbol locates the ring.
    #[arg(long, value_name = "HOST:PORT", requires = "exe")]
    gdb: Option<String>,
    /// A firmware's stream from an RTT server's (or a UART's) TCP port at HOST:PORT: the
    /// up-buffer's bytes as they come.
    #[arg(long, value_name = "HOST:PORT")]
    tcp: Option<String>,
    /// A firmware's stream from a UART device, a FIFO or a file carrying the up-buffer's bytes.
    #[arg(long, value_name = "PATH")]
    serial: Option<PathBuf>,
    /// The firmware's ELF file (byte order, pointer size, the control block's address,
    /// function names).
    #[arg(long, value_name = "ELF")]
    exe: Option<PathBuf>,
    /// The time between two reads of the ring (--gdb), or between two looks at a file that
    /// has not grown (record's --follow): a number and its unit (10ms, 500us). The ring must
    /// not fill in between: see docs/baremetal.md, "Streaming", for the rate that keeps up.
    #[arg(long, value_name = "DURATION", default_value = "10ms", value_parser = parse_duration)]
    poll_interval: u64,
}

impl StreamArgs {
    /// The source the options name, if any; `follow`: a regular file is followed as it grows.
    fn source(&self, follow: bool) -> Result<Option<hookprof::commands::record::Source>> {
        use hookprof::commands::record::Source;
        Ok(if let Some(address) = &self.gdb {
            Some(Source::Gdb {
                address: address.clone(),
                exe: self.exe.clone().context("--gdb needs --exe")?,
            })
        } else if let Some(address) = &self.tcp {
            Some(Source::Tcp {
                address: address.clone(),
            })
        } else {
            self.serial.as_ref().map(|path| Source::Serial {
                path: path.clone(),
                follow,
            })
        })
    }
}

#[derive(clap::Args, Debug)]
struct AttachArgs {
    /// The process to attach to.
    pid: u32,
    /// How long to record: a number and its unit (10s, 500ms). Default: until Ctrl-C.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    duration: Option<u64>,
    /// Record only these functions while attached (HOOKCC_FUNCTIONS's syntax: comma-separated
    /// globs, `!` leaves out: 'parse_*,!parse_space'); the program's own choice is back after.
    #[arg(long, value_name = "GLOBS")]
    functions: Option<String>,
    /// The trace to write (the program writes it, as its user; with --stream, hookprof).
    /// Default: <program>.<pid>.attach.hktrace.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Have the records sent to hookprof as they are written (the program writes its trace
    /// into a FIFO hookprof reads), and write the trace here: the program needs no access to
    /// the output's place and writes nothing on its own. Default mode only.
    #[arg(long)]
    stream: bool,
}

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("watched").required(true).args(["pid", "follow", "gdb", "tcp", "serial"])))]
struct TopArgs {
    /// The process to watch.
    pid: Option<u32>,
    /// Instead of a process: a trace still being written, read again every interval (its
    /// records come as the program's buffers fill: HOOKCC_BUFFER_RECORDS).
    #[arg(long, value_name = "TRACE")]
    follow: Option<PathBuf>,
    /// Instead of a process: a firmware's stream (--gdb, --tcp or --serial, with --exe), read as
    /// `hookprof record` reads it. Times are the target's clock, each task's CPU time.
    #[command(flatten)]
    stream: StreamArgs,
    /// How often a window ends and the view is redrawn.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    interval: u64,
    /// How many windows the view adds up (the sliding window is --interval times this).
    #[arg(long, value_name = "N", default_value_t = 5)]
    windows: usize,
    /// Rows of functions drawn.
    #[arg(long, value_name = "N", default_value_t = 20)]
    rows: usize,
    /// Where the program writes its windows (it must be able to; default: a new temporary
    /// directory, removed at the end).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Stop after this many windows (default: until q or Ctrl-C).
    #[arg(long, value_name = "N")]
    iterations: Option<u64>,
}

#[derive(clap::Args, Debug)]
struct TuiArgs {
    /// The trace to browse.
    trace: PathBuf,
}

#[derive(clap::Args, Debug)]
struct DetachArgs {
    /// The process to stop recording.
    pid: u32,
}

#[derive(clap::Args, Debug)]
struct NitroArgs {
    /// The raw bytes of the buffer, from its start (the address given to OS_Init*).
    dump: PathBuf,
    /// The program's ELF file (the build that filled the buffer): names are read from it.
    #[arg(long, value_name = "ELF")]
    exe: PathBuf,
    /// The lr for the first line of a call trace (hex, with or without 0x).
    #[arg(long, value_name = "HEX", value_parser = parse_hex)]
    lr: Option<u64>,
    /// A measurement buffer's costs include the calls each call made (default: they do not,
    /// as the seed's §4.1 counts them; a statistics buffer says for itself).
    #[arg(long)]
    inclusive: bool,
    /// Write the text to FILE instead of standard output (never the input dump).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct GprofArgs {
    /// The raw bytes of hookcc_gprof_data.
    dump: PathBuf,
    /// The program's ELF file: its pointer size and byte order.
    #[arg(long, value_name = "ELF")]
    exe: PathBuf,
    /// The gmon.out to write (never the input dump).
    #[arg(short, long, value_name = "FILE", default_value = "gmon.out")]
    output: PathBuf,
}

#[derive(clap::Args, Debug)]
struct PfpArgs {
    /// The raw bytes of pfpInst.
    dump: PathBuf,
    /// The program's ELF file (the build that filled it).
    #[arg(long, value_name = "ELF")]
    exe: PathBuf,
    /// Write the text to FILE instead of standard output (never the input dump).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

fn parse_hex(s: &str) -> Result<u64, String> {
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    u64::from_str_radix(digits, 16).map_err(|e| format!("{s:?} is not a hex address: {e}"))
}

#[derive(clap::Args, Debug)]
struct CallgraphArgs {
    /// The .hktrace file, or a TI dump.
    trace: PathBuf,
    /// Raw times: do not subtract the hooks' own time (which the runtime measured at start).
    #[arg(long)]
    no_compensation: bool,
    /// Take symbols from this executable instead of the path recorded in the trace (required
    /// for a TI dump).
    #[arg(long, value_name = "ELF")]
    exe: Option<PathBuf>,
    /// TI dump: names from all symbols, not only global ones.
    #[arg(long)]
    all_symbols: bool,
    /// TI dump: the run-time address of ProfileData (hex), for a binary dump of a
    /// position-independent executable.
    #[arg(long, value_name = "HEX", value_parser = parse_hex)]
    profile_data: Option<u64>,
    /// TI dump: words per record, 3 or 4 (as for `hookprof ti`).
    #[arg(long, value_name = "3|4", value_parser = clap::value_parser!(u8).range(3..=4))]
    record_words: Option<u8>,
    /// Write the call graph to FILE instead of standard output (never the input trace).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct ReportArgs {
    /// The .hktrace file.
    trace: PathBuf,
    /// More traces (a fork/exec family, the runs of a test suite): one report of all their
    /// threads, functions of the same name added up, the traces named on stderr. They must be
    /// runs of one executable unless --mixed-programs.
    #[arg(value_name = "MORE")]
    more: Vec<PathBuf>,
    /// Raw times: do not subtract the hooks' own time (which the runtime measured at start).
    #[arg(long)]
    no_compensation: bool,
    /// Take symbols from this executable instead of the path recorded in the trace (for a
    /// trace copied from another machine, or a program moved since).
    #[arg(long, value_name = "ELF")]
    exe: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = FormatArg::Text)]
    format: FormatArg,
    /// One row per thread and function instead of process totals.
    #[arg(long)]
    per_thread: bool,
    /// Order of the rows (largest first; name: alphabetical).
    #[arg(long, value_enum, default_value_t = SortArg::Sampled)]
    sort: SortArg,
    /// Only the first N rows (of each thread with --per-thread).
    #[arg(long, value_name = "N")]
    top: Option<usize>,
    /// Add p50, p90 and p99 of the inclusive time of single calls (within 1 %; replays the
    /// trace a second time).
    #[arg(long)]
    percentiles: bool,
    /// Add who calls each function and how often (caller×calls, most first).
    #[arg(long)]
    callers: bool,
    /// Add up traces of different executables too. Without it, several traces (a glob such
    /// as `*.hktrace`) must be runs of one program, or the report is refused with the list of
    /// traces and their executables.
    #[arg(long)]
    mixed_programs: bool,
    /// Text: these columns, in this order (comma-separated; the function's name is always
    /// last): percent, sampled_self, exclusive (self), inclusive (total), calls, avg
    /// (per_call), min, max, p50, p90, p99, exclusive_oncpu, exclusive_offcpu,
    /// inclusive_oncpu, inclusive_offcpu, sampled_total, sampled_percent.
    #[arg(long, value_name = "LIST", value_parser = parse_columns, conflicts_with = "wide")]
    columns: Option<ColumnList>,
    /// Text: every column the trace has data for.
    #[arg(long)]
    wide: bool,
    /// Text: function names as demangled, without eliding template and generic arguments
    /// or shortening them to fit the line.
    #[arg(long)]
    full_names: bool,
    /// cpu: every time column counts only the time the thread ran (from the trace's context
    /// switches; refused for a trace without them). See docs/views.md.
    #[arg(long, value_enum, default_value_t = TimeArg::Wall)]
    time: TimeArg,
    /// Write the report to FILE instead of standard output (never the input trace).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// `--columns`' list (a type of its own: clap takes a `Vec` for a repeated option).
#[derive(Clone, Debug)]
struct ColumnList(Vec<hookprof::output::report::columns::Column>);

fn parse_columns(text: &str) -> Result<ColumnList, String> {
    hookprof::output::report::columns::Column::parse_list(text).map(ColumnList)
}

/// The width of the terminal standard output is (`COLUMNS` first), if it is one.
fn terminal_width() -> Option<usize> {
    if let Some(n) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
    {
        return Some(n);
    }
    #[cfg(unix)]
    {
        // SAFETY: TIOCGWINSZ fills the winsize it is given; fd 1 may be anything.
        let mut size: libc::winsize = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut size) } == 0;
        if ok && size.ws_col > 0 {
            return Some(usize::from(size.ws_col));
        }
    }
    None
}

#[derive(clap::Args, Debug)]
struct InfoArgs {
    /// The .hktrace file.
    trace: PathBuf,
    /// Raw times: do not subtract the hooks' own time (which the runtime measured at start).
    #[arg(long)]
    no_compensation: bool,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum SortArg {
    /// Sampled self time (the CPU time the trace's samples found in the function itself,
    /// docs/views.md "Sampled times"), then exclusive time; exclusive time where the trace
    /// has no samples, or fewer than 1000 in functions.
    Sampled,
    /// Exclusive time (time in the function itself).
    Exclusive,
    /// Inclusive time.
    Inclusive,
    /// Number of calls.
    Calls,
    /// Average inclusive time per call.
    Avg,
    /// Longest single call.
    Max,
    /// Function name.
    Name,
}

impl From<SortArg> for hookprof::output::report::SortKey {
    fn from(s: SortArg) -> Self {
        use hookprof::output::report::SortKey as K;
        match s {
            SortArg::Sampled => K::Sampled,
            SortArg::Exclusive => K::Exclusive,
            SortArg::Inclusive => K::Inclusive,
            SortArg::Calls => K::Calls,
            SortArg::Avg => K::Avg,
            SortArg::Max => K::Max,
            SortArg::Name => K::Name,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
    /// Aligned columns and a summary line.
    Text,
    /// Comma-separated values with a header row.
    Csv,
    /// One JSON object with "summary", "threads" and "functions".
    Json,
}

impl From<FormatArg> for Format {
    fn from(f: FormatArg) -> Format {
        match f {
            FormatArg::Text => Format::Text,
            FormatArg::Csv => Format::Csv,
            FormatArg::Json => Format::Json,
        }
    }
}

impl From<&ReportArgs> for ReportOptions {
    fn from(a: &ReportArgs) -> ReportOptions {
        ReportOptions {
            exe: a.exe.clone(),
            format: a.format.into(),
            per_thread: a.per_thread,
            sort: a.sort.into(),
            top: a.top,
            percentiles: a.percentiles,
            callers: a.callers,
            mixed_programs: a.mixed_programs,
            text: hookprof::output::report::columns::TextOptions {
                columns: a.columns.clone().map(|c| c.0),
                wide: a.wide,
                full_names: a.full_names,
                // A file is read later, anywhere: the default width.
                width: if a.output.is_none() {
                    terminal_width()
                } else {
                    None
                },
            },
            time: a.time.into(),
        }
    }
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
    let (bytes, warnings) = if hookprof::input::detect::is_hktrace(&args.trace)? {
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
        let options = hookprof::analysis::ti::Options {
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
    let options = hookprof::analysis::ti::Options {
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
