use super::matching::*;
use super::switches::*;
use super::*;
use crate::analysis::ids::DenseIds;
use crate::input::format::{Clock, Endian, Record, Trace, Writer};

#[derive(Default)]
struct Log(Vec<String>);

impl ReplayVisitor for Log {
    fn enter(&mut self, tid: u64, stack: &mut [Frame]) {
        let f = stack.last().unwrap();
        self.0
            .push(format!("{tid} enter {:x} depth {}", f.address, stack.len()));
    }
    fn exit(&mut self, tid: u64, time: u64, reason: CloseReason, stack: &[Frame]) {
        let f = stack.last().unwrap();
        self.0.push(format!(
            "{tid} exit {:x} at {time} {reason:?} depth {}",
            f.address,
            stack.len()
        ));
    }
    fn unmatched_exit(&mut self, tid: u64, time: u64, address: u64, _: &[Frame]) {
        self.0
            .push(format!("{tid} unmatched exit {address:x} at {time}"));
    }
}

/// Version 1, which takes any address: the tests name functions 0xa, 0xb, … to read well.
fn trace(records: &[Record]) -> Vec<u8> {
    let mut header = crate::input::format::Header::new(Endian::Little);
    header.version = 1;
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    w.events(5, records).unwrap();
    w.into_inner()
}

#[test]
fn pairs_as_the_format_document_says() {
    use Record as R;
    let bytes = trace(&[
        R::entry(0, 0xa),
        R::entry(1, 0xb),
        R::entry(2, 0xc),
        R::exit(3, 0xd), // no frame: unmatched exit
        R::exit(4, 0xb), // closes c (unmatched entry) then b
        R::entry(5, 0xe),
    ]);
    let trace = Trace::new(&bytes).unwrap();
    let mut log = Log::default();
    let summary = replay(&trace, &mut log).unwrap();
    assert_eq!(
        log.0,
        [
            "5 enter a depth 1",
            "5 enter b depth 2",
            "5 enter c depth 3",
            "5 unmatched exit d at 3",
            "5 exit c at 4 UnwoundByOuterExit depth 3",
            "5 exit b at 4 Exit depth 2",
            "5 enter e depth 2",
            "5 exit e at 5 EndOfThread depth 2",
            "5 exit a at 5 EndOfThread depth 1",
        ]
    );
    let t = &summary.threads[0];
    assert_eq!(
        (t.unmatched_entries, t.unmatched_exits, t.closed_at_end),
        (1, 1, 2)
    );
    assert_eq!(t.end_time, None);
    assert_eq!(t.max_depth, 3);
    assert_eq!(summary.records, 6);
}

/// The docs' example (docs/trace-format.md, "OVERHEAD"): each call loses the hooks' time
/// inside its window, and a whole pair per call made inside it.
#[test]
fn compensation_subtracts_the_measured_hook_time() {
    use crate::input::format::Overhead;
    use Record as R;
    let records = [
        R::entry(0, 0xa),
        R::entry(20, 0xb),
        R::exit(50, 0xb),
        R::entry(70, 0xb),
        R::exit(100, 0xb),
        R::exit(130, 0xa),
    ];
    let mut header = crate::input::format::Header::new(Endian::Little);
    header.version = 1;
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    w.overhead(&Overhead {
        self_ticks: 10,
        child_ticks: 6,
        pairs: 255,
        ..Overhead::default()
    })
    .unwrap();
    w.events(5, &records).unwrap();
    let bytes = w.into_inner();
    let mut log = Log::default();
    let summary = replay(&Trace::new(&bytes).unwrap(), &mut log).unwrap();
    assert!(summary.compensated);
    // b: 30 - 10 = 20 each; a: 130 - 10 - 2 * (10 + 6) = 88.
    assert_eq!(
        log.0,
        [
            "5 enter a depth 1",
            "5 enter b depth 2",
            "5 exit b at 32 Exit depth 2",
            "5 enter b depth 2",
            "5 exit b at 66 Exit depth 2",
            "5 exit a at 88 Exit depth 1",
        ]
    );
    // Without the chunk, the same records keep their times.
    let raw = trace(&records);
    let mut log = Log::default();
    let summary = replay(&Trace::new(&raw).unwrap(), &mut log).unwrap();
    assert!(!summary.compensated);
    assert_eq!(log.0[5], "5 exit a at 130 Exit depth 1");
}

/// A PAUSE chunk (the runtime writing the buffer inside a hook) comes out of the gap before
/// the thread's next record, the first of its next EVENTS chunk.
#[test]
fn compensation_takes_the_runtime_s_pauses_out() {
    use crate::input::format::Overhead;
    use Record as R;
    let mut header = crate::input::format::Header::new(Endian::Little);
    header.version = 1;
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    w.overhead(&Overhead {
        self_ticks: 2,
        child_ticks: 2,
        pairs: 255,
        ..Overhead::default()
    })
    .unwrap();
    w.events(5, &[R::entry(0, 0xa), R::entry(10, 0xb)]).unwrap();
    w.pause(5, 20, 1020).unwrap();
    w.events(5, &[R::exit(1030, 0xb), R::exit(1040, 0xa)])
        .unwrap();
    let bytes = w.into_inner();
    let mut log = Log::default();
    replay(&Trace::new(&bytes).unwrap(), &mut log).unwrap();
    // b: 1020 - 1000 - 2 = 18 (entered at 8); a: 1040 - 1000 - 2 - 4 = 34.
    assert_eq!(
        log.0[2..],
        ["5 exit b at 26 Exit depth 2", "5 exit a at 34 Exit depth 1"]
    );
}

/// The trace the two tests below read: thread 5 calls a (0x10) at tick 100, which calls b
/// (0x20) from 200 to 700, and returns at 1000 (2 ticks a ns); it was switched out at ns
/// 1150..1250 = ticks 300..500 (in b) and ns 1400..1450 = ticks 800..900 (in a only, the
/// anchor's ns 1000 being tick 0); then, after its THREAD chunk, a thread of TID
/// `second_tid` calls a from 2000 to 2500, with no switches of its own.
fn switched_trace(second_tid: u64) -> Vec<u8> {
    use crate::input::format::{Clock, Switches};
    use Record as R;
    let mut header = crate::input::format::Header::new(Endian::Little);
    header.ticks_per_second = 2_000_000_000;
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    w.events(
        5,
        &[
            R::entry(100, 0x10),
            R::entry(200, 0x20),
            R::exit(700, 0x20),
            R::exit(1000, 0x10),
        ],
    )
    .unwrap();
    let switches = Switches {
        anchor_ticks: 0,
        anchor_ns: 1000,
        lost: 0,
        pairs: vec![(1150, 1250), (1400, 1450)],
    };
    w.switches(5, &switches).unwrap();
    w.thread(5, 1, "first").unwrap();
    w.events(second_tid, &[R::entry(2000, 0x10), R::exit(2500, 0x10)])
        .unwrap();
    w.clock(&Clock {
        ticks_per_second: 2_000_000_000,
        first_tick: 0,
        last_tick: 3000,
        header_check: None,
    })
    .unwrap();
    w.into_inner()
}

/// Off-CPU time (SWITCH chunks, written after the records they fall among): a frame gets
/// the switched-out time while it is open, its exclusive part the switches while it is on
/// top; the anchor maps the pairs' ns to ticks (here 2 ticks a ns, anchor 1000 ns = tick
/// 0); a thread that reuses a TID after another one's THREAD chunk has its own.
#[test]
fn switched_out_time_goes_to_the_frames_open_during_it() {
    use crate::analysis::model::Profile;
    // The next thread with TID 5 (after the first's THREAD chunk): no switches of its own.
    let bytes = switched_trace(5);
    let profile = Profile::from_trace(&Trace::new(&bytes).unwrap()).unwrap();
    assert!(profile.summary.has_switches);
    assert_eq!(profile.summary.switches, 2);
    let first = &profile.threads[0].table.functions;
    assert_eq!(
        (
            first[&0x10].inclusive_offcpu_ticks,
            first[&0x10].exclusive_offcpu_ticks
        ),
        (300, 100)
    );
    assert_eq!(
        (
            first[&0x20].inclusive_offcpu_ticks,
            first[&0x20].exclusive_offcpu_ticks
        ),
        (200, 200)
    );
    // The profile keeps a reused TID's functions together: the second thread's call of
    // a added no off-CPU time.
    assert_eq!(first[&0x10].calls, 2);
    assert_eq!(profile.summary.threads[0].offcpu_ticks, 300);
    assert_eq!(profile.summary.threads[1].offcpu_ticks, 0);
}

/// `--time=cpu`: each thread's times less its time switched out, so a frame's durations
/// are its on-CPU ones (what the wall clock gives less the off-CPU time above); a thread
/// without switches keeps its wall times. On the wall clock, a visitor hears of each
/// switched-out interval between the records it fell between, with the stack open then.
#[test]
fn the_cpu_clock_leaves_the_switched_out_time_out() {
    use crate::analysis::model::Profile;
    let bytes = switched_trace(6);

    let cpu = Profile::from_bytes_on(&bytes, TimeBasis::Cpu).unwrap();
    assert_eq!(cpu.summary.time, TimeBasis::Cpu);
    let first = &cpu.threads[0].table.functions;
    let times = |s: &crate::analysis::model::FunctionStats| {
        (
            s.inclusive_ticks,
            s.exclusive_ticks,
            s.min_ticks,
            s.max_ticks,
        )
    };
    // a: 900 on the wall, 300 of it out (100 while on top); b: 500, 200 out.
    assert_eq!(times(&first[&0x10]), (600, 300, 600, 600));
    assert_eq!(times(&first[&0x20]), (300, 300, 300, 300));
    // The off-CPU columns stay what they were measured.
    assert_eq!(first[&0x10].inclusive_offcpu_ticks, 300);
    // Thread 6 has no switches: its wall time.
    assert_eq!(
        times(&cpu.threads[1].table.functions[&0x10]),
        (500, 500, 500, 500)
    );
    let wall = Profile::from_bytes_on(&bytes, TimeBasis::Wall).unwrap();
    assert_eq!(wall.summary.time, TimeBasis::Wall);
    assert_eq!(
        times(&wall.threads[0].table.functions[&0x10]),
        (900, 400, 900, 900)
    );

    #[derive(Default)]
    struct Out {
        time: TimeBasis,
        seen: Vec<(u64, u64, u64, u64)>,
    }
    impl ReplayVisitor for Out {
        fn switched_out(
            &mut self,
            tid: u64,
            from: u64,
            to: u64,
            _reason: SwitchReason,
            stack: &[Frame],
        ) {
            self.seen
                .push((tid, from, to, stack.last().unwrap().address));
        }
        fn time_basis(&self) -> TimeBasis {
            self.time
        }
    }
    let mut out = Out::default();
    replay(&Trace::new(&bytes).unwrap(), &mut out).unwrap();
    assert_eq!(out.seen, [(5, 300, 500, 0x20), (5, 800, 900, 0x10)]);
    // On the CPU clock the time is not there: no interval.
    let mut out = Out {
        time: TimeBasis::Cpu,
        ..Out::default()
    };
    replay(&Trace::new(&bytes).unwrap(), &mut out).unwrap();
    assert!(out.seen.is_empty());
}

/// Switch records the kernel dropped (a ring the writer thread did not read in time) are
/// said in every view's warnings, with what they make of the times on each clock.
#[test]
fn dropped_switch_records_are_a_warning_on_either_clock() {
    use crate::analysis::model::Profile;
    use crate::analysis::warnings::profile_warnings;
    use crate::input::format::Switches;
    use Record as R;
    let mut header = crate::input::format::Header::new(Endian::Little);
    header.ticks_per_second = 1_000_000_000;
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    w.events(5, &[R::entry(100, 0x10), R::exit(1000, 0x10)])
        .unwrap();
    let switches = Switches {
        anchor_ticks: 0,
        anchor_ns: 0,
        lost: 7,
        pairs: vec![(300, 500)],
    };
    w.switches(5, &switches).unwrap();
    let bytes = w.into_inner();
    for (time, says) in [
        (
            TimeBasis::Cpu,
            "the CPU times (--time=cpu) are upper bounds",
        ),
        (TimeBasis::Wall, "the off-CPU times are lower bounds"),
    ] {
        let profile = Profile::from_bytes_on(&bytes, time).unwrap();
        let warnings = profile_warnings(&profile.summary);
        assert!(
            warnings.iter().any(|w| w.starts_with(
                "the kernel dropped 7 context-switch records (a thread's ring was full"
            ) && w.ends_with(says)),
            "{warnings:?}"
        );
    }
}

/// Samples come at their places among the records: the frames open at a sample's
/// instant get its total time, the samples are kept by address and top frame (which
/// the report names), and the ones before the first record, between two calls and after
/// the last record's frames closed count as outside; the anchor maps ns to ticks as for
/// switches (2 ticks a ns, anchor 1000 ns = tick 0), across the batches of the replay.
#[test]
fn samples_go_to_the_frames_open_at_their_instant() {
    use crate::analysis::model::Profile;
    use crate::input::format::{Clock, Samples};
    use Record as R;
    let mut header = crate::input::format::Header::new(Endian::Little);
    header.ticks_per_second = 2_000_000_000;
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    // a (0x10) from 100 to 1000, b (0x20) inside it from 200 to 700, then 40 calls of c
    // (0x30) from 2000 on, 10 ticks each: more than a batch of records.
    let mut records = vec![
        R::entry(100, 0x10),
        R::entry(200, 0x20),
        R::exit(700, 0x20),
        R::exit(1000, 0x10),
    ];
    for i in 0..40u64 {
        records.push(R::entry(2000 + 20 * i, 0x30));
        records.push(R::exit(2010 + 20 * i, 0x30));
    }
    w.events(5, &records).unwrap();
    let at = |tick: u64| 1000 + tick / 2; // ns of a tick
    let samples = Samples {
        anchor_ticks: 0,
        anchor_ns: 1000,
        period_ns: 100_000,
        in_hooks: 3,
        points: vec![
            (at(50), 0x1),    // before any record: outside
            (at(300), 0x25),  // in b
            (at(800), 0x14),  // in a, after b
            (at(1500), 0x2),  // between a and the c calls: outside
            (at(2004), 0x31), // in the first c
            (at(2784), 0x33), // in the 40th c: the last batch
            (at(2900), 0x3),  // after every record: outside
        ],
    };
    w.samples(5, &samples).unwrap();
    w.thread(5, 1, "main").unwrap();
    w.clock(&Clock {
        ticks_per_second: 2_000_000_000,
        first_tick: 0,
        last_tick: 3000,
        header_check: None,
    })
    .unwrap();
    let bytes = w.into_inner();
    let profile = Profile::from_trace(&Trace::new(&bytes).unwrap()).unwrap();
    let s = &profile.summary;
    assert_eq!((s.sample_period_ns, s.samples_in_hooks), (100_000, 3));
    assert_eq!(s.samples(), (7, 4));
    assert_eq!(s.threads[0].samples_outside, 3);
    let table = &profile.threads[0].table;
    let total = |f: u64| table.functions[&f].sampled_total;
    assert_eq!((total(0x10), total(0x20), total(0x30)), (2, 1, 2));
    let mut by_place: Vec<_> = table.samples.iter().map(|(&k, &n)| (k, n)).collect();
    by_place.sort_unstable();
    assert_eq!(
        by_place,
        [
            ((0x14, 0x10), 1),
            ((0x25, 0x20), 1),
            ((0x31, 0x30), 1),
            ((0x33, 0x30), 1)
        ]
    );
}

/// Switched-out time inside the runtime's pauses (waiting for the writer thread) is cut
/// out when times are compensated, as the pauses are; overlapping switches merge.
#[test]
fn pauses_are_cut_out_of_the_switched_out_time() {
    let mut t = SwitchTimeline::new(
        vec![(60, 100), (10, 50), (15, 20)],
        vec![(20, 30), (40, 70), (90, 200)],
    );
    assert_eq!(t.intervals, [(10, 20), (30, 40), (70, 90)]);
    assert_eq!(t.total(), 40);
    assert_eq!(
        [5, 15, 25, 35, 80, 300].map(|time| t.offcpu_until(time)),
        [0, 5, 10, 15, 30, 40]
    );
    // Back in time: a search, the same answers.
    assert_eq!(t.offcpu_until(15), 5);
    assert_eq!(t.constant_over(41, 69), Some(20));
    assert_eq!(t.constant_over(41, 71), None);
}

#[test]
fn frames_of_a_thread_that_ended_close_at_its_end_not_at_the_clock() {
    use Record as R;
    let mut header = crate::input::format::Header::new(Endian::Little);
    header.version = 1;
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    // Thread 5 called pthread_exit inside b; thread 6 was still in c at exit().
    w.events(5, &[R::entry(10, 0xa), R::entry(11, 0xb)])
        .unwrap();
    w.end(5, 12).unwrap();
    w.thread(5, 2, "worker").unwrap();
    w.events(6, &[R::entry(20, 0xc)]).unwrap();
    w.clock(&Clock {
        ticks_per_second: 1,
        first_tick: 0,
        last_tick: 100,
        header_check: None,
    })
    .unwrap();
    let bytes = w.into_inner();
    let mut log = Log::default();
    let summary = replay(&Trace::new(&bytes).unwrap(), &mut log).unwrap();
    assert_eq!(
        log.0,
        [
            "5 enter a depth 1",
            "5 enter b depth 2",
            "6 enter c depth 1",
            "5 exit b at 12 EndOfThread depth 2",
            "5 exit a at 12 EndOfThread depth 1",
            "6 exit c at 100 EndOfThread depth 1",
        ]
    );
    assert_eq!(summary.thread(5).unwrap().end_time, Some(12));
    assert_eq!(summary.unknown_chunks, 0);
}

#[test]
fn unmatched_exits_do_not_search_the_stack() {
    use Record as R;
    let n = 2000u64;
    let mut records: Vec<Record> = (0..n).map(|i| R::entry(i, 0xa)).collect();
    records.extend((0..n).map(|i| R::exit(n + i, 0xb)));
    records.push(R::exit(2 * n, 0xa)); // matches the top frame
    let mut state = ThreadState::new(5, 0, None);
    let mut ids = DenseIds::default();
    state.records(&records, &vec![0; records.len()], &mut ids, &mut ());
    assert_eq!(state.summary.unmatched_exits, n);
    assert_eq!(state.stack.len() as u64, n - 1);
    assert_eq!(
        state.searched, 0,
        "searched the stack for exits that have no frame"
    );
    // A matched exit below the top searches only the frames it closes.
    let mut nested: Vec<Record> = (0..n).map(|i| R::entry(i, 0xc + 4 * (i % 2))).collect();
    nested.push(R::exit(n, 0xc));
    let mut state = ThreadState::new(6, 0, None);
    let mut ids = DenseIds::default();
    state.records(&nested, &vec![0; nested.len()], &mut ids, &mut ());
    assert_eq!(state.summary.unmatched_entries, 1);
    assert!(state.searched <= 2, "searched {}", state.searched);
}

/// The same records written as PACKED chunks and as 16-byte EVENTS are compensated alike
/// (each decoded batch a pass of the compensator): both replay the same, with resync escapes,
/// count marks, pauses between chunks and gaps shorter than the hooks.
#[test]
fn packed_records_are_compensated_as_events_records_are() {
    use crate::analysis::compensation::test_support::{numbers, OVERHEAD};
    use crate::input::format::{Header, COUNT_MARK};
    let overhead = OVERHEAD;
    let mut next = numbers();
    let mut time = 1000u64;
    let mut stack: Vec<u64> = Vec::new();
    let mut chunks: Vec<Vec<Record>> = Vec::new();
    for _ in 0..6 {
        let mut chunk = Vec::new();
        while chunk.len() < 700 {
            time += next() % 30;
            match next() % 40 {
                0 if stack.len() > 1 => {
                    // A longjmp back to a frame below the top: an escape, then its target.
                    chunk.push(Record::exit(time, 0));
                    let keep = 1 + (next() as usize) % (stack.len() - 1);
                    stack.truncate(keep);
                    time += next() % 30;
                    chunk.push(Record::entry(time, stack[keep - 1]));
                }
                1 => chunk.push(Record::exit(time, COUNT_MARK)),
                2..=19 => {
                    let address = 0x1000 + (next() % 6) * 16;
                    stack.push(address);
                    chunk.push(Record::entry(time, address));
                }
                _ => {
                    if let Some(address) = stack.pop() {
                        chunk.push(Record::exit(time, address));
                    }
                }
            }
        }
        chunks.push(chunk);
    }
    let write = |packed: bool| {
        let mut w = Writer::new(Vec::new(), &Header::new(Endian::Little)).unwrap();
        w.overhead(&overhead).unwrap();
        for (i, chunk) in chunks.iter().enumerate() {
            if i % 2 == 1 {
                let before = chunk[0].time;
                w.pause(5, before.saturating_sub(20), before.saturating_sub(5))
                    .unwrap();
            }
            if packed {
                w.packed(5, chunk).unwrap();
            } else {
                w.events(5, chunk).unwrap();
            }
        }
        w.into_inner()
    };
    let replayed = |bytes: Vec<u8>| {
        let mut log = Log::default();
        let summary = replay(&Trace::new(&bytes).unwrap(), &mut log).unwrap();
        assert!(summary.compensated);
        let t = &summary.threads[0];
        log.0.push(format!("{:?} {:?}", t.first_time, t.last_time));
        log.0
    };
    let events = replayed(write(false));
    assert!(events.len() > 2000);
    assert_eq!(replayed(write(true)), events);
}
