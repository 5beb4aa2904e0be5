//! The side chunks (switches, samples), read in a pre-pass before the records they
//! explain.

use crate::analysis::ids::HashMap;
use crate::analysis::unload::Unloads;
use crate::input::format::{Chunk, Clock, Samples, Switches, Trace};

use super::switches::*;

/// Every thread's switch timeline and samples, by TID and by how many threads with that TID
/// ended before it (Linux reuses TIDs; a thread's SWITCH and SAMPLE chunks come before its
/// THREAD chunk), with the switches counted and the switch records the kernel dropped. A
/// pre-pass over the chunks: the writer writes a switch when the thread is running again, and
/// samples every 10 ms, after records that came while they happened, so the replay needs them
/// before the records.
pub(super) fn side_chunks(trace: &Trace<'_>, compensate: bool) -> SidePass {
    let mut chunks: Vec<(u64, u32, Switches)> = Vec::new();
    let mut sample_chunks: Vec<(u64, u32, Samples)> = Vec::new();
    let mut pauses: HashMap<(u64, u32), Vec<(u64, u64)>> = HashMap::default();
    let mut generation: HashMap<u64, u32> = HashMap::default();
    let mut clock_tps = 0;
    let mut first_clock = None;
    let mut unloads = Vec::new();
    for chunk in trace.chunks() {
        let Ok(chunk) = chunk else { break };
        match chunk.chunk {
            Chunk::Unload { module, tick } => unloads.push((module, tick, chunk.offset)),
            Chunk::Switch(switches) => {
                let g = generation.get(&chunk.thread).copied().unwrap_or(0);
                chunks.push((chunk.thread, g, switches));
            }
            Chunk::Sample(samples) => {
                let g = generation.get(&chunk.thread).copied().unwrap_or(0);
                sample_chunks.push((chunk.thread, g, samples));
            }
            Chunk::Thread { .. } => *generation.entry(chunk.thread).or_default() += 1,
            Chunk::Clock(clock) => {
                clock_tps = clock.ticks_per_second;
                first_clock.get_or_insert(clock);
            }
            Chunk::Pause { from, to } if compensate => {
                let g = generation.get(&chunk.thread).copied().unwrap_or(0);
                pauses
                    .entry((chunk.thread, g))
                    .or_default()
                    .push((from, to));
            }
            _ => {}
        }
    }
    let mut side = SidePass {
        clock: first_clock,
        unloads: Unloads::new(unloads),
        ..SidePass::default()
    };
    let tps = match trace.header().ticks_per_second {
        0 => clock_tps,
        tps => tps,
    };
    if tps == 0 {
        return side;
    }
    for (tid, g, samples) in sample_chunks {
        side.sample_period_ns = samples.period_ns;
        side.samples_in_hooks = side.samples_in_hooks.saturating_add(samples.in_hooks);
        let list = side.samples.entry((tid, g)).or_default();
        list.extend(
            samples
                .points
                .iter()
                .map(|&(ns, ip)| (samples.ticks_at(ns, tps), ip)),
        );
    }
    if chunks.is_empty() {
        return side;
    }
    let reasons = trace.header().flags & crate::input::format::FLAG_SWITCH_REASONS != 0;
    let mut intervals: HashMap<(u64, u32), Vec<(u64, u64)>> = HashMap::default();
    let mut preempted: HashMap<(u64, u32), Vec<u64>> = HashMap::default();
    for (tid, g, switches) in chunks {
        side.switches += switches.pairs.len() as u64;
        side.switches_lost = side.switches_lost.saturating_add(switches.lost);
        let list = intervals.entry((tid, g)).or_default();
        let preempts = preempted.entry((tid, g)).or_default();
        for &(out, back) in &switches.pairs {
            // Bit 0 of the switch-out: a preemption (the time itself to 2 ns).
            let (out, was_preempted) = if reasons {
                (out & !1, out & 1 == 1)
            } else {
                (out, false)
            };
            let out = switches.ticks_at(out, tps);
            if was_preempted {
                preempts.push(out);
            }
            list.push((out, switches.ticks_at(back, tps).max(out)));
        }
    }
    for (key, list) in intervals {
        let cuts = pauses.remove(&key).unwrap_or_default();
        let mut timeline = SwitchTimeline::new(list, cuts);
        if reasons {
            let mut list = preempted.remove(&key).unwrap_or_default();
            list.sort_unstable();
            timeline.preempted = Some(list);
        }
        side.timelines.insert(key, timeline);
    }
    side
}

/// What [`side_chunks`]' pre-pass finds beside the records: every thread's switch
/// timeline and the instants of its samples (raw ticks, in order), keyed by TID and by how
/// many threads with that TID ended before it, with their counts.
#[derive(Default)]
pub(super) struct SidePass {
    pub(super) timelines: HashMap<(u64, u32), SwitchTimeline>,
    pub(super) switches: u64,
    pub(super) switches_lost: u64,
    pub(super) samples: HashMap<(u64, u32), Vec<(u64, u64)>>,
    pub(super) sample_period_ns: u64,
    pub(super) samples_in_hooks: u64,
    /// The first CLOCK chunk (a hosted trace's is its last chunk; the replay checks every
    /// records chunk against the run it gives).
    pub(super) clock: Option<Clock>,
    /// The UNLOAD chunks: records are named by the module loaded when they were made.
    pub(super) unloads: Unloads,
}
