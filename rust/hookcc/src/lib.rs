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

/// `<hookcc/nitro.h>`'s function call trace (NITRO-SDK §3): the program of a `-profile` build
/// linked with `--hook-runtime=calltrace` (docs/nitro.md). Linking needs that runtime, as in C.
pub mod nitro {
    use std::ffi::{c_int, c_void};

    use crate::no_hooks;

    /// `OSCallTraceMode`.
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum CallTraceMode {
        /// `OS_CALLTRACE_STACK`: entry pushes a record, exit pops it.
        Stack = 0,
        /// `OS_CALLTRACE_LOG`: entry writes a record into a ring, exit does nothing.
        Log = 1,
    }

    extern "C" {
        fn OS_InitCallTrace(buf: *mut c_void, size: u32, mode: CallTraceMode);
        fn OS_DumpCallTrace();
        fn OS_EnableCallTrace() -> c_int;
        fn OS_DisableCallTrace() -> c_int;
        fn OS_ClearCallTraceBuffer();
        fn OS_InitFunctionCost(buf: *mut c_void, size: u32);
        fn OS_InitStatistics(stat_buf: *mut c_void, size: u32);
        fn OS_CalcStatistics(stat_buf: *mut c_void);
        fn OS_DumpStatistics(stat_buf: *mut c_void);
        fn OS_EnableFunctionCost() -> c_int;
        fn OS_DisableFunctionCost() -> c_int;
    }

    /// A buffer's size in bytes, computed at compile time: the wrappers call nothing with
    /// hooks (not even slice methods, which are compiled into the caller's crate), or a
    /// function cost dump would list it.
    const fn byte_size<const N: usize>() -> u32 {
        assert!(
            N * 4 <= u32::MAX as usize,
            "a NITRO buffer holds at most 4 GiB"
        );
        (N * 4) as u32
    }

    /// `OS_InitCallTrace`: starts recording the calling thread's calls into `buffer`, which the
    /// runtime keeps using for the rest of the program (hence `'static`). In stack mode call it
    /// from the outermost function: frames open now return without a record.
    #[no_hooks]
    pub fn init_call_trace<const N: usize>(buffer: &'static mut [u32; N], mode: CallTraceMode) {
        let bytes = const { byte_size::<N>() };
        // SAFETY: the buffer is exclusively the runtime's from now on ('static, &mut) and
        // `bytes` is its size; the runtime rejects (and reports) a buffer too small.
        unsafe { OS_InitCallTrace(buffer as *mut [u32; N] as *mut c_void, bytes, mode) }
    }

    /// `OS_DumpCallTrace`: prints the calling thread's call trace through the print function.
    #[no_hooks]
    pub fn dump_call_trace() {
        // SAFETY: no arguments; a thread without a call trace prints that it has none.
        unsafe { OS_DumpCallTrace() }
    }

    /// `OS_EnableCallTrace`; returns whether it was enabled before.
    #[no_hooks]
    pub fn enable_call_trace() -> bool {
        // SAFETY: as for dump_call_trace.
        unsafe { OS_EnableCallTrace() != 0 }
    }

    /// `OS_DisableCallTrace`; returns whether it was enabled before.
    #[no_hooks]
    pub fn disable_call_trace() -> bool {
        // SAFETY: as for dump_call_trace.
        unsafe { OS_DisableCallTrace() != 0 }
    }

    /// `OS_ClearCallTraceBuffer`.
    #[no_hooks]
    pub fn clear_call_trace_buffer() {
        // SAFETY: as for dump_call_trace.
        unsafe { OS_ClearCallTraceBuffer() }
    }

    /// `OS_InitFunctionCost` (NITRO-SDK §4, `--hook-runtime=functioncost`): starts measuring
    /// the calling thread's calls into `buffer`, the runtime's from now on.
    #[no_hooks]
    pub fn init_function_cost<const N: usize>(buffer: &'static mut [u32; N]) {
        let bytes = const { byte_size::<N>() };
        // SAFETY: as for init_call_trace.
        unsafe { OS_InitFunctionCost(buffer as *mut [u32; N] as *mut c_void, bytes) }
    }

    /// `OS_EnableFunctionCost`; returns whether it was enabled before.
    #[no_hooks]
    pub fn enable_function_cost() -> bool {
        // SAFETY: as for dump_call_trace.
        unsafe { OS_EnableFunctionCost() != 0 }
    }

    /// `OS_DisableFunctionCost`; returns whether it was enabled before.
    #[no_hooks]
    pub fn disable_function_cost() -> bool {
        // SAFETY: as for dump_call_trace.
        unsafe { OS_DisableFunctionCost() != 0 }
    }

    /// A statistics buffer (`OS_InitStatistics`): one line per function, name, count and cost.
    pub struct Statistics {
        buffer: &'static mut [u32],
    }

    impl Statistics {
        /// `OS_InitStatistics` on `buffer`, which the runtime uses as long as the program runs.
        #[no_hooks]
        pub fn new<const N: usize>(buffer: &'static mut [u32; N]) -> Statistics {
            let bytes = const { byte_size::<N>() };
            // SAFETY: the buffer is exclusively this value's ('static, &mut); `bytes` is its
            // size; the runtime reports a buffer too small.
            unsafe { OS_InitStatistics(buffer as *mut [u32; N] as *mut c_void, bytes) };
            Statistics { buffer }
        }

        /// `OS_CalcStatistics`: adds the calling thread's measurements and clears them.
        #[no_hooks]
        pub fn calc(&mut self) {
            // SAFETY: the buffer was initialized by new and is borrowed mutably here.
            unsafe { OS_CalcStatistics(self.buffer as *mut [u32] as *mut c_void) }
        }

        /// `OS_DumpStatistics`: prints "name: count N, cost C" per function.
        #[no_hooks]
        pub fn dump(&mut self) {
            // SAFETY: as for calc; the runtime only reads the buffer here.
            unsafe { OS_DumpStatistics(self.buffer as *mut [u32] as *mut c_void) }
        }
    }
}
