//! Code whose small functions a release build inlines away: the hooked release build should
//! keep that (issue 35, item 3). The result is printed so nothing is optimized out.

use std::collections::HashMap;

#[derive(Clone, Copy)]
struct Meters(f64);

impl Meters {
    fn value(self) -> f64 {
        self.0
    }
    fn add(self, other: Meters) -> Meters {
        Meters(self.0 + other.0)
    }
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn words(text: &str) -> impl Iterator<Item = &str> + '_ {
    text.split(|c: char| !c.is_ascii() || !is_word_byte(c as u8))
        .filter(|w| !w.is_empty())
}

/// Counts the bytes equal to `needle`, 16 at a time where the CPU has SSE2.
fn count_byte(haystack: &[u8], needle: u8) -> usize {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        let mut count = 0;
        let chunks = haystack.chunks_exact(16);
        let rest = chunks.remainder();
        for chunk in chunks {
            // SAFETY: SSE2 is part of x86-64; the loads read the 16 bytes of the chunk.
            let mask = unsafe {
                let v = _mm_loadu_si128(chunk.as_ptr() as *const __m128i);
                _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(needle as i8)))
            };
            count += mask.count_ones() as usize;
        }
        count + rest.iter().filter(|&&b| b == needle).count()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        haystack.iter().filter(|&&b| b == needle).count()
    }
}

fn main() {
    let text = "the quick brown fox jumps over the lazy dog and the dog sleeps ".repeat(200);
    let mut freq: HashMap<&str, usize> = HashMap::new();
    for w in words(&text) {
        *freq.entry(w).or_insert(0) += 1;
    }
    let mut top: Vec<(&str, usize)> = freq.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let total = (0..1000)
        .map(|i| Meters(i as f64))
        .fold(Meters(0.0), Meters::add)
        .value();
    println!(
        "{:?} {} {}",
        &top[..3],
        total,
        count_byte(text.as_bytes(), b'o')
    );
}
