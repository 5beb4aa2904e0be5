//! How a streamed view writes ([`BlockWriter`]).

use std::io::{self, Write};

/// A streamed view's output: formatted into `buf` (much cheaper than through a `dyn Write`
/// piece by piece) and written to `out` a block at a time. The first write error is kept:
/// the view drops later events ([`BlockWriter::failed`]) and [`BlockWriter::flush_buffer`]
/// returns it.
pub struct BlockWriter<W: Write> {
    pub out: W,
    pub buf: Vec<u8>,
    error: Option<io::Error>,
}

impl<W: Write> BlockWriter<W> {
    const BLOCK: usize = 1 << 16;

    pub fn new(out: W) -> Self {
        BlockWriter {
            out,
            buf: Vec::with_capacity(Self::BLOCK + 4096),
            error: None,
        }
    }

    /// After an event: writes the buffer out once it holds a block.
    #[inline]
    pub fn end_event(&mut self) {
        if self.buf.len() >= Self::BLOCK {
            self.write_block();
        }
    }

    #[cold]
    fn write_block(&mut self) {
        let result = self.out.write_all(&self.buf);
        self.buf.clear();
        self.keep(result);
    }

    /// Keeps the error of `result` if it is the first.
    pub fn keep(&mut self, result: io::Result<()>) {
        if let Err(err) = result {
            self.error.get_or_insert(err);
        }
    }

    /// A write has failed: the view's later events are dropped.
    pub fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// Writes out what the buffer holds, or returns the first write error.
    pub fn flush_buffer(&mut self) -> io::Result<()> {
        if let Some(err) = self.error.take() {
            return Err(err);
        }
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        Ok(())
    }
}
