//! `hookprof timeline`: every call as Chrome trace-event JSON, which Perfetto UI
//! (ui.perfetto.dev), chrome://tracing and speedscope load.
//!
//! The file is one object `{"traceEvents":[…],"displayTimeUnit":"ns","otherData":{…}}`.
//! Each thread is one track: `M` (metadata) events name the process and the threads, then
//! every shown call is a `B` event at its entry (name, `cat` "function", `args.address`, the
//! function's entry point, and `args.source`, its `file:line`, where the executable's DWARF
//! tells) and an `E` event with the same name and args at its exit. Events are
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

use crate::analysis::replay::SwitchReason;
use crate::analysis::view::{Names, TidIndex, TimeBase, TraceInfo, View, ViewFrame};
use crate::input::lines::SourceLines;
use crate::output::block_writer::BlockWriter;

/// A function's `B` and `E` event ends (see [`Timeline::tails`]).
type Tails = (Box<[u8]>, Box<[u8]>);

/// A thread's events' beginnings and the time of its last event.
struct ThreadOut {
    /// `,\n{"ph":"B","pid":P,"tid":T,"ts":` and the same with `E`.
    begin: Box<[u8]>,
    end: Box<[u8]>,
    /// The time of its last event in ns (ticks), and how many events before it had that
    /// time ([`Timeline::push_ts`]).
    last_time: u64,
    ties: u32,
    /// The whole part of its last event's `ts` (µs, or ticks) and its digits: events come
    /// some tens of nanoseconds apart, so most have the same whole part as the one before.
    whole: u64,
    whole_digits: [u8; 20],
    whole_len: u8,
}

/// Writes Chrome trace events to `out` as the frames come.
pub struct Timeline<W: Write> {
    w: BlockWriter<W>,
    pid: u64,
    clock: TimeBase,
    /// Per function, made at its first event: the rest of its `B` events after `ts`
    /// (`,"name":…,"cat":"function","args":{"address":"0x…"}}`) and of its `E` events
    /// (the same without `cat`). Hex and JSON formatting per event cost more than all the
    /// rest of an event.
    tails: Vec<Option<Tails>>,
    threads: Vec<ThreadOut>,
    /// TID → index in `threads`.
    tids: TidIndex,
    /// The executable's DWARF lines, for each function's `args.source`.
    lines: Option<SourceLines>,
    /// Processes added so far.
    processes: u32,
    /// `--time=cpu`: each interval a thread was switched out is a slice of its own
    /// ([`SwitchReason::slice_name`]) inside the call that was open.
    switched_out: bool,
    pub events: u64,
}

impl<W: Write> Timeline<W> {
    /// Starts the file: the opening and the metadata events of the process and its threads.
    pub fn start(out: W, info: &TraceInfo) -> io::Result<Self> {
        let mut timeline = Timeline::begin(out);
        timeline.process(info, info.summary.header.pid);
        timeline.w.flush_buffer()?;
        Ok(timeline)
    }

    /// Starts a file of several processes' traces, each added by [`Timeline::process`].
    pub fn begin(out: W) -> Self {
        let mut w = BlockWriter::new(out);
        w.buf.extend_from_slice(b"{\"traceEvents\":[");
        Timeline {
            w,
            pid: 0,
            clock: TimeBase {
                base: 0,
                ticks_per_second: None,
                offset: 0,
            },
            tails: Vec::new(),
            lines: None,
            threads: Vec::new(),
            tids: TidIndex::default(),
            processes: 0,
            switched_out: false,
            events: 0,
        }
    }

    /// Draws the time switched out as slices of their own (`hookprof timeline --time=cpu`).
    pub fn with_switched_out(mut self, on: bool) -> Self {
        self.switched_out = on;
        self
    }

    /// The metadata events of a process (named after the executable, shown as `pid`) and its
    /// threads; the events that follow, until the next call, are that trace's.
    pub fn process(&mut self, info: &TraceInfo, pid: u64) {
        let exe = info.program();
        let b = &mut self.w.buf;
        let comma = if self.processes == 0 { "" } else { "," };
        self.processes += 1;
        // Writing to a Vec cannot fail.
        let _ = write!(
            b,
            "{comma}\n{{\"ph\":\"M\",\"pid\":{pid},\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":{}}}}}",
            json(&exe)
        );
        for t in &info.threads {
            let name = t.title();
            let _ = write!(
                b,
                ",\n{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":{}}}}}",
                t.tid,
                json(&name)
            );
            if let Some(seq) = t.sequence {
                let _ = write!(
                    b,
                    ",\n{{\"ph\":\"M\",\"pid\":{pid},\"tid\":{},\"name\":\"thread_sort_index\",\"args\":{{\"sort_index\":{seq}}}}}",
                    t.tid
                );
            }
        }
        self.pid = pid;
        self.clock = info.clock;
        self.tails.clear();
        self.threads.clear();
        self.tids = TidIndex::default();
        self.lines = None;
    }

    /// The current process's DWARF lines ([`Timeline::with_lines`]).
    pub fn set_lines(&mut self, lines: Option<SourceLines>) {
        self.lines = lines;
    }

    /// Gives each function's events `args.source`, `file:line` of its entry point, where
    /// `lines` knows it.
    pub fn with_lines(mut self, lines: Option<SourceLines>) -> Self {
        self.lines = lines;
        self
    }

    /// Ends the file and returns the writer, or the first write error.
    pub fn finish(mut self) -> io::Result<W> {
        self.w.flush_buffer()?;
        let unit = if self.clock.ticks_per_second.is_some() {
            "us"
        } else {
            "ticks"
        };
        // `--time=cpu`: what a reader of the file needs to know about its slices.
        let time = if self.switched_out {
            ",\"time\":\"wall clock; the time each thread was switched out is drawn as slices \
             named switched out (--time=cpu)\""
        } else {
            ""
        };
        write!(
            self.w.out,
            "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{{\"creator\":\"hookprof {}\",\"unit\":\"{unit}\"{time}}}}}\n",
            env!("CARGO_PKG_VERSION")
        )?;
        self.w.out.flush()?;
        Ok(self.w.out)
    }
}

impl<W: Write> Timeline<W> {
    /// The index of `tid` in `threads`.
    #[inline]
    fn thread(&mut self, tid: u64) -> usize {
        let (index, new) = self.tids.index(tid);
        if new {
            self.add_thread(tid);
        }
        index
    }

    #[cold]
    fn add_thread(&mut self, tid: u64) {
        let head = |phase: char| {
            format!(
                ",\n{{\"ph\":\"{phase}\",\"pid\":{},\"tid\":{tid},\"ts\":",
                self.pid
            )
            .into_bytes()
            .into_boxed_slice()
        };
        self.threads.push(ThreadOut {
            begin: head('B'),
            end: head('E'),
            last_time: u64::MAX,
            ties: 0,
            whole: u64::MAX,
            whole_digits: [0; 20],
            whole_len: 0,
        });
    }

    /// `ts` as JSON: microseconds with three decimals, or ticks. An event at the same
    /// nanosecond (tick) as thread `t`'s previous one gets three more decimals, the number
    /// of such events so far in picoseconds (1/1000 tick), so that its place after the
    /// previous one is in its time: viewers sort events by time, and speedscope's importer
    /// pairs a `B` and an `E` of the same time by a guess that breaks calls compensated to
    /// 0 ns.
    #[inline]
    fn push_ts(&mut self, t: usize, time: u64) {
        let value = self.clock.time(time);
        let thread = &mut self.threads[t];
        let ties = if thread.last_time == value {
            thread.ties = (thread.ties + 1).min(999);
            thread.ties
        } else {
            thread.last_time = value;
            thread.ties = 0;
            0
        };
        let in_ns = self.clock.ticks_per_second.is_some();
        let whole = if in_ns { value / 1000 } else { value };
        if thread.whole != whole {
            let mut digits = itoa::Buffer::new();
            let text = digits.format(whole).as_bytes();
            thread.whole = whole;
            thread.whole_digits[..text.len()].copy_from_slice(text);
            thread.whole_len = text.len() as u8;
        }
        self.w
            .buf
            .extend_from_slice(&thread.whole_digits[..usize::from(thread.whole_len)]);
        if in_ns {
            self.w.buf.push(b'.');
            push_3_digits(&mut self.w.buf, value % 1000);
        } else if ties > 0 {
            self.w.buf.push(b'.');
        }
        if ties > 0 {
            push_3_digits(&mut self.w.buf, u64::from(ties));
        }
    }

    fn end_event(&mut self) {
        self.events += 1;
        self.w.end_event();
    }
}

impl<W: Write> View for Timeline<W> {
    const IN_TIME_ORDER: bool = true;

    fn enter(&mut self, tid: u64, stack: &mut [ViewFrame], names: &Names) {
        if self.w.failed() {
            return;
        }
        let Some(frame) = stack.last() else { return };
        let f = frame.function as usize;
        if self.tails.len() <= f {
            self.tails.resize(f + 1, None);
        }
        if self.tails[f].is_none() {
            let name = json(names.name(frame.function));
            let source = self
                .lines
                .as_ref()
                .and_then(|l| l.location(frame.address))
                .map_or_else(String::new, |(file, line)| {
                    format!(",\"source\":{}", json(&format!("{file}:{line}")))
                });
            let args = format!(
                "\"args\":{{\"address\":\"0x{:x}\"{source}}}}}",
                frame.address
            );
            self.tails[f] = Some((
                format!(",\"name\":{name},\"cat\":\"function\",{args}")
                    .into_bytes()
                    .into_boxed_slice(),
                format!(",\"name\":{name},{args}")
                    .into_bytes()
                    .into_boxed_slice(),
            ));
        }
        let t = self.thread(tid);
        self.w.buf.extend_from_slice(&self.threads[t].begin);
        self.push_ts(t, frame.entry_time);
        if let Some((begin, _)) = &self.tails[f] {
            self.w.buf.extend_from_slice(begin);
        }
        self.end_event();
    }

    /// A switched-out interval: a `B` and an `E` event named `switched out`, nested in the
    /// open call's (the replay gives it between two of the thread's records).
    fn switched_out(
        &mut self,
        tid: u64,
        from: u64,
        to: u64,
        reason: SwitchReason,
        _stack: &[ViewFrame],
        _: &Names,
    ) {
        if !self.switched_out || self.w.failed() {
            return;
        }
        // Its own name and category, so that a viewer colours it apart from the calls and a
        // query finds it (`cat == "switched out"`).
        let name = reason.slice_name();
        let t = self.thread(tid);
        self.w.buf.extend_from_slice(&self.threads[t].begin);
        self.push_ts(t, from);
        self.w.buf.extend_from_slice(b",\"name\":\"");
        self.w.buf.extend_from_slice(name.as_bytes());
        self.w
            .buf
            .extend_from_slice(b"\",\"cat\":\"switched out\",\"args\":{}}");
        self.end_event();
        self.w.buf.extend_from_slice(&self.threads[t].end);
        self.push_ts(t, to);
        self.w.buf.extend_from_slice(b",\"name\":\"");
        self.w.buf.extend_from_slice(name.as_bytes());
        self.w.buf.extend_from_slice(b"\",\"args\":{}}");
        self.end_event();
    }

    /// A loss is an instant event on the thread's track where it happened:
    /// `{"ph":"i","s":"t","name":"lost N records","cat":"lost","args":{"lost":N}}`.
    fn lost(&mut self, tid: u64, time: u64, count: u64, _names: &Names) {
        if self.w.failed() {
            return;
        }
        let t = self.thread(tid);
        let head = format!(
            ",\n{{\"ph\":\"i\",\"s\":\"t\",\"pid\":{},\"tid\":{tid},\"ts\":",
            self.pid
        );
        self.w.buf.extend_from_slice(head.as_bytes());
        self.push_ts(t, time);
        let tail = format!(
            ",\"name\":\"lost {count} records\",\"cat\":\"lost\",\"args\":{{\"lost\":{count}}}}}"
        );
        self.w.buf.extend_from_slice(tail.as_bytes());
        self.end_event();
    }

    fn exit(&mut self, tid: u64, time: u64, stack: &[ViewFrame], _names: &Names) {
        if self.w.failed() {
            return;
        }
        let t = self.thread(tid);
        self.w.buf.extend_from_slice(&self.threads[t].end);
        self.push_ts(t, time);
        // The same name and args as the frame's B event, made there.
        let tail = stack
            .last()
            .and_then(|frame| self.tails.get(frame.function as usize))
            .and_then(Option::as_ref);
        match tail {
            Some((_, end)) => self.w.buf.extend_from_slice(end),
            None => self.w.buf.push(b'}'),
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
