//! The `.hktrace` format, versions 1 to 5: a reader that never panics and a [`Writer`].
//!
//! The layout is defined once here for the Rust side and once in
//! `runtime/src/trace_format.h` for the C side; `docs/trace-format.md` is the contract
//! between them. Every error carries the byte offset where reading went wrong and says
//! what was expected there.
//!
//! Reading is zero-copy over a byte slice (usually a memory map, see [`crate::input::trace_file::TraceFile`]):
//! chunks and records are decoded one at a time as they are iterated, so memory does not
//! grow with the length of the trace.

mod chunks;
mod events;
mod integrity;
mod layout;
mod read;
#[cfg(test)]
mod tests;
mod write;

pub use chunks::*;
pub use events::*;
pub use integrity::*;
pub use layout::*;
pub use read::*;
pub use write::*;
