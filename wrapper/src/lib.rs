//! The hookcc driver: a drop-in clang-19 that inserts function hooks.
//!
//! [`driver::plan`] turns hookcc's command line into the clang command to run; the binary
//! (`src/main.rs`) only gathers the arguments and runs that command.
//!
//! The modules import each other in one direction only, never in a circle: `args`, `inputs`,
//! `options` and `toolchain` import nothing of the crate; `man` and `runtime` → `options`;
//! `rust` → `options`, `toolchain`; `cargo` → `options`, `rust`, `toolchain`; `driver` →
//! `args`, `options`, `runtime`, `rust`, `toolchain` (hookprof/tests/layering.rs checks it).

pub mod args;
pub mod cargo;
pub mod driver;
pub mod inputs;
pub mod man;
pub mod options;
pub mod runtime;
pub mod rust;
pub mod toolchain;
