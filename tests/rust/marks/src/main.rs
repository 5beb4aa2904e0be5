//! Which functions get hooks, by construction (checked by tests/tests/rust.rs, built with
//! `cargo hookcc run --trace --hook-exclude=marks::noi*`):
//! - `quiet`, its closures (one in `assert!`'s arguments) and both instances of `quiet_generic`: none (`#[hookcc::no_hooks]`);
//! - `noisy`: none (`--hook-exclude`);
//! - `helper` ×3 (called from the unhooked `quiet`), `loud` ×5, `main` ×1: hooks.

use std::hint::black_box;

#[hookcc::no_hooks]
fn quiet(n: u32) -> u32 {
    let next = |x: u32| x + 1;
    // A closure in a macro's arguments: no hooks either.
    let pair = black_box([n, n + 2]);
    assert!(pair.iter().all(|x| x % 2 == n % 2));
    next(n) + helper(n)
}

fn helper(n: u32) -> u32 {
    n * 2
}

#[hookcc::no_hooks]
fn quiet_generic<T: Copy>(x: T) -> T {
    black_box(x)
}

fn noisy(n: u32) -> u32 {
    n + 1
}

fn loud(n: u32) -> u32 {
    n + 2
}

fn main() {
    let mut sum = 0;
    for i in 0..3 {
        sum += quiet(black_box(i));
    }
    let a = quiet_generic(1u8);
    let b = quiet_generic(2u64);
    for i in 0..5 {
        sum += noisy(black_box(i)) + loud(black_box(i));
    }
    hookcc::trace::flush();
    println!(
        "sum={sum} generic={a},{b} tracing={} file={}",
        hookcc::trace::enabled(),
        hookcc::trace::path().is_some()
    );
}
