//! The decoder of record chunks alone, without the replay: decodes every EVENTS and PACKED
//! chunk of a trace as `hookprof report` does (a batch of 32 records at a time, through
//! `Events::cursor`) and prints records per second, the median of the runs.
//!
//! ```text
//! cargo build --release -p hookprof --example decode_bench
//! target/release/examples/decode_bench TRACE [RUNS] [--iter]
//! valgrind --tool=callgrind target/release/examples/decode_bench TRACE 1
//! ```
//!
//! `--iter` decodes through `Events::iter` (a `Result` per record) instead. Under callgrind,
//! the decoder's instructions per record are `Cursor::fill`'s inclusive count divided by the
//! records printed (`callgrind_annotate --inclusive=yes`); the program's total adds about 10
//! a record for this bench's own loop (the checksum) and well under one for reading the file.

use std::time::Instant;

use hookprof::input::format::{Chunk, Record, Trace};

/// What `Replay::events` decodes at a time.
const BATCH: usize = 32;

/// Decodes every record chunk once; returns the records and a checksum of them (so that
/// nothing is optimized away, and two ways of decoding can be compared).
fn decode_all(trace: &Trace<'_>, through_iter: bool) -> (u64, u64) {
    let mut records = 0u64;
    let mut sum = 0u64;
    let mut batch = [Record::entry(0, 0); BATCH];
    for chunk in trace.chunks() {
        let Ok(chunk) = chunk else { break };
        let Chunk::Events(events) = chunk.chunk else {
            continue;
        };
        if through_iter {
            for record in events.iter() {
                let Ok(r) = record else { break };
                sum = sum
                    .wrapping_mul(31)
                    .wrapping_add(r.time ^ r.address ^ r.kind as u64);
                records += 1;
            }
            continue;
        }
        let mut cursor = events.cursor();
        loop {
            let (len, error) = cursor.fill(&mut batch);
            for r in &batch[..len] {
                sum = sum
                    .wrapping_mul(31)
                    .wrapping_add(r.time ^ r.address ^ r.kind as u64);
            }
            records += len as u64;
            if error.is_some() || len < BATCH {
                break;
            }
        }
    }
    (records, sum)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let through_iter = args.iter().any(|a| a == "--iter");
    let positional: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let Some(path) = positional.first() else {
        eprintln!("usage: decode_bench TRACE [RUNS] [--iter]");
        std::process::exit(2);
    };
    let runs: usize = positional
        .get(1)
        .map(|s| s.parse().expect("RUNS is a number"))
        .unwrap_or(5);
    let bytes = std::fs::read(path).unwrap_or_else(|e| {
        eprintln!("decode_bench: {path}: {e}");
        std::process::exit(1);
    });
    let trace = Trace::new(&bytes).unwrap_or_else(|e| {
        eprintln!("decode_bench: {path}: {e}");
        std::process::exit(1);
    });
    let mut rates = Vec::new();
    let mut seen = None;
    for _ in 0..runs {
        let start = Instant::now();
        let (records, sum) = decode_all(&trace, through_iter);
        let seconds = start.elapsed().as_secs_f64();
        assert!(seen.is_none_or(|s| s == (records, sum)), "runs disagree");
        seen = Some((records, sum));
        rates.push(records as f64 / seconds);
    }
    let (records, sum) = seen.unwrap_or_default();
    rates.sort_by(f64::total_cmp);
    let median = rates.get(rates.len() / 2).copied().unwrap_or(0.0);
    let all: Vec<String> = rates.iter().map(|r| format!("{:.1}", r / 1e6)).collect();
    println!(
        "{records} records (checksum {sum:#018x}), {} through {}: median {:.1} M records/s (runs: {})",
        path,
        if through_iter { "iter" } else { "cursor" },
        median / 1e6,
        all.join(" ")
    );
}
