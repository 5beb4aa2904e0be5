//! `hookprof top PID`: a live view of a running traced program, through its control channel
//! ([`crate::commands::attach`]); `--follow TRACE`, a trace being written; `--gdb`, `--tcp`,
//! `--serial`, a firmware's stream ([`stream`]).
//!
//! The program records into a file of a temporary directory; every interval the runtime is
//! asked to finish it and go on in the next (`rotate`), and the finished window is read as any
//! trace (the flat profile's rows, per function and per thread). The view adds up the last
//! windows (a sliding window), draws them, and reads keys. At the end recording is switched off
//! and the files removed.

use anyhow::{bail, Context, Result};
use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::analysis::ids::HashMap;
use crate::analysis::live::{LiveProfile, LiveWindow};
use crate::commands::arguments::parse_duration;
use crate::commands::attach::request;
use crate::commands::record::StreamArgs;
use crate::commands::record::{
    read_stream, Consumer, Options as RecordOptions, RecordError, Source, Summary,
};
use crate::input::stream::{Event, StreamCounts};
use crate::input::symbols::Symbolizer;
use crate::input::symbols::{demangle, hex_name, ElfSymbols};
use crate::input::trace_file::TraceFile;
use crate::output::report::columns::{human_time, short_name};
use crate::output::report::flat::{FlatReport, TimeBasis, Unit};

/// What `hookprof top` does.
#[derive(Debug, Clone)]
pub struct TopOptions {
    pub pid: u32,
    /// How often a window ends and the view is redrawn.
    pub interval: Duration,
    /// How many windows the view adds up.
    pub windows: usize,
    /// Where the program writes its windows (it must be able to).
    pub dir: PathBuf,
    /// Rows drawn at most.
    pub rows: usize,
    /// Stop after this many windows (for scripts and tests); None: until `q` or Ctrl-C.
    pub iterations: Option<u64>,
}

/// One function's figures in a window.
#[derive(Debug, Clone, Copy, Default)]
struct Figures {
    calls: u64,
    self_ns: u64,
    total_ns: u64,
}

/// One finished window.
#[derive(Debug, Clone, Default)]
struct Window {
    seconds: f64,
    records: u64,
    lost: u64,
    functions: BTreeMap<String, Figures>,
    /// Per thread (its name and tid): the functions open at the window's end, outermost first.
    stacks: Vec<(String, Vec<String>)>,
    /// What the view says under its title (a stream that ended, and how).
    note: Option<String>,
    /// Its seconds are the target's clock's (a firmware's stream), not the wall clock's.
    target_time: bool,
}

/// The order of the rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TopSort {
    SelfTime,
    Total,
    Calls,
    Name,
}

/// The view's state: what the keys change.
#[derive(Debug, Clone)]
struct View {
    sort: TopSort,
    filter: String,
    editing_filter: bool,
    frozen: bool,
    quit: bool,
}

/// Reads a finished window's trace.
fn read_window(path: &Path, seconds: f64) -> Result<Window> {
    read_figures(path, seconds, None)
}

/// A trace's figures; times in nanoseconds, converted with `rate` (ticks a second) where the
/// file has no clock rate yet (a trace still being written, on x86).
fn read_figures(path: &Path, seconds: f64, rate: Option<u64>) -> Result<Window> {
    let trace = TraceFile::open(path)?;
    let profile = trace.profile_on(TimeBasis::Wall)?;
    let mut names = Symbolizer::new(&profile.summary, None)?;
    let flat = FlatReport::build(&profile, &mut names, false);
    let per_thread = FlatReport::build(&profile, &mut names, true);
    // Nanoseconds a tick: 1 where the file has its rate (the rows are in nanoseconds then).
    let rate = match (flat.summary.unit, rate) {
        (Unit::Ticks, Some(rate)) if rate > 0 => Some(rate),
        (Unit::Ticks, _) => bail!("{} has no clock rate", path.display()),
        _ => None,
    };
    let ns = |t: u64| match rate {
        Some(rate) => (t as u128 * 1_000_000_000 / rate as u128) as u64,
        None => t,
    };
    let mut window = Window {
        seconds,
        records: flat.summary.records,
        lost: flat.summary.lost,
        ..Window::default()
    };
    for row in &flat.rows {
        let f = window.functions.entry(row.function.clone()).or_default();
        f.calls += row.calls;
        f.self_ns += ns(row.exclusive);
        f.total_ns += ns(row.inclusive);
    }
    // Throttled functions (docs/recording.md, "Throttling") are only counted after their
    // first thousand-odd calls: a window with none timed has their count alone.
    let timed: std::collections::HashSet<u64> = flat.rows.iter().map(|r| r.address).collect();
    for (address, counted) in profile.summary.counted_calls() {
        if counted == 0 || timed.contains(&address) {
            continue;
        }
        use crate::input::symbols::Resolve;
        let name = names
            .resolve(address)
            .unwrap_or_else(|| format!("0x{address:x}"));
        window.functions.entry(name).or_default().calls += counted;
    }
    let mut open: BTreeMap<u64, Vec<(u64, String)>> = BTreeMap::new();
    for row in per_thread.rows.iter().filter(|r| r.closed_at_end > 0) {
        open.entry(row.thread.unwrap_or(0))
            .or_default()
            .push((row.inclusive, row.function.clone()));
    }
    for (thread, mut frames) in open {
        // The outer frames have been open longer: the largest inclusive time first.
        frames.sort_by_key(|f| std::cmp::Reverse(f.0));
        let label = format!("thread {thread}");
        window
            .stacks
            .push((label, frames.into_iter().map(|(_, f)| f).collect()));
    }
    Ok(window)
}

/// The sliding window's sum, as rows in the view's order.
fn rows(windows: &VecDeque<Window>, view: &View) -> (f64, Vec<(String, Figures)>) {
    let seconds: f64 = windows.iter().map(|w| w.seconds).sum();
    let mut sum: BTreeMap<String, Figures> = BTreeMap::new();
    for w in windows {
        for (name, f) in &w.functions {
            let s = sum.entry(name.clone()).or_default();
            s.calls += f.calls;
            s.self_ns += f.self_ns;
            s.total_ns += f.total_ns;
        }
    }
    let mut rows: Vec<(String, Figures)> = sum
        .into_iter()
        .filter(|(name, _)| view.filter.is_empty() || name.contains(&view.filter))
        .collect();
    match view.sort {
        TopSort::SelfTime => rows.sort_by_key(|r| std::cmp::Reverse(r.1.self_ns)),
        TopSort::Total => rows.sort_by_key(|r| std::cmp::Reverse(r.1.total_ns)),
        TopSort::Calls => rows.sort_by_key(|r| std::cmp::Reverse(r.1.calls)),
        TopSort::Name => rows.sort_by(|a, b| a.0.cmp(&b.0)),
    }
    (seconds, rows)
}

/// The screen, as lines (no escape sequences but the caller's).
fn draw(
    options: &TopOptions,
    program: &str,
    windows: &VecDeque<Window>,
    view: &View,
) -> Vec<String> {
    let (seconds, rows) = rows(windows, view);
    let per_second = |v: u64| {
        if seconds > 0.0 {
            v as f64 / seconds
        } else {
            0.0
        }
    };
    let records: u64 = windows.iter().map(|w| w.records).sum();
    let lost: u64 = windows.iter().map(|w| w.lost).sum();
    let sort = match view.sort {
        TopSort::SelfTime => "self time",
        TopSort::Total => "total time",
        TopSort::Calls => "calls",
        TopSort::Name => "name",
    };
    let mut lines = vec![
        format!(
            "hookprof top: {}, the last {:.1} s{}{}",
            if options.pid == 0 {
                program.to_string()
            } else {
                format!("pid {} ({program})", options.pid)
            },
            seconds,
            if windows.back().is_some_and(|w| w.target_time) {
                " of the target's time"
            } else {
                ""
            },
            if view.frozen { "  [frozen]" } else { "" }
        ),
        format!(
            "records {:.0}/s, lost {lost}{}  sorted by {sort}{}",
            per_second(records),
            if lost > 0 {
                " (LOSS: records the runtime could not keep)"
            } else {
                ""
            },
            if view.filter.is_empty() && !view.editing_filter {
                String::new()
            } else {
                format!(
                    ", filter: {}{}",
                    view.filter,
                    if view.editing_filter { "_" } else { "" }
                )
            }
        ),
    ];
    if let Some(note) = windows.back().and_then(|w| w.note.as_ref()) {
        lines.push(note.clone());
    }
    lines.extend([
        String::new(),
        format!(
            "{:>6} {:>10} {:>10} {:>10} {:>9}  function",
            "self%", "self/s", "total/s", "calls/s", "per call"
        ),
    ]);
    let all_self: u64 = rows.iter().map(|r| r.1.self_ns).sum();
    for (name, f) in rows.iter().take(options.rows) {
        let share = if all_self > 0 {
            100.0 * f.self_ns as f64 / all_self as f64
        } else {
            0.0
        };
        lines.push(format!(
            "{:>6.2} {:>10} {:>10} {:>10.0} {:>9}  {}",
            share,
            human_time(per_second(f.self_ns) as u64),
            human_time(per_second(f.total_ns) as u64),
            per_second(f.calls),
            human_time(f.total_ns.checked_div(f.calls).unwrap_or(0)),
            short_name(name, 60)
        ));
    }
    if let Some(last) = windows.back() {
        lines.push(String::new());
        lines.push("open at the last window's end (outermost first):".to_string());
        for (thread, frames) in &last.stacks {
            lines.push(format!("  {thread}: {}", frames.join(" > ")));
        }
    }
    lines.push(String::new());
    lines.push("keys: s self  t total  c calls  n name  / filter  f freeze  q quit".to_string());
    lines
}

/// The terminal in raw mode while the view runs (restored when dropped); `tui` too.
pub(crate) struct RawTerminal {
    saved: Option<libc::termios>,
}

impl RawTerminal {
    pub(crate) fn new() -> RawTerminal {
        // SAFETY: tcgetattr/tcsetattr on stdin with a termios we own; a stdin that is not a
        // terminal makes them fail, and nothing is changed then.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            if libc::tcgetattr(0, &mut t) != 0 {
                return RawTerminal { saved: None };
            }
            let saved = t;
            t.c_lflag &= !(libc::ICANON | libc::ECHO);
            t.c_cc[libc::VMIN] = 0;
            t.c_cc[libc::VTIME] = 0;
            libc::tcsetattr(0, libc::TCSANOW, &t);
            RawTerminal { saved: Some(saved) }
        }
    }
}

impl Drop for RawTerminal {
    fn drop(&mut self) {
        if let Some(saved) = self.saved {
            // SAFETY: restores the settings read in new().
            unsafe {
                libc::tcsetattr(0, libc::TCSANOW, &saved);
            }
        }
    }
}

/// Waits up to `timeout` for keys on stdin and applies them to the view.
fn read_keys(view: &mut View, timeout: Duration) {
    let mut fds = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one pollfd of ours.
    let ready = unsafe { libc::poll(&mut fds, 1, timeout.as_millis() as libc::c_int) };
    if ready <= 0 {
        return;
    }
    let mut buf = [0u8; 64];
    // SAFETY: reads into our buffer, at most its length.
    let n = unsafe { libc::read(0, buf.as_mut_ptr().cast(), buf.len()) };
    if n == 0 {
        // No more keys (stdin at its end: /dev/null, a script): poll would say so at once
        // again, and the loop would spin; wait as a terminal without keys would.
        std::thread::sleep(timeout);
    }
    if n <= 0 {
        return;
    }
    for &b in &buf[..n as usize] {
        if view.editing_filter {
            match b {
                b'\r' | b'\n' => view.editing_filter = false,
                0x1b => {
                    view.filter.clear();
                    view.editing_filter = false;
                }
                0x7f | 0x08 => {
                    view.filter.pop();
                }
                b if b.is_ascii_graphic() || b == b' ' => view.filter.push(b as char),
                _ => {}
            }
            continue;
        }
        match b {
            b'q' => view.quit = true,
            b's' => view.sort = TopSort::SelfTime,
            b't' => view.sort = TopSort::Total,
            b'c' => view.sort = TopSort::Calls,
            b'n' => view.sort = TopSort::Name,
            b'f' => view.frozen = !view.frozen,
            b'/' => {
                view.editing_filter = true;
                view.filter.clear();
            }
            _ => {}
        }
    }
}

fn window_path(dir: &Path, n: u64) -> PathBuf {
    dir.join(format!("window-{n}.hktrace"))
}

/// Runs the live view until `q`, Ctrl-C (`stop`) or the options' iterations.
pub fn top(options: &TopOptions, stop: &AtomicBool) -> Result<()> {
    let pid = options.pid;
    let status = request(pid, "status")?;
    if status.get("mode") != Some("trace") {
        bail!(
            "process {pid} records in {} mode: `hookprof top` needs the default mode (use \
             `hookprof attach`, which takes a snapshot)",
            status.get("mode").unwrap_or("?")
        );
    }
    let program = status.get("program").unwrap_or("?").to_string();
    std::fs::create_dir_all(&options.dir)?;
    let mut n = 0u64;
    request(
        pid,
        &format!("start {}", window_path(&options.dir, n).display()),
    )
    .context("starting the first window")?;
    let result = run(options, &program, &mut n, stop);
    let stopped = request(pid, "stop");
    let _ = std::fs::remove_file(window_path(&options.dir, n));
    result.and(stopped.map(|_| ()))
}

fn run(options: &TopOptions, program: &str, n: &mut u64, stop: &AtomicBool) -> Result<()> {
    live(options, program, stop, |seconds| {
        let finished = window_path(&options.dir, *n);
        request(
            options.pid,
            &format!("rotate {}", window_path(&options.dir, *n + 1).display()),
        )
        .context("ending a window")?;
        *n += 1;
        let window = read_window(&finished, seconds)
            .with_context(|| format!("reading {}", finished.display()));
        let _ = std::fs::remove_file(&finished);
        window.map(Some)
    })
}

/// `hookprof top --follow TRACE`: a trace still being written, read again every interval; a
/// window is what it gained since (its chunks come as the threads' buffers fill).
pub fn follow(trace: &Path, options: &TopOptions, stop: &AtomicBool) -> Result<()> {
    let rate = crate::input::coredump::measured_rate();
    let mut previous = Window::default();
    let title = trace.display().to_string();
    live(options, &title, stop, |seconds| {
        let current = match read_figures(trace, seconds, rate) {
            Ok(current) => current,
            // Not a trace yet (its header still to come), or cut inside a chunk being
            // written: the next read has it.
            Err(_) if !trace.exists() || previous.records == 0 => Window::default(),
            Err(e) => return Err(e),
        };
        let mut window = Window {
            seconds,
            records: current.records.saturating_sub(previous.records),
            lost: current.lost.saturating_sub(previous.lost),
            stacks: current.stacks.clone(),
            ..Window::default()
        };
        for (name, f) in &current.functions {
            let before = previous.functions.get(name).copied().unwrap_or_default();
            let delta = Figures {
                calls: f.calls.saturating_sub(before.calls),
                self_ns: f.self_ns.saturating_sub(before.self_ns),
                total_ns: f.total_ns.saturating_sub(before.total_ns),
            };
            if delta.calls > 0 || delta.total_ns > 0 {
                window.functions.insert(name.clone(), delta);
            }
        }
        previous = current;
        Ok(Some(window))
    })
}

/// The view's loop: every interval `next_window(seconds)` gives a window (`None`: nothing new,
/// a stream that ended), the view is redrawn; keys between.
fn live(
    options: &TopOptions,
    program: &str,
    stop: &AtomicBool,
    mut next_window: impl FnMut(f64) -> Result<Option<Window>>,
) -> Result<()> {
    let _raw = RawTerminal::new();
    let mut out = std::io::stdout();
    let mut view = View {
        sort: TopSort::SelfTime,
        filter: String::new(),
        editing_filter: false,
        frozen: false,
        quit: false,
    };
    let mut windows: VecDeque<Window> = VecDeque::new();
    let mut shown: Option<VecDeque<Window>> = None;
    let mut began = Instant::now();
    let mut done = 0u64;
    while !view.quit && !stop.load(Ordering::Relaxed) {
        let deadline = began + options.interval;
        while Instant::now() < deadline && !view.quit && !stop.load(Ordering::Relaxed) {
            let before = (
                view.sort,
                view.filter.clone(),
                view.frozen,
                view.editing_filter,
            );
            read_keys(
                &mut view,
                deadline
                    .saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(100)),
            );
            if !view.frozen {
                shown = None;
            } else if shown.is_none() {
                shown = Some(windows.clone());
            }
            if before
                != (
                    view.sort,
                    view.filter.clone(),
                    view.frozen,
                    view.editing_filter,
                )
            {
                redraw(
                    &mut out,
                    options,
                    program,
                    shown.as_ref().unwrap_or(&windows),
                    &view,
                )?;
            }
        }
        if view.quit || stop.load(Ordering::Relaxed) {
            break;
        }
        let seconds = began.elapsed().as_secs_f64();
        let window = next_window(seconds);
        began = Instant::now();
        let Some(window) = window? else {
            if options.iterations.is_some() {
                break;
            }
            continue;
        };
        windows.push_back(window);
        while windows.len() > options.windows.max(1) {
            windows.pop_front();
        }
        redraw(
            &mut out,
            options,
            program,
            shown.as_ref().unwrap_or(&windows),
            &view,
        )?;
        done += 1;
        if options.iterations.is_some_and(|i| done >= i) {
            break;
        }
    }
    Ok(())
}

fn redraw(
    out: &mut std::io::Stdout,
    options: &TopOptions,
    program: &str,
    windows: &VecDeque<Window>,
    view: &View,
) -> Result<()> {
    let mut screen = String::from("\x1b[H\x1b[2J");
    for line in draw(options, program, windows, view) {
        screen.push_str(&line);
        screen.push_str("\r\n");
    }
    out.write_all(screen.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// `hookprof top --gdb/--tcp/--serial`: a firmware's stream, read by `hookprof record`'s
/// transports and decoder ([`crate::commands::record::read_stream`]) on a thread of its own and
/// profiled as it comes ([`LiveProfile`]); every interval the view takes the window. Times are
/// the target's: its clock (the stream's START record says its rate) and each task's CPU time.
pub fn stream(
    source: &Source,
    exe: Option<&Path>,
    poll_interval: Duration,
    options: &TopOptions,
    stop: &AtomicBool,
) -> Result<()> {
    let symbols = match exe {
        Some(exe) => Some(ElfSymbols::load(exe)?),
        None => None,
    };
    let label = match source {
        Source::Gdb { address, .. } | Source::Tcp { address } => address.clone(),
        Source::Serial { path, .. } => path.display().to_string(),
    };
    let title = match exe {
        Some(exe) => format!(
            "{} through {label}",
            exe.file_name().unwrap_or(exe.as_os_str()).to_string_lossy()
        ),
        None => label.clone(),
    };
    let record_options = RecordOptions {
        output: PathBuf::from(&label),
        poll_interval,
        progress: false,
        exe: exe.map(Path::to_path_buf),
    };
    let shared = Mutex::new(LiveProfile::new());
    let reader_stop = AtomicBool::new(false);
    type Ended = (std::result::Result<Summary, RecordError>, Duration);
    let ended: Mutex<Option<Ended>> = Mutex::new(None);
    let mut names: HashMap<u64, String> = HashMap::default();
    let mut name = |address: u64| -> String {
        names
            .entry(address)
            .or_insert_with(|| match symbols.as_ref().and_then(|s| s.lookup(address)) {
                Some(hit) => demangle(hit.name),
                None => hex_name(address),
            })
            .clone()
    };
    std::thread::scope(|scope| {
        scope.spawn(|| {
            let began = Instant::now();
            let result = read_stream(source, &record_options, &reader_stop, |_| {
                Ok(LiveConsumer {
                    shared: &shared,
                    held: None,
                    counts: StreamCounts::default(),
                })
            });
            *ended.lock().unwrap_or_else(|e| e.into_inner()) = Some((result, began.elapsed()));
        });
        let mut reported_end = false;
        let mut any = false;
        // An error that stopped the stream after records came: said in the view, returned
        // when it quits.
        let mut failed: Option<RecordError> = None;
        let view = live(options, &title, stop, |wall_seconds| {
            if reported_end {
                return Ok(None);
            }
            // Whether the reader had ended before the window is taken: then the window has
            // all it read.
            let end = ended.lock().unwrap_or_else(|e| e.into_inner()).take();
            let live = shared
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take_window();
            any |= live.records > 0;
            let note = match end {
                None if !any => Some(format!("waiting for the stream from {label}")),
                None => None,
                Some((Ok(summary), took)) => {
                    reported_end = true;
                    Some(stream_end_note(&summary, took))
                }
                Some((Err(e), _)) => {
                    // `hookprof record`'s error says what its trace file kept; here there is
                    // no file: what stopped the stream is the error.
                    let cause = match e {
                        RecordError::Cut { cause, .. } => *cause,
                        e => e,
                    };
                    if !any {
                        return Err(cause.into());
                    }
                    reported_end = true;
                    let note =
                        format!("the stream stopped: {cause} (the view shows what came before)");
                    failed = Some(cause);
                    Some(note)
                }
            };
            Ok(Some(stream_window(live, wall_seconds, note, &mut name)))
        });
        reader_stop.store(true, Ordering::Relaxed);
        view?;
        match failed {
            Some(cause) => Err(cause.into()),
            None => Ok(()),
        }
    })
}

/// What the view says when the stream has ended: its records, and how fast they were read
/// (a file is read as fast as this machine decodes it).
fn stream_end_note(summary: &Summary, took: Duration) -> String {
    let firmware = match summary.counts.end {
        Some((records, lost)) => {
            format!("; the firmware made {records} records and dropped {lost}")
        }
        None => String::new(),
    };
    format!(
        "the stream ended ({}): {} records in {:.2} s ({:.0} a second), {} lost{firmware}",
        summary.ended_by,
        summary.records,
        took.as_secs_f64(),
        summary.records as f64 / took.as_secs_f64().max(1e-9),
        summary.counts.lost
    )
}

/// A stream's window as the view shows it: times in nanoseconds of the target's clock.
fn stream_window(
    live: LiveWindow,
    wall_seconds: f64,
    note: Option<String>,
    name: &mut impl FnMut(u64) -> String,
) -> Window {
    let rate = live.ticks_per_second;
    let ns = |t: u64| match rate {
        0 => t,
        rate => (t as u128 * 1_000_000_000 / rate as u128) as u64,
    };
    let mut window = Window {
        // The target's time where its clock's rate is known (qemu's -icount runs it faster
        // or slower than the wall clock); the wall clock's until then.
        seconds: if rate > 0 {
            live.ticks as f64 / rate as f64
        } else {
            wall_seconds
        },
        records: live.records,
        lost: live.lost,
        note,
        target_time: rate > 0,
        ..Window::default()
    };
    for (address, f) in live.functions {
        let row = window.functions.entry(name(address)).or_default();
        row.calls += f.calls;
        row.self_ns += ns(f.self_ticks);
        row.total_ns += ns(f.total_ticks);
    }
    for stack in live.stacks {
        let label = format!(
            "{}{}",
            stack.task,
            if stack.running { " (running)" } else { "" }
        );
        window
            .stacks
            .push((label, stack.frames.into_iter().map(&mut *name).collect()));
    }
    window
}

/// The stream's records into the live profile, under its lock for the whole of a read (one
/// lock a read, not a record; the view waits at most for one read's records).
struct LiveConsumer<'a> {
    shared: &'a Mutex<LiveProfile>,
    held: Option<MutexGuard<'a, LiveProfile>>,
    counts: StreamCounts,
}

impl Consumer for LiveConsumer<'_> {
    fn event(&mut self, event: Event) -> std::io::Result<()> {
        self.counts.count(&event);
        let shared = self.shared;
        self.held
            .get_or_insert_with(|| shared.lock().unwrap_or_else(|e| e.into_inner()))
            .event(&event);
        Ok(())
    }

    fn pushed(&mut self) -> std::io::Result<()> {
        self.held = None;
        Ok(())
    }

    fn counts(&self) -> StreamCounts {
        self.counts
    }

    fn finish(self, _cut: bool) -> std::io::Result<()> {
        Ok(())
    }
}

#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("watched").required(true).args(["pid", "follow", "gdb", "tcp", "serial"])))]
pub struct TopArgs {
    /// The process to watch.
    pub pid: Option<u32>,
    /// Instead of a process: a trace still being written, read again every interval (its
    /// records come as the program's buffers fill: HOOKCC_BUFFER_RECORDS).
    #[arg(long, value_name = "TRACE")]
    pub follow: Option<PathBuf>,
    /// Instead of a process: a firmware's stream (--gdb, --tcp or --serial, with --exe), read as
    /// `hookprof record` reads it. Times are the target's clock, each task's CPU time.
    #[command(flatten)]
    pub stream: StreamArgs,
    /// How often a window ends and the view is redrawn.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_duration)]
    pub interval: u64,
    /// How many windows the view adds up (the sliding window is --interval times this).
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub windows: usize,
    /// Rows of functions drawn.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub rows: usize,
    /// Where the program writes its windows (it must be able to; default: a new temporary
    /// directory, removed at the end).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Stop after this many windows (default: until q or Ctrl-C).
    #[arg(long, value_name = "N")]
    pub iterations: Option<u64>,
}
