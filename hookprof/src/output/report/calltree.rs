//! `hookprof replay`: the calls as an indented tree in the order they happened, in the style
//! of `uftrace replay`:
//!
//! ```text
//! #     DURATION  THREAD  FUNCTION
//!                 [    1] | main() {
//!                 [    1] |   a() {
//!     30.000 us   [    1] |     b();
//!     50.000 us   [    1] |   } /* a */
//! ```
//!
//! A call with no shown callee is one line (`name();`) with its duration; another opens
//! with `name() {` and closes with `} /* name */` and its duration. Threads are labelled as
//! in `hookprof info` (the THREAD chunk's number, else the TID); when several threads run,
//! their lines interleave in the order the trace holds them (chunk by chunk), each with its
//! thread. Streamed: memory stays flat.
//!
//! Where a stream lost records (`hookprof record`), a line says so at that place:
//! `[    2] | /* lost 120 records: the frames open here were closed */`.
//!
//! Indentation stops at [`MAX_INDENT_LEVELS`]: a deeper line says its depth instead
//! (`[depth 30000] down() {`), so that a deep recursion does not cost the square of its depth
//! in spaces (a 30 000-deep one would have written 1.8 GB of them).

use std::io::{self, Write};

use crate::analysis::view::{Names, TimeBase, TraceInfo, View, ViewFrame};
use crate::output::block_writer::BlockWriter;

/// The deepest level indented; deeper lines carry `[depth N]`.
pub const MAX_INDENT_LEVELS: usize = 64;

/// Writes the call tree as the frames come.
pub struct CallTree<W: Write> {
    w: BlockWriter<W>,
    clock: TimeBase,
    /// TID → label, from the trace's THREAD chunks.
    labels: Vec<(u64, u64)>,
    /// A frame told to us whose line is not written yet: it becomes `name();` if its exit
    /// comes next, `name() {` otherwise. (tid, depth, function)
    pending: Option<(u64, usize, u32)>,
}

impl<W: Write> CallTree<W> {
    pub fn start(mut out: W, info: &TraceInfo) -> io::Result<Self> {
        writeln!(out, "#     DURATION  THREAD  FUNCTION")?;
        Ok(CallTree {
            w: BlockWriter::new(out),
            clock: info.clock,
            labels: info.threads.iter().map(|t| (t.tid, t.label())).collect(),
            pending: None,
        })
    }

    pub fn finish(mut self, names: &Names) -> io::Result<W> {
        let result = self.flush_pending(names);
        self.w.keep(result);
        self.w.flush_buffer()?;
        self.w.out.flush()?;
        Ok(self.w.out)
    }

    fn label(&self, tid: u64) -> u64 {
        self.labels
            .iter()
            .find(|&&(t, _)| t == tid)
            .map_or(tid, |&(_, label)| label)
    }

    fn line(
        &mut self,
        duration: Option<u64>,
        tid: u64,
        depth: usize,
        text: &str,
    ) -> io::Result<()> {
        match duration {
            Some(ticks) => write!(self.w.buf, "{}", Duration(self.clock, ticks))?,
            None => self.w.buf.extend_from_slice(&[b' '; 14]),
        }
        let level = depth.saturating_sub(1);
        let label = self.label(tid);
        write!(self.w.buf, " [{label:>5}] | ")?;
        self.w
            .buf
            .resize(self.w.buf.len() + 2 * level.min(MAX_INDENT_LEVELS), b' ');
        if level > MAX_INDENT_LEVELS {
            write!(self.w.buf, "[depth {depth}] ")?;
        }
        self.w.buf.extend_from_slice(text.as_bytes());
        self.w.buf.push(b'\n');
        self.w.end_event();
        Ok(())
    }

    fn flush_pending(&mut self, names: &Names) -> io::Result<()> {
        if let Some((tid, depth, function)) = self.pending.take() {
            let text = format!("{} {{", call(names.name(function)));
            self.line(None, tid, depth, &text)?;
        }
        Ok(())
    }
}

impl<W: Write> View for CallTree<W> {
    const IN_TIME_ORDER: bool = true;

    fn enter(&mut self, tid: u64, stack: &mut [ViewFrame], names: &Names) {
        if self.w.failed() {
            return;
        }
        let result = self.flush_pending(names);
        self.w.keep(result);
        if let Some(frame) = stack.last() {
            self.pending = Some((tid, stack.len(), frame.function));
        }
    }

    /// A loss is a line where it happened, at the depth of the frames it closed:
    /// `/* lost N records: frames open here were closed */`.
    fn lost(&mut self, tid: u64, _time: u64, count: u64, names: &Names) {
        if self.w.failed() {
            return;
        }
        let result = self.flush_pending(names).and_then(|()| {
            self.line(
                None,
                tid,
                1,
                &format!("/* lost {count} records: the frames open here were closed */"),
            )
        });
        self.w.keep(result);
    }

    fn exit(&mut self, tid: u64, time: u64, stack: &[ViewFrame], names: &Names) {
        if self.w.failed() {
            return;
        }
        let Some(frame) = stack.last() else { return };
        let duration = Some(time.saturating_sub(frame.entry_time));
        let depth = stack.len();
        let name = names.name(frame.function);
        let result = if self.pending == Some((tid, depth, frame.function)) {
            self.pending = None;
            self.line(duration, tid, depth, &format!("{};", call(name)))
        } else {
            self.flush_pending(names)
                .and_then(|()| self.line(duration, tid, depth, &format!("}} /* {name} */")))
        };
        self.w.keep(result);
    }
}

/// `name()`, or the name alone when it has its parameters already (a demangled C++ name).
fn call(name: &str) -> String {
    if name.ends_with(')') || name.ends_with(" const") {
        name.to_string()
    } else {
        format!("{name}()")
    }
}

/// A duration right-aligned in 12 columns with its unit (ns, us, ms, s), as uftrace prints.
struct Duration(TimeBase, u64);

impl std::fmt::Display for Duration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let value = self.0.duration(self.1);
        if self.0.ticks_per_second.is_none() {
            return write!(f, "{value:>9} tk  ");
        }
        let (scaled, unit) = match value {
            v if v < 1_000 => return write!(f, "{v:>9} ns  "),
            v if v < 1_000_000 => (v as f64 / 1e3, "us"),
            v if v < 1_000_000_000 => (v as f64 / 1e6, "ms"),
            v => (v as f64 / 1e9, " s"),
        };
        write!(f, "{scaled:>9.3} {unit}  ")
    }
}
