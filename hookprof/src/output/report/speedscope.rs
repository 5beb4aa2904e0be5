//! `hookprof speedscope`: speedscope's file format
//! (<https://www.speedscope.app/file-format-schema.json>), one evented profile per thread.
//!
//! Each profile is a list of `O` (open frame) and `C` (close frame) events with `at` in
//! nanoseconds since the trace's earliest record (unit `none`, ticks, without a clock rate),
//! in time order and nested. Speedscope wants each thread's events together, and the trace
//! holds them interleaved by buffer flushes: instead of keeping them in memory, the trace is
//! replayed once per thread (the replay is several times faster than the writing), so
//! memory stays flat. The `shared.frames` list (names) comes after the profiles, when every
//! function is known; JSON does not care about the order of an object's members.

use std::io::{self, Write};

use crate::analysis::ids::HashMap;
use crate::analysis::view::{Names, TimeBase, View, ViewFrame};
use crate::output::block_writer::BlockWriter;

/// Writes the events of one thread at a time; keeps the frame numbers across threads.
pub struct Speedscope<W: Write> {
    w: BlockWriter<W>,
    clock: TimeBase,
    /// Frame number by function address, and the frames' names.
    frames: HashMap<u64, u32>,
    frame_names: Vec<String>,
    /// This pass's [`ViewFrame::function`] → frame number.
    local: Vec<u32>,
    /// Events written in the current profile, and its first and last time.
    events: u64,
    first: Option<u64>,
    last: u64,
    profiles: usize,
}

const UNSET: u32 = u32::MAX;

impl<W: Write> Speedscope<W> {
    pub fn start(mut out: W, clock: TimeBase) -> io::Result<Self> {
        write!(
            out,
            "{{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\
             \"exporter\":\"hookprof {}\",\"activeProfileIndex\":0,\"profiles\":[",
            env!("CARGO_PKG_VERSION")
        )?;
        Ok(Speedscope {
            w: BlockWriter::new(out),
            clock,
            frames: HashMap::default(),
            frame_names: Vec::new(),
            local: Vec::new(),
            events: 0,
            first: None,
            last: 0,
            profiles: 0,
        })
    }

    /// Starts the profile of one thread (before its replay).
    pub fn begin_thread(&mut self, name: &str) -> io::Result<()> {
        if self.profiles > 0 {
            self.w.out.write_all(b",")?;
        }
        self.profiles += 1;
        self.local.clear();
        self.events = 0;
        self.first = None;
        self.last = 0;
        write!(
            self.w.out,
            "\n{{\"type\":\"evented\",\"name\":{},\"unit\":\"{}\",\"events\":[",
            json(name),
            if self.clock.ticks_per_second.is_some() {
                "nanoseconds"
            } else {
                "none"
            }
        )
    }

    /// Ends the profile of the thread (after its replay).
    pub fn end_thread(&mut self) -> io::Result<()> {
        self.w.flush_buffer()?;
        let start = self.first.unwrap_or(0);
        write!(
            self.w.out,
            "],\"startValue\":{start},\"endValue\":{}}}",
            self.last.max(start)
        )
    }

    /// Ends the file with the frames' names and returns the writer.
    pub fn finish(mut self, title: &str) -> io::Result<W> {
        write!(
            self.w.out,
            "\n],\"name\":{},\"shared\":{{\"frames\":[",
            json(title)
        )?;
        for (i, name) in self.frame_names.iter().enumerate() {
            if i > 0 {
                self.w.out.write_all(b",")?;
            }
            write!(self.w.out, "\n{{\"name\":{}}}", json(name))?;
        }
        self.w.out.write_all(b"\n]}}\n")?;
        self.w.out.flush()?;
        Ok(self.w.out)
    }

    fn frame(&mut self, function: u32, names: &Names) -> u32 {
        let f = function as usize;
        if self.local.len() <= f {
            self.local.resize(f + 1, UNSET);
        }
        if self.local[f] == UNSET {
            let address = names.addresses[f];
            let next = self.frame_names.len() as u32;
            let frame = *self.frames.entry(address).or_insert(next);
            if frame == next {
                self.frame_names.push(names.name(function).to_string());
            }
            self.local[f] = frame;
        }
        self.local[f]
    }

    fn event(&mut self, kind: u8, frame: u32, time: u64) {
        let at = self.clock.time(time);
        self.first.get_or_insert(at);
        self.last = self.last.max(at);
        if self.events > 0 {
            self.w.buf.push(b',');
        }
        self.events += 1;
        self.w.buf.extend_from_slice(b"\n{\"type\":\"");
        self.w.buf.push(kind);
        self.w.buf.extend_from_slice(b"\",\"frame\":");
        self.w
            .buf
            .extend_from_slice(itoa::Buffer::new().format(frame).as_bytes());
        self.w.buf.extend_from_slice(b",\"at\":");
        self.w
            .buf
            .extend_from_slice(itoa::Buffer::new().format(at).as_bytes());
        self.w.buf.push(b'}');
        self.w.end_event();
    }
}

impl<W: Write> View for Speedscope<W> {
    const IN_TIME_ORDER: bool = true;

    fn enter(&mut self, _tid: u64, stack: &mut [ViewFrame], names: &Names) {
        let Some(frame) = stack.last() else { return };
        let (function, time) = (frame.function, frame.entry_time);
        let f = self.frame(function, names);
        self.event(b'O', f, time);
    }

    fn exit(&mut self, _tid: u64, time: u64, stack: &[ViewFrame], names: &Names) {
        let Some(frame) = stack.last() else { return };
        let f = self.frame(frame.function, names);
        self.event(b'C', f, time);
    }
}

fn json(text: &str) -> String {
    serde_json::to_string(text).expect("a string always serializes")
}
