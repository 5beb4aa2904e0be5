//! The views (timeline, flame, callgrind, replay) on the synthetic golden trace: golden files
//! in tests/data/views-*, the trace-event rules of the timeline, and the shared filters.
//!
//! `HOOKPROF_BLESS=1 cargo test -p hookprof --test views` rewrites the golden files.

mod common;

use std::collections::HashMap;

use common::*;
use hookprof::analysis::replay::replay_bytes;
use hookprof::analysis::replay::Aggregate;
use hookprof::analysis::view::{Filter, Names, TraceInfo, View, ViewFrame, Viewer};
use hookprof::input::format::{Endian, Trace};
use hookprof::output::report::callgrind::CallgrindProfile;
use hookprof::output::report::calltree::CallTree;
use hookprof::output::report::flame::FoldedStacks;
use hookprof::output::report::perfetto::Perfetto;
use hookprof::output::report::timeline::Timeline;

fn info(bytes: &[u8]) -> TraceInfo {
    TraceInfo::scan(&Trace::new(bytes).unwrap()).unwrap()
}

fn run<V: View>(bytes: &[u8], view: V, filter: &Filter) -> (V, Names) {
    let info = info(bytes);
    let mut names = names();
    let mut viewer = Viewer::new(view, &info, filter, &mut names);
    replay_bytes(bytes, &mut viewer).unwrap();
    viewer.into_parts()
}

fn timeline(bytes: &[u8], filter: &Filter) -> String {
    let info = info(bytes);
    let view = Timeline::start(Vec::new(), &info).unwrap();
    let (view, _) = run(bytes, view, filter);
    String::from_utf8(view.finish().unwrap()).unwrap()
}

/// The Perfetto trace, one `Trace.packet` a line as hex: the golden file's normalized form.
fn perfetto(bytes: &[u8], filter: &Filter) -> String {
    let info = info(bytes);
    let view = Perfetto::start(Vec::new(), &info).unwrap();
    let (view, _) = run(bytes, view, filter);
    let trace = view.finish().unwrap();
    let mut text = String::new();
    let mut rest = &trace[..];
    while !rest.is_empty() {
        assert_eq!(rest[0], 0x0a, "a Trace.packet field: {rest:x?}");
        let (mut len, mut at) = (0usize, 1);
        while rest[at] & 0x80 != 0 {
            len |= usize::from(rest[at] & 0x7f) << (7 * (at - 1));
            at += 1;
        }
        len |= usize::from(rest[at]) << (7 * (at - 1));
        let (packet, next) = rest[at + 1..].split_at(len);
        text.extend(packet.iter().map(|b| format!("{b:02x}")));
        text.push('\n');
        rest = next;
    }
    text
}

fn folded(bytes: &[u8], filter: &Filter, per_thread: bool) -> String {
    let info = info(bytes);
    let (view, names) = run(bytes, FoldedStacks::new(&info, per_thread), filter);
    let mut out = Vec::new();
    view.write_folded(&names, &info.clock, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

fn calltree(bytes: &[u8], filter: &Filter) -> String {
    let info = info(bytes);
    let view = CallTree::start(Vec::new(), &info).unwrap();
    let (view, names) = run(bytes, view, filter);
    String::from_utf8(view.finish(&names).unwrap()).unwrap()
}

fn callgrind(bytes: &[u8], filter: &Filter) -> String {
    let info = info(bytes);
    let (view, names) = run(bytes, CallgrindProfile::new(), filter);
    let mut out = Vec::new();
    view.write(&info, None, &names, &info.clock, &|_| None, &mut out)
        .unwrap();
    String::from_utf8(out).unwrap()
}

fn pattern(p: &str) -> glob::Pattern {
    Filter::pattern(p).unwrap()
}

/// Checks the trace-event format's rules on a timeline: valid JSON, per thread B and E
/// balanced (never an E without its B) and timestamps never going back. Returns the B
/// events' names per tid.
pub fn check_trace_events(json: &str) -> HashMap<u64, Vec<String>> {
    let value: serde_json::Value = serde_json::from_str(json).expect("the timeline is JSON");
    let events = value["traceEvents"].as_array().expect("traceEvents array");
    let mut open: HashMap<u64, Vec<String>> = HashMap::new();
    let mut last_ts: HashMap<u64, f64> = HashMap::new();
    let mut names: HashMap<u64, Vec<String>> = HashMap::new();
    for e in events {
        let tid = e["tid"].as_u64().expect("tid");
        let ph = e["ph"].as_str().expect("ph");
        if ph == "M" {
            continue;
        }
        let ts = e["ts"].as_f64().expect("ts");
        let last = last_ts.entry(tid).or_insert(f64::MIN);
        assert!(
            ts >= *last,
            "tid {tid}: ts goes back from {last} to {ts} at {e}"
        );
        *last = ts;
        match ph {
            "B" => {
                let name = e["name"].as_str().expect("name").to_string();
                open.entry(tid).or_default().push(name.clone());
                names.entry(tid).or_default().push(name);
            }
            "E" => {
                let name = open.entry(tid).or_default().pop();
                assert!(name.is_some(), "tid {tid}: E without B at {e}");
                // speedscope ignores an E whose name is not its B's.
                assert_eq!(e["name"].as_str(), name.as_deref(), "tid {tid}: {e}");
            }
            other => panic!("unexpected phase {other} in {e}"),
        }
    }
    for (tid, stack) in &open {
        assert!(
            stack.is_empty(),
            "tid {tid}: B events never closed: {stack:?}"
        );
    }
    names
}

#[test]
fn golden_views() {
    let trace = golden_trace(Endian::Little);
    let all = Filter::default();
    check_golden("views-timeline.json", &timeline(&trace, &all));
    check_golden("views-perfetto.hex", &perfetto(&trace, &all));
    check_golden("views-flame.folded", &folded(&trace, &all, false));
    check_golden("views-flame-per-thread.folded", &folded(&trace, &all, true));
    check_golden("views-callgrind.out", &callgrind(&trace, &all));
    check_golden("views-replay.txt", &calltree(&trace, &all));
}

#[test]
fn golden_views_filtered() {
    let trace = golden_trace(Endian::Little);
    let filter = Filter {
        min_duration_ns: 10,
        ..Filter::default()
    };
    check_golden("views-replay-min-duration.txt", &calltree(&trace, &filter));
    let filter = Filter {
        functions: vec![pattern("fact*")],
        threads: vec![1],
        ..Filter::default()
    };
    check_golden("views-replay-function.txt", &calltree(&trace, &filter));
    let filter = Filter {
        exclude: vec![pattern("a")],
        depth: Some(2),
        ..Filter::default()
    };
    check_golden(
        "views-flame-exclude-depth.folded",
        &folded(&trace, &filter, false),
    );
}

#[test]
fn timeline_follows_the_trace_event_rules() {
    for endian in [Endian::Little, Endian::Big] {
        let json = timeline(&golden_trace(endian), &Filter::default());
        let names = check_trace_events(&json);
        // Every call of the main thread, in entry order.
        assert_eq!(
            names[&TID_MAIN],
            [
                "main",
                "a",
                "b",
                "b",
                "fact(int)",
                "fact(int)",
                "fact(int)",
                "0x8000"
            ]
        );
        // The worker's frames closed by an outer exit and at the end are closed too.
        assert_eq!(names[&TID_WORKER], ["x", "y", "x", "y"]);
    }
    // With --min-duration the frames are told late, still in order per thread.
    let filter = Filter {
        min_duration_ns: 10,
        ..Filter::default()
    };
    let names = check_trace_events(&timeline(&golden_trace(Endian::Little), &filter));
    assert_eq!(
        names[&TID_MAIN],
        ["main", "a", "b", "fact(int)", "fact(int)", "fact(int)"]
    );
}

#[test]
fn folded_counts_add_up_to_the_exclusive_times() {
    let trace = golden_trace(Endian::Little);
    let text = folded(&trace, &Filter::default(), false);
    let total: u64 = text
        .lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    // main thread: 200 ns; worker: x [0,12) and x [20,200) closed at the CLOCK's last tick.
    assert_eq!(total, 200 + 12 + 180);
    // Hidden calls count as the caller's own time: with b hidden, a keeps its 50 ns.
    let filter = Filter {
        exclude: vec![pattern("b")],
        ..Filter::default()
    };
    let text = folded(&trace, &filter, false);
    assert!(text.lines().any(|l| l == "main;a 50"), "{text}");
    assert!(!text.contains(";b"), "{text}");
}

#[test]
fn filters_select_threads_by_number_or_tid() {
    let trace = golden_trace(Endian::Little);
    for thread in [1, TID_MAIN] {
        let filter = Filter {
            threads: vec![thread],
            ..Filter::default()
        };
        let text = calltree(&trace, &filter);
        assert!(text.contains("main() {"), "{text}");
        assert!(!text.contains("x() {"), "{text}");
    }
    let filter = Filter {
        threads: vec![TID_WORKER],
        ..Filter::default()
    };
    let text = calltree(&trace, &filter);
    assert!(!text.contains("main"), "{text}");
    assert!(text.contains("x() {"), "{text}");
}

#[test]
fn svg_flame_graph_names_every_function() {
    let bytes = golden_trace(Endian::Little);
    let info = info(&bytes);
    let (view, names) = run(&bytes, FoldedStacks::new(&info, false), &Filter::default());
    for inverted in [false, true] {
        let mut out = Vec::new();
        view.write_svg(&names, &info.clock, "golden", inverted, &mut out)
            .unwrap();
        let svg = String::from_utf8(out).unwrap();
        assert!(svg.starts_with("<?xml"), "{}", &svg[..100]);
        for f in ["main", "fact(int)", "x", "y", "0x8000"] {
            assert!(svg.contains(&format!("<title>{f} (")), "{f} missing");
        }
    }
}

#[test]
fn report_percentiles_sort_and_top() {
    use hookprof::analysis::model::Profile;
    use hookprof::output::report::percentiles::CallDurations;
    use hookprof::output::report::{FlatReport, Format, SortKey};

    let bytes = golden_trace(Endian::Little);
    let profile = Profile::from_trace(&Trace::new(&bytes).unwrap()).unwrap();
    let info = info(&bytes);
    let (durations, view_names) = run(&bytes, CallDurations::new(), &Filter::default());
    for per_thread in [false, true] {
        let mut report = FlatReport::build(&profile, &mut names(), per_thread);
        durations.fill(&mut report, &info, &view_names);
        let fact = report
            .rows
            .iter()
            .find(|r| r.function == "fact(int)")
            .unwrap();
        // fact's three calls last 50, 30 and 10 ns.
        assert_eq!(fact.percentiles, Some([30, 50, 50]), "{fact:?}");
        for r in &report.rows {
            let [p50, p90, p99] = r.percentiles.expect("every row has percentiles");
            assert!(
                r.min <= p50 && p50 <= p90 && p90 <= p99 && p99 <= r.max,
                "{r:?}"
            );
        }
        report.sort_and_limit(SortKey::Calls, Some(2));
        let mut text = Vec::new();
        report.render(Format::Text, &mut text).unwrap();
        let name = if per_thread {
            "views-report-percentiles-top-per-thread.txt"
        } else {
            "views-report-percentiles-top.txt"
        };
        check_golden(name, &String::from_utf8(text).unwrap());
    }
}

/// Checks a speedscope file: every profile's O and C events nest (a C closes the frame of
/// the last open O), `at` never goes back, frames exist. Returns the opened frames' names
/// per profile.
pub fn check_speedscope(json: &str) -> Vec<Vec<String>> {
    let value: serde_json::Value = serde_json::from_str(json).expect("speedscope JSON");
    assert_eq!(
        value["$schema"],
        "https://www.speedscope.app/file-format-schema.json"
    );
    let frames: Vec<&str> = value["shared"]["frames"]
        .as_array()
        .expect("shared.frames")
        .iter()
        .map(|f| f["name"].as_str().expect("frame name"))
        .collect();
    let mut result = Vec::new();
    for profile in value["profiles"].as_array().expect("profiles") {
        assert_eq!(profile["type"], "evented");
        let start = profile["startValue"].as_u64().expect("startValue");
        let end = profile["endValue"].as_u64().expect("endValue");
        let mut open = Vec::new();
        let mut last = start;
        let mut opened = Vec::new();
        for e in profile["events"].as_array().expect("events") {
            let frame = e["frame"].as_u64().expect("frame") as usize;
            let at = e["at"].as_u64().expect("at");
            assert!(frame < frames.len(), "{e}");
            assert!(
                at >= last && at <= end,
                "at {at} after {last}, end {end}: {e}"
            );
            last = at;
            match e["type"].as_str().expect("type") {
                "O" => {
                    open.push(frame);
                    opened.push(frames[frame].to_string());
                }
                "C" => assert_eq!(open.pop(), Some(frame), "C must close the last O: {e}"),
                other => panic!("event type {other}"),
            }
        }
        assert!(open.is_empty(), "{} frames never closed", open.len());
        result.push(opened);
    }
    result
}

#[test]
fn golden_speedscope() {
    use hookprof::output::report::speedscope::Speedscope;
    let bytes = golden_trace(Endian::Little);
    let info = info(&bytes);
    let mut view = Speedscope::start(Vec::new(), info.clock).unwrap();
    for thread in &info.threads {
        view.begin_thread(&format!("tid {}", thread.tid)).unwrap();
        let filter = Filter {
            threads: vec![thread.tid],
            ..Filter::default()
        };
        view = run(&bytes, view, &filter).0;
        view.end_thread().unwrap();
    }
    let json = String::from_utf8(view.finish("golden").unwrap()).unwrap();
    check_golden("views-speedscope.json", &json);
    let opened = check_speedscope(&json);
    assert_eq!(
        opened,
        [
            vec![
                "main",
                "a",
                "b",
                "b",
                "fact(int)",
                "fact(int)",
                "fact(int)",
                "0x8000"
            ],
            vec!["x", "y", "x", "y"],
        ]
    );
}

#[test]
fn golden_diff() {
    use hookprof::analysis::model::Profile;
    use hookprof::input::format::Writer;
    use hookprof::output::report::diff::Diff;
    use hookprof::output::report::FlatReport;

    let a = golden_trace(Endian::Little);
    // B: only the main thread, with b's second call gone and fact's recursion one level
    // shorter.
    let mut w = Writer::new(Vec::new(), &header(Endian::Little)).unwrap();
    let mut records = main_thread_records();
    records.retain(|r| r.time != 70 && r.time != 75 && r.time != 120 && r.time != 130);
    w.events(TID_MAIN, &records).unwrap();
    let b = w.into_inner();
    let report = |bytes: &[u8]| {
        let profile = Profile::from_trace(&Trace::new(bytes).unwrap()).unwrap();
        FlatReport::build(&profile, &mut names(), false)
    };
    let diff = Diff::new(&report(&a), &report(&b));
    let fact = diff
        .rows
        .iter()
        .find(|r| r.function == "fact(int)")
        .unwrap();
    assert_eq!((fact.calls, fact.exclusive), ([3, 2], [50, 50]));
    let y = diff.rows.iter().find(|r| r.function == "y").unwrap();
    assert_eq!((y.calls, y.exclusive), ([2, 0], [177, 0]));
    let mut text = Vec::new();
    diff.write_text(None, &mut text).unwrap();
    check_golden("views-diff.txt", &String::from_utf8(text).unwrap());
    let mut csv = Vec::new();
    diff.write_csv(Some(3), &mut csv).unwrap();
    check_golden("views-diff-top3.csv", &String::from_utf8(csv).unwrap());
}

#[test]
fn gmon_out_records_arcs_and_exclusive_times() {
    use hookprof::analysis::model::Profile;
    use hookprof::output::report::gmon::{write, Target};
    for endian in [Endian::Little, Endian::Big] {
        let bytes = golden_trace(endian);
        let profile = Profile::from_trace(&Trace::new(&bytes).unwrap()).unwrap();
        let target = Target {
            endian,
            pointer_size: 8,
            bias: 0,
            start: 0x1000,
            end: 0x9000,
            ticks_per_second: 1_000_000_000,
        };
        let mut out = Vec::new();
        let rate = write(&profile, &target, &|a| a, &mut out).unwrap();
        let u32_at = |at: usize| {
            let b: [u8; 4] = out[at..at + 4].try_into().unwrap();
            match endian {
                Endian::Little => u32::from_le_bytes(b),
                Endian::Big => u32::from_be_bytes(b),
            }
        };
        let u64_at = |at: usize| {
            let b: [u8; 8] = out[at..at + 8].try_into().unwrap();
            match endian {
                Endian::Little => u64::from_le_bytes(b),
                Endian::Big => u64::from_be_bytes(b),
            }
        };
        assert_eq!(&out[..4], b"gmon");
        assert_eq!(u32_at(4), 1, "version");
        // The histogram: functions from main (0x1000) to the hex one (0x8000), 2-byte bins.
        let h = 20;
        assert_eq!(out[h], 0, "time histogram tag");
        assert_eq!((u64_at(h + 1), u64_at(h + 9)), (0x1000, 0x8002));
        let bins = u32_at(h + 17) as usize;
        assert_eq!(bins, 0x3801);
        assert_eq!(u32_at(h + 21), rate);
        assert_eq!(&out[h + 25..h + 32], b"seconds");
        let bin = |address: u64| {
            let at = h + 41 + 2 * ((address - 0x1000) / 2) as usize;
            let b = [out[at], out[at + 1]];
            match endian {
                Endian::Little => u16::from_le_bytes(b),
                Endian::Big => u16::from_be_bytes(b),
            }
        };
        // Every time fits a bin at the clock's own rate: one sample per nanosecond. (The
        // rate drops below the clock's only for a function with more than 65535 ticks.)
        assert_eq!(rate, 1_000_000_000);
        assert_eq!((bin(Y), bin(FACT), bin(MAIN), bin(ANON)), (177, 50, 94, 1));
        // Then one record per arc with a caller: main→a, a→b, main→b, main→fact,
        // fact→fact, main→anon, x→y.
        let mut at = h + 41 + 2 * bins;
        let mut arcs = Vec::new();
        while at < out.len() {
            assert_eq!(out[at], 1, "arc tag at {at}");
            arcs.push((u64_at(at + 1), u64_at(at + 9), u32_at(at + 17)));
            at += 21;
        }
        assert_eq!(
            arcs,
            [
                (MAIN, A, 1),
                (MAIN, B, 1),
                (MAIN, FACT, 1),
                (MAIN, ANON, 1),
                (A, B, 1),
                (FACT, FACT, 2),
                (X, Y, 2),
            ]
        );
        // The golden file: the same, decoded (the histogram's non-zero bins only).
        let mut text = format!(
            "gmon version {}\nhistogram 0x{:x}..0x{:x} {bins} bins, {rate}/s, {}\n",
            u32_at(4),
            u64_at(h + 1),
            u64_at(h + 9),
            String::from_utf8_lossy(&out[h + 25..h + 40]).trim_end_matches('\0')
        );
        for address in (0x1000..0x1000 + 2 * bins as u64).step_by(2) {
            if bin(address) != 0 {
                text += &format!("bin 0x{address:x} {}\n", bin(address));
            }
        }
        for (from, to, count) in &arcs {
            text += &format!("arc 0x{from:x} -> 0x{to:x} {count}\n");
        }
        // Both byte orders decode to the same file.
        check_golden("views-gmon.txt", &text);
    }
}

#[test]
fn time_range_shows_the_calls_starting_in_it() {
    let trace = golden_trace(Endian::Little);
    let filter = Filter {
        time_range_ns: Some((100, 160)),
        ..Filter::default()
    };
    let names = check_trace_events(&timeline(&trace, &filter));
    assert_eq!(names[&TID_MAIN], ["fact(int)", "fact(int)", "fact(int)"]);
    assert!(!names.contains_key(&TID_WORKER), "{names:?}");
    // A call starting in the range is shown at depth 1 when its caller started before.
    let text = calltree(&trace, &filter);
    assert!(text.contains("[    1] | fact(int) {"), "{text}");
}

#[test]
fn views_of_a_trace_without_clock_rate_are_in_ticks() {
    let mut h = header(Endian::Big);
    h.ticks_per_second = 0;
    h.flags = 0;
    let trace = golden_trace_with(h, false);
    let json = timeline(&trace, &Filter::default());
    let names = check_trace_events(&json);
    assert_eq!(names[&TID_MAIN].len(), 8);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["otherData"]["unit"], "ticks");
    // Without the CLOCK chunk the worker's open frames close at its last record (30).
    let text = folded(&trace, &Filter::default(), false);
    assert!(text.lines().any(|l| l == "main;fact(int) 20"), "{text}");
    let cg = callgrind(&trace, &Filter::default());
    assert!(cg.contains("events: ticks"), "{cg}");
    let tree = calltree(&trace, &Filter::default());
    assert!(
        tree.contains("      200 tk   [    1] | } /* main */"),
        "{tree}"
    );
}

#[test]
fn progress_is_reported_every_65536_records() {
    use hookprof::analysis::view::Progress;
    use hookprof::input::format::{Record, Writer};
    use std::sync::{Arc, Mutex};

    let mut w = Writer::new(Vec::new(), &header(Endian::Little)).unwrap();
    let records: Vec<Record> = (0..100_000u64)
        .flat_map(|i| [Record::entry(2 * i, A), Record::exit(2 * i + 1, A)])
        .collect();
    w.events(TID_MAIN, &records).unwrap();
    let bytes = w.into_inner();
    let info = info(&bytes);
    assert_eq!(info.records, 200_000);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let progress = Progress(Arc::new(move |done, total| {
        log.lock().unwrap().push((done, total))
    }));
    let mut names = names();
    let view = CallgrindProfile::new();
    let mut viewer =
        Viewer::new(view, &info, &Filter::default(), &mut names).with_progress(Some(progress));
    replay_bytes(&bytes, &mut viewer).unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [(65_536, 200_000), (131_072, 200_000), (196_608, 200_000)]
    );
}

#[test]
fn report_callers() {
    use hookprof::analysis::model::Profile;
    use hookprof::output::report::{FlatReport, Format};

    let bytes = golden_trace(Endian::Little);
    let profile = Profile::from_trace(&Trace::new(&bytes).unwrap()).unwrap();
    for per_thread in [false, true] {
        let mut report = FlatReport::build(&profile, &mut names(), per_thread);
        report.add_callers(&profile, &mut names());
        let b = report.rows.iter().find(|r| r.function == "b").unwrap();
        assert_eq!(
            b.callers.as_deref(),
            Some(&[("a".to_string(), 1), ("main".to_string(), 1)][..])
        );
        let fact = report
            .rows
            .iter()
            .find(|r| r.function == "fact(int)")
            .unwrap();
        assert_eq!(
            fact.callers.as_deref(),
            Some(&[("fact(int)".to_string(), 2), ("main".to_string(), 1)][..])
        );
        for format in [Format::Text, Format::Csv] {
            let mut out = Vec::new();
            report.render(format, &mut out).unwrap();
            let ext = if format == Format::Text { "txt" } else { "csv" };
            let name = if per_thread {
                format!("views-report-callers-per-thread.{ext}")
            } else {
                format!("views-report-callers.{ext}")
            };
            check_golden(&name, &String::from_utf8(out).unwrap());
        }
    }
}

#[test]
fn deep_recursion_is_cut_in_folded_stacks_and_unindented_in_the_call_tree() {
    use hookprof::input::format::{Record, Writer};
    use hookprof::output::report::calltree::MAX_INDENT_LEVELS;
    use hookprof::output::report::flame::{deeper_label, MAX_STACK_FRAMES};

    // main calls a, which calls itself 20 000 deep; every frame takes 1 ns of its own.
    const DEPTH: u64 = 20_000;
    let mut records = vec![Record::entry(0, MAIN)];
    let mut t = 1;
    for _ in 0..DEPTH {
        records.push(Record::entry(t, A));
        t += 1;
    }
    for _ in 0..DEPTH {
        records.push(Record::exit(t, A));
        t += 1;
    }
    records.push(Record::exit(t, MAIN));
    let mut w = Writer::new(Vec::new(), &header(Endian::Little)).unwrap();
    w.events(TID_MAIN, &records).unwrap();
    let bytes = w.into_inner();
    let text = folded(&bytes, &Filter::default(), false);
    // Without the cut: 20 000 lines averaging 10 000 frames, 200 MB.
    assert!(
        text.len() < 2_000_000,
        "{} bytes of folded stacks",
        text.len()
    );
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        MAX_STACK_FRAMES + 1,
        "one line a level, and the marker"
    );
    let (deepest, count) = lines
        .iter()
        .find_map(|l| {
            l.rsplit_once(' ')
                .filter(|(s, _)| s.ends_with(&deeper_label()))
        })
        .expect("a marker line");
    assert_eq!(deepest.split(';').count(), MAX_STACK_FRAMES + 1);
    // Frames deeper than the cut: each 2 ns of its own (entry to its child's entry, and
    // its child's exit to its own exit), the innermost 1 ns.
    let cut = DEPTH - (MAX_STACK_FRAMES as u64 - 1);
    assert_eq!(count.parse::<u64>().unwrap(), 2 * cut - 1);
    let total: u64 = lines
        .iter()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, t, "every tick of main's inclusive time, once");

    // The call tree stops indenting at 64 levels and names the depth instead.
    let tree = calltree(&bytes, &Filter::default());
    assert!(tree.len() < 8_000_000, "{} bytes of call tree", tree.len());
    let deepest_indented = format!("|{}a() {{\n", " ".repeat(1 + 2 * MAX_INDENT_LEVELS));
    assert!(tree.contains(&deepest_indented), "64 levels indented");
    assert!(
        tree.lines()
            .any(|l| l.ends_with(&format!("[depth {}] a();", DEPTH + 1))),
        "the innermost call says its depth"
    );
}

/// [`FoldedStacks`] told of frames as any view is ([`View::enter`], [`View::exit`]), not by
/// node ([`View::NODES`]): what the node path must give.
struct ByFrames(FoldedStacks);

impl View for ByFrames {
    fn enter(&mut self, tid: u64, stack: &mut [ViewFrame], names: &Names) {
        self.0.enter(tid, stack, names);
    }
    fn exit(&mut self, tid: u64, time: u64, stack: &[ViewFrame], names: &Names) {
        self.0.exit(tid, time, stack, names);
    }
    fn aggregate(&mut self, tid: u64, stack: &[ViewFrame], calls: &Aggregate, names: &Names) {
        self.0.aggregate(tid, stack, calls, names);
    }
}

#[test]
fn flame_by_nodes_gives_the_stacks_of_flame_by_frames() {
    use hookprof::input::format::{Record, Writer};
    // Two threads; a loop (a calls b, 50 times); an exit that closes the frames above its
    // own (b and x); an exit without a frame (y); a recursion 600 deep (past the cut at 512
    // frames) whose frames call b; a's frames still open at the thread's end.
    let script = |calls: &[(bool, u64)], times: usize, out: &mut Vec<(bool, u64)>| {
        (0..times).for_each(|_| out.extend_from_slice(calls))
    };
    let (mut main, mut worker) = (vec![(true, MAIN)], vec![]);
    script(
        &[(true, A), (true, B), (false, B), (false, A)],
        50,
        &mut main,
    );
    script(
        &[(true, A), (true, B), (true, X), (false, A), (false, Y)],
        1,
        &mut main,
    );
    script(&[(true, FACT), (true, B), (false, B)], 600, &mut main);
    script(&[(false, FACT)], 600, &mut main);
    script(&[(true, A)], 3, &mut main);
    script(
        &[(true, Z), (true, B), (false, B), (false, Z)],
        20,
        &mut worker,
    );
    let records = |calls: &[(bool, u64)], t0: u64| -> Vec<Record> {
        let at = |i: usize| t0 + 3 * i as u64;
        let r = |(i, &(entry, a)): (usize, &(bool, u64))| match entry {
            true => Record::entry(at(i), a),
            false => Record::exit(at(i), a),
        };
        calls.iter().enumerate().map(r).collect()
    };
    let mut w = Writer::new(Vec::new(), &header(Endian::Little)).unwrap();
    w.events(TID_MAIN, &records(&main[..700], 0)).unwrap();
    w.events(TID_WORKER, &records(&worker, 1)).unwrap();
    w.events(TID_MAIN, &records(&main[700..], 2100)).unwrap();
    for bytes in [w.into_inner(), golden_trace(Endian::Little)] {
        let info = info(&bytes);
        for per_thread in [false, true] {
            let by_nodes = folded(&bytes, &Filter::default(), per_thread);
            let stacks = ByFrames(FoldedStacks::new(&info, per_thread));
            let (view, names) = run(&bytes, stacks, &Filter::default());
            let mut by_frames = Vec::new();
            view.0
                .write_folded(&names, &info.clock, &mut by_frames)
                .unwrap();
            assert_eq!(by_nodes, String::from_utf8(by_frames).unwrap());
            assert!(by_nodes.lines().count() > 3, "{by_nodes}");
        }
    }
}

/// A thread switched out twice (SWITCH chunk; 1 GHz, so ticks are ns): `a` [100, 1000) calls
/// `b` [200, 700); out 300..500 (in b) and 800..850 (in a).
fn switched_trace() -> Vec<u8> {
    use hookprof::input::format::{Clock, Record as R, Switches, Writer};
    let mut w = Writer::new(Vec::new(), &header(Endian::Little)).unwrap();
    w.events(
        TID_MAIN,
        &[
            R::entry(100, A),
            R::entry(200, B),
            R::exit(700, B),
            R::exit(1000, A),
        ],
    )
    .unwrap();
    w.switches(
        TID_MAIN,
        &Switches {
            anchor_ticks: 0,
            anchor_ns: 0,
            lost: 0,
            pairs: vec![(300, 500), (800, 850)],
        },
    )
    .unwrap();
    w.thread(TID_MAIN, 1, "main").unwrap();
    w.clock(&Clock {
        ticks_per_second: 1_000_000_000,
        first_tick: 0,
        last_tick: 1000,
        header_check: None,
    })
    .unwrap();
    w.into_inner()
}

/// The timeline's events as `ph name ts` (ts in ns since the first record).
fn timeline_events(json: &str) -> Vec<String> {
    let value: serde_json::Value = serde_json::from_str(json).unwrap();
    value["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] != "M")
        .map(|e| {
            let ns = (e["ts"].as_f64().unwrap() * 1000.0).round();
            format!(
                "{} {} {ns}",
                e["ph"].as_str().unwrap(),
                e["name"].as_str().unwrap()
            )
        })
        .collect()
}

/// `--time=cpu`: the views that count time count the thread's CPU time (the time switched out
/// left out); the timeline stays on the wall clock with a `switched out` slice nested in the
/// call that was open for each interval, under `--min-duration` only an interval that long,
/// whose calls around it are then shown before it.
#[test]
fn cpu_time_in_the_views_and_switched_out_slices_in_the_timeline() {
    use hookprof::analysis::replay::TimeBasis;
    let bytes = switched_trace();
    let cpu = Filter {
        time: TimeBasis::Cpu,
        ..Filter::default()
    };
    // a: 900 ns, 250 of them out (50 on top); b: 500 ns, 200 out.
    assert_eq!(folded(&bytes, &cpu, false), "a 350\na;b 300\n");
    assert_eq!(
        folded(&bytes, &Filter::default(), false),
        "a 400\na;b 500\n"
    );

    let with_slices = |filter: &Filter| {
        let info = info(&bytes);
        let view = Timeline::start(Vec::new(), &info)
            .unwrap()
            .with_switched_out(true);
        let (view, _) = run(&bytes, view, filter);
        timeline_events(&String::from_utf8(view.finish().unwrap()).unwrap())
    };
    assert_eq!(
        with_slices(&Filter::default()),
        [
            "B a 0",
            "B b 100",
            "B switched out 200",
            "E switched out 400",
            "E b 600",
            "B switched out 700",
            "E switched out 750",
            "E a 900"
        ]
    );
    // Calls and intervals under 100 ns hidden: b's interval (200 ns) is shown, after a and b
    // (told late: their length is known at their exit), a's (50 ns) is not.
    let long = Filter {
        min_duration_ns: 100,
        ..Filter::default()
    };
    assert_eq!(
        with_slices(&long),
        [
            "B a 0",
            "B b 100",
            "B switched out 200",
            "E switched out 400",
            "E b 600",
            "E a 900"
        ]
    );
    // The plain timeline has none.
    assert!(!timeline(&bytes, &Filter::default()).contains("switched out"));
}

/// `export --format=pprof` of the switched trace: one sample a call path, its calls, CPU and
/// wall time (a's own time 400 ns on the wall, 350 on the CPU; b's 500 and 300); the
/// uncompressed profile.proto, one top-level field a line in hex, is the golden file.
#[test]
fn pprof_samples_have_calls_cpu_and_wall_time_a_path() {
    use hookprof::analysis::replay::TimeBasis;
    use hookprof::output::pprof::{CallPaths, Process, ProfileBuilder};
    use std::io::Read;
    let bytes = switched_trace();
    let trace_info = info(&bytes);
    let (mut paths, names) = run(&bytes, CallPaths::new(), &Filter::default());
    paths.learn_names(&names);
    let cpu = Filter {
        time: TimeBasis::Cpu,
        ..Filter::default()
    };
    let (paths, _) = run(&bytes, paths.then_cpu(), &cpu);
    let mut builder = ProfileBuilder::new(true);
    builder.add(
        &Process {
            info: &trace_info,
            lines: None,
            label: &|_| None,
            host: Some("alpha"),
            run: None,
        },
        &paths,
    );
    let mut gz = Vec::new();
    builder
        .write(&["hookprof test".to_string()], &mut gz)
        .unwrap();
    let mut proto = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut proto)
        .unwrap();
    // One top-level field a line: its key, then its value's bytes, in hex.
    let mut text = String::new();
    let mut rest = &proto[..];
    let varint = |rest: &mut &[u8]| {
        let mut value = 0u64;
        let mut shift = 0;
        loop {
            let b = rest[0];
            *rest = &rest[1..];
            value |= u64::from(b & 0x7f) << shift;
            shift += 7;
            if b < 0x80 {
                return value;
            }
        }
    };
    while !rest.is_empty() {
        let key = varint(&mut rest);
        let field = if key & 7 == 2 {
            let len = varint(&mut rest) as usize;
            let (value, next) = rest.split_at(len);
            rest = next;
            value.iter().map(|b| format!("{b:02x}")).collect::<String>()
        } else {
            varint(&mut rest).to_string()
        };
        text.push_str(&format!("{} {field}\n", key >> 3));
    }
    check_golden("views-pprof.hex", &text);
    // The samples' values, leaf first: a's [calls, cpu, wall] and b's under it.
    let samples: Vec<&str> = text.lines().filter(|l| l.starts_with("2 ")).collect();
    assert_eq!(samples.len(), 2, "{text}");
    // Sample: location ids (field 1, packed), values (field 2, packed): 1 call, cpu, wall.
    assert!(
        samples[0].starts_with("2 0a0101120501de029003"),
        "{}",
        samples[0]
    );
    assert!(
        samples[1].starts_with("2 0a020201120501ac02f403"),
        "{}",
        samples[1]
    );
}

/// A trace without a clock rate: pprof's times are nanoseconds, so export asks for
/// --ticks-per-second, and with it writes the profile (1 tick = 1 µs at 1 MHz).
#[test]
fn pprof_of_a_trace_without_clock_rate_needs_its_rate() {
    use hookprof::commands::export::{export_pprof, ExportOptions};
    use hookprof::commands::view_options::ViewOptions;
    let mut h = header(Endian::Big);
    h.ticks_per_second = 0;
    h.flags = 0;
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("ticks.hktrace");
    std::fs::write(&trace, golden_trace_with(h, false)).unwrap();
    let mut export = ExportOptions {
        dir: dir.path().join("ticks.pb.gz"),
        run: None,
        host: None,
        ticks_per_second: None,
    };
    // The trace names no executable that exists: symbols from any ELF (this test's own).
    let options = ViewOptions {
        exe: Some(std::env::current_exe().unwrap()),
        ..ViewOptions::default()
    };
    let error = export_pprof(std::slice::from_ref(&trace), &options, &export)
        .err()
        .expect("refused without a rate")
        .to_string();
    assert!(
        error.contains("--ticks-per-second") && error.contains("ticks.hktrace"),
        "{error}"
    );
    assert!(!export.dir.exists());
    export.ticks_per_second = Some(1_000_000);
    let (exported, _) = export_pprof(&[trace], &options, &export).unwrap();
    assert_eq!((exported.traces, exported.with_cpu), (1, false));
    assert!(std::fs::metadata(&export.dir).unwrap().len() > 0);
}
