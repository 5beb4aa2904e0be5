//! `hookprof pfp`: the measurement lines of TI's profile points (seeds/ti-pfp-profile-points.txt)
//! from a memory dump of hookcc's PFP instance, `pfpInst` (runtime/src/pfp.c, docs/pfp.md),
//! exactly as the program's `pfpPrintStats()` prints them:
//!
//! ```text
//! ID: 00, n=1000, C=49265, Cmin=49, Cmax=314, C-avg=49.265, Avg-T=6.56867e-05ms
//! ```
//!
//! The dump holds no byte order: the program's ELF file gives it, and must have `pfpInst`.

use std::path::{Path, PathBuf};

use object::{Object, ObjectSymbol};

use crate::input::format::Endian;

/// Bytes before the descriptors.
pub const HEADER_SIZE: usize = 80;
/// Bytes per descriptor.
pub const DESCRIPTOR_SIZE: usize = 96;
/// Profile points (`PFP_PPCNT_MAX`).
pub const COUNT: usize = 32;
/// The whole instance.
pub const INSTANCE_SIZE: usize = HEADER_SIZE + DESCRIPTOR_SIZE * COUNT;
const MAGIC: &[u8; 8] = b"HOOKPFP\0";
const VERSION: u32 = 1;
/// The instance's symbol in the program.
pub const SYMBOL: &str = "pfpInst";

/// One profile point's statistics, as the dump has them.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub id: usize,
    pub enable: bool,
    pub n_count: u32,
    pub c_total: i64,
    pub c_min: u64,
    pub c_max: u64,
    pub alpha: f32,
    pub c_average: f32,
}

/// The instance.
#[derive(Clone, Debug, PartialEq)]
pub struct Instance {
    /// The counter's rate, 0 if the program had not measured it.
    pub ticks_per_second: u64,
    /// Cycles subtracted from every measurement (pfpCalibrate).
    pub overhead: u64,
    pub bad_id: u64,
    pub begin_twice: u64,
    pub end_without_begin: u64,
    pub bad_nesting: u64,
    pub points: Vec<Point>,
    /// The function each id was given to by `hookcc --pfp-functions` (the ELF's hookcc_pfp
    /// section, in the runtime's order: see [`function_points`]); shown as `, fn=NAME`.
    pub functions: Vec<Option<String>>,
}

/// What is wrong with a dump, at which byte.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DumpError {
    #[error(
        "byte {have}: the dump ends there, but pfpInst is {INSTANCE_SIZE} bytes (dump it from \
         &pfpInst for sizeof pfpInst)"
    )]
    Short { have: usize },
    #[error(
        "byte 0: starts with {found:?}, not \"HOOKPFP\\0\": not a dump of pfpInst after \
         pfpCreate()"
    )]
    Magic { found: String },
    #[error("byte {offset}: {field} is {value}, expected {expected} (another hookcc version?)")]
    Layout {
        offset: usize,
        field: &'static str,
        value: u64,
        expected: u64,
    },
}

impl Instance {
    /// Reads the instance at the start of `data` (a longer dump is fine).
    pub fn parse(data: &[u8], endian: Endian) -> Result<Instance, DumpError> {
        if data.len() < INSTANCE_SIZE {
            return Err(DumpError::Short { have: data.len() });
        }
        if &data[..8] != MAGIC {
            return Err(DumpError::Magic {
                found: String::from_utf8_lossy(&data[..8]).into_owned(),
            });
        }
        let field = |offset: usize, size: usize| endian.uint(&data[offset..offset + size]);
        for (offset, name, expected) in [
            (8, "version", u64::from(VERSION)),
            (12, "count", COUNT as u64),
            (16, "descriptor_size", DESCRIPTOR_SIZE as u64),
        ] {
            let value = field(offset, 4);
            if value != expected {
                return Err(DumpError::Layout {
                    offset,
                    field: name,
                    value,
                    expected,
                });
            }
        }
        let points = (0..COUNT)
            .map(|id| {
                let at = HEADER_SIZE + id * DESCRIPTOR_SIZE;
                let d = |offset: usize, size: usize| field(at + offset, size);
                Point {
                    id,
                    enable: d(16, 4) != 0,
                    n_count: d(36, 4) as u32,
                    c_total: d(40, 8) as i64,
                    c_min: d(64, 8),
                    c_max: d(72, 8),
                    alpha: f32::from_bits(d(80, 4) as u32),
                    c_average: f32::from_bits(d(84, 4) as u32),
                }
            })
            .collect();
        Ok(Instance {
            ticks_per_second: field(24, 8),
            overhead: field(32, 8),
            bad_id: field(40, 8),
            begin_twice: field(48, 8),
            end_without_begin: field(56, 8),
            bad_nesting: field(64, 8),
            points,
            functions: Vec::new(),
        })
    }

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
                match self.functions.get(p.id as usize) {
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

/// Why a dump cannot be decoded, with the file it concerns.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}: {error}", path.display())]
    Dump { path: PathBuf, error: DumpError },
    #[error("{}: not an ELF file: {error}", path.display())]
    NotElf { path: PathBuf, error: object::Error },
    #[error(
        "{}: has no {SYMBOL} symbol of {INSTANCE_SIZE} bytes: not a program linked with \
         hookcc --hook-runtime=pfp (or a different hookcc version)",
        path.display()
    )]
    NoInstance { path: PathBuf },
}

/// Reads the dump at `dump` of the program `exe` and renders it.
pub fn decode_file(dump: &Path, exe: &Path) -> Result<String, Error> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|error| Error::Io {
            path: path.to_path_buf(),
            error,
        })
    };
    let elf = read(exe)?;
    let file = object::File::parse(&*elf).map_err(|error| Error::NotElf {
        path: exe.to_path_buf(),
        error,
    })?;
    let has_instance = file
        .symbols()
        .chain(file.dynamic_symbols())
        .any(|s| s.name() == Ok(SYMBOL) && s.size() == INSTANCE_SIZE as u64);
    if !has_instance {
        return Err(Error::NoInstance {
            path: exe.to_path_buf(),
        });
    }
    let endian = if file.is_little_endian() {
        Endian::Little
    } else {
        Endian::Big
    };
    let data = read(dump)?;
    let mut instance = Instance::parse(&data, endian).map_err(|error| Error::Dump {
        path: dump.to_path_buf(),
        error,
    })?;
    instance.functions = function_points(&file, endian);
    Ok(instance.render())
}

/// The ids `hookcc --pfp-functions` gave functions, as the runtime gives them at start-up:
/// the points of section `hookcc_pfp` ({ i32 id; i32 offset of the name from the point }) in
/// the section's order, from id 31 down to 1 (0 is pfpCalibrate's). Indexed by id.
pub fn function_points(file: &object::File<'_>, endian: Endian) -> Vec<Option<String>> {
    use object::ObjectSection;
    let mut names = vec![None; 32];
    let Some(section) = file.section_by_name("hookcc_pfp") else {
        return names;
    };
    let Ok(data) = section.data() else {
        return names;
    };
    // The NUL-terminated string at run-time address `address`, from the section holding it.
    let string_at = |address: u64| -> Option<String> {
        let holder = file
            .sections()
            .find(|s| address >= s.address() && address < s.address().saturating_add(s.size()))?;
        let bytes = holder.data().ok()?;
        let start = usize::try_from(address - holder.address()).ok()?;
        let rest = bytes.get(start..)?;
        let end = rest.iter().position(|&b| b == 0)?;
        Some(String::from_utf8_lossy(&rest[..end]).into_owned())
    };
    for (index, entry) in data.chunks_exact(8).enumerate() {
        let id = 31 - index as i64;
        if id < 1 {
            break;
        }
        let offset = endian.uint(&entry[4..8]) as u32 as i32;
        let point = section.address() + index as u64 * 8;
        names[id as usize] = string_at(point.wrapping_add(offset as i64 as u64));
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seed's measurement example at 750 MHz (its C66x), line for line.
    #[test]
    fn the_seeds_lines() {
        let point = |id, n, c, cmin, cmax| Point {
            id,
            enable: true,
            n_count: n,
            c_total: c,
            c_min: cmin,
            c_max: cmax,
            alpha: 0.0,
            c_average: 0.0,
        };
        let instance = Instance {
            ticks_per_second: 750_000_000,
            overhead: 0,
            bad_id: 0,
            begin_twice: 0,
            end_without_begin: 0,
            bad_nesting: 0,
            points: vec![
                point(0, 1000, 49265, 49, 314),
                point(1, 1000, 750051197, 750048, 752163),
                point(2, 100, 300473741, 3004727, 3005272),
                point(3, 100, 150245906, 1502456, 1502491),
                point(4, 100, 97626144, 976259, 976455),
            ],
            functions: Vec::new(),
        };
        assert_eq!(
            instance.render(),
            "ID: 00, n=1000, C=49265, Cmin=49, Cmax=314, C-avg=49.265, Avg-T=6.56867e-05ms\n\
             ID: 01, n=1000, C=750051197, Cmin=750048, Cmax=752163, C-avg=750051, Avg-T=1.00007ms\n\
             ID: 02, n=100, C=300473741, Cmin=3004727, Cmax=3005272, C-avg=3.00474e+06, Avg-T=4.00632ms\n\
             ID: 03, n=100, C=150245906, Cmin=1502456, Cmax=1502491, C-avg=1.50246e+06, Avg-T=2.00328ms\n\
             ID: 04, n=100, C=97626144, Cmin=976259, Cmax=976455, C-avg=976261, Avg-T=1.30168ms\n"
        );
    }

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

    #[test]
    fn bad_dumps_say_where() {
        assert_eq!(
            Instance::parse(&[0u8; 100], Endian::Little).unwrap_err(),
            DumpError::Short { have: 100 }
        );
        let mut d = vec![0u8; INSTANCE_SIZE];
        assert!(matches!(
            Instance::parse(&d, Endian::Little),
            Err(DumpError::Magic { .. })
        ));
        d[..8].copy_from_slice(MAGIC);
        d[8] = 1;
        d[12] = 32;
        d[16] = 95;
        let err = Instance::parse(&d, Endian::Little).unwrap_err().to_string();
        assert!(
            err.starts_with("byte 16: descriptor_size is 95, expected 96"),
            "{err}"
        );
    }
}
