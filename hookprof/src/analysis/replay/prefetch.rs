//! Reading ahead of the records being replayed.

/// Asks the processor to load the trace's bytes a little ahead of the records being
/// replayed (software prefetch). The replay reads the file from start to end, so the bytes
/// that follow a chunk are the next ones it reads, whatever chunk they belong to.
///
/// The decoder's loop does not keep enough reads of the trace in flight to hide the
/// memory's latency: without this, `hookprof report` spent about a fifth of its time on
/// the instructions that wait for the trace's cache lines (perf, docs/performance.md). A
/// prefetch is only a hint: the bytes are read through the format's decoder as always. Only
/// on x86-64 for now; elsewhere this does nothing.
pub(super) struct Prefetch<'a> {
    data: &'a [u8],
    /// Offset of the next cache line to ask for.
    next: usize,
}

impl<'a> Prefetch<'a> {
    /// How far ahead of the records being decoded (four batches; 1 to 8 KiB measured the
    /// same).
    const DISTANCE: usize = 2048;
    pub(super) const LINE: usize = 64;

    /// Prefetching in `data` (nothing if it is empty) for a chunk whose records start at
    /// offset `start`.
    pub(super) fn new(data: &'a [u8], start: u64) -> Self {
        Prefetch {
            data,
            next: usize::try_from(start)
                .unwrap_or(usize::MAX)
                .saturating_add(Self::DISTANCE),
        }
    }

    /// Asks for the next `LINES` cache lines.
    #[inline]
    pub(super) fn next<const LINES: usize>(&mut self) {
        for _ in 0..LINES {
            if self.next >= self.data.len() {
                return;
            }
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a prefetch is a hint that never faults, and the address is inside
            // `data` anyway; SSE, which has the instruction, is part of x86-64.
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch::<_MM_HINT_T0>(self.data.as_ptr().add(self.next).cast());
            }
            self.next += Self::LINE;
        }
    }
}
