//! `hookprof callgraph` of a `.hktrace`.

use std::path::Path;

use crate::analysis::warnings::profile_warnings;
use crate::commands::arguments::parse_hex;
use crate::input::error::Error;
use crate::input::symbols::{Resolve, Symbolizer};
use crate::input::trace_file::TraceFile;
use crate::output::callgraph;
use std::path::PathBuf;

/// Reads `trace_path`, symbolizes it and renders the Dynamic Call Graph ([`callgraph`]).
/// Returns the text and the warnings to show.
pub fn callgraph_file(
    trace_path: &Path,
    exe: Option<&Path>,
) -> Result<(Vec<u8>, Vec<String>), Error> {
    let trace = TraceFile::open(trace_path)?;
    let profile = trace.profile()?;
    let mut names = Symbolizer::new(&profile.summary, exe)?;
    let mut bytes = Vec::new();
    callgraph::render(&profile, &mut names, callgraph::Times::Trace, &mut bytes)
        .expect("writing to a Vec cannot fail");
    let mut warnings = profile_warnings(&profile.summary);
    warnings.extend(names.take_warnings());
    Ok((bytes, warnings))
}

#[derive(clap::Args, Debug)]
pub struct CallgraphArgs {
    /// The .hktrace file, or a TI dump.
    pub trace: PathBuf,
    /// Raw times: do not subtract the hooks' own time (which the runtime measured at start).
    #[arg(long)]
    pub no_compensation: bool,
    /// Take symbols from this executable instead of the path recorded in the trace (required
    /// for a TI dump).
    #[arg(long, value_name = "ELF")]
    pub exe: Option<PathBuf>,
    /// TI dump: names from all symbols, not only global ones.
    #[arg(long)]
    pub all_symbols: bool,
    /// TI dump: the run-time address of ProfileData (hex), for a binary dump of a
    /// position-independent executable.
    #[arg(long, value_name = "HEX", value_parser = parse_hex)]
    pub profile_data: Option<u64>,
    /// TI dump: words per record, 3 or 4 (as for `hookprof ti`).
    #[arg(long, value_name = "3|4", value_parser = clap::value_parser!(u8).range(3..=4))]
    pub record_words: Option<u8>,
    /// Write the call graph to FILE instead of standard output (never the input trace).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}
