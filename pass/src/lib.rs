//! The hookcc pass plugin, built once per LLVM major (cargo features `llvm19`, `llvm22`).
//!
//! Loaded into clang-19 (`-fpass-plugin=` and `-fplugin=`), opt-19 (`-load-pass-plugin=`) or rustc
//! (`-Z llvm-plugins=`, the LLVM 22 build), it
//! inserts calls to an entry hook at the start and an exit hook before every return of each
//! function defined in a module. Which hooks, what they receive and when they are inserted
//! (before or after inlining) come from the `-hookcc-*` options, decoded into [`config::Config`].
//!
//! The C++ shim (`shim/shim.cpp`) registers the pass with LLVM's pass builder and calls
//! [`plugin`]'s `hookcc_instrument_module` for each module; everything else is Rust on inkwell.
//!
//! The modules import each other in one direction only, never in a circle:
//! `plugin` → `instrument` → `switches`, `setjmp`, `pfp_points`, `size`, `ffi` (LLVM-C
//! helpers, importing nothing of the crate); `switches` → `size`, `ffi`; `instrument`,
//! `switches`, `config` and `pfp_points` → `mangling`. `config` and `mangling` are LLVM-free;
//! each module's doc says what it may import.

pub mod config;
pub mod mangling;
// The unit-test binary is a program of its own, with no LLVM loaded to resolve the C API
// symbols, so only the LLVM-free parts are compiled into it; the IR tests (tests/ir, run by
// opt-19) and the end-to-end tests cover the rest.
#[cfg(not(test))]
mod ffi;
#[cfg(not(test))]
pub mod instrument;
#[cfg(not(test))]
mod pfp_points;
#[cfg(not(test))]
mod plugin;
#[cfg(not(test))]
mod setjmp;
#[cfg(not(test))]
mod size;
#[cfg(not(test))]
mod switches;
