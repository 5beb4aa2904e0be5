//! What `hookprof pfp` prints: the measurement lines of a PFP instance, exactly as the
//! program's `pfpPrintStats()` prints them (docs/pfp.md).

use crate::input::pfp::Instance;

impl Instance {
    /// What `pfpPrintStats()` prints.
    pub fn render(&self) -> String {
        let mut text = String::new();
        for p in self.points.iter().filter(|p| p.n_count > 0) {
            let average = p.c_total as f64 / f64::from(p.n_count);
            let time = if self.ticks_per_second != 0 {
                format!(
                    "{}ms",
                    format_g(average / self.ticks_per_second as f64 * 1000.0)
                )
            } else {
                "?ms (the counter's rate is not known)".to_string()
            };
            text.push_str(&format!(
                "ID: {:02}, n={}, C={}, Cmin={}, Cmax={}, C-avg={}, Avg-T={time}{}\n",
                p.id,
                p.n_count,
                p.c_total,
                p.c_min,
                p.c_max,
                format_g(average),
                match self.functions.get(p.id) {
                    Some(Some(name)) => format!(", fn={name}"),
                    _ => String::new(),
                }
            ));
        }
        for (count, what) in [
            (self.bad_id, " calls with an id out of range were ignored"),
            (
                self.begin_twice,
                " pfpBegin calls on a point already begun: the point was disabled",
            ),
            (
                self.end_without_begin,
                " pfpEnd calls without pfpBegin were ignored",
            ),
            (
                self.bad_nesting,
                " pfpEnd calls out of nesting order or on another thread's region: the point \
                 was disabled, or the call ignored",
            ),
        ] {
            if count != 0 {
                text.push_str(&format!("PFP: {count}{what}\n"));
            }
        }
        text
    }
}

/// printf's `%g` as runtime/src/pfp.c computes it, step for step in f64 (so that a dump
/// decodes to exactly the program's text): the decimal exponent by scaling by 10, six digits
/// from the value times a power of ten (exact up to 1e22: one rounding) rounded half to even,
/// trailing zeros dropped, `e±XX` below 1e-4 or from 1e6.
pub fn format_g(v: f64) -> String {
    if v.is_nan() {
        return "nan".to_string();
    }
    let (sign, mut v) = if v < 0.0 { ("-", -v) } else { ("", v) };
    if v == 0.0 {
        return format!("{sign}0");
    }
    if v > 1.7e308 {
        return format!("{sign}inf");
    }
    let mut e: i32 = 0;
    let mut m = v;
    while m >= 10.0 {
        m /= 10.0;
        e += 1;
    }
    let mut m = v;
    while m < 1.0 {
        m *= 10.0;
        e -= 1;
    }
    let pow10 = |k: i32| (0..k).fold(1.0f64, |p, _| p * 10.0);
    let mut k = 5 - e;
    while k > 300 {
        v *= pow10(300);
        k -= 300;
    }
    while k < -300 {
        v /= pow10(300);
        k += 300;
    }
    let mut scaled = if k >= 0 { v * pow10(k) } else { v / pow10(-k) };
    if scaled < 99999.5 && k < 300 {
        // the exponent came out one too large (a value just under a power of ten)
        e -= 1;
        scaled *= 10.0;
    }
    let mut n = scaled as u64;
    let rest = scaled - n as f64;
    if rest > 0.5 || (rest == 0.5 && n & 1 == 1) {
        n += 1;
    }
    if n >= 1_000_000 {
        n /= 10;
        e += 1;
    }
    let digits: Vec<u8> = format!("{n:06}").into_bytes();
    let mut last = 5;
    while last > 0 && digits[last] == b'0' {
        last -= 1;
    }
    let text = |range: std::ops::RangeInclusive<usize>| -> String {
        String::from_utf8_lossy(&digits[range]).into_owned()
    };
    let body = if !(-4..6).contains(&e) {
        let mantissa = if last > 0 {
            format!("{}.{}", text(0..=0), text(1..=last))
        } else {
            text(0..=0)
        };
        format!(
            "{mantissa}e{}{:02}",
            if e < 0 { '-' } else { '+' },
            e.unsigned_abs()
        )
    } else if e >= 0 {
        let e = e as usize;
        if last > e {
            format!("{}.{}", text(0..=e), text(e + 1..=last))
        } else {
            text(0..=e)
        }
    } else {
        format!("0.{}{}", "0".repeat((-e - 1) as usize), text(0..=last))
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_g_as_printf() {
        for (v, want) in [
            (0.0, "0"),
            (1.0, "1"),
            (100000.0, "100000"),
            (999999.4, "999999"),
            (999999.5, "1e+06"),
            (1234567.0, "1.23457e+06"),
            (0.0001, "0.0001"),
            (0.00001234, "1.234e-05"),
            (0.5, "0.5"),
            (12.5, "12.5"),
            (-3.25, "-3.25"),
            (1e100, "1e+100"),
        ] {
            assert_eq!(format_g(v), want, "{v}");
        }
    }

    /// printf's %g from Rust's exact decimal formatting: the reference.
    fn printf_g(v: f64) -> String {
        let sci = format!("{:.5e}", v.abs());
        let (mantissa, exponent) = sci.split_once('e').unwrap();
        let e: i32 = exponent.parse().unwrap();
        let strip = |s: String| -> String {
            if s.contains('.') {
                s.trim_end_matches('0').trim_end_matches('.').to_string()
            } else {
                s
            }
        };
        let body = if !(-4..6).contains(&e) {
            format!(
                "{}e{}{:02}",
                strip(mantissa.to_string()),
                if e < 0 { '-' } else { '+' },
                e.unsigned_abs()
            )
        } else {
            strip(format!("{:.*}", (5 - e) as usize, v.abs()))
        };
        format!("{}{body}", if v < 0.0 { "-" } else { "" })
    }

    #[test]
    fn format_g_agrees_with_exact_formatting() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for _ in 0..200_000 {
            // Cycle counts and their averages and times: 1e-9 to 1e13, and integers / n.
            let bits = next();
            let v = match bits % 3 {
                0 => (next() % 10_000_000_000) as f64 / ((next() % 5000) + 1) as f64,
                1 => f64::from_bits(0x3e00_0000_0000_0000 + (next() % 0x0400_0000_0000_0000)),
                _ => (next() % 2_000_000) as f64 + 0.5,
            };
            assert_eq!(format_g(v), printf_g(v), "{v:e}");
        }
    }
}
