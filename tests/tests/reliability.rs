//! hookprof against hostile inputs and hostile output directories, on real programs built
//! with `hookcc --trace`, run and decoded (issue 26): a trace naming FIFOs, deep recursion in
//! the stack views, the output writer's temporary files, modes and failures.

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

fn mkfifo(path: &Path) {
    run_ok(Command::new("mkfifo").arg(path));
}

#[test]
fn an_executable_replaced_by_a_fifo_is_refused_not_opened() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(d, "calls", &["calls.c"], &["-O0"], false);
    let (trace, _) = run_traced(d, &program, &[]);
    // The trace's EXE chunk names `program`: make that a FIFO no one will ever write.
    std::fs::remove_file(&program).unwrap();
    mkfifo(&program);
    for view in [&["report"][..], &["callgrind"], &["flame"]] {
        let out = output_within(
            hookprof().args(view).arg(&trace),
            Duration::from_secs(20),
        );
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
    run_ok(
        hookcc(d, false)
            .args(["--trace", "-O1", "-shared", "-fPIC"])
            .arg(program_source("shlib.c"))
            .args(["-o", "libshlib.so"]),
    );
    run_ok(
        hookcc(d, false)
            .args(["--trace", "-O1"])
            .arg(program_source("shlib_main.c"))
            .args(["-L.", "-lshlib", "-Wl,-rpath,$ORIGIN", "-o", "shlib_main"]),
    );
    let (trace, _) = run_traced(d, &d.join("shlib_main"), &[]);
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
