//! Reading a dump file, bounded; a NITRO dump's magic checked before it is read whole.

use std::fs::File;
use std::io;
use std::path::Path;

use crate::input::error::NitroError;
use crate::input::nitro::{header_offset, Dump};

/// The largest dump `hookprof ti` and `hookprof nitro` read (a target's record buffer is far
/// smaller; CCS hex text takes 2.75 bytes per byte of memory). Without a bound, `/dev/zero` or
/// a huge sparse file would be read until memory ran out.
pub const MAX_DUMP_BYTES: u64 = 256 << 20;

/// Reads at most `limit` bytes of the file at `path`: an error, before reading anything, if
/// it is a regular file larger than that, or once more than `limit` bytes came (a device, a
/// pipe).
pub fn read_bounded(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    use io::Read;
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a directory",
        ));
    }
    let too_large = |what: String| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!(
                "{what}, more than the {} MiB hookprof reads as a dump (a target's record \
                 buffer is smaller): is this the dump?",
                limit >> 20
            ),
        )
    };
    if meta.is_file() && meta.len() > limit {
        return Err(too_large(format!("{} bytes", meta.len())));
    }
    let mut data = Vec::new();
    file.take(limit.saturating_add(1)).read_to_end(&mut data)?;
    if data.len() as u64 > limit {
        return Err(too_large(format!("more than {limit} bytes")));
    }
    Ok(data)
}

/// The first `limit` bytes of the file at `path` (fewer if it is shorter).
pub fn read_bounded_prefix(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    use io::Read;
    let file = File::open(path)?;
    if file.metadata()?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a directory",
        ));
    }
    let mut data = Vec::new();
    file.take(limit).read_to_end(&mut data)?;
    Ok(data)
}

/// The bytes of the NITRO buffer dump at `dump_path`, read whole only once its first bytes
/// have its magic (`hookprof nitro`).
pub fn read_nitro_dump(dump_path: &Path) -> Result<Vec<u8>, NitroError> {
    let io_error = |error| NitroError::Io {
        path: dump_path.to_path_buf(),
        error,
    };
    let dump_error = |error| NitroError::Dump {
        path: dump_path.to_path_buf(),
        error,
    };
    // The magic first, from the first bytes only: a file that is no buffer dump (or
    // /dev/zero) is refused without reading it all; its first MiB still gives the hint of
    // where a magic is, if anywhere.
    let start = read_bounded_prefix(dump_path, 1 << 20).map_err(io_error)?;
    if header_offset(&start).is_none() {
        return Err(dump_error(Dump::parse(&start).unwrap_err()));
    }
    read_bounded(dump_path, MAX_DUMP_BYTES).map_err(io_error)
}
