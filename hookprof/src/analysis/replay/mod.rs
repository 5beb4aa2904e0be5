//! The replay layer: every report reads the trace through it, so all reports agree on how
//! entries and exits pair up.
//!
//! [`replay`] walks the chunks in file order, keeps one call stack per thread, and pairs
//! records exactly as the section "How the reader pairs records" of docs/trace-format.md
//! says:
//!
//! - an entry pushes a frame;
//! - an exit closes the nearest frame (searching from the top of the stack down) with the
//!   same address; frames above it are closed at the exit's time and counted as
//!   *unmatched entries*;
//! - an exit with no such frame is an *unmatched exit* and is otherwise ignored;
//! - frames still open when the trace ends are closed when the thread ended (its END chunk:
//!   `pthread_exit` inside calls), else when the trace was finished (the CLOCK chunk), else
//!   at the thread's last timestamp, and counted as *closed at end*.
//!
//! A [`ReplayVisitor`] sees every frame open and close with the whole stack, which is what
//! a flat profile, a call graph, Chrome trace events and folded stacks all need. Memory
//! grows with the number of threads, functions and the stack depths, not with the number of
//! records.
//!
//! Every record costs a few array updates: an entry looks its address up once to number the
//! function ([`Frame::function`], in a small hash table that is nearly always hit on the
//! first probe), and the open frames per function that decide [`Frame::outermost`] are
//! counted in a `Vec` indexed by that number; an exit compares its address with the frame
//! on top of the stack. [`replay_bytes`], given the file's bytes, also reads ahead of the
//! records it replays (`hookprof` itself uses it).
//!
//! **Hook-overhead compensation** (on unless
//! [`set_compensation`](crate::analysis::compensation::set_compensation) turns it off): when
//! the trace has an OVERHEAD chunk (the runtime timed its own hooks at start), each thread's
//! timestamps are moved back by the hooks' time so far before anything else sees them
//! ([`crate::analysis::compensation`]), so every report and view shows the same compensated
//! times.

mod matching;
mod prefetch;
mod side;
mod summary;
mod switches;
#[cfg(test)]
mod tests;
mod visitor;
mod walk;

pub use summary::*;
pub use switches::*;
pub use visitor::*;
pub use walk::*;
