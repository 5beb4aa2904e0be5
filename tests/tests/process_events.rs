//! The trace runtime across process events that once lost or misplaced records (issue 37):
//! the trace's descriptor closed under it, clone() without CLONE_VM, daemon(), exec. Each
//! test builds tests/programs/process_events.c with `hookcc --trace`, runs it with small
//! buffers (so chunks are written before and after the event), and decodes the traces with
//! hookprof.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use hookcc_tests::*;

fn build(dir: &Path) -> PathBuf {
    build_traced(dir, "events", &["process_events.c"], &["-O1"], false)
}

/// The program run in `dir` with `args`, HOOKCC_OUTPUT `dir/events.hktrace`, 256-record
/// buffers, through `bash -c SCRIPT` (`"$@"` is the command) when `shell` is given; killed
/// after 60 s (a hang is the bug).
fn run(
    dir: &Path,
    program: &Path,
    args: &[&str],
    shell: Option<&str>,
    env: &[(&str, &str)],
) -> Output {
    let mut cmd = match shell {
        Some(script) => {
            let mut c = Command::new("bash");
            c.arg("-c").arg(script).arg("bash").arg(program);
            c
        }
        None => Command::new(program),
    };
    cmd.args(args)
        .current_dir(dir)
        .env("HOOKCC_OUTPUT", dir.join("events.hktrace"))
        .env("HOOKCC_BUFFER_RECORDS", "256")
        .env("HOOKCC_SWITCHES", "0")
        .env("HOOKCC_SAMPLE_HZ", "0");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let start = Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} still ran after 60 s: it hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("output")
}

/// `hookprof info` of `trace`, which must be complete with nothing lost, unmatched or
/// reported as damaged; returns the text.
fn assert_complete(trace: &Path) -> String {
    let text = assert_finished(trace);
    assert_balanced(trace);
    text
}

/// `hookprof info` of `trace`, which must be complete with nothing lost or reported as
/// damaged (a fork child's frames open at the fork are its unmatched exits); returns the text.
fn assert_finished(trace: &Path) -> String {
    let out = hookprof()
        .arg("info")
        .arg(trace)
        .output()
        .expect("hookprof info");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{}: {stderr}\n{text}",
        trace.display()
    );
    assert!(
        stderr.trim().is_empty(),
        "{}: warnings: {stderr}\n{text}",
        trace.display()
    );
    assert!(
        text.lines()
            .any(|l| l.trim_end() == "complete:          yes"),
        "{} is not complete:\n{text}",
        trace.display()
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("checksums:") && !l.contains("NOT")),
        "{}: {text}",
        trace.display()
    );
    assert!(
        text.lines().any(|l| l.trim_end() == "lost:              0"),
        "{text}"
    );
    text
}

fn work_calls(trace: &Path) -> u64 {
    call_counts(trace, &[]).get("work").copied().unwrap_or(0)
}

fn check_user_file(path: &Path) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(
        bytes.len(),
        5000,
        "the program's file has {} bytes",
        bytes.len()
    );
    assert!(
        bytes.iter().all(|&b| b == b'u'),
        "the program's file holds bytes not its own"
    );
}

/// Issue 37, item 1: after closefrom(3) (and after a close() loop) the program's next open()
/// took the trace's descriptor number, and the runtime wrote its chunks into the program's
/// file (a 5000-byte file left with a trace header in it), losing them from the trace.
#[test]
fn a_program_that_closes_every_descriptor_keeps_its_file_and_its_trace() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build(d);
    for mode in ["closefrom", "closeloop"] {
        for writer in ["1", "0"] {
            let user = d.join("user.dat");
            let out = run(
                d,
                &program,
                &[mode, user.to_str().unwrap()],
                None,
                &[("HOOKCC_WRITER", writer)],
            );
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{mode} writer={writer}: {stderr}");
            check_user_file(&user);
            let trace = d.join("events.hktrace");
            assert_complete(&trace);
            assert_eq!(work_calls(&trace), 6000, "{mode} writer={writer}");
            std::fs::remove_file(&trace).unwrap();
            std::fs::remove_file(&user).unwrap();
        }
    }
}

/// Issue 37, item 1: started with stdout closed, the trace was opened as descriptor 1, and
/// the program's printf text went into it.
#[test]
fn a_program_started_with_stdout_closed_keeps_printf_out_of_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build(d);
    for script in [r#"exec "$@" >&-"#, r#"exec "$@" >&- 2>&-"#] {
        let out = run(d, &program, &["stdio"], Some(script), &[]);
        assert!(
            out.status.success(),
            "{script}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let trace = d.join("events.hktrace");
        let bytes = std::fs::read(&trace).unwrap();
        assert!(
            !bytes.windows(16).any(|w| w == b"printf text that"),
            "{script}: the program's printf text is in the trace"
        );
        assert_complete(&trace);
        assert_eq!(work_calls(&trace), 6000, "{script}");
        std::fs::remove_file(&trace).unwrap();
    }
}

/// Issue 37, item 3: a child made by clone() without CLONE_VM hung in futex_wait once its
/// buffer was full (it handed it to a writer thread that exists only in the parent), and with
/// HOOKCC_WRITER=0 wrote over the parent's chunks. It is a fork child now: a file of its own.
#[test]
fn a_clone_child_without_clone_vm_writes_its_own_trace() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build(d);
    for writer in ["1", "0"] {
        let out = run(d, &program, &["clone"], None, &[("HOOKCC_WRITER", writer)]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "writer={writer}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let child: u32 = stdout
            .trim()
            .strip_prefix("child_pid=")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("{stdout}"));
        let parent = d.join("events.hktrace");
        let child_trace = d.join(format!("events.{child}.hktrace"));
        assert_complete(&parent);
        assert_eq!(work_calls(&parent), 2000, "writer={writer}");
        assert_complete(&child_trace);
        assert_eq!(work_calls(&child_trace), 5000, "writer={writer}");
        for t in traces_in(d) {
            std::fs::remove_file(t).unwrap();
        }
    }
}

/// Issue 37, item 4: glibc's daemon() ends the parent through its internal _exit, which the
/// runtime's _exit does not see: the parent's trace was left unfinished, its buffered records
/// gone and "lost 0".
#[test]
fn daemon_finishes_the_parents_trace_and_the_daemon_writes_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build(d);
    let pidfile = d.join("daemon.pid");
    let out = run(
        d,
        &program,
        &["daemon", pidfile.to_str().unwrap()],
        None,
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The daemon is no child of ours: wait for its pid file, then for it to end.
    let start = Instant::now();
    let pid: u32 = loop {
        if let Some(pid) = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|s| s.trim().parse().ok())
        {
            break pid;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the daemon wrote no pid file"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the daemon {pid} still runs"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let parent = d.join("events.hktrace");
    assert_complete(&parent);
    assert_eq!(work_calls(&parent), 2000);
    let daemon = d.join(format!("events.{pid}.hktrace"));
    assert_finished(&daemon);
    assert_eq!(work_calls(&daemon), 3000);
}

/// Issue 37, item 5: exec without fork lost the image's buffered records (each earlier
/// image's file: a header, 0 records, "lost 0"). Every image's file is finished now.
#[test]
fn every_image_of_an_exec_chain_keeps_its_records() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build(d);
    for writer in ["1", "0"] {
        let out = run(
            d,
            &program,
            &["exec", "3"],
            None,
            &[("HOOKCC_WRITER", writer)],
        );
        assert!(
            out.status.success(),
            "writer={writer}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let traces = traces_in(d);
        assert_eq!(
            traces.len(),
            4,
            "writer={writer}: one file per image: {traces:?}"
        );
        for t in &traces {
            assert_finished(t);
            assert_eq!(work_calls(t), 1000, "writer={writer}: {}", t.display());
            std::fs::remove_file(t).unwrap();
        }
    }
}

/// Issue 37, item 5: an exec that fails leaves the trace finished up to it, and recording
/// goes on, in a file of its own.
#[test]
fn a_failed_exec_goes_on_tracing_in_a_new_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build(d);
    // With a second thread, whose records up to the exec are in the first file only.
    for (mode, before, after) in [("execfail", 1000, 1000), ("execfail_thread", 1700, 1300)] {
        for writer in ["1", "0"] {
            let out = run(d, &program, &[mode], None, &[("HOOKCC_WRITER", writer)]);
            assert!(
                out.status.success(),
                "{mode}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let mut traces = traces_in(d);
            assert_eq!(traces.len(), 2, "{mode}: {traces:?}");
            traces.sort_by_key(|t| !t.ends_with("events.hktrace")); // the first file first
            let mut calls = Vec::new();
            for t in &traces {
                assert_finished(t);
                calls.push(work_calls(t));
            }
            assert_eq!(calls, [before, after], "{mode} writer={writer}: {traces:?}");
            for t in traces {
                std::fs::remove_file(t).unwrap();
            }
        }
    }
}

/// Issue 37, item 7: a library dlclose unloaded and another dlopen'ed at the same address:
/// the first library's calls were named by the second's functions (b_work 4010, no a_work).
/// The runtime writes an UNLOAD chunk, and hookprof names each record by the module loaded
/// when it was made.
#[test]
fn calls_into_a_library_unloaded_and_replaced_at_its_address_keep_their_names() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (lib, define) in [
        ("libunload_a.so", None),
        ("libunload_b.so", Some("-DLIB_B")),
    ] {
        let mut cmd = hookcc(d, false);
        cmd.args(["--trace", SOURCE_PLACEMENT, "-O1", "-shared", "-fPIC"])
            .args(define)
            .arg(program_source("unload_lib.c"))
            .arg("-o")
            .arg(lib);
        run_ok(&mut cmd);
    }
    let program = build_traced(d, "unload_main", &["unload_main.c"], &["-O1"], false);
    let (trace, stdout) = run_traced(d, &program, &[]);
    assert_eq!(
        stdout.trim(),
        "same_address=1",
        "the loader put the second library elsewhere: this test needs it at the first's address"
    );
    let calls = call_counts(&trace, &[]);
    assert_eq!(calls.get("a_work"), Some(&4000), "{calls:?}");
    assert_eq!(calls.get("b_work"), Some(&10), "{calls:?}");
    assert_complete(&trace);
}

/// A library dlclose unloaded before the program ends: the end of the trace switched every
/// function's switch off, the unloaded library's records too, and the program died of SIGSEGV
/// in exit() with its trace unfinished. The runtime forgets an unloaded file's records, after
/// writing what its throttled functions counted (a_work: 4000 calls, 1000 timed and the rest
/// counted), which hookprof names by the library loaded then.
#[test]
fn a_program_ends_normally_after_unloading_a_traced_library() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut cmd = hookcc(d, false);
    cmd.args(["--trace", SOURCE_PLACEMENT, "-O1", "-shared", "-fPIC"])
        .arg(program_source("unload_lib.c"))
        .args(["-o", "libunload_a.so"]);
    run_ok(&mut cmd);
    let program = build_traced(d, "unload_main", &["unload_main.c"], &["-O1"], false);
    let trace = d.join("only-a.hktrace");
    let out = run_ok(
        std::process::Command::new(&program)
            .arg("only-a")
            .current_dir(d)
            .env("HOOKCC_OUTPUT", &trace),
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "a unloaded\n");
    let calls = call_counts(&trace, &[]);
    assert_eq!(calls.get("a_work"), Some(&4000), "{calls:?}");
    assert_eq!(calls.get("run"), Some(&1), "{calls:?}");
    assert_complete(&trace);
}

/// Issue 37, item 11: a trace cut by RLIMIT_FSIZE (or a full disk) blamed its lost records on
/// "thread-exit destructors": the header's `lost` counted them and no LOST chunk did. The
/// runtime's salvage writes them in a LOST chunk now, and the report names the write.
#[test]
fn records_lost_to_the_file_size_limit_are_not_blamed_on_destructors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build(d);
    let out = run(
        d,
        &program,
        &["stdio"],
        Some(r#"ulimit -f 4; exec "$@""#),
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let trace = d.join("events.hktrace");
    assert!(std::fs::metadata(&trace).unwrap().len() <= 4096);
    let report = run_ok(hookprof().args(["report", "--format=csv"]).arg(&trace));
    let warnings = String::from_utf8_lossy(&report.stderr);
    assert!(!warnings.contains("destructors"), "{warnings}");
    assert!(warnings.contains("the file not writable"), "{warnings}");
    let info = run_ok(hookprof().arg("info").arg(&trace));
    let info = String::from_utf8_lossy(&info.stdout);
    let lost = info
        .lines()
        .find_map(|l| l.strip_prefix("lost:"))
        .unwrap_or_else(|| panic!("{info}"))
        .trim();
    // `lost: N` alone: the header and the LOST chunks agree (else "N (header …, LOST chunks …)").
    assert!(
        lost.parse::<u64>().is_ok_and(|n| n > 0),
        "lost: {lost}\n{info}"
    );
}

/// Issue 37, item 11: HOOKCC_OUTPUT naming a FIFO failed with ESPIPE (pwrite) and lost every
/// record, though the docs say a pipe is written. Now the chunks go into it in order.
#[test]
fn a_fifo_as_the_output_carries_every_record() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build(d);
    let fifo = d.join("trace.fifo");
    run_ok(Command::new("mkfifo").arg(&fifo));
    let copy = d.join("copy.hktrace");
    let mut reader = Command::new("cat")
        .arg(&fifo)
        .stdout(std::fs::File::create(&copy).unwrap())
        .spawn()
        .unwrap();
    // The runtime does not wait for a reader (none: records counted lost): wait until `cat`
    // waits in its open for a writer.
    let wchan = format!("/proc/{}/wchan", reader.id());
    let start = Instant::now();
    while std::fs::read_to_string(&wchan).map_or(true, |w| w.trim() != "wait_for_partner") {
        if start.elapsed() > Duration::from_secs(5) {
            break; // no wchan here: the sleep below has to do
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(50));
    let mut cmd = Command::new(&program);
    cmd.arg("stdio")
        .current_dir(d)
        .env("HOOKCC_OUTPUT", &fifo)
        .env("HOOKCC_BUFFER_RECORDS", "256")
        .env("HOOKCC_SWITCHES", "0")
        .env("HOOKCC_SAMPLE_HZ", "0");
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(reader.wait().unwrap().success());
    assert!(
        std::fs::metadata(&copy).unwrap().len() > 0,
        "nothing came through the FIFO: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(work_calls(&copy), 6000);
    let info = run_ok(hookprof().arg("info").arg(&copy));
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(info.contains("the header matches"), "{info}");
    assert!(
        info.lines().any(|l| l.trim_end() == "lost:              0"),
        "{info}"
    );
}

/// Issue 37, item 11 (the runtime's part of "a ring snapshot's own time is charged to the
/// function it interrupted"): a snapshot's thread writes a PAUSE chunk after its window, from
/// the snapshot's start to its end, which hookprof takes out of the thread's time
/// (tests/reliability.rs on hookprof's side). Before: RING chunks carry no time, and nothing
/// said how long the snapshot took.
#[test]
fn a_ring_snapshot_is_followed_by_a_pause_chunk_of_its_thread() {
    use hookprof::input::format::{Chunk, Trace};
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let trace = ring_trace(d);
    let bytes = std::fs::read(&trace).unwrap();
    let parsed = Trace::new(&bytes).unwrap();
    // Per RING window of the program's thread: its last record's time, then the PAUSE after it.
    let mut windows: Vec<(u64, Option<(u64, u64)>)> = Vec::new();
    for chunk in parsed.chunks() {
        let chunk = chunk.unwrap();
        match chunk.chunk {
            Chunk::Ring { .. } => windows.push((0, None)),
            Chunk::Events(events) => {
                let w = windows.last_mut().expect("records before any RING chunk");
                for r in events.iter() {
                    w.0 = w.0.max(r.unwrap().time);
                }
            }
            Chunk::Pause { from, to } => {
                let w = windows.last_mut().expect("a PAUSE before any RING chunk");
                assert!(w.1.is_none(), "two PAUSE chunks after one window");
                w.1 = Some((from, to));
            }
            _ => {}
        }
    }
    // Three windows: SIGUSR2, hookcc_trace_snapshot(), and the finish at exit (no PAUSE: the
    // trace ends there).
    assert_eq!(windows.len(), 3, "{windows:?}");
    for (last, pause) in &windows[..2] {
        let (from, to) = pause.unwrap_or_else(|| panic!("no PAUSE after a snapshot: {windows:?}"));
        assert!(*last <= from && from <= to, "{windows:?}");
    }
    assert!(windows[2].1.is_none(), "{windows:?}");
    let report = run_ok(hookprof().args(["report", "--format=csv"]).arg(&trace));
    assert!(
        report.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
}
