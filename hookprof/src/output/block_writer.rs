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

/// Text kept padded with zeros to whole [`Padded::CHUNK`]s, so that [`BlockWriter::put`]
/// appends it a chunk at a time (fixed-size copies, where a slice of any length is a call of
/// `memcpy`) and cuts off the excess. For the pieces a streamed view repeats in every event.
#[derive(Clone, Debug)]
pub struct Padded {
    bytes: Box<[u8]>,
    len: usize,
}

impl Padded {
    pub const CHUNK: usize = 32;

    pub fn new(text: &[u8]) -> Self {
        let mut bytes = text.to_vec();
        bytes.resize(text.len().div_ceil(Self::CHUNK).max(1) * Self::CHUNK, 0);
        Padded {
            bytes: bytes.into_boxed_slice(),
            len: text.len(),
        }
    }

    /// The text.
    pub fn text(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

impl<W: Write> BlockWriter<W> {
    /// Appends `piece`'s text.
    #[inline(always)]
    pub fn put(&mut self, piece: &Padded) {
        let start = self.buf.len();
        for chunk in piece.bytes.chunks_exact(Padded::CHUNK) {
            let chunk: &[u8; Padded::CHUNK] = chunk.try_into().expect("a whole chunk");
            self.buf.extend_from_slice(chunk);
        }
        self.buf.truncate(start + piece.len);
    }

    /// Appends the first `len` bytes of `line` (a fixed-size copy of all of it, the rest cut
    /// off).
    #[inline(always)]
    pub fn put_prefix<const N: usize>(&mut self, line: &[u8; N], len: usize) {
        let start = self.buf.len();
        self.buf.extend_from_slice(line);
        self.buf.truncate(start + len.min(N));
    }
}
