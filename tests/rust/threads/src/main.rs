//! Four std threads and the main thread call the same functions a number of times known by
//! construction (the argument is the rounds per thread, 100 by default): per round, `step` once,
//! `leaf` twice, and every tenth round `fib(12)` (465 calls). tests/tests/rust.rs checks the
//! counts in every recording mode.

use std::hint::black_box;
use std::sync::mpsc;
use std::thread;

fn leaf(x: u64) -> u64 {
    black_box(x).wrapping_mul(31)
}

fn fib(n: u32) -> u64 {
    if n < 2 {
        u64::from(n)
    } else {
        fib(n - 1) + fib(n - 2)
    }
}

fn step(i: u64) -> u64 {
    let mut sum = leaf(i) ^ leaf(i + 1);
    if i % 10 == 0 {
        sum += fib(black_box(12));
    }
    sum
}

fn rounds(n: u64) -> u64 {
    (0..n).map(step).fold(0, u64::wrapping_add)
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100);
    let (tx, rx) = mpsc::channel();
    let workers: Vec<_> = (0..4)
        .map(|k| {
            let tx = tx.clone();
            thread::Builder::new()
                .name(format!("worker-{k}"))
                .spawn(move || tx.send(rounds(n)).unwrap())
                .unwrap()
        })
        .collect();
    let mine = rounds(n);
    for w in workers {
        w.join().unwrap();
    }
    drop(tx);
    let theirs: u64 = rx.iter().fold(0, u64::wrapping_add);
    println!("sum={}", mine.wrapping_add(theirs));
}
