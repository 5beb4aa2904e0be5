//! Reading a dump file, bounded.

use std::fs::File;
use std::io;
use std::path::Path;

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
