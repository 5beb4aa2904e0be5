//! `hookprof record` on streams that would have made it write without bound or take quadratic
//! time (issue 37 item 6), built record by record as the bare-metal runtime writes them
//! (docs/trace-format.md, "The stream"; runtime/src/trace_stream.h) and read with --serial.
//! The readers' bounds on real streams and GDB servers: tests/tests/baremetal.rs.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A stream being written.
struct Stream(Vec<u8>);

impl Stream {
    fn new() -> Stream {
        let mut s = Stream(Vec::new());
        // START: version 1, 4-byte pointers, 1 MHz, time 0.
        s.other(0, 0);
        for v in [1, 4, 1_000_000, 0] {
            s.put(v);
        }
        s
    }

    fn put(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    /// A record of kind 3 (`OTHER`), sub-kind `s`, `delta` ticks after the one before.
    fn other(&mut self, delta: u64, s: u64) {
        self.put(delta << 2 | 3);
        self.put(s);
    }

    fn created(&mut self, task: u64) {
        self.other(1, 4);
        self.put(task);
        self.put(1);
        self.0.push(b't');
    }

    fn switch(&mut self, task: u64) {
        self.other(1, 3);
        self.put(task);
    }

    /// An entry of 0x1000 (raw, as the first of a task's) and its exit.
    fn call(&mut self) {
        self.other(1, 5);
        self.put(0x1000 << 1);
        self.put(1 << 2); // exit of the same address
    }

    /// `count` records dropped with task switches among them; `task` runs now.
    fn lost_switching(&mut self, count: u64, task: u64) {
        self.other(1, 2);
        self.put(count);
        self.put(1);
        self.put(task);
    }
}

/// `hookprof record --serial STREAM -o TRACE`: its stderr, and how long it took.
fn record(dir: &Path, stream: &Stream) -> (std::path::PathBuf, String, Duration) {
    let input = dir.join("stream.bin");
    std::fs::write(&input, &stream.0).unwrap();
    let trace = dir.join("stream.hktrace");
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_hookprof"))
        .args(["record", "--quiet", "--serial"])
        .arg(&input)
        .arg("-o")
        .arg(&trace)
        .output()
        .unwrap();
    let took = start.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    (trace, stderr, took)
}

#[test]
fn losses_during_task_switches_write_a_marker_per_switch_not_per_task() {
    // 1000 tasks that each made a call, then 1000 losses that took task switches too, each
    // switching to the next task. Before: every loss wrote a marker into every task, 1000 ×
    // 1000 LOST chunks (a 68 KB stream gave 128 MB); now one per task switched in after a loss.
    let dir = tempfile::tempdir().unwrap();
    let mut s = Stream::new();
    let tasks = 1000u64;
    for task in 1..=tasks {
        s.created(task);
    }
    for task in 1..=tasks {
        s.switch(task);
        s.call();
    }
    for task in 1..=tasks {
        s.lost_switching(3, task);
        s.call();
    }
    let (trace, stderr, _) = record(dir.path(), &s);
    let size = std::fs::metadata(&trace).unwrap().len();
    assert!(
        size < 64 * s.0.len() as u64,
        "a {} byte stream gave a {size} byte trace",
        s.0.len()
    );
    assert!(stderr.contains("3000 lost (1000 places)"), "{stderr}");
    let bytes = std::fs::read(&trace).unwrap();
    let profile = hookprof::analysis::model::Profile::from_bytes(&bytes).unwrap();
    assert_eq!(profile.summary.lost(), 3000);
    let calls: u64 = profile.merged_functions().values().map(|f| f.calls).sum();
    assert_eq!(calls, 2 * tasks);
}

#[test]
fn switches_to_tasks_never_created_take_linear_time() {
    // 100 000 switches, each to a task no CREATED record named. Before: every switch searched
    // every task known, 8.1 s for a stream of 500 KB; now one look-up each.
    let dir = tempfile::tempdir().unwrap();
    let mut s = Stream::new();
    let tasks = 100_000u64;
    for task in 1..=tasks {
        s.switch(task * 8);
        s.call();
    }
    let (trace, stderr, took) = record(dir.path(), &s);
    assert!(stderr.contains("100000 task switches"), "{stderr}");
    // A debug build on a busy machine: seconds for the quadratic search, a fraction for one
    // look-up a switch.
    assert!(
        took < Duration::from_secs(4),
        "{took:?} for {tasks} switches"
    );
    let info = Command::new(env!("CARGO_BIN_EXE_hookprof"))
        .arg("info")
        .arg(&trace)
        .output()
        .unwrap();
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(
        info.contains(&format!("threads:           {tasks}")),
        "{}",
        &info[..info.len().min(2000)]
    );
}
