//! `hookprof timeline`: every call as Chrome trace-event JSON, which Perfetto UI
//! (ui.perfetto.dev) and chrome://tracing load.
//!
//! The file is one object `{"traceEvents":[…],"displayTimeUnit":"ns","otherData":{…}}`.
//! Each thread is one track: `M` (metadata) events name the process and the threads, then
//! every shown call is a `B` event at its entry (name, `cat` "function", `args.depth`, 1 for
//! the outermost shown frame, and `args.address`) and an `E` event at its exit. Events are
//! written as the replay produces them, so memory stays flat; per thread they are balanced
//! (frames still open at the end of a thread are closed at its end, as in every report) and
//! in time order. `ts` is in microseconds since the trace's earliest record, with
//! nanosecond decimals; a trace without a clock rate gives ticks instead (and says so in
//! `otherData.unit`).
//!
//! The trace records no call sites, so events carry none.

use std::io::{self, Write};

use crate::view::{Names, TimeBase, TraceInfo, View, ViewFrame};

/// Writes Chrome trace events to `out` as the frames come.
pub struct Timeline<W: Write> {
    out: W,
    /// Events are formatted here and written to `out` in blocks: formatting into a `Vec`
    /// is much cheaper than through a `dyn Write` per piece.
    buf: Vec<u8>,
    /// `,"pid":P,"tid":` as bytes, the same in every event.
    pid_tid: Vec<u8>,
    clock: TimeBase,
    /// Each function's name as a JSON string (with its quotes), and the end of its events
    /// (`,"address":"0x…"}}`), made at its first event.
    names: Vec<Option<(String, String)>>,
    /// The first write error; later events are dropped.
    error: Option<io::Error>,
    pub events: u64,
}

impl<W: Write> Timeline<W> {
    /// Starts the file: the opening and the metadata events of the process and its threads.
    pub fn start(mut out: W, info: &TraceInfo) -> io::Result<Self> {
        let pid = info.summary.header.pid;
        let exe = info
            .summary
            .exe
            .as_ref()
            .map_or_else(|| "traced program".to_string(), |p| p.display().to_string());
        write!(
            out,
            "{{\"traceEvents\":[\n{{\"ph\":\"M\",\"pid\":{pid},\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":{}}}}}",
            json(&exe)
        )?;
        for t in &info.threads {
            let name = match (&t.name, t.sequence) {
                (Some(name), Some(seq)) => format!("{name} (thread {seq}, tid {})", t.tid),
                _ => format!("tid {}", t.tid),
            };
            write!(
                out,
                ",\n{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":{}}}}}",
                t.tid,
                json(&name)
            )?;
            if let Some(seq) = t.sequence {
                write!(
                    out,
                    ",\n{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{},\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{seq}}}}}",
                    t.tid
                )?;
            }
        }
        Ok(Timeline {
            out,
            buf: Vec::with_capacity(Self::BLOCK + 4096),
            pid_tid: format!(",\"pid\":{pid},\"tid\":").into_bytes(),
            clock: info.clock,
            names: Vec::new(),
            error: None,
            events: 0,
        })
    }

    const BLOCK: usize = 1 << 16;

    /// Ends the file and returns the writer, or the first write error.
    pub fn finish(mut self) -> io::Result<W> {
        if let Some(err) = self.error.take() {
            return Err(err);
        }
        self.out.write_all(&self.buf)?;
        self.buf.clear();
        let unit = if self.clock.ticks_per_second.is_some() {
            "us"
        } else {
            "ticks"
        };
        write!(
            self.out,
            "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{{\"creator\":\"hookprof {}\",\"unit\":\"{unit}\"}}}}\n",
            env!("CARGO_PKG_VERSION")
        )?;
        self.out.flush()?;
        Ok(self.out)
    }

    fn check(&mut self, result: io::Result<()>) {
        if let Err(err) = result {
            self.error.get_or_insert(err);
        }
    }
}

impl<W: Write> Timeline<W> {
    /// `ts` as JSON: microseconds with three decimals, or ticks.
    fn push_ts(&mut self, time: u64) {
        let value = self.clock.time(time);
        let mut digits = itoa::Buffer::new();
        if self.clock.ticks_per_second.is_some() {
            self.buf
                .extend_from_slice(digits.format(value / 1000).as_bytes());
            let frac = value % 1000;
            self.buf.extend_from_slice(&[
                b'.',
                b'0' + (frac / 100) as u8,
                b'0' + (frac / 10 % 10) as u8,
                b'0' + (frac % 10) as u8,
            ]);
        } else {
            self.buf.extend_from_slice(digits.format(value).as_bytes());
        }
    }

    fn push_head(&mut self, phase: u8, tid: u64) {
        self.buf.extend_from_slice(b",\n{\"ph\":\"");
        self.buf.push(phase);
        self.buf.push(b'"');
        self.buf.extend_from_slice(&self.pid_tid);
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(tid).as_bytes());
        self.buf.extend_from_slice(b",\"ts\":");
    }

    fn end_event(&mut self) {
        self.events += 1;
        if self.buf.len() >= Self::BLOCK {
            let result = self.out.write_all(&self.buf);
            self.buf.clear();
            self.check(result);
        }
    }
}

impl<W: Write> View for Timeline<W> {
    fn enter(&mut self, tid: u64, stack: &mut [ViewFrame], names: &Names) {
        if self.error.is_some() {
            return;
        }
        let Some(frame) = stack.last() else { return };
        let f = frame.function as usize;
        if self.names.len() <= f {
            self.names.resize(f + 1, None);
        }
        if self.names[f].is_none() {
            // The event's parts that depend on the function only, formatted once: its name,
            // and its address closing the event (hex formatting per event cost more than
            // all the rest of it).
            self.names[f] = Some((
                json(names.name(frame.function)),
                format!(",\"address\":\"0x{:x}\"}}}}", frame.address),
            ));
        }
        self.push_head(b'B', tid);
        self.push_ts(frame.entry_time);
        self.buf.extend_from_slice(b",\"name\":");
        let (name, tail) = self.names[f]
            .as_ref()
            .map_or(("\"\"", ""), |(n, t)| (n.as_str(), t.as_str()));
        self.buf.extend_from_slice(name.as_bytes());
        self.buf
            .extend_from_slice(b",\"cat\":\"function\",\"args\":{\"depth\":");
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(stack.len()).as_bytes());
        self.buf.extend_from_slice(tail.as_bytes());
        self.end_event();
    }

    fn exit(&mut self, tid: u64, time: u64, _stack: &[ViewFrame], _names: &Names) {
        if self.error.is_some() {
            return;
        }
        self.push_head(b'E', tid);
        self.push_ts(time);
        self.buf.push(b'}');
        self.end_event();
    }
}

/// `text` as a JSON string.
fn json(text: &str) -> String {
    serde_json::to_string(text).expect("a string always serializes")
}
