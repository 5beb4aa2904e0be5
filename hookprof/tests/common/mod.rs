//! Synthetic traces shared by the integration tests, written with the library's Writer.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use hookprof::input::format::{Clock, Endian, Header, Module, Record, Writer, FLAG_COMPLETE};

pub const MAIN: u64 = 0x1000;
pub const A: u64 = 0x2000;
pub const B: u64 = 0x3000;
pub const FACT: u64 = 0x4000;
pub const X: u64 = 0x5000;
pub const Y: u64 = 0x6000;
pub const Z: u64 = 0x7000;
/// Not in [`names`]: shown as hex.
pub const ANON: u64 = 0x8000;

pub const TID_MAIN: u64 = 100;
pub const TID_WORKER: u64 = 4242;

/// A complete header at 1 GHz (ticks are nanoseconds).
pub fn header(endian: Endian) -> Header {
    let mut h = Header::new(endian);
    h.ticks_per_second = 1_000_000_000;
    h.flags = FLAG_COMPLETE;
    h.pid = 4321;
    h.start_realtime_ns = 1_700_000_000_000_000_000;
    h.records = 22;
    h.lost = 2;
    h
}

/// Thread 100 ("main", sequence 1): nesting and recursion.
///   main [0,200): a [10,60) { b [20,50) }, b [70,75), fact [100,150) { fact [110,140) { fact [120,130) } },
///   anon [160,161)
pub fn main_thread_records() -> Vec<Record> {
    use Record as R;
    vec![
        R::entry(0, MAIN),
        R::entry(10, A),
        R::entry(20, B),
        R::exit(50, B),
        R::exit(60, A),
        R::entry(70, B),
        R::exit(75, B),
        R::entry(100, FACT),
        R::entry(110, FACT),
        R::entry(120, FACT),
        R::exit(130, FACT),
        R::exit(140, FACT),
        R::exit(150, FACT),
        R::entry(160, ANON),
        R::exit(161, ANON),
        R::exit(200, MAIN),
    ]
}

/// Thread 4242 (no THREAD chunk): unmatched records.
///   x [0,12) { y [5,12) closed by x's exit }, z exits without entry at 8,
///   x [20,…) { y [30,…) } both still open at the end: closed when the trace was finished
///   (the CLOCK chunk's last_tick, 200), or at the thread's last timestamp (30) without it.
pub fn worker_records() -> (Vec<Record>, Vec<Record>) {
    use Record as R;
    (
        vec![R::entry(0, X), R::entry(5, Y), R::exit(8, Z)],
        vec![R::exit(12, X), R::entry(20, X), R::entry(30, Y)],
    )
}

/// The trace of the golden files: two threads whose EVENTS chunks interleave, plus every
/// other chunk type.
pub fn golden_trace(endian: Endian) -> Vec<u8> {
    golden_trace_with(header(endian), true)
}

/// The golden trace with another header, with or without its CLOCK chunk.
pub fn golden_trace_with(header: Header, with_clock: bool) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), &header).unwrap();
    w.exe(Path::new("/nonexistent/golden-prog")).unwrap();
    w.module(&Module {
        bias: 0,
        start: 0x1000,
        end: 0x9000,
        path: None,
    })
    .unwrap();
    let main = main_thread_records();
    let (w1, w2) = worker_records();
    w.events(TID_MAIN, &main[..5]).unwrap();
    w.events(TID_WORKER, &w1).unwrap();
    w.raw_chunk(77, TID_MAIN, &[0xee; 16]).unwrap(); // unknown type: skipped
    w.events(TID_MAIN, &main[5..]).unwrap();
    w.events(TID_WORKER, &w2).unwrap();
    w.lost(TID_WORKER, 2).unwrap();
    w.thread(TID_MAIN, 1, "main").unwrap();
    if with_clock {
        w.clock(&Clock {
            ticks_per_second: 1_000_000_000,
            first_tick: 0,
            last_tick: 200,
            header_check: None,
        })
        .unwrap();
    }
    w.into_inner()
}

pub fn names() -> HashMap<u64, String> {
    [
        (MAIN, "main"),
        (A, "a"),
        (B, "b"),
        (FACT, "fact(int)"),
        (X, "x"),
        (Y, "y"),
        (Z, "z"),
    ]
    .into_iter()
    .map(|(a, n)| (a, n.to_string()))
    .collect()
}

/// A fresh directory for one test's files.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("hookprof-tests")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Compares `actual` with `tests/data/<name>`; a failure names `file:line`. `HOOKPROF_BLESS=1`
/// rewrites the file; a missing golden file fails (never created silently).
pub fn check_golden(name: &str, actual: &str) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name);
    if std::env::var_os("HOOKPROF_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: cannot read the golden file ({e}); create it with HOOKPROF_BLESS=1",
            path.display()
        )
    });
    if expected == actual {
        return;
    }
    let mut expected_lines = expected.lines();
    let mut actual_lines = actual.lines();
    let mut line = 1;
    loop {
        match (expected_lines.next(), actual_lines.next()) {
            (Some(e), Some(a)) if e == a => line += 1,
            (e, a) => panic!(
                "{}:{line}: output differs from the golden file\n  expected: {}\n  actual:   {}\n\
                 full output:\n{actual}\n(HOOKPROF_BLESS=1 rewrites the golden files)",
                path.display(),
                e.unwrap_or("<end of file>"),
                a.unwrap_or("<end of output>"),
            ),
        }
    }
}
