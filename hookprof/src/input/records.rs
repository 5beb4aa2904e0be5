//! The functions' records of a native trace's ELF file: what its hooks are passed.
//!
//! `hookcc --trace` gives every instrumented function a record (`struct hkrt_fn`,
//! runtime/src/trace/functions.h) in a writable data section — `hookcc_fns` on a hosted
//! target, `.data` on bare metal — and its hooks pass the record's address (+ 2 for an exit)
//! where they used to pass the function's. A record holds, at a fixed offset, its function's
//! address less the field's own (`function_offset`, an `int32_t` the linker fills in), so the
//! function of a record is found in the file's bytes alone: in an executable, a PIE or a shared
//! library, with no dynamic relocation to apply (docs/trace-format.md, "Functions' records").
//!
//! An address in an executable section is a function's, as in traces before the records (and
//! the other runtimes' hooks, which pass functions' addresses).
//!
//! A record also holds its function's name (a pointer, relocated in a PIE or a shared
//! library): in a stripped file, read here, it names the functions the symbol table no longer
//! does.

use std::collections::HashMap;

use object::{Object, ObjectSection, RelocationTarget, SectionFlags, SectionKind};

/// The section of the records on a hosted target (bare metal's are among `.data`'s).
const SECTION: &str = "hookcc_fns";
/// The longest name read from a record.
const NAME_MAX: usize = 4096;

/// The writable data sections of one ELF file and where its code is, to find a record's
/// function.
#[derive(Clone, Debug, Default)]
pub struct FunctionRecords {
    /// (address, bytes) of each writable section with contents, sorted by address.
    data: Vec<(u64, Vec<u8>)>,
    /// [start, end) of each executable section, sorted.
    code: Vec<(u64, u64)>,
    /// Where `function_offset` is in a record: after two pointers and 1 + 1 + 2 bytes.
    offset_field: u64,
    little_endian: bool,
    /// The names the records hold, by record address: read only for a file without a symbol
    /// table (`strip`), where they are the only names of its functions.
    names: HashMap<u64, String>,
}

impl FunctionRecords {
    /// Keeps what finding records needs of `file`: its writable sections' bytes (the records
    /// are among them; a few KiB in most programs) and its code's ranges; with `names`, the
    /// names the records of its `hookcc_fns` section hold.
    pub fn read(file: &object::File<'_>, names: bool) -> FunctionRecords {
        let mut data = Vec::new();
        let mut code = Vec::new();
        for section in file.sections() {
            let address = section.address();
            let (write, exec) = match section.flags() {
                SectionFlags::Elf { sh_flags, .. } => (
                    sh_flags.0 & object::elf::SHF_WRITE.0 != 0,
                    sh_flags.0 & object::elf::SHF_EXECINSTR.0 != 0,
                ),
                _ => (false, false),
            };
            if exec {
                code.push((address, address.saturating_add(section.size())));
            } else if write && section.kind() != SectionKind::UninitializedData {
                if let Ok(bytes) = section.data() {
                    if !bytes.is_empty() {
                        data.push((address, bytes.to_vec()));
                    }
                }
            }
        }
        data.sort_by_key(|(address, _)| *address);
        code.sort_unstable();
        let mut records = FunctionRecords {
            data,
            code,
            offset_field: if file.is_64() { 2 * 8 + 4 } else { 2 * 4 + 4 },
            little_endian: file.is_little_endian(),
            names: HashMap::new(),
        };
        if names {
            records.names = records.read_names(file);
        }
        records
    }

    /// The name of each record of the file's `hookcc_fns` section: its first field, a pointer
    /// to the string, is the section's bytes, or in a PIE or a shared library the addend of
    /// the dynamic relocation there (a `RELATIVE` one: the string is the file's own).
    fn read_names(&self, file: &object::File<'_>) -> HashMap<u64, String> {
        let mut names = HashMap::new();
        let Some(section) = file.section_by_name(SECTION) else {
            return names;
        };
        let (start, size) = (section.address(), section.size());
        let pointer = if file.is_64() { 8 } else { 4 };
        let record = 2 * pointer + 8 + 8;
        let mut addends = HashMap::new();
        for (at, relocation) in file.dynamic_relocations().into_iter().flatten() {
            if at >= start
                && at < start + size
                && !relocation.has_implicit_addend()
                && relocation.target() == RelocationTarget::Absolute
            {
                addends.insert(at, relocation.addend() as u64);
            }
        }
        let mut at = start;
        while at + record <= start + size {
            let name = addends
                .get(&at)
                .copied()
                .or_else(|| self.word(at, pointer))
                .and_then(|pointer| c_string(file, pointer));
            if let Some(name) = name.filter(|n| !n.is_empty()) {
                names.insert(at, name);
            }
            at += record;
        }
        names
    }

    /// The `size`-byte word at `address` in the writable sections kept.
    fn word(&self, address: u64, size: u64) -> Option<u64> {
        let index = self
            .data
            .partition_point(|(start, _)| *start <= address)
            .checked_sub(1)?;
        let (start, bytes) = &self.data[index];
        let at = usize::try_from(address - start).ok()?;
        let raw = bytes.get(at..at.checked_add(size as usize)?)?;
        let mut word = [0u8; 8];
        if self.little_endian {
            word[..raw.len()].copy_from_slice(raw);
            Some(u64::from_le_bytes(word))
        } else {
            word[8 - raw.len()..].copy_from_slice(raw);
            Some(u64::from_be_bytes(word))
        }
    }

    /// The run-time address of the function a run-time `address` of this file names, the file
    /// loaded at `bias` (`mask`: the trace's address width): its record's function where it is
    /// a record, else `address` itself.
    pub fn entry_point(&self, address: u64, bias: u64, mask: u64) -> u64 {
        let elf = (address & mask).wrapping_sub(bias) & mask;
        match self.function_of(elf) {
            Some(function) => function.wrapping_add(bias) & mask,
            None => address,
        }
    }

    /// The name a record at `address` holds, where the file's symbols were not there to name its
    /// function (read only for such a file).
    pub fn name(&self, address: u64) -> Option<&str> {
        self.names.get(&address).map(String::as_str)
    }

    /// The function whose record is at `address` (an ELF virtual address, the kind bit
    /// cleared), or `None` where `address` is not a record: outside every writable section,
    /// not 8-aligned, or naming no address in the code.
    pub fn function_of(&self, address: u64) -> Option<u64> {
        if address & 7 != 0 {
            return None;
        }
        let field = address + self.offset_field;
        // The field's four bytes, signed.
        let offset = self.word(field, 4)? as u32 as i32;
        let function = field.wrapping_add_signed(i64::from(offset));
        let in_code = self
            .code
            .iter()
            .any(|&(lo, hi)| lo <= function && function < hi);
        in_code.then_some(function)
    }
}

/// The NUL-terminated string at `address` in one of `file`'s sections, if it is UTF-8 (at most
/// [`NAME_MAX`] bytes).
fn c_string(file: &object::File<'_>, address: u64) -> Option<String> {
    let section = file
        .sections()
        .find(|s| s.address() <= address && address < s.address() + s.size())?;
    let bytes = section.data().ok()?;
    let from = usize::try_from(address - section.address()).ok()?;
    let rest = bytes.get(from..)?;
    let end = rest.iter().take(NAME_MAX).position(|&b| b == 0)?;
    std::str::from_utf8(&rest[..end]).ok().map(str::to_string)
}
