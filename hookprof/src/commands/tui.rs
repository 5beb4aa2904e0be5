//! `hookprof tui TRACE`: a call-tree browser in the terminal, as uftrace's `tui`: the calls as
//! a tree to expand and fold, beside the flat report; search by name; a function's callers.
//!
//! The tree is built from the trace's folded stacks ([`crate::commands::flame`]: every
//! distinct stack with its last function's exclusive time), so it has the flame graph's
//! numbers: a node's self time is its function's exclusive time on that path, its total the
//! sum of its subtree. The callers' view is the same stacks reversed (a function at the root,
//! its callers under it). The flat report beside it has the calls.

use anyhow::Result;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use crate::commands::flame::{flame_file, FlameFormat, FlameOptions};
use crate::commands::report::{report_file, ReportOptions};
use crate::commands::top::RawTerminal;
use crate::commands::view_options::ViewOptions;
use crate::output::report::columns::{human_time, short_name};
use std::path::PathBuf;

/// One node of a call tree.
#[derive(Debug, Clone, Default)]
pub struct Node {
    pub name: String,
    pub self_ns: u64,
    pub total_ns: u64,
    pub children: Vec<usize>,
    pub depth: usize,
    pub expanded: bool,
}

/// A call tree (node 0 is the root, not shown).
#[derive(Debug, Clone, Default)]
pub struct Tree {
    pub nodes: Vec<Node>,
}

impl Tree {
    /// From folded lines (`a;b;c 123`); reversed: each stack from its last frame down.
    pub fn from_folded(text: &str, reversed: bool) -> Tree {
        let mut tree = Tree {
            nodes: vec![Node {
                expanded: true,
                ..Node::default()
            }],
        };
        let mut index: BTreeMap<(usize, String), usize> = BTreeMap::new();
        for line in text.lines() {
            let Some((stack, count)) = line.rsplit_once(' ') else {
                continue;
            };
            let Ok(ns) = count.parse::<u64>() else {
                continue;
            };
            let mut frames: Vec<&str> = stack.split(';').collect();
            if reversed {
                frames.reverse();
            }
            let mut at = 0;
            tree.nodes[0].total_ns += ns;
            for (i, frame) in frames.iter().enumerate() {
                let key = (at, frame.to_string());
                let next = match index.get(&key) {
                    Some(&n) => n,
                    None => {
                        let n = tree.nodes.len();
                        tree.nodes.push(Node {
                            name: frame.to_string(),
                            depth: tree.nodes[at].depth + usize::from(at != 0),
                            ..Node::default()
                        });
                        tree.nodes[at].children.push(n);
                        index.insert(key, n);
                        n
                    }
                };
                tree.nodes[next].total_ns += ns;
                // Reversed, a stack's own time is its first frame's (the function itself).
                if (!reversed && i + 1 == frames.len()) || (reversed && i == 0) {
                    tree.nodes[next].self_ns += ns;
                }
                at = next;
            }
        }
        for n in 0..tree.nodes.len() {
            let mut children = std::mem::take(&mut tree.nodes[n].children);
            children.sort_by(|&a, &b| tree.nodes[b].total_ns.cmp(&tree.nodes[a].total_ns));
            tree.nodes[n].children = children;
        }
        tree
    }

    /// The nodes shown, in order: the root's children and, under each expanded node, its own.
    pub fn visible(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack: Vec<usize> = self.nodes[0].children.iter().rev().copied().collect();
        while let Some(n) = stack.pop() {
            out.push(n);
            if self.nodes[n].expanded {
                stack.extend(self.nodes[n].children.iter().rev());
            }
        }
        out
    }
}

/// The browser's state.
struct Browser {
    trees: [Tree; 2], // callees, callers
    which: usize,
    cursor: usize,
    top: usize,
    search: String,
    editing: bool,
    report: Vec<String>,
    quit: bool,
}

impl Browser {
    fn tree(&mut self) -> &mut Tree {
        &mut self.trees[self.which]
    }

    fn selected(&self) -> Option<usize> {
        self.trees[self.which].visible().get(self.cursor).copied()
    }

    /// The next node (in tree order, expanding as needed) whose name contains the search.
    fn find_next(&mut self) {
        if self.search.is_empty() {
            return;
        }
        let tree = &self.trees[self.which];
        let order = {
            let mut out = Vec::new();
            let mut stack: Vec<usize> = tree.nodes[0].children.iter().rev().copied().collect();
            while let Some(n) = stack.pop() {
                out.push(n);
                stack.extend(tree.nodes[n].children.iter().rev());
            }
            out
        };
        let start = self
            .selected()
            .and_then(|s| order.iter().position(|&n| n == s));
        let from = start.map_or(0, |p| p + 1);
        let found = order[from..]
            .iter()
            .chain(order[..from].iter())
            .copied()
            .find(|&n| tree.nodes[n].name.contains(&self.search));
        let Some(target) = found else { return };
        // Expand its ancestors.
        let mut parent = vec![usize::MAX; tree.nodes.len()];
        for (n, node) in tree.nodes.iter().enumerate() {
            for &c in &node.children {
                parent[c] = n;
            }
        }
        let mut p = parent[target];
        while p != usize::MAX && p != 0 {
            self.tree().nodes[p].expanded = true;
            p = parent[p];
        }
        if let Some(pos) = self.trees[self.which]
            .visible()
            .iter()
            .position(|&n| n == target)
        {
            self.cursor = pos;
        }
    }

    /// Switches between the callees' and the callers' tree, at the selected function.
    fn toggle_callers(&mut self) {
        let name = self
            .selected()
            .map(|n| self.trees[self.which].nodes[n].name.clone());
        self.which = 1 - self.which;
        self.cursor = 0;
        if let Some(name) = name {
            let roots = self.trees[self.which].nodes[0].children.clone();
            if let Some(&root) = roots
                .iter()
                .find(|&&r| self.trees[self.which].nodes[r].name == name)
            {
                self.tree().nodes[root].expanded = true;
                if let Some(pos) = self.trees[self.which]
                    .visible()
                    .iter()
                    .position(|&n| n == root)
                {
                    self.cursor = pos;
                }
            }
        }
    }

    fn key(&mut self, keys: &[u8]) {
        let mut i = 0;
        while i < keys.len() {
            let b = keys[i];
            i += 1;
            if self.editing {
                match b {
                    b'\r' | b'\n' => {
                        self.editing = false;
                        self.find_next();
                    }
                    0x1b => {
                        self.editing = false;
                        self.search.clear();
                    }
                    0x7f | 0x08 => {
                        self.search.pop();
                    }
                    b if b.is_ascii_graphic() || b == b' ' => self.search.push(b as char),
                    _ => {}
                }
                continue;
            }
            // Arrow keys: ESC [ A/B/C/D.
            let arrow = if b == 0x1b && keys.get(i) == Some(&b'[') {
                i += 2;
                keys.get(i - 1).copied()
            } else {
                None
            };
            let visible = self.trees[self.which].visible().len();
            match (b, arrow) {
                (_, Some(b'A')) | (b'k', None) => self.cursor = self.cursor.saturating_sub(1),
                (_, Some(b'B')) | (b'j', None) => {
                    self.cursor = (self.cursor + 1).min(visible.saturating_sub(1))
                }
                (_, Some(b'C')) | (b'l', None) | (b'\r', None) | (b' ', None) => {
                    if let Some(n) = self.selected() {
                        let expanded = self.trees[self.which].nodes[n].expanded;
                        let toggle = b == b'\r' || b == b' ';
                        self.tree().nodes[n].expanded = if toggle { !expanded } else { true };
                    }
                }
                (_, Some(b'D')) | (b'h', None) => {
                    if let Some(n) = self.selected() {
                        self.tree().nodes[n].expanded = false;
                    }
                }
                (b'/', None) => {
                    self.editing = true;
                    self.search.clear();
                }
                (b'n', None) => self.find_next(),
                (b'c', None) => self.toggle_callers(),
                (b'q', None) => self.quit = true,
                _ => {}
            }
        }
    }

    fn draw(&mut self, width: usize, height: usize) -> String {
        let tree = &self.trees[self.which];
        let visible = tree.visible();
        let rows = height.saturating_sub(3).max(1);
        if self.cursor < self.top {
            self.top = self.cursor;
        } else if self.cursor >= self.top + rows {
            self.top = self.cursor + 1 - rows;
        }
        let side = if width >= 140 { 56 } else { 0 };
        let left = width.saturating_sub(side + 2).max(40);
        let mut lines = vec![format!(
            "{:<left$}{}",
            format!(
                "hookprof tui: {} (total, self, function){}",
                if self.which == 0 {
                    "call tree"
                } else {
                    "callers"
                },
                if self.search.is_empty() && !self.editing {
                    String::new()
                } else {
                    format!(
                        "  search: {}{}",
                        self.search,
                        if self.editing { "_" } else { "" }
                    )
                }
            ),
            if side > 0 { "  report" } else { "" }
        )];
        for r in 0..rows {
            let mut line = String::new();
            if let Some(&n) = visible.get(self.top + r) {
                let node = &tree.nodes[n];
                let mark = if node.children.is_empty() {
                    ' '
                } else if node.expanded {
                    '-'
                } else {
                    '+'
                };
                let cursor = if self.top + r == self.cursor {
                    '>'
                } else {
                    ' '
                };
                let indent = "  ".repeat(node.depth.min(30));
                let budget = left.saturating_sub(24 + indent.len()).max(8);
                line = format!(
                    "{cursor}{:>10} {:>10} {indent}{mark} {}",
                    human_time(node.total_ns),
                    human_time(node.self_ns),
                    short_name(&node.name, budget)
                );
            }
            if side > 0 {
                let pad = left.saturating_sub(crate::output::report::columns::width(&line));
                line.push_str(&" ".repeat(pad));
                line.push_str("  ");
                if let Some(text) = self.report.get(r) {
                    line.push_str(&short_name(text, side));
                }
            }
            lines.push(line);
        }
        lines.push(String::new());
        lines.push(
            "keys: up/down j/k  right/l expand  left/h fold  Enter toggle  / search  n next  \
             c callers/callees  q quit"
                .to_string(),
        );
        // No newline after the last line: the screen would scroll by one.
        format!("\x1b[H\x1b[2J{}", lines.join("\r\n"))
    }
}

/// The terminal's size, or 100 × 30.
fn terminal_size() -> (usize, usize) {
    // SAFETY: TIOCGWINSZ fills a winsize of ours.
    unsafe {
        let mut ws: libc::winsize = std::mem::zeroed();
        if libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0 {
            return (ws.ws_col as usize, ws.ws_row as usize);
        }
    }
    (100, 30)
}

/// Opens the trace and browses it until `q`.
pub fn tui(trace: &Path) -> Result<()> {
    let mut folded = Vec::new();
    let flame = FlameOptions {
        format: FlameFormat::Folded,
        inverted: false,
        per_thread: false,
    };
    for warning in flame_file(trace, &ViewOptions::default(), &flame, &mut folded)? {
        eprintln!("hookprof: warning: {warning}");
    }
    let folded = String::from_utf8_lossy(&folded);
    let report = report_file(
        trace,
        &ReportOptions {
            exe: None,
            format: crate::output::report::Format::Text,
            per_thread: false,
            sort: Default::default(),
            top: None,
            percentiles: false,
            callers: false,
            mixed_programs: false,
            text: crate::output::report::columns::TextOptions {
                width: Some(56),
                ..Default::default()
            },
            time: Default::default(),
        },
    )?;
    let mut browser = Browser {
        trees: [
            Tree::from_folded(&folded, false),
            Tree::from_folded(&folded, true),
        ],
        which: 0,
        cursor: 0,
        top: 0,
        search: String::new(),
        editing: false,
        report: String::from_utf8_lossy(&report.bytes)
            .lines()
            .skip(1)
            .map(str::to_string)
            .collect(),
        quit: false,
    };
    let _raw = RawTerminal::new();
    let mut out = std::io::stdout();
    loop {
        let (width, height) = terminal_size();
        out.write_all(browser.draw(width, height).as_bytes())?;
        out.flush()?;
        let mut fds = libc::pollfd {
            fd: 0,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one pollfd of ours.
        if unsafe { libc::poll(&mut fds, 1, 500) } <= 0 {
            continue;
        }
        let mut buf = [0u8; 64];
        // SAFETY: reads into our buffer, at most its length.
        let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        browser.key(&buf[..n as usize]);
        if browser.quit {
            break;
        }
    }
    out.write_all(b"\x1b[H\x1b[2J")?;
    Ok(())
}

#[derive(clap::Args, Debug)]
pub struct TuiArgs {
    /// The trace to browse.
    pub trace: PathBuf,
}
