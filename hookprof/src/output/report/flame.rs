//! `hookprof flame`: folded stacks (Brendan Gregg's format: `main;a;b 1234` per line, the
//! count being the stack's own time) and SVG flame graphs drawn by the `inferno` crate.
//!
//! The count of a stack is the exclusive time of its last function while called from
//! exactly that stack, in nanoseconds (ticks without a clock rate), summed over the whole
//! trace (all threads, or per thread with a `thread N` frame at the bottom). This needs the
//! whole profile: memory grows with the number of distinct stacks, not with the records.
//!
//! A folded line repeats its whole stack, so a stack N frames deep costs N² bytes of lines
//! (a 30 000-deep recursion gave 1.77 GB, a 1 M-deep one filled the disk and the SVG took
//! 24 GB of memory). Stacks are therefore cut at [`MAX_STACK_FRAMES`]: every frame deeper
//! than that is counted in one marker frame, [`deeper_label`], on top of the frames above
//! it, so the counts still add up to every function's exclusive time while the output
//! grows at most linearly with the number of calls (docs/views.md).

use std::io::{self, Write};

use crate::analysis::ids::HashMap;
use crate::analysis::replay::Aggregate;
use crate::analysis::view::{Names, TimeBase, TraceInfo, View, ViewFrame};

/// No node: the parent of a stack's outermost frame (without per-thread roots).
const ROOT: u32 = u32::MAX;

/// Distinct call stacks with their exclusive ticks.
pub struct FoldedStacks {
    /// (parent node or [`ROOT`], function; or for a thread root, `ROOT` and `u32::MAX - 1 -
    /// index`) → node.
    nodes: HashMap<(u32, u32), u32>,
    /// Per node: parent, function (or thread root marker) and exclusive ticks.
    parents: Vec<u32>,
    functions: Vec<u32>,
    ticks: Vec<u64>,
    /// Per node: the (address, node) of the function child looked up last (node `u32::MAX`:
    /// none yet), which a loop calling the same function asks for again; saves the hash
    /// look-up most of the time, and (keyed by address, which names one function) the
    /// [`Viewer`](crate::analysis::view::Viewer)'s look-up of the function's number
    /// ([`View::known_node`]).
    last_child: Vec<(u64, u32)>,
    /// With per-thread roots: thread labels by TID, and the root node of each.
    per_thread: Option<ThreadRoots>,
}

/// (TID, label) of each thread, and TID → its root node.
type ThreadRoots = (Vec<(u64, u64)>, HashMap<u64, u32>);

/// A node that stands for a thread, not a function: `THREAD_ROOT - label index`.
const THREAD_ROOT: u32 = u32::MAX - 1;

/// The deepest stack written in full; deeper frames are counted in one marker frame.
pub const MAX_STACK_FRAMES: usize = 512;

/// The function number of the marker frame that stands for the frames deeper than
/// [`MAX_STACK_FRAMES`] (above every function number, below every thread marker).
const DEEPER: u32 = u32::MAX / 2 + 1;

/// The name of the marker frame.
pub fn deeper_label() -> String {
    format!("[deeper than {MAX_STACK_FRAMES} frames]")
}

/// A view that keeps call paths as a tree of nodes, cut at [`MAX_STACK_FRAMES`] (the flame
/// graph's folded stacks, pprof's call paths): its nodes are keyed by a frame's `Key` under
/// their parent, the marker frame of the deeper ones by `DEEPER`.
pub(crate) trait PathTree {
    type Key: Copy;
    const DEEPER: Self::Key;
    fn key(function: u32, address: u64) -> Self::Key;
    /// The node of `key` under `parent`, made if new.
    fn node(&mut self, parent: u32, key: Self::Key) -> u32;
    /// The node of the function at `address` under `parent`, if it is at hand (the child
    /// looked up last).
    fn known(&self, parent: u32, address: u64) -> Option<u32>;
    /// The root node of a thread's paths.
    fn root(&mut self, tid: u64) -> u32;
}

/// [`View::enter`] of a [`PathTree`]: the entered frame's node goes to its `user`. The first
/// frame too deep opens the marker; the deeper ones are counted in it.
#[inline]
pub(crate) fn enter_path<T: PathTree>(tree: &mut T, tid: u64, stack: &mut [ViewFrame]) {
    let Some((frame, below)) = stack.split_last_mut() else {
        return;
    };
    let parent = below.last().map(|f| f.user);
    frame.user = enter_node(
        tree,
        tid,
        parent,
        below.len() + 1,
        frame.function,
        frame.address,
    );
}

/// [`View::known_node`] of a [`PathTree`]: frames up to the cut whose node is at hand (the
/// ones deeper go through [`enter_node`], which also names their functions as before).
#[inline]
pub(crate) fn known_node<T: PathTree>(
    tree: &T,
    parent: u32,
    depth: usize,
    address: u64,
) -> Option<u32> {
    if depth > MAX_STACK_FRAMES {
        return None;
    }
    tree.known(parent, address)
}

/// [`View::enter_node`] of a [`PathTree`] (and [`enter_path`]'s work): the node of a frame
/// `depth` deep of `function` at `address` under the node `parent` (`None`: the thread's
/// root).
#[inline]
pub(crate) fn enter_node<T: PathTree>(
    tree: &mut T,
    tid: u64,
    parent: Option<u32>,
    depth: usize,
    function: u32,
    address: u64,
) -> u32 {
    let parent = match parent {
        Some(parent) => parent,
        None => tree.root(tid),
    };
    if depth > MAX_STACK_FRAMES {
        return if depth == MAX_STACK_FRAMES + 1 {
            tree.node(parent, T::DEEPER)
        } else {
            parent
        };
    }
    tree.node(parent, T::key(function, address))
}

impl FoldedStacks {
    /// `per_thread`: put every stack under a `thread N` frame of its thread.
    pub fn new(info: &TraceInfo, per_thread: bool) -> Self {
        FoldedStacks {
            nodes: HashMap::default(),
            parents: Vec::new(),
            functions: Vec::new(),
            ticks: Vec::new(),
            last_child: Vec::new(),
            per_thread: per_thread.then(|| {
                (
                    info.threads.iter().map(|t| (t.tid, t.label())).collect(),
                    HashMap::default(),
                )
            }),
        }
    }

    /// The node of `function` (at `address`; a marker: [`DEEPER`] or a thread's, whose
    /// address is not looked at) under `parent`, made if new.
    #[inline]
    fn node(&mut self, parent: u32, function: u32, address: u64) -> u32 {
        if function >= DEEPER {
            return self.node_slow(parent, function);
        }
        if let Some(node) = self.known_child(parent, address) {
            return node;
        }
        let node = self.node_slow(parent, function);
        if let Some(last) = self.last_child.get_mut(parent as usize) {
            *last = (address, node);
        }
        node
    }

    #[inline]
    fn known_child(&self, parent: u32, address: u64) -> Option<u32> {
        match self.last_child.get(parent as usize) {
            Some(&(a, node)) if a == address && node != u32::MAX => Some(node),
            _ => None,
        }
    }

    fn node_slow(&mut self, parent: u32, function: u32) -> u32 {
        let next = self.parents.len() as u32;
        let node = *self.nodes.entry((parent, function)).or_insert(next);
        if node == next {
            self.parents.push(parent);
            self.functions.push(function);
            self.ticks.push(0);
            self.last_child.push((0, u32::MAX));
        }
        node
    }

    fn thread_root(&mut self, tid: u64) -> u32 {
        let Some((labels, roots)) = &mut self.per_thread else {
            return ROOT;
        };
        if let Some(&root) = roots.get(&tid) {
            return root;
        }
        let index = labels
            .iter()
            .position(|&(t, _)| t == tid)
            .unwrap_or_else(|| {
                labels.push((tid, tid));
                labels.len() - 1
            });
        let marker = THREAD_ROOT - index as u32;
        let root = self.node(ROOT, marker, 0);
        if let Some((_, roots)) = &mut self.per_thread {
            roots.insert(tid, root);
        }
        root
    }

    /// Writes the folded lines, `frame;frame;… count`, depth first with the callees of
    /// each frame (and the outermost frames) in name order, which is the lines' sorted order
    /// whenever no name holds a character below `;` other than a space. Streams: no line is
    /// kept once written.
    pub fn write_folded(
        &self,
        names: &Names,
        clock: &TimeBase,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        // One label per function and per thread root, not per node (stacks far outnumber
        // functions).
        let function_labels: Vec<String> = (0..names.names.len() as u32)
            .map(|f| self.label(f, names))
            .collect();
        let thread_labels: Vec<String> = match &self.per_thread {
            Some((labels, _)) => labels.iter().map(|(_, l)| format!("thread {l}")).collect(),
            None => Vec::new(),
        };
        let deeper = deeper_label();
        let label = |node: u32| -> &str {
            let f = self.functions[node as usize];
            if f == DEEPER {
                &deeper
            } else if f > DEEPER {
                &thread_labels[(THREAD_ROOT - f) as usize]
            } else {
                &function_labels[f as usize]
            }
        };
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); self.parents.len()];
        let mut roots = Vec::new();
        for (node, &parent) in self.parents.iter().enumerate() {
            match parent {
                ROOT => roots.push(node as u32),
                p => children[p as usize].push(node as u32),
            }
        }
        let by_label = |a: &u32, b: &u32| label(*a).cmp(label(*b));
        roots.sort_by(by_label);
        for list in &mut children {
            list.sort_by(by_label);
        }
        // Depth first: the path of the node on top, and where each level's iteration is.
        let mut path = String::new();
        let mut stack: Vec<(usize, std::slice::Iter<'_, u32>)> = vec![(0, roots.iter())];
        while let Some((_, iter)) = stack.last_mut() {
            let Some(&node) = iter.next() else {
                let (len, _) = stack.pop().expect("not empty");
                path.truncate(len);
                continue;
            };
            let len = path.len();
            if len > 0 {
                path.push(';');
            }
            path.push_str(label(node));
            let count = clock.duration(self.ticks[node as usize]);
            if count != 0 {
                writeln!(out, "{path} {count}")?;
            }
            let level_start = len;
            stack.push((level_start, children[node as usize].iter()));
        }
        Ok(())
    }

    fn label(&self, function: u32, names: &Names) -> String {
        if let Some((labels, _)) = &self.per_thread {
            // Function numbers are small; thread markers count down from THREAD_ROOT.
            if function > u32::MAX / 2 {
                let index = (THREAD_ROOT - function) as usize;
                if let Some((_, label)) = labels.get(index) {
                    return format!("thread {label}");
                }
            }
        }
        // `;` separates frames and the last space the count: keep both out of names
        // (C++ names have spaces, which the format allows before the count's).
        names.name(function).replace(';', ":").replace('\n', " ")
    }

    /// Draws the flame graph (an icicle graph, root at the top, if `inverted`).
    pub fn write_svg(
        &self,
        names: &Names,
        clock: &TimeBase,
        title: &str,
        inverted: bool,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let mut folded = Vec::new();
        self.write_folded(names, clock, &mut folded)?;
        let folded = String::from_utf8(folded).map_err(io::Error::other)?;
        let lines: Vec<&str> = folded.lines().collect();
        draw_svg(&lines, clock.unit(), title, inverted, out)
    }
}

/// Draws folded lines (`frame;frame;… count`, counts in `unit`) as a flame graph (an icicle
/// graph if `inverted`).
pub fn draw_svg(
    lines: &[&str],
    unit: &str,
    title: &str,
    inverted: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_string();
    options.count_name = unit.to_string();
    if inverted {
        options.direction = inferno::flamegraph::Direction::Inverted;
    }
    if lines.is_empty() {
        // inferno refuses an empty profile; say so in a valid SVG instead.
        options.subtitle = Some("no calls (everything was filtered out)".to_string());
        return inferno::flamegraph::from_lines(&mut options, ["none 0"].iter().copied(), out)
            .map_err(io::Error::other);
    }
    inferno::flamegraph::from_lines(&mut options, lines.iter().copied(), out)
        .map_err(io::Error::other)
}

impl PathTree for FoldedStacks {
    /// The function's number and its address.
    type Key = (u32, u64);
    const DEEPER: (u32, u64) = (DEEPER, 0);
    #[inline]
    fn key(function: u32, address: u64) -> (u32, u64) {
        (function, address)
    }
    #[inline]
    fn node(&mut self, parent: u32, (function, address): (u32, u64)) -> u32 {
        FoldedStacks::node(self, parent, function, address)
    }
    #[inline]
    fn known(&self, parent: u32, address: u64) -> Option<u32> {
        self.known_child(parent, address)
    }
    fn root(&mut self, tid: u64) -> u32 {
        self.thread_root(tid)
    }
}

impl View for FoldedStacks {
    const NODES: bool = true;

    #[inline]
    fn enter(&mut self, tid: u64, stack: &mut [ViewFrame], _names: &Names) {
        enter_path(self, tid, stack);
    }

    #[inline]
    fn known_node(&self, parent: u32, depth: usize, address: u64) -> Option<u32> {
        known_node(self, parent, depth, address)
    }

    fn enter_node(
        &mut self,
        tid: u64,
        parent: Option<u32>,
        depth: usize,
        function: u32,
        address: u64,
    ) -> u32 {
        enter_node(self, tid, parent, depth, function, address)
    }

    #[inline]
    fn exit_node(&mut self, _tid: u64, node: u32, exclusive: u64) {
        let ticks = &mut self.ticks[node as usize];
        *ticks = ticks.saturating_add(exclusive);
    }

    /// The path's frames came through [`View::enter`] (their nodes are in `user`), except
    /// with filters: then the path from its root.
    fn aggregate(&mut self, tid: u64, stack: &[ViewFrame], calls: &Aggregate, _names: &Names) {
        let Some(last) = stack.last() else { return };
        // A frame that did not come through `enter` has `user` u32::MAX (`Viewer`).
        let node = if last.user != u32::MAX {
            last.user
        } else {
            let mut node = self.thread_root(tid);
            for (depth, frame) in stack.iter().enumerate() {
                if depth == MAX_STACK_FRAMES {
                    node = self.node(node, DEEPER, 0);
                    break;
                }
                node = self.node(node, frame.function, frame.address);
            }
            node
        };
        let ticks = &mut self.ticks[node as usize];
        *ticks = ticks.saturating_add(calls.exclusive);
    }

    #[inline]
    fn exit(&mut self, _tid: u64, time: u64, stack: &[ViewFrame], _names: &Names) {
        let Some(frame) = stack.last() else { return };
        let exclusive = time
            .saturating_sub(frame.entry_time)
            .saturating_sub(frame.child_ticks);
        let ticks = &mut self.ticks[frame.user as usize];
        *ticks = ticks.saturating_add(exclusive);
    }
}
