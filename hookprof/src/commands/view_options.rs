//! What every view command shares.

use std::io;
use std::path::PathBuf;

use crate::analysis::view;
use crate::input::error::Error;

/// Options every view shares (`hookprof timeline`, `flame`, `callgrind`, `replay`).
#[derive(Clone, Debug, Default)]
pub struct ViewOptions {
    /// The executable to take symbols from instead of the path in the trace.
    pub exe: Option<PathBuf>,
    pub filter: view::Filter,
    /// Told of the replay's progress (the `hookprof` binary draws a bar with it).
    pub progress: Option<view::Progress>,
    /// `timeline` and `speedscope`: leave out short calls when an unfiltered output would pass
    /// this many bytes ([`view::Filter::sized`]); `None`: never.
    pub size_limit: Option<u64>,
}

pub(crate) fn write_error(error: io::Error) -> Error {
    Error::Write { error }
}
