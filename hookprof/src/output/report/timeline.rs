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
use crate::analysis::view::{EventClock, Names, TidIndex, TimeBase, TraceInfo, View, ViewFrame};
use crate::input::lines::SourceLines;
use crate::output::block_writer::{BlockWriter, Padded};

/// A function's `B` and `E` event ends (see [`Timeline::tails`]).
type Tails = (Padded, Padded);

/// Bytes of a thread's event head with the whole part of its time ([`ThreadOut::begin`]):
/// `,\n{"ph":"B","pid":` (18), two numbers of at most 20 digits, `,"tid":` (7), `,"ts":`
/// (6) and the whole part's at most 20 digits.
const LINE: usize = 96;

/// A thread's events' beginnings and the time of its last event.
struct ThreadOut {
    /// `,\n{"ph":"B","pid":P,"tid":T,"ts":` and the same with `E` (`head_len` bytes), each
    /// followed by the digits of `whole` (`whole_len` bytes): events come some tens of
    /// nanoseconds apart, so most have the same whole part as the one before, and an event
    /// starts with one fixed-size copy of these.
    begin: [u8; LINE],
    end: [u8; LINE],
    head_len: u8,
    /// The time of its last event in ns (ticks), and how many events before it had that
    /// time ([`Timeline::stamp`]).
    last_time: u64,
    ties: u32,
    /// The whole part of its last event's `ts` (µs, or ticks).
    whole: u64,
    whole_len: u8,
}

/// `.` and three digits, for every number below 1000: the fraction of a `ts` in µs.
static DOT_DIGITS: [[u8; 4]; 1000] = {
    let mut table = [[0u8; 4]; 1000];
    let mut n = 0;
    while n < 1000 {
        table[n] = [
            b'.',
            b'0' + (n / 100) as u8,
            b'0' + (n / 10 % 10) as u8,
            b'0' + (n % 10) as u8,
        ];
        n += 1;
    }
    table
};

/// Writes Chrome trace events to `out` as the frames come.
pub struct Timeline<W: Write> {
    w: BlockWriter<W>,
    pid: u64,
    clock: EventClock,
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
    /// The clock has a rate: `ts` is in µs with nanosecond decimals, else in ticks.
    in_ns: bool,
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
            clock: EventClock::new(TimeBase {
                base: 0,
                ticks_per_second: None,
                offset: 0,
            }),
            in_ns: false,
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
        self.clock = EventClock::new(info.clock);
        self.in_ns = info.clock.ticks_per_second.is_some();
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
        let unit = if self.in_ns { "us" } else { "ticks" };
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
        };
        let (begin, end) = (head('B'), head('E'));
        let line = |text: &str| {
            let mut line = [0u8; LINE];
            line[..text.len()].copy_from_slice(text.as_bytes());
            line
        };
        self.threads.push(ThreadOut {
            begin: line(&begin),
            end: line(&end),
            head_len: begin.len() as u8,
            last_time: u64::MAX,
            ties: 0,
            whole: u64::MAX,
            whole_len: 0,
        });
    }

    /// Thread `t`'s event at `time`: its `ts` as ns (or ticks) and the number of events
    /// before it at the same nanosecond (tick), at most 999; the digits of its whole part
    /// are then the ones after the thread's heads.
    #[inline(always)]
    fn stamp(&mut self, t: usize, time: u64) -> (u64, u32) {
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
        let whole = if self.in_ns { value / 1000 } else { value };
        if thread.whole != whole {
            new_whole(thread, whole);
        }
        (value, ties)
    }

    /// The head of an event of thread `t` (`B` or `E`) and its `ts`: microseconds with three
    /// decimals, or ticks. An event at the same nanosecond (tick) as thread `t`'s previous
    /// one gets three more decimals, the number of such events so far in picoseconds (1/1000
    /// tick), so that its place after the previous one is in its time: viewers sort events
    /// by time, and speedscope's importer pairs a `B` and an `E` of the same time by a guess
    /// that breaks calls compensated to 0 ns.
    #[inline(always)]
    fn push_head(&mut self, t: usize, time: u64, end: bool) {
        let (value, ties) = self.stamp(t, time);
        let thread = &self.threads[t];
        let len = usize::from(thread.head_len) + usize::from(thread.whole_len);
        self.w
            .put_prefix(if end { &thread.end } else { &thread.begin }, len);
        self.push_fraction(value, ties);
    }

    /// What follows the whole part of a `ts` (see [`Timeline::push_head`]).
    #[inline(always)]
    fn push_fraction(&mut self, value: u64, ties: u32) {
        if self.in_ns {
            self.w
                .buf
                .extend_from_slice(&DOT_DIGITS[(value % 1000) as usize]);
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

    /// The function's `B` and `E` event ends, made at its first event.
    #[cold]
    #[inline(never)]
    fn make_tails(&mut self, frame: &ViewFrame, names: &Names) {
        let f = frame.function as usize;
        if self.tails.len() <= f {
            self.tails.resize(f + 1, None);
        }
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
            names.entry_points[f]
        );
        self.tails[f] = Some((
            Padded::new(format!(",\"name\":{name},\"cat\":\"function\",{args}").as_bytes()),
            Padded::new(format!(",\"name\":{name},{args}").as_bytes()),
        ));
    }
}

/// Thread `thread`'s events from now on have the whole part `whole`: its digits go after
/// the heads.
#[cold]
#[inline(never)]
fn new_whole(thread: &mut ThreadOut, whole: u64) {
    let mut digits = itoa::Buffer::new();
    let text = digits.format(whole).as_bytes();
    let at = usize::from(thread.head_len);
    thread.begin[at..at + text.len()].copy_from_slice(text);
    thread.end[at..at + text.len()].copy_from_slice(text);
    thread.whole = whole;
    thread.whole_len = text.len() as u8;
}

impl<W: Write> View for Timeline<W> {
    const IN_TIME_ORDER: bool = true;

    fn enter(&mut self, tid: u64, stack: &mut [ViewFrame], names: &Names) {
        if self.w.failed() {
            return;
        }
        let Some(frame) = stack.last() else { return };
        let f = frame.function as usize;
        if self.tails.get(f).is_none_or(Option::is_none) {
            self.make_tails(frame, names);
        }
        let t = self.thread(tid);
        self.push_head(t, frame.entry_time, false);
        if let Some((begin, _)) = &self.tails[f] {
            self.w.put(begin);
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
        self.push_head(t, from, false);
        self.w.buf.extend_from_slice(b",\"name\":\"");
        self.w.buf.extend_from_slice(name.as_bytes());
        self.w
            .buf
            .extend_from_slice(b"\",\"cat\":\"switched out\",\"args\":{}}");
        self.end_event();
        self.push_head(t, to, true);
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
        let (value, ties) = self.stamp(t, time);
        let thread = &self.threads[t];
        let at = usize::from(thread.head_len);
        self.w
            .buf
            .extend_from_slice(&thread.begin[at..at + usize::from(thread.whole_len)]);
        self.push_fraction(value, ties);
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
        self.push_head(t, time, true);
        // The same name and args as the frame's B event, made there.
        let tail = stack
            .last()
            .and_then(|frame| self.tails.get(frame.function as usize))
            .and_then(Option::as_ref);
        match tail {
            Some((_, end)) => self.w.put(end),
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
