//! A [`TraceFile`] replayed: its summary, its profile.

use crate::analysis::model::Profile;
use crate::analysis::replay::{self, TimeBasis, TraceSummary};
use crate::analysis::view::no_cpu_time;
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

    /// [`TraceFile::profile`] with times on the clock `time`; `--time=cpu` of a trace
    /// without context switches (or of sums per call path) is refused, naming the trace.
    pub fn profile_on(&self, time: TimeBasis) -> Result<Profile, Error> {
        let profile =
            Profile::from_bytes_on(self.bytes(), time).map_err(|e| self.format_error(e))?;
        let s = &profile.summary;
        if time == TimeBasis::Cpu && !s.has_switches {
            // A profile of trees alone (HOOKCC_MODE=profile), not trees beside records.
            let profile = s.profile_chunks > 0 && !s.records_skipped;
            return Err(no_cpu_time(
                self.path(),
                s.switches,
                s.switches > 0,
                profile,
            ));
        }
        Ok(profile)
    }
}
