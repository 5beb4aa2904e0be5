//! `hookprof gprof`: a `gmon.out` for GNU gprof from a memory dump of hookcc's gprof data
//! (`hookcc_gprof_data`, runtime/src/gprof.c, docs/gprof.md), as a bare-metal target's
//! debugger saves it: the same file a hosted program writes at exit.
//!
//! This module decodes the dump ([`Data::parse`]); [`crate::output::gprof`] writes the
//! gmon.out and [`crate::commands::gprof`] reads the files.

use crate::input::format::Endian;

/// The header before the histogram.
pub const STATE_SIZE: usize = 96;
const MAGIC: &[u8; 8] = b"HOOKGPRF";

/// Whether `data` starts like a dump of hookcc's gprof data (its magic).
pub fn starts_like(data: &[u8]) -> bool {
    data.starts_with(MAGIC)
}
const ARC_SIZE: usize = 24;

/// One call-graph arc.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arc {
    pub from_pc: u64,
    pub self_pc: u64,
    pub count: u32,
}

/// The profiling data of a dump, addresses as the program ran.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Data {
    pub low_pc: u64,
    pub high_pc: u64,
    pub load_bias: u64,
    pub interval_us: u32,
    pub histogram: Vec<u16>,
    pub callgraph: bool,
    pub arcs: Vec<Arc>,
    pub arcs_dropped: u64,
    pub hits_outside: u64,
}

/// What is wrong with a dump, at which byte.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DumpError {
    #[error(
        "byte 0: starts with {found:?}, not \"HOOKGPRF\": not a dump of hookcc_gprof_data after \
         profile_on()"
    )]
    Magic { found: String },
    #[error("byte {offset}: {what}")]
    Bad { offset: usize, what: String },
    #[error(
        "byte {have}: the dump ends there, but its header says the data is {need} bytes (dump \
         hookcc_gprof_data_size bytes from hookcc_gprof_data)"
    )]
    Short { have: usize, need: usize },
}

fn align8(n: usize) -> usize {
    (n + 7) & !7
}

impl Data {
    pub fn parse(data: &[u8], endian: Endian) -> Result<Data, DumpError> {
        if data.len() < STATE_SIZE || &data[..8] != MAGIC {
            return Err(DumpError::Magic {
                found: String::from_utf8_lossy(&data[..data.len().min(8)]).into_owned(),
            });
        }
        let field = |offset: usize, size: usize| endian.uint(&data[offset..offset + size]);
        let bad = |offset: usize, what: String| DumpError::Bad { offset, what };
        if field(8, 4) != 1 || field(12, 4) != STATE_SIZE as u64 {
            return Err(bad(
                8,
                format!(
                    "version {} with a {}-byte header, expected 1 and {STATE_SIZE} (another hookcc \
                     version?)",
                    field(8, 4),
                    field(12, 4)
                ),
            ));
        }
        let (low_pc, high_pc) = (field(16, 8), field(24, 8));
        let (bucket_size, hist_count) = (field(40, 4), field(48, 4) as usize);
        let (hash_count, capacity, used) = (field(60, 4) as usize, field(64, 4), field(68, 4));
        if high_pc <= low_pc || !bucket_size.is_power_of_two() {
            return Err(bad(16, format!("bad range 0x{low_pc:x}-0x{high_pc:x}")));
        }
        if (high_pc - low_pc) / bucket_size != hist_count as u64 {
            return Err(bad(
                48,
                format!(
                    "{hist_count} buckets of {bucket_size} bytes do not cover 0x{low_pc:x}-\
                     0x{high_pc:x}"
                ),
            ));
        }
        let hist_at = STATE_SIZE;
        let hash_at = hist_at + align8(hist_count.saturating_mul(2));
        let arcs_at = hash_at + align8(hash_count.saturating_mul(4));
        let need = arcs_at.saturating_add((capacity as usize).saturating_mul(ARC_SIZE));
        if data.len() < need {
            return Err(DumpError::Short {
                have: data.len(),
                need,
            });
        }
        let histogram = (0..hist_count)
            .map(|i| field(hist_at + 2 * i, 2) as u16)
            .collect();
        let arcs = (0..used.min(capacity) as usize)
            .map(|i| {
                let at = arcs_at + i * ARC_SIZE;
                Arc {
                    from_pc: field(at, 8),
                    self_pc: field(at + 8, 8),
                    count: field(at + 16, 4) as u32,
                }
            })
            .collect();
        Ok(Data {
            low_pc,
            high_pc,
            load_bias: field(32, 8),
            interval_us: field(52, 4) as u32,
            histogram,
            callgraph: field(88, 4) != 0,
            arcs,
            arcs_dropped: field(72, 8),
            hits_outside: field(80, 8),
        })
    }
}
