//! The PROFILE chunk (format version 5, `HOOKCC_MODE=profile`): a thread's calling-context
//! tree as `runtime/src/trace_cct.h` writes it (docs/trace-format.md, "PROFILE").
//!
//! The payload is a fixed part of 48 bytes (sequence, first and last tick, records folded, and
//! the numbers of nodes, open frames and unmatched-exit addresses, and the stream's bytes),
//! then a stream of LEB128 numbers:
//!
//! - per node, in the order the tree made them (a parent before its children): parent + 1 (0 at
//!   the root), zigzag(address − the previous node's), calls, ticks, exclusive ticks, min,
//!   max − min, calls closed by an outer exit or a longjmp, of those by a longjmp;
//! - per open frame, outermost first: node, entry − first tick, its closed callees' ticks;
//! - per unmatched-exit address: zigzag(address − the previous one), count.
//!
//! Times are raw ticks; the replay ([`crate::analysis::replay`]) compensates them and hands each node to
//! its visitor as an [`crate::analysis::replay::Aggregate`].

/// Bytes of the fixed part.
/// A malformed PROFILE chunk: what is wrong in it. The format reader turns it into
/// [`crate::input::format::FormatErrorKind::BadProfile`] with the chunk's offset (this module
/// is below the format's, which decodes PROFILE chunks with it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BadProfile {
    pub what: &'static str,
}

pub const FIXED_SIZE: usize = 48;

/// One call path: its function, its parent path, and its calls' sums in raw ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Node {
    /// Index of the parent path in [`CallTree::nodes`]; `None` at the thread's root.
    pub parent: Option<u32>,
    pub address: u64,
    /// Frames closed (by their exit, an outer exit or a longjmp).
    pub calls: u64,
    pub ticks: u64,
    pub exclusive: u64,
    pub min: u64,
    pub max: u64,
    /// Of the calls, frames closed by an outer exit or a longjmp.
    pub unwound: u64,
    /// Of those, by a longjmp.
    pub longjmp: u64,
}

/// A frame still open when the tree was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpenFrame {
    pub node: u32,
    /// Its entry's time (raw ticks).
    pub entry: u64,
    /// Ticks of its callees closed so far.
    pub child: u64,
}

/// A decoded PROFILE chunk.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CallTree {
    /// The thread's sequence number (its THREAD chunk's).
    pub sequence: u64,
    pub first_tick: u64,
    pub last_tick: u64,
    /// Records folded into the tree.
    pub records: u64,
    pub nodes: Vec<Node>,
    /// Outermost first: each one's node is the child of the one before.
    pub open: Vec<OpenFrame>,
    /// Exits that matched no frame: (address, count).
    pub unmatched: Vec<(u64, u64)>,
}

struct Stream<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Stream<'_> {
    fn varint(&mut self, what: &'static str) -> Result<u64, BadProfile> {
        let mut value = 0u64;
        let mut shift = 0u32;
        loop {
            let Some(&byte) = self.data.get(self.pos) else {
                return Err(BadProfile { what });
            };
            self.pos += 1;
            if shift == 63 && byte > 1 {
                return Err(BadProfile {
                    what: "a number longer than 64 bits",
                });
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Ok(value);
            }
            shift += 7;
            if shift > 63 {
                return Err(BadProfile {
                    what: "a number longer than 64 bits",
                });
            }
        }
    }

    fn address(&mut self, last: &mut u64, what: &'static str) -> Result<u64, BadProfile> {
        let z = self.varint(what)?;
        *last = last.wrapping_add((z >> 1) ^ (z & 1).wrapping_neg());
        Ok(*last)
    }
}

impl CallTree {
    /// Decodes the payload whose fixed part gave `fixed` (the four u64 fields, then the four
    /// u32 fields) and whose stream is `stream`. `mask` keeps an address to the pointer size.
    pub fn decode(
        fixed: ([u64; 4], [u32; 4]),
        stream: &[u8],
        mask: u64,
    ) -> Result<CallTree, BadProfile> {
        let ([sequence, first_tick, last_tick, records], [nodes, open, unmatched, bytes]) = fixed;
        let Some(stream) = stream.get(..bytes as usize) else {
            return Err(BadProfile {
                what: "its stream does not fit in the chunk",
            });
        };
        // Every node takes 9 bytes at least, an open frame 3, an address 2: a count larger than
        // the stream allows is an error before anything is allocated for it.
        if u64::from(nodes) * 9 + u64::from(open) * 3 + u64::from(unmatched) * 2
            > stream.len() as u64
        {
            return Err(BadProfile {
                what: "more nodes than its stream holds",
            });
        }
        let mut s = Stream {
            data: stream,
            pos: 0,
        };
        let mut tree = CallTree {
            sequence,
            first_tick,
            last_tick,
            records,
            nodes: Vec::with_capacity(nodes as usize),
            open: Vec::with_capacity(open as usize),
            unmatched: Vec::with_capacity(unmatched as usize),
        };
        let mut last = 0u64;
        let cut = "the stream ends inside a node";
        for index in 0..nodes {
            let parent = s.varint(cut)?;
            if parent > u64::from(index) {
                return Err(BadProfile {
                    what: "a node's parent comes after it",
                });
            }
            let address = s.address(&mut last, cut)? & mask;
            let calls = s.varint(cut)?;
            let ticks = s.varint(cut)?;
            let exclusive = s.varint(cut)?;
            let min = s.varint(cut)?;
            let max = min.saturating_add(s.varint(cut)?);
            let unwound = s.varint(cut)?;
            let longjmp = s.varint(cut)?;
            if unwound > calls || longjmp > unwound || exclusive > ticks {
                return Err(BadProfile {
                    what: "a node's counts do not add up",
                });
            }
            tree.nodes.push(Node {
                parent: parent.checked_sub(1).map(|p| p as u32),
                address,
                calls,
                ticks,
                exclusive,
                min,
                max,
                unwound,
                longjmp,
            });
        }
        let cut = "the stream ends inside an open frame";
        for _ in 0..open {
            let node = s.varint(cut)?;
            let entry = first_tick.wrapping_add(s.varint(cut)?);
            let child = s.varint(cut)?;
            let parent_ok = match (tree.nodes.get(node as usize), tree.open.last()) {
                (Some(n), None) => n.parent.is_none(),
                (Some(n), Some(outer)) => n.parent == Some(outer.node),
                (None, _) => false,
            };
            if !parent_ok {
                return Err(BadProfile {
                    what: "its open frames are not one call path",
                });
            }
            tree.open.push(OpenFrame {
                node: node as u32,
                entry,
                child,
            });
        }
        let mut last = 0u64;
        let cut = "the stream ends inside an unmatched exit";
        for _ in 0..unmatched {
            let address = s.address(&mut last, cut)? & mask;
            let count = s.varint(cut)?;
            tree.unmatched.push((address, count));
        }
        if s.pos != stream.len() {
            return Err(BadProfile {
                what: "bytes are left after its last number",
            });
        }
        Ok(tree)
    }
}
