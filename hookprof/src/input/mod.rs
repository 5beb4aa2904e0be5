//! Floor 0, inputs: decoders, bytes into records, and nothing else. Each names what is wrong
//! by where it is (the byte offset, the line of a text dump, the file).
//!
//! - the native trace: [`format`](mod@format) (the `.hktrace` layout, its reader and its writer, per
//!   docs/trace-format.md) and [`cct`] (the PROFILE chunk's calling-context tree, which
//!   `format` decodes with it); [`trace_file`] maps a trace file; [`stream`]: the target's
//!   record stream (`hookprof record`); [`coredump`]: the records a core file still holds;
//! - the bare-metal runtimes' dumps: [`ti`] and [`ti_program`] (TI), [`nitro`] and
//!   [`nitro_program`] (NITRO), [`pfp`], [`gprof`]; [`read`] reads a dump with a bound;
//!   [`ti_calls`] (a TI dump's calls in task time) and [`nitro_trace`] convert the dumps the
//!   views read into traces in memory;
//! - the one door for inputs, [`door`]: [`kind`] tells what a file is from its first bytes
//!   (through the sniffers of `detect`, which only this folder sees) and [`open`] opens any
//!   file a view reads as one trace ([`Input`]); nothing outside this folder looks at a
//!   file's bytes to tell its kind (tests/layering.rs);
//! - the program's files: [`symbols`] (ELF symbol tables, demangling), [`records`] (the
//!   functions' records the native trace's hooks pass, read in the ELF file), [`lines`] (DWARF);
//!   [`missing`] says why a trace is not there, from the program that should have written it;
//! - [`error`]: the library's errors, which only name decoders' errors and files.
//!
//! May import: the standard library and the crates, and other modules of this folder, never
//! [`crate::analysis`], [`crate::output`] or [`crate::commands`] (tests/layering.rs).

pub mod cct;
pub mod coredump;
mod detect;
pub mod door;
pub mod error;
pub mod format;
pub mod gprof;
pub mod lines;
pub mod missing;
pub mod nitro;
pub mod nitro_program;
pub mod nitro_trace;
pub mod pfp;
pub mod read;
pub mod records;
pub mod stream;
pub mod symbols;
pub mod ti;
pub mod ti_calls;
pub mod ti_program;
pub mod trace_file;

pub use door::{kind, open, Input, Kind};
