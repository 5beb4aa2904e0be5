//! The reader: a trace's validated header and its chunks, decoded as they are iterated.

use std::path::PathBuf;

use super::chunks::*;
use super::events::*;
use super::layout::*;

/// A trace in memory (usually a memory map) whose header has been validated; iterate its
/// chunks with [`Trace::chunks`].
#[derive(Clone)]
pub struct Trace<'a> {
    data: &'a [u8],
    header: Header,
}

impl<'a> Trace<'a> {
    /// Validates the header of `data`.
    pub fn new(data: &'a [u8]) -> Result<Self, FormatError> {
        let header = Header::parse(data)?;
        Ok(Trace { data, header })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Total size of the trace in bytes.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The chunks in file order. After the first error the iterator ends.
    pub fn chunks(&self) -> Chunks<'a> {
        Chunks {
            bytes: Bytes {
                data: self.data,
                endian: self.header.endian,
            },
            pos: self.header.header_size as usize,
            mask: self.header.address_mask(),
            version: self.header.version,
            failed: false,
            uncovered: None,
        }
    }

    /// The checksum of the file header as it is now (compare with [`Clock::header_check`]).
    pub fn header_checksum(&self) -> u64 {
        checksum(
            self.data.get(..HEADER_SIZE as usize).unwrap_or(&[]),
            self.header.endian,
        )
    }
}

/// Iterator over the chunks of a trace.
pub struct Chunks<'a> {
    bytes: Bytes<'a>,
    pos: usize,
    mask: u64,
    version: u16,
    failed: bool,
    /// The last chunk read, until a CHECK chunk covers it: (offset, end).
    uncovered: Option<(usize, usize)>,
}

impl<'a> Chunks<'a> {
    fn fail(
        &mut self,
        offset: usize,
        kind: FormatErrorKind,
    ) -> Option<Result<ChunkAt<'a>, FormatError>> {
        self.failed = true;
        Some(Err(FormatError {
            offset: offset as u64,
            kind,
        }))
    }

    /// Skips a run of zero 8-byte words starting at `self.pos`; returns the hole if any.
    fn hole(&mut self) -> Option<ChunkAt<'a>> {
        let start = self.pos;
        let data = self.bytes.data;
        let mut pos = start;
        while let Some(word) = data.get(pos..pos.saturating_add(8)) {
            if word.len() < 8 || word.iter().any(|&b| b != 0) {
                break;
            }
            pos += 8;
        }
        // The type and length words of a real chunk are never both zero (type 0 is not a
        // chunk type), so zeros here can only be an unwritten reservation. The trailing
        // 0–7 bytes of a file that is not a multiple of 8 are also skipped when zero.
        if pos == start {
            let rest = data.get(start..).unwrap_or(&[]);
            if !rest.is_empty() && rest.len() < 8 && rest.iter().all(|&b| b == 0) {
                pos = data.len();
            } else {
                return None;
            }
        }
        self.pos = pos;
        self.uncovered = None;
        Some(ChunkAt {
            offset: start as u64,
            chunk_type: 0,
            length: 0,
            thread: 0,
            chunk: Chunk::Hole,
            total_len: (pos - start) as u64,
        })
    }
}

impl<'a> Iterator for Chunks<'a> {
    type Item = Result<ChunkAt<'a>, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let data = self.bytes.data;
        let at = self.pos;
        if at >= data.len() {
            return None;
        }
        if let Some(hole) = self.hole() {
            return Some(Ok(hole));
        }
        let remaining = data.len() - at;
        if remaining < CHUNK_HEADER_SIZE {
            return self.fail(
                at,
                FormatErrorKind::TruncatedChunkHeader {
                    remaining: remaining as u64,
                },
            );
        }
        let (Some(chunk_type), Some(length), Some(thread)) = (
            self.bytes.u32(at),
            self.bytes.u32(at + 4),
            self.bytes.u64(at + 8),
        ) else {
            return self.fail(
                at,
                FormatErrorKind::TruncatedChunkHeader {
                    remaining: remaining as u64,
                },
            );
        };
        let name = ChunkName(chunk_type);
        let payload_start = at + CHUNK_HEADER_SIZE;
        let payload_remaining = (remaining - CHUNK_HEADER_SIZE) as u64;
        if !length.is_multiple_of(8) {
            return self.fail(
                at,
                FormatErrorKind::BadChunkLength {
                    chunk: name,
                    length,
                    multiple: 8,
                },
            );
        }
        if u64::from(length) > payload_remaining {
            return self.fail(
                at,
                FormatErrorKind::TruncatedChunk {
                    chunk: name,
                    declared: length,
                    remaining: payload_remaining,
                },
            );
        }
        let payload_end = payload_start + length as usize;
        let payload = Bytes {
            data: &data[payload_start..payload_end],
            endian: self.bytes.endian,
        };
        let chunk = match decode_payload(
            chunk_type,
            length,
            payload,
            payload_start as u64,
            self.mask,
            self.version,
        ) {
            Ok(Chunk::Check(check)) => Chunk::Check(Check {
                thread,
                covered: self
                    .uncovered
                    .take()
                    .map(|(from, to)| (from as u64, &data[from..to])),
                ..check
            }),
            Ok(chunk) => {
                self.uncovered = Some((at, payload_end));
                chunk
            }
            Err(kind) => return self.fail(at, kind),
        };
        self.pos = payload_end;
        Some(Ok(ChunkAt {
            offset: at as u64,
            chunk_type,
            length,
            thread,
            chunk,
            total_len: (CHUNK_HEADER_SIZE + length as usize) as u64,
        }))
    }
}

fn decode_payload<'a>(
    chunk_type: u32,
    length: u32,
    payload: Bytes<'a>,
    payload_offset: u64,
    mask: u64,
    version: u16,
) -> Result<Chunk<'a>, FormatErrorKind> {
    let name = ChunkName(chunk_type);
    let need = |min: u32| {
        if length < min {
            Err(FormatErrorKind::ChunkTooShort {
                chunk: name,
                length,
                min,
            })
        } else {
            Ok(())
        }
    };
    let string = |from: usize, what: &'static str| -> Result<&'a [u8], FormatErrorKind> {
        let tail = payload.data.get(from..).unwrap_or(&[]);
        match tail.iter().position(|&b| b == 0) {
            Some(nul) => Ok(&tail[..nul]),
            None => Err(FormatErrorKind::Unterminated { chunk: name, what }),
        }
    };
    let u64_at = |at: usize| payload.u64(at).unwrap_or(0);
    // A loaded object as MODULE and UNLOAD give it: bias, start, end, then (at `path_at`) its
    // path, none if empty.
    let module_at = |path_at: usize| -> Result<Module, FormatErrorKind> {
        let path = string(path_at, "path")?;
        Ok(Module {
            bias: u64_at(0) & mask,
            start: u64_at(8) & mask,
            end: u64_at(16) & mask,
            path: (!path.is_empty()).then(|| bytes_to_path(path)),
        })
    };
    Ok(match chunk_type {
        chunk_type::EXE => {
            need(8)?;
            Chunk::Exe {
                path: bytes_to_path(string(0, "path")?),
            }
        }
        chunk_type::MODULE => {
            need(32)?;
            Chunk::Module(module_at(24)?)
        }
        chunk_type::EVENTS => {
            if !(length as usize).is_multiple_of(RECORD_SIZE) {
                return Err(FormatErrorKind::BadChunkLength {
                    chunk: name,
                    length,
                    multiple: RECORD_SIZE as u32,
                });
            }
            Chunk::Events(Events {
                bytes: payload,
                offset: payload_offset,
                mask,
                version,
                packed: None,
            })
        }
        chunk_type::PACKED => {
            need(pack::FIXED_SIZE as u32)?;
            let records = payload.u32(0).unwrap_or(0);
            let stream = payload.u32(4).unwrap_or(0);
            if u64::from(stream) > u64::from(length) - pack::FIXED_SIZE as u64 {
                return Err(FormatErrorKind::PackedStreamLength { stream, length });
            }
            let start = pack::FIXED_SIZE;
            Chunk::Events(Events {
                bytes: Bytes {
                    data: &payload.data[start..start + stream as usize],
                    endian: payload.endian,
                },
                offset: payload_offset + start as u64,
                mask,
                version,
                packed: Some(PackedHead {
                    records,
                    first_time: u64_at(8),
                }),
            })
        }
        chunk_type::LOST => {
            need(8)?;
            Chunk::Lost {
                count: u64_at(0),
                at: payload.u64(8),
            }
        }
        chunk_type::THREAD => {
            need(16)?;
            Chunk::Thread {
                sequence: u64_at(0),
                name: String::from_utf8_lossy(string(8, "name")?).into_owned(),
            }
        }
        chunk_type::CLOCK => {
            need(24)?;
            Chunk::Clock(Clock {
                ticks_per_second: u64_at(0),
                first_tick: u64_at(8),
                last_tick: u64_at(16),
                header_check: payload.u64(24),
            })
        }
        chunk_type::OVERHEAD => {
            need(24)?;
            Chunk::Overhead(Overhead {
                self_ticks: u64_at(0),
                child_ticks: u64_at(8),
                pairs: u64_at(16),
                count_ticks: payload.u64(24).unwrap_or(0),
                count_calls: payload.u64(32).unwrap_or(0),
            })
        }
        chunk_type::PAUSE => {
            need(16)?;
            Chunk::Pause {
                from: u64_at(0),
                to: u64_at(8),
            }
        }
        chunk_type::RING => {
            need(8)?;
            Chunk::Ring { dropped: u64_at(0) }
        }
        chunk_type::FOLDED => {
            need(16)?;
            Chunk::Folded {
                min_ticks: u64_at(0),
                calls: u64_at(8),
            }
        }
        chunk_type::PROFILE => {
            need(crate::input::cct::FIXED_SIZE as u32)?;
            let u32_at = |at: usize| payload.u32(at).unwrap_or(0);
            let fixed = (
                [u64_at(0), u64_at(8), u64_at(16), u64_at(24)],
                [u32_at(32), u32_at(36), u32_at(40), u32_at(44)],
            );
            let stream = &payload.data[crate::input::cct::FIXED_SIZE..];
            Chunk::Profile(Box::new(crate::input::cct::CallTree::decode(
                fixed, stream, mask,
            )?))
        }
        chunk_type::CHECK => {
            if length != 8 {
                // Exactly one word: a longer one would swallow the chunks after it.
                return Err(FormatErrorKind::CheckLength { length });
            }
            Chunk::Check(Check {
                sum: u64_at(0),
                thread: 0,
                covered: None,
                endian: payload.endian,
            })
        }
        chunk_type::END => {
            need(8)?;
            Chunk::End { tick: u64_at(0) }
        }
        chunk_type::SWITCH => {
            need(Switches::FIXED_SIZE as u32)?;
            let pairs = (Switches::FIXED_SIZE..payload.data.len().saturating_sub(15))
                .step_by(16)
                .map(|at| (u64_at(at), u64_at(at + 8)))
                .collect();
            Chunk::Switch(Switches {
                anchor_ticks: u64_at(0),
                anchor_ns: u64_at(8),
                lost: u64_at(16),
                pairs,
            })
        }
        chunk_type::SAMPLE => {
            need(Samples::FIXED_SIZE as u32)?;
            let points = (Samples::FIXED_SIZE..payload.data.len().saturating_sub(15))
                .step_by(16)
                .map(|at| (u64_at(at), u64_at(at + 8)))
                .collect();
            Chunk::Sample(Samples {
                anchor_ticks: u64_at(0),
                anchor_ns: u64_at(8),
                period_ns: u64_at(16),
                in_hooks: u64_at(24),
                points,
            })
        }
        chunk_type::THROTTLE => {
            need(Throttle::FIXED_SIZE as u32)?;
            let count = u64_at(24);
            let room = (payload.data.len() - Throttle::FIXED_SIZE) / Throttle::ENTRY_SIZE;
            if count > room as u64 {
                return Err(FormatErrorKind::BadThrottle { count, room });
            }
            let functions = (0..count as usize)
                .map(|i| {
                    let at = Throttle::FIXED_SIZE + i * Throttle::ENTRY_SIZE;
                    Throttled {
                        address: u64_at(at) & mask,
                        timed: u64_at(at + 8),
                        counted: u64_at(at + 16),
                        at: u64_at(at + 24),
                    }
                })
                .collect();
            Chunk::Throttle(Throttle {
                min_calls: u64_at(0),
                factor: u64_at(8),
                pair_ticks: u64_at(16),
                functions,
            })
        }
        chunk_type::WRITER => {
            need(32)?;
            Chunk::Writer(WriterStats {
                cpu_ns: u64_at(0),
                wait_ns: u64_at(8),
                slices: u64_at(16),
                wall_ns: u64_at(24),
            })
        }
        chunk_type::COUNTED => {
            need(8)?;
            let count = u64_at(0);
            let room = (payload.data.len() - 8) / 16;
            if count > room as u64 {
                return Err(FormatErrorKind::BadCounted { count, room });
            }
            Chunk::Counted(
                (0..count as usize)
                    .map(|i| (u64_at(8 + 16 * i) & mask, u64_at(16 + 16 * i)))
                    .collect(),
            )
        }
        chunk_type::UNLOAD => {
            need(40)?;
            Chunk::Unload {
                module: module_at(32)?,
                tick: u64_at(24),
            }
        }
        _ => Chunk::Unknown,
    })
}

#[cfg(unix)]
fn bytes_to_path(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
fn bytes_to_path(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}
