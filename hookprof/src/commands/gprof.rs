//! `hookprof gprof`: a dump of the gprof data converted to gmon.out with the program's ELF file.

use std::path::{Path, PathBuf};

use object::Object;

use crate::input::format::Endian;
use crate::input::gprof::{Data, DumpError};

/// Why a dump cannot be converted, with the file it concerns.
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
}

/// The gmon.out of the dump at `dump` of the program `exe`, and warnings.
pub fn convert_file(dump: &Path, exe: &Path) -> Result<(Vec<u8>, Vec<String>), Error> {
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
    let endian = if file.is_little_endian() {
        Endian::Little
    } else {
        Endian::Big
    };
    let pointer_size = if file.is_64() { 8 } else { 4 };
    let data = Data::parse(&read(dump)?, endian).map_err(|error| Error::Dump {
        path: dump.to_path_buf(),
        error,
    })?;
    let mut warnings = Vec::new();
    if data.arcs_dropped > 0 {
        warnings.push(format!(
            "{} calls were not recorded: the arc pool was full (more distinct call sites than 5 \
             % of the code size holds)",
            data.arcs_dropped
        ));
    }
    if !data.callgraph {
        warnings.push(
            "the program recorded no call graph (HOOKCC_GPROF_CALLGRAPH=0): use gprof --no-graph"
                .to_string(),
        );
    }
    Ok((data.gmon(pointer_size, endian), warnings))
}

#[derive(clap::Args, Debug)]
pub struct GprofArgs {
    /// The raw bytes of hookcc_gprof_data.
    pub dump: PathBuf,
    /// The program's ELF file: its pointer size and byte order.
    #[arg(long, value_name = "ELF")]
    pub exe: PathBuf,
    /// The gmon.out to write (never the input dump).
    #[arg(short, long, value_name = "FILE", default_value = "gmon.out")]
    pub output: PathBuf,
}
