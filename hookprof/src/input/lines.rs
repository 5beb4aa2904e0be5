//! Source files and lines of traced addresses, from the DWARF of the traced executable (the
//! `addr2line` crate), for the views that have a place for them (callgrind's `fl=` and
//! line numbers). Only the executable: shared libraries are not looked into.

use std::path::Path;

use crate::input::records::FunctionRecords;
use crate::input::symbols::{ElfSymbols, TraceModules};

/// The DWARF line tables of the traced executable, with its load bias.
pub struct SourceLines {
    loader: addr2line::Loader,
    bias: u64,
    start: u64,
    end: u64,
    mask: u64,
    /// The executable's functions' records: the native trace's hooks pass them, and their
    /// functions have the lines.
    records: FunctionRecords,
}

impl SourceLines {
    /// The executable's lines: `exe` (`--exe`) or the path in the trace. `None` when the
    /// trace has no MODULE chunk for it or the file cannot be read; an executable without
    /// DWARF (no `-g`) gives no locations.
    pub fn for_executable(summary: &dyn TraceModules, exe: Option<&Path>) -> Option<SourceLines> {
        let module = summary
            .modules()
            .iter()
            .find(|m| m.path.is_none() || (summary.exe().is_some() && m.path == *summary.exe()))?;
        let path = exe
            .map(Path::to_path_buf)
            .or_else(|| summary.exe().clone())?;
        // addr2line opens the file by its path: check that it is a regular file first, as
        // the symbols' loader does (a trace naming a FIFO must not block us).
        drop(crate::input::symbols::open_regular_file(&path).ok()?);
        let loader = addr2line::Loader::new(&path).ok()?;
        let records = ElfSymbols::load_records(&path).unwrap_or_default();
        Some(SourceLines {
            records,
            loader,
            bias: module.bias,
            start: module.start,
            end: module.end,
            mask: summary.header().address_mask(),
        })
    }

    /// The run-time address of the function a run-time address of the executable names: its
    /// record's function (what the native trace's hooks pass), else the address itself.
    pub fn entry_point(&self, address: u64) -> u64 {
        let masked = address & self.mask;
        if masked < self.start || masked >= self.end {
            return address;
        }
        self.records.entry_point(address, self.bias, self.mask)
    }

    /// The file and line of a run-time address in the executable (a function's record's: its
    /// function's).
    pub fn location(&self, address: u64) -> Option<(String, u32)> {
        let address = address & self.mask;
        if address < self.start || address >= self.end {
            return None;
        }
        let address = address.wrapping_sub(self.bias) & self.mask;
        let address = self.records.function_of(address).unwrap_or(address);
        let location = self.loader.find_location(address).ok()??;
        Some((location.file?.to_string(), location.line.unwrap_or(0)))
    }
}
