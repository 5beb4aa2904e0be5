//! `hookprof nitro`: a NITRO buffer dump decoded into the text the program prints.

use std::path::Path;

use crate::input::error::NitroError as Error;
use crate::input::nitro::{header_offset, Dump};
use crate::input::nitro_program::ProgramImage;
use crate::output::nitro::{render, Decoded, Options};

/// Decodes the dump at `dump_path` with names from the ELF file `exe`.
pub fn decode_file(dump_path: &Path, exe: &Path, options: &Options) -> Result<Decoded, Error> {
    let read = |path: &Path| {
        std::fs::read(path).map_err(|error| Error::Io {
            path: path.to_path_buf(),
            error,
        })
    };
    let io_error = |error| Error::Io {
        path: dump_path.to_path_buf(),
        error,
    };
    let dump_error = |error| Error::Dump {
        path: dump_path.to_path_buf(),
        error,
    };
    // The magic first, from the first bytes only: a file that is no buffer dump (or
    // /dev/zero) is refused without reading it all; its first MiB still gives the hint of
    // where a magic is, if anywhere.
    let start = crate::input::read::read_bounded_prefix(dump_path, 1 << 20).map_err(io_error)?;
    if header_offset(&start).is_none() {
        return Err(dump_error(Dump::parse(&start).unwrap_err()));
    }
    let data = crate::input::read::read_bounded(dump_path, crate::input::read::MAX_DUMP_BYTES)
        .map_err(io_error)?;
    let dump = Dump::parse(&data).map_err(dump_error)?;
    let elf = read(exe)?;
    let mut image = ProgramImage::new(&elf, &dump.header).map_err(|error| Error::Elf {
        path: exe.to_path_buf(),
        error,
    })?;
    let mut decoded = render(&dump, &image, options);
    let mut warnings = image.take_warnings();
    warnings.append(&mut decoded.warnings);
    decoded.warnings = warnings;
    Ok(decoded)
}
