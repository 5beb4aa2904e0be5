//! The layer every view (`timeline`, `flame`, `callgrind`, `replay`) reads the trace
//! through: the replay layer's frames, named, with the shared filters applied.
//!
//! [`Viewer`] is a [`ReplayVisitor`](crate::analysis::replay::ReplayVisitor): it names each function once (per address, by the
//! [`Resolve`](crate::input::symbols::Resolve) it is given), decides for every frame whether the [`Filter`] shows it, and
//! hands the shown frames to a [`View`], with a stack of its own that holds only the shown
//! frames (without filters, a view that keeps only a number per frame, [`View::NODES`], has
//! it in the replay's frame instead, and the Viewer keeps no stack). What a filter hides is
//! hidden alike in every view:
//!
//! - `--thread`: frames of other threads;
//! - `--function=GLOB`: frames that are not a matching function or inside one;
//! - `--exclude=GLOB`: a matching function and everything it calls;
//! - `--depth=N`: frames deeper than N shown frames;
//! - `--min-duration`: calls shorter than the duration (and so everything they call);
//! - `--time-range`: calls that start outside the range (the calls they make that start
//!   inside it are shown).
//!
//! The time of a hidden call counts as the own (exclusive) time of the nearest shown frame
//! around it: [`ViewFrame::child_ticks`] sums only the shown children.
//!
//! Memory grows with the threads, the distinct functions and the stack depths, never with
//! the number of records: a call's visibility under `--min-duration` is known only at its
//! exit, so the shown frames still open are handed to the view ([`View::enter`]) when their
//! first long-enough descendant (or they themselves) closes — which keeps every thread's
//! events in time order, since a frame whose descendant is long enough is long enough too.
//!
//! The views themselves are outputs ([`crate::output::report`]: each implements [`View`] and
//! writes through [`crate::output::block_writer::BlockWriter`]); this module is the analysis
//! they share, and [`Prepared`] opens a view's input through the door for inputs,
//! [`crate::input::open`]: a `.hktrace`, or a TI or NITRO dump converted there.

mod clock;
mod filter;
mod frames;
mod prepared;
mod trace_info;
mod viewer;

pub use clock::*;
pub use filter::*;
pub use frames::*;
pub use prepared::*;
pub use trace_info::*;
pub use viewer::*;
