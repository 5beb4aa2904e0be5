//! `hookprof pfp`: a dump of `pfpInst` decoded with the program's ELF file and rendered.

use std::path::{Path, PathBuf};

use object::{Object, ObjectSymbol};

use crate::input::format::Endian;
use crate::input::pfp::{function_points, DumpError, Instance, INSTANCE_SIZE, SYMBOL};

/// Why a dump cannot be decoded, with the file it concerns.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{}: {error}", path.display())]
    Dump { path: PathBuf, error: DumpError },
    #[error("{}: not an ELF file: {error}", path.display())]
    NotElf { path: PathBuf, error: object::Error },
    #[error(
        "{}: has no {SYMBOL} symbol of {INSTANCE_SIZE} bytes: not a program linked with \
         hookcc --hook-runtime=pfp (or a different hookcc version)",
        path.display()
    )]
    NoInstance { path: PathBuf },
}

/// Reads the dump at `dump` of the program `exe` and renders it.
pub fn decode_file(dump: &Path, exe: &Path) -> Result<String, Error> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|error| Error::Io {
            path: path.to_path_buf(),
            error,
        })
    };
    let elf = read(exe)?;
    let file = object::File::parse(&*elf).map_err(|error| Error::NotElf {
        path: exe.to_path_buf(),
        error,
    })?;
    let has_instance = file
        .symbols()
        .chain(file.dynamic_symbols())
        .any(|s| s.name() == Ok(SYMBOL) && s.size() == INSTANCE_SIZE as u64);
    if !has_instance {
        return Err(Error::NoInstance {
            path: exe.to_path_buf(),
        });
    }
    let endian = if file.is_little_endian() {
        Endian::Little
    } else {
        Endian::Big
    };
    let data = read(dump)?;
    let mut instance = Instance::parse(&data, endian).map_err(|error| Error::Dump {
        path: dump.to_path_buf(),
        error,
    })?;
    instance.functions = function_points(&file, endian);
    Ok(instance.render())
}

#[derive(clap::Args, Debug)]
pub struct PfpArgs {
    /// The raw bytes of pfpInst.
    pub dump: PathBuf,
    /// The program's ELF file (the build that filled it).
    #[arg(long, value_name = "ELF")]
    pub exe: PathBuf,
    /// Write the text to FILE instead of standard output (never the input dump).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}
