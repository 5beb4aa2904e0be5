//! The maps of the model and the replay, below both: [`HashMap`] (FxHash) and `DenseIds`.

use std::collections::HashMap as StdHashMap;

/// The maps of the model and the replay: a fast non-cryptographic hash (FxHash) instead of
/// the standard library's DoS-resistant SipHash, which took more than half of `hookprof
/// report`'s time when the maps were looked up for every record (docs/performance.md). The
/// keys are addresses from the trace, not attacker-chosen strings.
pub type HashMap<K, V> = StdHashMap<K, V, rustc_hash::FxBuildHasher>;

/// Numbers distinct `u64` keys 0, 1, 2, … in the order they are first seen, so that what
/// is kept per key can live in a `Vec` indexed by its number instead of in a hash map. The
/// replay numbers function addresses with it ([`crate::analysis::replay::Frame::function`])
/// and the [`crate::analysis::model::ProfileBuilder`] numbers caller→callee arcs.
///
/// A small open-addressing table (multiplicative hash, linear probing) kept at most half
/// full, so that a key is nearly always in the first slot it hashes to: a lookup is a
/// multiply, a shift, a load and a compare. (A quarter full measured no faster.) Memory
/// grows with the number of keys (64 bytes per key at most), not with the trace.
#[derive(Clone, Debug)]
pub(crate) struct DenseIds {
    /// `slots.len()` is a power of two, `1 << bits`.
    slots: Vec<Slot>,
    bits: u32,
    /// Keys numbered so far.
    len: u32,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    key: u64,
    /// [`Slot::EMPTY`] in a slot that holds no key (every `key` value is a valid key).
    id: u32,
}

impl Slot {
    const EMPTY: u32 = u32::MAX;
    const VACANT: Slot = Slot {
        key: 0,
        id: Slot::EMPTY,
    };
}

impl Default for DenseIds {
    fn default() -> Self {
        DenseIds {
            slots: vec![Slot::VACANT; 1 << Self::MIN_BITS],
            bits: Self::MIN_BITS,
            len: 0,
        }
    }
}

impl DenseIds {
    const MIN_BITS: u32 = 4;
    /// Numbers stay below this, so that a number + 1 is never `u32::MAX` ([`Slot::EMPTY`],
    /// and the builder's `FunctionLine::NO_CALLER`). That many distinct functions or arcs
    /// would not fit in memory anyway.
    const MAX_LEN: u32 = u32::MAX - 1;

    /// The number of `key`, assigned now if the key is new (then it is the number of keys
    /// seen before).
    #[inline]
    pub(crate) fn id(&mut self, key: u64) -> u32 {
        let mask = self.slots.len() - 1;
        let mut at = self.home(key);
        loop {
            let slot = self.slots[at];
            if slot.id == Slot::EMPTY {
                return self.insert(key, at);
            }
            if slot.key == key {
                return slot.id;
            }
            at = (at + 1) & mask;
        }
    }

    /// The number of `key` if it has one, without numbering it.
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut at = self.home(key);
        loop {
            let slot = self.slots[at];
            if slot.id == Slot::EMPTY {
                return None;
            }
            if slot.key == key {
                return Some(slot.id);
            }
            at = (at + 1) & mask;
        }
    }

    /// The slot where the search for `key` starts: the top bits of a multiplicative
    /// (Fibonacci) hash, which depend on every bit of the key, so that aligned addresses
    /// spread over the whole table.
    #[inline]
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - self.bits)) as usize
    }

    /// Numbers `key` in the empty slot `at`, where its search ended.
    #[cold]
    #[inline(never)]
    fn insert(&mut self, key: u64, at: usize) -> u32 {
        let id = self.len;
        assert!(id < Self::MAX_LEN, "fewer than 2^32 - 2 distinct keys");
        self.len += 1;
        self.slots[at] = Slot { key, id };
        if self.len as usize * 2 > self.slots.len() {
            self.grow();
        }
        id
    }

    /// Doubles the table and puts every key in again.
    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.bits += 1;
        self.slots = vec![Slot::VACANT; 1 << self.bits];
        let mask = self.slots.len() - 1;
        for slot in old.into_iter().filter(|s| s.id != Slot::EMPTY) {
            let mut at = self.home(slot.key);
            while self.slots[at].id != Slot::EMPTY {
                at = (at + 1) & mask;
            }
            self.slots[at] = slot;
        }
    }
}
