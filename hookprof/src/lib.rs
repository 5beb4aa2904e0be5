//! hookprof: reads the `.hktrace` files written by the hookcc runtime, and the dumps of
//! hookcc's bare-metal runtimes, and reports on them.
//!
//! Four floors, each importing only its own and the ones below it (tests/layering.rs checks
//! it), and no two modules importing each other:
//! - [`input`]: decoders, bytes into records: the trace format, the stream, core dumps, the
//!   TI, NITRO, PFP and gprof dumps, symbols and lines from ELF and DWARF; their errors name
//!   the byte offset or the file;
//! - [`analysis`]: the replay every view reads the trace through, the per-function model,
//!   the views' filters and names, the TI and NITRO analyses;
//! - [`output`]: every format hookprof writes (report/*, the call graph, `info`, the TI
//!   CSVs, the NITRO text) and how a file is written;
//! - [`commands`]: one module per `hookprof` command, the whole of it on files, which is
//!   all the `hookprof` binary calls.
//!
//! [`fuzz`] holds the fuzzers' entry points (on the commands' floor).

pub mod analysis;
pub mod commands;
pub mod fuzz;
pub mod input;
pub mod output;
