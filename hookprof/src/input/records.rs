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

use object::{Object, ObjectSection, SectionFlags, SectionKind};

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
}

impl FunctionRecords {
    /// Keeps what finding records needs of `file`: its writable sections' bytes (the records
    /// are among them; a few KiB in most programs) and its code's ranges.
    pub fn read(file: &object::File<'_>) -> FunctionRecords {
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
        FunctionRecords {
            data,
            code,
            offset_field: if file.is_64() { 2 * 8 + 4 } else { 2 * 4 + 4 },
            little_endian: file.is_little_endian(),
        }
    }

    /// The function whose record is at `address` (an ELF virtual address, the kind bit
    /// cleared), or `None` where `address` is not a record: outside every writable section,
    /// not 8-aligned, or naming no address in the code.
    pub fn function_of(&self, address: u64) -> Option<u64> {
        if address % 8 != 0 {
            return None;
        }
        let index = self
            .data
            .partition_point(|(start, _)| *start <= address)
            .checked_sub(1)?;
        let (start, bytes) = &self.data[index];
        let at = usize::try_from(address - start + self.offset_field).ok()?;
        let field: [u8; 4] = bytes.get(at..at.checked_add(4)?)?.try_into().ok()?;
        let offset = if self.little_endian {
            i32::from_le_bytes(field)
        } else {
            i32::from_be_bytes(field)
        };
        let function = (address + self.offset_field).wrapping_add_signed(i64::from(offset));
        let in_code = self
            .code
            .iter()
            .any(|&(lo, hi)| lo <= function && function < hi);
        in_code.then_some(function)
    }
}
