//! Rust workloads for bench/rust_bench.py; every variant builds this same crate, only RUSTFLAGS
//! differ (hookcc's hooks, XRay sleds, mcount calls).
//!
//!   rbench micro N    calls leaf() N times from bench_run(): N + 2 instrumented calls of the
//!                     crate (main's, bench_run, the leafs) plus Rust's start-up functions
//!   rbench json R     R rounds of parsing a generated JSON document into serde_json::Value and
//!                     serializing it again: serde_json's own functions, many of them small
//!
//! Prints a checksum on stdout and, on stderr, `hookbench: loop_ns=T loop_cpu_ns=U`: the time
//! of the measured part alone (CLOCK_MONOTONIC and the process CPU clock around it), so start-up
//! and exit-time trace writing are not in it. As in bench/micro.c the leaf calls are
//! independent of each other (the argument is the loop counter): the loop is throughput-bound,
//! and every instruction a hook adds shows.
//!
//! micro calls no other function of Rust's libraries in its loop: they are compiled into this
//! crate (generic, or `#[inline]` like `u64::wrapping_add` and `black_box`) and would get hooks
//! of their own, several pairs an iteration. Release builds do not check overflow, so plain
//! arithmetic wraps, and leaf's result feeds the printed sum, so the calls stay.
use std::hint::black_box;
use std::time::Instant;

#[inline(never)]
fn leaf(x: u64) -> u64 {
    (x * 2654435761) ^ (x >> 7)
}

/// Unmangled so that callgrind can collect inside it alone (`--toggle-collect=bench_run`).
#[no_mangle]
#[inline(never)]
pub fn bench_run(n: u64) -> u64 {
    let mut acc = 0u64;
    let mut i = 0u64;
    // `while`, not `for`: a range iterator's `next` is a function of this crate and would get
    // hooks of its own (docs/rust.md).
    while i < n {
        acc += leaf(i);
        i += 1;
    }
    acc
}

fn document() -> String {
    let mut s = String::from("[");
    for i in 0..400u32 {
        if i > 0 {
            s.push(',');
        }
        s.push_str(&format!(
            r#"{{"id":{i},"name":"item number {i}","price":{}.{:02},"tags":["a{}","b","c"],"dims":{{"w":{},"h":{},"d":[1,2,3,{i}]}},"ok":{}}}"#,
            i * 7 % 1000,
            i % 100,
            i % 13,
            i % 17,
            i % 19,
            i % 2 == 0
        ));
    }
    s.push(']');
    s
}

#[no_mangle]
#[inline(never)]
pub fn bench_json(rounds: u64, text: &str) -> u64 {
    let mut sum = 0u64;
    let mut r = 0u64;
    while r < rounds {
        let value: serde_json::Value = serde_json::from_str(black_box(text)).expect("valid JSON");
        sum = sum.wrapping_add(serde_json::to_string(&value).expect("serializable").len() as u64);
        r += 1;
    }
    sum
}

fn cpu_ns() -> u64 {
    // The process CPU clock, as bench/micro.c reads it.
    let mut ts = libc_timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { clock_gettime(2 /* CLOCK_PROCESS_CPUTIME_ID */, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[repr(C)]
struct libc_timespec {
    tv_sec: i64,
    tv_nsec: i64,
}

extern "C" {
    fn clock_gettime(clock: i32, ts: *mut libc_timespec) -> i32;
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: rbench micro N | rbench json ROUNDS";
    if args.len() != 3 {
        eprintln!("{usage}");
        std::process::exit(2);
    }
    let n: u64 = args[2].parse().unwrap_or_else(|_| {
        eprintln!("{usage}");
        std::process::exit(2)
    });
    let text = document();
    let (start, cpu) = (Instant::now(), cpu_ns());
    let sum = match args[1].as_str() {
        "micro" => bench_run(n),
        "json" => bench_json(n, &text),
        _ => {
            eprintln!("{usage}");
            std::process::exit(2)
        }
    };
    let (loop_ns, loop_cpu_ns) = (start.elapsed().as_nanos(), cpu_ns() - cpu);
    println!("{sum}");
    eprintln!("hookbench: loop_ns={loop_ns} loop_cpu_ns={loop_cpu_ns}");
}
