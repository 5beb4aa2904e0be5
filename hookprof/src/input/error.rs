//! The errors of hookprof's library, each naming the file it concerns.

use std::io;
use std::path::PathBuf;

use crate::input::format::FormatError;
use crate::input::nitro::{self, Kind};
use crate::input::symbols::SymbolError;
use crate::input::ti::DumpError as TiDumpError;
use crate::input::ti_program::ElfError as TiElfError;

/// Everything that can go wrong in hookprof's library, with the file it concerns.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    // The underlying errors are part of the message, not `source()`, so that printing the
    // chain does not repeat them.
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
    #[error("{}: {error}", path.display())]
    Format { path: PathBuf, error: FormatError },
    /// A trace that does not exist, with what its program says ([`crate::input::missing`]).
    #[error("{}: {why}", path.display())]
    NoTrace { path: PathBuf, why: String },
    #[error(transparent)]
    Symbols(#[from] SymbolError),
    #[error("{}: refusing to write the report over the input trace", path.display())]
    OutputIsInput { path: PathBuf },
    #[error("cannot write the output: {error}")]
    Write { error: io::Error },
    /// Creating, writing or replacing an output file ([`crate::output::file`]).
    #[error("{}: cannot {action}: {error}", path.display())]
    Output {
        path: PathBuf,
        action: &'static str,
        error: io::Error,
    },
    #[error("{}: {message}", path.display())]
    Unsupported { path: PathBuf, message: String },
    /// Traces of different executables given to a command that adds them up
    /// (`commands::several`): `list` is every trace with its executable.
    #[error(
        "these traces are runs of {programs} different programs, which the report would add up \
         as one: {list}. Give the traces of one program (a glob such as `prog.*.hktrace` \
         matches every run of prog in the directory, and `*.hktrace` other programs' too), or \
         --mixed-programs to add them up anyway"
    )]
    DifferentPrograms { programs: usize, list: String },
    #[error(transparent)]
    Ti(#[from] TiError),
    #[error(transparent)]
    Nitro(#[from] NitroError),
    #[error("{} has times in {} and {} in {}: they cannot be compared", a.display(), unit_a, b.display(), unit_b)]
    DiffUnits {
        a: PathBuf,
        unit_a: &'static str,
        b: PathBuf,
        unit_b: &'static str,
    },
}

/// Everything `hookprof ti` and `hookprof callgraph` can fail with, with the file it concerns.
#[derive(Debug, thiserror::Error)]
pub enum TiError {
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
    #[error("{}: {error}", path.display())]
    Dump { path: PathBuf, error: TiDumpError },
    #[error("{}: {error}", path.display())]
    Elf { path: PathBuf, error: TiElfError },
    #[error("{}: refusing to write an output file over the input dump", path.display())]
    OutputIsInput { path: PathBuf },
    /// Writing an output file ([`crate::output::file`]).
    #[error(transparent)]
    Output(Box<Error>),
    #[error(
        "{}: only {agreeing} of the {distinct} function addresses in its records are functions \
         of {}: not a dump of that program's ProfileData (or not a TI dump at all); give the \
         ELF file of the build that wrote it",
        path.display(),
        exe.display()
    )]
    NotThisProgram {
        path: PathBuf,
        exe: PathBuf,
        agreeing: usize,
        distinct: usize,
    },
}

/// Everything `hookprof nitro` (`commands::nitro::decode_file`) can fail with, with the file it concerns.
#[derive(Debug, thiserror::Error)]
pub enum NitroError {
    #[error("{}: {error}", path.display())]
    Io { path: PathBuf, error: io::Error },
    #[error("{}: {error}", path.display())]
    Dump {
        path: PathBuf,
        error: nitro::DumpError,
    },
    #[error("{}: {error}", path.display())]
    Elf {
        path: PathBuf,
        error: crate::input::nitro_program::ElfError,
    },
    #[error(
        "{}: a NITRO {kind} buffer: the views read function cost measurement buffers (entries \
         and exits with their times); decode this one with `hookprof nitro`",
        path.display()
    )]
    NotForViews { path: PathBuf, kind: Kind },
}
