//! hookprof against hostile inputs and hostile output directories, on real programs built
//! with `hookcc --trace`, run and decoded (issue 26): a trace naming FIFOs, deep recursion in
//! the stack views, the output writer's temporary files, modes and failures; and hookcc
//! with -save-temps and with its own options in a response file.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use hookcc_tests::*;

/// Runs `cmd` to its end, or kills it after `limit` and fails the test: a hang is the bug.
fn output_within(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} still ran after {limit:?}: it blocks");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// tests/programs/calls.c built with `--trace -O0` into `dir/calls`, run; its trace.
fn calls_trace(dir: &Path) -> std::path::PathBuf {
    let program = build_traced(dir, "calls", &["calls.c"], &["-O0"], false);
    run_traced(dir, &program, &[]).0
}

fn mkfifo(path: &Path) {
    run_ok(Command::new("mkfifo").arg(path));
}

#[test]
fn an_executable_replaced_by_a_fifo_is_refused_not_opened() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let trace = calls_trace(d);
    let program = d.join("calls");
    // The trace's EXE chunk names `program`: make that a FIFO no one will ever write.
    std::fs::remove_file(&program).unwrap();
    mkfifo(&program);
    for view in [&["report"][..], &["callgrind"], &["flame"]] {
        let out = output_within(hookprof().args(view).arg(&trace), Duration::from_secs(20));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{view:?}: {stderr}");
        assert!(
            stderr.contains(&format!("{}: cannot read: is a FIFO", program.display())),
            "{view:?}: {stderr}"
        );
    }
}

#[test]
fn a_shared_library_replaced_by_a_fifo_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (trace, _) = run_traced(d, &build_shlib_program(d), &[]);
    let library = d.join("libshlib.so");
    std::fs::remove_file(&library).unwrap();
    mkfifo(&library);
    let out = output_within(
        hookprof().args(["report", "--format=csv"]).arg(&trace),
        Duration::from_secs(20),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("{}: cannot read: is a FIFO", library.display())),
        "{stderr}"
    );
    // The executable's functions are still named, the library's are addresses.
    let rows = parse_report_csv(&String::from_utf8_lossy(&out.stdout));
    assert!(rows.iter().any(|r| r.function == "main" && r.calls == 1));
    assert!(rows.iter().all(|r| r.function != "lib_square"));
}

/// `hookprof VIEW… TRACE -o OUT` with the size of any file it writes limited to `kib` KiB
/// (bash's `ulimit -f`) and SIGXFSZ ignored: a write past the limit fails with EFBIG, as on a
/// full disk, instead of filling the disk.
fn hookprof_with_file_limit(kib: u64, view: &[&str], trace: &Path, out: &Path) -> Output {
    let mut cmd = Command::new("bash");
    cmd.arg("-c")
        .arg(format!("ulimit -f {kib}; trap '' XFSZ; exec \"$0\" \"$@\""))
        .arg(tool("hookprof"))
        .args(view)
        .arg(trace)
        .arg("-o")
        .arg(out);
    output_within(&mut cmd, Duration::from_secs(120))
}

fn sum_of_counts(folded: &str) -> u64 {
    folded
        .lines()
        .map(|l| {
            l.rsplit_once(' ')
                .and_then(|(_, n)| n.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("not a folded line: {l}"))
        })
        .sum()
}

#[test]
fn stack_views_of_a_30000_deep_recursion_stay_small() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(d, "deep", &["deep_recursion.c"], &["-O0"], false);
    let (trace, stdout) = run_traced(d, &program, &[]);
    assert_eq!(stdout.trim(), "30000");
    let report = run_ok(hookprof().args(["report", "--format=csv"]).arg(&trace));
    let rows = parse_report_csv(&String::from_utf8_lossy(&report.stdout));
    let down = rows.iter().find(|r| r.function == "down").expect("down");
    assert_eq!(down.calls, 30_001);
    let exclusive_ns: f64 = rows.iter().map(|r| r.exclusive_ns).sum();

    // Every view that writes stacks, and the indented call tree, each limited to 32 MiB:
    // without the cut, the folded stacks alone were 30 000 lines of 15 000 frames on average,
    // over 2 GB.
    let views: [&[&str]; 7] = [
        &["flame"],
        &["replay"],
        &["flame", "--format=svg"],
        &["speedscope"],
        &["callgrind"],
        &["gmon"],
        &["timeline"],
    ];
    for view in views {
        let out = d.join("out");
        let result = hookprof_with_file_limit(32 * 1024, view, &trace, &out);
        assert!(
            result.status.success(),
            "{view:?}: {}",
            String::from_utf8_lossy(&result.stderr)
        );
        let size = std::fs::metadata(&out).unwrap().len();
        eprintln!("{view:?}: {size} bytes");
        if view == ["flame"] {
            let folded = std::fs::read_to_string(&out).unwrap();
            let marker = "[deeper than 512 frames]";
            let deepest = folded
                .lines()
                .find(|l| l.contains(marker))
                .expect("the marker frame");
            assert_eq!(deepest.split(';').count(), 513, "main, 511 × down, marker");
            // A line a level at most (levels of under half a nanosecond have none).
            assert!(folded.lines().count() <= 513);
            // The counts still add up to the exclusive times of the report (each line
            // rounded to the nanosecond).
            let total = sum_of_counts(&folded) as f64;
            assert!(
                (total - exclusive_ns).abs() <= 1000.0 + exclusive_ns * 1e-3,
                "folded {total} ns, report {exclusive_ns} ns"
            );
        }
        std::fs::remove_file(&out).unwrap();
    }
}

/// The `*.hookprof-partial` files in `dir`.
fn partials(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("hookprof-partial"))
        .collect()
}

/// Every subcommand that writes a file from a .hktrace, as arguments before `-o FILE`.
const WRITERS: [&[&str]; 6] = [
    &["report"],
    &["callgraph"],
    &["gmon"],
    &["timeline"],
    &["flame"],
    &["callgrind"],
];

#[test]
fn a_link_planted_at_the_output_or_its_temporary_is_not_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let trace = calls_trace(d);
    let victim = d.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    for view in WRITERS {
        let out = d.join("out");
        // The old temporary's name, predictable, as a link to the victim; and the output
        // itself as another.
        let planted = d.join("out.hookprof-partial");
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        run_ok(hookprof().args(view).arg(&trace).arg("-o").arg(&out));
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "precious",
            "{view:?}"
        );
        let meta = std::fs::symlink_metadata(&out).unwrap();
        assert!(
            meta.is_file() && meta.len() > 0,
            "{view:?}: the link was replaced"
        );
        assert_eq!(partials(d), ["out.hookprof-partial"], "{view:?}");
        std::fs::remove_file(&out).unwrap();
        std::fs::remove_file(&planted).unwrap();
    }
}

#[test]
fn outputs_take_the_mode_of_the_trace() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let trace = calls_trace(d);
    for (trace_mode, output_mode) in [(0o600, 0o600), (0o640, 0o640)] {
        std::fs::set_permissions(&trace, std::fs::Permissions::from_mode(trace_mode)).unwrap();
        for view in WRITERS {
            let out = d.join("out");
            // An existing output of another mode is replaced, and takes the trace's mode.
            std::fs::write(&out, "old").unwrap();
            std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o644)).unwrap();
            // umask 027 keeps the group's read bit of 0640 and takes every other's bit.
            let mut cmd = Command::new("sh");
            cmd.arg("-c")
                .arg("umask 027; exec \"$0\" \"$@\"")
                .arg(tool("hookprof"))
                .args(view)
                .arg(&trace)
                .arg("-o")
                .arg(&out);
            run_ok(&mut cmd);
            let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, output_mode, "{view:?} of a {trace_mode:o} trace");
            std::fs::remove_file(&out).unwrap();
        }
    }
}

#[test]
fn a_failed_write_leaves_the_previous_output_and_no_temporary() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let trace = calls_trace(d);
    for view in WRITERS {
        let out = d.join("out");
        std::fs::write(&out, "the previous output").unwrap();
        // No byte may be written: as a full disk.
        let result = hookprof_with_file_limit(0, view, &trace, &out);
        let stderr = String::from_utf8_lossy(&result.stderr);
        assert_eq!(result.status.code(), Some(1), "{view:?}: {stderr}");
        assert!(
            stderr.contains(&format!("{}: cannot write", out.display())),
            "{view:?}: {stderr}"
        );
        assert_eq!(
            std::fs::read_to_string(&out).unwrap(),
            "the previous output",
            "{view:?}"
        );
        assert!(partials(d).is_empty(), "{view:?}: {:?}", partials(d));
    }
}

/// The functions a traced run of `program` saw, with their calls.
fn traced_calls(dir: &Path, program: &Path) -> std::collections::BTreeMap<String, u64> {
    let (trace, stdout) = run_traced(dir, program, &[]);
    assert_eq!(stdout.trim(), "16135");
    call_counts(&trace, &[])
}

#[test]
fn save_temps_compiles_and_links_a_traced_program() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Compile only, then link, both with -save-temps; then compile and link in one.
    let compile = run_ok(
        hookcc(d, false)
            .args(["--trace", "-save-temps", "-O0", "-c"])
            .arg(program_source("calls.c"))
            .args(["-o", "calls.o"]),
    );
    assert!(
        compile.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&compile.stdout)
    );
    assert!(d.join("calls.o").is_file() && d.join("calls.i").is_file());
    run_ok(hookcc(d, false).args(["--trace", "-save-temps", "calls.o", "-o", "calls"]));
    assert_eq!(
        traced_calls(d, &d.join("calls")),
        CALLS_C.iter().map(|&(f, n)| (f.to_string(), n)).collect()
    );
    run_ok(
        hookcc(d, false)
            .args(["--trace", "-save-temps", "-O0"])
            .arg(program_source("calls.c"))
            .args(["-o", "calls2"]),
    );
    assert_eq!(traced_calls(d, &d.join("calls2")).len(), CALLS_C.len());
}

#[test]
fn hookcc_reads_its_own_options_from_a_response_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("flags"),
        format!("--trace -O0\n'{}'\n", program_source("calls.c").display()),
    )
    .unwrap();
    run_ok(hookcc(d, false).args(["@flags", "-o", "calls"]));
    assert_eq!(traced_calls(d, &d.join("calls")).len(), CALLS_C.len());
}

#[test]
fn save_temps_keeps_the_pragmas_in_the_preprocessed_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("p.c"),
        "#include <stdio.h>\n\
         #pragma NO_HOOKS(quiet)\n\
         int quiet(int x) { return x + 1; }\n\
         #pragma profile off\n\
         int off(int x) { return x * 2; }\n\
         #pragma profile reset\n\
         int loud(int x) { return x - 1; }\n\
         int main(void) { printf(\"%d\\n\", quiet(1) + off(2) + loud(3)); return 0; }\n",
    )
    .unwrap();
    let mut seen = Vec::new();
    for save_temps in [false, true] {
        let mut cmd = hookcc(d, false);
        cmd.args(["--trace", "-O0", "p.c", "-o", "p"]);
        if save_temps {
            cmd.arg("-save-temps");
        }
        run_ok(&mut cmd);
        let (trace, stdout) = run_traced(d, &d.join("p"), &[]);
        assert_eq!(stdout.trim(), "8");
        seen.push(call_counts(&trace, &[]));
    }
    let expected: std::collections::BTreeMap<String, u64> =
        [("main".to_string(), 1), ("loud".to_string(), 1)].into();
    assert_eq!(seen[0], expected, "without -save-temps");
    assert_eq!(seen[1], expected, "with -save-temps");
    let preprocessed = std::fs::read_to_string(d.join("p.i")).unwrap();
    for pragma in [
        "#pragma NO_HOOKS(quiet)",
        "#pragma profile off",
        "#pragma profile reset",
    ] {
        assert!(preprocessed.contains(pragma), "{pragma} not in p.i");
    }
}

#[test]
fn names_only_llvm_cxxfilt_knows_are_asked_of_one_llvm_cxxfilt() {
    if !have_tool("llvm-cxxfilt-19", &["_Z1fv"], "llvm-19") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(d, "names", &["libstdcxx_names.cpp"], &["-O0"], true);
    let (trace, stdout) = run_traced(d, &program, &[]);
    assert_eq!(stdout.trim(), "4 a 1");
    // An llvm-cxxfilt-19 first on PATH that counts how often it is started.
    let real = String::from_utf8(
        run_ok(Command::new("sh").args(["-c", "command -v llvm-cxxfilt-19"])).stdout,
    )
    .unwrap();
    let bin = d.join("bin");
    std::fs::create_dir(&bin).unwrap();
    let starts = d.join("starts");
    let fake = bin.join("llvm-cxxfilt-19");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho started >> '{}'\nexec '{}' \"$@\"\n",
            starts.display(),
            real.trim()
        ),
    )
    .unwrap();
    run_ok(Command::new("chmod").arg("+x").arg(&fake));
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = run_ok(
        hookprof()
            .args(["report", "--format=csv"])
            .arg(&trace)
            .env("PATH", path),
    );
    let report = String::from_utf8_lossy(&out.stdout);
    let rows = parse_report_csv(&report);
    // Every name demangled, libstdc++'s `Tn` ones included (std::pair's converting
    // constructor), by one llvm-cxxfilt.
    assert!(
        rows.iter().all(|r| !r.function.starts_with("_Z")),
        "{report}"
    );
    assert!(
        rows.iter()
            .any(|r| r.function.starts_with("std::pair<char, long>::pair<")),
        "{report}"
    );
    let started = std::fs::read_to_string(&starts).unwrap_or_default();
    assert_eq!(
        started.lines().count(),
        1,
        "llvm-cxxfilt started {} times",
        started.lines().count()
    );
}

#[test]
fn intrinsics_and_always_inline_functions_get_hooks_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut seen = Vec::new();
    for flags in [&["-O0"][..], &["-O0", "--hook-intrinsics"]] {
        let program = build_traced(d, "intrinsics", &["intrinsics.c"], flags, false);
        let (trace, stdout) = run_traced(d, &program, &[]);
        assert_eq!(stdout.trim(), "2016");
        seen.push(call_counts(&trace, &[]));
    }
    let avx2 = seen[0].contains_key("sum");
    let mut expected: std::collections::BTreeMap<String, u64> = [("main".to_string(), 1)].into();
    if avx2 {
        expected.insert("sum".into(), 1);
    }
    assert_eq!(seen[0], expected, "by default");
    if avx2 {
        for (name, calls) in [
            ("twice", 1),
            ("_mm256_add_epi32", 8),
            ("_mm256_loadu_si256", 8),
            ("_mm256_setzero_si256", 1),
        ] {
            assert_eq!(
                seen[1].get(name),
                Some(&calls),
                "{name} with --hook-intrinsics: {:?}",
                seen[1]
            );
        }
    }
}

#[test]
fn a_link_without_hook_options_gets_the_runtime_its_inputs_call() {
    // As Meson relinks a test program without HOOKCC_TRACE while its libraries keep hooks.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build_traced_shlib(d);
    run_ok(
        hookcc(d, false)
            .args(["-O1", "-c"])
            .arg(program_source("shlib_main.c"))
            .args(["-o", "main.o"]),
    );
    // A plain program linked with the hooked library given by its path (`-lshlib` is not
    // looked for: hookcc reads only the inputs named on the command line).
    run_ok(hookcc(d, false).args([
        "main.o",
        "libshlib.so",
        "-Wl,-rpath,$ORIGIN",
        "-o",
        "by_path",
    ]));
    let (trace, _) = run_traced(d, &d.join("by_path"), &[]);
    let counts = call_counts(&trace, &[]);
    assert_eq!(counts.get("lib_square"), Some(&7), "{counts:?}");
    // A static archive of objects compiled with --trace (and -flto: bitcode), linked plain.
    for lto in [false, true] {
        let mut compile = hookcc(d, false);
        compile
            .args(["--trace", SOURCE_PLACEMENT, "-O1", "-c"])
            .arg(program_source("shlib.c"))
            .args(["-o", "lib.o"]);
        if lto {
            compile.arg("-flto");
        }
        run_ok(&mut compile);
        let _ = std::fs::remove_file(d.join("libstatic.a"));
        let ar = if lto { tool("hookcc-ar") } else { "ar".into() };
        run_ok(
            Command::new(ar)
                .current_dir(d)
                .args(["rcs", "libstatic.a", "lib.o"]),
        );
        let mut link = hookcc(d, false);
        link.args(["main.o", "libstatic.a", "-o", "static"]);
        if lto {
            link.arg("-flto");
        }
        run_ok(&mut link);
        let (trace, _) = run_traced(d, &d.join("static"), &[]);
        let counts = call_counts(&trace, &[]);
        assert_eq!(counts.get("lib_helper"), Some(&21), "lto {lto}: {counts:?}");
    }
}

/// The files under `dir`, recursively, relative to it, with their modes (links as `-> TARGET`).
fn tree(dir: &Path) -> Vec<(String, String)> {
    use std::os::unix::fs::PermissionsExt;
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let name = path.strip_prefix(dir).unwrap().display().to_string();
            if meta.is_dir() {
                todo.push(path);
            } else if meta.is_symlink() {
                let to = std::fs::read_link(&path).unwrap().display().to_string();
                found.push((name, format!("-> {to}")));
            } else {
                found.push((name, format!("{:o}", meta.permissions().mode() & 0o777)));
            }
        }
    }
    found.sort();
    found
}

#[test]
fn export_never_writes_through_a_planted_link_and_keeps_the_traces_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let trace = calls_trace(d);
    std::fs::set_permissions(&trace, std::fs::Permissions::from_mode(0o600)).unwrap();
    let victim = d.join("victim");
    std::fs::write(&victim, "precious").unwrap();
    let pid = run_ok(hookprof().arg("info").arg(&trace));
    let pid = String::from_utf8_lossy(&pid.stdout)
        .lines()
        .find_map(|l| l.trim().strip_prefix("pid:").map(|p| p.trim().to_string()))
        .expect("hookprof info names the pid");
    let dataset = d.join("dataset");
    // Someone else's links at the names the old export created and truncated: `PID.parquet`'s
    // `.partial` in each table's run directory.
    for table in ["calls", "functions"] {
        let run = dataset.join(table).join("run=r");
        std::fs::create_dir_all(&run).unwrap();
        std::os::unix::fs::symlink(&victim, run.join(format!("{pid}.parquet.partial"))).unwrap();
    }
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg("umask 022; exec \"$0\" \"$@\"")
        .arg(tool("hookprof"))
        .args(["export", "--run", "r", "-o"])
        .arg(&dataset)
        .arg(&trace);
    run_ok(&mut cmd);
    let kept = std::fs::read(&victim).unwrap();
    assert!(
        kept == b"precious",
        "the victim was written: {} bytes",
        kept.len()
    );
    let victim = victim.display().to_string();
    assert_eq!(
        tree(&dataset),
        [
            (format!("calls/run=r/{pid}.parquet"), "600".to_string()),
            (
                format!("calls/run=r/{pid}.parquet.partial"),
                format!("-> {victim}")
            ),
            (format!("functions/run=r/{pid}.parquet"), "600".to_string()),
            (
                format!("functions/run=r/{pid}.parquet.partial"),
                format!("-> {victim}")
            ),
        ]
    );
    // A file there already is never replaced, not even by a second export of another trace
    // of the same pid.
    run_fails(
        hookprof()
            .args(["export", "--run", "r", "-o"])
            .arg(&dataset)
            .arg(&trace),
        "already exported",
    );
}

#[test]
fn a_profile_at_its_node_limit_reports_its_losses_once() {
    // HOOKCC_MODE=profile with room for 1000 call paths, of a 30 000-deep recursion: the tree
    // keeps main and 999 levels of `down`, and counts the rest lost. Before: every report said
    // "chunks are repeated … the profile is not the program's", and the records were counted
    // read and lost (60 004 read, the header's 2 000) (issue 37 item 9).
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(d, "deep", &["deep_recursion.c"], &["-O0"], false);
    let trace = d.join("deep.hktrace");
    let out = run_ok(
        Command::new(&program)
            .env("HOOKCC_OUTPUT", &trace)
            .env("HOOKCC_MODE", "profile")
            .env("HOOKCC_PROFILE_NODES", "1000")
            .env("HOOKCC_SWITCHES", "0")
            .env("HOOKCC_SAMPLE_HZ", "0"),
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "30000");
    let report = run_ok(hookprof().args(["report", "--format=csv"]).arg(&trace));
    let stderr = String::from_utf8_lossy(&report.stderr);
    let warnings: Vec<&str> = stderr.lines().collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains("58004 records were lost by the runtime: 58004 of call paths beyond")
            && warnings[0].contains("HOOKCC_PROFILE_NODES"),
        "{stderr}"
    );
    let rows = parse_report_csv(&String::from_utf8_lossy(&report.stdout));
    let down = rows.iter().find(|r| r.function == "down").expect("down");
    assert_eq!(down.calls, 999);
    let info =
        String::from_utf8_lossy(&run_ok(hookprof().arg("info").arg(&trace)).stdout).into_owned();
    let field = |name: &str| {
        info.lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.trim().to_string())
            .unwrap_or_else(|| panic!("no {name} in {info}"))
    };
    assert_eq!(field("records:"), "2000");
    assert_eq!(field("lost:"), "58004");
}

#[test]
fn a_pause_chunk_after_a_ring_window_takes_the_snapshots_time_out() {
    // Issue 37 item 11: a ring snapshot's own time was charged to the function running when it
    // was taken (its RING chunk has no time). The runtime now writes a PAUSE chunk of the
    // snapshotting thread after its window, from the snapshot's start to its end
    // (tests/process_events.rs checks that it is there); this checks hookprof's part on a real
    // ring trace of tests/programs/ring.c: the PAUSE's time comes out of `main` (which took the
    // snapshot) — the same trace with that chunk cut out gives `main` that much more — and
    // nothing is reported out of place.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let trace = ring_trace(d);
    let bytes = std::fs::read(&trace).unwrap();
    let parsed = hookprof::input::format::Trace::new(&bytes).unwrap();
    let tps = parsed.header().ticks_per_second;
    // The PAUSE chunk after the second window (the hookcc_trace_snapshot() call's): its byte
    // range with the CHECK chunk after it, and its times.
    let (mut rings, mut cut, mut times) = (0, None, (0u64, 0u64));
    let mut chunks = parsed.chunks().map(|c| c.unwrap()).peekable();
    while let Some(chunk) = chunks.next() {
        match chunk.chunk {
            hookprof::input::format::Chunk::Ring { .. } => rings += 1,
            hookprof::input::format::Chunk::Pause { from, to } if rings == 2 && cut.is_none() => {
                let check = chunks.next().expect("the PAUSE chunk's CHECK");
                let start = chunk.offset as usize;
                cut = Some((start, (check.offset + check.total_len()) as usize));
                times = (from, to);
            }
            _ => {}
        }
    }
    assert_eq!(rings, 3, "three snapshots");
    let (start, end) = cut.expect("a PAUSE chunk after the second snapshot's window");
    let (from, to) = times;
    let mut without = bytes[..start].to_vec();
    without.extend_from_slice(&bytes[end..]);
    let without_pause = d.join("without.hktrace");
    std::fs::write(&without_pause, &without).unwrap();

    let main_self = |trace: &Path| {
        let out = run_ok(hookprof().args(["report", "--format=csv"]).arg(trace));
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rows = parse_report_csv(&String::from_utf8_lossy(&out.stdout));
        rows.iter()
            .find(|r| r.function == "main")
            .unwrap()
            .exclusive_ns
    };
    let (before, after) = (main_self(&without_pause), main_self(&trace));
    let gap_ns = (to - from) as f64 * 1e9 / tps as f64;
    assert!(
        (before - after - gap_ns).abs() < 0.1 * gap_ns + 1000.0,
        "main's own time {before} ns without the PAUSE, {after} ns with it ({gap_ns} ns)"
    );
}
