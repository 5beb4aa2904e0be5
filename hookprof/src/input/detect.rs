//! What a file is, from its first bytes: a `.hktrace`, a NITRO buffer dump, else (for
//! `hookprof callgraph` and the views) a TI dump.

use std::path::Path;

use crate::input::error::{NitroError, TiError};
use crate::input::nitro::header_offset;

/// Whether the file at `path` is a `.hktrace` (else `hookprof callgraph` reads it as a TI
/// dump).
pub fn is_hktrace(path: &Path) -> Result<bool, TiError> {
    use std::io::Read;
    let mut magic = [0u8; 8];
    let mut f = std::fs::File::open(path).map_err(|error| TiError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    let n = f.read(&mut magic).map_err(|error| TiError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    Ok(n == 8 && magic == crate::input::format::MAGIC)
}

/// Whether the file at `path` starts like a NITRO buffer dump (its magic at one of
/// [`HEADER_OFFSETS`](crate::input::nitro::HEADER_OFFSETS)).
pub fn is_nitro_dump(path: &Path) -> Result<bool, NitroError> {
    let start =
        crate::input::read::read_bounded_prefix(path, 64).map_err(|error| NitroError::Io {
            path: path.to_path_buf(),
            error,
        })?;
    Ok(header_offset(&start).is_some())
}
