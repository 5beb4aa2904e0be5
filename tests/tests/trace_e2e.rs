//! Native trace mode end to end: programs built with `hookcc --trace`, run, and their traces
//! decoded with `hookprof report`; call counts known by construction.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use hookcc_tests::*;

fn expect_counts(counts: &BTreeMap<String, u64>, expected: &[(&str, u64)], context: &str) {
    for (function, calls) in expected {
        assert_eq!(
            counts.get(*function),
            Some(calls),
            "{context}: calls of `{function}`; whole report: {counts:#?}"
        );
    }
}

/// Finds the one row whose name contains `pattern` (for C++ names, whose exact demangled form
/// includes return types of templates).
fn count_matching(counts: &BTreeMap<String, u64>, pattern: &str) -> u64 {
    let rows: Vec<_> = counts
        .iter()
        .filter(|(name, _)| name.contains(pattern))
        .collect();
    assert_eq!(
        rows.len(),
        1,
        "exactly one function should match `{pattern}`: {counts:#?}"
    );
    *rows[0].1
}

#[test]
fn recursion_function_pointers_and_static_functions_at_o0_and_o2() {
    for opt in ["-O0", "-O2"] {
        let dir = tempfile::tempdir().unwrap();
        let program = build_traced(dir.path(), "calls", &["calls.c"], &[opt], false);
        let (trace, stdout) = run_traced(dir.path(), &program, &[]);
        assert_eq!(stdout.trim(), "16135", "{opt}: the program's own output");
        let counts = call_counts(&trace, &[]);
        expect_counts(&counts, &CALLS_C, opt);
        assert_eq!(
            counts.len(),
            6,
            "{opt}: only the program's own functions: {counts:#?}"
        );
    }
}

#[test]
fn several_translation_units_compiled_separately_and_linked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (src, obj) in [("tu_main.c", "tu_main.o"), ("tu_util.c", "tu_util.o")] {
        run_ok(
            hookcc(d, false)
                .args(["--trace", SOURCE_PLACEMENT, "-O2", "-c"])
                .arg(program_source(src))
                .args(["-o", obj]),
        );
    }
    // Link only: the runtime comes in here.
    run_ok(hookcc(d, false).args(["--trace", "tu_main.o", "tu_util.o", "-o", "tu"]));
    let (trace, stdout) = run_traced(d, &d.join("tu"), &[]);
    assert_eq!(stdout.trim(), "45");
    expect_counts(
        &call_counts(&trace, &[]),
        &[
            ("main", 1),
            ("run", 1),
            ("util_add", 10),
            ("util_scale", 20),
        ],
        "two TUs",
    );
}

#[test]
fn shared_library_functions_are_traced_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (trace, _) = run_traced(d, &build_shlib_program(d), &[]);
    expect_counts(
        &call_counts(&trace, &[]),
        &[("main", 1), ("lib_square", 7), ("lib_helper", 21)],
        "shared library",
    );
}

#[test]
fn four_threads_counted_per_thread() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(
        dir.path(),
        "threads",
        &["threads.c"],
        &["-O2", "-pthread"],
        false,
    );
    let (trace, stdout) = run_traced(dir.path(), &program, &[]);
    // sink = sum over k of (0 + 1 + … + (100k - 1))
    let expected: i64 = (1..=4).map(|k: i64| (100 * k) * (100 * k - 1) / 2).sum();
    assert_eq!(stdout.trim(), expected.to_string());
    expect_counts(
        &call_counts(&trace, &[]),
        &[("main", 1), ("worker", 4), ("work", 1000)],
        "threads",
    );

    let out = run_ok(
        hookprof()
            .arg("report")
            .arg(&trace)
            .args(["--format=csv", "--per-thread"]),
    );
    let rows = parse_report_csv(&String::from_utf8_lossy(&out.stdout));
    let mut per_thread: Vec<u64> = rows
        .iter()
        .filter(|r| r.function == "work")
        .map(|r| r.calls)
        .collect();
    per_thread.sort();
    assert_eq!(
        per_thread,
        [100, 200, 300, 400],
        "work() per thread: {rows:#?}"
    );
    let threads: std::collections::BTreeSet<_> =
        rows.iter().map(|r| r.thread.clone().unwrap()).collect();
    assert_eq!(
        threads.len(),
        5,
        "main thread and four workers: {threads:?}"
    );
}

#[test]
fn frames_left_open_by_pthread_exit_close_when_the_thread_ended() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(
        dir.path(),
        "thread_exit",
        &["thread_exit.c"],
        &["-O1", "-pthread"],
        false,
    );
    let (trace, _) = run_traced(dir.path(), &program, &[]);
    let out = run_ok(
        hookprof()
            .arg("report")
            .arg(&trace)
            .args(["--format=csv", "--per-thread"]),
    );
    let rows = parse_report_csv(&String::from_utf8_lossy(&out.stdout));
    let row = |function: &str| {
        let found: Vec<_> = rows.iter().filter(|r| r.function == function).collect();
        assert_eq!(found.len(), 1, "one row for {function}: {rows:#?}");
        found[0].clone()
    };
    let (outer, main, after_join) = (row("outer"), row("main"), row("after_join"));
    assert_ne!(outer.thread, main.thread, "outer runs in the other thread");
    // Not a timing assumption but an order: outer was entered after main and the thread
    // ended before pthread_join returned, so before after_join began. Closed at the process's
    // end (as before END chunks), outer would also span after_join.
    assert!(
        outer.inclusive_ns + after_join.inclusive_ns <= main.inclusive_ns + 1.0,
        "outer {outer:?}\nafter_join {after_join:?}\nmain {main:?}"
    );
}

#[test]
fn a_trace_being_read_is_not_truncated_by_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(dir.path(), "calls", &["calls.c"], &["-O1"], false);
    let (trace, _) = run_traced(dir.path(), &program, &[]);
    let open = hookprof::input::trace_file::TraceFile::open(&trace).unwrap();
    let first = open.summary().unwrap();
    // The same HOOKCC_OUTPUT again while the trace is open (mapped): the new run must not
    // truncate it under the reader (which then died of SIGBUS), but write a name of its own.
    let out = run_ok(
        std::process::Command::new(&program)
            .current_dir(dir.path())
            .env("HOOKCC_OUTPUT", &trace),
    );
    assert!(out.status.success());
    let again = open.summary().unwrap();
    assert_eq!(again.records, first.records);
    assert_eq!(again.header, first.header);
    let mut traces: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".hktrace"))
        .collect();
    traces.sort();
    assert_eq!(traces.len(), 2, "{traces:?}");
    let pid = traces.iter().find(|n| *n != "calls.hktrace").unwrap();
    assert!(
        pid.strip_prefix("calls.")
            .and_then(|n| n.strip_suffix(".hktrace"))
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())),
        "the second run wrote calls.<pid>.hktrace: {traces:?}"
    );
}

#[test]
fn cxx_methods_templates_and_overloads_have_readable_names() {
    for opt in ["-O0", "-O2"] {
        let dir = tempfile::tempdir().unwrap();
        let program = build_traced(dir.path(), "shapes", &["shapes.cpp"], &[opt], true);
        let (trace, _) = run_traced(dir.path(), &program, &[]);
        let counts = call_counts(&trace, &[]);
        assert_eq!(count_matching(&counts, "Square::area() const"), 3, "{opt}");
        assert_eq!(count_matching(&counts, "Circle::area() const"), 2, "{opt}");
        assert_eq!(count_matching(&counts, "add<int>(int, int)"), 4, "{opt}");
        assert_eq!(
            count_matching(&counts, "add<double>(double, double)"),
            5,
            "{opt}"
        );
        assert_eq!(count_matching(&counts, "describe(int)"), 2, "{opt}");
        assert_eq!(count_matching(&counts, "describe(double)"), 1, "{opt}");
        assert!(
            !counts.keys().any(|k| k.starts_with("_Z")),
            "{opt}: mangled names left: {counts:#?}"
        );
    }
}

#[test]
fn inclusive_time_covers_exclusive_time_and_main_dominates() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(dir.path(), "calls", &["calls.c"], &["-O1"], false);
    let (trace, _) = run_traced(dir.path(), &program, &[]);
    let out = run_ok(hookprof().arg("report").arg(&trace).arg("--format=csv"));
    let rows = parse_report_csv(&String::from_utf8_lossy(&out.stdout));
    let main = rows
        .iter()
        .find(|r| r.function == "main")
        .expect("main row");
    let total_exclusive: f64 = rows.iter().map(|r| r.exclusive_ns).sum();
    for r in &rows {
        assert!(r.inclusive_ns + 1e-6 >= r.exclusive_ns, "{r:?}");
        assert!(
            r.inclusive_ns <= main.inclusive_ns + 1e-6,
            "nothing outlasts main: {r:?}"
        );
    }
    // main's inclusive time is everything the program's functions did: equal in ticks. The
    // report rounds each time to the nearest ns on its own, so the sum of the rows' exclusive
    // times may differ from main's inclusive by half a ns per row, and main's own half.
    let rounding = 0.5 * (rows.len() + 1) as f64;
    assert!(
        (main.inclusive_ns - total_exclusive).abs() <= rounding,
        "main {} ns, exclusive times add up to {total_exclusive} ns: {rows:#?}",
        main.inclusive_ns
    );
}

#[test]
fn default_trace_file_name_and_executable_from_header() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(d, "calls", &["calls.c"], &["-O0"], false);
    let out = run_ok(
        std::process::Command::new(&program)
            .current_dir(d)
            .env_remove("HOOKCC_OUTPUT"),
    );
    assert!(out.status.success());
    let traces: Vec<_> = std::fs::read_dir(d)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .filter(|n| n.starts_with("calls.") && n.ends_with(".hktrace"))
        .collect();
    assert_eq!(
        traces.len(),
        1,
        "one <program>.<pid>.hktrace in the working directory: {traces:?}"
    );
    // No --exe: the executable path recorded in the trace names the functions.
    let counts = call_counts(&Path::new(d).join(&traces[0]), &[]);
    assert_eq!(counts.get("fib"), Some(&1973));
}

#[test]
fn installed_into_a_prefix_it_finds_its_plugin_and_runtime() {
    let prefix = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    run_ok(
        std::process::Command::new(workspace_root().join("scripts/install.sh"))
            .arg(prefix.path())
            .env("HOOKCC_BUILD_DIR", target_dir()),
    );
    let bin = prefix.path().join("bin");
    run_ok(
        std::process::Command::new(bin.join("hookcc++"))
            .current_dir(work.path())
            .env("HOOKCC_CACHE_DIR", work.path().join("cache"))
            .args(["--trace", "-O1"])
            .arg(program_source("shapes.cpp"))
            .args(["-o", "shapes"]),
    );
    let (trace, _) = run_traced(work.path(), &work.path().join("shapes"), &[]);
    let out = run_ok(
        std::process::Command::new(bin.join("hookprof"))
            .arg("report")
            .arg(&trace)
            .arg("--format=csv"),
    );
    let rows = parse_report_csv(&String::from_utf8_lossy(&out.stdout));
    assert!(
        rows.iter()
            .any(|r| r.function.contains("Square::area() const") && r.calls == 3),
        "{rows:#?}"
    );
}

#[test]
fn longjmp_out_of_eleven_frames_closes_them_where_it_lands() {
    // tests/programs/longjmp.c: after() must be work's child (not deep's), the deepest stack
    // 13 frames (not 14, 15, …), and the 11 skipped frames of each of the 1000 rounds closed
    // by the resync record at setjmp's second return, not left open or paired wrongly.
    for opt in ["-O0", "-O2"] {
        let dir = tempfile::tempdir().unwrap();
        let program = build_traced(dir.path(), "longjmp", &["longjmp.c"], &[opt], false);
        let (trace, stdout) = run_traced(dir.path(), &program, &[]);
        assert_eq!(stdout.trim(), "11000", "{opt}");
        let out = run_ok(
            hookprof()
                .arg("report")
                .arg(&trace)
                .args(["--format=csv", "--callers"]),
        );
        let csv = String::from_utf8_lossy(&out.stdout);
        let mut reader = csv::Reader::from_reader(csv.as_bytes());
        let headers = reader.headers().unwrap().clone();
        let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
        let (function, calls, callers) = (column("function"), column("calls"), column("callers"));
        let rows: std::collections::BTreeMap<String, (u64, String)> = reader
            .records()
            .map(|r| {
                let r = r.unwrap();
                (
                    r[function].to_string(),
                    (r[calls].parse().unwrap(), r[callers].to_string()),
                )
            })
            .collect();
        let expect = |f: &str, n: u64, by: &str| {
            assert_eq!(
                rows.get(f),
                Some(&(n, by.to_string())),
                "{opt}: {f}: {rows:#?}"
            );
        };
        expect("main", 1, "<spontaneous>×1");
        expect("work", 1000, "main×1000");
        expect("after", 1000, "work×1000");
        let info = run_ok(hookprof().arg("info").arg(&trace));
        let info = String::from_utf8_lossy(&info.stdout);
        assert!(info.contains("max depth 13"), "{opt}: {info}");
        for line in [
            "unmatched entries: 0",
            "unmatched exits:   0",
            "closed by longjmp: 11000",
        ] {
            assert!(info.contains(line), "{opt}: `{line}` in:\n{info}");
        }
    }
}

#[test]
fn hook_min_size_leaves_small_loopless_functions_without_hooks() {
    // calls.c's leaf, twice, negate and apply are a few IR instructions each, fib is larger,
    // main has loops: with --hook-min-size=12 only fib and main keep their hooks, at -O0 and
    // -O2 alike (the pass counts before optimization). An include glob keeps a small one.
    for opt in ["-O0", "-O2"] {
        let dir = tempfile::tempdir().unwrap();
        let program = build_traced(
            dir.path(),
            "calls",
            &["calls.c"],
            &[opt, "--hook-min-size=12"],
            false,
        );
        let (trace, stdout) = run_traced(dir.path(), &program, &[]);
        assert_eq!(stdout.trim(), "16135", "{opt}");
        let counts = call_counts(&trace, &[]);
        let expected: BTreeMap<String, u64> = [("fib", 1973), ("main", 1)]
            .iter()
            .map(|(f, n)| (f.to_string(), *n))
            .collect();
        assert_eq!(counts, expected, "{opt}");

        let program = build_traced(
            dir.path(),
            "calls-leaf",
            &["calls.c"],
            &[
                opt,
                "--hook-min-size=1000",
                "--hook-include=leaf",
                "--hook-include=main",
            ],
            false,
        );
        let (trace, _) = run_traced(dir.path(), &program, &[]);
        let counts = call_counts(&trace, &[]);
        let expected: BTreeMap<String, u64> = [("leaf", 100), ("main", 1)]
            .iter()
            .map(|(f, n)| (f.to_string(), *n))
            .collect();
        assert_eq!(
            counts, expected,
            "{opt}: included functions keep their hooks"
        );
    }
    // Not a number: a usage error naming the option.
    let dir = tempfile::tempdir().unwrap();
    let out = hookcc(dir.path(), false)
        .args(["--trace", "--hook-min-size=big", "-c"])
        .arg(program_source("calls.c"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("--hook-min-size=big"),
        "{stderr}"
    );
}

/// Issue 15, item 9: a flipped bit in a thread id, a module's bias or the header's lost count
/// used to give a report without a warning. Each now gives one that names the place.
#[test]
fn flipped_bits_in_a_real_trace_are_reported_with_their_offsets() {
    use hookprof::input::format::{Chunk, Trace, CHUNK_HEADER_SIZE};
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(dir.path(), "calls", &["calls.c"], &["-O1"], false);
    let (trace, _) = run_traced(dir.path(), &program, &[]);
    let info = |path: &Path| {
        let out = run_ok(hookprof().arg("info").arg(path));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let clean = info(&trace);
    assert!(
        clean.contains(" chunks match; the header matches\n") && !clean.contains("NOT"),
        "{clean}"
    );
    let bytes = std::fs::read(&trace).unwrap();
    let (events, module) = {
        let t = Trace::new(&bytes).unwrap();
        let chunks: Vec<_> = t.chunks().map(Result::unwrap).collect();
        let events = chunks
            .iter()
            .find(|c| matches!(c.chunk, Chunk::Events(_)))
            .unwrap();
        let module = chunks
            .iter()
            .find(|c| matches!(c.chunk, Chunk::Module(_)))
            .unwrap();
        ((events.offset, events.thread), module.offset)
    };
    let flip = |name: &str, byte: u64, expected: String| {
        let mut copy = bytes.clone();
        copy[byte as usize] ^= 0x04;
        let path = dir.path().join(format!("{name}.hktrace"));
        std::fs::write(&path, &copy).unwrap();
        let report = run_ok(
            hookprof()
                .arg("report")
                .arg(&path)
                .arg("--exe")
                .arg(&program),
        );
        let stderr = String::from_utf8_lossy(&report.stderr);
        assert!(
            stderr.contains(&expected),
            "{name}: {expected}\nnot in:\n{stderr}"
        );
        info(&path)
    };
    let thread_field = events.0 + 8;
    let text = flip(
        "thread",
        thread_field,
        format!(
            "do not match their checksums, the first is the PACKED chunk at byte {} (thread {})",
            events.0,
            events.1 ^ 0x04
        ),
    );
    assert!(
        text.contains(&format!(
            "1 do NOT (first: the PACKED chunk at byte {}",
            events.0
        )),
        "{text}"
    );
    flip(
        "bias",
        module + CHUNK_HEADER_SIZE as u64,
        format!("the first is the MODULE chunk at byte {module}:"),
    );
    let text = flip(
        "lost",
        56,
        "the header (bytes 0-63) does not match its checksum".to_string(),
    );
    assert!(text.contains("the header does NOT"), "{text}");
}

/// Issue 12, hook-overhead compensation: the runtime times its own hooks at start (OVERHEAD
/// chunk); every report subtracts that time unless `--no-compensation`, and never adds any.
#[test]
fn reports_subtract_the_hooks_measured_time_unless_told_not_to() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(dir.path(), "calls", &["calls.c"], &["-O1"], false);
    let (trace, _) = run_traced(dir.path(), &program, &[]);
    let info = run_ok(hookprof().arg("info").arg(&trace));
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(
        info.contains("(means of 255 hook pairs timed at start), ")
            && info.contains(" per 64 counted calls of a throttled function; reports subtract it"),
        "{info}"
    );
    let report = |extra: &[&str]| {
        let out = run_ok(
            hookprof()
                .arg("report")
                .arg(&trace)
                .arg("--format=csv")
                .args(extra),
        );
        parse_report_csv(&String::from_utf8_lossy(&out.stdout))
    };
    let (compensated, raw) = (report(&[]), report(&["--no-compensation"]));
    assert_eq!(compensated.len(), raw.len());
    let total = |rows: &[Row]| rows.iter().map(|r| r.exclusive_ns).sum::<f64>();
    for c in &compensated {
        let r = raw.iter().find(|r| r.function == c.function).unwrap();
        assert_eq!(c.calls, r.calls, "{}", c.function);
        assert!(c.inclusive_ns <= r.inclusive_ns, "{c:?} vs raw {r:?}");
        assert!(c.exclusive_ns <= r.exclusive_ns, "{c:?} vs raw {r:?}");
    }
    // 2174 call pairs: the hooks' time is a visible part of this call-dense program.
    assert!(
        total(&compensated) < total(&raw),
        "{compensated:?}\n{raw:?}"
    );
    let summary = |extra: &[&str]| {
        let out = run_ok(
            hookprof()
                .arg("report")
                .arg(&trace)
                .arg("--format=json")
                .args(extra),
        );
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        json["summary"]["hook_time_subtracted_ns"].clone()
    };
    assert!(summary(&[]).is_array(), "{}", summary(&[]));
    assert!(summary(&["--no-compensation"]).is_null());

    // Buffers of 512 records: the 4348 records fill 8 of them, each written from inside the
    // hook that found it full, each with a PAUSE chunk that info counts.
    let small = dir.path().join("small.hktrace");
    run_ok(
        std::process::Command::new(&program)
            .current_dir(dir.path())
            .env("HOOKCC_OUTPUT", &small)
            .env("HOOKCC_BUFFER_RECORDS", "512")
            .env("HOOKCC_THROTTLE", "0"),
    );
    let info = run_ok(hookprof().arg("info").arg(&small));
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(
        info.contains("buffer writes:     8 from inside hooks, ")
            && info.contains(" in all (taken out of the times)"),
        "{info}"
    );
}

/// Issue 24, `--trace-clock=serialized`: the runtime linked into the program reads the clock
/// after an `lfence` in both hooks (the default read has none), and the trace it writes is a
/// trace like any other: the same calls, its OVERHEAD chunk measured with that read.
#[cfg(target_arch = "x86_64")]
#[test]
fn trace_clock_serialized_puts_lfence_before_the_hooks_clock_read() {
    let dir = tempfile::tempdir().unwrap();
    let hook_code = |program: &Path, hook: &str| -> String {
        let out = run_ok(
            std::process::Command::new("llvm-objdump-19")
                .arg("-d")
                .arg(format!("--disassemble-symbols={hook}"))
                .arg(program),
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let serialized = build_traced(
        dir.path(),
        "calls_serialized",
        &["calls.c"],
        &["-O1", "--trace-clock=serialized"],
        false,
    );
    let fast = build_traced(dir.path(), "calls_fast", &["calls.c"], &["-O1"], false);
    for hook in ["__hookcc_enter", "__hookcc_exit"] {
        let code = hook_code(&serialized, hook);
        let lfence = code
            .find("lfence")
            .unwrap_or_else(|| panic!("{hook}: {code}"));
        let rdtsc = code
            .find("rdtsc")
            .unwrap_or_else(|| panic!("{hook}: {code}"));
        assert!(lfence < rdtsc, "{hook}: {code}");
        let code = hook_code(&fast, hook);
        assert!(
            code.contains("rdtsc") && !code.contains("lfence"),
            "{hook}: {code}"
        );
    }
    let report = |program: &Path| {
        let (trace, _) = run_traced(dir.path(), program, &[]);
        let out = run_ok(hookprof().arg("report").arg(&trace).arg("--format=csv"));
        let mut calls: Vec<(String, u64)> = parse_report_csv(&String::from_utf8_lossy(&out.stdout))
            .into_iter()
            .map(|r| (r.function, r.calls))
            .collect();
        calls.sort();
        let info = run_ok(hookprof().arg("info").arg(&trace));
        (calls, String::from_utf8_lossy(&info.stdout).into_owned())
    };
    let ((serialized_calls, info), (fast_calls, _)) = (report(&serialized), report(&fast));
    assert_eq!(serialized_calls, fast_calls);
    assert!(
        info.contains("(means of 255 hook pairs timed at start)"),
        "{info}"
    );
}

/// The PACKED encoding is lossless: one run's records, written as 16-byte records
/// (`HOOKCC_PACK=0`) and packed afterwards by the runtime's own encoder (runtime/test/
/// pack_trace.c includes trace_pack.h), give every report and view byte for byte. The program
/// has threads, recursion past the encoder's ring, 64 functions through pointers and a longjmp.
/// A run written packed by the runtime itself is exact too, at under 8 bytes a call pair.
#[test]
fn packed_records_give_the_same_reports_as_16_byte_records_of_the_same_run() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(d, "pack_mix", &["pack_mix.c"], &["-O1", "-pthread"], false);
    let root = workspace_root();
    run_ok(
        std::process::Command::new("clang-19")
            .args(["-O1", "-Wall", "-Werror", "-I"])
            .arg(root.join("runtime/src"))
            .arg(root.join("runtime/test/pack_trace.c"))
            .arg("-o")
            .arg(d.join("pack_trace")),
    );
    let raw = d.join("raw.hktrace");
    let out = run_ok(
        std::process::Command::new(&program)
            .current_dir(d)
            .env("HOOKCC_OUTPUT", &raw)
            .env("HOOKCC_PACK", "0"),
    );
    let printed = String::from_utf8_lossy(&out.stdout).into_owned();
    let packed = d.join("packed.hktrace");
    run_ok(
        std::process::Command::new(d.join("pack_trace"))
            .arg(&raw)
            .arg(&packed),
    );
    let (raw_len, packed_len) = (
        std::fs::metadata(&raw).unwrap().len(),
        std::fs::metadata(&packed).unwrap().len(),
    );
    assert!(
        packed_len * 5 < raw_len,
        "packed {packed_len} bytes, raw {raw_len}"
    );

    let view = |trace: &Path, args: &[&str], out_name: Option<&str>| -> Vec<u8> {
        let mut cmd = hookprof();
        cmd.args(&args[..1]).arg(trace).args(&args[1..]);
        match out_name {
            Some(name) => {
                let path = d.join(name);
                run_ok(cmd.arg("-o").arg(&path));
                std::fs::read(&path).unwrap()
            }
            None => run_ok(&mut cmd).stdout,
        }
    };
    let views: &[(&[&str], Option<&str>)] = &[
        (&["report"], None),
        (&["report", "--format=csv", "--per-thread"], None),
        (&["report", "--percentiles", "--callers"], None),
        (&["report", "--no-compensation", "--format=json"], None),
        (&["flame"], None),
        (&["replay"], None),
        (&["callgraph"], None),
        (&["timeline"], Some("t.json")),
        (&["timeline", "--format=perfetto"], Some("t.pftrace")),
        (&["speedscope"], Some("s.json")),
        (&["callgrind"], Some("callgrind.out")),
    ];
    for (args, out_name) in views {
        let a = view(&raw, args, *out_name);
        let b = view(&packed, args, *out_name);
        assert!(!a.is_empty(), "{args:?} printed nothing");
        assert!(
            a == b,
            "{args:?} differs between the raw and the packed records of one run:\n{}\n---\n{}",
            String::from_utf8_lossy(&a),
            String::from_utf8_lossy(&b)
        );
    }

    // The runtime's own packed trace of another run: exact counts, under 8 bytes a pair.
    let (trace, stdout) = run_traced(d, &program, &[]);
    assert_eq!(stdout, printed);
    let counts = call_counts(&trace, &[]);
    expect_counts(
        &counts,
        &[
            ("main", 1),
            ("worker", 4),
            ("deep", 4 * 701),
            ("thrower", 5),
            ("catcher", 1),
        ],
        "pack_mix",
    );
    let leaves: u64 = counts
        .iter()
        .filter(|(name, _)| name.starts_with("leaf"))
        .map(|(_, calls)| calls)
        .sum();
    assert_eq!(leaves, 2000 * (1 + 2 + 3 + 4));
    let info =
        String::from_utf8_lossy(&run_ok(hookprof().arg("info").arg(&trace)).stdout).into_owned();
    let per_pair: f64 = info
        .lines()
        .find_map(|l| l.strip_prefix("size:"))
        .and_then(|l| l.split(": ").nth(1))
        .and_then(|l| l.split(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no bytes per call pair in:\n{info}"));
    assert!(per_pair < 8.0, "{per_pair} bytes per call pair:\n{info}");
    assert!(info.contains("chunks match; the header matches"), "{info}");
    assert!(!info.contains("NOT"), "{info}");
}

/// Issue 23, the flight recorder: under HOOKCC_MODE=ring nothing is written until a snapshot
/// (SIGUSR2, hookcc_trace_snapshot(), exit); each writes what every thread's ring holds since
/// the one before. A ring large enough for everything gives every call, exactly; a small one
/// the last calls of each window, with what fell out counted, not reported as errors.
#[test]
fn the_ring_holds_the_last_calls_and_every_snapshot_writes_them() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(d, "ring", &["ring.c"], &["-O1"], false);
    let run = |name: &str, ring_bytes: &str| -> (PathBuf, String) {
        let trace = d.join(name);
        let out = run_ok(
            std::process::Command::new(&program)
                .current_dir(d)
                .env("HOOKCC_OUTPUT", &trace)
                .env("HOOKCC_MODE", "ring")
                .env("HOOKCC_RING_BYTES", ring_bytes),
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1498500");
        (trace, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let info = |trace: &Path| {
        String::from_utf8_lossy(&run_ok(hookprof().arg("info").arg(trace)).stdout).into_owned()
    };

    // 1 MiB rings: three windows (SIGUSR2, the API, exit), nothing dropped, every call there.
    let (big, _) = run("big.hktrace", "1M");
    expect_counts(
        &call_counts(&big, &[]),
        &[("main", 1), ("round_of", 3), ("work", 3000)],
        "ring of 1 MiB",
    );
    let text = info(&big);
    assert!(
        text.contains(
            "ring:              3 windows (HOOKCC_MODE=ring snapshots), 0 records dropped"
        ),
        "{text}"
    );
    assert!(text.contains("unmatched exits:   0"), "{text}");

    // 1 KiB rings (64 records): each window holds the last 64 records before its snapshot.
    let (small, _) = run("small.hktrace", "1K");
    let text = info(&small);
    assert!(
        text.contains("records:           192"),
        "three windows of 64 records:\n{text}"
    );
    assert!(text.contains("ring:              3 windows"), "{text}");
    assert!(text.contains("unmatched exits:   0"), "{text}");
    let report = String::from_utf8_lossy(
        &run_ok(hookprof().arg("report").arg(&small).args(["--format=csv"])).stdout,
    )
    .into_owned();
    let counts: BTreeMap<String, u64> = parse_report_csv(&report)
        .into_iter()
        .map(|r| (r.function, r.calls))
        .collect();
    // 64 records per window: about 32 calls of work() each, all complete ones in the profile.
    let work = counts.get("work").copied().unwrap_or(0);
    assert!(
        (90..=96).contains(&work),
        "work() calls in three 64-record windows: {counts:?}"
    );
    let out = run_ok(hookprof().arg("report").arg(&small));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("unmatched"),
        "a ring's cut frames are not errors: {stderr}"
    );
}

/// Issue 23, the profile mode: under HOOKCC_MODE=profile each thread's records are folded into a
/// calling-context tree, written instead of them. Folded by the runtime's own code
/// (trace_cct.h, through pack_trace --profile), one run's records give the trace's reports byte
/// for byte in raw times, and within the hooks' compensation in compensated ones. A real
/// profile-mode run of a program with threads and a snapshot gives exact counts, in a file
/// that hardly grows when the run is twenty times longer; views of calls in time order refuse
/// it, saying why.
#[test]
fn the_profile_mode_gives_the_traces_report_in_a_file_that_does_not_grow() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let root = workspace_root();

    // The same run's records, as a trace and folded.
    let mix = build_traced(d, "pack_mix", &["pack_mix.c"], &["-O1", "-pthread"], false);
    run_ok(
        std::process::Command::new("clang-19")
            .args(["-O1", "-Wall", "-Werror", "-I"])
            .arg(root.join("runtime/src"))
            .arg(root.join("runtime/test/pack_trace.c"))
            .arg("-o")
            .arg(d.join("pack_trace")),
    );
    let raw = d.join("raw.hktrace");
    // Without context switches and samples: a tree has no times to split into on-CPU and
    // off-CPU, nor samples, so the trace's report would have seven columns more (the off-CPU
    // split and the samples are tested on their own).
    run_ok(
        std::process::Command::new(&mix)
            .current_dir(d)
            .env("HOOKCC_OUTPUT", &raw)
            .env("HOOKCC_PACK", "0")
            .env("HOOKCC_SWITCHES", "0")
            .env("HOOKCC_SAMPLE_HZ", "0"),
    );
    let folded = d.join("folded.hktrace");
    run_ok(
        std::process::Command::new(d.join("pack_trace"))
            .arg("--profile")
            .arg(&raw)
            .arg(&folded),
    );
    let view = |trace: &Path, args: &[&str]| -> Vec<u8> {
        run_ok(hookprof().arg(args[0]).arg(trace).args(&args[1..])).stdout
    };
    for args in [
        &["report", "--no-compensation"][..],
        &[
            "report",
            "--no-compensation",
            "--format=csv",
            "--per-thread",
        ],
        &["report", "--no-compensation", "--callers"],
        &["report", "--no-compensation", "--format=json"],
        &["flame", "--no-compensation"],
        // Filters hide a tree's paths as they hide a trace's calls: a hidden call's time stays
        // with the shown caller.
        &["flame", "--no-compensation", "--exclude=leaf1*"],
        &[
            "flame",
            "--no-compensation",
            "--function=worker",
            "--depth=2",
        ],
    ] {
        // The text's summary says why each lacks switches and samples, in its own words (a
        // short run has none; a profile records none): everything else is the same.
        let without_why = |bytes: Vec<u8>| -> Vec<u8> {
            if args.iter().any(|a| a.starts_with("--format")) || args[0] != "report" {
                return bytes;
            }
            // (with the lines it is broken into: the later ones indented)
            let mut dropping = false;
            String::from_utf8_lossy(&bytes)
                .lines()
                .filter(|l| {
                    dropping = l.starts_with("no on/off-CPU or sampled columns: ")
                        || (dropping && l.starts_with("  "));
                    !dropping
                })
                .map(|l| l.trim_end_matches(',').to_string() + "\n")
                .collect::<String>()
                .into_bytes()
        };
        let (a, b) = (
            without_why(view(&raw, args)),
            without_why(view(&folded, args)),
        );
        assert!(!a.is_empty(), "{args:?} printed nothing");
        assert!(
            a == b,
            "{args:?} differs between the trace and the tree of one run:\n{}\n---\n{}",
            String::from_utf8_lossy(&a),
            String::from_utf8_lossy(&b)
        );
    }
    let cg = |trace: &Path, name: &str| {
        let out = d.join(name);
        run_ok(
            hookprof()
                .arg("callgrind")
                .arg(trace)
                .arg("--no-compensation")
                .arg("-o")
                .arg(&out),
        );
        std::fs::read_to_string(&out).unwrap()
    };
    // The same, but for the numbers callgrind's name compression gives functions in the
    // order it meets them (a trace's order of calls, a tree's order of call paths).
    let without_ids = |text: String| -> String {
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("=(") {
            out.push_str(&rest[..at + 1]);
            rest = &rest[at + 1..];
            let close = rest.find(") ").map_or(0, |c| c + 2);
            rest = &rest[close..];
        }
        out + rest
    };
    assert_eq!(
        without_ids(cg(&raw, "a.callgrind")),
        without_ids(cg(&folded, "b.callgrind"))
    );
    // Compensated: the tree subtracts the hooks' time per call path, the trace per gap between
    // records (never below zero): the same counts, times within a hook pair per call.
    let rows = |trace: &Path| -> BTreeMap<String, (u64, f64, f64)> {
        let csv = view(trace, &["report", "--format=csv"]);
        parse_report_csv(&String::from_utf8_lossy(&csv))
            .into_iter()
            .map(|r| (r.function, (r.calls, r.inclusive_ns, r.exclusive_ns)))
            .collect()
    };
    let (a, b) = (rows(&raw), rows(&folded));
    let uncompensated: BTreeMap<String, (u64, f64, f64)> =
        parse_report_csv(&String::from_utf8_lossy(&view(
            &raw,
            &["report", "--format=csv", "--no-compensation"],
        )))
        .into_iter()
        .map(|r| (r.function, (r.calls, r.inclusive_ns, r.exclusive_ns)))
        .collect();
    assert_eq!(
        a.keys().collect::<Vec<_>>(),
        b.keys().collect::<Vec<_>>(),
        "the same functions"
    );
    let info =
        String::from_utf8_lossy(&run_ok(hookprof().arg("info").arg(&raw)).stdout).into_owned();
    let pair_ns: f64 = info
        .lines()
        .find_map(|l| l.strip_prefix("hook overhead:"))
        .map(|l| {
            l.split(" ns")
                .filter_map(|p| p.rsplit(' ').next()?.parse::<f64>().ok())
                .take(2)
                .sum()
        })
        .unwrap_or_else(|| panic!("no hook overhead in:\n{info}"));
    for (function, (calls, incl, excl)) in &a {
        let (calls_b, incl_b, excl_b) = b[function];
        assert_eq!(*calls, calls_b, "calls of {function}");
        // The trace's compensation never shortens a gap below zero, which the tree's, from
        // sums, cannot know: they may differ by half of what the trace's subtracts.
        let (_, raw_incl, raw_excl) = uncompensated[function];
        for (what, x, y, raw) in [
            ("inclusive", *incl, incl_b, raw_incl),
            ("exclusive", *excl, excl_b, raw_excl),
        ] {
            let slack = 0.02 * x.max(y) + (*calls as f64 + 2.0) * pair_ns * 2.0 + (raw - x) / 2.0;
            assert!(
                (x - y).abs() <= slack,
                "{function} {what}: trace {x} ns, tree {y} ns, raw {raw} ns (slack {slack})"
            );
        }
    }

    // A real profile-mode run: exact counts, with a snapshot halfway (SIGUSR2), whose trees
    // the ones written at exit replace.
    let program = build_traced(
        d,
        "profile_loop",
        &["profile_loop.c"],
        &["-O1", "-pthread"],
        false,
    );
    let run = |rounds: u64, mode: &str| -> PathBuf {
        let trace = d.join(format!("{mode}{rounds}.hktrace"));
        let mut cmd = std::process::Command::new(&program);
        cmd.arg(rounds.to_string())
            .current_dir(d)
            .env("HOOKCC_OUTPUT", &trace)
            .env("HOOKCC_MODE", mode)
            // Every call recorded: the trace's size is what the profile is compared with.
            .env("HOOKCC_THROTTLE", "0");
        if mode == "profile" {
            cmd.arg("snap");
        }
        run_ok(&mut cmd);
        trace
    };
    let expected = |rounds: u64| {
        vec![
            ("main", 1),
            ("worker", 3),
            ("round_of", 4 * rounds),
            ("middle", 4 * rounds),
            ("leaf", 8 * rounds),
            ("fib", 4 * rounds / 10 * 177),
        ]
    };
    let small = run(1000, "profile");
    expect_counts(
        &call_counts(&small, &[]),
        &expected(1000),
        "profile, 1000 rounds",
    );
    let big = run(20000, "profile");
    expect_counts(
        &call_counts(&big, &[]),
        &expected(20000),
        "profile, 20000 rounds",
    );
    assert_balanced(&big);
    let text =
        String::from_utf8_lossy(&run_ok(hookprof().arg("info").arg(&big)).stdout).into_owned();
    assert!(text.contains("format:            version 5"), "{text}");
    assert!(text.contains("PROFILE chunks"), "{text}");
    assert!(text.contains("chunks match; the header matches"), "{text}");
    let trace_big = run(20000, "trace");
    expect_counts(
        &call_counts(&trace_big, &[]),
        &expected(20000),
        "trace, 20000 rounds",
    );
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    assert!(
        size(&big) < 2 * size(&small) && size(&trace_big) > 500 * size(&big),
        "a 20× longer run: profile {} bytes (from {}), its trace {} bytes",
        size(&big),
        size(&small),
        size(&trace_big)
    );

    // Views of calls in time order say why they cannot show it; the others read it.
    let out = hookprof()
        .arg("timeline")
        .arg(&big)
        .arg("-o")
        .arg(d.join("t.json"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && stderr.contains("a call-path profile (HOOKCC_MODE=profile)")
            && stderr.contains("profile20000.hktrace"),
        "{stderr}"
    );
    assert!(
        !d.join("t.json").exists(),
        "nothing written for a refused view"
    );
    // Raw times: compensated, leaf()'s few ticks can come to 0, and a flame graph leaves out
    // stacks of no time.
    let flame = String::from_utf8_lossy(&view(&big, &["flame", "--no-compensation"])).into_owned();
    assert!(
        flame
            .lines()
            .any(|l| l.starts_with("main;round_of;middle;leaf ")),
        "{flame}"
    );
}

/// Issue 23, the duration threshold: under HOOKCC_MIN_DURATION a trace keeps only the records
/// of calls at least that long (a call is taken back when it returns, as XRay's FDR mode does),
/// and every call goes into the threads' trees, from which the report reads: its counts and
/// totals are those of the whole trace. Applied to one run's records by the runtime's own code
/// (pack_trace --min-duration), the report is the trace's byte for byte in raw times; a real
/// run gives exact counts in a file a fraction of the trace's, whose timeline shows the long
/// calls.
#[test]
fn the_duration_threshold_keeps_the_long_calls_and_the_whole_report() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let root = workspace_root();
    let mix = build_traced(d, "pack_mix", &["pack_mix.c"], &["-O1", "-pthread"], false);
    run_ok(
        std::process::Command::new("clang-19")
            .args(["-O1", "-Wall", "-Werror", "-I"])
            .arg(root.join("runtime/src"))
            .arg(root.join("runtime/test/pack_trace.c"))
            .arg("-o")
            .arg(d.join("pack_trace")),
    );
    let raw = d.join("raw.hktrace");
    // Without context switches and samples: a tree has no times to split into on-CPU and
    // off-CPU, nor samples, so the trace's report would have seven columns more (the off-CPU
    // split and the samples are tested on their own).
    run_ok(
        std::process::Command::new(&mix)
            .current_dir(d)
            .env("HOOKCC_OUTPUT", &raw)
            .env("HOOKCC_PACK", "0")
            .env("HOOKCC_SWITCHES", "0")
            .env("HOOKCC_SAMPLE_HZ", "0"),
    );
    let kept = d.join("kept.hktrace");
    run_ok(
        std::process::Command::new(d.join("pack_trace"))
            .args(["--min-duration", "3000"])
            .arg(&raw)
            .arg(&kept),
    );
    let out = |trace: &Path, args: &[&str]| -> String {
        String::from_utf8_lossy(&run_ok(hookprof().arg(args[0]).arg(trace).args(&args[1..])).stdout)
            .into_owned()
    };
    for args in [
        &[
            "report",
            "--no-compensation",
            "--format=csv",
            "--per-thread",
        ][..],
        &["flame", "--no-compensation"],
    ] {
        assert_eq!(out(&raw, args), out(&kept, args), "{args:?}");
    }
    // The text reports' last line says what the records leave out.
    for args in [
        &["report", "--no-compensation"][..],
        &["report", "--no-compensation", "--callers"],
    ] {
        let (a, b) = (out(&raw, args), out(&kept, args));
        let (a_rows, _) = a.split_once("\nthreads: ").unwrap();
        let (b_rows, b_summary) = b.split_once("\nthreads: ").unwrap();
        assert_eq!(a_rows, b_rows, "{args:?}");
        assert!(
            b_summary.contains("calls under")
                && b_summary.contains("left out of the trace's records"),
            "{b_summary}"
        );
    }
    let info = out(&kept, &["info"]);
    assert!(
        info.contains("min duration:      HOOKCC_MIN_DURATION: "),
        "{info}"
    );
    assert!(info.contains("chunks match; the header matches"), "{info}");

    // A real run: every call counted, the records of the long ones only.
    let program = build_traced(
        d,
        "profile_loop",
        &["profile_loop.c"],
        &["-O1", "-pthread"],
        false,
    );
    let run = |name: &str, min: Option<&str>| -> PathBuf {
        let trace = d.join(name);
        let mut cmd = std::process::Command::new(&program);
        cmd.arg("20000").current_dir(d).env("HOOKCC_OUTPUT", &trace);
        if let Some(min) = min {
            cmd.env("HOOKCC_MIN_DURATION", min);
        }
        run_ok(&mut cmd);
        trace
    };
    let full = run("full.hktrace", None);
    let short = run("short.hktrace", Some("5us"));
    let expected = [
        ("main", 1),
        ("worker", 3),
        ("round_of", 80000),
        ("middle", 80000),
        ("leaf", 160000),
        ("fib", 8000 * 177),
    ];
    expect_counts(
        &call_counts(&short, &[]),
        &expected,
        "HOOKCC_MIN_DURATION=5us",
    );
    expect_counts(&call_counts(&full, &[]), &expected, "the whole trace");
    assert_balanced(&short);
    let size = |p: &Path| std::fs::metadata(p).unwrap().len();
    assert!(
        size(&short) * 4 < size(&full),
        "{} bytes with the threshold, {} without",
        size(&short),
        size(&full)
    );
    // The timeline: leaf() takes nanoseconds, so only the calls a buffer's end cut (or a
    // preemption lengthened) are there; main and the workers are.
    let json = d.join("short.json");
    run_ok(hookprof().arg("timeline").arg(&short).arg("-o").arg(&json));
    let text = std::fs::read_to_string(&json).unwrap();
    let begins = |name: &str| {
        text.lines()
            .filter(|l| l.contains("\"ph\":\"B\"") && l.contains(&format!("\"name\":\"{name}\"")))
            .count()
    };
    assert!(
        begins("leaf") < 2000,
        "{} leaf calls in the timeline",
        begins("leaf")
    );
    assert_eq!(begins("main"), 1);
    assert_eq!(begins("worker"), 3);
}

/// Issue 34, one duration syntax: HOOKCC_MIN_DURATION takes what hookprof's `--min-duration`
/// takes (a number with its unit, a fraction allowed; `0` alone), and a bare number is refused
/// with the units to choose from, as hookprof refuses it.
#[test]
fn the_runtimes_duration_is_hookprofs_syntax() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(
        d,
        "profile_loop",
        &["profile_loop.c"],
        &["-O1", "-pthread"],
        false,
    );
    let run = |name: &str, min: &str| -> (String, String) {
        let trace = d.join(name);
        let out = run_ok(
            std::process::Command::new(&program)
                .arg("200")
                .current_dir(d)
                .env("HOOKCC_OUTPUT", &trace)
                .env("HOOKCC_MIN_DURATION", min),
        );
        let info = run_ok(hookprof().arg("info").arg(&trace));
        (
            String::from_utf8_lossy(&out.stderr).into_owned(),
            String::from_utf8_lossy(&info.stdout).into_owned(),
        )
    };
    let (stderr, info) = run("bare.hktrace", "5");
    assert!(
        stderr.contains("HOOKCC_MIN_DURATION '5': a number needs its unit: 5ns, 5us, 5ms or 5s"),
        "{stderr}"
    );
    assert!(!info.contains("HOOKCC_MIN_DURATION:"), "{info}");
    let (stderr, info) = run("fraction.hktrace", "1.5us");
    assert!(!stderr.contains("HOOKCC_MIN_DURATION"), "{stderr}");
    assert!(
        info.contains("HOOKCC_MIN_DURATION: ") && info.contains("calls under 1500 ns"),
        "{info}"
    );
    let (stderr, info) = run("zero.hktrace", "0");
    assert!(!stderr.contains("HOOKCC_MIN_DURATION"), "{stderr}");
    assert!(!info.contains("HOOKCC_MIN_DURATION:"), "{info}");
    let (stderr, _) = run("garbage.hktrace", "5 parsecs");
    assert!(stderr.contains("not a duration"), "{stderr}");
}

/// Issue 23, triggers: `hookcc --trace --trace-start=F` builds the window into the program; the
/// trace then holds only the calls made from an entry of F to its return (per thread, every
/// time), in every recording mode, and HOOKCC_TRACE_START / HOOKCC_TRACE_STOP change it at run
/// time (`none`: everything).
#[test]
fn triggers_record_only_inside_their_windows() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(
        d,
        "profile_loop",
        &["profile_loop.c"],
        &["-O1", "-pthread", "--trace-start=middle"],
        false,
    );
    let run = |name: &str, env: &[(&str, &str)]| -> (PathBuf, String) {
        let trace = d.join(name);
        let mut cmd = std::process::Command::new(&program);
        cmd.arg("1000").current_dir(d).env("HOOKCC_OUTPUT", &trace);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = run_ok(&mut cmd);
        (trace, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let only = |trace: &Path, expected: &[(&str, u64)], context: &str| {
        let counts = call_counts(trace, &[]);
        let want: BTreeMap<String, u64> =
            expected.iter().map(|(f, c)| (f.to_string(), *c)).collect();
        assert_eq!(counts, want, "{context}");
    };
    // Built in: middle's calls and what they call, in each mode.
    let middle = [("middle", 4000), ("leaf", 8000)];
    for mode in ["trace", "ring", "profile"] {
        let (trace, _) = run(&format!("{mode}.hktrace"), &[("HOOKCC_MODE", mode)]);
        only(&trace, &middle, mode);
        assert_balanced(&trace);
    }
    let (trace, _) = run("short.hktrace", &[("HOOKCC_MIN_DURATION", "1ms")]);
    only(&trace, &middle, "with HOOKCC_MIN_DURATION");
    // At run time: another function; a start and a stop (main's window ends where the first
    // fib(10) returns: round_of(0)'s calls, main and round_of left open); everything.
    let (trace, _) = run("fib.hktrace", &[("HOOKCC_TRACE_START", "fib")]);
    only(&trace, &[("fib", 400 * 177)], "HOOKCC_TRACE_START=fib");
    let (trace, _) = run(
        "stop.hktrace",
        &[("HOOKCC_TRACE_START", "main"), ("HOOKCC_TRACE_STOP", "fib")],
    );
    only(
        &trace,
        &[
            ("main", 1),
            ("round_of", 1),
            ("middle", 1),
            ("leaf", 2),
            ("fib", 177),
        ],
        "HOOKCC_TRACE_START=main HOOKCC_TRACE_STOP=fib",
    );
    let info =
        String::from_utf8_lossy(&run_ok(hookprof().arg("info").arg(&trace)).stdout).into_owned();
    assert!(info.contains("closed at end:     2"), "{info}");
    let (trace, _) = run("all.hktrace", &[("HOOKCC_TRACE_START", "none")]);
    expect_counts(
        &call_counts(&trace, &[]),
        &[
            ("main", 1),
            ("worker", 3),
            ("middle", 4000),
            ("fib", 400 * 177),
        ],
        "HOOKCC_TRACE_START=none",
    );
    // A name that is no function of the program: said, and the built-in window is not used.
    let (trace, stderr) = run("typo.hktrace", &[("HOOKCC_TRACE_START", "midle")]);
    assert!(
        stderr.contains("HOOKCC_TRACE_START 'midle': no such function"),
        "{stderr}"
    );
    expect_counts(&call_counts(&trace, &[]), &[("main", 1)], "a typo");

    // The options are checked where they are given.
    let out = hookcc(d, false)
        .args(["--trace-start=fib", "-c"])
        .arg(program_source("profile_loop.c"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("they need --trace"),
        "{stderr}"
    );
}

/// Issue 27 item 6: `static int helper()` in two translation units are two rows the text and CSV
/// reports tell apart, by the file the symbol table's `STT_FILE` symbols give, and by the
/// symbol's address (as `nm` shows it) where the files have one name (one source file built
/// twice). Names that do not collide are unchanged, and `--callers` uses the same labels.
#[test]
fn same_named_static_functions_are_told_apart() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(
        d,
        "statics",
        &["static_one.c", "static_two.c", "static_main.c"],
        &["-O1"],
        false,
    );
    let (trace, _) = run_traced(d, &program, &[]);
    let counts = call_counts(&trace, &[]);
    expect_counts(
        &counts,
        &[
            ("helper (static_one.c)", 3),
            ("helper (static_two.c)", 5),
            ("one", 1),
            ("two", 1),
            ("main", 1),
        ],
        "two files",
    );
    assert!(!counts.contains_key("helper"), "{counts:#?}");
    let text = run_ok(hookprof().arg("report").arg(&trace).arg("--callers"));
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("helper (static_one.c)  <- one×3")
            && text.contains("helper (static_two.c)  <- two×5"),
        "{text}"
    );

    // One source file (static_two.c) built twice: the same STT_FILE name, told apart by address.
    let object = |name: &str, defines: &[&str]| {
        run_ok(
            hookcc(d, false)
                .args(["--trace", "-O1", "-c"])
                .args(defines)
                .arg(program_source("static_two.c"))
                .arg("-o")
                .arg(name),
        );
    };
    object("two.o", &[]);
    object("three.o", &["-DTWO_NAME=three"]);
    run_ok(
        hookcc(d, false)
            .args(["--trace", "-O1", "-DWITH_THREE"])
            .arg(program_source("static_one.c"))
            .arg(program_source("static_main.c"))
            .args(["two.o", "three.o", "-o", "statics3"]),
    );
    let (trace, _) = run_traced(d, &d.join("statics3"), &[]);
    let nm = run_ok(std::process::Command::new("nm").arg(d.join("statics3")));
    let helpers: Vec<u64> = String::from_utf8_lossy(&nm.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3 && f[2] == "helper").then(|| u64::from_str_radix(f[0], 16).unwrap())
        })
        .collect();
    assert_eq!(helpers.len(), 3, "{}", String::from_utf8_lossy(&nm.stdout));
    let counts = call_counts(&trace, &[]);
    let by_address: BTreeMap<u64, u64> = counts
        .iter()
        .filter_map(|(f, &calls)| {
            let address = f.strip_prefix("helper@0x")?;
            Some((u64::from_str_radix(address, 16).unwrap(), calls))
        })
        .collect();
    assert_eq!(counts.get("helper (static_one.c)"), Some(&3), "{counts:#?}");
    let mut calls: Vec<u64> = by_address.values().copied().collect();
    calls.sort();
    assert_eq!(calls, [5, 7], "{counts:#?}");
    assert!(
        by_address.keys().all(|a| helpers.contains(a)),
        "labels {by_address:?}, nm {helpers:x?}"
    );
}

/// Issue 23, the trigger table at run time: the program adds a start function with
/// `hookcc_trace_trigger()` and empties the table with `hookcc_trace_triggers_clear()`; the
/// records follow, from the call on (the calling thread's buffer is written first). A debugger
/// writes the same table (`hookcc_trace_triggers`, exported).
#[test]
fn the_program_changes_the_trigger_table_while_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(d, "trigger_api", &["trigger_api.c"], &["-O1"], false);
    let (trace, _) = run_traced(d, &program, &[]);
    // 100 rounds whole, 100 of middle() alone, 10 whole.
    let counts = call_counts(&trace, &[]);
    let want: BTreeMap<String, u64> = [
        ("main", 1),
        ("round_of", 110),
        ("middle", 210),
        ("leaf", 420),
        ("fib", 11 * 177),
    ]
    .iter()
    .map(|(f, c)| (f.to_string(), *c))
    .collect();
    assert_eq!(counts, want);
    assert_balanced(&trace);
    let nm = run_ok(std::process::Command::new("nm").arg(&program)).stdout;
    assert!(
        String::from_utf8_lossy(&nm)
            .lines()
            .any(|l| l.ends_with(" B hookcc_trace_triggers")),
        "the table is a global symbol a debugger finds"
    );
}

/// Issue 23, the flight recorder's rings out of a core file: a ring-mode program with two
/// threads hangs (it never writes a snapshot); `gcore` (gdb) takes its core (or, where gdb cannot
/// attach, tests/tools/write_core.py from /proc) and it is killed.
/// `hookprof core` follows the runtime's exported state through the core's memory and writes the
/// live thread's ring as a trace (the thread that ended wrote its own at its end); with a small
/// ring, the calls whose entries fell out are counted, not errors.
#[test]
fn a_ring_is_read_out_of_the_core_of_a_program_that_hung() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(
        d,
        "ring_hang",
        &["ring_hang.c"],
        &["-O1", "-pthread"],
        false,
    );
    let run = |name: &str, ring_bytes: &str| -> (PathBuf, PathBuf) {
        let trace = d.join(format!("{name}.hktrace"));
        let mut child = std::process::Command::new(&program)
            .current_dir(d)
            .env("HOOKCC_OUTPUT", &trace)
            .env("HOOKCC_MODE", "ring")
            .env("HOOKCC_RING_BYTES", ring_bytes)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "ready\n");
        // gdb's gcore, where it can attach; the suite under strace (test.sh --fresh) cannot,
        // and then tests/tools/write_core.py writes the core from /proc/PID/mem.
        let core = d.join(format!("{name}.core"));
        let gcore = std::process::Command::new("gdb-multiarch")
            .args(["-batch", "-nx", "-p", &child.id().to_string(), "-ex"])
            .arg(format!("gcore {}", core.display()))
            .output()
            .unwrap();
        if !core.is_file() {
            eprintln!(
                "gcore could not attach ({}): the core from /proc instead",
                String::from_utf8_lossy(&gcore.stderr).trim()
            );
            run_ok(
                std::process::Command::new("python3")
                    .arg(workspace_root().join("tests/tools/write_core.py"))
                    .arg(child.id().to_string())
                    .arg(&core),
            );
        }
        child.kill().unwrap();
        child.wait().unwrap();
        (trace, core)
    };

    let (trace, core) = run("big", "1M");
    let from_core = d.join("big.from-core.hktrace");
    let out = run_ok(
        hookprof()
            .arg("core")
            .arg(&program)
            .arg(&core)
            .arg("-o")
            .arg(&from_core),
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("records of 1 threads"), "{said}");
    let counts = call_counts(&from_core, &[]);
    expect_counts(
        &counts,
        &[("main", 1), ("outer", 7), ("work", 1000), ("hang", 1)],
        "the hung thread's ring, from the core",
    );
    let info = String::from_utf8_lossy(&run_ok(hookprof().arg("info").arg(&from_core)).stdout)
        .into_owned();
    assert!(
        info.contains("closed at end:     2"),
        "main and hang: {info}"
    );
    // The worker ended: its ring went to the file then (worker, 7 outer, 1000 work: 2016
    // records; the file has no clock, as the program was killed).
    let info =
        String::from_utf8_lossy(&run_ok(hookprof().arg("info").arg(&trace)).stdout).into_owned();
    assert!(
        info.contains(": 2016 records (1008 entries, 1008 exits)"),
        "{info}"
    );

    // 1 KiB rings: the last 64 records, the earlier ones counted as no longer in the ring.
    let (_, core) = run("small", "1K");
    let from_core = d.join("small.from-core.hktrace");
    let out = run_ok(
        hookprof()
            .arg("core")
            .arg(&program)
            .arg(&core)
            .arg("-o")
            .arg(&from_core),
    );
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("64 records of 1 threads"), "{said}");
    let report = run_ok(hookprof().arg("report").arg(&from_core));
    assert!(
        !String::from_utf8_lossy(&report.stderr).contains("unmatched"),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
    let work = call_counts(&from_core, &[])
        .get("work")
        .copied()
        .unwrap_or(0);
    assert!(
        (25..=32).contains(&work),
        "work calls in a 64-record ring: {work}"
    );

    // Not a core of this program: said so.
    let out = hookprof()
        .arg("core")
        .arg(&program)
        .arg(&program)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("not a core file"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CSV cell of the row of `function` (the report's header names the columns).
fn csv_cell(csv: &str, function: &str, column: &str) -> f64 {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().expect("CSV header").split(',').collect();
    let at = header
        .iter()
        .position(|c| *c == column)
        .unwrap_or_else(|| panic!("no column {column} in the report:\n{csv}"));
    let row = lines
        .find(|l| l.split(',').next() == Some(function))
        .unwrap_or_else(|| panic!("no row of {function} in the report:\n{csv}"));
    row.split(',').nth(at).unwrap().parse().unwrap()
}

/// The number after `label ` in the program's line, e.g. `waited 200.4 ms`.
fn printed_ms(stdout: &str, label: &str) -> f64 {
    let rest = &stdout[stdout
        .find(label)
        .unwrap_or_else(|| panic!("{label}: {stdout}"))
        + label.len()..];
    rest.trim_start()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// `hookprof report TRACE ARGS…`: its standard output.
fn report_of(trace: &Path, args: &[&str]) -> String {
    String::from_utf8_lossy(&run_ok(hookprof().arg("report").arg(trace).args(args)).stdout)
        .into_owned()
}

/// Where the kernel refuses the perf events, the runtime said so on `stderr`: checks it said
/// so once, prints that `figures` are skipped for the refusal's checks, and returns true.
fn perf_refused(stderr: &str, figures: &str) -> bool {
    if !stderr.contains(SWITCHES_REFUSED) {
        return false;
    }
    eprintln!(
        "SKIPPED {figures}: this kernel refuses the perf events ({}); checking the refusal \
         instead",
        stderr.trim()
    );
    assert_eq!(
        stderr.matches(SWITCHES_REFUSED).count(),
        1,
        "said once: {stderr}"
    );
    true
}

/// A CSV report's rows are in order of exclusive time (its fourth column), largest first.
fn assert_exclusive_order(csv: &str) {
    let exclusive: Vec<f64> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').nth(3).unwrap().parse().unwrap())
        .collect();
    assert!(exclusive.windows(2).all(|w| w[0] >= w[1]), "{csv}");
}

/// Issue 24 item 4: a thread blocked in a futex (pthread_cond_wait until another thread
/// signals, 200 ms later) or in nanosleep shows that time as off-CPU time of the function
/// that blocked; a spinning function's on-CPU time is the CPU time the kernel counted for it.
/// Where the kernel refuses the perf events, the runtime says so once and the report keeps
/// its old columns.
#[test]
fn time_switched_out_is_off_cpu_time_of_the_function_that_blocked() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(
        dir.path(),
        "offcpu",
        &["offcpu.c"],
        &["-O1", "-pthread"],
        false,
    );
    let trace = dir.path().join("offcpu.hktrace");
    let out = run_ok(
        std::process::Command::new(&program)
            .current_dir(dir.path())
            .env("HOOKCC_OUTPUT", &trace),
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let csv = report_of(&trace, &["--format=csv"]);
    if perf_refused(&stderr, "the off-CPU figures") {
        assert!(
            csv.starts_with(
                "function,calls,inclusive_ns,exclusive_ns,min_ns,max_ns,avg_ns,percent\n"
            ),
            "no switches, no new columns:\n{csv}"
        );
        return;
    }
    assert!(stderr.is_empty(), "nothing on stderr: {stderr}");
    let ms = |function: &str, column: &str| csv_cell(&csv, function, column) / 1e6;
    for (function, label) in [
        ("wait_for_signal", "waited"),
        ("sleep_in_nanosleep", "slept"),
    ] {
        let real = printed_ms(&stdout, label);
        let (inclusive, offcpu) = (
            ms(function, "inclusive_ns"),
            ms(function, "inclusive_offcpu_ns"),
        );
        assert!(real >= 199.0, "{function} blocked {real} ms: {stdout}");
        // Off-CPU: all of the blocked time but the few µs around the system call.
        assert!(
            (offcpu - real).abs() <= real * 0.05 && offcpu <= inclusive,
            "{function}: {offcpu} ms off the CPU of {inclusive} ms, blocked {real} ms:\n{csv}"
        );
        assert_eq!(
            ms(function, "exclusive_offcpu_ns"),
            offcpu,
            "{function} has no callees: all of it exclusive:\n{csv}"
        );
        assert!(
            ms(function, "inclusive_oncpu_ns") < 5.0,
            "{function} ran under 5 ms:\n{csv}"
        );
    }
    // The spin's on-CPU time is the CPU time its thread got; the rest of its wall-clock time
    // (preemption on a busy machine) is off-CPU. Raw times: the kernel's CPU time includes
    // the hooks' own (2 million calls of now_ms), which compensation takes out.
    let raw = String::from_utf8_lossy(
        &run_ok(
            hookprof()
                .arg("report")
                .arg(&trace)
                .args(["--format=csv", "--no-compensation"]),
        )
        .stdout,
    )
    .into_owned();
    let raw_ms = |function: &str, column: &str| csv_cell(&raw, function, column) / 1e6;
    let (cpu, spun) = (
        printed_ms(&stdout, "on the CPU"),
        printed_ms(&stdout, "spun"),
    );
    let (oncpu, offcpu) = (
        raw_ms("spin", "inclusive_oncpu_ns"),
        raw_ms("spin", "inclusive_offcpu_ns"),
    );
    let csv = raw;
    assert!(
        (oncpu - cpu).abs() <= (cpu * 0.05).max(2.0),
        "spin: {oncpu} ms on the CPU in the report, {cpu} ms of CPU time by the kernel:\n{csv}"
    );
    assert!(
        (oncpu + offcpu - spun).abs() <= 2.0,
        "spin: on + off = its time {spun} ms:\n{csv}"
    );
    // main's own code never blocked for long; its inclusive off-CPU time holds its callees'.
    assert!(ms("main", "exclusive_offcpu_ns") < 20.0, "main:\n{csv}");
    assert!(
        ms("main", "inclusive_offcpu_ns")
            >= ms("wait_for_signal", "inclusive_offcpu_ns")
                + ms("sleep_in_nanosleep", "inclusive_offcpu_ns"),
        "main's inclusive off-CPU time holds its callees':\n{csv}"
    );
    // The same columns in the text and JSON formats, and the summary says how many switches.
    let text = report_of(&trace, &["--wide"]);
    assert!(
        text.contains("total off-CPU") && text.contains("context switches: "),
        "{text}"
    );
    let json: serde_json::Value = serde_json::from_slice(
        &run_ok(hookprof().arg("report").arg(&trace).arg("--format=json")).stdout,
    )
    .unwrap();
    let wait = json["functions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["function"] == "wait_for_signal")
        .expect("wait_for_signal in the JSON report");
    assert_eq!(
        wait["exclusive_offcpu_ns"].as_f64().unwrap() / 1e6,
        ms("wait_for_signal", "exclusive_offcpu_ns")
    );
    assert!(
        json["summary"]["context_switches"].as_u64().unwrap() >= 3,
        "{json}"
    );
    let info =
        String::from_utf8_lossy(&run_ok(hookprof().arg("info").arg(&trace)).stdout).into_owned();
    assert!(info.contains("context switches:"), "{info}");

    // HOOKCC_SWITCHES=0 HOOKCC_SAMPLE_HZ=0: no switches, no samples, and the report's
    // columns are the old ones.
    let quiet = dir.path().join("quiet.hktrace");
    let out = run_ok(
        std::process::Command::new(&program)
            .current_dir(dir.path())
            .env("HOOKCC_OUTPUT", &quiet)
            .env("HOOKCC_SWITCHES", "0")
            .env("HOOKCC_SAMPLE_HZ", "0"),
    );
    assert!(out.stderr.is_empty());
    let csv = String::from_utf8_lossy(
        &run_ok(hookprof().arg("report").arg(&quiet).arg("--format=csv")).stdout,
    )
    .into_owned();
    assert!(
        csv.starts_with("function,calls,inclusive_ns,exclusive_ns,min_ns,max_ns,avg_ns,percent\n"),
        "{csv}"
    );
}

/// Where the kernel refuses the perf events (here: `perf_event_open` made to fail with EACCES
/// by a preloaded `syscall`, as a perf_event_paranoid of 3 or a container's seccomp profile
/// would), the runtime says so once, for all the program's threads, naming the paranoia
/// level, and the trace and its report are as without switches.
#[test]
fn a_refused_perf_event_is_said_once_and_the_trace_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("noperf.c"),
        r#"#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <sys/syscall.h>
long syscall(long number, ...)
{
    va_list ap;
    va_start(ap, number);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (number == SYS_perf_event_open) {
        errno = EACCES;
        return -1;
    }
    long (*real)(long, ...) = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
"#,
    )
    .unwrap();
    run_ok(std::process::Command::new("clang-19").current_dir(d).args([
        "-shared",
        "-fPIC",
        "-O1",
        "noperf.c",
        "-o",
        "libnoperf.so",
        "-ldl",
    ]));
    let program = build_traced(d, "offcpu", &["offcpu.c"], &["-O1", "-pthread"], false);
    let trace = d.join("refused.hktrace");
    // Short waits: only the notice and the trace's shape matter here.
    let out = run_ok(
        std::process::Command::new(&program)
            .args(["20", "10"])
            .current_dir(d)
            .env("HOOKCC_OUTPUT", &trace)
            .env("LD_PRELOAD", d.join("libnoperf.so")),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.lines().count(),
        1,
        "one line for the program's two threads:\n{stderr}"
    );
    assert!(
        stderr.starts_with(SWITCHES_REFUSED)
            && stderr.contains("perf_event_open")
            && stderr.contains("Permission denied")
            && stderr.contains("/proc/sys/kernel/perf_event_paranoid is ")
            && stderr.contains("HOOKCC_SWITCHES=0"),
        "{stderr}"
    );
    let csv = String::from_utf8_lossy(
        &run_ok(hookprof().arg("report").arg(&trace).arg("--format=csv")).stdout,
    )
    .into_owned();
    assert!(
        csv.starts_with("function,calls,inclusive_ns,exclusive_ns,min_ns,max_ns,avg_ns,percent\n"),
        "{csv}"
    );
    assert_eq!(csv_cell(&csv, "wait_for_signal", "calls"), 1.0);
}

/// Issue 24 item 5: samples of the CPU time (SAMPLE chunks, on by default) give each function
/// a sampled self time that matches the CPU time the program measures for it, with libc's
/// code (memcpy) its caller's, the hooks' own time left out, and no samples while a function
/// sleeps; the report's default order is by sampled self time, in the text, CSV and JSON
/// formats. Where the kernel refuses perf events, the runtime says so once and the report has
/// no sampled columns.
#[test]
fn samples_give_functions_the_cpu_time_the_program_measured() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(dir.path(), "sampled", &["sampled.c"], &["-O1"], false);
    let trace = dir.path().join("sampled.hktrace");
    let out = run_ok(
        std::process::Command::new(&program)
            .current_dir(dir.path())
            .env("HOOKCC_OUTPUT", &trace)
            .env("HOOKCC_SWITCHES", "0"),
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let csv = report_of(&trace, &["--format=csv"]);
    if perf_refused(&stderr, "the sampled figures") {
        assert!(
            !csv.contains("sampled_self_ns"),
            "no samples, no columns:\n{csv}"
        );
        return;
    }
    assert!(stderr.is_empty(), "nothing on stderr: {stderr}");
    let ms = |function: &str, column: &str| csv_cell(&csv, function, column) / 1e6;
    // The default rate, 4 kHz: a sample every 0.25 ms of CPU time, so a few periods of
    // slack beside 5 % (the samples' own error is about 2 % at these counts).
    for function in ["spin", "copy"] {
        let cpu = printed_ms(&stdout, function);
        let sampled = ms(function, "sampled_self_ns");
        assert!(
            cpu > 20.0 && (sampled - cpu).abs() <= cpu * 0.05 + 0.5,
            "{function}: {sampled} ms sampled, {cpu} ms of CPU time by its thread's clock:\n{csv}"
        );
        assert!(
            ms(function, "sampled_total_ns") >= sampled,
            "{function}:\n{csv}"
        );
    }
    // Asleep, nap gets no samples: its time is all off the CPU.
    assert!(ms("nap", "inclusive_ns") >= 99.0, "{csv}");
    assert!(
        ms("nap", "sampled_total_ns") <= 0.5,
        "nap sampled while asleep:\n{csv}"
    );
    // main's sampled total holds its callees' samples; step's calls are mostly the hooks'
    // time, which the samples leave out and the summary counts.
    assert!(
        ms("main", "sampled_total_ns")
            >= ms("spin", "sampled_self_ns")
                + ms("copy", "sampled_self_ns")
                + ms("steps", "sampled_total_ns"),
        "{csv}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&report_of(&trace, &["--format=json"])).unwrap();
    let samples = &json["summary"]["samples"];
    assert!(
        samples["in_hooks"].as_u64().unwrap() > 0 && samples["period_ns"] == 250_000,
        "{json}"
    );
    let first = &json["functions"][0];
    assert_eq!(
        first["function"], "spin",
        "sampled self time first:\n{json}"
    );
    assert_eq!(
        first["sampled_self_ns"].as_f64().unwrap() / 1e6,
        ms("spin", "sampled_self_ns")
    );
    // The sampled self times add up to the samples in functions.
    let in_functions = samples["in_functions"].as_u64().unwrap() as f64 * 0.25;
    let sum: f64 = json["functions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["sampled_self_ns"].as_f64().unwrap() / 1e6)
        .sum();
    assert!(
        (sum - in_functions).abs() < 1e-6,
        "{sum} ms of {in_functions} ms:\n{json}"
    );
    // The rows in order of sampled self time: the heading says so, the first column is the
    // sampled share and the second the sampled time.
    let text = report_of(&trace, &[]);
    let lines: Vec<&str> = text.lines().collect();
    let columns = lines
        .iter()
        .position(|l| l.starts_with("sampled%  sampled"))
        .unwrap_or(lines.len() - 1);
    let first_row = lines.get(columns + 1).copied().unwrap_or_default();
    assert!(
        lines[0].starts_with("Sorted by sampled self time")
            && columns <= 2
            && first_row.ends_with(" spin")
            && words(&text).contains(" in the hooks, left out)"),
        "{text}"
    );
    // --sort=exclusive keeps the compensated order.
    assert_exclusive_order(&report_of(&trace, &["--format=csv", "--sort=exclusive"]));
    // At 1 kHz the run has a few hundred samples: too few to rank by, the report says so and
    // keeps the exclusive order.
    let sparse = dir.path().join("sparse.hktrace");
    run_ok(
        std::process::Command::new(&program)
            .current_dir(dir.path())
            .env("HOOKCC_OUTPUT", &sparse)
            .env("HOOKCC_SWITCHES", "0")
            .env("HOOKCC_SAMPLE_HZ", "1000"),
    );
    let text = report_of(&sparse, &[]);
    assert!(
        text.contains("one every 1.00 ms of CPU time")
            && text.starts_with("Sorted by self time.")
            && text.contains("too few to rank functions by (under 1000"),
        "{text}"
    );
    assert_exclusive_order(&report_of(&sparse, &["--format=csv"]));
}

/// Issue 34 item 1: the default report of a C++ program whose names are long templates
/// (libstdc++'s map and string), read at 100 and at 80 columns: each row on its own line,
/// the name last and shortened (`std::_Rb_tree<…>::…`), times in human units; `--full-names`
/// keeps the whole names.
#[test]
fn the_default_report_of_long_cpp_names_fits_100_columns() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(
        dir.path(),
        "names",
        &["libstdcxx_names.cpp"],
        &["-O0"],
        true,
    );
    let (trace, _) = run_traced(dir.path(), &program, &[]);
    let text = assert_report_fits(&trace, 100);
    assert!(
        text.contains("std::_Rb_tree<…>::") && text.lines().nth(1).unwrap().contains("per call"),
        "{text}"
    );
    assert_report_fits(&trace, 80);
    let full = String::from_utf8_lossy(
        &run_ok(hookprof().arg("report").arg(&trace).arg("--full-names")).stdout,
    )
    .into_owned();
    assert!(
        full.contains("std::_Rb_tree<std::__cxx11::basic_string<char"),
        "{full}"
    );
}

/// Issue 34: the README's example report is what the quick start prints today — examples/calc.c
/// built as scripts/demo.sh builds it (`hookcc --trace -O2`), run, reported with the
/// defaults: the same heading and column names, the same functions with the same calls, the
/// same first summary line (its counts are exact). Only the times differ from run to run.
#[test]
fn the_readme_example_report_is_the_quick_starts() {
    let readme = std::fs::read_to_string(workspace_root().join("README.md")).unwrap();
    let from = readme
        .find("The report (`scripts/demo.sh`'s")
        .expect("the README's example report");
    let block = readme[from..]
        .split("```")
        .nth(1)
        .unwrap()
        .trim_start_matches('\n');
    let dir = tempfile::tempdir().unwrap();
    run_ok(
        hookcc(dir.path(), false)
            .args(["--trace", "-O2"])
            .arg(workspace_root().join("examples/calc.c"))
            .args(["-o", "calc"]),
    );
    let (trace, _) = run_traced(dir.path(), &dir.path().join("calc"), &[]);
    let text = String::from_utf8_lossy(
        &run_ok(hookprof().arg("report").arg(&trace).env_remove("COLUMNS")).stdout,
    )
    .into_owned();
    let (ours, theirs): (Vec<&str>, Vec<&str>) = (block.lines().collect(), text.lines().collect());
    // "Sorted by self time. Times: wall clock, less the hooks' own (14 ns a call)."
    let heading = |l: &str| l.split(" (").next().unwrap().to_string();
    assert_eq!(
        heading(ours[0]),
        heading(theirs[0]),
        "README:\n{block}\nnow:\n{text}"
    );
    // The column names (their spacing follows the widest cell of the run).
    assert_eq!(
        words(ours[1]),
        words(theirs[1]),
        "README:\n{block}\nnow:\n{text}"
    );
    let rows = |lines: &[&str]| {
        let mut rows: Vec<(String, String)> = lines[2..]
            .iter()
            .take_while(|l| !l.starts_with("threads: "))
            .map(|l| {
                // A throttled function's mark says how many of its calls were timed: that
                // depends on when the writer saw them.
                let l = l.split(" [timed first ").next().unwrap();
                let cells: Vec<&str> = l.split_whitespace().collect();
                let n = cells.len();
                (cells[n - 1].to_string(), cells[n - 4].to_string())
            })
            .collect();
        rows.sort();
        rows
    };
    assert_eq!(rows(&ours), rows(&theirs), "README:\n{block}\nnow:\n{text}");
    // The first summary line but its records, fewer as a throttled function is counted
    // sooner or later.
    let summary = |lines: &[&str]| {
        let line = lines.iter().find(|l| l.starts_with("threads: ")).unwrap();
        line.split(", ")
            .filter(|item| !item.starts_with("records: "))
            .collect::<Vec<_>>()
            .join(", ")
    };
    assert_eq!(
        summary(&ours),
        summary(&theirs),
        "README:\n{block}\nnow:\n{text}"
    );
}

/// Issue 35 item 1: a switch per function, tested before its hooks are called. Switched off by
/// name at start (`HOOKCC_FUNCTIONS`: globs, `!` leaves out) or while the program runs
/// (`hookcc_trace_function`), a function has no records from then on and its neighbours'
/// counts stay exact (no unmatched entry or exit); `HOOKCC_DISABLE=1` leaves a trace without
/// records. At -O0 every function tests its switch inline; at -O2 the default (`auto`: at
/// most 200 IR instructions on a hosted target) outlines all five, `leaf` the two that call
/// nothing of their own (but a tail call), `none` none.
#[test]
fn functions_switched_off_by_name_at_start_and_at_run_time_are_not_recorded() {
    let five = ["leaf", "main", "mid", "parse_a", "parse_space"];
    switched_off_functions_are_not_recorded(&["-O0"], &[]);
    switched_off_functions_are_not_recorded(&["-O2"], &five);
    switched_off_functions_are_not_recorded(
        &["-O2", "--hook-outline=leaf"],
        &["leaf", "parse_space"],
    );
    switched_off_functions_are_not_recorded(&["-O2", "--hook-outline=all"], &five);
    switched_off_functions_are_not_recorded(&["-O2", "--hook-outline=none"], &[]);
}

/// The switch test of a build with `flags`, whose outlined clones must be those of `outlined`.
fn switched_off_functions_are_not_recorded(flags: &[&str], outlined: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The default placement: at the source at -O0, after inlining at -O2.
    let program = d.join("switch");
    run_ok(
        hookcc(d, false)
            .arg("--trace")
            .args(flags)
            .arg(program_source("function_switch.c"))
            .arg("-o")
            .arg(&program),
    );
    let clones = outlined_clones(&program);
    let expected: Vec<String> = outlined.iter().map(|f| format!("{f}.hookcc")).collect();
    assert_eq!(clones, expected, "{flags:?}");
    if outlined.contains(&"leaf") && cfg!(target_arch = "x86_64") {
        // Switched off, leaf runs its own body: no frame, no call.
        let code = disassembly_of(&program, "leaf");
        assert!(
            !code
                .iter()
                .any(|i| i.starts_with("push") || i.starts_with("call")),
            "{code:#?}"
        );
    }
    let run = |name: &str, args: &[&str], env: &[(&str, &str)]| {
        let trace = d.join(format!("{name}.hktrace"));
        let out = run_ok(
            std::process::Command::new(&program)
                .current_dir(d)
                .args(args)
                .env("HOOKCC_OUTPUT", &trace)
                .envs(env.iter().copied()),
        );
        assert_balanced(&trace);
        (trace, String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let counts = |trace: &Path| call_counts(trace, &[]);
    let expect = |got: std::collections::BTreeMap<String, u64>, want: &[(&str, u64)]| {
        let want: std::collections::BTreeMap<String, u64> =
            want.iter().map(|(f, n)| (f.to_string(), *n)).collect();
        assert_eq!(got, want);
    };
    // Everything on.
    let (all, _) = run("all", &[], &[]);
    expect(
        counts(&all),
        &[
            ("main", 1),
            ("parse_a", 1500),
            ("parse_space", 1000),
            ("mid", 1500),
            ("leaf", 4000),
        ],
    );
    // At start: parse_* but parse_space.
    let (chosen, _) = run(
        "chosen",
        &[],
        &[("HOOKCC_FUNCTIONS", "parse_*,!parse_space")],
    );
    expect(counts(&chosen), &[("parse_a", 1500)]);
    let (but_leaf, _) = run("but_leaf", &[], &[("HOOKCC_FUNCTIONS", "!leaf")]);
    expect(
        counts(&but_leaf),
        &[
            ("main", 1),
            ("parse_a", 1500),
            ("parse_space", 1000),
            ("mid", 1500),
        ],
    );
    // At run time: leaf off after 1000 rounds; the call returns how many matched.
    let (later, stdout) = run("later", &["off"], &[]);
    assert!(stdout.ends_with(" 1\n"), "{stdout}");
    expect(
        counts(&later),
        &[
            ("main", 1),
            ("parse_a", 1500),
            ("parse_space", 1000),
            ("mid", 1500),
            ("leaf", 3000),
        ],
    );
    // HOOKCC_DISABLE=1: no records at all.
    let (off, _) = run("off", &[], &[("HOOKCC_DISABLE", "1")]);
    let info =
        String::from_utf8_lossy(&run_ok(hookprof().arg("info").arg(&off)).stdout).into_owned();
    assert!(info.contains("records:           0\n"), "{info}");
}

/// The outlined hooked clones a binary defines (local symbols `NAME.hookcc`), sorted.
fn outlined_clones(binary: &Path) -> Vec<String> {
    let nm = run_ok(std::process::Command::new("nm").arg(binary));
    let mut clones: Vec<String> = String::from_utf8_lossy(&nm.stdout)
        .lines()
        .filter_map(|l| l.split(' ').nth(2))
        .filter(|n| n.ends_with(".hookcc"))
        .map(str::to_string)
        .collect();
    clones.sort();
    clones
}

/// The instructions of `function` (objdump's mnemonics and operands, without addresses).
fn disassembly_of(binary: &Path, function: &str) -> Vec<String> {
    let out = run_ok(
        std::process::Command::new("objdump")
            .args(["-d", "--no-show-raw-insn"])
            .arg(format!("--disassemble={function}"))
            .arg(binary),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once(":\t").map(|(_, i)| i.trim().to_string()))
        .collect()
}

/// Issue 35 item 4, the throttle: a function whose calls are too short for the hooks to time
/// (`tiny`, a few ns) is timed for its first calls and then only counted; its count in the
/// report equals the count of a run that records every call (`HOOKCC_THROTTLE=0`), alone and
/// with 64 threads calling it at once (an atomic count: no increment lost); its exits follow
/// its entries (no unmatched record where the switch changed mid-call); a function long
/// enough to time (`slow`) keeps every record; the report marks the throttled row.
#[test]
fn a_throttled_function_is_counted_exactly_and_marked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(d, "throttle", &["throttle.c"], &["-O2", "-pthread"], false);
    let run = |name: &str, threads: &str, throttle: &str| {
        let trace = d.join(format!("{name}.hktrace"));
        run_ok(
            std::process::Command::new(&program)
                .current_dir(d)
                .arg(threads)
                .env("HOOKCC_OUTPUT", &trace)
                // Small buffers: the writer sees the first calls early, as in a long run.
                .env("HOOKCC_BUFFER_RECORDS", "4096")
                .env("HOOKCC_THROTTLE", throttle),
        );
        assert_balanced(&trace);
        trace
    };
    for threads in [0u64, 64] {
        let all = run(&format!("all{threads}"), &threads.to_string(), "0");
        let throttled = run(&format!("throttled{threads}"), &threads.to_string(), "1");
        let rounds = (threads + 1) * 200;
        let mut want = std::collections::BTreeMap::from([
            ("main".to_string(), 1),
            ("round_of".to_string(), rounds),
            ("slow".to_string(), rounds),
            ("tiny".to_string(), rounds * 100),
        ]);
        if threads > 0 {
            want.insert("worker".to_string(), threads);
        }
        assert_eq!(
            call_counts(&all, &[]),
            want,
            "HOOKCC_THROTTLE=0, {threads} threads"
        );
        assert_eq!(
            call_counts(&throttled, &[]),
            want,
            "throttled, {threads} threads"
        );
        let info = |trace: &Path| {
            String::from_utf8_lossy(&run_ok(hookprof().arg("info").arg(trace)).stdout).into_owned()
        };
        let records = |text: &str| -> u64 {
            let line = text.lines().find(|l| l.starts_with("records:")).unwrap();
            line["records:".len()..].trim().parse().unwrap()
        };
        let (all_info, throttled_info) = (info(&all), info(&throttled));
        assert!(!all_info.contains("throttled:"), "{all_info}");
        assert!(throttled_info.contains("throttled: "), "{throttled_info}");
        // Most of tiny's calls leave no records.
        assert!(
            records(&throttled_info) * 2 < records(&all_info),
            "{throttled_info}\n{all_info}"
        );
        let text =
            String::from_utf8_lossy(&run_ok(hookprof().arg("report").arg(&throttled)).stdout)
                .into_owned();
        let marked: Vec<&str> = text
            .lines()
            .filter(|l| l.contains("[timed first ") && !l.starts_with("throttled"))
            .collect();
        assert!(
            marked.len() == 1 && marked[0].contains("tiny"),
            "only tiny is throttled:\n{text}"
        );
        assert!(
            text.contains("throttled [timed first N]: 1 function, "),
            "{text}"
        );
        // Count marks: one in a thread's records every 64 counted calls (the rest of each
        // thread's calls, under 64, have none), whose cost the report takes out.
        let field = |text: &str, key: &str, after: &str| -> u64 {
            let line = text.lines().find(|l| l.starts_with(key)).unwrap();
            let rest = &line[line.find(after).unwrap() + after.len()..];
            rest.trim_start()
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap()
        };
        let counted = field(&throttled_info, "throttled:", "without records:");
        let marks = field(&throttled_info, "count marks:", "count marks:");
        let max_rest = 63 * (threads + 1);
        assert!(
            marks <= counted / 64 && marks * 64 + max_rest >= counted,
            "{marks} marks for {counted} counted calls in {} threads\n{throttled_info}",
            threads + 1
        );
        if threads == 0 {
            assert_eq!(marks, counted / 64, "{throttled_info}");
        }
        // Each thread's counted calls are its own (COUNTED chunks): every thread's row of
        // tiny has its 200 rounds of 100 calls.
        let per_thread = String::from_utf8_lossy(
            &run_ok(
                hookprof()
                    .args(["report", "--per-thread", "--format=csv"])
                    .arg(&throttled),
            )
            .stdout,
        )
        .into_owned();
        let tiny: Vec<&str> = per_thread
            .lines()
            .filter(|l| l.split(',').nth(1) == Some("tiny"))
            .map(|l| l.split(',').nth(2).unwrap())
            .collect();
        assert_eq!(
            tiny,
            vec!["20000"; threads as usize + 1],
            "tiny's calls by thread:\n{per_thread}"
        );
        assert!(
            words(&text).contains("later calls counted untimed (HOOKCC_THROTTLE=0 times all),")
                && text.contains("counted calls' cost subtracted: "),
            "{text}"
        );
        assert!(!all_info.contains("count marks:"), "{all_info}");
    }
}

/// Issue 35 item 1, shared libraries: a library built with `hookcc --trace -shared` hands its
/// functions' switches to the executable's runtime (a constructor in each of its modules), so
/// `HOOKCC_FUNCTIONS` and `HOOKCC_DISABLE` switch its functions as they switch the program's.
#[test]
fn a_shared_librarys_functions_are_switched_with_the_programs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_shlib_program(d);
    let run = |name: &str, env: &[(&str, &str)]| {
        let trace = d.join(format!("{name}.hktrace"));
        run_ok(
            std::process::Command::new(&program)
                .current_dir(d)
                .env("HOOKCC_OUTPUT", &trace)
                .envs(env.iter().copied()),
        );
        trace
    };
    let all = call_counts(&run("all", &[]), &[]);
    assert_eq!(
        (all.get("lib_square"), all.get("lib_helper")),
        (Some(&7), Some(&21)),
        "{all:?}"
    );
    let no_helper = call_counts(
        &run("no_helper", &[("HOOKCC_FUNCTIONS", "!lib_helper")]),
        &[],
    );
    assert_eq!(
        (
            no_helper.get("lib_square"),
            no_helper.get("lib_helper"),
            no_helper.get("main")
        ),
        (Some(&7), None, Some(&1)),
        "{no_helper:?}"
    );
    let off = run("off", &[("HOOKCC_DISABLE", "1")]);
    let info =
        String::from_utf8_lossy(&run_ok(hookprof().arg("info").arg(&off)).stdout).into_owned();
    assert!(info.contains("records:           0\n"), "{info}");
}

/// A report's text with its lines joined and every run of spaces one space: what it says,
/// however the summary was broken into lines of the report's width.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
