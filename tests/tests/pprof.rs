//! `hookprof export --format=pprof` (docs/export.md, "pprof"): programs built with
//! `hookcc --trace`, run, exported; the gzipped profile.proto decoded by the small protobuf
//! decoder below and compared with `hookprof report`'s calls, exclusive and inclusive times
//! (on the wall clock, and on the CPU clock where the trace has its context switches); then
//! read by `go tool pprof` (Debian's golang-go), whose `-top` and `-traces` must show the
//! same numbers.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use hookcc_tests::*;

/// A field's value: a varint, or length-delimited bytes (all profile.proto uses).
enum Value<'a> {
    Int(u64),
    Bytes(&'a [u8]),
}

fn varint(bytes: &mut &[u8]) -> u64 {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = bytes.split_first().expect("a varint cut short");
        *bytes = rest;
        value |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return value;
        }
    }
    panic!("a varint longer than 10 bytes")
}

/// The fields of one message, in order.
fn fields(mut bytes: &[u8]) -> Vec<(u64, Value<'_>)> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let key = varint(&mut bytes);
        let value = match key & 7 {
            0 => Value::Int(varint(&mut bytes)),
            2 => {
                let len = varint(&mut bytes) as usize;
                let (v, rest) = bytes.split_at(len);
                bytes = rest;
                Value::Bytes(v)
            }
            wire => panic!("wire type {wire}: profile.proto has none"),
        };
        out.push((key >> 3, value));
    }
    out
}

/// A repeated integer field, packed or not.
fn ints(value: &Value<'_>) -> Vec<u64> {
    match value {
        Value::Int(v) => vec![*v],
        Value::Bytes(mut b) => {
            let mut out = Vec::new();
            while !b.is_empty() {
                out.push(varint(&mut b));
            }
            out
        }
    }
}

fn int(value: &Value<'_>) -> u64 {
    match value {
        Value::Int(v) => *v,
        Value::Bytes(_) => panic!("a message where an integer was expected"),
    }
}

fn message<'a>(value: &Value<'a>) -> &'a [u8] {
    match value {
        Value::Bytes(b) => b,
        Value::Int(_) => panic!("an integer where a message was expected"),
    }
}

#[derive(Debug)]
struct Sample {
    /// Function names, leaf first.
    stack: Vec<String>,
    values: Vec<u64>,
    /// Labels by key, numbers as text.
    labels: BTreeMap<String, String>,
}

struct Decoded {
    /// (type, unit) of each value.
    types: Vec<(String, String)>,
    samples: Vec<Sample>,
    /// Function name → (file, start line).
    places: BTreeMap<String, (String, u64)>,
}

/// Decodes the gzipped profile at `path`.
fn decode(path: &Path) -> Decoded {
    let mut bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut bytes)
        .unwrap();
    let top = fields(&bytes);
    let strings: Vec<String> = top
        .iter()
        .filter(|(f, _)| *f == 6)
        .map(|(_, v)| String::from_utf8(message(v).to_vec()).unwrap())
        .collect();
    assert_eq!(strings[0], "", "string_table[0] must be empty");
    let s = |i: u64| strings[i as usize].clone();
    let mut types = Vec::new();
    let mut functions = BTreeMap::new();
    let mut locations = BTreeMap::new();
    for (field, value) in &top {
        match field {
            1 => {
                let t = fields(message(value));
                let get = |n| t.iter().find(|(f, _)| *f == n).map_or(0, |(_, v)| int(v));
                types.push((s(get(1)), s(get(2))));
            }
            5 => {
                let f = fields(message(value));
                let get = |n| f.iter().find(|(k, _)| *k == n).map_or(0, |(_, v)| int(v));
                functions.insert(get(1), (s(get(2)), s(get(4)), get(5)));
            }
            4 => {
                let l = fields(message(value));
                let id = l
                    .iter()
                    .find(|(k, _)| *k == 1)
                    .map(|(_, v)| int(v))
                    .unwrap();
                let lines: Vec<u64> = l
                    .iter()
                    .filter(|(k, _)| *k == 4)
                    .map(|(_, v)| {
                        let line = fields(message(v));
                        line.iter()
                            .find(|(k, _)| *k == 1)
                            .map(|(_, v)| int(v))
                            .unwrap()
                    })
                    .collect();
                assert_eq!(
                    lines.len(),
                    1,
                    "one function a location (no inlined frames)"
                );
                locations.insert(id, lines[0]);
            }
            _ => {}
        }
    }
    let mut samples = Vec::new();
    for (_, value) in top.iter().filter(|(f, _)| *f == 2) {
        let mut sample = Sample {
            stack: Vec::new(),
            values: Vec::new(),
            labels: BTreeMap::new(),
        };
        for (field, v) in fields(message(value)) {
            match field {
                1 => sample.stack.extend(
                    ints(&v)
                        .into_iter()
                        .map(|l| functions[&locations[&l]].0.clone()),
                ),
                2 => sample.values.extend(ints(&v)),
                3 => {
                    let label = fields(message(&v));
                    let get = |n| label.iter().find(|(k, _)| *k == n).map(|(_, v)| int(v));
                    let text = match get(2) {
                        Some(i) => s(i),
                        None => get(3).unwrap_or(0).to_string(),
                    };
                    sample.labels.insert(s(get(1).unwrap()), text);
                }
                _ => {}
            }
        }
        assert_eq!(sample.values.len(), types.len(), "{sample:?}");
        samples.push(sample);
    }
    let places = functions
        .into_values()
        .map(|(name, file, line)| (name, (file, line)))
        .collect();
    Decoded {
        types,
        samples,
        places,
    }
}

impl Decoded {
    fn index(&self, kind: &str) -> Option<usize> {
        self.types.iter().position(|(t, _)| t == kind)
    }

    /// Per function: the values of value `index` where it is the leaf (flat), and of every
    /// path it is on, once a path (cum).
    fn flat_and_cum(&self, index: usize) -> BTreeMap<String, (u64, u64)> {
        let mut out: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for sample in &self.samples {
            let v = sample.values[index];
            out.entry(sample.stack[0].clone()).or_default().0 += v;
            let on_path: BTreeSet<&String> = sample.stack.iter().collect();
            for f in on_path {
                out.entry(f.clone()).or_default().1 += v;
            }
        }
        out
    }
}

/// `hookprof export --format=pprof -o PROFILE TRACE`, decoded.
fn export_pprof(trace: &Path, profile: &Path) -> Decoded {
    run_ok(
        hookprof()
            .args(["export", "--format=pprof", "-o"])
            .arg(profile)
            .arg(trace),
    );
    decode(profile)
}

/// `hookprof report --format=csv` of `traces` (added up) with `extra`: function → row.
fn report(traces: &[PathBuf], extra: &[&str]) -> BTreeMap<String, Row> {
    let out = run_ok(
        hookprof()
            .arg("report")
            .args(traces)
            .arg("--format=csv")
            .args(extra),
    );
    parse_report_csv(&String::from_utf8_lossy(&out.stdout))
        .into_iter()
        .map(|r| (r.function.clone(), r))
        .collect()
}

/// The decoded profile's calls and times of `index` equal the report's: calls exactly, the
/// exclusive time within a nanosecond a call path (each path's sum is rounded once), the
/// inclusive time (the paths through the function) within one a path as well.
fn same_as_report(decoded: &Decoded, index: usize, report: &BTreeMap<String, Row>, what: &str) {
    let times = decoded.flat_and_cum(index);
    let calls = decoded.flat_and_cum(decoded.index("calls").unwrap());
    let paths = decoded.samples.len() as u64;
    for (function, row) in report {
        let (flat, cum) = times
            .get(function)
            .copied()
            .unwrap_or_else(|| panic!("{what}: {function} not in the profile"));
        assert_eq!(calls[function].0, row.calls, "{what}: {function}'s calls");
        assert!(
            flat.abs_diff(row.exclusive_ns.round() as u64) <= paths,
            "{what}: {function}: flat {flat} ns, report's exclusive {} ns",
            row.exclusive_ns
        );
        assert!(
            cum.abs_diff(row.inclusive_ns.round() as u64) <= paths,
            "{what}: {function}: cum {cum} ns, report's inclusive {} ns",
            row.inclusive_ns
        );
    }
    assert_eq!(
        times.keys().collect::<Vec<_>>(),
        report.keys().collect::<Vec<_>>(),
        "{what}: the profile's functions are the report's"
    );
}

/// `go tool pprof -top` of `profile` for the sample type `index`: function → (flat, cum).
fn go_top(profile: &Path, index: &str, unit_ns: bool) -> BTreeMap<String, (u64, u64)> {
    let mut cmd = Command::new("go");
    cmd.args([
        "tool",
        "pprof",
        "-top",
        "-nodefraction=0",
        "-nodecount=100000",
    ])
    .arg(format!("-sample_index={index}"));
    if unit_ns {
        cmd.arg("-unit=ns");
    }
    let out = run_ok(cmd.arg(profile));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let number = |s: &str| -> u64 {
        s.trim_end_matches("ns")
            .parse()
            .unwrap_or_else(|e| panic!("{s:?} in\n{text}: {e}"))
    };
    text.lines()
        .skip_while(|l| !l.contains("flat%"))
        .skip(1)
        .map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            (cols[5..].join(" "), (number(cols[0]), number(cols[3])))
        })
        .collect()
}

/// `go tool pprof -traces` by calls: each sample's (thread label, stack leaf first, calls).
fn go_traces(profile: &Path) -> BTreeSet<(String, Vec<String>, u64)> {
    let out = run_ok(
        Command::new("go")
            .args(["tool", "pprof", "-traces", "-sample_index=calls"])
            .arg(profile),
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut traces = BTreeSet::new();
    for block in text
        .split("-----------+-------------------------------------------------------")
        .skip(1)
    {
        let mut thread = String::new();
        let mut stack = Vec::new();
        let mut calls = 0;
        for line in block.lines().filter(|l| !l.trim().is_empty()) {
            if let Some((key, value)) = line.split_once(":  ") {
                if !key.trim().contains(' ') && stack.is_empty() {
                    if key.trim() == "thread" {
                        thread = value.trim().to_string();
                    }
                    continue;
                }
            }
            if stack.is_empty() {
                let (value, name) = line.trim().split_once(' ').unwrap();
                calls = value.parse().unwrap_or_else(|e| panic!("{line:?}: {e}"));
                stack.push(name.trim().to_string());
            } else {
                stack.push(line.trim().to_string());
            }
        }
        if !stack.is_empty() {
            traces.insert((thread, stack, calls));
        }
    }
    traces
}

fn have_go() -> bool {
    have_tool("go", &["version"], "golang-go")
}

#[test]
fn pprof_of_threads_has_the_reports_numbers_and_go_pprof_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(
        d,
        "threads",
        &["threads.c"],
        &["-O1", "-g", "-lpthread"],
        false,
    );
    // With the threads' context switches where the kernel allows them: the CPU time's column.
    let trace = d.join("threads.hktrace");
    let out = run_ok(
        Command::new(&program)
            .current_dir(d)
            .env("HOOKCC_OUTPUT", &trace),
    );
    // The trace has CPU time when `report --time=cpu` reads it (switches recorded, at least
    // one pair: main waits in pthread_join); never where the kernel refused the perf events.
    let switches = hookprof()
        .args(["report", "--time=cpu"])
        .arg(&trace)
        .output()
        .unwrap()
        .status
        .success();
    if String::from_utf8_lossy(&out.stderr).contains(SWITCHES_REFUSED) {
        assert!(!switches, "CPU time without the threads' switches");
    }
    let profile = d.join("threads.pb.gz");
    let decoded = export_pprof(&trace, &profile);
    let mut expected_types = vec![("calls", "count")];
    if switches {
        expected_types.push(("cpu", "nanoseconds"));
    }
    expected_types.push(("wall", "nanoseconds"));
    let types: Vec<(&str, &str)> = decoded
        .types
        .iter()
        .map(|(t, u)| (t.as_str(), u.as_str()))
        .collect();
    assert_eq!(types, expected_types);

    let traces = [trace.clone()];
    let wall = report(&traces, &[]);
    same_as_report(&decoded, decoded.index("wall").unwrap(), &wall, "wall");
    assert_eq!(wall["work"].calls, 1000);
    if switches {
        let cpu = report(&traces, &["--time=cpu"]);
        same_as_report(&decoded, decoded.index("cpu").unwrap(), &cpu, "cpu");
    }

    // One sample a call path and thread: main's, and worker's and work's in each of four
    // threads, each labelled with its thread's name and the process.
    assert_eq!(decoded.samples.len(), 9, "{:?}", decoded.samples);
    let calls = decoded.index("calls").unwrap();
    for sample in &decoded.samples {
        let thread = &sample.labels["thread"];
        assert_eq!(
            sample.labels["process"],
            format!("threads [{}]", sample.labels["pid"])
        );
        if sample.stack == ["work", "worker"] {
            let k: u64 = thread
                .strip_prefix("worker-")
                .and_then(|t| t.split(' ').next())
                .and_then(|k| k.parse().ok())
                .unwrap_or_else(|| panic!("{thread}"));
            assert_eq!(sample.values[calls], 100 * k, "{sample:?}");
        }
    }
    // Functions with their file and line from DWARF.
    let source = std::fs::read_to_string(program_source("threads.c")).unwrap();
    let line_of = |text: &str| source.lines().position(|l| l.starts_with(text)).unwrap() as u64 + 1;
    for (function, start) in [
        ("worker", "void *worker("),
        ("work", "void work("),
        ("main", "int main("),
    ] {
        let (file, line) = &decoded.places[function];
        assert!(
            file.ends_with("tests/programs/threads.c"),
            "{function}: {file}"
        );
        assert_eq!(*line, line_of(start), "{function}");
    }

    if !have_go() {
        return;
    }
    // go tool pprof reads it: -top's flat and cum are the decoded sums, value for value.
    let mut indexes = vec![("calls", false), ("wall", true)];
    if switches {
        indexes.push(("cpu", true));
    }
    for (kind, unit_ns) in indexes {
        let top = go_top(&profile, kind, unit_ns);
        let mine: BTreeMap<String, (u64, u64)> = decoded
            .flat_and_cum(decoded.index(kind).unwrap())
            .into_iter()
            .filter(|(_, (_, cum))| *cum > 0)
            .collect();
        assert_eq!(top, mine, "go tool pprof -top -sample_index={kind}");
    }
    // -traces: every sample, its thread and its calls.
    let mine: BTreeSet<(String, Vec<String>, u64)> = decoded
        .samples
        .iter()
        .map(|s| (s.labels["thread"].clone(), s.stack.clone(), s.values[calls]))
        .collect();
    assert_eq!(go_traces(&profile), mine, "go tool pprof -traces");
}

#[test]
fn pprof_of_several_processes_is_one_profile_with_a_pid_each() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(d, "family", &["family.c"], &["-O1", "-g"], false);
    run_traced(d, &program, &[]);
    let traces = traces_in(d);
    assert_eq!(traces.len(), 5, "{traces:?}");
    let profile = d.join("family.pb.gz");
    run_ok(
        hookprof()
            .args([
                "export",
                "--format=pprof",
                "--host",
                "alpha",
                "--run",
                "r1",
                "-o",
            ])
            .arg(&profile)
            .args(&traces),
    );
    let decoded = decode(&profile);
    // HOOKCC_SWITCHES=0 (run_traced): no CPU time.
    assert!(decoded.index("cpu").is_none(), "{:?}", decoded.types);
    let pids: BTreeSet<&String> = decoded.samples.iter().map(|s| &s.labels["pid"]).collect();
    assert_eq!(pids.len(), 5, "{pids:?}");
    assert!(decoded
        .samples
        .iter()
        .all(|s| s.labels["host"] == "alpha" && s.labels["run"] == "r1"));
    same_as_report(
        &decoded,
        decoded.index("wall").unwrap(),
        &report(&traces, &[]),
        "five processes",
    );
    assert_eq!(
        decoded.flat_and_cum(decoded.index("calls").unwrap())["child_work"].0,
        10
    );
    if have_go() {
        let top = go_top(&profile, "calls", false);
        // Each child_work call and the spin call it makes.
        assert_eq!(top["child_work"], (10, 20), "{top:?}");
    }
}

#[test]
fn pprof_of_a_call_path_profile_and_of_a_deep_recursion() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // A call-path profile (HOOKCC_MODE=profile): its sums per path are the samples.
    let program = build_traced(d, "calls", &["calls.c"], &["-O1"], false);
    let trace = d.join("calls.hktrace");
    run_ok(
        Command::new(&program)
            .current_dir(d)
            .env("HOOKCC_OUTPUT", &trace)
            .env("HOOKCC_MODE", "profile"),
    );
    let profile = d.join("calls.pb.gz");
    // Compensated: where the hooks' time to take from a node's exclusive time is more than it
    // has, its parent's gives the rest, so that a path's exclusive times still add up to the
    // report's inclusive time (before, they passed it by 52 to 930 ns on calls.c, one run in
    // three).
    let decoded = export_pprof(&trace, &profile);
    // A profile records no context switches: no CPU time, as `report --time=cpu` refuses it.
    assert!(decoded.index("cpu").is_none(), "{:?}", decoded.types);
    let report_rows = report(&[trace], &[]);
    same_as_report(
        &decoded,
        decoded.index("wall").unwrap(),
        &report_rows,
        "profile",
    );
    let calls = decoded.flat_and_cum(decoded.index("calls").unwrap());
    for (function, n) in CALLS_C {
        assert_eq!(calls[function].0, n, "{function}");
    }

    // A 2 000-deep recursion: paths are cut at 512 frames as the flame graph's, the deeper
    // calls counted in one marker frame; every time still adds up to the report's total.
    let program = build_traced(d, "deep", &["deep_recursion.c"], &["-O0"], false);
    let trace = d.join("deep2000.hktrace");
    run_ok(
        Command::new(&program)
            .arg("2000")
            .current_dir(d)
            .env("HOOKCC_OUTPUT", &trace),
    );
    let profile = d.join("deep.pb.gz");
    let decoded = export_pprof(&trace, &profile);
    let deepest = decoded.samples.iter().map(|s| s.stack.len()).max().unwrap();
    assert_eq!(deepest, 513, "512 frames and the marker");
    let calls = decoded.flat_and_cum(decoded.index("calls").unwrap());
    let marker = "[deeper than 512 frames]";
    assert_eq!(calls["down"].0 + calls[marker].0, 2001);
    let wall = decoded.index("wall").unwrap();
    let total: u64 = decoded.samples.iter().map(|s| s.values[wall]).sum();
    let reported: f64 = report(&[trace], &[]).values().map(|r| r.exclusive_ns).sum();
    assert!(
        total.abs_diff(reported.round() as u64) <= decoded.samples.len() as u64,
        "{total} ns in the profile, {reported} in the report"
    );
}
