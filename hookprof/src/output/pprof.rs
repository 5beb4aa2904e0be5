//! `hookprof export --format=pprof`: a gzipped `profile.proto`, the format of Go's `pprof`,
//! Grafana Pyroscope, Perfetto's pprof import and the OpenTelemetry profiles signal.
//!
//! One sample per distinct call path of each thread, its values the calls that ended there
//! (`calls/count`), the time spent in the path's last function itself (`wall/nanoseconds`,
//! the exclusive time `report` shows) and, where every trace recorded its context switches,
//! the same time on the threads' CPU clocks (`cpu/nanoseconds`, `report --time=cpu`). So a
//! function's "flat" in `pprof -top` is `report`'s exclusive time and its "cum" the time of
//! the paths through it. Each sample carries the thread (`thread`, `tid`), the process
//! (`process`, `pid`) and, when given, `host` and `run` as labels; several traces are several
//! processes of one profile, their functions merged by name and file.
//!
//! The protobuf encoding is our own and small: [`Message`] writes the varint, 64-bit-free
//! subset that profile.proto needs (field numbers from profile.proto of
//! github.com/google/pprof). Stacks deeper than [`MAX_STACK_FRAMES`] are cut as the flame
//! graph's are: the deeper frames are counted in one marker function, so the paths stay
//! linear in size while every time still adds up.

use std::collections::HashMap as StdHashMap;
use std::io::{self, Write};

use crate::analysis::ids::HashMap;
use crate::analysis::replay::Aggregate;
use crate::analysis::view::{Names, TimeBase, TraceInfo, View, ViewFrame};
use crate::input::lines::SourceLines;
use crate::output::report::flame::{
    deeper_label, enter_node, enter_path, known_node, PathTree, MAX_STACK_FRAMES,
};

/// A protobuf message under construction: fields are appended in the order written.
#[derive(Default)]
pub struct Message(Vec<u8>);

/// Wire types: varint and length-delimited (the only two profile.proto needs).
const VARINT: u64 = 0;
const LEN: u64 = 2;

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

impl Message {
    fn key(&mut self, field: u32, wire: u64) {
        put_varint(&mut self.0, u64::from(field) << 3 | wire);
    }

    /// An integer field (uint64, int64, bool); proto3 leaves zero out.
    pub fn int(&mut self, field: u32, value: u64) {
        if value != 0 {
            self.key(field, VARINT);
            put_varint(&mut self.0, value);
        }
    }

    /// A string, bytes or embedded message (always written, empty or not).
    pub fn bytes(&mut self, field: u32, bytes: &[u8]) {
        self.key(field, LEN);
        put_varint(&mut self.0, bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }

    pub fn message(&mut self, field: u32, message: &Message) {
        self.bytes(field, &message.0);
    }

    /// A packed repeated integer field.
    pub fn packed(&mut self, field: u32, values: impl IntoIterator<Item = u64>) {
        let mut body = Vec::new();
        for v in values {
            put_varint(&mut body, v);
        }
        if !body.is_empty() {
            self.bytes(field, &body);
        }
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

/// A node's parent when it is a thread's root.
const ROOT: u32 = u32::MAX;
/// The address of the marker node of the frames deeper than [`MAX_STACK_FRAMES`].
const DEEPER: u64 = u64::MAX;
/// The address of the marker node under which a thread's counted calls of throttled
/// functions are (their callers were not recorded).
const COUNTED: u64 = u64::MAX - 1;
/// The marker's name.
const COUNTED_LABEL: &str = "[counted calls: callers not recorded]";

/// The distinct call paths of one trace's threads, with their calls and exclusive ticks on
/// the wall clock and, from a second replay on the CPU clock, on the threads' CPU clocks.
/// Nodes are keyed by the functions' addresses, so both replays fill one tree.
pub struct CallPaths {
    nodes: HashMap<(u32, u64), u32>,
    /// Per node: the (address, node) of the child looked up last, which a loop calling the
    /// same function asks for again (as the flame graph's stacks keep it).
    last_child: Vec<(u64, u32)>,
    /// Per node: parent ([`ROOT`] for a thread's root), address (the TID for a root).
    parents: Vec<u32>,
    addresses: Vec<u64>,
    calls: Vec<u64>,
    wall: Vec<u64>,
    cpu: Vec<u64>,
    /// Function names by address, from the replays' [`Names`].
    names: StdHashMap<u64, String>,
    /// The replay under way is the CPU clock's: its times go to `cpu`, its calls are not
    /// counted again.
    on_cpu: bool,
}

impl Default for CallPaths {
    fn default() -> Self {
        Self::new()
    }
}

impl CallPaths {
    pub fn new() -> Self {
        CallPaths {
            nodes: HashMap::default(),
            last_child: Vec::new(),
            parents: Vec::new(),
            addresses: Vec::new(),
            calls: Vec::new(),
            wall: Vec::new(),
            cpu: Vec::new(),
            names: StdHashMap::new(),
            on_cpu: false,
        }
    }

    /// After the wall clock's replay: the next replay is the CPU clock's.
    pub fn then_cpu(mut self) -> Self {
        self.on_cpu = true;
        self
    }

    /// Keeps the names a replay met (each function's address and name).
    pub fn learn_names(&mut self, names: &Names) {
        for (address, name) in names.addresses.iter().zip(&names.names) {
            self.names.entry(*address).or_insert_with(|| name.clone());
        }
    }

    #[inline]
    fn node(&mut self, parent: u32, address: u64) -> u32 {
        if let Some(&(a, node)) = self.last_child.get(parent as usize) {
            if a == address && node != u32::MAX {
                return node;
            }
        }
        self.node_slow(parent, address)
    }

    fn node_slow(&mut self, parent: u32, address: u64) -> u32 {
        let next = self.parents.len() as u32;
        let node = *self.nodes.entry((parent, address)).or_insert(next);
        if node == next {
            self.parents.push(parent);
            self.addresses.push(address);
            self.calls.push(0);
            self.wall.push(0);
            self.cpu.push(0);
            // No child looked up yet.
            self.last_child.push((0, u32::MAX));
        }
        if let Some(last) = self.last_child.get_mut(parent as usize) {
            *last = (address, node);
        }
        node
    }

    /// A thread's counted calls of throttled functions ((TID, address, calls), the COUNTED
    /// chunks): calls without times, each function's under its thread's marker
    /// ([`COUNTED_LABEL`]), so that its calls in `pprof -top` are `report`'s.
    pub fn add_counted(&mut self, counted: &[(u64, u64, u64)]) {
        for &(tid, address, calls) in counted {
            let root = self.node(ROOT, tid);
            let marker = self.node(root, COUNTED);
            let node = self.node(marker, address) as usize;
            self.calls[node] += calls;
        }
    }

    fn add(&mut self, node: u32, calls: u64, exclusive: u64) {
        let node = node as usize;
        if self.on_cpu {
            self.cpu[node] = self.cpu[node].saturating_add(exclusive);
        } else {
            self.calls[node] += calls;
            self.wall[node] = self.wall[node].saturating_add(exclusive);
        }
    }
}

impl PathTree for CallPaths {
    type Key = u64;
    const DEEPER: u64 = DEEPER;
    #[inline]
    fn key(_function: u32, address: u64) -> u64 {
        address
    }
    #[inline]
    fn node(&mut self, parent: u32, address: u64) -> u32 {
        CallPaths::node(self, parent, address)
    }
    fn root(&mut self, tid: u64) -> u32 {
        CallPaths::node(self, ROOT, tid)
    }
    #[inline]
    fn known(&self, parent: u32, address: u64) -> Option<u32> {
        match self.last_child.get(parent as usize) {
            Some(&(a, node)) if a == address && node != u32::MAX => Some(node),
            _ => None,
        }
    }
}

impl View for CallPaths {
    const NODES: bool = true;

    fn enter(&mut self, tid: u64, stack: &mut [ViewFrame], _names: &Names) {
        enter_path(self, tid, stack);
    }

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

    /// A frame deeper than the cut shares its marker node: one call of the marker per call
    /// made below the cut.
    fn exit_node(&mut self, _tid: u64, node: u32, exclusive: u64) {
        self.add(node, 1, exclusive);
    }

    fn exit(&mut self, _tid: u64, time: u64, stack: &[ViewFrame], _names: &Names) {
        let Some(frame) = stack.last() else { return };
        let exclusive = time
            .saturating_sub(frame.entry_time)
            .saturating_sub(frame.child_ticks);
        // A frame deeper than the cut shares its marker node: one call of the marker per
        // call made below the cut.
        self.add(frame.user, 1, exclusive);
    }

    fn aggregate(&mut self, tid: u64, stack: &[ViewFrame], calls: &Aggregate, _names: &Names) {
        let mut node = self.node(ROOT, tid);
        for (depth, frame) in stack.iter().enumerate() {
            if depth == MAX_STACK_FRAMES {
                node = self.node(node, DEEPER);
                break;
            }
            node = self.node(node, frame.address);
        }
        self.add(node, calls.calls, calls.exclusive);
    }
}

/// What a trace's samples say of their process.
pub struct Process<'a> {
    pub info: &'a TraceInfo,
    pub lines: Option<SourceLines>,
    /// The names `report` gives functions that share one ([`crate::analysis::view::Prepared::label`]).
    pub label: &'a dyn Fn(u64) -> Option<String>,
    /// `host` and `run` labels, when given.
    pub host: Option<&'a str>,
    pub run: Option<&'a str>,
}

/// A profile being built from one trace or several.
pub struct ProfileBuilder {
    strings: Vec<String>,
    string_ids: HashMap<String, u64>,
    /// (name, file) → function id (= its location's id).
    function_ids: HashMap<(String, String), u64>,
    functions: Message,
    locations: Message,
    mapping_ids: HashMap<String, u64>,
    mappings: Message,
    samples: Message,
    with_cpu: bool,
    earliest_ns: Option<u64>,
}

impl ProfileBuilder {
    /// `with_cpu`: every trace has its context switches, and samples have a CPU time.
    pub fn new(with_cpu: bool) -> Self {
        let mut builder = ProfileBuilder {
            strings: Vec::new(),
            string_ids: HashMap::default(),
            function_ids: HashMap::default(),
            functions: Message::default(),
            locations: Message::default(),
            mapping_ids: HashMap::default(),
            mappings: Message::default(),
            samples: Message::default(),
            with_cpu,
            earliest_ns: None,
        };
        builder.string(""); // profile.proto: string_table[0] is "".
        builder
    }

    fn string(&mut self, s: &str) -> u64 {
        if let Some(&id) = self.string_ids.get(s) {
            return id;
        }
        let id = self.strings.len() as u64;
        self.strings.push(s.to_string());
        self.string_ids.insert(s.to_string(), id);
        id
    }

    fn mapping(&mut self, module: &str, with_lines: bool) -> u64 {
        if let Some(&id) = self.mapping_ids.get(module) {
            return id;
        }
        let id = self.mapping_ids.len() as u64 + 1;
        let mut m = Message::default();
        m.int(1, id);
        m.int(5, self.string(module));
        m.int(7, 1); // has_functions: symbolized, nothing for pprof to look up
        m.int(8, u64::from(with_lines));
        m.int(9, u64::from(with_lines));
        self.mappings.message(3, &m);
        self.mapping_ids.insert(module.to_string(), id);
        id
    }

    /// The location id of the function at `address` of `process` (one location per function).
    fn location(&mut self, process: &Process<'_>, paths: &CallPaths, address: u64) -> u64 {
        let (name, module, place) = if address == DEEPER {
            (deeper_label(), String::new(), None)
        } else if address == COUNTED {
            (COUNTED_LABEL.to_string(), String::new(), None)
        } else {
            let name = (process.label)(address)
                .or_else(|| paths.names.get(&address).cloned())
                .unwrap_or_else(|| format!("0x{address:x}"));
            let module = process.info.module_name(address);
            let place = process.lines.as_ref().and_then(|l| l.location(address));
            (name, module, place)
        };
        let file = place.as_ref().map_or("", |(f, _)| f.as_str()).to_string();
        if let Some(&id) = self.function_ids.get(&(name.clone(), file.clone())) {
            return id;
        }
        let id = self.function_ids.len() as u64 + 1;
        let line = place.map_or(0, |(_, l)| u64::from(l));
        let mut f = Message::default();
        f.int(1, id);
        let name_id = self.string(&name);
        f.int(2, name_id);
        f.int(3, name_id);
        f.int(4, self.string(&file));
        f.int(5, line);
        self.functions.message(5, &f);
        let mapping = if module.is_empty() {
            0
        } else {
            self.mapping(&module, process.lines.is_some())
        };
        let mut l = Message::default();
        l.int(1, id);
        l.int(2, mapping);
        let shown = match &process.lines {
            Some(lines) => lines.entry_point(address),
            None => address,
        };
        l.int(3, if address >= COUNTED { 0 } else { shown });
        let mut line_message = Message::default();
        line_message.int(1, id);
        line_message.int(2, line);
        l.message(4, &line_message);
        self.locations.message(4, &l);
        self.function_ids.insert((name, file), id);
        id
    }

    fn label(&mut self, sample: &mut Message, key: &str, text: Option<&str>, number: u64) {
        let mut label = Message::default();
        label.int(1, self.string(key));
        match text {
            Some(t) => label.int(2, self.string(t)),
            None => label.int(3, number),
        }
        sample.message(3, &label);
    }

    /// Adds the samples of one trace's call paths.
    pub fn add(&mut self, process: &Process<'_>, paths: &CallPaths) {
        let info = process.info;
        if let Some(start) = info.wall_start_ns() {
            self.earliest_ns = Some(self.earliest_ns.map_or(start, |e| e.min(start)));
        }
        let clock: TimeBase = info.clock;
        let pid = info.summary.header.pid;
        let program = info.program();
        let program = program.rsplit('/').next().unwrap_or(&program).to_string();
        let process_name = format!("{program} [{pid}]");
        let mut labels_by_tid: HashMap<u64, Vec<u8>> = HashMap::default();
        // Per node its function's location; symbols and lines looked up once a function.
        let mut by_address: HashMap<u64, u64> = HashMap::default();
        let mut location_ids: Vec<u64> = Vec::with_capacity(paths.parents.len());
        for (&parent, &address) in paths.parents.iter().zip(&paths.addresses) {
            let id = if parent == ROOT {
                0
            } else if let Some(&id) = by_address.get(&address) {
                id
            } else {
                let id = self.location(process, paths, address);
                by_address.insert(address, id);
                id
            };
            location_ids.push(id);
        }
        for node in 0..paths.parents.len() {
            if paths.parents[node] == ROOT
                || (paths.calls[node] == 0 && paths.wall[node] == 0 && paths.cpu[node] == 0)
            {
                continue;
            }
            // Leaf first, as profile.proto orders a sample's locations.
            let mut stack = Vec::new();
            let mut n = node as u32;
            while paths.parents[n as usize] != ROOT {
                stack.push(location_ids[n as usize]);
                n = paths.parents[n as usize];
            }
            let tid = paths.addresses[n as usize];
            let mut sample = Message::default();
            sample.packed(1, stack);
            let mut values = vec![paths.calls[node]];
            if self.with_cpu {
                values.push(clock.duration(paths.cpu[node]));
            }
            values.push(clock.duration(paths.wall[node]));
            // Packed, and written even when zero: a sample has one value per sample type.
            let mut body = Vec::new();
            for v in values {
                put_varint(&mut body, v);
            }
            sample.bytes(2, &body);
            // The labels are the thread's: encoded once a thread.
            let labels = match labels_by_tid.get(&tid) {
                Some(labels) => labels,
                None => {
                    let thread = info
                        .threads
                        .iter()
                        .find(|t| t.tid == tid)
                        .map_or_else(|| format!("tid {tid}"), |t| t.title());
                    let mut labels = Message::default();
                    self.label(&mut labels, "thread", Some(&thread), 0);
                    self.label(&mut labels, "tid", None, tid);
                    self.label(&mut labels, "process", Some(&process_name), 0);
                    self.label(&mut labels, "pid", None, pid);
                    if let Some(host) = process.host {
                        self.label(&mut labels, "host", Some(host), 0);
                    }
                    if let Some(run) = process.run {
                        self.label(&mut labels, "run", Some(run), 0);
                    }
                    labels_by_tid.entry(tid).or_insert(labels.0)
                }
            };
            sample.0.extend_from_slice(labels);
            self.samples.message(2, &sample);
        }
    }

    /// The whole profile, gzipped, with `comments` (what made it).
    pub fn write(mut self, comments: &[String], out: &mut dyn Write) -> io::Result<()> {
        let mut profile = Message::default();
        let mut types = vec![("calls", "count")];
        if self.with_cpu {
            types.push(("cpu", "nanoseconds"));
        }
        types.push(("wall", "nanoseconds"));
        for (kind, unit) in &types {
            let mut t = Message::default();
            t.int(1, self.string(kind));
            t.int(2, self.string(unit));
            profile.message(1, &t);
        }
        let comment_ids: Vec<u64> = comments.iter().map(|c| self.string(c)).collect();
        let default_type = self.string("wall");
        profile.0.extend_from_slice(&self.samples.0);
        profile.0.extend_from_slice(&self.mappings.0);
        profile.0.extend_from_slice(&self.locations.0);
        profile.0.extend_from_slice(&self.functions.0);
        for s in &self.strings {
            profile.bytes(6, s.as_bytes());
        }
        profile.int(9, self.earliest_ns.unwrap_or(0));
        profile.packed(13, comment_ids);
        profile.int(14, default_type);
        let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::default());
        gz.write_all(&profile.0)?;
        gz.finish()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::Message;

    /// Varints and keys as protobuf's encoding guide spells them.
    #[test]
    fn encodes_the_documented_bytes() {
        let mut m = Message::default();
        m.int(1, 150);
        assert_eq!(m.0, [0x08, 0x96, 0x01]);
        let mut m = Message::default();
        m.bytes(2, b"testing");
        assert_eq!(m.0, [0x12, 0x07, b't', b'e', b's', b't', b'i', b'n', b'g']);
        let mut m = Message::default();
        m.packed(4, [3, 270, 86942]);
        assert_eq!(m.0, [0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05]);
        let mut m = Message::default();
        m.int(3, 0);
        assert!(m.0.is_empty());
    }
}
