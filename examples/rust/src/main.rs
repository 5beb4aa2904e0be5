//! The Rust half of the example: checksums words with the C CRC-32 and sums the digits of a
//! number through a C walk that calls back into Rust. One trace holds both languages'
//! functions:
//!
//! - `mixed::checksum` ×3, C `crc32` ×3, C `crc_byte` ×10 (4 + 2 + 4 bytes);
//! - C `for_each_digit` ×4 (2026 has four digits, one call per digit), `mixed::visit_digit` ×4.

use std::sync::atomic::{AtomicU32, Ordering};

extern "C" {
    fn crc32(data: *const u8, len: usize) -> u32;
    fn for_each_digit(n: u32, visit: extern "C" fn(u32));
}

static DIGIT_SUM: AtomicU32 = AtomicU32::new(0);

/// The CRC-32 of `word`, by the C code.
fn checksum(word: &str) -> u32 {
    // SAFETY: crc32 reads exactly `len` bytes from `data`, which `word` provides.
    unsafe { crc32(word.as_ptr(), word.len()) }
}

/// Called by C's for_each_digit once per digit.
extern "C" fn visit_digit(digit: u32) {
    DIGIT_SUM.fetch_add(digit, Ordering::Relaxed);
}

fn main() {
    for word in ["hook", "cc", "rust"] {
        println!("crc32({word}) = {:08x}", checksum(word));
    }
    // SAFETY: visit_digit has the signature for_each_digit expects.
    unsafe { for_each_digit(2026, visit_digit) };
    println!("digit sum of 2026 = {}", DIGIT_SUM.load(Ordering::Relaxed));
}
