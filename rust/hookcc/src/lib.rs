//! hookcc for Rust programs (docs/rust.md).
//!
//! - [`no_hooks`] and [`profile`]: attributes that keep hooks out of (or, in the NITRO
//!   default-off mode, put them into) a function, its closures and its generic instances.
//! - [`trace`]: the trace runtime's API, `<hookcc/trace.h>`, as safe functions. They exist
//!   only in programs linked with the trace runtime (`cargo hookcc … --trace`); calling them
//!   from a plain build is a link error, as in C.

pub use hookcc_macros::{no_hooks, profile};

// The attributes expand to `::hookcc::…`; this crate uses them on its own wrappers, which are
// the runtime's API and get no hooks (as the runtime itself).
extern crate self as hookcc;

/// `<hookcc/trace.h>`: control of the native trace runtime.
pub mod trace {
    use std::ffi::{c_char, c_int, CStr};

    use crate::no_hooks;

    extern "C" {
        fn hookcc_trace_flush();
        fn hookcc_trace_enable();
        fn hookcc_trace_disable();
        fn hookcc_trace_enabled() -> c_int;
        fn hookcc_trace_path() -> *const c_char;
    }

    /// Writes the calling thread's buffered records to the trace file now (other threads'
    /// are written when their buffers fill, at thread exit and at exit).
    #[no_hooks]
    pub fn flush() {
        // SAFETY: no arguments; the runtime may be called from any thread at any time.
        unsafe { hookcc_trace_flush() }
    }

    /// Starts recording again, in every thread (tracing is process-wide).
    #[no_hooks]
    pub fn enable() {
        // SAFETY: as for flush.
        unsafe { hookcc_trace_enable() }
    }

    /// Stops recording, in every thread, until [`enable`]. Frames open at the switch show up
    /// as unmatched entries or exits in the reader.
    #[no_hooks]
    pub fn disable() {
        // SAFETY: as for flush.
        unsafe { hookcc_trace_disable() }
    }

    /// True if hooks record now (not disabled by [`disable`] or `HOOKCC_DISABLE`, not
    /// finished).
    #[no_hooks]
    #[no_hooks]
    pub fn enabled() -> bool {
        // SAFETY: as for flush.
        unsafe { hookcc_trace_enabled() != 0 }
    }

    /// The trace file's path as opened, if the runtime could open one.
    #[no_hooks]
    pub fn path() -> Option<String> {
        // SAFETY: the runtime returns NULL or a NUL-terminated string it keeps for the life
        // of the process; it is copied here.
        unsafe {
            let p = hookcc_trace_path();
            (!p.is_null()).then(|| CStr::from_ptr(p).to_string_lossy().into_owned())
        }
    }
}

/// What `#[no_hooks]` and `#[profile]` expand to; not an API.
#[doc(hidden)]
pub mod __private {
    /// The "off" mark: hookcc's pass deletes each call and gives its caller no hooks.
    #[inline(always)]
    pub fn hooks_off() {}

    /// The "on" mark (NITRO default-off mode): the caller gets hooks.
    #[inline(always)]
    pub fn hooks_on() {}
}
