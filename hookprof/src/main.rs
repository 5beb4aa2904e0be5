//! `hookprof`: the command line over the hookprof library. Parses arguments, calls the
//! library, prints warnings and errors. Exit codes: 0 success, 1 error, 2 usage error.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand, ValueEnum};

use hookprof::report::Format;
use hookprof::{callgraph_file, report_file, same_file, ReportOptions, TraceFile};

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
    /// Flat profile: calls and inclusive/exclusive time per function.
    ///
    /// One row per function, sorted by exclusive time (time in the function itself, not in
    /// its callees). Inclusive time counts only the outermost frame of a recursive function.
    /// Times are in nanoseconds, or in ticks (columns *_ticks) when the trace has no clock
    /// rate. Function names come from the ELF symbol tables of the traced executable and
    /// its shared libraries; unknown addresses are shown as 0x<hex>.
    #[command(after_help = "\
CSV columns: [thread,]function,calls,inclusive_ns,exclusive_ns,min_ns,max_ns,avg_ns,percent
  thread    with --per-thread: the THREAD chunk's sequence number (1 = first thread),
            or the Linux TID if the trace has no THREAD chunk for the thread
  min/max   shortest and longest inclusive time of a single call
  avg       mean inclusive time per call
  percent   share of the total exclusive time of all rows (two decimals)")]
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
    /// Write the report to FILE instead of standard output (never the input trace).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct InfoArgs {
    /// The .hktrace file.
    trace: PathBuf,
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
        }
    }
}

fn warn(message: &str) {
    eprintln!("hookprof: warning: {message}");
}

/// Refuses an output path that is the input trace (under any name).
fn check_output(trace: &std::path::Path, output: Option<&PathBuf>) -> Result<()> {
    if let Some(output) = output {
        if same_file(trace, output) {
            bail!(hookprof::Error::OutputIsInput {
                path: output.clone()
            });
        }
    }
    Ok(())
}

/// Prints the warnings, then writes `bytes` to `output` or standard output. The report is
/// complete in memory before anything is written, so an error never leaves a truncated
/// output file behind.
fn emit(warnings: &[String], bytes: &[u8], output: Option<&PathBuf>) -> Result<()> {
    for w in warnings {
        warn(w);
    }
    match output {
        Some(path) => std::fs::write(path, bytes)
            .with_context(|| format!("{}: cannot write the report", path.display()))?,
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
    let out = report_file(&args.trace, &ReportOptions::from(args))?;
    emit(&out.warnings, &out.bytes, args.output.as_ref())
}

fn callgraph(args: &CallgraphArgs) -> Result<()> {
    check_output(&args.trace, args.output.as_ref())?;
    let (bytes, warnings) = if hookprof::ti::is_hktrace(&args.trace)? {
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
        let options = hookprof::ti::Options {
            exe: exe.clone(),
            all_symbols: args.all_symbols,
            profile_data: args.profile_data,
            record_words: args.record_words,
        };
        hookprof::ti::callgraph_file(&args.trace, &options)?
    };
    emit(&warnings, &bytes, args.output.as_ref())
}

fn ti(args: &TiArgs) -> Result<()> {
    let options = hookprof::ti::Options {
        exe: args.exe.clone(),
        all_symbols: args.all_symbols,
        profile_data: args.profile_data,
        record_words: args.record_words,
    };
    let processed = hookprof::ti::process_file(&args.dump, &options)?;
    for w in &processed.warnings {
        warn(w);
    }
    let prefix = args
        .out
        .clone()
        .unwrap_or_else(|| hookprof::ti::default_prefix(&args.dump));
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
    let (gmon, warnings) = hookprof::gprof::convert_file(&args.dump, &args.exe)?;
    emit(&warnings, &gmon, Some(&args.output))
}

fn pfp(args: &PfpArgs) -> Result<()> {
    check_output(&args.dump, args.output.as_ref())?;
    let text = hookprof::pfp::decode_file(&args.dump, &args.exe)?;
    emit(&[], text.as_bytes(), args.output.as_ref())
}

fn nitro(args: &NitroArgs) -> Result<()> {
    check_output(&args.dump, args.output.as_ref())?;
    let options = hookprof::nitro::Options {
        lr: args.lr,
        inclusive: args.inclusive,
    };
    let decoded = hookprof::nitro::decode_file(&args.dump, &args.exe, &options)?;
    emit(&decoded.warnings, &decoded.text, args.output.as_ref())
}

fn info(args: &InfoArgs) -> Result<()> {
    let trace = TraceFile::open(&args.trace)?;
    let summary = trace.summary()?;
    let text = hookprof::info::render(&args.trace, &summary);
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .context("cannot write to standard output")?;
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Report(args) => report(args),
        Command::Info(args) => info(args),
        Command::Callgraph(args) => callgraph(args),
        Command::Nitro(args) => nitro(args),
        Command::Pfp(args) => pfp(args),
        Command::Gprof(args) => gprof(args),
        Command::Ti(args) => ti(args),
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
            eprintln!("hookprof: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
