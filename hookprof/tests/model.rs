//! Exact statistics of synthetic traces: nesting, recursion, unmatched records, threads.

mod common;

use common::*;
use hookprof::analysis::model::{Arc, FunctionStats, Profile};
use hookprof::input::format::{Endian, Header, Record, Trace, Writer};

fn profile(bytes: &[u8]) -> Profile {
    Profile::from_trace(&Trace::new(bytes).unwrap()).unwrap()
}

fn stats(
    calls: u64,
    inclusive: u64,
    exclusive: u64,
    sum: u64,
    min: u64,
    max: u64,
) -> FunctionStats {
    FunctionStats {
        calls,
        inclusive_ticks: inclusive,
        exclusive_ticks: exclusive,
        call_ticks_sum: sum,
        min_ticks: min,
        max_ticks: max,
        ..FunctionStats::default()
    }
}

#[test]
fn nesting_and_recursion_give_exact_stats() {
    let p = profile(&golden_trace(Endian::Little));
    let main = &p.threads[0];
    assert_eq!(main.tid, TID_MAIN);
    let f = &main.table.functions;
    assert_eq!(f[&MAIN], stats(1, 200, 94, 200, 200, 200));
    assert_eq!(f[&A], stats(1, 50, 20, 50, 50, 50));
    assert_eq!(f[&B], stats(2, 35, 35, 35, 5, 30));
    assert_eq!(f[&B].avg_ticks(), 18); // 17.5 rounded
                                       // Recursion: inclusive only for the outermost frame, so it equals the outer call.
    assert_eq!(f[&FACT], stats(3, 50, 50, 90, 10, 50));
    assert_eq!(f[&FACT].avg_ticks(), 30);
    assert_eq!(f[&ANON], stats(1, 1, 1, 1, 1, 1));
    // Exclusive times add up to the thread's span; no inclusive time exceeds it.
    let span = p.summary.threads[0].span_ticks();
    assert_eq!(span, 200);
    assert_eq!(f.values().map(|s| s.exclusive_ticks).sum::<u64>(), span);
    assert!(f.values().all(|s| s.inclusive_ticks <= span));
}

#[test]
fn unmatched_entries_exits_and_frames_open_at_end_are_counted() {
    let p = profile(&golden_trace(Endian::Little));
    let worker = &p.threads[1];
    assert_eq!(worker.tid, TID_WORKER);
    let f = &worker.table.functions;
    // Frames still open at the end close when the trace was finished (CLOCK last_tick 200).
    let mut x = stats(2, 192, 15, 192, 12, 180);
    x.closed_at_end = 1;
    assert_eq!(f[&X], x);
    let mut y = stats(2, 177, 177, 177, 7, 170);
    y.unmatched_entries = 1;
    y.closed_at_end = 1;
    assert_eq!(f[&Y], y);
    assert_eq!(f[&Y].avg_ticks(), 89); // 88.5 rounded
    let z = FunctionStats {
        unmatched_exits: 1,
        ..FunctionStats::default()
    };
    assert_eq!(f[&Z], z);

    let t = &p.summary.threads[1];
    assert_eq!(t.sequence, None);
    assert_eq!(t.label(), TID_WORKER);
    assert_eq!(
        (t.unmatched_entries, t.unmatched_exits, t.closed_at_end),
        (1, 1, 2)
    );
    assert_eq!(t.lost, 2);
    assert_eq!(p.summary.threads[0].name.as_deref(), Some("main"));
    assert_eq!(p.summary.threads[0].label(), 1);
    assert_eq!(p.summary.records, 22);
    assert_eq!(p.summary.lost(), 2);
    assert_eq!(p.summary.unknown_chunks, 1);
}

#[test]
fn threads_merge_into_process_totals() {
    // The same function in two threads.
    let mut w = Writer::new(Vec::new(), &header(Endian::Little)).unwrap();
    w.events(1, &[Record::entry(0, A), Record::exit(10, A)])
        .unwrap();
    w.events(2, &[Record::entry(5, A), Record::exit(8, A)])
        .unwrap();
    w.events(1, &[Record::entry(20, A), Record::exit(40, A)])
        .unwrap();
    let p = profile(&w.into_inner());
    assert_eq!(p.threads.len(), 2);
    assert_eq!(
        p.threads[0].table.functions[&A],
        stats(2, 30, 30, 30, 10, 20)
    );
    assert_eq!(p.threads[1].table.functions[&A], stats(1, 3, 3, 3, 3, 3));
    let merged = p.merged();
    assert_eq!(merged.functions[&A], stats(3, 33, 33, 33, 3, 20));
    assert_eq!(p.merged_functions(), merged.functions);
    assert_eq!(
        merged.arcs[&Arc {
            caller: None,
            callee: A
        }]
            .calls,
        3
    );
}

#[test]
fn arcs_count_caller_callee_pairs() {
    let p = profile(&golden_trace(Endian::Little));
    let arcs = &p.threads[0].table.arcs;
    let arc = |caller: Option<u64>, callee| {
        arcs.get(&Arc { caller, callee })
            .map(|s| (s.calls, s.inclusive_ticks))
    };
    assert_eq!(arc(None, MAIN), Some((1, 200)));
    assert_eq!(arc(Some(MAIN), A), Some((1, 50)));
    assert_eq!(arc(Some(A), B), Some((1, 30)));
    assert_eq!(arc(Some(MAIN), B), Some((1, 5)));
    assert_eq!(arc(Some(MAIN), FACT), Some((1, 50)));
    // Recursive arc: two calls, no inclusive time (not the outermost frame).
    assert_eq!(arc(Some(FACT), FACT), Some((2, 0)));
    assert_eq!(arc(Some(MAIN), ANON), Some((1, 1)));
    assert_eq!(arcs.len(), 7);
}

#[test]
fn big_endian_decodes_like_little_endian() {
    let le = profile(&golden_trace(Endian::Little));
    let be = profile(&golden_trace(Endian::Big));
    assert_eq!(le.threads, be.threads);
    let mut be_summary = be.summary.clone();
    be_summary.header.endian = Endian::Little;
    // The header's checksum is a sum of words in the file's byte order: the rest must agree.
    assert!(be_summary.integrity.is_clean() && le.summary.integrity.is_clean());
    be_summary.integrity = le.summary.integrity.clone();
    assert_eq!(le.summary, be_summary);
}

#[test]
fn exit_matches_nearest_frame_with_its_address() {
    // f { g { f { h } } }: the exit of f closes h (unmatched) and the inner f only.
    let (f, g, h) = (0x10, 0x20, 0x30);
    let mut w = Writer::new(Vec::new(), &header(Endian::Little)).unwrap();
    w.events(
        1,
        &[
            Record::entry(0, f),
            Record::entry(1, g),
            Record::entry(2, f),
            Record::entry(3, h),
            Record::exit(5, f),
            Record::exit(9, g),
            Record::exit(10, f),
        ],
    )
    .unwrap();
    let p = profile(&w.into_inner());
    let t = &p.threads[0].table.functions;
    assert_eq!(t[&h].unmatched_entries, 1);
    assert_eq!(t[&h].calls, 1);
    assert_eq!(t[&f].calls, 2);
    assert_eq!(t[&f].unmatched_entries, 0);
    assert_eq!(t[&f].inclusive_ticks, 10);
    assert_eq!(t[&g].exclusive_ticks, 8 - 3);
    assert_eq!(p.summary.unmatched_entries(), 1);
    assert_eq!(p.summary.unmatched_exits(), 0);
}

#[test]
fn timestamps_going_backwards_do_not_underflow() {
    let mut w = Writer::new(Vec::new(), &header(Endian::Little)).unwrap();
    w.events(
        1,
        &[
            Record::entry(100, A),
            Record::entry(50, B),
            Record::exit(10, B),
            Record::exit(5, A),
        ],
    )
    .unwrap();
    let p = profile(&w.into_inner());
    let t = &p.threads[0].table.functions;
    assert_eq!(t[&A].inclusive_ticks, 0);
    assert_eq!(t[&B].inclusive_ticks, 0);
}

#[test]
fn pointer_size_4_masks_addresses_and_clock_chunk_gives_the_rate() {
    let mut h = Header::new(Endian::Big);
    h.pointer_size = 4;
    let mut w = Writer::new(Vec::new(), &h).unwrap();
    w.events(
        1,
        &[
            Record::entry(0, 0xffff_ffff_0000_1000),
            Record::exit(4, 0x1000),
        ],
    )
    .unwrap();
    w.clock(&hookprof::input::format::Clock {
        ticks_per_second: 4,
        first_tick: 0,
        last_tick: 4,
        header_check: None,
    })
    .unwrap();
    let p = profile(&w.into_inner());
    assert_eq!(p.threads[0].table.functions[&0x1000].calls, 1);
    assert_eq!(p.summary.ticks_per_second(), Some(4));
    assert!(!p.summary.header.is_complete());
}

#[test]
fn cut_short_last_chunk_is_ignored_only_in_an_incomplete_trace() {
    let mut h = header(Endian::Little);
    h.flags = 0;
    let mut w = Writer::new(Vec::new(), &h).unwrap();
    w.events(1, &[Record::entry(0, A), Record::exit(10, A)])
        .unwrap();
    w.events(1, &[Record::entry(20, A), Record::exit(30, A)])
        .unwrap();
    let mut bytes = w.into_inner();
    bytes.truncate(bytes.len() - 16);
    let p = profile(&bytes);
    assert_eq!(p.threads[0].table.functions[&A].calls, 1);
    let err = p.summary.truncated_tail.as_ref().unwrap();
    assert_eq!(
        err.to_string(),
        "byte 112: truncated: EVENTS chunk declares 32 payload bytes but only 16 remain"
    );
    assert!(hookprof::analysis::warnings::profile_warnings(&p.summary)
        .iter()
        .any(|w| w.contains("cut short")));
    // The same bytes marked complete: an error.
    bytes[32] = 1;
    let err = Profile::from_trace(&Trace::new(&bytes).unwrap()).unwrap_err();
    assert_eq!(err.offset, 112);
}

/// A reference model of the replay and the statistics, written the plain way (a stack of
/// frames searched from the top, maps keyed by address), against which the profile of a long
/// pseudo-random trace must agree exactly: hundreds of functions per thread (the dense
/// tables grow), callers changing all the time (the arc cache), recursion, exits that unwind
/// frames above them, exits with no frame, frames open at the end, several threads whose
/// chunks interleave, and enough records for the read-ahead to run.
#[test]
fn long_random_trace_matches_a_reference_model() {
    use std::collections::HashMap as Map;

    #[derive(Default)]
    struct Reference {
        functions: Map<u64, FunctionStats>,
        arcs: Map<Arc, hookprof::analysis::model::ArcStats>,
    }
    struct Open {
        address: u64,
        entry: u64,
        children: u64,
    }
    fn close(r: &mut Reference, stack: &mut Vec<Open>, time: u64, how: u8) {
        let frame = stack.pop().unwrap();
        let duration = time - frame.entry;
        let exclusive = duration - frame.children;
        let outermost = !stack.iter().any(|f| f.address == frame.address);
        let caller = stack.last().map(|f| f.address);
        if let Some(parent) = stack.last_mut() {
            parent.children += duration;
        }
        let s = r.functions.entry(frame.address).or_default();
        s.min_ticks = if s.calls == 0 {
            duration
        } else {
            s.min_ticks.min(duration)
        };
        s.max_ticks = s.max_ticks.max(duration);
        s.calls += 1;
        s.call_ticks_sum += duration;
        s.exclusive_ticks += exclusive;
        match how {
            1 => s.unmatched_entries += 1,
            2 => s.closed_at_end += 1,
            _ => {}
        }
        let a = r
            .arcs
            .entry(Arc {
                caller,
                callee: frame.address,
            })
            .or_default();
        a.calls += 1;
        a.exclusive_ticks += exclusive;
        if outermost {
            s.inclusive_ticks += duration;
            a.inclusive_ticks += duration;
        }
    }

    const FUNCTIONS: u64 = 300;
    let address = |f: u64| 0x10_0000 + f * 0x40;
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: u64| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) % n
    };
    let tids = [11u64, 22, 33];
    let mut header = Header::new(Endian::Little);
    header.ticks_per_second = 1_000_000_000;
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    let mut stacks: Vec<Vec<u64>> = vec![Vec::new(); tids.len()];
    let mut times = vec![0u64; tids.len()];
    let mut records: Vec<Vec<Record>> = vec![Vec::new(); tids.len()];
    for _ in 0..300 {
        let t = next(tids.len() as u64) as usize;
        let mut chunk = Vec::new();
        for _ in 0..1 + next(2000) {
            times[t] += 1 + next(50);
            let time = times[t];
            let stack = &mut stacks[t];
            let roll = next(100);
            if roll < 2 {
                // An exit with no open frame of its function.
                chunk.push(Record::exit(time, address(FUNCTIONS + next(3))));
            } else if roll < 4 && stack.len() > 2 {
                // An exit of a deeper frame: the ones above it are unwound.
                let depth = next(stack.len() as u64) as usize;
                let f = stack[depth];
                let at = stack.iter().rposition(|&g| g == f).unwrap();
                stack.truncate(at);
                chunk.push(Record::exit(time, address(f)));
            } else if stack.is_empty() || (stack.len() < 40 && roll < 52) {
                // Callees cluster around their caller, with some recursion.
                let f = match stack.last() {
                    Some(&caller) if roll % 5 == 0 => caller,
                    Some(&caller) => (caller + next(40)) % FUNCTIONS,
                    None => next(FUNCTIONS),
                };
                stack.push(f);
                chunk.push(Record::entry(time, address(f)));
            } else {
                let f = stack.pop().unwrap();
                chunk.push(Record::exit(time, address(f)));
            }
        }
        w.events(tids[t], &chunk).unwrap();
        records[t].extend(chunk);
    }
    let bytes = w.into_inner();

    // The reference: each thread's records in order, frames matched by searching the stack.
    let mut expected: Vec<Reference> = Vec::new();
    for recs in &records {
        let mut r = Reference::default();
        let mut stack: Vec<Open> = Vec::new();
        for rec in recs {
            if rec.kind == hookprof::input::format::RecordKind::Entry {
                stack.push(Open {
                    address: rec.address,
                    entry: rec.time,
                    children: 0,
                });
                continue;
            }
            match stack.iter().rposition(|f| f.address == rec.address) {
                None => r.functions.entry(rec.address).or_default().unmatched_exits += 1,
                Some(at) => {
                    while stack.len() > at + 1 {
                        close(&mut r, &mut stack, rec.time, 1);
                    }
                    close(&mut r, &mut stack, rec.time, 0);
                }
            }
        }
        let end = recs.iter().map(|r| r.time).max().unwrap_or(0);
        while !stack.is_empty() {
            close(&mut r, &mut stack, end, 2);
        }
        expected.push(r);
    }

    let from_bytes = Profile::from_bytes(&bytes).unwrap();
    let from_trace = profile(&bytes);
    for p in [&from_bytes, &from_trace] {
        assert_eq!(p.threads.len(), tids.len());
        for (i, &tid) in tids.iter().enumerate() {
            let got = p.threads.iter().find(|t| t.tid == tid).unwrap();
            let want = &expected[i];
            assert!(
                got.table.functions.len() > 200,
                "{} functions",
                got.table.functions.len()
            );
            assert_eq!(got.table.functions.len(), want.functions.len(), "tid {tid}");
            for (address, stats) in &want.functions {
                assert_eq!(
                    got.table.functions.get(address),
                    Some(stats),
                    "tid {tid} {address:#x}"
                );
            }
            assert_eq!(got.table.arcs.len(), want.arcs.len(), "tid {tid}");
            for (arc, stats) in &want.arcs {
                assert_eq!(got.table.arcs.get(arc), Some(stats), "tid {tid} {arc:?}");
            }
        }
        assert_eq!(
            p.summary.records,
            records.iter().map(|r| r.len() as u64).sum::<u64>()
        );
    }
}
