//! Exact statistics of synthetic traces: nesting, recursion, unmatched records, threads.

mod common;

use common::*;
use hookprof::format::{Endian, Header, Record, Trace, Writer};
use hookprof::model::{Arc, FunctionStats, Profile};

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
    w.clock(&hookprof::format::Clock {
        ticks_per_second: 4,
        first_tick: 0,
        last_tick: 4,
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
    assert!(hookprof::profile_warnings(&p.summary)
        .iter()
        .any(|w| w.contains("cut short")));
    // The same bytes marked complete: an error.
    bytes[32] = 1;
    let err = Profile::from_trace(&Trace::new(&bytes).unwrap()).unwrap_err();
    assert_eq!(err.offset, 112);
}
