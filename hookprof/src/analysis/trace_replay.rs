//! A [`TraceFile`] replayed: its summary, its profile.

use crate::analysis::model::Profile;
use crate::analysis::replay::{self, TraceSummary};
use crate::input::error::Error;
use crate::input::trace_file::TraceFile;

impl TraceFile {
    /// Replays the trace for its summary only (what `hookprof info` shows).
    pub fn summary(&self) -> Result<TraceSummary, Error> {
        replay::replay_bytes(self.bytes(), &mut ()).map_err(|e| self.format_error(e))
    }

    /// Replays the trace into per-function statistics.
    pub fn profile(&self) -> Result<Profile, Error> {
        Profile::from_bytes(self.bytes()).map_err(|e| self.format_error(e))
    }
}
