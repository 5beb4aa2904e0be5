//! seeds/nitro-sdk-profiler.txt §3.5.1 in Rust: `cargo hookcc run -profile
//! --hook-runtime=calltrace`. The dump in test3 shows test3, test2, test1 with r0 = 0x103,
//! 0x101, 0x100 (their first argument), named by their Rust paths. With `--dialect=nitro`
//! instead of `-profile` (hooks off by default), only the `#[hookcc::profile(on)]` functions
//! have hooks: the dump shows test3 and test2.

use hookcc::nitro::{self, CallTraceMode};

fn test1(a: i32) -> i32 {
    test2(a + 1)
}

#[hookcc::profile(on)]
fn test2(a: i32) -> i32 {
    test3(a + 2)
}

#[hookcc::profile(on)]
fn test3(a: i32) -> i32 {
    nitro::dump_call_trace();
    a + 4
}

fn main() {
    let buffer: &'static mut [u32; 0x300 / 4] = Box::leak(Box::new([0; 0x300 / 4]));
    nitro::init_call_trace(buffer, CallTraceMode::Stack);
    println!("{}", test1(0x100));
}
