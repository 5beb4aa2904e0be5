//! `hookprof pfp`: the measurement lines of TI's profile points (seeds/ti-pfp-profile-points.txt)
//! from a memory dump of hookcc's PFP instance, `pfpInst` (runtime/src/pfp.c, docs/pfp.md),
//! exactly as the program's `pfpPrintStats()` prints them:
//!
//! ```text
//! ID: 00, n=1000, C=49265, Cmin=49, Cmax=314, C-avg=49.265, Avg-T=6.56867e-05ms
//! ```
//!
//! The dump holds no byte order: the program's ELF file gives it, and must have `pfpInst`.
//!
//! This module decodes the dump ([`Instance::parse`]); [`crate::output::pfp`] prints it and
//! [`crate::commands::pfp`] reads the files.

use object::Object;

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

/// Whether `data` starts like a dump of `pfpInst` (its magic).
pub fn starts_like(data: &[u8]) -> bool {
    data.starts_with(MAGIC)
}
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
