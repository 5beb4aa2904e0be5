//! `hookprof callgraph` of a `.hktrace`.

use std::path::Path;

use crate::analysis::warnings::profile_warnings;
use crate::input::error::Error;
use crate::input::symbols::{Resolve, Symbolizer};
use crate::input::trace_file::TraceFile;
use crate::output::callgraph;

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
