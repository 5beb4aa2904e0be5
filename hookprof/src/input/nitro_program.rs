//! The program of a NITRO buffer: name strings read from the loadable segments of its ELF
//! file, after subtracting the load bias (the buffer's `anchor` minus the ELF's
//! `__PROFILE_ENTRY`).

use std::collections::HashMap;

use object::{Object, ObjectKind, ObjectSegment, ObjectSymbol};

use crate::input::format::Endian;
use crate::input::nitro::{Header, ANCHOR_SYMBOL};
use crate::input::symbols::hex_name;

/// Reads the NUL-terminated name string at a run-time address of the program.
pub trait NameSource {
    /// The string's bytes without the NUL, or `None` if it cannot be read.
    fn read_name(&self, address: u64) -> Option<Vec<u8>>;
}

impl NameSource for HashMap<u64, String> {
    fn read_name(&self, address: u64) -> Option<Vec<u8>> {
        self.get(&address).map(|s| s.as_bytes().to_vec())
    }
}

/// Why names cannot be read from an ELF file for a buffer.
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    #[error("not an ELF file: {0}")]
    NotElf(object::Error),
    #[error("a {elf} ELF file cannot be the program of a buffer with {dump}")]
    Mismatch { elf: String, dump: String },
    #[error(
        "has no {ANCHOR_SYMBOL} symbol, so the load bias of the program cannot be computed: \
         was it linked with hookcc's calltrace or functioncost runtime (-profile \
         --hook-runtime=calltrace|functioncost)?"
    )]
    NoAnchor,
    #[error(
        "its {ANCHOR_SYMBOL} is at 0x{symbol:x} and it is not position-independent, but the \
         buffer says 0x{anchor:x}: it is not the program that filled the buffer"
    )]
    WrongProgram { symbol: u64, anchor: u64 },
}

/// The loadable segments of the program's ELF file, and its load bias: reads name strings
/// at run-time addresses.
pub struct ProgramImage<'a> {
    /// (ELF virtual address, file bytes) of each PT_LOAD segment.
    segments: Vec<(u64, &'a [u8])>,
    /// Run-time address minus ELF address.
    pub bias: u64,
    mask: u64,
    warnings: Vec<String>,
}

impl<'a> ProgramImage<'a> {
    /// Reads the ELF image `elf` for the buffer described by `header`.
    pub fn new(elf: &'a [u8], header: &Header) -> Result<ProgramImage<'a>, ElfError> {
        let file = object::File::parse(elf).map_err(ElfError::NotElf)?;
        let elf_pointer = if file.is_64() { 8 } else { 4 };
        let elf_endian = if file.is_little_endian() {
            Endian::Little
        } else {
            Endian::Big
        };
        if elf_pointer != header.pointer_size || elf_endian != header.endian {
            return Err(ElfError::Mismatch {
                elf: format!("{}-bit {elf_endian}", elf_pointer * 8),
                dump: format!(
                    "{}-byte pointers, {} (header bytes 10 and 11)",
                    header.pointer_size, header.endian
                ),
            });
        }
        let symbol = file
            .symbol_by_name(ANCHOR_SYMBOL)
            .or_else(|| {
                file.dynamic_symbols()
                    .find(|s| s.name_bytes() == Ok(ANCHOR_SYMBOL.as_bytes()))
            })
            .filter(|s| s.is_definition())
            .map(|s| s.address())
            .ok_or(ElfError::NoAnchor)?;
        let mask = if elf_pointer == 4 {
            u64::from(u32::MAX)
        } else {
            u64::MAX
        };
        let bias = header.anchor.wrapping_sub(symbol) & mask;
        let mut warnings = Vec::new();
        if bias != 0 && file.kind() != ObjectKind::Dynamic {
            return Err(ElfError::WrongProgram {
                symbol,
                anchor: header.anchor,
            });
        }
        if bias % 4096 != 0 {
            warnings.push(format!(
                "the load bias computed from the buffer's anchor (0x{:x}) and the ELF's \
                 {ANCHOR_SYMBOL} (0x{symbol:x}) is 0x{bias:x}, not a multiple of the page \
                 size: the ELF is probably not the program that filled the buffer",
                header.anchor
            ));
        }
        let segments = file
            .segments()
            .filter_map(|s| Some((s.address(), s.data().ok()?)))
            .collect();
        Ok(ProgramImage {
            segments,
            bias,
            mask,
            warnings,
        })
    }

    /// Warnings about the ELF file and the buffer (drained).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }
}

impl NameSource for ProgramImage<'_> {
    fn read_name(&self, address: u64) -> Option<Vec<u8>> {
        let elf_address = address.wrapping_sub(self.bias) & self.mask;
        self.segments.iter().find_map(|&(start, data)| {
            let offset = usize::try_from(elf_address.checked_sub(start)?).ok()?;
            let tail = data.get(offset..)?;
            let nul = tail.iter().position(|&b| b == 0)?;
            Some(tail[..nul].to_vec())
        })
    }
}

/// Names with a cache and a count of the addresses that could not be read.
pub(crate) struct Names<'a> {
    pub(crate) source: &'a dyn NameSource,
    pub(crate) cache: HashMap<u64, Option<Vec<u8>>>,
}

impl Names<'_> {
    pub(crate) fn get(&mut self, address: u64) -> Vec<u8> {
        if address == 0 {
            // The runtime prints a NULL name as "(null)".
            return b"(null)".to_vec();
        }
        let source = self.source;
        self.cache
            .entry(address)
            .or_insert_with(|| source.read_name(address))
            .clone()
            .unwrap_or_else(|| hex_name(address).into_bytes())
    }

    pub(crate) fn unreadable(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .cache
            .iter()
            .filter(|(_, n)| n.is_none())
            .map(|(&a, _)| a)
            .collect();
        v.sort_unstable();
        v
    }
}
