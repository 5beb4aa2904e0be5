//! The sniffers behind [`crate::input::door`]: what a file is, from its first bytes. Only the
//! door calls them (tests/layering.rs).

use std::path::Path;

use crate::input::error::{Error, NitroError, TiError};
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

/// What a file that is neither a `.hktrace` nor a NITRO buffer is: a PFP or gprof dump, a core
/// file or a stream by their first bytes, else a TI dump.
pub fn dump_kind(path: &Path) -> Result<Kind, Error> {
    let start = crate::input::read::read_bounded_prefix(path, 64).map_err(|error| Error::Io {
        path: path.to_path_buf(),
        error,
    })?;
    Ok(if crate::input::pfp::starts_like(&start) {
        Kind::Pfp
    } else if crate::input::gprof::starts_like(&start) {
        Kind::Gprof
    } else if is_core(&start) {
        Kind::Core
    } else if crate::input::stream::starts_like(&start) {
        Kind::Stream
    } else {
        Kind::Ti
    })
}

/// An ELF file of type `ET_CORE` (4), in the byte order its `EI_DATA` says.
fn is_core(start: &[u8]) -> bool {
    let (Some(magic), Some(&data), Some(e_type)) =
        (start.get(..4), start.get(5), start.get(16..18))
    else {
        return false;
    };
    let e_type = match data {
        1 => u16::from_le_bytes([e_type[0], e_type[1]]),
        2 => u16::from_be_bytes([e_type[0], e_type[1]]),
        _ => return false,
    };
    magic == b"\x7fELF" && e_type == 4
}

/// What a file is, from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A `.hktrace` file.
    Trace,
    /// A NITRO profiler buffer (call trace, function cost or statistics).
    Nitro,
    /// A dump of PFP's `pfpInst`.
    Pfp,
    /// A dump of hookcc's gprof data (`hookcc_gprof_data`).
    Gprof,
    /// A core file (of a program built with `hookcc --trace`, for `hookprof core`).
    Core,
    /// The bytes of a target's stream (`hookprof record --serial`'s input).
    Stream,
    /// A TI dump: the record buffer ProfileData, binary or CCS hex (no magic: what is left).
    Ti,
}
