//! `hookprof timeline`: every call as Chrome trace-event JSON, which Perfetto UI
//! (ui.perfetto.dev), chrome://tracing and speedscope load.
//!
//! The file is one object `{"traceEvents":[…],"displayTimeUnit":"ns","otherData":{…}}`.
//! Each thread is one track: `M` (metadata) events name the process and the threads, then
//! every shown call is a `B` event at its entry (name, `cat` "function", `args.address`, the
//! function's entry point) and an `E` event with the same name and args at its exit. Events are
//! written as the replay produces them, so memory stays flat; per thread they are balanced
//! (frames still open at the end of a thread are closed at its end, as in every report) and
//! in time order. `ts` is in microseconds since the trace's earliest record, with
//! nanosecond decimals; a trace without a clock rate gives ticks instead (and says so in
//! `otherData.unit`).
//!
//! The args are the same in every call of a function, and an `E` event repeats its `B`:
//! speedscope's importer takes an event's name and args as the frame's identity (an arg that
//! changes per call, such as the depth, would make each call a function of its own), ignores
//! an `E` event whose name is not the open frame's, and where a `B` and an `E` have the same
//! time (a call compensated to 0 ns) takes the `B` first only if their identities are equal.
//! Perfetto shows each slice's depth itself. The trace records no call sites, so events
//! carry none.

use std::io::{self, Write};

use crate::model::HashMap;
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
    /// (`,"args":{"address":"0x…"}}`), made at its first event.
    names: Vec<Option<(String, String)>>,
    /// The thread of the last event, its time in ns (ticks) and how many events before it
    /// had that time ([`Self::push_ts`]); the same of the other threads.
    last_ts: Option<(u64, (u64, u32))>,
    threads_ts: HashMap<u64, (u64, u32)>,
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
            last_ts: None,
            threads_ts: HashMap::default(),
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
    /// `ts` as JSON: microseconds with three decimals, or ticks. An event at the same
    /// nanosecond (tick) as the thread's previous one gets three more decimals, the number
    /// of such events so far in picoseconds (1/1000 tick), so that its place after the
    /// previous one is in its time: viewers sort events by time, and speedscope's importer
    /// pairs a `B` and an `E` of the same time by a guess that breaks calls compensated to
    /// 0 ns.
    fn push_ts(&mut self, tid: u64, time: u64) {
        let value = self.clock.time(time);
        let last = match self.last_ts {
            Some((last_tid, ref mut last)) if last_tid == tid => last,
            _ => self.thread_last_ts(tid),
        };
        let ties = if last.0 == value {
            last.1 = (last.1 + 1).min(999);
            last.1
        } else {
            *last = (value, 0);
            0
        };
        let mut digits = itoa::Buffer::new();
        if self.clock.ticks_per_second.is_some() {
            self.buf
                .extend_from_slice(digits.format(value / 1000).as_bytes());
            self.buf.push(b'.');
            push_3_digits(&mut self.buf, value % 1000);
        } else {
            self.buf.extend_from_slice(digits.format(value).as_bytes());
            if ties > 0 {
                self.buf.push(b'.');
            }
        }
        if ties > 0 {
            push_3_digits(&mut self.buf, u64::from(ties));
        }
    }

    /// Changes the thread whose last event time [`Self::push_ts`] keeps to `tid`.
    #[cold]
    fn thread_last_ts(&mut self, tid: u64) -> &mut (u64, u32) {
        if let Some((old_tid, old)) = self.last_ts.take() {
            self.threads_ts.insert(old_tid, old);
        }
        let state = self.threads_ts.remove(&tid).unwrap_or((u64::MAX, 0));
        self.last_ts = Some((tid, state));
        &mut self.last_ts.as_mut().expect("just set").1
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

    /// `,"name":` and function `f`'s name, made at its first `B` event.
    fn push_name(&mut self, f: usize) {
        self.buf.extend_from_slice(b",\"name\":");
        let name = self.names.get(f).and_then(Option::as_ref);
        self.buf
            .extend_from_slice(name.map_or("\"\"", |(n, _)| n.as_str()).as_bytes());
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
                format!(",\"args\":{{\"address\":\"0x{:x}\"}}}}", frame.address),
            ));
        }
        self.push_head(b'B', tid);
        self.push_ts(tid, frame.entry_time);
        self.push_name(f);
        self.buf.extend_from_slice(b",\"cat\":\"function\"");
        if let Some((_, tail)) = &self.names[f] {
            self.buf.extend_from_slice(tail.as_bytes());
        }
        self.end_event();
    }

    fn exit(&mut self, tid: u64, time: u64, stack: &[ViewFrame], _names: &Names) {
        if self.error.is_some() {
            return;
        }
        self.push_head(b'E', tid);
        self.push_ts(tid, time);
        match stack.last().and_then(|frame| {
            let f = frame.function as usize;
            self.names.get(f).and_then(Option::as_ref).map(|_| f)
        }) {
            // The same name and args as the frame's B event, made there.
            Some(f) => {
                self.push_name(f);
                if let Some((_, tail)) = &self.names[f] {
                    self.buf.extend_from_slice(tail.as_bytes());
                }
            }
            None => self.buf.push(b'}'),
        }
        self.end_event();
    }
}

/// `n` (below 1000) as three decimal digits.
fn push_3_digits(buf: &mut Vec<u8>, n: u64) {
    buf.extend_from_slice(&[
        b'0' + (n / 100) as u8,
        b'0' + (n / 10 % 10) as u8,
        b'0' + (n % 10) as u8,
    ]);
}

/// `text` as a JSON string.
fn json(text: &str) -> String {
    serde_json::to_string(text).expect("a string always serializes")
}
