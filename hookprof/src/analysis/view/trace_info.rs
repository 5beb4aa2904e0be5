//! What a view knows before the replay: read from the trace's side chunks.

use std::path::Path;

use crate::analysis::replay::TraceSummary;
use crate::analysis::unload::Unloads;
use crate::input::format::{Chunk, FormatError, Trace};

use super::clock::*;

/// What a view needs to know before the replay: read from the chunk headers alone (no
/// record is decoded), so it costs little next to the replay.
#[derive(Clone, Debug)]
pub struct TraceInfo {
    /// Enough of the summary to symbolize (header, executable, modules, clock).
    pub summary: TraceSummary,
    /// In order of first appearance; a TID reused by a later thread appears once per THREAD
    /// chunk.
    pub threads: Vec<ThreadInfo>,
    pub clock: TimeBase,
    /// Records in the EVENTS chunks (each is one [`View`](super::View) event at most): what a progress
    /// report counts towards.
    pub records: u64,
    /// PROFILE chunks (HOOKCC_MODE=profile): the file is a call-path profile, which views
    /// of calls in time order cannot show.
    pub profiles: u64,
    /// The threads' counted calls of throttled functions (COUNTED chunks): (TID, address,
    /// calls), calls that have no records.
    pub counted: Vec<(u64, u64, u64)>,
}

/// A path's file name (the whole path if it has none), as tables and profiles name modules.
pub fn file_name(p: &Path) -> String {
    p.file_name().map_or_else(
        || p.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

impl TraceInfo {
    /// The executable's file name, `?` where the trace does not name it.
    pub fn executable_name(&self) -> String {
        self.summary
            .exe
            .as_deref()
            .map_or_else(|| "?".to_string(), file_name)
    }

    /// The file name of the module holding `address`: a shared library's, else the
    /// executable's.
    pub fn module_name(&self, address: u64) -> String {
        self.summary
            .modules
            .iter()
            .find(|m| (m.start..m.end).contains(&address))
            .and_then(|m| m.path.as_deref().map(file_name))
            .unwrap_or_else(|| self.executable_name())
    }

    /// The traced executable's path as the trace gives it, for a view's process name.
    pub fn program(&self) -> String {
        self.summary
            .exe
            .as_ref()
            .map_or_else(|| "traced program".to_string(), |p| p.display().to_string())
    }

    /// The wall-clock time of the trace's earliest record, ns since the Unix epoch: the
    /// header's start (the wall clock at the CLOCK chunk's first tick) moved by the ticks
    /// from that tick to the earliest record. `None` without a clock rate. Without a CLOCK
    /// chunk (a trace cut short) the start is taken as the earliest record's time.
    pub fn wall_start_ns(&self) -> Option<u64> {
        self.clock.ticks_per_second?;
        let start = self.summary.header.start_realtime_ns;
        let Some(clock) = &self.summary.clock else {
            return Some(start);
        };
        Some(if self.clock.base >= clock.first_tick {
            start.saturating_add(self.clock.duration(self.clock.base - clock.first_tick))
        } else {
            start.saturating_sub(self.clock.duration(clock.first_tick - self.clock.base))
        })
    }

    /// Walks the chunks of `trace`. A cut-short last chunk of an incomplete trace is left to
    /// the replay, which reports it.
    pub fn scan(trace: &Trace<'_>) -> Result<TraceInfo, FormatError> {
        // The replay checks the checksums (it reads every chunk anyway), and knows the
        // overhead and the pauses.
        let mut summary = TraceSummary::new(trace);
        let complete = trace.header().is_complete();
        let mut threads: Vec<ThreadInfo> = Vec::new();
        let mut base: Option<u64> = None;
        let mut records = 0u64;
        let mut profiles = 0u64;
        let mut counted = Vec::new();
        let (mut module_chunks, mut unloads) = (Vec::new(), Vec::new());
        for chunk in trace.chunks() {
            let chunk = match chunk {
                Ok(chunk) => chunk,
                Err(err) if !complete && err.is_truncation() => break,
                Err(err) => return Err(err),
            };
            let open_thread = |threads: &mut Vec<ThreadInfo>, tid: u64| {
                if !threads.iter().any(|t| t.tid == tid && t.sequence.is_none()) {
                    threads.push(ThreadInfo {
                        tid,
                        sequence: None,
                        name: None,
                    });
                }
            };
            match chunk.chunk {
                Chunk::Exe { path } => {
                    summary.exe.get_or_insert(path);
                }
                Chunk::Module(module) => module_chunks.push((module, chunk.offset)),
                Chunk::Unload { module, tick } => unloads.push((module, tick, chunk.offset)),
                Chunk::Events(events) => {
                    open_thread(&mut threads, chunk.thread);
                    records += events.len() as u64;
                    // Records of one thread are in time order: its first is its earliest.
                    if let Some(Ok(first)) = events.iter().next() {
                        base = Some(base.map_or(first.time, |b| b.min(first.time)));
                    }
                }
                Chunk::Thread { sequence, name } => {
                    open_thread(&mut threads, chunk.thread);
                    if let Some(t) = threads
                        .iter_mut()
                        .find(|t| t.tid == chunk.thread && t.sequence.is_none())
                    {
                        t.sequence = Some(sequence);
                        t.name = Some(name);
                    }
                }
                Chunk::Clock(clock) => summary.clock = Some(clock),
                Chunk::Profile(tree) => {
                    open_thread(&mut threads, chunk.thread);
                    profiles += 1;
                    base = Some(base.map_or(tree.first_tick, |b| b.min(tree.first_tick)));
                }
                Chunk::Folded { .. }
                | Chunk::Lost { .. }
                | Chunk::End { .. }
                | Chunk::Check(_)
                | Chunk::Overhead(_)
                | Chunk::Pause { .. }
                | Chunk::Ring { .. }
                | Chunk::Sample(_)
                | Chunk::Unknown
                | Chunk::Hole => {}
                Chunk::Writer(writer) => summary.writer = Some(writer),
                Chunk::Throttle(_) => {}
                Chunk::Counted(list) => counted.extend(
                    list.into_iter()
                        .map(|(address, calls)| (chunk.thread, address, calls, chunk.offset)),
                ),
                Chunk::Switch(switches) => {
                    summary.switches += switches.pairs.len() as u64;
                }
            }
        }
        let unloads = Unloads::new(unloads);
        summary.modules = unloads.modules(module_chunks);
        // A COUNTED chunk written before an unload counts the unloaded module's functions.
        let counted = counted
            .into_iter()
            .map(|(tid, address, calls, offset)| {
                (tid, unloads.remap_before(address, offset), calls)
            })
            .collect();
        // What the replay will find: switches, unless it reads trees (a profile).
        summary.has_switches = summary.switches > 0 && profiles == 0;
        let ticks_per_second = summary.ticks_per_second();
        Ok(TraceInfo {
            summary,
            threads,
            clock: TimeBase {
                base: base.unwrap_or(0),
                ticks_per_second,
                offset: 0,
            },
            records,
            profiles,
            counted,
        })
    }

    /// The number views show for the thread with this TID.
    pub fn label(&self, tid: u64) -> u64 {
        self.threads
            .iter()
            .find(|t| t.tid == tid)
            .map_or(tid, ThreadInfo::label)
    }
}
