//! Floor 2, outputs: every format hookprof writes, from analysed data.
//!
//! - [`report`]: the flat profile (text, CSV, JSON) and one module per view (timeline,
//!   perfetto, flame, speedscope, callgrind, calltree, percentiles, parquet, gmon, diff);
//! - [`callgraph`]: the Dynamic Call Graph; [`info`]: what `hookprof info` prints;
//! - [`ti`]: the CSV files, status report and call graph of a TI analysis; [`nitro`]: the
//!   text a NITRO program prints for its buffer;
//! - [`pprof`]: `export --format=pprof`'s gzipped profile.proto;
//! - [`file`](mod@file): how every output file is written (temporary, rename, mode, gzip);
//! - [`progress`]: the progress bar on standard error of a long replay.
//!
//! May import: [`crate::analysis`] and [`crate::input`]'s data types (records, the names of
//! [`crate::input::symbols::Resolve`], source lines, byte order), never a decoder's parsing
//! and never [`crate::commands`] (tests/layering.rs checks the floors).

pub mod block_writer;
pub mod callgraph;
pub mod file;
pub mod gprof;
pub mod info;
pub mod nitro;
pub mod pfp;
pub mod pprof;
pub mod progress;
pub mod report;
pub mod stream_trace;
pub mod ti;
