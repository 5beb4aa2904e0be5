//! Helpers for hookcc's end-to-end tests: find the built tools, build C/C++ programs with
//! hookcc, run them, decode their traces with hookprof.
//!
//! The tools are the workspace's own build products (`cargo build --workspace` first; the
//! README's test command does both).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `target/<profile>/`, where cargo put hookcc, hookprof and the plugin.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test-binary>
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf()
}

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// A tool built by this workspace; panics with what to do when it has not been built.
pub fn tool(name: &str) -> PathBuf {
    let path = target_dir().join(name);
    assert!(
        path.exists(),
        "{} is not built: run `cargo build --workspace` before the tests",
        path.display()
    );
    path
}

/// `ok`, where `what` (something scripts/setup.sh installs) is there; where it is not, fails
/// in CI (setup.sh installs it there) and says what is missing elsewhere, for a skip.
pub fn present(ok: bool, what: &str) -> bool {
    if !ok {
        assert!(!in_ci(), "CI must have {what} (scripts/setup.sh)");
        eprintln!("skipping: {what} missing (scripts/setup.sh installs it)");
    }
    ok
}

/// True if `program ARGS…` runs (a tool the test needs, from `package`); otherwise fails in CI
/// (scripts/setup.sh installs it there) and says what is missing elsewhere, for a skip.
pub fn have_tool(program: &str, args: &[&str], package: &str) -> bool {
    let ok = Command::new(program)
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success());
    present(ok, &format!("`{program}` ({package})"))
}

/// Whether a hosted cross target can be built and run: Debian's cross libc at `/usr/{triple}`
/// and `qemu` (qemu-user). CI must have both (scripts/setup.sh); elsewhere a skip, said.
pub fn have_cross_target(triple: &str, qemu: &str) -> bool {
    let sysroot = format!("/usr/{triple}");
    present(
        Path::new(&sysroot).join("lib").is_dir(),
        &format!("the cross libc {sysroot}"),
    ) && have_tool(qemu, &["--version"], "qemu-user")
}

/// The runtime's one line when the kernel refuses the threads' perf events (a
/// perf_event_paranoid above 2, or a container's seccomp profile).
pub const SWITCHES_REFUSED: &str = "hookcc: context switches and samples are not recorded:";

/// tests/programs/calls.c's functions and their calls (it prints 16135), at every
/// optimization level and on every target.
pub const CALLS_C: [(&str, u64); 6] = [
    ("main", 1),
    ("leaf", 100),
    ("apply", 50),
    ("twice", 25),
    ("negate", 25),
    ("fib", 1973),
];

pub fn program_source(name: &str) -> PathBuf {
    workspace_root().join("tests/programs").join(name)
}

/// True when the test must not skip for a missing system tool (in CI everything is installed).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// A runtime cache shared by the tests of one build, so each target's runtime compiles once.
fn cache_dir() -> PathBuf {
    target_dir().join("hookcc-test-cache")
}

/// Runs a command and returns its output, failing the test with everything it printed when
/// it exits non-zero.
pub fn run_ok(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed with {}\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `hookcc` (or `hookcc++` when `cxx`) with the test cache; run it in `dir`.
pub fn hookcc(dir: &Path, cxx: bool) -> Command {
    // hookcc++ is the build tree's own link to hookcc (made by wrapper/build.rs), as a user
    // who sets CXX=target/release/hookcc++ runs it.
    let exe = tool(if cxx { "hookcc++" } else { "hookcc" });
    let mut cmd = Command::new(exe);
    cmd.current_dir(dir).env("HOOKCC_CACHE_DIR", cache_dir());
    cmd.env_remove("HOOKCC_TRACE");
    cmd
}

pub fn hookprof() -> Command {
    Command::new(tool("hookprof"))
}

/// One row of `hookprof report --format=csv`.
#[derive(Debug, Clone)]
pub struct Row {
    pub thread: Option<String>,
    pub function: String,
    pub calls: u64,
    pub inclusive_ns: f64,
    pub exclusive_ns: f64,
}

/// Parses `hookprof report --format=csv` output (with or without a `thread` column; times in
/// ticks where the trace has no clock rate).
pub fn parse_report_csv(text: &str) -> Vec<Row> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().expect("csv header").clone();
    let col = |name: &str| headers.iter().position(|h| h == name);
    let (f, c, i, e) = (
        col("function").expect("function column"),
        col("calls").expect("calls column"),
        // In ticks where the trace has no clock rate (a program killed on x86).
        col("inclusive_ns")
            .or_else(|| col("inclusive_ticks"))
            .expect("inclusive_ns column"),
        col("exclusive_ns")
            .or_else(|| col("exclusive_ticks"))
            .expect("exclusive_ns column"),
    );
    let t = col("thread");
    reader
        .records()
        .map(|r| {
            let r = r.expect("csv row");
            Row {
                thread: t.map(|t| r[t].to_string()),
                function: r[f].to_string(),
                calls: r[c].parse().expect("calls is a number"),
                inclusive_ns: r[i].parse().expect("inclusive_ns is a number"),
                exclusive_ns: r[e].parse().expect("exclusive_ns is a number"),
            }
        })
        .collect()
}

/// The report of `trace` as function -> calls.
pub fn call_counts(trace: &Path, extra: &[&str]) -> BTreeMap<String, u64> {
    report_csv(trace, extra)
        .0
        .into_iter()
        .map(|r| (r.function, r.calls))
        .collect()
}

/// `hookprof report TRACE --format=csv EXTRA…` (it must succeed): its rows, and what it said
/// on stderr (its warnings).
pub fn report_csv(trace: &Path, extra: &[&str]) -> (Vec<Row>, String) {
    let out = run_ok(
        hookprof()
            .arg("report")
            .arg(trace)
            .arg("--format=csv")
            .args(extra),
    );
    (
        parse_report_csv(&String::from_utf8_lossy(&out.stdout)),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A firmware's trace with a thread for each RTOS task (<hookcc/freertos.h>): each thread's
/// name by its sequence number, from `hookprof info`'s `#2 tid 2 "producer": …` lines (every
/// thread's entries and exits must match), and `hookprof report --per-thread`'s rows with
/// `--exe ELF` (it must not warn). `what` names the run in the assertions.
pub fn per_task_report(
    what: &str,
    trace: &Path,
    elf: &Path,
) -> (BTreeMap<String, String>, Vec<Row>) {
    let info = run_ok(hookprof().arg("info").arg(trace));
    let info = String::from_utf8_lossy(&info.stdout);
    let mut names = BTreeMap::new();
    for line in info.lines().map(str::trim).filter(|l| l.starts_with('#')) {
        let sequence = line[1..line.find(' ').unwrap()].to_string();
        let name = line.split('"').nth(1).expect(line).to_string();
        assert!(
            line.contains("unmatched entries 0, unmatched exits 0"),
            "{what}: thread {name}: {line}"
        );
        names.insert(sequence, name);
    }
    let (rows, warnings) = report_csv(trace, &["--exe", elf.to_str().unwrap(), "--per-thread"]);
    assert!(
        warnings.is_empty(),
        "{what}: hookprof report warned:\n{warnings}"
    );
    (names, rows)
}

/// The flag for exact source-level counts: the tests count calls by construction, and at -O1
/// and above `--trace` places hooks after inlining by default (docs/driver.md).
pub const SOURCE_PLACEMENT: &str = "--hook-placement=source";

/// Builds `sources` (from tests/programs) with `hookcc --trace`, the source placement (exact
/// counts at every level) and `flags` into `dir/name`.
pub fn build_traced(
    dir: &Path,
    name: &str,
    sources: &[&str],
    flags: &[&str],
    cxx: bool,
) -> PathBuf {
    let mut cmd = hookcc(dir, cxx);
    cmd.args(["--trace", SOURCE_PLACEMENT]).args(flags);
    for s in sources {
        cmd.arg(program_source(s));
    }
    cmd.arg("-o").arg(dir.join(name));
    run_ok(&mut cmd);
    dir.join(name)
}

/// Builds tests/programs/shlib.c into `dir/libshlib.so` (`--trace -O1`).
pub fn build_traced_shlib(dir: &Path) {
    run_ok(
        hookcc(dir, false)
            .args(["--trace", SOURCE_PLACEMENT, "-O1", "-shared", "-fPIC"])
            .arg(program_source("shlib.c"))
            .args(["-o", "libshlib.so"]),
    );
}

/// Builds tests/programs/shlib.c into `dir/libshlib.so` and shlib_main.c, linked with it,
/// into `dir/shlib_main` (both `--trace -O1`); returns the program.
pub fn build_shlib_program(dir: &Path) -> PathBuf {
    build_traced_shlib(dir);
    run_ok(
        hookcc(dir, false)
            .args(["--trace", SOURCE_PLACEMENT, "-O1"])
            .arg(program_source("shlib_main.c"))
            .args(["-L.", "-lshlib", "-Wl,-rpath,$ORIGIN", "-o", "shlib_main"]),
    );
    dir.join("shlib_main")
}

/// Runs `program` with its trace going to `dir/<name>.hktrace`; returns the trace path and the
/// program's stdout. Without context switches (HOOKCC_SWITCHES=0) and samples
/// (HOOKCC_SAMPLE_HZ=0): a switch, which a loaded machine makes at random, adds the report's
/// on/off-CPU columns, and samples the sampled ones, which the tests of other things do not
/// expect (the off-CPU and sample tests run their programs themselves).
pub fn run_traced(dir: &Path, program: &Path, runner: &[&str]) -> (PathBuf, String) {
    let trace = dir.join(format!(
        "{}.hktrace",
        program.file_name().unwrap().to_string_lossy()
    ));
    let mut cmd = if let Some((first, rest)) = runner.split_first() {
        let mut c = Command::new(first);
        c.args(rest).arg(program);
        c
    } else {
        Command::new(program)
    };
    cmd.current_dir(dir)
        .env("HOOKCC_OUTPUT", &trace)
        .env("HOOKCC_SWITCHES", "0")
        .env("HOOKCC_SAMPLE_HZ", "0");
    let out = run_ok(&mut cmd);
    assert!(
        trace.is_file(),
        "{} wrote no trace at {}",
        program.display(),
        trace.display()
    );
    (trace, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Runs `cmd`, which must fail with `expected` in its standard error; returns the error text.
pub fn run_fails(cmd: &mut Command, expected: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{cmd:?} succeeded:\n{stderr}");
    assert!(
        stderr.contains(expected),
        "{cmd:?}: no {expected:?} in\n{stderr}"
    );
    stderr
}

/// The `.hktrace` files in `dir`, sorted (a program and its fork children each write one).
pub fn traces_in(dir: &Path) -> Vec<PathBuf> {
    let mut traces: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "hktrace"))
        .collect();
    traces.sort();
    traces
}

/// `cargo`: the one running the tests (`$CARGO`), else the one on PATH.
pub fn cargo() -> Command {
    Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string()))
}

/// Copies the Cargo project `tests/rust/<name>` (or another directory of the repository) into
/// `dir/<name>` and returns that path: each test builds its own copy, so tests never write
/// into the source tree or share a target directory.
pub fn copy_cargo_project(from: &Path, dir: &Path) -> PathBuf {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
        for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
            let entry = entry.expect("directory entry");
            let name = entry.file_name();
            if name == "target" {
                continue;
            }
            let path = entry.path();
            if path.is_dir() {
                copy(&path, &to.join(&name));
            } else {
                std::fs::copy(&path, to.join(&name))
                    .unwrap_or_else(|e| panic!("copying {}: {e}", path.display()));
            }
        }
    }
    let to = dir.join(from.file_name().expect("project directory name"));
    copy(from, &to);
    to
}

/// A Command for Cargo with hookcc's build directory first on PATH, so that `cargo hookcc`
/// finds `cargo-hookcc`, and no instrumentation settings inherited from the caller.
pub fn cargo_with_hookcc(project: &Path) -> Command {
    let mut cmd = cargo();
    with_hookcc_env(&mut cmd, project);
    cmd
}

/// What [`cargo_with_hookcc`] sets on a command (another cargo: `rustup run nightly cargo`).
pub fn with_hookcc_env(cmd: &mut Command, project: &Path) {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs = vec![target_dir()];
    dirs.extend(std::env::split_paths(&path));
    cmd.current_dir(project)
        .env("PATH", std::env::join_paths(dirs).expect("PATH"))
        .env("HOOKCC_CACHE_DIR", cache_dir());
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "HOOKCC_TRACE",
        "RUSTC",
        "CC",
        "CFLAGS",
        "CXX",
        "CXXFLAGS",
    ] {
        cmd.env_remove(var);
    }
}

/// The host triple of the rustc cargo uses.
pub fn rust_host() -> String {
    let out = run_ok(Command::new("rustc").arg("-vV"));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: "))
        .expect("rustc -vV prints host:")
        .trim()
        .to_string()
}

/// tests/programs/ring.c built with `hookcc --trace -O0` into `dir` and run in
/// `HOOKCC_MODE=ring` (its three snapshots: two by SIGUSR2 and hookcc_trace_snapshot(), one at
/// exit), without context switches or samples; returns the trace, `dir/ring.hktrace`.
pub fn ring_trace(dir: &Path) -> PathBuf {
    let program = build_traced(dir, "ring", &["ring.c"], &["-O0"], false);
    let trace = dir.join("ring.hktrace");
    run_ok(
        Command::new(&program)
            .env("HOOKCC_OUTPUT", &trace)
            .env("HOOKCC_MODE", "ring")
            .env("HOOKCC_SWITCHES", "0")
            .env("HOOKCC_SAMPLE_HZ", "0"),
    );
    trace
}

/// Checks `hookprof info` of `trace`: every entry has its exit and nothing was lost.
pub fn assert_balanced(trace: &Path) {
    let out = run_ok(hookprof().arg("info").arg(trace));
    let text = String::from_utf8_lossy(&out.stdout);
    for line in [
        "unmatched entries: 0",
        "unmatched exits:   0",
        "lost:              0",
    ] {
        assert!(
            text.lines().any(|l| l.trim_end() == line),
            "{}: expected `{line}` in hookprof info:\n{text}",
            trace.display()
        );
    }
}

/// Issue 34: the default text report of `trace` as a terminal of `width` columns shows it
/// (`COLUMNS`): every line of a row fits, so each row's name is on its own line, and the
/// rows are the CSV's, each ending with its function's name as shortened for the text (the
/// same calls on the same line). Returns the text.
pub fn assert_report_fits(trace: &Path, width: usize) -> String {
    let out = run_ok(
        hookprof()
            .arg("report")
            .arg(trace)
            .env("COLUMNS", width.to_string()),
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let csv = run_ok(hookprof().arg("report").arg(trace).arg("--format=csv"));
    let rows = parse_report_csv(&String::from_utf8_lossy(&csv.stdout));
    let lines: Vec<&str> = text.lines().collect();
    // The heading line(s), the column names, the rows, the summary from "threads: " on.
    let header = lines
        .iter()
        .position(|l| l.trim_start().starts_with("self%") || l.trim_start().starts_with("sampled%"))
        .unwrap_or_else(|| panic!("no column names:\n{text}"));
    let end = lines
        .iter()
        .position(|l| l.starts_with("threads: "))
        .unwrap_or_else(|| panic!("no summary:\n{text}"));
    let table = &lines[header..end];
    assert_eq!(table.len(), rows.len() + 1, "one line a row:\n{text}");
    for line in table {
        assert!(
            line.chars().count() <= width,
            "a line of {} columns, over {width}:\n{line}\n\n{text}",
            line.chars().count()
        );
    }
    let budget = width
        .saturating_sub(table[0].find("function").unwrap_or(0))
        .max(24);
    for (line, row) in table[1..].iter().zip(&rows) {
        let name = hookprof::output::report::columns::short_name(&row.function, budget);
        let calls = format!(" {}  ", row.calls);
        assert!(
            line.ends_with(&format!("  {name}")) && line.contains(&calls),
            "row of {} ({} calls) is not its line:\n{line}\n\n{text}",
            row.function,
            row.calls
        );
    }
    text
}

/// A fresh copy of examples/baremetal in `dir`, without what a build or a run left in the
/// source tree (a developer's `make run` there: objects, firmware, traces, dumps, which make
/// would take for up to date); returns the directory of `board` (or `freertos`) in it.
pub fn copy_baremetal_example(dir: &Path, board: &str) -> PathBuf {
    fn copy_tree(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap();
            let left_by_a_build = path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
                matches!(e, "o" | "elf" | "hktrace" | "hkpacked" | "bin" | "dump")
            });
            if path.is_dir() {
                copy_tree(&path, &to.join(name));
            } else if !left_by_a_build {
                std::fs::copy(&path, to.join(name)).unwrap();
            }
        }
    }
    let root = dir.join("baremetal");
    copy_tree(&workspace_root().join("examples/baremetal"), &root);
    root.join(board)
}

/// `make -s TARGET VARIABLES…` in a bare-metal example's `project`, with the workspace's
/// hookcc and hookprof (first on PATH, and as `HOOKPROF`): the output, whatever the status.
pub fn make_baremetal<S: AsRef<std::ffi::OsStr>>(
    project: &Path,
    target: &str,
    variables: &[S],
) -> Output {
    let path = format!(
        "{}:{}",
        target_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("make")
        .arg("-s")
        .arg(target)
        .arg(format!(
            "HOOKCC_SCRIPTS={}",
            workspace_root().join("scripts").display()
        ))
        .arg(format!(
            "HOOKPROF={}",
            target_dir().join("hookprof").display()
        ))
        .args(variables)
        .current_dir(project)
        .env("PATH", path)
        .env("HOOKCC_CACHE_DIR", target_dir().join("hookcc-test-cache"))
        .env_remove("NITRO_PROFILE")
        .env_remove("NITRO_PROFILE_TYPE")
        .env_remove("HOOKCC_TRACE")
        .env_remove("MAKEFLAGS")
        .output()
        .unwrap_or_else(|e| panic!("cannot run make in {}: {e}", project.display()))
}

/// A free TCP port on the loopback interface (for qemu's gdb stub, a server under test).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// True if what the bare-metal examples need is installed (qemu for both boards' families,
/// both cross compilers, picolibc for both, make); otherwise fails in CI, and says what is
/// missing elsewhere.
pub fn have_baremetal_tools() -> bool {
    let missing: Vec<&str> = ["arm-none-eabi", "riscv64-unknown-elf"]
        .into_iter()
        .filter(|t| !Path::new(&format!("/usr/lib/picolibc/{t}/include")).is_dir())
        .collect();
    if !present(missing.is_empty(), &format!("picolibc for {missing:?}")) {
        return false;
    }
    have_tool("qemu-system-arm", &["--version"], "qemu-system-arm")
        && have_tool("qemu-system-riscv32", &["--version"], "qemu-system-misc")
        && have_tool("arm-none-eabi-gcc", &["--version"], "gcc-arm-none-eabi")
        && have_tool(
            "riscv64-unknown-elf-gcc",
            &["--version"],
            "gcc-riscv64-unknown-elf",
        )
        && have_tool("make", &["--version"], "make")
}

/// Driving a terminal view (`hookprof top`, `tui`) in tmux: a session named `top` on a tmux
/// server of the test's own, its screen read with `capture-pane`.
pub mod tmux {
    use std::path::Path;
    use std::process::Command;
    use std::time::{Duration, Instant};

    /// tmux on its own server (`-L`), so that the test touches no one's sessions.
    pub fn tmux(server: &str, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .arg("-L")
            .arg(server)
            .args(args)
            .output()
            .expect("run tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Kills its tmux server when dropped: a test that fails leaves no tmux and no view running.
    pub struct TmuxGuard(pub String);

    impl Drop for TmuxGuard {
        fn drop(&mut self) {
            let _ = tmux(&self.0, &["kill-server"]);
            // tmux leaves its socket's name behind: $TMUX_TMPDIR (or /tmp)/tmux-UID/NAME.
            let base = std::env::var("TMUX_TMPDIR").unwrap_or_else(|_| "/tmp".into());
            // SAFETY: geteuid has no preconditions and cannot fail.
            let uid = unsafe { libc::geteuid() };
            let _ =
                std::fs::remove_file(Path::new(&base).join(format!("tmux-{uid}")).join(&self.0));
        }
    }

    /// Waits until `ready` holds for a whole screen (its last line, the keys, drawn); returns it.
    pub fn pane_until(server: &str, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let began = Instant::now();
        loop {
            let pane = tmux(server, &["capture-pane", "-p", "-t", "top"]);
            if pane.contains("keys:") && ready(&pane) {
                return pane;
            }
            assert!(
                began.elapsed() < Duration::from_secs(30),
                "no {what} in\n{pane}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until the pane shows `text` on a whole screen (its last line, the keys, drawn: a
    /// capture may fall between a screen's clearing and its last line); returns the pane.
    pub fn pane_showing(server: &str, text: &str) -> String {
        let began = Instant::now();
        loop {
            let pane = tmux(server, &["capture-pane", "-p", "-t", "top"]);
            if pane.contains(text) && pane.contains("keys:") {
                return pane;
            }
            assert!(
                began.elapsed() < Duration::from_secs(30),
                "no {text:?} in\n{pane}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Starts `command` (a shell command line) in the session `top`, of `size` (columns, rows).
    pub fn start_view(server: &str, size: (u16, u16), command: &str) {
        let (x, y) = (size.0.to_string(), size.1.to_string());
        tmux(
            server,
            &[
                "new-session",
                "-d",
                "-s",
                "top",
                "-x",
                &x,
                "-y",
                &y,
                command,
            ],
        );
    }

    /// Waits (20 s at most) until the session `top` has ended: the view quit.
    pub fn wait_until_quit(server: &str, what: &str) {
        let began = Instant::now();
        while tmux(server, &["list-sessions"]).contains("top:") {
            assert!(
                began.elapsed() < Duration::from_secs(20),
                "{what} did not quit"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Issue 35, item 2: `trace` names its functions by their records, and every record leads to
/// its function. Checked without hookprof's own naming: for every function address in the
/// trace (its profile's, run-time), the file it lies in (the module's, else `exe` at bias 0;
/// `files` maps a module's path to the file to read, for a target's sysroot), then with
/// `readelf` the section it lies in — writable, not code — and in that section's bytes the
/// record's `function_offset` (`int32_t` after two pointers and 4 bytes), and with `nm` the
/// function symbol at the address it gives. Returns each function's name and calls, by the
/// trace's counts.
pub fn records_by_readelf_and_nm(
    trace: &Path,
    exe: &Path,
    readelf: &str,
    nm: &str,
) -> BTreeMap<String, u64> {
    let profile = hookprof::input::trace_file::TraceFile::open(trace)
        .unwrap()
        .profile()
        .unwrap();
    let modules = profile.summary.modules.clone();
    let mut named = BTreeMap::new();
    let mut files: BTreeMap<PathBuf, ElfFacts> = BTreeMap::new();
    for (&address, stats) in &profile.merged().functions {
        let (path, bias) = match modules.iter().find(|m| m.contains(address)) {
            Some(m) => (m.path.clone().unwrap_or_else(|| exe.to_path_buf()), m.bias),
            None => (exe.to_path_buf(), 0),
        };
        let facts = files
            .entry(path.clone())
            .or_insert_with(|| ElfFacts::read(&path, readelf, nm));
        let at = address.wrapping_sub(bias);
        let (section, start, bytes) = facts
            .sections
            .iter()
            .find(|(_, start, bytes)| *start <= at && at < start + bytes.len() as u64)
            .unwrap_or_else(|| {
                panic!(
                    "{}: traced address {at:#x} is in no writable data section: {:?}",
                    path.display(),
                    facts
                        .sections
                        .iter()
                        .map(|s| (&s.0, s.1))
                        .collect::<Vec<_>>()
                )
            });
        assert_eq!(
            at % 8,
            0,
            "{}: record {at:#x} in {section} is not 8-aligned",
            path.display()
        );
        let field = at + 2 * facts.pointer_size + 4;
        let i = (field - start) as usize;
        let raw: [u8; 4] = bytes[i..i + 4].try_into().unwrap();
        let offset = if facts.little_endian {
            i32::from_le_bytes(raw)
        } else {
            i32::from_be_bytes(raw)
        };
        let function = field.wrapping_add_signed(offset.into()) & !1;
        let name = facts.functions.get(&function).unwrap_or_else(|| {
            panic!(
                "{}: the record at {at:#x} ({section}) gives {function:#x}, where nm has no function",
                path.display()
            )
        });
        *named.entry(name.clone()).or_insert(0) += stats.calls;
    }
    named
}

/// What [`records_by_readelf_and_nm`] reads of one ELF file.
struct ElfFacts {
    pointer_size: u64,
    little_endian: bool,
    /// Writable sections with contents (`readelf -S` flags W, not X; not NOBITS): name,
    /// address and bytes (`readelf -x`).
    sections: Vec<(String, u64, Vec<u8>)>,
    /// Function symbols by address (`nm`'s T, t, W, w), the Thumb bit cleared.
    functions: BTreeMap<u64, String>,
}

impl ElfFacts {
    fn read(path: &Path, readelf: &str, nm: &str) -> ElfFacts {
        let text = |cmd: &mut Command| String::from_utf8_lossy(&run_ok(cmd).stdout).into_owned();
        let header = text(Command::new(readelf).arg("-hW").arg(path));
        let pointer_size = if header.contains("ELF64") { 8 } else { 4 };
        let little_endian = header.contains("little endian");
        let mut sections = Vec::new();
        for line in text(Command::new(readelf).arg("-SW").arg(path)).lines() {
            // "  [21] hookcc_fns  PROGBITS  0000000000004008 003008 000060 00  WA  0   0  8"
            let Some(rest) = line.trim_start().strip_prefix('[') else {
                continue;
            };
            let fields: Vec<&str> = rest
                .split_once(']')
                .map_or("", |(_, r)| r)
                .split_whitespace()
                .collect();
            if fields.len() < 7 || fields[1] != "PROGBITS" {
                continue;
            }
            let flags = fields[6];
            if !flags.contains('W') || flags.contains('X') {
                continue;
            }
            let name = fields[0].to_string();
            let address = u64::from_str_radix(fields[2], 16).unwrap();
            let dump = text(Command::new(readelf).arg("-x").arg(&name).arg(path));
            let mut bytes = Vec::new();
            for l in dump.lines() {
                let l = l.trim_start();
                if !l.starts_with("0x") {
                    continue;
                }
                // "0x00004008 00000000 00000000 00000000 00000000 ................": 16 bytes
                // in four groups (35 columns, a short last line padded), then their text.
                let (at, rest) = l.split_once(' ').unwrap();
                let at = u64::from_str_radix(&at[2..], 16).unwrap();
                assert_eq!(
                    at,
                    address + bytes.len() as u64,
                    "{}: {name}: {l}",
                    path.display()
                );
                let hex: String = rest
                    .chars()
                    .take(35)
                    .filter(|c| !c.is_whitespace())
                    .collect();
                for pair in hex.as_bytes().chunks(2) {
                    let pair = std::str::from_utf8(pair).unwrap();
                    bytes.push(u8::from_str_radix(pair, 16).unwrap());
                }
            }
            sections.push((name, address, bytes));
        }
        let mut functions = BTreeMap::new();
        for line in text(Command::new(nm).arg(path)).lines() {
            if let [address, "T" | "t" | "W" | "w", name] =
                line.split_whitespace().collect::<Vec<_>>().as_slice()
            {
                let address = u64::from_str_radix(address, 16).unwrap() & !1;
                functions.entry(address).or_insert_with(|| name.to_string());
            }
        }
        ElfFacts {
            pointer_size,
            little_endian,
            sections,
            functions,
        }
    }
}
