//! A stream's records profiled as they come, for `hookprof top --gdb/--tcp/--serial`
//! ([`crate::commands::top`]): the records [`crate::input::stream::Decoder`] decodes (the same
//! decoder `hookprof record` writes a trace with) are paired per task as the replay layer pairs
//! a trace's ([`crate::analysis::replay`]; docs/trace-format.md, "How the reader pairs
//! records"), and each function's calls, self and total time are added up for the window in
//! progress; [`LiveProfile::take_window`] ends it.
//!
//! Times are CPU time: the stream has every task switch, so a task's clock runs only while
//! it is switched in, and a function's time is what its task ran in it. A call is counted when
//! it is entered; its time goes to the windows it ran in (the part of a frame still open at a
//! window's end is that window's, the rest the next's), so a long call, as a task's loop, is
//! seen while it runs, not only when it returns. Total time is a recursive function's
//! outermost frame's, as in the reports.
//!
//! Every record costs a few array updates (the function numbered once per entry by
//! [`DenseIds`]); a window's end costs a walk of the open frames. Memory grows with the tasks,
//! functions and stack depths, not with the records.

use crate::analysis::ids::{DenseIds, HashMap};
use crate::input::format::EXIT_BIT;
use crate::input::stream::Event;

/// One function's figures in a window, in the target's ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LiveFigures {
    /// Calls entered in the window.
    pub calls: u64,
    pub self_ticks: u64,
    pub total_ticks: u64,
}

/// A task's open functions at a window's end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveStack {
    /// The task's name (`main` before the first task switch).
    pub task: String,
    /// Whether it was running at the window's end.
    pub running: bool,
    /// Function addresses, outermost first.
    pub frames: Vec<u64>,
}

/// One finished window.
#[derive(Clone, Debug, Default)]
pub struct LiveWindow {
    /// The target's ticks the window spans, and the ticks a second (0 if the stream has not
    /// said yet).
    pub ticks: u64,
    pub ticks_per_second: u64,
    /// Records decoded in the window, and records the target dropped.
    pub records: u64,
    pub lost: u64,
    /// Per function address, those with anything in the window.
    pub functions: Vec<(u64, LiveFigures)>,
    /// Every task with open functions.
    pub stacks: Vec<LiveStack>,
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    function: u32,
    /// The task's CPU clock at the entry.
    entered: u64,
    /// CPU time of the callees that returned.
    children: u64,
    /// What earlier windows took of its self and total time.
    credited_self: u64,
    credited_total: u64,
    /// No frame of the same function below it in its task (its total time counts).
    outermost: bool,
}

#[derive(Clone, Debug)]
struct Task {
    name: String,
    stack: Vec<Frame>,
    /// Its open frames per function (numbered by `ids`; grown as functions come).
    open: Vec<u32>,
    /// CPU ticks run up to its last switch-out (the running task's go on from `switched_in`).
    cpu: u64,
}

/// The profile of a stream in progress: feed it [`LiveProfile::event`], take windows.
#[derive(Clone, Debug)]
pub struct LiveProfile {
    ids: DenseIds,
    addresses: Vec<u64>,
    /// The window's figures per function.
    window: Vec<LiveFigures>,
    tasks: Vec<Task>,
    /// Task handle → index in `tasks`.
    task_of: HashMap<u64, usize>,
    running: usize,
    switched_in: u64,
    now: u64,
    window_start: u64,
    ticks_per_second: u64,
    started: bool,
    /// A resync escape came: the next entry is where a `longjmp` landed, not a call.
    resync: bool,
    records: u64,
    lost: u64,
}

impl Default for LiveProfile {
    fn default() -> Self {
        LiveProfile::new()
    }
}

impl LiveProfile {
    pub fn new() -> LiveProfile {
        LiveProfile {
            ids: DenseIds::default(),
            addresses: Vec::new(),
            window: Vec::new(),
            tasks: vec![Task {
                name: "main".to_string(),
                stack: Vec::new(),
                open: Vec::new(),
                cpu: 0,
            }],
            task_of: HashMap::default(),
            running: 0,
            switched_in: 0,
            now: 0,
            window_start: 0,
            ticks_per_second: 0,
            started: false,
            resync: false,
            records: 0,
            lost: 0,
        }
    }

    /// The running task's CPU clock now.
    fn cpu_now(&self, task: usize) -> u64 {
        let t = &self.tasks[task];
        if task == self.running {
            t.cpu + self.now.saturating_sub(self.switched_in)
        } else {
            t.cpu
        }
    }

    fn advance(&mut self, time: u64) {
        if !self.started {
            // Records before START cannot come (the decoder refuses them); a window's clock
            // starts at the first record regardless.
            self.started = true;
            self.now = time;
            self.switched_in = time;
            self.window_start = time;
        }
        self.now = self.now.max(time);
    }

    /// The task of `handle` (one made up if it was never created).
    fn task(&mut self, handle: u64) -> usize {
        if let Some(&t) = self.task_of.get(&handle) {
            return t;
        }
        self.new_task(handle, format!("task {handle:#x}"))
    }

    fn new_task(&mut self, handle: u64, name: String) -> usize {
        self.tasks.push(Task {
            name,
            stack: Vec::new(),
            open: Vec::new(),
            cpu: 0,
        });
        let t = self.tasks.len() - 1;
        self.task_of.insert(handle, t);
        t
    }

    fn switch_to(&mut self, task: usize, time: u64) {
        self.advance(time);
        let ran = self.now.saturating_sub(self.switched_in);
        self.tasks[self.running].cpu += ran;
        self.running = task;
        self.switched_in = self.now;
    }

    /// Closes the top frame of `task` at its CPU clock `cpu`.
    fn close_top(&mut self, task: usize, cpu: u64) {
        let Some(frame) = self.tasks[task].stack.pop() else {
            return;
        };
        let f = frame.function as usize;
        let inclusive = cpu.saturating_sub(frame.entered);
        let own = inclusive.saturating_sub(frame.children);
        let figures = &mut self.window[f];
        figures.self_ticks += own.saturating_sub(frame.credited_self);
        if frame.outermost {
            figures.total_ticks += inclusive.saturating_sub(frame.credited_total);
        }
        let t = &mut self.tasks[task];
        t.open[f] -= 1;
        if let Some(parent) = t.stack.last_mut() {
            parent.children += inclusive;
        }
    }

    /// Closes every open frame of `task` (a gap: their exits may be among the records lost).
    fn close_all(&mut self, task: usize) {
        let cpu = self.cpu_now(task);
        while !self.tasks[task].stack.is_empty() {
            self.close_top(task, cpu);
        }
    }

    /// Takes one decoded record.
    pub fn event(&mut self, event: &Event) {
        self.records += 1;
        match *event {
            Event::Call {
                time,
                address,
                exit,
            } => {
                self.advance(time);
                let address = address & !EXIT_BIT;
                let task = self.running;
                if exit {
                    self.exit(task, address);
                } else if std::mem::take(&mut self.resync) {
                    self.land(task, address);
                } else {
                    self.entry(task, address);
                }
            }
            Event::Start {
                ticks_per_second,
                time,
                ..
            } => {
                self.advance(time);
                if self.ticks_per_second == 0 {
                    self.ticks_per_second = ticks_per_second;
                }
            }
            Event::Switch { time, task } => {
                let t = self.task(task);
                self.switch_to(t, time);
            }
            Event::Created {
                time,
                task,
                ref name,
            } => {
                self.advance(time);
                self.new_task(task, name.clone());
            }
            Event::Name {
                time,
                task,
                ref name,
            } => {
                self.advance(time);
                let t = self.task(task);
                self.tasks[t].name = name.clone();
            }
            Event::Lost { time, count, task } => {
                self.advance(time);
                self.lost += count;
                let running = self.running;
                self.close_all(running);
                if let Some(handle) = task {
                    // Task switches were dropped too: any task may have run meanwhile.
                    for t in 0..self.tasks.len() {
                        self.close_all(t);
                    }
                    let t = self.task(handle);
                    self.switch_to(t, time);
                }
            }
            Event::Escape { time } => {
                self.advance(time);
                self.resync = true;
            }
            Event::Ring { time, .. } | Event::End { time, .. } => self.advance(time),
        }
    }

    fn entry(&mut self, task: usize, address: u64) {
        let function = self.ids.id(address);
        let f = function as usize;
        if f == self.addresses.len() {
            self.addresses.push(address);
            self.window.push(LiveFigures::default());
        }
        self.window[f].calls += 1;
        let entered = self.cpu_now(task);
        let t = &mut self.tasks[task];
        if f >= t.open.len() {
            t.open.resize(self.addresses.len(), 0);
        }
        let outermost = t.open[f] == 0;
        t.open[f] += 1;
        t.stack.push(Frame {
            function,
            entered,
            children: 0,
            credited_self: 0,
            credited_total: 0,
            outermost,
        });
    }

    /// An exit closes the nearest frame of its function (those above it were left without
    /// their exits); an exit without one is ignored (unmatched).
    fn exit(&mut self, task: usize, address: u64) {
        let Some(function) = self.ids.get(address) else {
            return;
        };
        let stack = &self.tasks[task].stack;
        let Some(at) = stack.iter().rposition(|f| f.function == function) else {
            return;
        };
        let cpu = self.cpu_now(task);
        while self.tasks[task].stack.len() > at {
            self.close_top(task, cpu);
        }
    }

    /// A `longjmp` landed in `address`'s innermost open frame (docs/trace-format.md, "Resync
    /// records"): the frames above it are closed; without one, nothing is.
    fn land(&mut self, task: usize, address: u64) {
        let Some(function) = self.ids.get(address) else {
            return;
        };
        let Some(at) = self.tasks[task]
            .stack
            .iter()
            .rposition(|f| f.function == function)
        else {
            return;
        };
        let cpu = self.cpu_now(task);
        while self.tasks[task].stack.len() > at + 1 {
            self.close_top(task, cpu);
        }
    }

    /// Ends the window in progress: its figures (the open frames' time so far included) and
    /// every task's open functions; the next window starts now.
    pub fn take_window(&mut self) -> LiveWindow {
        for task in 0..self.tasks.len() {
            let cpu = self.cpu_now(task);
            // From the top down: a frame's self time so far is its time less its callees'
            // (the returned ones' and the open one's above it).
            let mut above = 0u64;
            for frame in self.tasks[task].stack.iter_mut().rev() {
                let inclusive = cpu.saturating_sub(frame.entered);
                let own = inclusive
                    .saturating_sub(frame.children)
                    .saturating_sub(above);
                let figures = &mut self.window[frame.function as usize];
                figures.self_ticks += own.saturating_sub(frame.credited_self);
                frame.credited_self = frame.credited_self.max(own);
                if frame.outermost {
                    figures.total_ticks += inclusive.saturating_sub(frame.credited_total);
                    frame.credited_total = frame.credited_total.max(inclusive);
                }
                above = inclusive;
            }
        }
        let functions = self
            .window
            .iter_mut()
            .enumerate()
            .filter(|(_, f)| **f != LiveFigures::default())
            .map(|(i, f)| (self.addresses[i], std::mem::take(f)))
            .collect();
        let stacks = self
            .tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.stack.is_empty())
            .map(|(i, t)| LiveStack {
                task: t.name.clone(),
                running: i == self.running,
                frames: t
                    .stack
                    .iter()
                    .map(|f| self.addresses[f.function as usize])
                    .collect(),
            })
            .collect();
        let window = LiveWindow {
            ticks: self.now.saturating_sub(self.window_start),
            ticks_per_second: self.ticks_per_second,
            records: std::mem::take(&mut self.records),
            lost: std::mem::take(&mut self.lost),
            functions,
            stacks,
        };
        self.window_start = self.now;
        window
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(time: u64, address: u64, exit: bool) -> Event {
        Event::Call {
            time,
            address,
            exit,
        }
    }

    /// A profile fed `events`.
    fn fed(events: &[Event]) -> LiveProfile {
        let mut p = LiveProfile::new();
        for e in events {
            p.event(e);
        }
        p
    }

    fn figures_of(calls: u64, self_ticks: u64, total_ticks: u64) -> LiveFigures {
        LiveFigures {
            calls,
            self_ticks,
            total_ticks,
        }
    }

    /// The stream's START: a 1 kHz clock from 0.
    fn start() -> Event {
        Event::Start {
            pointer_size: 4,
            ticks_per_second: 1000,
            time: 0,
        }
    }

    fn figures(window: &LiveWindow, address: u64) -> LiveFigures {
        window
            .functions
            .iter()
            .find(|(a, _)| *a == address)
            .map(|(_, f)| *f)
            .unwrap_or_default()
    }

    #[test]
    fn self_and_total_time_are_cpu_time_split_at_the_windows() {
        let mut p = fed(&[
            start(),
            Event::Created {
                time: 0,
                task: 7,
                name: "a".into(),
            },
            Event::Created {
                time: 0,
                task: 8,
                name: "b".into(),
            },
            Event::Switch { time: 0, task: 7 },
            call(0, 0x100, false),  // a: outer
            call(10, 0x200, false), // a: inner, 10 ticks of outer's own first
            Event::Switch { time: 20, task: 8 },
            call(20, 0x300, false),
            call(50, 0x300, true), // b: 30 ticks
            Event::Switch { time: 60, task: 7 },
        ]);
        let w = p.take_window();
        assert_eq!(w.ticks, 60);
        assert_eq!(w.ticks_per_second, 1000);
        assert_eq!(figures(&w, 0x300), figures_of(1, 30, 30));
        // inner ran 10 ticks before the switch; a was switched out 40 ticks after.
        assert_eq!(figures(&w, 0x200), figures_of(1, 10, 10));
        assert_eq!(figures(&w, 0x100), figures_of(1, 10, 20));
        let a = w.stacks.iter().find(|s| s.task == "a").unwrap();
        assert_eq!(a.frames, vec![0x100, 0x200]);
        assert!(a.running);
        // The next window has the rest of the open calls and no new calls.
        p.event(&call(65, 0x200, true));
        p.event(&call(70, 0x100, true));
        let w = p.take_window();
        assert_eq!(w.ticks, 10);
        assert_eq!(figures(&w, 0x200), figures_of(0, 5, 5));
        assert_eq!(figures(&w, 0x100), figures_of(0, 5, 10));
        assert!(w.stacks.is_empty());
    }

    #[test]
    fn recursion_counts_its_total_once_and_unmatched_exits_are_ignored() {
        let mut p = fed(&[
            start(),
            call(0, 0x100, false),
            call(1, 0x100, false),
            call(3, 0x100, true),
            call(4, 0x400, true), // never entered
            call(6, 0x100, true),
        ]);
        let w = p.take_window();
        assert_eq!(figures(&w, 0x100), figures_of(2, 6, 6));
        assert_eq!(figures(&w, 0x400), LiveFigures::default());
        assert_eq!(w.records, 6);
    }

    #[test]
    fn a_loss_closes_the_open_frames_and_is_counted() {
        let mut p = fed(&[
            start(),
            call(0, 0x100, false),
            Event::Lost {
                time: 5,
                count: 9,
                task: Some(3),
            },
            call(8, 0x100, true), // its frame was closed at the gap
        ]);
        let w = p.take_window();
        assert_eq!(w.lost, 9);
        assert_eq!(figures(&w, 0x100).self_ticks, 5);
        assert!(w.stacks.is_empty());
    }

    #[test]
    fn two_tasks_in_one_function_each_count_their_total() {
        let mut p = fed(&[
            start(),
            Event::Switch { time: 0, task: 1 },
            call(0, 0x100, false),
            Event::Switch { time: 4, task: 2 },
            call(4, 0x100, false),
            call(10, 0x100, true),
            Event::Switch { time: 10, task: 1 },
            call(12, 0x100, true),
        ]);
        let w = p.take_window();
        assert_eq!(figures(&w, 0x100), figures_of(2, 12, 12));
    }

    #[test]
    fn a_longjmp_closes_the_frames_above_where_it_lands() {
        let mut p = fed(&[
            start(),
            call(0, 0x100, false),
            call(1, 0x200, false),
            call(2, 0x300, false),
            Event::Escape { time: 5 },
            call(5, 0x100, false), // the landing in 0x100: not a call
            call(7, 0x100, true),
        ]);
        let w = p.take_window();
        assert_eq!(figures(&w, 0x100), figures_of(1, 3, 7));
        assert_eq!(figures(&w, 0x300), figures_of(1, 3, 3));
        assert!(w.stacks.is_empty());
    }
}
