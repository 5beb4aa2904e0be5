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
    Callgraph(CallgraphArgs),
}

#[derive(clap::Args, Debug)]
struct CallgraphArgs {
    /// The .hktrace file.
    trace: PathBuf,
    /// Take symbols from this executable instead of the path recorded in the trace.
    #[arg(long, value_name = "ELF")]
    exe: Option<PathBuf>,
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
    let (bytes, warnings) = callgraph_file(&args.trace, args.exe.as_deref())?;
    emit(&warnings, &bytes, args.output.as_ref())
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
