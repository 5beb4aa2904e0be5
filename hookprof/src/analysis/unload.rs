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
    /// The entries by address range (a library reloaded many times at one place is one
    /// range): each range's unload ticks in order, with their aliases.
    ranges: Vec<Range>,
    /// The lowest start and highest end of all: most records are outside.
    lo: u64,
    hi: u64,
}

#[derive(Clone, Debug)]
struct Range {
    start: u64,
    end: u64,
    ticks: Vec<(u64, u64)>,
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
            .collect::<Vec<Unloaded>>();
        let mut ranges: Vec<Range> = Vec::new();
        for u in &entries {
            let (start, end) = (u.module.start, u.module.end);
            match ranges.iter_mut().find(|r| r.start == start && r.end == end) {
                Some(r) => r.ticks.push((u.tick, u.alias)),
                None => ranges.push(Range {
                    start,
                    end,
                    ticks: vec![(u.tick, u.alias)],
                }),
            }
        }
        let lo = ranges.iter().map(|r| r.start).min().unwrap_or(0);
        let hi = ranges.iter().map(|r| r.end).max().unwrap_or(0);
        Unloads {
            entries,
            ranges,
            lo,
            hi,
        }
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

    /// `address` as a chunk at byte `offset` names it: at the alias of the first module
    /// unloaded later in the file whose range holds it (a THROTTLE or COUNTED chunk the runtime
    /// wrote before an unload: its functions are the module's that was loaded then), else as
    /// it is.
    pub fn remap_before(&self, address: u64, offset: u64) -> u64 {
        if address < self.lo || address >= self.hi {
            return address;
        }
        self.entries
            .iter()
            .filter(|u| u.offset > offset && u.module.start <= address && address < u.module.end)
            .min_by_key(|u| u.offset)
            .map_or(address, |u| address.wrapping_add(u.alias))
    }

    /// Moves each record made in an unloaded module's range before its unload to its alias
    /// range (the earliest unload after the record's time: the module loaded then).
    #[inline]
    pub fn remap(&self, records: &mut [Record]) {
        if self.entries.is_empty() {
            return;
        }
        for r in records {
            if r.address < self.lo || r.address >= self.hi {
                continue;
            }
            // The earliest unload after the record, of the ranges that hold its address.
            let mut first: Option<(u64, u64)> = None;
            for range in &self.ranges {
                if range.start <= r.address && r.address < range.end {
                    let at = range.ticks.partition_point(|&(tick, _)| tick <= r.time);
                    if let Some(&(tick, alias)) = range.ticks.get(at) {
                        if first.is_none_or(|(t, _)| tick < t) {
                            first = Some((tick, alias));
                        }
                    }
                }
            }
            if let Some((_, alias)) = first {
                r.address = r.address.wrapping_add(alias);
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

    #[test]
    fn a_chunk_before_an_unload_names_the_module_loaded_then() {
        // a.so unloaded by the UNLOAD chunks at bytes 500 and 900 (loaded twice at one place).
        let unloads = Unloads::new(vec![(module("a.so"), 100, 500), (module("a.so"), 200, 900)]);
        assert_eq!(unloads.remap_before(0x7010, 400), 0x7010 + (1 << 48));
        assert_eq!(unloads.remap_before(0x7010, 600), 0x7010 + (2 << 48));
        assert_eq!(
            unloads.remap_before(0x7010, 1000),
            0x7010,
            "after both: the module then"
        );
        assert_eq!(
            unloads.remap_before(0x9000, 400),
            0x9000,
            "outside every unloaded range"
        );
    }

    #[test]
    fn a_library_reloaded_at_one_place_names_each_record_by_its_load() {
        // Unloaded at ticks 100, 200, …, 10 000: a record at tick t is the load that ended
        // at the next multiple of 100; after the last unload, the module still loaded.
        let chunks = (1..=100u64)
            .map(|i| (module("a.so"), i * 100, i * 1000))
            .collect();
        let unloads = Unloads::new(chunks);
        let mut records: Vec<Record> = (0..10_050).map(|t| Record::entry(t, 0x7010)).collect();
        unloads.remap(&mut records);
        for r in &records {
            let load = r.time / 100 + 1; // the unload after it: load-th
            let expected = if load <= 100 {
                0x7010 + (load << 48)
            } else {
                0x7010
            };
            assert_eq!(r.address, expected, "tick {}", r.time);
        }
    }
}
