//! seeds/nitro-sdk-profiler.txt §4.4–4.5 in Rust: `cargo hookcc run -profile
//! --hook-runtime=functioncost`. test1 runs once, test2 three times, test3 four times; the
//! statistics dump has exactly those three lines (test2 does 8 times the work).

use hookcc::nitro::{self, Statistics};

static mut SINK: u32 = 0;

/// Not measured itself (§1.3), and calls nothing: any Rust function it called, even an
/// iterator's `next`, would have hooks and a line of its own in the dump.
#[hookcc::profile(off)]
fn work(n: u32) {
    let mut i = 0;
    while i < n * 1000 {
        // SAFETY: one thread; a plain store the optimizer cannot drop (volatile semantics are
        // not needed: the dump only needs test2 to cost more than test1).
        unsafe { SINK ^= i };
        i += 1;
    }
}

fn test1() {
    work(1);
}

fn test2() {
    work(8);
}

fn test3() {
    work(1);
}

fn main() {
    let cost: &'static mut [u32; 0x3000 / 4] = Box::leak(Box::new([0; 0x3000 / 4]));
    let stat: &'static mut [u32; 0x300 / 4] = Box::leak(Box::new([0; 0x300 / 4]));
    nitro::init_function_cost(cost);
    let mut statistics = Statistics::new(stat);
    // Loops without iterators, whose methods would have hooks and lines in the dump.
    test1();
    let mut i = 0;
    while i < 3 {
        test2();
        i += 1;
    }
    while i < 7 {
        test3();
        i += 1;
    }
    statistics.calc();
    statistics.dump();
}
