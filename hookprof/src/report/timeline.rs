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
    clock: TimeBase,
    pid: u64,
    /// Each function's name as a JSON string (with its quotes), made at its first event.
    names: Vec<Option<String>>,
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
            clock: info.clock,
            pid,
            names: Vec::new(),
            error: None,
            events: 0,
        })
    }

    /// Ends the file and returns the writer, or the first write error.
    pub fn finish(mut self) -> io::Result<W> {
        if let Some(err) = self.error.take() {
            return Err(err);
        }
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

    fn ts(&self, time: u64) -> Ts {
        Ts {
            value: self.clock.time(time),
            decimals: self.clock.ticks_per_second.is_some(),
        }
    }

    fn check(&mut self, result: io::Result<()>) {
        if let Err(err) = result {
            self.error.get_or_insert(err);
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
        let name = self.names[f].get_or_insert_with(|| json(names.name(frame.function)));
        let result = write!(
            self.out,
            ",\n{{\"ph\":\"B\",\"pid\":{},\"tid\":{tid},\"ts\":{},\"name\":{name},\"cat\":\"function\",\"args\":{{\"depth\":{},\"address\":\"0x{:x}\"}}}}",
            self.pid,
            Ts {
                value: self.clock.time(frame.entry_time),
                decimals: self.clock.ticks_per_second.is_some(),
            },
            stack.len(),
            frame.address
        );
        self.events += 1;
        self.check(result);
    }

    fn exit(&mut self, tid: u64, time: u64, _stack: &[ViewFrame], _names: &Names) {
        if self.error.is_some() {
            return;
        }
        let ts = self.ts(time);
        let result = write!(
            self.out,
            ",\n{{\"ph\":\"E\",\"pid\":{},\"tid\":{tid},\"ts\":{ts}}}",
            self.pid
        );
        self.events += 1;
        self.check(result);
    }
}

/// A timestamp in microseconds with three decimals, from nanoseconds; or plain ticks.
struct Ts {
    value: u64,
    decimals: bool,
}

impl std::fmt::Display for Ts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.decimals {
            write!(f, "{}.{:03}", self.value / 1000, self.value % 1000)
        } else {
            write!(f, "{}", self.value)
        }
    }
}

/// `text` as a JSON string.
fn json(text: &str) -> String {
    serde_json::to_string(text).expect("a string always serializes")
}
