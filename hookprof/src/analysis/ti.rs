//! A TI dump's calls as the replay layer's [`Profile`], for the call graph. The dump's
//! decoding and its calls in task time are [`crate::input::ti_calls`]'s (the conversion of a
//! dump lives with the inputs); [`load_bias`], [`agreement`] and [`Bias`] are named here too,
//! where the tests have always found them.

use crate::analysis::model::Profile;
use crate::input::ti_calls::Analysis;
pub use crate::input::ti_calls::{agreement, load_bias, Bias};

impl Analysis {
    /// The calls as a [`Profile`] of the replay layer ([`Analysis::to_hktrace`] read back),
    /// for the call graph.
    pub fn profile(&self) -> Profile {
        let trace = self.to_hktrace();
        // Written just now by format::Writer: reading it back is the reader's round trip, which
        // its own tests check; a failure would be a bug here, not bad input.
        crate::input::format::Trace::new(&trace)
            .and_then(|t| Profile::from_trace(&t))
            .expect("the trace Analysis::to_hktrace writes reads back")
    }
}
