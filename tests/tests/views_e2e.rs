//! The views of `hookprof` (timeline, flame, callgrind, replay) on real programs built with
//! `hookcc --trace`, run, and decoded; the callgrind file read by valgrind's
//! `callgrind_annotate`, the SVG parsed as XML by python3, the timeline checked against the
//! trace-event format's rules. Call counts are known by construction (calls.c, threads.c).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

use hookcc_tests::*;

/// calls.c's functions and their calls.
const CALLS: [(&str, u64); 6] = CALLS_C;

fn calls_trace(dir: &Path) -> PathBuf {
    let program = build_traced(dir, "calls", &["calls.c"], &["-O0"], false);
    let (trace, stdout) = run_traced(dir, &program, &[]);
    assert_eq!(stdout.trim(), "16135");
    trace
}

fn view(args: &[&str]) -> String {
    let out = run_ok(hookprof().args(args));
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// A system tool, or `None` to skip outside CI (in CI a missing tool fails the test).
fn system_tool(name: &str, package: &str) -> Option<&'static str> {
    let found = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .output()
        .is_ok_and(|o| o.status.success());
    if found {
        return Some(Box::leak(name.to_string().into_boxed_str()));
    }
    assert!(
        !in_ci(),
        "{name} is missing: scripts/setup.sh installs it (package {package})"
    );
    eprintln!("skipping: {name} is not installed (package {package}; scripts/setup.sh)");
    None
}

/// Checks the trace-event rules (B/E balanced per thread, ts never going back per thread)
/// and returns the B events' names per tid.
fn check_trace_events(json: &str) -> HashMap<u64, Vec<String>> {
    let value: serde_json::Value = serde_json::from_str(json).expect("the timeline is JSON");
    let events = value["traceEvents"].as_array().expect("traceEvents array");
    let mut open: HashMap<u64, Vec<String>> = HashMap::new();
    let mut last_ts: HashMap<u64, f64> = HashMap::new();
    let mut names: HashMap<u64, Vec<String>> = HashMap::new();
    for e in events {
        let tid = e["tid"].as_u64().expect("tid");
        match e["ph"].as_str().expect("ph") {
            "M" => continue,
            "B" => {
                let name = e["name"].as_str().expect("name").to_string();
                open.entry(tid).or_default().push(name.clone());
                names.entry(tid).or_default().push(name);
            }
            "E" => {
                let name = open.entry(tid).or_default().pop();
                assert!(name.is_some(), "tid {tid}: E without B: {e}");
                // speedscope ignores an E whose name is not its B's.
                assert_eq!(e["name"].as_str(), name.as_deref(), "tid {tid}: {e}");
            }
            other => panic!("unexpected phase {other}: {e}"),
        }
        let ts = e["ts"].as_f64().expect("ts");
        let last = last_ts.entry(tid).or_insert(f64::MIN);
        assert!(
            ts >= *last,
            "tid {tid}: ts goes back from {last} to {ts}: {e}"
        );
        *last = ts;
    }
    for (tid, stack) in open {
        assert!(stack.is_empty(), "tid {tid}: never closed: {stack:?}");
    }
    names
}

fn counts<'a>(names: impl IntoIterator<Item = &'a String>) -> BTreeMap<String, u64> {
    let mut counts = BTreeMap::new();
    for n in names {
        *counts.entry(n.clone()).or_default() += 1;
    }
    counts
}

fn expected(calls: &[(&str, u64)]) -> BTreeMap<String, u64> {
    calls.iter().map(|&(n, c)| (n.to_string(), c)).collect()
}

#[test]
fn timeline_has_every_call_balanced_and_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let trace = calls_trace(dir.path());
    let out = dir.path().join("calls.json");
    run_ok(hookprof().arg("timeline").arg(&trace).arg("-o").arg(&out));
    let json = std::fs::read_to_string(&out).unwrap();
    let names = check_trace_events(&json);
    assert_eq!(names.len(), 1, "one thread");
    let all: Vec<&String> = names.values().flatten().collect();
    assert_eq!(counts(all), expected(&CALLS));

    // Filters: only fib and what it calls, two levels.
    let json = view(&[
        "timeline",
        trace.to_str().unwrap(),
        "--function=fi?",
        "--depth=2",
    ]);
    let names = check_trace_events(&json);
    let all: Vec<&String> = names.values().flatten().collect();
    assert_eq!(counts(all), expected(&[("fib", 3)]));
}

#[test]
fn timeline_of_four_threads_has_four_tracks() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(
        dir.path(),
        "threads",
        &["threads.c"],
        &["-O2", "-pthread"],
        false,
    );
    let (trace, _) = run_traced(dir.path(), &program, &[]);
    let json = view(&["timeline", trace.to_str().unwrap()]);
    let names = check_trace_events(&json);
    let mut work: Vec<usize> = names
        .values()
        .map(|n| n.iter().filter(|n| *n == "work").count())
        .filter(|&c| c > 0)
        .collect();
    work.sort();
    assert_eq!(work, [100, 200, 300, 400], "work() per track");
    // Each track is named.
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    let thread_names = value["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "thread_name")
        .count();
    assert_eq!(thread_names, 5, "main and four workers");

    // --thread by number: thread 1 is main's, which calls no work().
    let replay = view(&["replay", trace.to_str().unwrap(), "--thread=1"]);
    assert!(
        replay.contains("| main();"),
        "main calls no traced function itself: {replay}"
    );
    assert!(!replay.contains("work"), "{replay}");
}

#[test]
fn folded_stacks_and_svg_hold_every_function() {
    let dir = tempfile::tempdir().unwrap();
    let trace = calls_trace(dir.path());
    let t = trace.to_str().unwrap();
    // Raw times (as the SVGs below): compensated, a short call can come out at 0 ns, and a
    // stack of no time is not a folded line — on a loaded machine whose start-up calibration
    // measured slow hooks, every stack of apply, twice, negate and leaf (a flake).
    let folded = view(&["flame", t, "--format=folded", "--no-compensation"]);
    let mut functions = BTreeMap::new();
    let mut total = 0u64;
    for line in folded.lines() {
        let (stack, count) = line.rsplit_once(' ').expect("`stack count`");
        total += count.parse::<u64>().expect("count");
        for f in stack.split(';') {
            functions.insert(f.to_string(), ());
        }
        assert!(stack.starts_with("main"), "{line}");
    }
    let names: Vec<&str> = functions.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["apply", "fib", "leaf", "main", "negate", "twice"],
        "{folded}"
    );
    // The counts add up to main's inclusive time in the flat profile (± rounding per stack).
    let report = run_ok(hookprof().args(["report", t, "--format=csv", "--no-compensation"]));
    let rows = parse_report_csv(&String::from_utf8_lossy(&report.stdout));
    let main = rows.iter().find(|r| r.function == "main").unwrap();
    let lines = folded.lines().count() as f64;
    assert!(
        (total as f64 - main.inclusive_ns).abs() <= lines,
        "folded total {total} vs main inclusive {}",
        main.inclusive_ns
    );

    // Raw times: compensated, a call of `negate` can come out at 0 ns (its hooks' measured
    // time is all there is), and a frame of no width is not drawn.
    for extra in [
        &["--no-compensation"][..],
        &["--no-compensation", "--inverted"][..],
    ] {
        let svg_path = dir.path().join("calls.svg");
        run_ok(
            hookprof()
                .args(["flame", t, "--format=svg", "-o"])
                .arg(&svg_path)
                .args(extra),
        );
        let svg = std::fs::read_to_string(&svg_path).unwrap();
        for f in &names {
            assert!(svg.contains(&format!("<title>{f} (")), "{f} not in the SVG");
        }
        if let Some(python) = system_tool("python3", "python3") {
            run_ok(
                Command::new(python)
                    .args([
                        "-c",
                        "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])",
                    ])
                    .arg(&svg_path),
            );
        }
    }
}

#[test]
fn callgrind_annotate_reads_the_callgrind_file() {
    let Some(annotate) = system_tool("callgrind_annotate", "valgrind") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let trace = calls_trace(dir.path());
    let out = dir.path().join("callgrind.out");
    run_ok(hookprof().arg("callgrind").arg(&trace).arg("-o").arg(&out));
    let file = std::fs::read_to_string(&out).unwrap();
    let summary: u64 = file
        .lines()
        .find_map(|l| l.strip_prefix("summary: "))
        .expect("summary line")
        .parse()
        .unwrap();

    // Exclusive times: the program total, and every function.
    let text = String::from_utf8(run_ok(Command::new(annotate).arg(&out)).stdout).unwrap();
    let total_line = text
        .lines()
        .find(|l| l.contains("PROGRAM TOTALS"))
        .expect("PROGRAM TOTALS");
    let total: u64 = total_line
        .split_whitespace()
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap();
    assert_eq!(total, summary, "{text}");

    // Call counts per arc, as callgrind_annotate's call tree shows them: `(1,972x)` etc.
    let tree = String::from_utf8(
        run_ok(
            Command::new(annotate)
                .args(["--tree=calling", "--threshold=100"])
                .arg(&out),
        )
        .stdout,
    )
    .unwrap();
    for (callee, calls) in [
        ("fib", "1x"),
        ("leaf", "100x"),
        ("apply", "50x"),
        ("twice", "25x"),
        ("negate", "25x"),
    ] {
        assert!(
            tree.lines()
                .any(|l| l.contains(&format!("???:{callee} ({calls})"))),
            "no arc to {callee} with {calls}:\n{tree}"
        );
    }
    assert!(
        tree.contains("???:fib (1,972x)"),
        "fib's recursion:\n{tree}"
    );

    // Inclusive: main covers the whole program.
    let inclusive =
        String::from_utf8(run_ok(Command::new(annotate).arg("--inclusive=yes").arg(&out)).stdout)
            .unwrap();
    let main_line = inclusive
        .lines()
        .find(|l| l.ends_with("???:main"))
        .unwrap_or_else(|| panic!("no main line:\n{inclusive}"));
    assert!(main_line.contains("(100.0%)"), "{main_line}");
}

#[test]
fn replay_prints_every_call_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let trace = calls_trace(dir.path());
    let t = trace.to_str().unwrap();
    let text = view(&["replay", t]);
    let mut found = BTreeMap::new();
    for line in text.lines().skip(1) {
        let (_, call) = line.split_once(" | ").expect("`[thread] | call`");
        let call = call.trim();
        if let Some(name) = call
            .strip_suffix("();")
            .or_else(|| call.strip_suffix("() {"))
        {
            *found.entry(name.to_string()).or_insert(0u64) += 1;
        }
    }
    assert_eq!(found, expected(&CALLS), "{text}");
    assert!(
        text.lines().nth(1).unwrap().ends_with("| main() {"),
        "{text}"
    );
    assert!(text.trim_end().ends_with("} /* main */"), "{text}");

    // --depth 2: main and its direct callees only.
    let text = view(&["replay", t, "--depth=2"]);
    assert!(!text.contains("twice"), "{text}");
    assert_eq!(text.lines().filter(|l| l.contains("leaf();")).count(), 100);
    // --min-duration: main (the whole run) is longer than a nanosecond; no line is shorter.
    let text = view(&["replay", t, "--min-duration=1us", "--exclude=apply"]);
    assert!(text.contains("main() {"), "{text}");
    assert!(!text.contains("apply"), "{text}");
    assert!(
        !text.contains(" ns "),
        "every shown call lasts ≥ 1 us:\n{text}"
    );
}

#[test]
fn report_sorts_limits_and_gives_percentiles() {
    let dir = tempfile::tempdir().unwrap();
    let trace = calls_trace(dir.path());
    let t = trace.to_str().unwrap();
    let csv = view(&[
        "report",
        t,
        "--format=csv",
        "--sort=calls",
        "--top=2",
        "--percentiles",
    ]);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("function,calls,inclusive_ns,exclusive_ns,min_ns,max_ns,avg_ns,percent,p50_ns,p90_ns,p99_ns")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let order: Vec<(&str, &str)> = rows.iter().map(|r| (r[0], r[1])).collect();
    assert_eq!(order, [("fib", "1973"), ("leaf", "100")], "{csv}");
    for r in &rows {
        let n = |i: usize| r[i].parse::<u64>().unwrap();
        let (min, max, p50, p90, p99) = (n(4), n(5), n(8), n(9), n(10));
        // Percentiles come from a histogram accurate to 1 %.
        assert!(
            min * 99 / 100 <= p50 && p50 <= p90 && p90 <= p99 && p99 <= max + max / 100 + 1,
            "{r:?}"
        );
    }
    let text = view(&["report", t, "--sort=name"]);
    let names: Vec<&str> = text
        .lines()
        .skip(2)
        .filter_map(|l| l.split_whitespace().last())
        .take(6)
        .collect();
    assert_eq!(
        names,
        ["apply", "fib", "leaf", "main", "negate", "twice"],
        "{text}"
    );
}

#[test]
fn speedscope_has_one_nested_profile_per_thread() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(
        dir.path(),
        "threads",
        &["threads.c"],
        &["-O2", "-pthread"],
        false,
    );
    let (trace, _) = run_traced(dir.path(), &program, &[]);
    let json = view(&["speedscope", trace.to_str().unwrap()]);
    let value: serde_json::Value = serde_json::from_str(&json).expect("speedscope JSON");
    let frames: Vec<&str> = value["shared"]["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].as_str().unwrap())
        .collect();
    let profiles = value["profiles"].as_array().unwrap();
    assert_eq!(profiles.len(), 5, "main and four workers");
    let mut work = Vec::new();
    for p in profiles {
        assert_eq!(p["unit"], "nanoseconds");
        let mut open: Vec<u64> = Vec::new();
        let mut last = 0;
        let mut count = 0;
        for e in p["events"].as_array().unwrap() {
            let (frame, at) = (e["frame"].as_u64().unwrap(), e["at"].as_u64().unwrap());
            assert!(at >= last, "at goes back: {e}");
            last = at;
            if e["type"] == "O" {
                open.push(frame);
                if frames[frame as usize] == "work" {
                    count += 1;
                }
            } else {
                assert_eq!(open.pop(), Some(frame), "{e}");
            }
        }
        assert!(open.is_empty());
        if count > 0 {
            work.push(count);
        }
    }
    work.sort();
    assert_eq!(work, [100, 200, 300, 400]);
}

#[test]
fn diff_matches_functions_by_name_across_builds() {
    let dir = tempfile::tempdir().unwrap();
    let a = calls_trace(dir.path());
    let program = build_traced(dir.path(), "calls_o2", &["calls.c"], &["-O2"], false);
    let (b, _) = run_traced(dir.path(), &program, &[]);
    let csv = view(&[
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format=csv",
    ]);
    let rows = csv::Reader::from_reader(csv.as_bytes())
        .records()
        .map(|r| r.unwrap())
        .collect::<Vec<_>>();
    assert_eq!(rows.len(), CALLS.len(), "{csv}");
    for (function, calls) in CALLS {
        let row = rows.iter().find(|r| &r[0] == function).unwrap();
        // -O0 and -O2 builds make the same calls: hooks go in before inlining.
        assert_eq!(
            (&row[1], &row[2], &row[3]),
            (&*calls.to_string(), &*calls.to_string(), "0")
        );
    }
    // A trace against itself: no change anywhere.
    let text = view(&["diff", a.to_str().unwrap(), a.to_str().unwrap()]);
    assert!(text.trim_end().ends_with("delta 0 (0.0%)"), "{text}");
}

/// The regression gate on real runs (tests/programs/regress.c): a build whose spin() takes 10
/// times as long fails `--fail-if 'exclusive > +400%'` with exit status 3 and a Markdown table
/// naming spin; a rebuild of the same source passes (exit 0, "no regression"). tiny()'s calls
/// tripled in the regressed build: `calls > +50%` flags it, unless --min-time leaves its
/// sub-millisecond time out as noise.
#[test]
fn diff_fail_if_gates_a_planted_regression_and_passes_a_rebuild() {
    let dir = tempfile::tempdir().unwrap();
    // With context switches (run_traced leaves them out), so that the gate judges CPU time as
    // a user's runs give it: a rebuild's run preempted for 391 ms on a busy machine "regressed"
    // by wall time. Where the kernel refuses them, the gate judges wall time, as before.
    let trace = |name: &str, flags: &[&str]| {
        let program = build_traced(dir.path(), name, &["regress.c"], flags, false);
        let trace = dir.path().join(format!("{name}.hktrace"));
        run_ok(
            std::process::Command::new(&program)
                .current_dir(dir.path())
                .env("HOOKCC_OUTPUT", &trace)
                .env("HOOKCC_SAMPLE_HZ", "0"),
        );
        trace
    };
    let base = trace("base", &["-O0"]);
    let rebuild = trace("rebuild", &["-O0"]);
    let regressed = trace("regressed", &["-O0", "-DREGRESS"]);
    let gate = |new: &Path, extra: &[&str]| {
        let out = hookprof()
            .arg("diff")
            .arg(&base)
            .arg(new)
            .args(["--fail-if", "exclusive > +400%", "--fail-if=calls > +50%"])
            .args(extra)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        // Nothing on stderr but what a busy machine may add: the warning that the runtime's
        // writer thread waited for a core (it says so of the run, not of the diff; `diff`
        // names the trace it is about: "hookprof: warning: A.hktrace: the runtime's …").
        let stderr = String::from_utf8_lossy(&out.stderr);
        let unexpected: Vec<&str> = stderr
            .lines()
            .filter(|l| {
                !(l.starts_with("hookprof: warning: ")
                    && l.contains("the runtime's writer thread had no free core"))
            })
            .collect();
        assert!(unexpected.is_empty(), "{stderr}");
        (out.status.code(), text)
    };

    let (code, text) = gate(&regressed, &["--min-time", "1ms"]);
    assert_eq!(code, Some(3), "{text}");
    assert!(
        text.starts_with("### hookprof diff: 1 regression\n"),
        "{text}"
    );
    let breach = text
        .lines()
        .find(|l| l.starts_with("| `spin` | `exclusive > +400%` |"))
        .unwrap_or_else(|| panic!("no breach of spin:\n{text}"));
    let change: f64 = breach
        .rsplit('|')
        .nth(1)
        .and_then(|c| c.trim().strip_prefix('+')?.strip_suffix('%')?.parse().ok())
        .unwrap_or_else(|| panic!("{breach}"));
    assert!(change > 400.0, "{breach}");
    assert!(!text.contains("| `tiny` | `calls"), "{text}");

    // Without the minimum time, tiny()'s tripled calls break the calls rule (and functions of
    // a few hundred nanoseconds, such as work()'s own time, may break the time rule by noise:
    // what --min-time is for).
    let (code, text) = gate(&regressed, &[]);
    assert_eq!(code, Some(3), "{text}");
    assert!(
        text.contains("| `tiny` | `calls > +50%` | 1 | 3 | +200.0% |"),
        "{text}"
    );

    let (code, text) = gate(&rebuild, &["--min-time", "1ms"]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.starts_with("### hookprof diff: no regression\n"),
        "{text}"
    );

    // A bad rule is a usage error (status 2) that says what a rule is.
    let mut bad = hookprof();
    bad.arg("diff")
        .arg(&base)
        .arg(&rebuild)
        .args(["--fail-if", "exclusive >> 10%"]);
    run_fails(&mut bad, "a rule is METRIC > +LIMIT");
    assert_eq!(bad.status().unwrap().code(), Some(2));
}

/// Five processes on one timeline (tests/programs/family.c: a parent that forks four children
/// one after another, waiting for each): `hookprof timeline` of the five traces names each
/// process by its pid, gives each child its calls, and puts each child's calls inside the
/// parent's run_child() call that forked it, on the wall clock the traces recorded (raw
/// times: compensation takes the hooks' time out of each trace, which moves its later calls
/// earlier). The Perfetto trace of the same five has the same slices per process.
#[test]
fn one_timeline_holds_a_fork_family_on_its_wall_clock() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(dir.path(), "family", &["family.c"], &["-O1"], false);
    let (_, stdout) = run_traced(dir.path(), &program, &[]);
    let mut pids = BTreeMap::new(); // pid -> "parent" or "child i"
    for line in stdout.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        match f[..] {
            ["parent", pid] => pids.insert(pid.parse::<u64>().unwrap(), None),
            ["child", i, pid] => {
                pids.insert(pid.parse().unwrap(), Some(i.parse::<usize>().unwrap()))
            }
            _ => panic!("{line}"),
        };
    }
    assert_eq!(pids.len(), 5, "{stdout}");
    let traces = traces_in(dir.path());
    assert_eq!(traces.len(), 5, "{traces:?}");
    let args = |extra: &[&str]| {
        let mut a: Vec<String> = vec!["timeline".into(), "--no-compensation".into()];
        a.extend(traces.iter().map(|t| t.display().to_string()));
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let json = {
        let a = args(&[]);
        view(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let value: serde_json::Value = serde_json::from_str(&json).expect("the timeline is JSON");
    let events = value["traceEvents"].as_array().unwrap();
    let mut named = BTreeMap::new();
    // Per pid: (function, B time) in file order.
    let mut calls: BTreeMap<u64, Vec<(String, f64, f64)>> = BTreeMap::new();
    let mut open: BTreeMap<(u64, u64), Vec<(String, f64)>> = BTreeMap::new();
    for e in events {
        let pid = e["pid"].as_u64().unwrap();
        match e["ph"].as_str().unwrap() {
            "M" if e["name"] == "process_name" => {
                named.insert(pid, e["args"]["name"].as_str().unwrap().to_string());
            }
            "B" => open
                .entry((pid, e["tid"].as_u64().unwrap()))
                .or_default()
                .push((
                    e["name"].as_str().unwrap().to_string(),
                    e["ts"].as_f64().unwrap(),
                )),
            "E" => {
                let (name, begin) = open
                    .get_mut(&(pid, e["tid"].as_u64().unwrap()))
                    .and_then(Vec::pop)
                    .expect("an E event closes a B event");
                calls
                    .entry(pid)
                    .or_default()
                    .push((name, begin, e["ts"].as_f64().unwrap()));
            }
            _ => {}
        }
    }
    assert_eq!(
        named.keys().copied().collect::<Vec<_>>(),
        pids.keys().copied().collect::<Vec<_>>()
    );
    assert!(named.values().all(|n| n.ends_with("/family")), "{named:?}");
    let parent = *pids.iter().find(|(_, role)| role.is_none()).unwrap().0;
    let forks: Vec<(f64, f64)> = calls[&parent]
        .iter()
        .filter(|c| c.0 == "run_child")
        .map(|c| (c.1, c.2))
        .collect();
    assert_eq!(forks.len(), 4, "{:?}", calls[&parent]);
    for (&pid, role) in &pids {
        let Some(i) = *role else { continue };
        let work: Vec<&(String, f64, f64)> =
            calls[&pid].iter().filter(|c| c.0 == "child_work").collect();
        assert_eq!(work.len(), i + 1, "child {i}'s calls: {:?}", calls[&pid]);
        // Its calls happen between the parent's fork and its wait: inside run_child(i).
        let (begin, end) = forks[i];
        for c in &work {
            assert!(
                begin <= c.1 && c.2 <= end,
                "child {i}: child_work at {}..{} µs, outside run_child at {begin}..{end} µs",
                c.1,
                c.2
            );
        }
    }

    // The Perfetto trace: what trace_processor's import needs (a process track for each pid),
    // and the JSON's slices.
    let pftrace = dir.path().join("family.pftrace");
    let a = args(&["-o", pftrace.to_str().unwrap()]);
    view(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let json_file = dir.path().join("family.json");
    std::fs::write(&json_file, &json).unwrap();
    if let Some(out) = check_perfetto(&pftrace, Some(&json_file)) {
        let report = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{report}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            report.lines().count(),
            5,
            "one thread per process: {report}"
        );
    }
    // The flame graph of the five: each process's stacks under its own root frame.
    let folded = {
        let mut a: Vec<String> = vec!["flame".into()];
        a.extend(traces.iter().map(|t| t.display().to_string()));
        view(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    for (pid, role) in &pids {
        let root = format!("family [{pid}];");
        let stack = match role {
            None => format!("{root}main;parent_work;spin "),
            Some(_) => format!("{root}child_work;spin "),
        };
        assert!(
            folded.lines().any(|l| l.starts_with(&stack)),
            "no {stack:?} in\n{folded}"
        );
    }
    assert!(
        folded.lines().all(|l| l.starts_with("family [")),
        "{folded}"
    );
    // The report of the five: each function's calls and times added up over the processes.
    let mut one_by_one: BTreeMap<String, (u64, f64)> = BTreeMap::new();
    for t in &traces {
        let csv = view(&["report", t.to_str().unwrap(), "--format=csv"]);
        for row in parse_report_csv(&csv) {
            let e = one_by_one.entry(row.function).or_insert((0, 0.0));
            e.0 += row.calls;
            e.1 += row.exclusive_ns;
        }
    }
    let all = {
        let mut a: Vec<String> = vec!["report".into(), "--format=csv".into()];
        a.extend(traces.iter().map(|t| t.display().to_string()));
        view(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let together: BTreeMap<String, (u64, f64)> = parse_report_csv(&all)
        .into_iter()
        .map(|r| (r.function, (r.calls, r.exclusive_ns)))
        .collect();
    assert_eq!(together, one_by_one, "{all}");
    assert_eq!(together["child_work"].0, 1 + 2 + 3 + 4);
    // A clock-less or unreadable second trace is refused, naming it.
    let junk = dir.path().join("junk.hktrace");
    std::fs::write(&junk, b"not a trace").unwrap();
    run_fails(
        hookprof().arg("timeline").arg(&traces[0]).arg(&junk),
        "junk.hktrace",
    );
}

#[test]
fn gprof_reads_the_gmon_out() {
    let Some(gprof) = system_tool("gprof", "binutils") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let trace = calls_trace(dir.path());
    let gmon = dir.path().join("gmon.out");
    run_ok(hookprof().arg("gmon").arg(&trace).arg("-o").arg(&gmon));
    let program = dir.path().join("calls");
    let out = run_ok(Command::new(gprof).arg("-b").arg(&program).arg(&gmon));
    let text = String::from_utf8(out.stdout).unwrap();

    // Call graph: the counts of every arc, fib's recursion as gprof writes it.
    for line in [
        "1/1           fib",
        "50/50          apply",
        "100/100         leaf",
        "25/25          twice",
        "25/25          negate",
        "1+1972    fib",
    ] {
        assert!(text.contains(line), "no {line:?} in:\n{text}");
    }
    // Flat profile: each function's share of the time is its exclusive share in the report.
    let report = run_ok(hookprof().arg("report").arg(&trace).arg("--format=csv"));
    let csv = String::from_utf8(report.stdout).unwrap();
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    for row in reader.records() {
        let row = row.unwrap();
        let (function, percent): (&str, f64) = (&row[0], row[7].parse().unwrap());
        let flat = text
            .lines()
            .take_while(|l| !l.contains("Call graph"))
            .find(|l| l.split_whitespace().last() == Some(function))
            .unwrap_or_else(|| panic!("{function} not in the flat profile:\n{text}"));
        let share: f64 = flat.split_whitespace().next().unwrap().parse().unwrap();
        assert!(
            (share - percent).abs() <= 0.1,
            "{function}: gprof {share} % vs report {percent} %\n{text}"
        );
    }
}

#[test]
fn callgrind_has_source_lines_from_dwarf() {
    let Some(annotate) = system_tool("callgrind_annotate", "valgrind") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(dir.path(), "calls", &["calls.c"], &["-O0", "-g"], false);
    let (trace, _) = run_traced(dir.path(), &program, &[]);
    let out = dir.path().join("callgrind.out");
    run_ok(hookprof().arg("callgrind").arg(&trace).arg("-o").arg(&out));
    let text = String::from_utf8(run_ok(Command::new(annotate).arg(&out)).stdout).unwrap();
    for function in ["fib", "main", "leaf", "apply"] {
        assert!(
            text.contains(&format!("programs/calls.c:{function}")),
            "{function} has no file in:\n{text}"
        );
    }
    // callgrind_annotate finds the source and puts fib's time on its line.
    let fib_line = text
        .lines()
        .find(|l| l.contains("int fib(int n)"))
        .unwrap_or_else(|| panic!("no annotated source:\n{text}"));
    let cost: u64 = fib_line
        .split_whitespace()
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("no cost on {fib_line:?}"));
    assert!(cost > 0, "{fib_line}");
}

#[test]
fn report_shows_who_calls_each_function() {
    let dir = tempfile::tempdir().unwrap();
    let trace = calls_trace(dir.path());
    let csv = view(&[
        "report",
        trace.to_str().unwrap(),
        "--format=csv",
        "--callers",
    ]);
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    assert_eq!(
        reader.headers().unwrap().iter().next_back(),
        Some("callers")
    );
    let callers: BTreeMap<String, String> = reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[0].to_string(), r[r.len() - 1].to_string())
        })
        .collect();
    assert_eq!(callers["fib"], "fib×1972;main×1");
    assert_eq!(callers["twice"], "apply×25");
    assert_eq!(callers["leaf"], "main×100");
    assert_eq!(callers["main"], "<spontaneous>×1");
}

/// Runs tests/perfetto/check_perfetto.py (Perfetto's own protobuf classes and
/// trace_processor's import rules) on a Perfetto trace, comparing it with a JSON timeline if
/// given. `None` when the classes are not installed outside CI.
fn check_perfetto(pftrace: &Path, json: Option<&Path>) -> Option<std::process::Output> {
    let script = workspace_root().join("tests/perfetto/check_perfetto.py");
    let classes = workspace_root().join("tests/perfetto/python/perfetto");
    if !classes.is_dir() {
        assert!(
            !in_ci(),
            "{}: missing: scripts/setup.sh unpacks Perfetto's Python classes there",
            classes.display()
        );
        eprintln!("skipping: run scripts/setup.sh (Perfetto's Python classes)");
        return None;
    }
    let python = system_tool("python3", "python3")?;
    let mut command = Command::new(python);
    command.arg(script).arg(pftrace);
    if let Some(json) = json {
        command.arg(json);
    }
    Some(command.output().expect("python3 runs"))
}

#[test]
fn perfetto_trace_has_the_json_timelines_slices() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(
        dir.path(),
        "threads",
        &["threads.c"],
        &["-O2", "-pthread"],
        false,
    );
    let (trace, _) = run_traced(dir.path(), &program, &[]);
    let pftrace = dir.path().join("threads.pftrace");
    let json = dir.path().join("threads.json");
    for filters in [&[][..], &["--depth=1", "--exclude=main"][..]] {
        run_ok(
            hookprof()
                .args(["timeline", "--format=perfetto"])
                .arg(&trace)
                .args(filters)
                .arg("-o")
                .arg(&pftrace),
        );
        run_ok(
            hookprof()
                .arg("timeline")
                .arg(&trace)
                .args(filters)
                .arg("-o")
                .arg(&json),
        );
        let Some(out) = check_perfetto(&pftrace, Some(&json)) else {
            return;
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{filters:?}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // main's thread and the four workers (with --exclude=main, the four workers).
        let tracks = stdout.lines().filter(|l| l.starts_with("tid ")).count();
        assert_eq!(tracks, 5 - filters.len() / 2, "{filters:?}: {stdout}");
        let names = check_trace_events(&std::fs::read_to_string(&json).unwrap());
        let slices: usize = names.values().map(Vec::len).sum();
        let counted: usize = stdout
            .lines()
            .filter_map(|l| {
                l.split(": ")
                    .nth(1)?
                    .strip_suffix(" slices")?
                    .parse::<usize>()
                    .ok()
            })
            .sum();
        assert_eq!(counted, slices, "{filters:?}: {stdout}");
    }
    // Unfiltered it is a quarter of the JSON's size or less.
    run_ok(
        hookprof()
            .args(["timeline", "--format=perfetto"])
            .arg(&trace)
            .arg("-o")
            .arg(&pftrace),
    );
    run_ok(hookprof().arg("timeline").arg(&trace).arg("-o").arg(&json));
    let (pf_size, json_size) = (
        std::fs::metadata(&pftrace).unwrap().len(),
        std::fs::metadata(&json).unwrap().len(),
    );
    assert!(pf_size * 4 <= json_size, "{pf_size} vs {json_size} bytes");

    // The checker fails where it should: on a cut-short file, and on a JSON timeline with
    // other slices (the depth-limited one).
    let cut = dir.path().join("cut.pftrace");
    let bytes = std::fs::read(&pftrace).unwrap();
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
    let out = check_perfetto(&cut, None).unwrap();
    assert!(!out.status.success(), "a cut-short trace passed");
    run_ok(
        hookprof()
            .arg("timeline")
            .arg(&trace)
            .arg("--depth=1")
            .arg("-o")
            .arg(&json),
    );
    let out = check_perfetto(&pftrace, Some(&json)).unwrap();
    assert!(!out.status.success(), "different slices passed");
}

/// With DWARF (-g), every event names its function's file and line: `args.source` in the
/// JSON, an interned `SourceLocation` in the Perfetto trace, and the two agree.
#[test]
fn timelines_have_source_lines_from_dwarf() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(dir.path(), "calls", &["calls.c"], &["-O0", "-g"], false);
    let (trace, _) = run_traced(dir.path(), &program, &[]);
    let json = dir.path().join("calls.json");
    run_ok(hookprof().arg("timeline").arg(&trace).arg("-o").arg(&json));
    let source = std::fs::read_to_string(workspace_root().join("tests/programs/calls.c")).unwrap();
    let fib_line = 1 + source
        .lines()
        .position(|l| l.starts_with("int fib(int n)"))
        .expect("calls.c defines fib");
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let events = value["traceEvents"].as_array().unwrap();
    let fib = events
        .iter()
        .find(|e| e["name"] == "fib" && e["ph"] == "B")
        .expect("a fib event");
    let at = fib["args"]["source"].as_str().unwrap_or_default();
    assert!(
        at.ends_with(&format!("programs/calls.c:{fib_line}")),
        "fib's source: {fib}"
    );
    for e in events.iter().filter(|e| e["ph"] == "B") {
        assert!(e["args"]["source"].is_string(), "no source: {e}");
    }
    let pftrace = dir.path().join("calls.pftrace");
    run_ok(
        hookprof()
            .args(["timeline", "--format=perfetto"])
            .arg(&trace)
            .arg("-o")
            .arg(&pftrace),
    );
    if let Some(out) = check_perfetto(&pftrace, Some(&json)) {
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The slices of a timeline JSON: (tid, name, start ns, duration ns), B/E paired per thread.
/// Times to the nanosecond: events that share one are spread by picoseconds in the JSON.
fn timeline_slices(path: &Path) -> Vec<(u64, String, u64, u64)> {
    let text = std::fs::read_to_string(path).unwrap();
    let value: serde_json::Value = serde_json::from_str(&text).expect("the timeline is JSON");
    let mut open: HashMap<u64, Vec<(String, f64)>> = HashMap::new();
    let mut slices = Vec::new();
    for e in value["traceEvents"].as_array().expect("traceEvents array") {
        let tid = e["tid"].as_u64().unwrap_or(0);
        let ts = e["ts"].as_f64().unwrap_or(0.0);
        match e["ph"].as_str() {
            Some("B") => open
                .entry(tid)
                .or_default()
                .push((e["name"].as_str().unwrap().to_string(), ts)),
            Some("E") => {
                let (name, start) = open.get_mut(&tid).and_then(Vec::pop).expect("E after B");
                let ns = |us: f64| (us * 1000.0).round() as u64;
                slices.push((tid, name, ns(start), ns(ts) - ns(start)));
            }
            _ => {}
        }
    }
    slices.sort();
    slices
}

/// Issue 22, views that open at any size: over --size-limit, an unfiltered timeline leaves out
/// the calls shorter than a cut, keeps every other call exactly as the whole timeline shows it,
/// and says so; under it, nothing changes. Issue 34: the cut is the shortest of 1us, 2us,
/// 5us, 10us, … under which the output fits (two records of 110 bytes a call shown), and
/// where none does, the note says plainly that the output is still over the limit. An output
/// name ending in .gz is gzip of the same bytes; one ending in .pftrace is the Perfetto trace.
#[test]
fn a_timeline_over_its_size_limit_raises_its_cut_until_it_fits_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let trace = calls_trace(d);
    let timeline = |args: &[&str]| run_ok(hookprof().arg("timeline").arg(&trace).args(args));
    let all_path = d.join("all.json");
    let out = timeline(&["--size-limit=0", "-o", all_path.to_str().unwrap()]);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let all = timeline_slices(&all_path);
    let at_least = |ns: u64| -> Vec<_> { all.iter().filter(|s| s.3 >= ns).cloned().collect() };
    let cuts = [1000u64, 2000, 5000, 10_000, 20_000, 50_000, 100_000];
    let limited = |limit: u64, name: &str| {
        let path = d.join(name);
        let out = timeline(&[
            &format!("--size-limit={limit}"),
            "-o",
            path.to_str().unwrap(),
        ]);
        (
            timeline_slices(&path),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            path,
        )
    };
    // A limit the calls of 1 us or more fit under: the 1 us cut.
    let long = at_least(1000);
    assert!(
        !long.is_empty() && long.len() < all.len(),
        "calls.c should have calls on both sides of 1 us: {} of {}",
        long.len(),
        all.len()
    );
    let (slices, stderr, path) = limited(long.len() as u64 * 220, "limited.json");
    assert!(
        stderr.contains("records would take")
            && stderr.contains("calls shorter than 1us are left out")
            && stderr.contains("under the limit")
            && stderr.contains("--min-duration=0 keeps every call"),
        "{stderr}"
    );
    // A call of exactly the cut in the JSON's microseconds may be a hair under it in ticks:
    // on either side.
    let clear = |v: &[(u64, String, u64, u64)], cut: u64| -> Vec<(u64, String, u64, u64)> {
        v.iter().filter(|s| s.3 != cut).cloned().collect()
    };
    assert_eq!(
        clear(&slices, 1000),
        clear(&long, 1000),
        "the limited timeline is not the whole one's calls of >= 1 us"
    );
    assert!(std::fs::metadata(&path).unwrap().len() < std::fs::metadata(&all_path).unwrap().len());
    // A limit just under that: the next cut that fits. Under what the calls surely over 1 us
    // take (a call the JSON shows at exactly 1 us may be a hair under it in ticks, which
    // hookprof's cut leaves out).
    let surely_long = all.iter().filter(|s| s.3 > 1000).count() as u64;
    let limit = surely_long * 220 - 1;
    let cut = *cuts
        .iter()
        .find(|&&c| at_least(c).len() as u64 * 220 <= limit)
        .expect("a cut of calls.c that fits");
    let (slices, stderr, _) = limited(limit, "raised.json");
    let name = format!("calls shorter than {}us are left out", cut / 1000);
    assert!(
        stderr.contains(&name) && stderr.contains("under the limit"),
        "{stderr}"
    );
    assert_eq!(
        clear(&slices, cut),
        clear(&at_least(cut), cut),
        "the raised cut keeps the calls of >= {cut} ns"
    );
    // Where no cut fits, the note says so: `Filter::sized`'s unit test (it takes calls of a
    // second or more).

    // Under the default limit: the whole timeline, without a word.
    let default_path = d.join("default.json");
    let out = timeline(&["-o", default_path.to_str().unwrap()]);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read(&default_path).unwrap(),
        std::fs::read(&all_path).unwrap()
    );

    // .gz: the same bytes, compressed (gzip -dc reads them back).
    let gz_path = d.join("all.json.gz");
    timeline(&["--size-limit=0", "-o", gz_path.to_str().unwrap()]);
    let unzipped = run_ok(Command::new("gzip").arg("-dc").arg(&gz_path)).stdout;
    assert_eq!(unzipped, std::fs::read(&all_path).unwrap());
    assert!(std::fs::metadata(&gz_path).unwrap().len() * 4 < unzipped.len() as u64);

    // .pftrace (and .pftrace.gz): the Perfetto trace, as --format=perfetto writes it.
    let by_name = d.join("t.pftrace");
    let by_flag = d.join("t.out");
    timeline(&["-o", by_name.to_str().unwrap()]);
    timeline(&["--format=perfetto", "-o", by_flag.to_str().unwrap()]);
    let perfetto = std::fs::read(&by_flag).unwrap();
    assert_eq!(std::fs::read(&by_name).unwrap(), perfetto);
    assert_ne!(perfetto.first(), Some(&b'{'));
    let gz_name = d.join("t.perfetto-trace.gz");
    timeline(&["-o", gz_name.to_str().unwrap()]);
    assert_eq!(
        run_ok(Command::new("gzip").arg("-dc").arg(&gz_name)).stdout,
        perfetto
    );
}

/// Issue 27 item 6: the sizes docs/views.md gives per record, measured on calls.c as its table
/// was: the JSON timeline about 110 bytes without -g and 40–50 more with it (the source of every
/// event), the Perfetto trace 20–24, speedscope about 35. The size limit's estimates (110, 21,
/// 35) are lower bounds of these.
#[test]
fn view_sizes_per_record_are_the_documented_ones() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let per_record = |debug: bool| -> (f64, f64, f64) {
        let name = if debug { "calls_g" } else { "calls" };
        let flags: &[&str] = if debug { &["-O1", "-g"] } else { &["-O1"] };
        let program = build_traced(d, name, &["calls.c"], flags, false);
        let (trace, _) = run_traced(d, &program, &[]);
        let info = run_ok(hookprof().arg("info").arg(&trace));
        let records: f64 = String::from_utf8_lossy(&info.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("records:"))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .expect("hookprof info prints records:");
        let size = |view: &str, extra: &[&str], out: &str| -> f64 {
            let out = d.join(out);
            run_ok(
                hookprof()
                    .arg(view)
                    .arg(&trace)
                    .args(extra)
                    .arg("-o")
                    .arg(&out),
            );
            std::fs::metadata(&out).unwrap().len() as f64 / records
        };
        (
            size("timeline", &[], &format!("{name}.json")),
            size(
                "timeline",
                &["--format=perfetto"],
                &format!("{name}.pftrace"),
            ),
            size("speedscope", &[], &format!("{name}.speedscope.json")),
        )
    };
    let plain = per_record(false);
    let debug = per_record(true);
    eprintln!("bytes per record: without -g {plain:?}, with -g {debug:?}");
    let (json, perfetto, speedscope) = plain;
    assert!((110.0 * 0.9..110.0 * 1.1).contains(&json), "JSON {json}");
    assert!((20.0..24.0).contains(&perfetto), "Perfetto {perfetto}");
    assert!(
        (33.0..40.0).contains(&speedscope),
        "speedscope {speedscope}"
    );
    let (json_g, perfetto_g, _) = debug;
    // Each event's `"source":"PATH:LINE"`: the path's length and some 15 bytes.
    let path = program_source("calls.c").display().to_string().len() as f64;
    assert!(
        (json + path + 5.0..json + path + 25.0).contains(&json_g),
        "JSON with -g {json_g} (source path {path} bytes)"
    );
    assert!(
        (20.0..25.0).contains(&perfetto_g),
        "Perfetto with -g {perfetto_g}"
    );
}

/// Issue 34: several traces are named on stderr, with their processes and program ("3 traces
/// of 3 processes of …/calls added up"); a report refuses to add up runs of different
/// executables (a `*.hktrace` glob over a directory of several programs' runs), listing every
/// trace and its executable, unless `--mixed-programs` says to; the views that put traces side
/// by side (flame, timeline) name them and take them.
#[test]
fn several_traces_are_named_and_different_programs_are_not_added_up_unasked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let calls = build_traced(d, "calls", &["calls.c"], &["-O0"], false);
    let other = build_traced(d, "other", &["regress.c"], &["-O0"], false);
    let mut runs = Vec::new();
    for _ in 0..3 {
        let out = run_ok(
            Command::new(&calls)
                .current_dir(d)
                .env("HOOKCC_SWITCHES", "0")
                .env("HOOKCC_SAMPLE_HZ", "0"),
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "16135");
    }
    runs.extend(traces_in(d));
    assert_eq!(runs.len(), 3, "{runs:?}");
    let (other_trace, _) = run_traced(d, &other, &[]);
    let names = |traces: &[PathBuf]| -> Vec<String> {
        traces
            .iter()
            .map(|t| t.file_name().unwrap().to_string_lossy().into_owned())
            .collect()
    };
    let pid_of = |t: &PathBuf| -> String {
        t.file_name()
            .unwrap()
            .to_string_lossy()
            .split('.')
            .nth(1)
            .unwrap()
            .to_string()
    };
    // Three runs of one program: added up, and said so.
    let out = run_ok(
        hookprof()
            .current_dir(d)
            .args(["report", "--format=csv"])
            .args(names(&runs)),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let listed: Vec<String> = runs
        .iter()
        .map(|t| {
            format!(
                "{} (pid {})",
                t.file_name().unwrap().to_string_lossy(),
                pid_of(t)
            )
        })
        .collect();
    assert!(
        stderr.contains(&format!(
            "hookprof: note: 3 traces of 3 processes of {} added up: {}",
            calls.display(),
            listed.join(", ")
        )),
        "{stderr}"
    );
    let rows = parse_report_csv(&String::from_utf8_lossy(&out.stdout));
    let leaf = rows.iter().find(|r| r.function == "leaf").unwrap();
    assert_eq!(leaf.calls, 300, "three runs of 100 calls");
    // With a run of another program: refused, every trace with its executable.
    let mut all = runs.clone();
    all.push(other_trace.clone());
    let out = hookprof()
        .current_dir(d)
        .arg("report")
        .args(names(&all))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("these traces are runs of 2 different programs")
            && stderr.contains(&format!(
                "{} → {}",
                runs[0].file_name().unwrap().to_string_lossy(),
                calls.display()
            ))
            && stderr.contains(&format!("other.hktrace → {}", other.display()))
            && stderr.contains("--mixed-programs"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    // Asked for: added up, and said so.
    let out = run_ok(
        hookprof()
            .current_dir(d)
            .args(["report", "--mixed-programs"])
            .args(names(&all)),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("hookprof: note: 4 traces of 4 processes of 2 programs added up: ")
            && stderr.contains(&format!("other.hktrace → {}", other.display())),
        "{stderr}"
    );
    // Side by side: named, taken.
    for view in ["flame", "timeline"] {
        let out = run_ok(hookprof().current_dir(d).arg(view).args(names(&all)));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(
                "hookprof: note: 4 traces of 4 processes of 2 programs side by side, each \
                 process on its own: "
            ),
            "{view}: {stderr}"
        );
    }
    // One trace named twice (`prog.hktrace prog.*.hktrace`): refused, it would count twice.
    let out = hookprof()
        .current_dir(d)
        .arg("report")
        .args(names(&[runs[0].clone(), runs[1].clone(), runs[0].clone()]))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("given twice, its calls would be added up twice"),
        "{stderr}"
    );
    // One trace: nothing to say.
    let out = run_ok(hookprof().arg("report").arg(&other_trace));
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("note:"),
        "{out:?}"
    );
}

/// tests/programs/cpu_time.c built with `-O1 EXTRA…` as `dir/NAME`, run with `ARGS` under
/// `taskset -c CPU` if given, its context switches recorded (the default): the trace and the
/// runtime's stderr.
fn cpu_time_trace(
    dir: &Path,
    name: &str,
    extra: &[&str],
    args: &[&str],
    cpu: Option<u32>,
) -> (PathBuf, String) {
    let flags: Vec<&str> = std::iter::once("-O1")
        .chain(extra.iter().copied())
        .collect();
    let program = build_traced(dir, name, &["cpu_time.c"], &flags, false);
    let trace = dir.join(format!("{name}.hktrace"));
    let mut cmd = match cpu {
        Some(cpu) => {
            let mut c = Command::new("taskset");
            c.args(["-c", &cpu.to_string()]).arg(&program);
            c
        }
        None => Command::new(&program),
    };
    let out = run_ok(cmd.args(args).current_dir(dir).env("HOOKCC_OUTPUT", &trace));
    (trace, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// Where the kernel refused the perf events (the runtime said so): `--time=cpu` is refused,
/// naming the trace and saying how to record switches; returns true (the figures are skipped).
fn no_switches_refuse_cpu_time(trace: &Path, stderr: &str) -> bool {
    if !stderr.contains(SWITCHES_REFUSED) {
        assert!(stderr.is_empty(), "nothing on stderr: {stderr}");
        return false;
    }
    eprintln!("SKIPPED the CPU-time figures: this kernel refuses the perf events ({stderr})");
    for view in [
        "report",
        "flame",
        "timeline",
        "replay",
        "speedscope",
        "callgrind",
    ] {
        let text = run_fails(
            hookprof().arg(view).arg(trace).arg("--time=cpu"),
            "--time=cpu needs the threads' context switches",
        );
        assert!(
            text.contains(&trace.display().to_string()) && text.contains("HOOKCC_SWITCHES"),
            "{view}: {text}"
        );
    }
    true
}

/// A duration as `hookprof replay` prints it (`100.003 ms`, `1.234  s`), in ms.
fn replay_ms(text: &str) -> f64 {
    let mut words = text.split_whitespace();
    let (Some(value), Some(unit)) = (words.next(), words.next()) else {
        panic!("{text:?} is not `value unit`");
    };
    let value: f64 = value.parse().expect("a number");
    value
        * match unit {
            "s" => 1e3,
            "ms" => 1.0,
            "us" => 1e-3,
            "ns" => 1e-6,
            other => panic!("unit {other}"),
        }
}

/// Issue 34 item 4: `--time=cpu` counts only the time a thread ran, in every view. In
/// tests/programs/cpu_time.c `blocks_then_spins` sleeps 300 ms and then runs for 100 ms of its
/// thread's CPU time: about 100 ms in the report, the flame graphs (folded and SVG), callgrind,
/// speedscope, replay and diff with `--time=cpu`, 400 ms or more with `--time=wall`; the
/// timeline (JSON and Perfetto) keeps the wall clock and shows the sleep as "switched out"
/// slices inside the call, beside which the call ran about 100 ms. The bounds are wide (a busy
/// machine preempts the spin too, which stretches its wall time, not its CPU time); what they
/// tell apart is 100 ms from 400 ms.
#[test]
fn cpu_time_leaves_the_time_switched_out_out_of_every_view() {
    let dir = tempfile::tempdir().unwrap();
    let (trace, stderr) = cpu_time_trace(dir.path(), "cpu_time", &[], &[], None);
    if no_switches_refuse_cpu_time(&trace, &stderr) {
        return;
    }
    let t = trace.to_str().unwrap();
    let cpu_ok = |ms: f64, view: &str| {
        assert!((70.0..=200.0).contains(&ms), "{view}: {ms} ms of CPU time");
    };
    let wall_ok = |ms: f64, view: &str| {
        assert!(ms >= 380.0, "{view}: {ms} ms of wall time");
    };
    for (time, check) in [("cpu", &cpu_ok as &dyn Fn(f64, &str)), ("wall", &wall_ok)] {
        let arg = format!("--time={time}");
        // report: every time column.
        let csv = view(&["report", t, "--format=csv", &arg]);
        let row = parse_report_csv(&csv)
            .into_iter()
            .find(|r| r.function == "blocks_then_spins")
            .unwrap_or_else(|| panic!("{csv}"));
        check(row.inclusive_ns / 1e6, &format!("report {arg} inclusive"));
        check(row.exclusive_ns / 1e6, &format!("report {arg} exclusive"));
        let json: serde_json::Value =
            serde_json::from_str(&view(&["report", t, "--format=json", &arg])).unwrap();
        let f = json["functions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["function"] == "blocks_then_spins")
            .unwrap();
        // (Not the percentiles: a single call's are wrong today, issue 34 item 3.)
        for column in ["min_ns", "max_ns", "avg_ns"] {
            let ms = f[column].as_f64().unwrap() / 1e6;
            check(ms, &format!("report {arg} {column}"));
        }
        let text = view(&["report", t, &arg]);
        assert_eq!(
            text.contains("times on CPU (switched-out time left out)"),
            time == "cpu",
            "{text}"
        );

        // flame, folded and SVG.
        let folded = view(&["flame", t, "--format=folded", &arg]);
        let line = folded
            .lines()
            .find_map(|l| l.strip_prefix("main;blocks_then_spins "))
            .unwrap_or_else(|| panic!("{folded}"));
        check(line.parse::<f64>().unwrap() / 1e6, &format!("folded {arg}"));
        let svg = view(&["flame", t, "--format=svg", &arg]);
        assert_eq!(svg.contains("(hookprof, CPU time)</text>"), time == "cpu");
        let title = svg
            .split("<title>blocks_then_spins (")
            .nth(1)
            .and_then(|rest| rest.split(" ns,").next())
            .unwrap_or_else(|| panic!("no blocks_then_spins in the SVG"));
        check(
            title.replace(',', "").parse::<f64>().unwrap() / 1e6,
            &format!("svg {arg}"),
        );

        // callgrind: the cost line after the function's `fn=(N) blocks_then_spins`.
        let callgrind = view(&["callgrind", t, &arg]);
        let mut lines = callgrind.lines();
        lines
            .find(|l| l.starts_with("fn=(") && l.ends_with(") blocks_then_spins"))
            .unwrap_or_else(|| panic!("{callgrind}"));
        let cost = lines
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap_or_else(|| panic!("{callgrind}"));
        check(
            cost.parse::<f64>().unwrap() / 1e6,
            &format!("callgrind {arg}"),
        );

        // speedscope: the frame's open and close.
        let json: serde_json::Value =
            serde_json::from_str(&view(&["speedscope", t, &arg])).unwrap();
        let frame = json["shared"]["frames"]
            .as_array()
            .unwrap()
            .iter()
            .position(|f| f["name"] == "blocks_then_spins")
            .unwrap() as u64;
        let at: Vec<f64> = json["profiles"][0]["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["frame"] == frame)
            .map(|e| e["at"].as_f64().unwrap())
            .collect();
        assert_eq!(at.len(), 2, "{json}");
        check((at[1] - at[0]) / 1e6, &format!("speedscope {arg}"));

        // replay: the call's line.
        let replay = view(&["replay", t, &arg]);
        assert_eq!(
            replay.starts_with("# durations are CPU time (--time=cpu)"),
            time == "cpu",
            "{replay}"
        );
        let line = replay
            .lines()
            .find(|l| l.ends_with("blocks_then_spins();"))
            .unwrap_or_else(|| panic!("{replay}"));
        check(
            replay_ms(line.split('[').next().unwrap()),
            &format!("replay {arg}"),
        );

        // diff of the trace with itself: both sides.
        let csv = view(&["diff", t, t, "--format=csv", &arg]);
        let row = csv
            .lines()
            .find(|l| l.starts_with("blocks_then_spins,"))
            .unwrap_or_else(|| panic!("{csv}"));
        let cells: Vec<&str> = row.split(',').collect();
        for column in [4, 5] {
            check(
                cells[column].parse::<f64>().unwrap() / 1e6,
                &format!("diff {arg} column {column}"),
            );
        }
    }

    // The timeline: wall-clock slices, the time switched out as slices of their own inside
    // the call.
    let json_path = dir.path().join("cpu.json");
    run_ok(
        hookprof()
            .args(["timeline", t, "--time=cpu", "-o"])
            .arg(&json_path),
    );
    let json = std::fs::read_to_string(&json_path).unwrap();
    check_trace_events(&json);
    assert!(
        json.contains("\"time\":\"wall clock; the time each thread was switched out is drawn"),
        "otherData says what the slices are"
    );
    let slices = timeline_slices(&json_path);
    let call = slices
        .iter()
        .find(|s| s.1 == "blocks_then_spins")
        .expect("the call's slice");
    let (start, end) = (call.2, call.2 + call.3);
    let out: Vec<_> = slices
        .iter()
        .filter(|s| s.1.starts_with("switched out"))
        .collect();
    assert!(!out.is_empty(), "no switched-out slice: {slices:?}");
    // The sleep: the thread blocked for 300 ms (the kernel says so: not a preemption). Not
    // necessarily the longest slice: on a busy machine a preemption of the spin can be longer
    // (391 ms once, under load 4).
    let blocked = out
        .iter()
        .filter(|s| s.1 == "switched out (blocked)")
        .map(|s| s.3)
        .max()
        .unwrap_or(0);
    assert!(
        blocked as f64 / 1e6 >= 250.0,
        "no blocked slice of the sleep: {out:?}"
    );
    let mut out_inside = 0;
    for s in &out {
        if s.2 >= start && s.2 + s.3 <= end {
            out_inside += s.3;
        }
    }
    let (wall, switched) = (call.3 as f64 / 1e6, out_inside as f64 / 1e6);
    wall_ok(wall, "timeline call");
    assert!(switched >= 250.0, "{switched} ms switched out in the call");
    cpu_ok(
        wall - switched,
        "timeline call less its switched-out slices",
    );
    // Without --time=cpu, no such slice.
    let plain = view(&["timeline", t]);
    assert!(!plain.contains("switched out"));

    // A call-path profile records no switches: refused, saying so.
    let profile = dir.path().join("profile.hktrace");
    run_ok(
        Command::new(dir.path().join("cpu_time"))
            .env("HOOKCC_MODE", "profile")
            .env("HOOKCC_OUTPUT", &profile),
    );
    for view in ["report", "flame", "callgrind"] {
        run_fails(
            hookprof().arg(view).arg(&profile).arg("--time=cpu"),
            "a call-path profile (HOOKCC_MODE=profile) records none",
        );
    }

    // Perfetto: the same slices as the JSON, by Perfetto's own classes.
    let pftrace = dir.path().join("cpu.pftrace");
    run_ok(
        hookprof()
            .args(["timeline", t, "--time=cpu", "-o"])
            .arg(&pftrace),
    );
    if let Some(out) = check_perfetto(&pftrace, Some(&json_path)) {
        assert!(
            out.status.success(),
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A process that keeps one CPU busy until dropped (a CPU hog beside a measured run).
struct Hog(std::process::Child);

impl Hog {
    fn on(cpu: u32) -> Hog {
        Hog(Command::new("taskset")
            .args(["-c", &cpu.to_string(), "sh", "-c", "while :; do :; done"])
            .spawn()
            .expect("taskset runs"))
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The first CPU this process may run on (Cpus_allowed_list).
fn first_allowed_cpu() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list");
    list.trim()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a CPU number")
}

/// Issue 34 item 4, the gate without false alarms: two runs of one binary
/// (tests/programs/cpu_time.c `gate`: `steady` and `doubled`, ~150 ms of arithmetic each), the
/// second with two CPU hogs on its CPU, pass `--fail-if 'exclusive > +50%'` — the gate judges
/// CPU time when both traces have switches, and says so — though their wall times are far
/// apart (the same gate on `--time=wall` fails); a build whose `doubled` does twice the work
/// fails it (exit status 3, naming `doubled`). Calls are a rule of their own: unchanged here.
#[test]
fn diff_gate_on_cpu_time_passes_a_run_beside_a_hog_and_fails_a_planted_regression() {
    let cpu = first_allowed_cpu();
    if !have_tool("taskset", &["-c", &cpu.to_string(), "true"], "util-linux") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (base, stderr) = cpu_time_trace(dir.path(), "gate", &[], &["gate"], Some(cpu));
    if no_switches_refuse_cpu_time(&base, &stderr) {
        return;
    }
    let (hogged, _) = {
        let _hogs = [Hog::on(cpu), Hog::on(cpu)];
        cpu_time_trace(dir.path(), "gate_hogged", &[], &["gate"], Some(cpu))
    };
    let (regressed, _) = cpu_time_trace(
        dir.path(),
        "gate_regressed",
        &["-DREGRESSION"],
        &["gate"],
        Some(cpu),
    );
    let gate = |new: &Path, extra: &[&str]| {
        let out = hookprof()
            .arg("diff")
            .arg(&base)
            .arg(new)
            .args(["--fail-if", "exclusive > +50%", "--fail-if", "calls > +0%"])
            .args(["--min-time", "1ms"])
            .args(extra)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        (out.status.code(), text)
    };
    let wall_ms = |trace: &Path| {
        let csv = view(&["report", trace.to_str().unwrap(), "--format=csv"]);
        parse_report_csv(&csv)
            .into_iter()
            .find(|r| r.function == "main")
            .unwrap()
            .inclusive_ns
            / 1e6
    };
    eprintln!(
        "main's wall time: {:.1} ms alone, {:.1} ms beside two hogs",
        wall_ms(&base),
        wall_ms(&hogged)
    );

    let (code, text) = gate(&hogged, &[]);
    eprintln!("beside the hogs, the default gate:\n{text}");
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.starts_with("### hookprof diff: no regression\n")
            && text.contains("Times: CPU time, the time the threads ran (both traces have"),
        "{text}"
    );
    // The same runs on the wall clock, where the waiting beside the hogs looks like a
    // regression: shown, not asserted (how much the hogs slow the run is the machine's).
    let (code, text) = gate(&hogged, &["--time=wall"]);
    eprintln!("beside the hogs, --time=wall (exit status {code:?}):\n{text}");
    assert!(text.contains("Times: wall time (--time=wall)"), "{text}");

    let (code, text) = gate(&regressed, &[]);
    eprintln!("the planted regression:\n{text}");
    assert_eq!(code, Some(3), "{text}");
    assert!(
        text.starts_with("### hookprof diff: 1 regression\n")
            && text.contains("| `doubled` | `exclusive > +50%` |")
            && !text.contains("| `steady` | `exclusive")
            && !text.contains("`calls > +0%` |"),
        "{text}"
    );
}

/// Issue 34 item 4: a trace made where the runtime's writer thread had no free core says so in
/// every view (and its timeline shows the program's thread preempted by the hogs). The run of tests/programs/cpu_time.c `gate` pinned to one CPU beside two CPU hogs
/// on it: the WRITER chunk has the writer's wait for a CPU (the kernel's schedstat), `info`
/// shows it and calls it no free core, and report, flame and timeline warn. The same run alone
/// on its CPU has the figures too (whether it waited depends on the machine: not asserted).
#[test]
fn a_writer_thread_without_a_free_core_is_said_in_every_view() {
    let cpu = first_allowed_cpu();
    if !have_tool("taskset", &["-c", &cpu.to_string(), "true"], "util-linux") {
        return;
    }
    if !Path::new("/proc/self/schedstat").exists() {
        eprintln!("SKIPPED: this kernel has no schedstats (/proc/self/schedstat)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (alone, _) = cpu_time_trace(dir.path(), "alone", &[], &["gate"], Some(cpu));
    let info = |trace: &Path| {
        String::from_utf8_lossy(&run_ok(hookprof().arg("info").arg(trace)).stdout).into_owned()
    };
    let text = info(&alone);
    assert!(text.contains("writer thread:     ran "), "{text}");
    let (hogged, stderr) = {
        let _hogs = [Hog::on(cpu), Hog::on(cpu)];
        cpu_time_trace(dir.path(), "hogged", &[], &["gate"], Some(cpu))
    };
    let text = info(&hogged);
    assert!(text.contains("; it had no free core"), "{text}");
    // Beside the hogs the program's thread was preempted, and the timeline says so (where the
    // kernel gives the switches at all).
    if stderr.contains(SWITCHES_REFUSED) {
        eprintln!("SKIPPED the preempted slices: this kernel refuses the perf events");
        return;
    }
    let json = dir.path().join("hogged.json");
    run_ok(
        hookprof()
            .arg("timeline")
            .arg(&hogged)
            .args(["--time=cpu", "-o"])
            .arg(&json),
    );
    let slices = timeline_slices(&json);
    assert!(
        slices.iter().any(|s| s.1 == "switched out (preempted)"),
        "{:?}",
        slices
            .iter()
            .filter(|s| s.1.starts_with("switched"))
            .collect::<Vec<_>>()
    );
    for view in [&["report"][..], &["flame"], &["timeline", "-o", "t.json"]] {
        let out = run_ok(
            hookprof()
                .current_dir(dir.path())
                .arg(view[0])
                .arg(&hogged)
                .args(&view[1..]),
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("the runtime's writer thread had no free core: it waited"),
            "{view:?}: {stderr}"
        );
    }
}
