//! Modules `dlclose` unloaded (UNLOAD chunks, docs/trace-format.md): which module a record's
//! address belongs to depends on when it was made.
//!
//! The loader often puts a library dlopen'ed after another was unloaded at the same
//! addresses; naming by address alone then gave the first library's calls the second's
//! names (issue 37). Each unloaded module gets an alias range, its addresses with bit 48 and
//! up set to its number (user-space addresses are below 2^48 on every target), and a record
//! in its range made before its unload tick is moved there; the alias range is a module of
//! its own (same file, bias shifted), so every report names it by that file's symbols. Its
//! MODULE chunks written before the UNLOAD chunk are left out: the addresses are the next
//! module's from then on.

use crate::input::format::{Module, Record};

/// The UNLOAD chunks of a trace, in the order of their ticks.
#[derive(Clone, Debug, Default)]
pub struct Unloads {
    entries: Vec<Unloaded>,
}

#[derive(Clone, Debug)]
struct Unloaded {
    module: Module,
    tick: u64,
    /// Byte offset of the UNLOAD chunk.
    offset: u64,
    /// Added to its addresses.
    alias: u64,
}

/// Where the alias ranges start: above every user-space address.
const ALIAS_SHIFT: u32 = 48;

impl Unloads {
    /// From the UNLOAD chunks' modules, ticks and byte offsets.
    pub fn new(mut chunks: Vec<(Module, u64, u64)>) -> Self {
        chunks.sort_by_key(|&(_, tick, offset)| (tick, offset));
        let entries = chunks
            .into_iter()
            .take((1 << (64 - ALIAS_SHIFT)) - 2)
            .enumerate()
            .map(|(i, (module, tick, offset))| Unloaded {
                module,
                tick,
                offset,
                alias: (i as u64 + 1) << ALIAS_SHIFT,
            })
            .collect();
        Unloads { entries }
    }

    /// The trace's modules from its MODULE chunks (with their byte offsets, in file order):
    /// the first of each `(bias, path)`, except those an UNLOAD chunk later in the file
    /// unloaded, then each unloaded module at its alias range.
    pub fn modules(&self, chunks: Vec<(Module, u64)>) -> Vec<Module> {
        let mut modules: Vec<Module> = Vec::new();
        for (module, offset) in chunks {
            let unloaded_later = self
                .entries
                .iter()
                .any(|u| u.offset > offset && u.module == module);
            if !unloaded_later
                && !modules
                    .iter()
                    .any(|m| m.bias == module.bias && m.path == module.path)
            {
                modules.push(module);
            }
        }
        for u in &self.entries {
            modules.push(Module {
                bias: u.module.bias.wrapping_add(u.alias),
                start: u.module.start.wrapping_add(u.alias),
                end: u.module.end.wrapping_add(u.alias),
                path: u.module.path.clone(),
            });
        }
        modules
    }

    /// Moves each record made in an unloaded module's range before its unload to its alias
    /// range (the earliest unload after the record's time: the module loaded then).
    #[inline]
    pub fn remap(&self, records: &mut [Record]) {
        if self.entries.is_empty() {
            return;
        }
        for r in records {
            if let Some(u) = self
                .entries
                .iter()
                .find(|u| r.time < u.tick && u.module.contains(r.address))
            {
                r.address = r.address.wrapping_add(u.alias);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn module(path: &str) -> Module {
        Module {
            bias: 0x7000,
            start: 0x7000,
            end: 0x8000,
            path: Some(PathBuf::from(path)),
        }
    }

    #[test]
    fn records_before_the_unload_move_to_the_unloaded_modules_alias() {
        let unloads = Unloads::new(vec![(module("a.so"), 100, 500)]);
        let modules = unloads.modules(vec![(module("a.so"), 200), (module("b.so"), 900)]);
        assert_eq!(modules.len(), 2);
        assert_eq!(modules[0].path, Some(PathBuf::from("b.so")));
        assert_eq!(modules[1].start, 0x7000 + (1 << 48));
        let mut records = [Record::entry(99, 0x7010), Record::entry(101, 0x7010)];
        unloads.remap(&mut records);
        assert!(modules[1].contains(records[0].address));
        assert!(modules[0].contains(records[1].address));
    }
}
