//! hookcc's own options: taken off the command line before clang sees it.
//!
//! `types` holds what the options make (`HookOptions`, `PassConfig`, the runtime component);
//! `names` the table of the options' names (and the near misses of a misspelling); `parse`
//! reads them off the command line and the environment; `help` is `hookcc --help`. One
//! direction: `parse` → `types` → `names`.

mod help;
mod names;
mod parse;
#[cfg(test)]
mod tests;
mod types;

pub use help::HELP;
pub use names::{is_own_option, near_own_option};
pub use parse::{read_glob_files, take_own_options};
pub use types::*;
