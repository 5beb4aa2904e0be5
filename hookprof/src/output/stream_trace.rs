//! The target's record stream, decoded by [`crate::input::stream::Decoder`], written as a
//! `.hktrace` file as it comes ([`TraceBuilder`], `hookprof record`).

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

use crate::input::format::{
    Clock, Endian, Header, Module, Record, RecordKind, Writer, FLAG_COMPLETE,
};
use crate::input::stream::{Event, StreamCounts};

/// Records of one thread are written as a PACKED chunk once this many are held.
const CHUNK_RECORDS: usize = 65536;
/// Threads: 1 is the firmware before the first task switch; tasks get 2, 3, … as they are
/// created (a task switched in that was never created gets the next number too).
const MAIN_THREAD: u64 = 1;

/// Writes the decoded stream as a `.hktrace` file, chunk by chunk, and completes its header at
/// [`TraceBuilder::finish`].
pub struct TraceBuilder {
    writer: Writer<BufWriter<File>>,
    file: File,
    header: Header,
    thread: u64,
    held: Vec<Record>,
    /// Task handle → thread (the latest task created with that handle); the names by thread.
    tasks: HashMap<u64, u64>,
    names: Vec<(u64, String)>,
    /// The losses so far that took task switches too (any task may have run meanwhile), and
    /// per thread how many of them it had seen when it last ran: a thread that runs again
    /// after one gets one gap marker when it is switched in (at the finish, a thread that
    /// never ran again), so that the markers stay as many as the switches, not losses × tasks.
    /// A marker's time is the switch's: the gap lies before it, and the file's chunks stay in
    /// the stream's order.
    gaps: usize,
    gaps_seen: HashMap<u64, usize>,
    /// Threads with a chunk: only they get a THREAD chunk.
    used: std::collections::BTreeSet<u64>,
    next_thread: u64,
    clock: Clock,
    /// What the stream said, for the summary.
    pub counts: StreamCounts,
    /// The threads given a RING chunk for the records a flight recorder wrote over before its
    /// window: the one running at the window's start, and each other the first time it runs
    /// with no records before (its exits of frames entered before the window are then told
    /// apart from unmatched ones).
    ring_marked: std::collections::BTreeSet<u64>,
    started: bool,
    last_time: u64,
}

impl TraceBuilder {
    /// Creates `path` (replacing it) with an incomplete header; `endian` is the target's
    /// (the ELF's), in which the file is written. `exe`, the firmware's ELF, goes in the EXE
    /// chunk (as an absolute path): reports then find it without `--exe`.
    pub fn create(path: &Path, endian: Endian, exe: Option<&Path>) -> io::Result<Self> {
        // Written where it goes, not through a temporary renamed at the end (hookprof's
        // policy for outputs made from an input, crate::output::file): a recorder killed part
        // way leaves a trace that decodes up to there (its header says it is incomplete), as the
        // runtime's own trace files do. Never through a symbolic link, as everywhere.
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.custom_flags(libc::O_NOFOLLOW);
        }
        let file = options.open(path)?;
        let mut header = Header::new(endian);
        header.pointer_size = 4;
        let mut writer = Writer::new(BufWriter::new(file.try_clone()?), &header)?;
        if let Some(exe) = exe {
            writer.exe(&std::path::absolute(exe)?)?;
        }
        // The firmware is the whole address space, linked where it runs (as trace_baremetal.c
        // writes it): the executable is given with --exe.
        writer.module(&Module {
            bias: 0,
            start: 0,
            end: u64::MAX,
            path: None,
        })?;
        Ok(TraceBuilder {
            writer,
            file,
            header,
            thread: MAIN_THREAD,
            held: Vec::new(),
            tasks: HashMap::new(),
            names: vec![(MAIN_THREAD, "main".to_string())],
            gaps: 0,
            gaps_seen: HashMap::new(),
            used: std::collections::BTreeSet::new(),
            next_thread: MAIN_THREAD + 1,
            clock: Clock {
                ticks_per_second: 0,
                first_tick: 0,
                last_tick: 0,
                header_check: None,
            },
            counts: StreamCounts::default(),
            ring_marked: std::collections::BTreeSet::new(),
            started: false,
            last_time: 0,
        })
    }

    fn flush_held(&mut self) -> io::Result<()> {
        if !self.held.is_empty() {
            self.used.insert(self.thread);
            self.writer.packed(self.thread, &self.held)?;
            self.held.clear();
        }
        Ok(())
    }

    /// The thread of `task`: one look-up, whatever the tasks (before, a search of them all
    /// made 100 000 switches to tasks never created take 8 s).
    fn thread_of(&mut self, task: u64) -> u64 {
        if let Some(&thread) = self.tasks.get(&task) {
            return thread;
        }
        let thread = self.next_thread;
        self.next_thread += 1;
        self.tasks.insert(task, thread);
        self.names.push((thread, format!("task {task:#x}")));
        thread
    }

    /// Takes one decoded record.
    pub fn event(&mut self, event: Event) -> io::Result<()> {
        self.counts.count(&event);
        match event {
            Event::Start {
                pointer_size,
                ticks_per_second,
                time,
            } => {
                if !self.started {
                    self.header.pointer_size = pointer_size;
                    self.clock.ticks_per_second = ticks_per_second;
                    self.clock.first_tick = time;
                    self.started = true;
                }
                self.last_time = time;
            }
            Event::Call {
                time,
                address,
                exit,
            } => {
                self.last_time = time;
                self.held.push(Record {
                    time,
                    kind: if exit {
                        RecordKind::Exit
                    } else {
                        RecordKind::Entry
                    },
                    address: address & !crate::input::format::EXIT_BIT,
                });
                if self.held.len() >= CHUNK_RECORDS {
                    self.flush_held()?;
                }
            }
            Event::Escape { time } => {
                self.last_time = time;
                self.held.push(Record {
                    time,
                    kind: RecordKind::Exit,
                    address: 0,
                });
            }
            Event::Lost { time, count, task } => {
                // Where the records were dropped: a LOST chunk of the task running then, after
                // its records before the loss. If task switches were dropped too, any task
                // may have run meanwhile: every other thread gets a marker of no records
                // there (a gap: its open frames may have lost their exits), and the task
                // running now is switched in.
                self.last_time = self.last_time.max(time);
                self.flush_held()?;
                self.writer.lost_at(self.thread, count, time)?;
                self.used.insert(self.thread);
                if let Some(task) = task {
                    // Every other thread with records so far has a gap here: each is told when
                    // it runs again (or at the finish), once however many losses it missed.
                    self.gaps += 1;
                    let next = self.thread_of(task);
                    self.switch_to(next, time)?;
                }
            }
            Event::Switch { time, task } => {
                self.last_time = self.last_time.max(time);
                self.flush_held()?;
                let next = self.thread_of(task);
                self.switch_to(next, time)?;
            }
            Event::Created { time, task, name } => {
                self.last_time = self.last_time.max(time);
                let thread = self.next_thread;
                self.next_thread += 1;
                self.tasks.insert(task, thread);
                self.names.push((thread, name));
            }
            Event::Ring { time, count } => {
                // A flight recorder's window begins here: a RING chunk of the running thread
                // (docs/trace-format.md), so that its exits of frames entered before the
                // window are told apart from unmatched ones.
                self.last_time = self.last_time.max(time);
                if count != 0 {
                    self.flush_held()?;
                    self.ring_chunk(self.thread, count)?;
                }
            }
            Event::Name { time, task, name } => {
                // A flight recorder's finish names the tasks: a thread known only by its
                // handle (its creation written over) takes the name.
                self.last_time = self.last_time.max(time);
                if let Some(&thread) = self.tasks.get(&task) {
                    let placeholder = format!("task {task:#x}");
                    if let Some(entry) = self
                        .names
                        .iter_mut()
                        .find(|(t, n)| *t == thread && *n == placeholder)
                    {
                        entry.1 = name;
                    }
                }
            }
            Event::End { time, .. } => {
                self.last_time = self.last_time.max(time);
            }
        }
        Ok(())
    }

    /// The running thread leaves the CPU (its records written) to `next` at `time`; `next`
    /// gets a gap marker first if a loss with task switches came since it last ran.
    fn switch_to(&mut self, next: u64, time: u64) -> io::Result<()> {
        self.gaps_seen.insert(self.thread, self.gaps);
        self.thread = next;
        if self.counts.overwritten != 0
            && !self.used.contains(&next)
            && !self.ring_marked.contains(&next)
        {
            // Which task's records were written over is not known: the count is the running
            // thread's; the others' chunks carry none (their frames go on), and still mark
            // their exits of frames entered before the window.
            self.ring_chunk(next, 0)?;
        }
        self.mark_missed_gap(next, time)
    }

    /// A RING chunk of `thread`: `count` records written over before the flight recorder's
    /// window.
    fn ring_chunk(&mut self, thread: u64, count: u64) -> io::Result<()> {
        let bytes = match self.header.endian {
            Endian::Little => count.to_le_bytes(),
            Endian::Big => count.to_be_bytes(),
        };
        self.writer
            .raw_chunk(crate::input::format::chunk_type::RING, thread, &bytes)?;
        self.ring_marked.insert(thread);
        self.used.insert(thread);
        Ok(())
    }

    /// A gap marker for `thread` at `time` if a loss with task switches came since it last
    /// ran and it has records before (a gap means nothing to a thread without).
    fn mark_missed_gap(&mut self, thread: u64, time: u64) -> io::Result<()> {
        let seen = self.gaps_seen.get(&thread).copied().unwrap_or(0);
        if seen < self.gaps && self.used.contains(&thread) {
            self.writer.lost_at(thread, 0, time)?;
        }
        self.gaps_seen.insert(thread, self.gaps);
        Ok(())
    }

    /// The stream was cut where it should have gone on (the connection reset, a byte that is
    /// not the stream's): what is held is written, then a LOST chunk of no counted records at
    /// the last time read, a gap where an unknown number of records is missing, and the trace
    /// is finished but not marked complete, so that every report says it is cut short.
    pub fn finish_cut(mut self) -> io::Result<()> {
        self.flush_held()?;
        self.writer.lost_at(self.thread, 0, self.last_time)?;
        self.used.insert(self.thread);
        self.counts.lost_markers += 1;
        self.finish_with(0)
    }

    /// Writes what is held, each thread's name, the CLOCK chunk and the complete header.
    pub fn finish(self) -> io::Result<()> {
        self.finish_with(FLAG_COMPLETE)
    }

    fn finish_with(mut self, flags: u64) -> io::Result<()> {
        self.flush_held()?;
        let running = self.thread;
        self.gaps_seen.insert(running, self.gaps);
        let threads: Vec<u64> = self.used.iter().copied().collect();
        for thread in threads {
            self.mark_missed_gap(thread, self.last_time)?;
        }
        let names = std::mem::take(&mut self.names);
        for (thread, name) in names.iter().filter(|(t, _)| self.used.contains(t)) {
            self.writer.thread(*thread, *thread, name)?;
        }
        self.clock.last_tick = self.last_time;
        self.writer.clock(&self.clock)?;
        let mut out = self.writer.into_inner();
        out.flush()?;
        drop(out);
        self.header.flags = flags;
        self.header.ticks_per_second = self.clock.ticks_per_second;
        if flags & FLAG_COMPLETE != 0 {
            self.header.records = self.counts.calls;
            self.header.lost = self.counts.lost;
        }
        self.file.seek(SeekFrom::Start(0))?;
        self.file.write_all(&self.header.encode())?;
        self.file.sync_all()
    }
}
