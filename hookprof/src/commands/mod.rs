//! Floor 3, commands: one module per `hookprof` command, each a thin function over files
//! that opens the input ([`crate::input`]), analyses it ([`crate::analysis`]) and writes
//! the output ([`crate::output`]). Each module also holds its command's clap arguments
//! (`ReportArgs` in [`report`], …), which the `hookprof` binary (main.rs) parses the command
//! line with before it calls these; [`arguments`] parses the values several commands take;
//! [`info`] and [`coredump`] hold only the arguments of `info` and `core` (the binary calls the
//! input and output modules for those); [`view_options`] holds what the view commands share; [`record`] is
//! `hookprof record`, reading a target's stream; [`attach`] is `ps`, `attach` and `detach`, the
//! client of a running program's control channel; [`several`] is what the commands that take
//! several traces say of them, and refuse.
//!
//! May import: every floor below. Nothing below imports it (tests/layering.rs).

pub mod arguments;
pub mod attach;
pub mod callgraph;
pub mod callgrind;
pub mod coredump;
pub mod diff;
pub mod export;
pub mod flame;
pub mod gmon;
pub mod gprof;
pub mod info;
pub mod nitro;
pub mod pfp;
pub mod record;
pub mod replay;
pub mod report;
pub mod several;
pub mod speedscope;
pub mod ti;
pub mod timeline;
pub mod top;
pub mod tui;
pub mod view_options;
