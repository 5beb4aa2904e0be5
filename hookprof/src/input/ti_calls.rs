//! A TI dump's calls (`hookprof ti`, the post-processing tool of TI's "Profiling on the C6000
//! using Function Hooks", seeds/ti-c6000-function-hooks.txt, for dumps of hookcc's TI runtime:
//! docs/ti-runtime.md; the tool's own page is docs/ti-post.md), in four parts:
//! - [`crate::input::ti`]: the dump into records ([`Dump::parse`], [`parse_dump`]), and
//!   [`crate::input::ti_program`]: the program's ELF file ([`Program::parse`]);
//! - here: [`load_bias`], and [`Analysis::run`], the seed's tool: a call stack per task, task
//!   switches changing the stack in use; every completed call with its inclusive and
//!   exclusive cycles, where the time a task was switched out is not counted in the calls it
//!   had in progress; [`Analysis::to_hktrace`]: the calls as an in-memory `.hktrace` (tasks as
//!   threads, times in cycles of task time), so that `hookprof callgraph` and the views read
//!   TI dumps through the same replay, model and call graph code as native traces (the door,
//!   [`crate::input::open`], converts a dump so); [`analyse_file`]: a dump file read and
//!   replayed;
//! - [`crate::output::ti`]: the two CSV files, the status report and the call graph
//!   (through `Analysis::profile`, [`crate::analysis::ti`]);
//! - [`crate::commands::ti`]: `process_file` and `callgraph_file`, what the `hookprof` binary
//!   calls.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::input::error::TiError as Error;
use crate::input::format::{Endian, Header, Record as TraceRecord, Writer, FLAG_COMPLETE};
use crate::input::symbols::hex_name;
use crate::input::ti::{parse_dump, Dump, DumpFormat, LayoutChoice, RecordType};
use crate::input::ti_program::Program;

/// Where the load bias came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bias {
    /// Not position-independent: recorded addresses are ELF addresses.
    Fixed,
    /// `--profile-data`, or the CCS header's StartingAddress, minus the ELF's `ProfileData`.
    FromProfileData { runtime: u64, given: bool },
    /// Inferred from the recorded function addresses: `matched` of `considered` distinct
    /// addresses are function symbols with this bias.
    Inferred { matched: usize, considered: usize },
    /// Could not be determined: names are not resolved.
    Unknown,
}

/// Page size the load bias of a position-independent executable is a multiple of (the
/// smallest in use; larger pages are multiples of it).
const PAGE: u64 = 0x1000;

/// The load bias of `program` for `dump`, and how it was found.
pub fn load_bias(program: &Program, dump: &Dump, profile_data: Option<u64>) -> (u64, Bias) {
    if !program.position_independent {
        return (0, Bias::Fixed);
    }
    let from_dump = match dump.format {
        DumpFormat::CcsHex { start_address, .. } => Some(start_address),
        DumpFormat::Binary => None,
    };
    if let (Some(elf), Some(runtime)) = (program.profile_data, profile_data.or(from_dump)) {
        return (
            runtime.wrapping_sub(elf),
            Bias::FromProfileData {
                runtime,
                given: profile_data.is_some(),
            },
        );
    }
    // Vote: for each recorded function address, every function symbol at the same offset in
    // a page proposes address - symbol. The true bias gets a vote from every address.
    let mut by_page_offset: HashMap<u64, Vec<u64>> = HashMap::new();
    for &f in &program.functions {
        by_page_offset
            .entry(f & (PAGE - 1) & !3)
            .or_default()
            .push(f);
    }
    let mut seen = HashSet::new();
    let mut votes: HashMap<u64, usize> = HashMap::new();
    for r in &dump.records {
        if !matches!(r.kind, RecordType::FuncEntry | RecordType::FuncExit)
            || !seen.insert(r.address)
        {
            continue;
        }
        if seen.len() > 256 {
            break;
        }
        let mut proposed = HashSet::new();
        for &f in by_page_offset
            .get(&(r.address & (PAGE - 1)))
            .map_or(&[][..], Vec::as_slice)
        {
            // Same offset in a page: the bias is a multiple of PAGE. A program is loaded at
            // or above its link-time addresses.
            let Some(bias) = r.address.checked_sub(f & !3) else {
                continue;
            };
            if proposed.insert(bias) {
                *votes.entry(bias).or_default() += 1;
            }
        }
    }
    let considered = seen.len().min(256);
    match votes
        .into_iter()
        .max_by(|(ba, va), (bb, vb)| va.cmp(vb).then(bb.cmp(ba)))
    {
        Some((bias, matched)) if matched * 2 >= considered => (
            bias,
            Bias::Inferred {
                matched,
                considered,
            },
        ),
        _ => (0, Bias::Unknown),
    }
}

/// A task: its handle, or `None` for records with no task switch before them to name it.
pub type TaskKey = Option<u64>;

/// One completed call, in the call list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub address: u64,
    pub task: TaskKey,
    /// 1 for the outermost frame of the task.
    pub depth: usize,
    /// Timestamps of the entry and exit records.
    pub enter_time: u64,
    pub exit_time: u64,
    /// Cycles in the function and its callees while its task ran.
    pub inclusive: u64,
    /// Inclusive cycles minus those of the calls it made.
    pub exclusive: u64,
    /// Closed by the exit of a caller (its own exit record is missing).
    pub unwound: bool,
}

/// Per-function totals.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionStats {
    pub calls: u64,
    pub total_exclusive: u64,
    pub max_exclusive: u64,
    pub min_exclusive: u64,
    pub total_inclusive: u64,
    pub max_inclusive: u64,
}

/// Per-task totals: each time the task ran (from its TASK_ENTRY, or the first record, to its
/// TASK_EXIT, or the last record) is one execution.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TaskStats {
    pub runs: u64,
    pub total: u64,
    pub max: u64,
    pub min: u64,
}

fn add_run(s: &mut TaskStats, cycles: u64) {
    if s.runs == 0 {
        s.min = cycles;
    }
    s.runs += 1;
    s.total = s.total.saturating_add(cycles);
    s.max = s.max.max(cycles);
    s.min = s.min.min(cycles);
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    address: u64,
    enter_time: u64,
    /// Task time at entry.
    enter_task_time: u64,
    child_inclusive: u64,
    serial: usize,
}

/// An entry or exit in task time, for [`Analysis::to_hktrace`].
#[derive(Clone, Copy, Debug)]
struct TaskEvent {
    entry: bool,
    address: u64,
    task_time: u64,
    serial: usize,
}

#[derive(Debug, Default)]
struct TaskState {
    stack: Vec<Frame>,
    /// Cycles the task ran before its current run.
    ran: u64,
    /// Start of the current run, if it is running.
    running_since: Option<u64>,
    stats: TaskStats,
    events: Vec<TaskEvent>,
}

impl TaskState {
    fn task_time(&self, t: u64) -> u64 {
        self.ran
            .saturating_add(self.running_since.map_or(0, |s| t.saturating_sub(s)))
    }

    fn stop(&mut self, t: u64) {
        if let Some(start) = self.running_since.take() {
            let cycles = t.saturating_sub(start);
            self.ran = self.ran.saturating_add(cycles);
            add_run(&mut self.stats, cycles);
        }
    }
}

/// The result of replaying a dump: everything the CSV files, the status report and the call
/// graph show. Addresses are run-time addresses; [`Analysis::function_name`] and
/// [`Analysis::task_name`] name them.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// Completed calls, in order of completion (exit).
    pub calls: Vec<Call>,
    /// Per function address.
    pub functions: HashMap<u64, FunctionStats>,
    /// Tasks in order of first appearance, with their totals.
    pub tasks: Vec<(TaskKey, TaskStats)>,
    pub first_time: Option<u64>,
    pub last_time: Option<u64>,
    /// Distinct function addresses in the records.
    pub functions_found: usize,
    /// Distinct task handles in the records.
    pub tasks_found: usize,
    /// Entries whose exit is not in the dump (still running at its end, or left without an
    /// exit record): their calls are not in the call list, except those closed by a caller's
    /// exit ([`Call::unwound`]).
    pub enters_without_exit: u64,
    /// Exits whose entry is not in the dump (entered before recording began).
    pub exits_without_enter: u64,
    /// TASK_EXIT records naming another task than the one running.
    pub task_mismatches: u64,
    pub max_depth: usize,
    /// Function addresses no symbol names (shown as `?function #n`).
    pub unnamed_functions: usize,
    /// Recorded addresses minus this are ELF addresses.
    bias: u64,
    names: HashMap<u64, String>,
    task_names: HashMap<u64, String>,
    /// Events per task, same order as `tasks`.
    events: Vec<Vec<TaskEvent>>,
    closed: Vec<bool>,
}

impl Analysis {
    /// Replays `dump` as the seed's tool does, naming addresses with `program` (ELF addresses
    /// are recorded ones minus `bias`).
    pub fn run(dump: &Dump, program: &Program, bias: u64) -> Analysis {
        let mut tasks: Vec<(TaskKey, TaskState)> = Vec::new();
        let mut index: HashMap<TaskKey, usize> = HashMap::new();
        fn task_index(
            tasks: &mut Vec<(TaskKey, TaskState)>,
            index: &mut HashMap<TaskKey, usize>,
            key: TaskKey,
        ) -> usize {
            *index.entry(key).or_insert_with(|| {
                tasks.push((key, TaskState::default()));
                tasks.len() - 1
            })
        }
        let mut a = Analysis {
            calls: Vec::new(),
            functions: HashMap::new(),
            tasks: Vec::new(),
            first_time: dump.records.first().map(|r| r.time),
            last_time: dump.records.last().map(|r| r.time),
            functions_found: 0,
            tasks_found: 0,
            enters_without_exit: 0,
            exits_without_enter: 0,
            task_mismatches: 0,
            max_depth: 0,
            unnamed_functions: 0,
            bias,
            names: HashMap::new(),
            task_names: HashMap::new(),
            events: Vec::new(),
            closed: Vec::new(),
        };
        // The task running now (between a TASK_EXIT and its TASK_ENTRY: the one that left,
        // stopped). Records before the first task record go to the task key `None`, which
        // the first TASK_EXIT names.
        let mut current: Option<usize> = None;
        // In order of first appearance: unnamed ones are numbered in that order.
        let mut function_addresses: Vec<u64> = Vec::new();
        let mut seen_functions = HashSet::new();
        let mut task_handles: Vec<u64> = Vec::new();
        let mut serial = 0usize;
        // The task of each call, by index: the task `None` may be named later.
        let mut call_tasks: Vec<usize> = Vec::new();
        for r in &dump.records {
            match r.kind {
                RecordType::TaskExit | RecordType::TaskEntry => {
                    if !task_handles.contains(&r.address) {
                        task_handles.push(r.address);
                    }
                }
                _ => {
                    if seen_functions.insert(r.address) {
                        function_addresses.push(r.address);
                    }
                }
            }
            match r.kind {
                RecordType::TaskExit => {
                    let i = match current {
                        // The records so far belong to the task the first switch leaves.
                        Some(i) if tasks[i].0.is_none() => {
                            index.remove(&None);
                            tasks[i].0 = Some(r.address);
                            index.insert(Some(r.address), i);
                            i
                        }
                        Some(i) => {
                            if tasks[i].0 != Some(r.address) {
                                a.task_mismatches += 1;
                            }
                            i
                        }
                        None => task_index(&mut tasks, &mut index, Some(r.address)),
                    };
                    tasks[i].1.stop(r.time);
                    current = Some(i);
                }
                RecordType::TaskEntry => {
                    if let Some(i) = current {
                        // Stopped already, unless its TASK_EXIT is missing (then the records
                        // before stay with the task `None` if no switch named it).
                        tasks[i].1.stop(r.time);
                    }
                    let i = task_index(&mut tasks, &mut index, Some(r.address));
                    tasks[i].1.running_since = Some(r.time);
                    current = Some(i);
                }
                RecordType::FuncEntry | RecordType::FuncExit => {
                    let i = match current {
                        Some(i) => i,
                        None => {
                            let i = task_index(&mut tasks, &mut index, None);
                            tasks[i].1.running_since = Some(r.time);
                            current = Some(i);
                            i
                        }
                    };
                    let state = &mut tasks[i].1;
                    let task_time = state.task_time(r.time);
                    if r.kind == RecordType::FuncEntry {
                        state.stack.push(Frame {
                            address: r.address,
                            enter_time: r.time,
                            enter_task_time: task_time,
                            child_inclusive: 0,
                            serial,
                        });
                        state.events.push(TaskEvent {
                            entry: true,
                            address: r.address,
                            task_time,
                            serial,
                        });
                        a.closed.push(false);
                        serial += 1;
                        a.max_depth = a.max_depth.max(state.stack.len());
                        continue;
                    }
                    let Some(at) = state.stack.iter().rposition(|f| f.address == r.address) else {
                        a.exits_without_enter += 1;
                        continue;
                    };
                    while state.stack.len() > at {
                        let unwound = state.stack.len() > at + 1;
                        if unwound {
                            a.enters_without_exit += 1;
                        }
                        let Some(frame) = state.stack.pop() else {
                            break;
                        };
                        let inclusive = task_time.saturating_sub(frame.enter_task_time);
                        let exclusive = inclusive.saturating_sub(frame.child_inclusive);
                        if let Some(parent) = state.stack.last_mut() {
                            parent.child_inclusive =
                                parent.child_inclusive.saturating_add(inclusive);
                        }
                        state.events.push(TaskEvent {
                            entry: false,
                            address: frame.address,
                            task_time,
                            serial: frame.serial,
                        });
                        a.closed[frame.serial] = true;
                        let s = a.functions.entry(frame.address).or_default();
                        if s.calls == 0 {
                            s.min_exclusive = exclusive;
                        }
                        s.calls += 1;
                        s.total_exclusive = s.total_exclusive.saturating_add(exclusive);
                        s.max_exclusive = s.max_exclusive.max(exclusive);
                        s.min_exclusive = s.min_exclusive.min(exclusive);
                        s.total_inclusive = s.total_inclusive.saturating_add(inclusive);
                        s.max_inclusive = s.max_inclusive.max(inclusive);
                        call_tasks.push(i);
                        a.calls.push(Call {
                            address: frame.address,
                            task: None,
                            depth: state.stack.len() + 1,
                            enter_time: frame.enter_time,
                            exit_time: r.time,
                            inclusive,
                            exclusive,
                            unwound,
                        });
                    }
                }
            }
        }
        if let (Some(i), Some(last)) = (current, a.last_time) {
            tasks[i].1.stop(last);
        }
        a.enters_without_exit += tasks.iter().map(|(_, t)| t.stack.len() as u64).sum::<u64>();
        for (call, &i) in a.calls.iter_mut().zip(&call_tasks) {
            call.task = tasks[i].0;
        }
        a.functions_found = function_addresses.len();
        a.tasks_found = task_handles.len();

        // Names: functions and tasks from the ELF, else "?function #n" and "?task #n" in order
        // of first appearance, as the seed's tool names "task or function" it cannot find in
        // the .out file (seeds/ti-c6000-function-hooks.txt: "in the format like ?task #1").
        // The Address column keeps each function's ELF address.
        for &address in &function_addresses {
            let elf_address = address.wrapping_sub(bias);
            let name = program.name(elf_address).unwrap_or_else(|| {
                a.unnamed_functions += 1;
                format!("?function #{}", a.unnamed_functions)
            });
            a.names.insert(address, name);
        }
        let mut unnamed = 0;
        for &handle in &task_handles {
            // A null handle is no task's: what ran before a scheduler's first task (FreeRTOS's
            // first switch is from NULL), not whatever symbols sit at address 0.
            if handle == 0 {
                a.task_names.insert(handle, "(no task)".to_string());
                continue;
            }
            let name = program.name(handle.wrapping_sub(bias)).unwrap_or_else(|| {
                unnamed += 1;
                format!("?task #{unnamed}")
            });
            a.task_names.insert(handle, name);
        }
        for (key, state) in tasks {
            a.tasks.push((key, state.stats));
            a.events.push(state.events);
        }
        a
    }

    /// The name of a function address.
    pub fn function_name(&self, address: u64) -> String {
        self.names
            .get(&address)
            .cloned()
            .unwrap_or_else(|| hex_name(address))
    }

    /// The ELF address of a recorded function address, as the CSVs' Address column shows it
    /// (the same in every run of a position-independent executable, as `nm` shows it).
    pub fn elf_address(&self, address: u64) -> String {
        hex_name(address.wrapping_sub(self.bias))
    }

    /// The name of a task: its symbol, `?task #n`, or `(no task)` for records before any
    /// task switch names their task.
    pub fn task_name(&self, task: TaskKey) -> String {
        match task {
            None => "(no task)".to_string(),
            Some(h) => self
                .task_names
                .get(&h)
                .cloned()
                .unwrap_or_else(|| hex_name(h)),
        }
    }

    /// Timestamp of the last record minus that of the first.
    pub fn total_cycles(&self) -> u64 {
        match (self.first_time, self.last_time) {
            (Some(f), Some(l)) => l.saturating_sub(f),
            _ => 0,
        }
    }

    /// Cycles spent in recorded functions: the sum of every call's exclusive cycles.
    pub fn function_valid_cycles(&self) -> u64 {
        self.functions
            .values()
            .fold(0u64, |s, f| s.saturating_add(f.total_exclusive))
    }

    /// Cycles the named tasks ran.
    pub fn task_valid_cycles(&self) -> u64 {
        self.tasks
            .iter()
            .filter(|(k, _)| k.is_some())
            .fold(0u64, |s, (_, t)| s.saturating_add(t.total))
    }

    /// The calls as a `.hktrace`: one thread per task (thread id = its position, 1 = first;
    /// THREAD chunk named after the task), timestamps in cycles of the task's own running
    /// time, no clock rate. Only calls in the call list are in it, so the replay layer finds
    /// every entry matched.
    pub fn to_hktrace(&self) -> Vec<u8> {
        let threads: Vec<Vec<TraceRecord>> = self
            .events
            .iter()
            .map(|events| {
                events
                    .iter()
                    .filter(|e| self.closed.get(e.serial).copied().unwrap_or(false))
                    .map(|e| {
                        let time = e.task_time;
                        if e.entry {
                            TraceRecord::entry(time, e.address)
                        } else {
                            TraceRecord::exit(time, e.address)
                        }
                    })
                    .collect()
            })
            .collect();
        let mut header = Header::new(Endian::native());
        header.flags = FLAG_COMPLETE;
        header.records = threads.iter().map(|t| t.len() as u64).sum();
        // TI addresses have their 2 type bits cleared, so bit 1 (format version 2's exit mark)
        // is free and writing cannot fail.
        let mut w = Writer::new(Vec::new(), &header).expect("writing to a Vec cannot fail");
        for (i, ((key, _), records)) in self.tasks.iter().zip(&threads).enumerate() {
            let tid = i as u64 + 1;
            for chunk in records.chunks(65536) {
                w.events(tid, chunk).expect("writing to a Vec cannot fail");
            }
            w.thread(tid, tid, &self.task_name(*key))
                .expect("writing to a Vec cannot fail");
        }
        w.into_inner()
    }

    /// The function names, by address, for the call graph.
    pub fn function_names(&self) -> HashMap<u64, String> {
        self.names.clone()
    }
}

/// Options of `hookprof ti`, independent of any command line.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The program's ELF file.
    pub exe: PathBuf,
    /// Names from every symbol, not only global ones.
    pub all_symbols: bool,
    /// The run-time address of `ProfileData` (for a binary dump of a position-independent
    /// executable).
    pub profile_data: Option<u64>,
    /// Words per record (3: the seed's `Hook_Record`, 4: hookcc's on a 64-bit target); `None`:
    /// from the ELF file and the dump ([`parse_dump`]).
    pub record_words: Option<u8>,
}

/// Fewer distinct function addresses than this say too little to refuse a dump: its size alone
/// cannot tell a headerless record dump from noise, its agreement with the ELF can.
const MIN_ADDRESSES_TO_JUDGE: usize = 32;

/// How many of the distinct function addresses of the dump's entry and exit records, less the
/// load bias, are function symbols of the program (local ones too), and of how many.
pub fn agreement(program: &Program, dump: &Dump, bias: u64) -> (usize, usize) {
    let addresses: HashSet<u64> = dump
        .records
        .iter()
        .filter(|r| matches!(r.kind, RecordType::FuncEntry | RecordType::FuncExit))
        .map(|r| r.address)
        .collect();
    let agreeing = addresses
        .iter()
        .filter(|&&a| {
            program
                .functions
                .binary_search(&(a.wrapping_sub(bias) & !3))
                .is_ok()
        })
        .count();
    (agreeing, addresses.len())
}

/// A dump read and replayed, before anything is rendered.
#[derive(Clone, Debug)]
pub struct Analysed {
    pub dump: Dump,
    /// How the dump's record layout was chosen.
    pub layout_choice: LayoutChoice,
    pub bias: (u64, Bias),
    pub analysis: Analysis,
    pub warnings: Vec<String>,
}

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|error| Error::Io {
        path: path.to_path_buf(),
        error,
    })
}

/// Reads and replays the dump at `dump_path` ([`analyse`]), refusing a dump that is not of
/// the program `options.exe`.
pub fn analyse_file(dump_path: &Path, options: &Options) -> Result<Analysed, Error> {
    let elf = read(&options.exe)?;
    let program = Program::parse(&elf, options.all_symbols).map_err(|error| Error::Elf {
        path: options.exe.clone(),
        error,
    })?;
    let data = crate::input::read::read_bounded(dump_path, crate::input::read::MAX_DUMP_BYTES)
        .map_err(|error| Error::Io {
            path: dump_path.to_path_buf(),
            error,
        })?;
    let (dump, choice) =
        parse_dump(&data, program.layout, options.record_words).map_err(|error| Error::Dump {
            path: dump_path.to_path_buf(),
            error,
        })?;
    let mut processed = analyse(dump, &program, options.profile_data);
    processed.layout_choice = choice;
    // Fewer than a quarter of the addresses agreeing, with enough of them to judge: noise,
    // or another program's dump (whose names would all be wrong).
    let (agreeing, distinct) = agreement(&program, &processed.dump, processed.bias.0);
    if distinct >= MIN_ADDRESSES_TO_JUDGE && agreeing * 4 < distinct {
        return Err(Error::NotThisProgram {
            path: dump_path.to_path_buf(),
            exe: options.exe.clone(),
            agreeing,
            distinct,
        });
    }
    Ok(processed)
}

/// Replays `dump` with the names of `program` and the load bias it finds.
pub fn analyse(dump: Dump, program: &Program, profile_data: Option<u64>) -> Analysed {
    let bias = load_bias(program, &dump, profile_data);
    // Without the bias, any name would be a guess.
    let no_names;
    let names = if bias.1 == Bias::Unknown {
        no_names = Program::from_names(program.layout, []);
        &no_names
    } else {
        program
    };
    let analysis = Analysis::run(&dump, names, bias.0);
    let warnings = warnings(&dump, program, &bias, &analysis);
    Analysed {
        dump,
        layout_choice: LayoutChoice::Elf,
        bias,
        analysis,
        warnings,
    }
}

fn warnings(dump: &Dump, program: &Program, bias: &(u64, Bias), a: &Analysis) -> Vec<String> {
    let mut w = Vec::new();
    if dump.records.is_empty() {
        w.push(
            "the dump holds no valid record (was hook_init called, and the dump taken from \
             ProfileData?)"
                .to_string(),
        );
    }
    if let DumpFormat::CcsHex { declared_words, .. } = dump.format {
        let words = dump.slots * dump.layout.record_size() / 4;
        if declared_words != words {
            w.push(format!(
                "the CCS header's length is 0x{declared_words:x} words but 0x{words:x} follow; \
                 the words that follow were read"
            ));
        }
    }
    match bias.1 {
        Bias::Unknown => w.push(
            "the program is position-independent and the load bias could not be found (a \
             binary dump has no address, and the recorded addresses match no bias of the \
             ELF's functions): names are not resolved. Give --profile-data with ProfileData's \
             address (HOOKCC_TI_VERBOSE=1 prints it), decode the .dat file, or build with \
             -no-pie"
                .to_string(),
        ),
        Bias::FromProfileData { .. } | Bias::Fixed | Bias::Inferred { .. } => {}
    }
    if program.position_independent && program.profile_data.is_none() {
        if let DumpFormat::CcsHex { .. } = dump.format {
            w.push(
                "the ELF file has no ProfileData symbol, so the CCS header's starting address \
                 cannot give the load bias; it was inferred from the function addresses"
                    .to_string(),
            );
        }
    }
    if a.unnamed_functions > 0 && bias.1 != Bias::Unknown {
        w.push(format!(
            "{} of the {} function addresses have no symbol in the ELF file and are \
             shown as ?function #1, #2, …, their ELF addresses in the Address column (is it the program \
             that wrote the dump?)",
            a.unnamed_functions,
            a.names.len()
        ));
    }
    if dump.backward_steps > 0 {
        w.push(format!(
            "the timestamp goes backwards {} times between consecutive records (several \
             threads or cores recording, or a counter that is not monotonic): cycles around \
             those points are not exact",
            dump.backward_steps
        ));
    }
    if a.task_mismatches > 0 {
        w.push(format!(
            "{} TASK_EXIT records name another task than the one running (records lost?)",
            a.task_mismatches
        ));
    }
    w
}
