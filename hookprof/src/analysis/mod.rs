//! Floor 1, analysis: what the decoded records mean.
//!
//! - [`replay`]: pairs entries and exits per thread (compensating the hooks' overhead) and
//!   feeds a [`replay::ReplayVisitor`]: every report and view reads a trace through it;
//!   [`compensation`]: the hooks' own time taken out of each thread's timestamps first;
//!   [`trace_replay`]: a trace file's summary and profile through it;
//! - [`model`]: per-function statistics and caller→callee arcs, per thread and merged;
//!   [`ids`]: the maps both use;
//! - [`view`]: the replay's frames named and filtered (`--function`, `--exclude`,
//!   `--thread`, `--depth`, `--min-duration`, `--time-range`), the [`view::View`] trait the
//!   views of [`crate::output::report`] implement, and the opening of a view's input (a
//!   trace, or a TI or NITRO dump converted);
//! - [`ti`]: a TI dump's calls per task and its load bias; [`nitro`]: a NITRO function cost
//!   buffer's calls paired and converted for the views;
//! - [`live`]: a bare-metal stream's records profiled as they come, window by window
//!   (`hookprof top --gdb`), paired as the replay pairs a trace's;
//! - [`warnings`]: what every command says about a trace itself; [`unload`]: which module an
//!   address was when it was recorded (libraries dlclose unloaded).
//!
//! May import: [`crate::input`] and this folder, never [`crate::output`] or
//! [`crate::commands`] (tests/layering.rs).

pub mod compensation;
pub mod ids;
pub mod live;
pub mod model;
pub mod nitro;
pub mod replay;
pub mod ti;
pub mod trace_replay;
pub mod unload;
pub mod view;
pub mod warnings;
