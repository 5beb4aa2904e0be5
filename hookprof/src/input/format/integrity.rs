//! What a trace's checksums say, chunk by chunk.

use std::fmt;

use super::chunks::*;
use super::layout::*;
use super::read::*;

/// What the checksums of a trace say (docs/trace-format.md, "Checksums"): fed every chunk
/// in order by [`Integrity::observe`], then [`Integrity::finish`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Integrity {
    /// The header has [`FLAG_CHECKED`]: every chunk must have its CHECK chunk.
    pub flagged: bool,
    header_sum: u64,
    /// The last chunk, until its CHECK chunk: (offset, type, thread).
    pending: Option<(u64, u32, u64)>,
    /// Chunks whose CHECK chunk matches.
    pub verified: u64,
    /// Chunks whose CHECK chunk does not match, and the first of them.
    pub mismatched: u64,
    pub first_mismatch: Option<BadChunk>,
    /// Chunks without a CHECK chunk in a file whose header has [`FLAG_CHECKED`].
    pub unchecked: u64,
    pub first_unchecked: Option<BadChunk>,
    /// CHECK chunks that follow no chunk (after a hole or another CHECK chunk).
    pub stray_checks: u64,
    /// The header's checksum in the CLOCK chunk: `Some(true)` if it matches.
    pub header_matches: Option<bool>,
    /// Offset of the CLOCK chunk that holds it.
    pub header_check_at: u64,
}

/// A chunk that failed a check: where it is, its type and thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadChunk {
    pub offset: u64,
    pub chunk_type: u32,
    pub thread: u64,
}

impl fmt::Display for BadChunk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the {} chunk at byte {}",
            ChunkName(self.chunk_type),
            self.offset
        )?;
        if self.thread != 0 {
            write!(f, " (thread {})", self.thread)?;
        }
        Ok(())
    }
}

impl Integrity {
    pub fn new(trace: &Trace<'_>) -> Self {
        Integrity {
            flagged: trace.header().flags & FLAG_CHECKED != 0,
            header_sum: trace.header_checksum(),
            ..Integrity::default()
        }
    }

    /// Takes the next chunk of the trace (checking a CHECK chunk reads the chunk it covers).
    pub fn observe(&mut self, chunk: &ChunkAt<'_>) {
        match &chunk.chunk {
            Chunk::Check(check) => {
                match (self.pending.take(), check.covered_offset()) {
                    (Some((offset, chunk_type, thread)), Some(_)) => {
                        if check.matches() {
                            self.verified += 1;
                        } else {
                            self.mismatched += 1;
                            self.first_mismatch.get_or_insert(BadChunk {
                                offset,
                                chunk_type,
                                thread,
                            });
                        }
                    }
                    _ => self.stray_checks += 1,
                }
                return;
            }
            Chunk::Clock(clock) => {
                if let Some(sum) = clock.header_check {
                    self.header_matches = Some(sum == self.header_sum);
                    self.header_check_at = chunk.offset;
                }
            }
            _ => {}
        }
        self.close_pending();
        if !matches!(chunk.chunk, Chunk::Hole) {
            self.pending = Some((chunk.offset, chunk.chunk_type, chunk.thread));
        }
    }

    /// After the last chunk.
    pub fn finish(&mut self) {
        self.close_pending();
    }

    fn close_pending(&mut self) {
        if let Some((offset, chunk_type, thread)) = self.pending.take() {
            if self.flagged {
                self.unchecked += 1;
                self.first_unchecked.get_or_insert(BadChunk {
                    offset,
                    chunk_type,
                    thread,
                });
            }
        }
    }

    /// Nothing failed a check.
    pub fn is_clean(&self) -> bool {
        self.mismatched == 0
            && self.unchecked == 0
            && self.stray_checks == 0
            && self.header_matches != Some(false)
    }

    /// One line per kind of failure, for the user.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if let Some(first) = self.first_mismatch {
            warnings.push(format!(
                "{} of the trace's chunks do not match their checksums, the first is {first}: the \
                 file is corrupt there, and what the report shows of those chunks (records, \
                 thread, module addresses) may be wrong",
                self.mismatched
            ));
        }
        if let Some(first) = self.first_unchecked {
            warnings.push(format!(
                "{} of the trace's chunks have no CHECK chunk after them, though the header \
                 says every chunk has one, the first is {first}: the file is corrupt there",
                self.unchecked
            ));
        }
        if self.stray_checks > 0 {
            warnings.push(format!(
                "{} CHECK chunks follow no chunk: the file is corrupt before them",
                self.stray_checks
            ));
        }
        if self.header_matches == Some(false) {
            warnings.push(format!(
                "the header (bytes 0-63) does not match its checksum in the CLOCK chunk at byte \
                 {}: its fields (complete flag, clock rate, records, lost) are corrupt, or the \
                 program was killed while it finished the file",
                self.header_check_at
            ));
        }
        warnings
    }
}
