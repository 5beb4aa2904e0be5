//! `hookprof callgrind`: a callgrind profile (the format of valgrind's callgrind, read by
//! `callgrind_annotate` and KCachegrind), with one event, the time in nanoseconds (ticks
//! without a clock rate).
//!
//! Every function is written with its exclusive time (`fn=` and one cost line) and its
//! calls to other functions (`cfn=`, `calls=N`, and the inclusive time of those calls), all
//! threads together. With DWARF in the executable (`-g`), each function is put at the file
//! and line of its entry point (`fl=`, `cfi=`), and its calls at that line too (the trace has
//! no call sites); without, at line 0 of file `???`. A function calling itself directly gets
//! an arc with its call count and no cost, so that the inclusive time `callgrind_annotate --inclusive=yes` derives for a recursive
//! function is not counted twice; through other functions recursion is counted as valgrind
//! counts it (once per level). The format needs the whole profile: memory grows with the
//! functions and call arcs, not with the records.

use std::io::{self, Write};
use std::path::Path;

use crate::analysis::ids::HashMap;
use crate::analysis::replay::Aggregate;
use crate::analysis::view::{Names, TimeBase, TraceInfo, View, ViewFrame};

/// Exclusive time per function and calls per caller→callee arc, in ticks.
#[derive(Default)]
pub struct CallgrindProfile {
    /// Indexed by the function's number in [`Names`].
    exclusive: Vec<u64>,
    /// Functions with at least one closed frame.
    seen: Vec<bool>,
    /// (caller, callee) → (calls, inclusive ticks).
    arcs: HashMap<(u32, u32), (u64, u64)>,
}

impl CallgrindProfile {
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes the callgrind file. `info` gives the command and process id; `location`
    /// the source file and line of a function's entry point (by address) when known.
    pub fn write(
        &self,
        info: &TraceInfo,
        exe: Option<&Path>,
        names: &Names,
        clock: &TimeBase,
        location: &dyn Fn(u64) -> Option<(String, u32)>,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let mut functions: Vec<u32> = (0..self.seen.len() as u32)
            .filter(|&f| self.seen[f as usize])
            .collect();
        functions.sort_by(|&a, &b| {
            names
                .name(a)
                .cmp(names.name(b))
                .then(names.addresses[a as usize].cmp(&names.addresses[b as usize]))
        });
        let mut arcs: HashMap<u32, Vec<(u32, u64, u64)>> = HashMap::default();
        for (&(caller, callee), &(calls, ticks)) in &self.arcs {
            arcs.entry(caller).or_default().push((callee, calls, ticks));
        }
        let total: u64 = functions
            .iter()
            .map(|&f| clock.duration(self.exclusive[f as usize]))
            .sum();
        let event = if clock.ticks_per_second.is_some() {
            "ns"
        } else {
            "ticks"
        };
        let cmd = exe
            .map(Path::to_path_buf)
            .or_else(|| info.summary.exe.clone())
            .map_or_else(|| "traced program".to_string(), |p| p.display().to_string());
        writeln!(out, "# callgrind format")?;
        writeln!(out, "version: 1")?;
        writeln!(out, "creator: hookprof {}", env!("CARGO_PKG_VERSION"))?;
        writeln!(out, "pid: {}", info.summary.header.pid)?;
        writeln!(out, "cmd: {}", one_line(&cmd))?;
        writeln!(out, "positions: line")?;
        writeln!(out, "event: {event} : Time ({event})")?;
        writeln!(out, "events: {event}")?;
        writeln!(out, "summary: {total}")?;
        writeln!(out)?;
        // Per function: its file's number (1 is `???`) and line; file names by number.
        let mut files: Vec<String> = vec!["???".to_string()];
        let mut file_ids: HashMap<String, usize> = HashMap::default();
        let places: Vec<(usize, u32)> = (0..names.names.len())
            .map(|f| match location(names.addresses[f]) {
                Some((file, line)) => {
                    let id = *file_ids.entry(file.clone()).or_insert_with(|| {
                        files.push(file);
                        files.len()
                    });
                    (id, line)
                }
                None => (1, 0),
            })
            .collect();
        let mut current_file = 1;
        writeln!(out, "fl=(1) ???")?;
        for &f in &functions {
            let (file, line) = places[f as usize];
            if file != current_file {
                writeln!(out, "fl=({file}) {}", one_line(&files[file - 1]))?;
                current_file = file;
            }
            writeln!(out, "fn=({}) {}", f + 1, one_line(names.name(f)))?;
            writeln!(out, "{line} {}", clock.duration(self.exclusive[f as usize]))?;
            let mut calls = arcs.remove(&f).unwrap_or_default();
            calls.sort_by(|a, b| {
                names
                    .name(a.0)
                    .cmp(names.name(b.0))
                    .then(names.addresses[a.0 as usize].cmp(&names.addresses[b.0 as usize]))
            });
            for (callee, count, ticks) in calls {
                // The trace has no call sites: calls are put at the caller's first line.
                let (callee_file, callee_line) = places[callee as usize];
                if callee_file != file {
                    writeln!(
                        out,
                        "cfi=({callee_file}) {}",
                        one_line(&files[callee_file - 1])
                    )?;
                }
                writeln!(out, "cfn=({}) {}", callee + 1, one_line(names.name(callee)))?;
                writeln!(out, "calls={count} {callee_line}")?;
                writeln!(out, "{line} {}", clock.duration(ticks))?;
            }
            writeln!(out)?;
        }
        writeln!(out, "totals: {total}")?;
        Ok(())
    }
}

fn one_line(text: &str) -> String {
    text.replace('\n', " ")
}

impl View for CallgrindProfile {
    fn enter(&mut self, _tid: u64, _stack: &mut [ViewFrame], _names: &Names) {}

    fn aggregate(&mut self, _tid: u64, stack: &[ViewFrame], calls: &Aggregate, _names: &Names) {
        let Some((frame, callers)) = stack.split_last() else {
            return;
        };
        let f = frame.function as usize;
        if self.exclusive.len() <= f {
            self.exclusive.resize(f + 1, 0);
            self.seen.resize(f + 1, false);
        }
        self.seen[f] = true;
        self.exclusive[f] = self.exclusive[f].saturating_add(calls.exclusive);
        if calls.calls == 0 {
            return; // the time of hidden calls (filters), not calls
        }
        if let Some(caller) = callers.last() {
            let arc = self
                .arcs
                .entry((caller.function, frame.function))
                .or_default();
            arc.0 += calls.calls;
            if caller.function != frame.function {
                arc.1 = arc.1.saturating_add(calls.ticks);
            }
        }
    }

    fn exit(&mut self, _tid: u64, time: u64, stack: &[ViewFrame], _names: &Names) {
        let Some((frame, callers)) = stack.split_last() else {
            return;
        };
        let f = frame.function as usize;
        if self.exclusive.len() <= f {
            self.exclusive.resize(f + 1, 0);
            self.seen.resize(f + 1, false);
        }
        let duration = time.saturating_sub(frame.entry_time);
        self.seen[f] = true;
        self.exclusive[f] =
            self.exclusive[f].saturating_add(duration.saturating_sub(frame.child_ticks));
        if let Some(caller) = callers.last() {
            let arc = self
                .arcs
                .entry((caller.function, frame.function))
                .or_default();
            arc.0 += 1;
            if caller.function != frame.function {
                arc.1 = arc.1.saturating_add(duration);
            }
        }
    }
}
