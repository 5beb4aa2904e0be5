//! The ELF file of a TI dump's program ([`Program::parse`]): pointer size and byte order (which
//! the dump does not hold), and the names of addresses, global symbols or all of them.

use std::collections::BTreeMap;

use object::{Architecture, Object, ObjectKind, ObjectSection, ObjectSymbol, SymbolKind};

use crate::input::format::Endian;
use crate::input::symbols::demangle;
use crate::input::ti::Layout;

/// Why the ELF file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ElfError {
    #[error("not an ELF file: {0}")]
    NotElf(object::Error),
}

/// A named address of the program.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Named {
    /// ELF address; bit 0 cleared for Thumb functions.
    address: u64,
    names: Vec<String>,
}

/// What the post tool needs from the program's ELF file.
#[derive(Clone, Debug)]
pub struct Program {
    pub layout: Layout,
    /// Position-independent (ET_DYN): recorded addresses are the ELF's plus a load bias.
    pub position_independent: bool,
    /// The ELF value of `ProfileData`, if the file has the symbol.
    pub profile_data: Option<u64>,
    /// Named addresses, sorted by address.
    named: Vec<Named>,
    /// Every function symbol's address (local ones too), to infer a load bias.
    pub(crate) functions: Vec<u64>,
}

impl Program {
    /// Reads `elf`: names from its global symbols, or all symbols (local ones too) with
    /// `all_symbols`. Function and data symbols are names; with `all_symbols` also untyped
    /// ones (labels) and section symbols (named after their section: the seed's
    /// `.text - SL2MemoryBufInit`, where a section starts with a function); file and Arm
    /// mapping symbols (`$a`, `$t`, `$d`, `$x`) never.
    pub fn parse(elf: &[u8], all_symbols: bool) -> Result<Program, ElfError> {
        let file = object::File::parse(elf).map_err(ElfError::NotElf)?;
        let layout = Layout {
            pointer_size: if file.is_64() { 8 } else { 4 },
            endian: if file.is_little_endian() {
                Endian::Little
            } else {
                Endian::Big
            },
        };
        let thumb = file.architecture() == Architecture::Arm;
        let mut by_address: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        let mut functions = Vec::new();
        let mut profile_data = None;
        // .symtab, or .dynsym in a stripped file.
        let mut symbols: Vec<object::Symbol<'_, '_>> = file.symbols().collect();
        if symbols.is_empty() {
            symbols = file.dynamic_symbols().collect();
        }
        for s in symbols {
            // object counts no section symbol as a definition; a defined one has its section.
            let section_symbol = s.kind() == SymbolKind::Section && s.section_index().is_some();
            if !s.is_definition() && !section_symbol {
                continue;
            }
            let Ok(mut name) = s.name() else { continue };
            if name.is_empty() && s.kind() == SymbolKind::Section && all_symbols {
                // ELF section symbols are nameless: they stand for their section.
                name = s
                    .section_index()
                    .and_then(|i| file.section_by_index(i).ok())
                    .and_then(|section| section.name().ok())
                    .unwrap_or("");
            }
            if name.is_empty() || name.starts_with('$') {
                continue;
            }
            let mut address = s.address();
            if thumb && s.kind() == SymbolKind::Text {
                address &= !1;
            }
            if s.kind() == SymbolKind::Text {
                functions.push(address);
            }
            if name == "ProfileData" {
                profile_data = Some(address);
            }
            let wanted_kind = match s.kind() {
                SymbolKind::Text | SymbolKind::Data => true,
                SymbolKind::Unknown | SymbolKind::Section => all_symbols,
                _ => false,
            };
            if wanted_kind && (all_symbols || s.is_global()) {
                by_address.entry(address).or_default().push(demangle(name));
            }
        }
        let named = by_address
            .into_iter()
            .map(|(address, mut names)| {
                names.sort();
                names.dedup();
                Named { address, names }
            })
            .collect();
        functions.sort_unstable();
        functions.dedup();
        Ok(Program {
            layout,
            position_independent: file.kind() == ObjectKind::Dynamic,
            profile_data,
            named,
            functions,
        })
    }

    /// A program from names given directly (tests, or names from elsewhere).
    pub fn from_names(layout: Layout, names: impl IntoIterator<Item = (u64, String)>) -> Program {
        let mut by_address: BTreeMap<u64, Vec<String>> = BTreeMap::new();
        for (address, name) in names {
            by_address.entry(address).or_default().push(name);
        }
        Program {
            layout,
            position_independent: false,
            profile_data: None,
            functions: by_address.keys().copied().collect(),
            named: by_address
                .into_iter()
                .map(|(address, mut names)| {
                    names.sort();
                    names.dedup();
                    Named { address, names }
                })
                .collect(),
        }
    }

    /// The name of the ELF address `address` (low 2 bits clear): the names of the symbol
    /// there, else of the first symbol in `[address, address + 3]` (functions aligned to
    /// less than 4 bytes), joined with " - ".
    pub fn name(&self, address: u64) -> Option<String> {
        let i = self.named.partition_point(|n| n.address < address);
        let n = self.named.get(i)?;
        (n.address - address <= 3).then(|| n.names.join(" - "))
    }
}
