//! The walk over a trace's chunks in file order ([`replay`], [`replay_bytes`]), handing
//! each thread's records to its stack.

use crate::analysis::compensation::compensation;
use crate::analysis::ids::{DenseIds, HashMap};
use crate::input::format::{
    BadChunk, Chunk, FormatError, Integrity, Overhead, Trace, CHUNK_HEADER_SIZE,
};

use super::matching::*;
use super::side::*;
use super::summary::*;
use super::visitor::*;

/// Replays `trace`, calling `visitor` for every frame, and returns the trace's summary.
/// Stops at the first malformed chunk or record, except that the cut-short last chunk of an
/// incomplete trace is ignored (see [`TraceSummary::truncated_tail`]).
pub fn replay<V: ReplayVisitor>(
    trace: &Trace<'_>,
    visitor: &mut V,
) -> Result<TraceSummary, FormatError> {
    replay_with(trace, &[], visitor)
}

/// [`replay`] of the trace in `data` (the whole file, as [`Trace::new`] takes it), reading
/// ahead: while it replays records, it asks the processor for the trace's next cache lines
/// ([`Prefetch`](super::prefetch::Prefetch)), which makes `hookprof report` about a sixth faster (docs/performance.md,
/// "Post tool").
pub fn replay_bytes<V: ReplayVisitor>(
    data: &[u8],
    visitor: &mut V,
) -> Result<TraceSummary, FormatError> {
    replay_with(&Trace::new(data)?, data, visitor)
}

/// [`replay`], prefetching in `data` if it is not empty.
fn replay_with<V: ReplayVisitor>(
    trace: &Trace<'_>,
    data: &[u8],
    visitor: &mut V,
) -> Result<TraceSummary, FormatError> {
    let mut summary = TraceSummary::new(trace);
    summary.integrity = Integrity::new(trace);
    summary.overhead = overhead(trace);
    summary.compensated = summary.overhead.is_some() && compensation();
    let compensate = summary.overhead.filter(|_| summary.compensated);
    let complete = trace.header().is_complete();
    let mut threads: HashMap<u64, ThreadState> = HashMap::default();
    // The numbering of functions per TID (see `Frame::function`): kept apart from the
    // threads so that a thread reusing a TID continues it.
    let mut function_ids: HashMap<u64, DenseIds> = HashMap::default();
    // Threads whose THREAD chunk (their last) was seen: Linux reuses thread ids, so a later
    // chunk with the same id is a new thread.
    let mut finished: Vec<ThreadState> = Vec::new();
    // Offsets of the EXE, CLOCK and OVERHEAD chunks, and of each THREAD chunk by its sequence
    // number: chunks that appear once.
    let mut written_once: [Option<u64>; 3] = [None; 3];
    let mut sequences: HashMap<u64, u64> = HashMap::default();
    let mut chunk_times: HashMap<u64, ChunkTimes> = HashMap::default();
    // Per thread sequence number, its latest PROFILE chunk: records, last tick, offset.
    let mut trees_seen: HashMap<u64, (u64, u64, u64)> = HashMap::default();
    // A file with trees and records (HOOKCC_MIN_DURATION): one or the other, as the visitor
    // asks; a file of trees alone is read as trees, of records alone as records.
    let (has_trees, has_records) = contents(trace);
    let use_trees = has_trees && (V::AGGREGATES || !has_records);
    summary.records_skipped = use_trees && has_records;
    let mut side = side_chunks(trace, compensate.is_some());
    let time_basis = visitor.time_basis();
    let (switches, switches_lost) = (side.switches, side.switches_lost);
    // A tree's calls (HOOKCC_MIN_DURATION's report) have no times to split.
    summary.has_switches = (switches != 0 || switches_lost != 0) && !use_trees;
    if summary.has_switches {
        summary.time = time_basis;
    }
    (summary.switches, summary.switches_lost) = (switches, switches_lost);
    let run = RunTicks::of(side.clock);
    if !use_trees {
        summary.sample_period_ns = side.sample_period_ns;
        summary.samples_in_hooks = side.samples_in_hooks;
    }
    // Threads with each TID that ended so far (their THREAD chunk), for `timelines`' keys.
    let mut generations: HashMap<u64, u32> = HashMap::default();
    // MODULE chunks and their offsets: which of them hold at the end depends on UNLOAD chunks.
    let mut module_chunks = Vec::new();
    for chunk in trace.chunks() {
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(err) if !complete && err.is_truncation() => {
                summary.truncated_tail = Some(err);
                break;
            }
            Err(err) => return Err(err),
        };
        summary.integrity.observe(&chunk);
        summary.end_offset = chunk.offset + chunk.total_len();
        let at = BadChunk {
            offset: chunk.offset,
            chunk_type: chunk.chunk_type,
            thread: chunk.thread,
        };
        // Chunks written once per file: a second one is a copy.
        let once = match chunk.chunk {
            Chunk::Exe { .. } => Some(0),
            Chunk::Clock(_) => Some(1),
            Chunk::Overhead(_) => Some(2),
            _ => None,
        };
        if let Some(kind) = once {
            match written_once[kind] {
                Some(earlier) => summary.misplaced(at, earlier, OutOfPlace::Repeats),
                None => written_once[kind] = Some(chunk.offset),
            }
        }
        match chunk.chunk {
            Chunk::Exe { path } => {
                if summary.exe.is_none() {
                    summary.exe = Some(path);
                }
            }
            Chunk::Module(module) => module_chunks.push((module, chunk.offset)),
            Chunk::Unload { .. } => {} /* read by side_chunks */
            Chunk::Events(events) => {
                summary.record_bytes += events.encoded_bytes() + CHUNK_HEADER_SIZE as u64;
                if use_trees {
                    summary.kept_records += events.len() as u64;
                    continue;
                }
                let state = get_thread(&mut threads, chunk.thread, compensate);
                if !state.switches_looked_up {
                    state.switches_looked_up = true;
                    let generation = generations.get(&chunk.thread).copied().unwrap_or(0);
                    state.switches = side.timelines.remove(&(chunk.thread, generation));
                    state.samples = side
                        .samples
                        .remove(&(chunk.thread, generation))
                        .unwrap_or_default();
                    if let Some(s) = &state.switches {
                        state.summary.offcpu_ticks = s.total();
                        state.summary.switches = s.intervals.len() as u64;
                        state.cpu_time = time_basis == TimeBasis::Cpu;
                    }
                }
                let ids = function_ids.entry(chunk.thread).or_default();
                let latest_before = state.summary.last_time;
                let replayed = state.events(&events, ids, &side.unloads, visitor, data);
                // What the chunk's records did to the thread, also when a damaged record ended
                // them: the chunks are checked first.
                if let Some((first, last)) = state.chunk_span {
                    let times = chunk_times.entry(chunk.thread).or_default();
                    let before = times.records.replace((first, last, chunk.offset));
                    let back = before.filter(|&(start, end, _)| goes_back(first, (start, end)));
                    if let Some((start, _, earlier)) = back {
                        // The same start: a copy of that chunk.
                        let how = if first == start {
                            OutOfPlace::Repeats
                        } else {
                            OutOfPlace::GoesBack
                        };
                        summary.misplaced(at, earlier, how);
                    } else if let Some((_, _, earlier)) = times.pause.filter(|p| first < p.1) {
                        // Records of a buffer before the hand-over that ended the buffer before
                        // it: a PAUSE moved after them, or they before it.
                        summary.misplaced(at, earlier, OutOfPlace::BeforePause);
                    }
                    if let Some(run) = run {
                        // The latest time the thread reached (compensated: earlier by far less
                        // than the run's length), if this chunk moved it.
                        let latest = state
                            .summary
                            .last_time
                            .filter(|&t| Some(t) != latest_before);
                        if run.far_outside(first) {
                            summary.outside_run(at, first, (run.first, run.last));
                        } else if let Some(t) = latest.filter(|&t| run.far_outside(t)) {
                            summary.outside_run(at, t, (run.first, run.last));
                        }
                    }
                }
                summary.records += replayed?;
            }
            Chunk::Lost { count, at } => {
                let state = get_thread(&mut threads, chunk.thread, compensate);
                state.summary.lost = state.summary.lost.saturating_add(count);
                summary.lost_in_chunks = summary.lost_in_chunks.saturating_add(count);
                if let Some(at) = at {
                    // A marker of no records is another thread's side of a loss that took
                    // task switches too: a gap, not another place.
                    summary.lost_markers += u64::from(count > 0);
                    if !use_trees {
                        state.gap(at, count, visitor);
                    }
                }
            }
            Chunk::Thread { sequence, name } => {
                let order = threads.len() + finished.len();
                let mut state = threads
                    .remove(&chunk.thread)
                    .unwrap_or_else(|| ThreadState::new(chunk.thread, order, compensate));
                // Every thread has its own sequence number, even one reusing a TID.
                match sequences.get(&sequence) {
                    Some(&earlier) => summary.misplaced(at, earlier, OutOfPlace::Repeats),
                    None => {
                        sequences.insert(sequence, chunk.offset);
                    }
                }
                state.summary.sequence = Some(sequence);
                state.summary.name = Some(name);
                finished.push(state);
                *generations.entry(chunk.thread).or_default() += 1;
            }
            Chunk::Clock(clock) => summary.clock = Some(clock),
            Chunk::End { tick } => {
                let state = get_thread(&mut threads, chunk.thread, compensate);
                // One END chunk per thread, just before its THREAD chunk.
                match state.end_at {
                    Some(earlier) => summary.misplaced(at, earlier, OutOfPlace::Repeats),
                    None => state.end_at = Some(chunk.offset),
                }
                state.summary.end_time = Some(tick);
            }
            Chunk::Ring { dropped } => {
                summary.ring_dropped = summary.ring_dropped.saturating_add(dropped);
                summary.ring_windows += 1;
                get_thread(&mut threads, chunk.thread, compensate).window(dropped, visitor);
            }
            Chunk::Pause { from, to } => {
                summary.pauses += 1;
                summary.pause_ticks = summary.pause_ticks.saturating_add(to.saturating_sub(from));
                let state = get_thread(&mut threads, chunk.thread, compensate);
                let times = chunk_times.entry(chunk.thread).or_default();
                let before = times.pause.replace((from, to, chunk.offset));
                let back = before.filter(|&(start, end, _)| goes_back(from, (start, end)));
                if let Some((start, _, earlier)) = back {
                    let how = if from == start {
                        OutOfPlace::Repeats
                    } else {
                        OutOfPlace::GoesBack
                    };
                    summary.misplaced(at, earlier, how);
                } else if let Some((_, _, earlier)) = times.records.filter(|r| from < r.1) {
                    // The hand-over starts before the last record of the buffer it ends: the
                    // PAUSE was moved before its buffer's records.
                    summary.misplaced(at, earlier, OutOfPlace::PauseBeforeRecords);
                }
                if let Some(run) = run.filter(|r| r.far_outside(from) || r.far_outside(to)) {
                    let tick = if run.far_outside(from) { from } else { to };
                    summary.outside_run(at, tick, (run.first, run.last));
                }
                if let Some(c) = &mut state.compensator {
                    c.pause = c.pause.saturating_add(to.saturating_sub(from));
                }
            }
            Chunk::Profile(tree) => {
                summary.profile_chunks += 1;
                // Everything since the thread began: the last one of the thread is the one,
                // unless it is out of place (a copy after the thread's end would count the
                // thread twice; an older copy after a newer tree would count it short).
                let seen = trees_seen.get(&tree.sequence).copied();
                let out_of_place = if let Some(&ended) = sequences.get(&tree.sequence) {
                    Some((ended, OutOfPlace::AfterThreadEnd))
                } else if let Some((records, last, earlier)) = seen {
                    (tree.records < records || tree.last_tick < last)
                        .then_some((earlier, OutOfPlace::OlderTree))
                } else {
                    None
                };
                if let Some(run) = run {
                    if let Some(&tick) = [tree.first_tick, tree.last_tick]
                        .iter()
                        .find(|&&t| run.far_outside(t))
                    {
                        summary.outside_run(at, tick, (run.first, run.last));
                    }
                }
                if let Some((earlier, how)) = out_of_place {
                    summary.misplaced(at, earlier, how);
                } else {
                    trees_seen.insert(tree.sequence, (tree.records, tree.last_tick, chunk.offset));
                    if use_trees {
                        get_thread(&mut threads, chunk.thread, compensate).tree = Some(tree);
                    }
                }
            }
            Chunk::Folded { min_ticks, calls } => {
                summary.folded_calls = summary.folded_calls.saturating_add(calls);
                summary.folded_min_ticks = summary.folded_min_ticks.max(min_ticks);
            }
            Chunk::Writer(writer) => summary.writer = Some(writer),
            Chunk::Throttle(mut throttle) => {
                for f in &mut throttle.functions {
                    f.address = side.unloads.remap_before(f.address, chunk.offset);
                }
                summary.add_throttle(throttle)
            }
            Chunk::Counted(list) => {
                let state = get_thread(&mut threads, chunk.thread, compensate);
                for (address, calls) in list {
                    let address = side.unloads.remap_before(address, chunk.offset);
                    *state.summary.counted.entry(address).or_insert(0) += calls;
                }
            }
            Chunk::Check(_) | Chunk::Overhead(_) | Chunk::Switch(_) | Chunk::Sample(_) => {}
            Chunk::Unknown => summary.unknown_chunks += 1,
            Chunk::Hole => summary.hole_bytes += chunk.total_len(),
        }
    }
    summary.modules = side.unloads.modules(module_chunks);
    summary.integrity.finish();
    let mut states: Vec<ThreadState> = finished;
    states.extend(threads.into_values());
    states.sort_by_key(|s| (s.summary.sequence.unwrap_or(u64::MAX), s.order));
    let end = summary.clock.as_ref().map(|c| c.last_tick);
    for state in &mut states {
        if let Some(tree) = &state.tree {
            summary.profile_nodes += tree.nodes.len() as u64;
        }
        let ids = function_ids.entry(state.summary.tid).or_default();
        state.finish(end, ids, visitor);
        let (given, kept) = state.tree_records;
        summary.records = summary.records.saturating_add(kept);
        summary.tree_records_given = summary.tree_records_given.saturating_add(given);
    }
    summary.threads = states.into_iter().map(|s| s.summary).collect();
    Ok(summary)
}

fn get_thread(
    threads: &mut HashMap<u64, ThreadState>,
    tid: u64,
    overhead: Option<Overhead>,
) -> &mut ThreadState {
    let order = threads.len() + 1_000_000; // after every thread already finished, in order
    threads
        .entry(tid)
        .or_insert_with(|| ThreadState::new(tid, order, overhead))
}

/// Whether `trace` has PROFILE chunks, and records (EVENTS or PACKED chunks).
fn contents(trace: &Trace<'_>) -> (bool, bool) {
    let (mut trees, mut records) = (false, false);
    for chunk in trace.chunks() {
        match chunk.map(|c| c.chunk) {
            Ok(Chunk::Profile(_)) => trees = true,
            // An empty one (a firmware's profile keeps its EVENTS chunk's header) holds none.
            Ok(Chunk::Events(events)) => records |= !events.is_empty(),
            Ok(_) => {}
            Err(_) => break,
        }
        if trees && records {
            break;
        }
    }
    (trees, records)
}

/// The OVERHEAD chunk, which the runtime writes before any EVENTS chunk: looked for up to the
/// first one, so that a thread's times are compensated from its first record.
fn overhead(trace: &Trace<'_>) -> Option<Overhead> {
    for chunk in trace.chunks() {
        match chunk.ok()?.chunk {
            Chunk::Overhead(o) if o.pairs > 0 => return Some(o),
            Chunk::Events(_) => return None,
            _ => {}
        }
    }
    None
}
