//! `hookprof gmon`: a gmon.out for GNU gprof.

use std::io;
use std::path::Path;

use crate::analysis::warnings::profile_warnings;
use crate::commands::view_options::write_error;
use crate::input::error::Error;
use crate::input::symbols::ElfSymbols;
use crate::input::trace_file::TraceFile;
use crate::output::report;
use std::path::PathBuf;

/// Writes a gmon.out for GNU gprof from `trace_path` ([`report::gmon`]). Returns the
/// warnings to show and the sampling rate of the synthesized histogram.
pub fn gmon_file(trace_path: &Path, out: &mut dyn io::Write) -> Result<(Vec<String>, u32), Error> {
    let trace = TraceFile::open(trace_path)?;
    let profile = trace.profile()?;
    let s = &profile.summary;
    let unsupported = |message: &str| Error::Unsupported {
        path: trace_path.to_path_buf(),
        message: message.to_string(),
    };
    let Some(ticks_per_second) = s.ticks_per_second() else {
        return Err(unsupported(
            "the trace has no clock rate, and gmon.out needs times in seconds",
        ));
    };
    let Some(module) = s
        .modules
        .iter()
        .find(|m| m.path.is_none() || (s.exe.is_some() && m.path == s.exe))
    else {
        return Err(unsupported(
            "the trace has no MODULE chunk for its executable, so its addresses cannot be \
             turned into the ELF file's",
        ));
    };
    let target = report::gmon::Target {
        endian: s.header.endian,
        pointer_size: s.header.pointer_size,
        bias: module.bias,
        start: module.start,
        end: module.end,
        ticks_per_second,
    };
    // The native trace names functions by their records: gprof wants their addresses.
    let records = s
        .exe
        .as_deref()
        .and_then(ElfSymbols::load_records)
        .unwrap_or_default();
    let function = |a: u64| records.function_of(a).unwrap_or(a);
    let rate = report::gmon::write(&profile, &target, &function, out).map_err(write_error)?;
    Ok((profile_warnings(s), rate))
}

#[derive(clap::Args, Debug)]
pub struct GmonArgs {
    /// The .hktrace file.
    pub trace: PathBuf,
    /// Raw times: do not subtract the hooks' own time (which the runtime measured at start).
    #[arg(long)]
    pub no_compensation: bool,
    /// Where to write (never the input trace).
    #[arg(short, long, value_name = "FILE", default_value = "gmon.out")]
    pub output: PathBuf,
}
