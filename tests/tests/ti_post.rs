//! `hookprof ti` and `hookprof callgraph` on real TI dumps: the seed's example scenario
//! (tests/programs/ti_tasks.c: three tasks switched by a user-level scheduler that calls
//! task_switch_hook, each running a delay function; main is a task too) built with hookcc's TI
//! options and runtime, its exit dump (PREFIX.bin and PREFIX.dat) decoded. Also the same
//! program with the circular hooks on a 64-record buffer, which wraps. Host at -O0 and -O2,
//! PIE and -no-pie; aarch64 under qemu; 32-bit Arm, i686 and big-endian s390x when their cross
//! libc is installed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use hookcc_tests::*;

/// ti_tasks.c's RUNS: the delay calls of t0, t1, t2.
const DELAYS: [u64; 3] = [3, 4, 5];

struct Target {
    name: String,
    flags: Vec<String>,
    runner: Vec<String>,
}

impl Target {
    fn host() -> Target {
        Target {
            name: "host".to_string(),
            flags: Vec::new(),
            runner: Vec::new(),
        }
    }

    fn cross(triple: &str, qemu: &str) -> Option<Target> {
        let sysroot = format!("/usr/{triple}");
        let runs = |tool: &str| {
            Command::new(tool)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        };
        if !(Path::new(&sysroot).join("lib").is_dir() && runs(qemu) && runs("ld.lld-19")) {
            eprintln!("skipping {triple}: {qemu}, {sysroot} or ld.lld-19 missing");
            return None;
        }
        Some(Target {
            name: triple.to_string(),
            flags: vec![format!("--target={triple}"), "-fuse-ld=lld-19".to_string()],
            runner: vec![qemu.to_string(), "-L".to_string(), sysroot],
        })
    }
}

/// Builds ti_tasks.c (with the circular hooks and a 64-record buffer if `circular`).
fn build(dir: &Path, target: &Target, flags: &[&str], circular: bool) -> PathBuf {
    let program = dir.join(if circular { "ti_circular" } else { "ti_tasks" });
    let (entry, exit) = if circular {
        ("entry_hook_circular", "exit_hook_circular")
    } else {
        ("entry_hook", "exit_hook")
    };
    let mut cmd = hookcc(dir, false);
    cmd.arg(format!("--entry_hook={entry}"))
        .arg("--entry_parm=address")
        .arg(format!("--exit_hook={exit}"))
        .arg("--exit_parm=address")
        .arg("--hook-runtime=ti")
        .args(&target.flags)
        .args(flags)
        .arg(program_source("ti_tasks.c"));
    if circular {
        // The runtime's buffer is weak: a second file defines a smaller one. The scheduler's
        // task_switch_hook becomes the circular variant (one set of hooks, docs/ti-runtime.md).
        let buffer = dir.join("buffer64.c");
        std::fs::write(
            &buffer,
            "#include <hookcc/ti.h>\nHOOKCC_TI_PROFILE_BUFFER(64);\n",
        )
        .unwrap();
        cmd.arg(&buffer)
            .arg("-Dtask_switch_hook=task_switch_hook_circular");
    }
    run_ok(cmd.arg("-o").arg(&program));
    program
}

/// Runs the program; returns its key=value lines and the dump prefix.
fn run(dir: &Path, target: &Target, program: &Path) -> (BTreeMap<String, String>, PathBuf) {
    let prefix = dir.join("run");
    let mut cmd = match target.runner.split_first() {
        Some((first, rest)) => {
            let mut c = Command::new(first);
            c.args(rest).arg(program);
            c
        }
        None => Command::new(program),
    };
    let out = run_ok(cmd.current_dir(dir).env("HOOKCC_TI_OUTPUT", &prefix));
    let vars = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    (vars, prefix)
}

/// `hookprof ti DUMP --exe PROGRAM --out OUT extra`: (status, call list, profile).
fn ti(dump: &Path, program: &Path, out: &Path, extra: &[&str]) -> (String, String, String) {
    let o = run_ok(
        hookprof()
            .arg("ti")
            .arg(dump)
            .arg("--exe")
            .arg(program)
            .arg("--out")
            .arg(out)
            .args(extra),
    );
    let read = |suffix: &str| {
        std::fs::read_to_string(format!("{}{suffix}", out.display())).unwrap_or_else(|e| {
            panic!("{}{suffix}: {e}", out.display());
        })
    };
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        read("_call_list.csv"),
        read("_profile.csv"),
    )
}

fn rows(csv_text: &str) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(csv_text.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

/// One call of the call list.
#[derive(Debug)]
struct Call {
    function: String,
    enter: u64,
    exit: u64,
    inclusive: u64,
    exclusive: u64,
    task: String,
    depth: u64,
    /// The function's ELF address, hex.
    address: u64,
}

fn calls(call_list: &str) -> Vec<Call> {
    let rows = rows(call_list);
    assert_eq!(
        rows[0].join(","),
        "Function,EnterTSC,ExitTSC,InclusiveCycles,ExclusiveCycles,Task,Depth,Address"
    );
    let calls: Vec<Call> = rows[1..]
        .iter()
        .map(|r| Call {
            function: r[0].clone(),
            enter: r[1].parse().unwrap(),
            exit: r[2].parse().unwrap(),
            inclusive: r[3].parse().unwrap(),
            exclusive: r[4].parse().unwrap(),
            task: r[5].clone(),
            depth: r[6].parse().unwrap(),
            address: u64::from_str_radix(r[7].strip_prefix("0x").expect("0x address"), 16)
                .expect("hex address"),
        })
        .collect();
    // One function, one address (its ELF address: the same in every call).
    let mut addresses: BTreeMap<&str, u64> = BTreeMap::new();
    for c in &calls {
        let first = *addresses.entry(&c.function).or_insert(c.address);
        assert!(c.address != 0 && c.address == first, "{c:?}");
    }
    calls
}

/// inclusive = exclusive + the inclusive cycles of the calls it made, for every call; calls
/// are in order of completion.
fn check_inclusive_is_exclusive_plus_children(calls: &[Call], what: &str) {
    for (i, c) in calls.iter().enumerate() {
        let children: u64 = calls[..i]
            .iter()
            .filter(|d| {
                d.task == c.task && d.depth == c.depth + 1 && d.enter >= c.enter && d.exit <= c.exit
            })
            .map(|d| d.inclusive)
            .sum();
        assert_eq!(c.inclusive, c.exclusive + children, "{what}: {c:?}");
        assert!(c.exit >= c.enter, "{what}: {c:?}");
    }
    for w in calls.windows(2) {
        assert!(
            w[1].exit >= w[0].exit,
            "{what}: not in order of completion: {w:?}"
        );
    }
}

/// The profile: the functions' and the tasks' rows by name, and the two Valid/Total %.
struct Profile {
    functions: BTreeMap<String, Vec<String>>,
    tasks: BTreeMap<String, Vec<String>>,
    function_valid_percent: f64,
    task_valid_percent: f64,
    total: u64,
}

fn profile(text: &str) -> Profile {
    let rows = rows(text);
    assert_eq!(rows[0][0], "FirstTSC", "{text}");
    let total: u64 = rows[0][5].parse().unwrap();
    let first: u64 = rows[0][1].parse().unwrap();
    let last: u64 = rows[0][3].parse().unwrap();
    assert_eq!(total, last - first);
    assert_eq!(rows[1][0], "Functions ValidCycles");
    assert_eq!(rows[2][0], "Function");
    let tasks_at = rows
        .iter()
        .position(|r| r[0] == "Tasks ValidCycles")
        .expect("the tasks' part");
    assert_eq!(rows[tasks_at + 1][0], "Task");
    let by_name = |rows: &[Vec<String>]| {
        rows.iter()
            .filter(|r| !(r.len() == 1 && r[0].is_empty()))
            .map(|r| (r[0].clone(), r.clone()))
            .collect()
    };
    // Sorted by total exclusive cycles (column 2), descending.
    let function_rows = &rows[3..tasks_at];
    let totals: Vec<u64> = function_rows
        .iter()
        .filter(|r| r.len() > 2)
        .map(|r| r[2].parse().unwrap())
        .collect();
    assert!(totals.windows(2).all(|w| w[0] >= w[1]), "{text}");
    Profile {
        functions: by_name(function_rows),
        tasks: by_name(&rows[tasks_at + 2..]),
        function_valid_percent: rows[1][5].parse().unwrap(),
        task_valid_percent: rows[tasks_at][5].parse().unwrap(),
        total,
    }
}

fn number(row: &[String], column: usize) -> u64 {
    row[column].parse().unwrap()
}

/// The seed's scenario, stop-when-full: every record from hook_init to main's exit.
fn check_seed_scenario(target: &Target, flags: &[&str]) {
    let what = format!("{} {}", target.name, flags.join(" "));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build(d, target, flags, false);
    let (vars, prefix) = run(d, target, &program);
    let switches: u64 = vars["expect.switches"].parse().unwrap();

    let bin = prefix.with_extension("bin");
    let dat = prefix.with_extension("dat");
    let (status, call_list, profile_text) = ti(&bin, &program, &d.join("bin"), &["--all-symbols"]);
    // Binary and CCS hex dumps of the same run decode to the same CSVs (the binary's load
    // bias inferred, the CCS header's from its starting address), also with --profile-data.
    let (status_dat, call_list_dat, profile_dat) =
        ti(&dat, &program, &d.join("dat"), &["--all-symbols"]);
    assert_eq!(call_list, call_list_dat, "{what}");
    assert_eq!(profile_text, profile_dat, "{what}");
    let (_, _, profile_given) = ti(
        &bin,
        &program,
        &d.join("given"),
        &["--all-symbols", "--profile-data", &vars["profiledata"]],
    );
    assert_eq!(profile_text, profile_given, "{what}");
    // What makes hookprof ti refuse noise: the recorded functions are the ELF's. A real dump
    // agrees completely.
    let elf = hookprof::input::ti_program::Program::parse(&std::fs::read(&program).unwrap(), false)
        .unwrap();
    let dump = hookprof::input::ti::Dump::parse(&std::fs::read(&bin).unwrap(), elf.layout).unwrap();
    let (bias, _) = hookprof::analysis::ti::load_bias(&elf, &dump, None);
    let (agreeing, distinct) = hookprof::analysis::ti::agreement(&elf, &dump, bias);
    assert!(distinct > 0, "{what}");
    assert_eq!(
        agreeing, distinct,
        "{what}: recorded functions not in the ELF"
    );

    let records: u64 = vars["records"].parse().unwrap();
    for s in [&status, &status_dat] {
        for expected in [
            format!("Records: {} valid, 0 invalid", records + 1), // + main's exit
            "Functions found: 6".to_string(),
            "Tasks found: 4".to_string(),
            "Enter records without exit: 0".to_string(),
            // main was entered before hook_init
            "Exit records without enter: 1".to_string(),
            "Maximum call stack depth: 3".to_string(),
        ] {
            assert!(s.contains(&expected), "{what}: {expected:?} in\n{s}");
        }
        assert!(
            s.ends_with("Profile data processing complete.\n"),
            "{what}:\n{s}"
        );
    }

    // The call list: the delays of each task (t0 is `tasks`, the array's first element; t1
    // and t2 have no symbol), inclusive = exclusive + children everywhere.
    let calls = calls(&call_list);
    check_inclusive_is_exclusive_plus_children(&calls, &what);
    for (task, n) in [
        ("tasks", DELAYS[0]),
        ("?task #1", DELAYS[1]),
        ("?task #2", DELAYS[2]),
    ] {
        let delays = calls
            .iter()
            .filter(|c| c.function == "delay" && c.task == task)
            .count() as u64;
        assert_eq!(delays, n, "{what}: delays in {task}");
    }
    assert!(calls
        .iter()
        .filter(|c| c.function == "delay")
        .all(|c| c.inclusive == c.exclusive && c.depth == 2));

    // The profile: exact execute times, the tasks, Valid/Total.
    let p = profile(&profile_text);
    let times = |name: &str| number(&p.functions[name], 1);
    assert_eq!(times("delay"), DELAYS.iter().sum::<u64>(), "{what}");
    assert_eq!(times("task_yield"), DELAYS.iter().sum::<u64>(), "{what}");
    assert_eq!(times("task_function"), 3, "{what}");
    assert_eq!(times("run_scheduler"), 1, "{what}");
    // switch_to: the first from run_scheduler, then one per yield that switched.
    let lonely_yields = DELAYS[2] - DELAYS[1];
    assert_eq!(
        times("switch_to"),
        1 + DELAYS.iter().sum::<u64>() - lonely_yields,
        "{what}"
    );
    assert!(
        !p.functions.contains_key("main"),
        "{what}: main's entry is not in the dump"
    );
    // Each worker runs once per delay, plus once more to finish, minus yields that found no
    // other task (t2's last); main runs before the first switch and after the last.
    let runs: BTreeMap<&str, u64> = [
        ("main_task", 2),
        ("tasks", DELAYS[0] + 1),
        ("?task #1", DELAYS[1] + 1),
        ("?task #2", DELAYS[2] + 1 - lonely_yields),
    ]
    .into_iter()
    .collect();
    for (task, n) in &runs {
        let row = p
            .tasks
            .get(*task)
            .unwrap_or_else(|| panic!("{what}: no task {task} in\n{profile_text}"));
        assert_eq!(number(row, 1), *n, "{what}: runs of {task}");
    }
    assert_eq!(runs.values().sum::<u64>(), switches + 1);
    assert!(p.task_valid_percent >= 99.0, "{what}:\n{profile_text}");
    assert!(p.function_valid_percent > 0.0 && p.function_valid_percent <= 100.0);
    let task_cycles: u64 = p.tasks.values().map(|r| number(r, 2)).sum();
    assert!(task_cycles <= p.total);

    // The Dynamic Call Graph per task: delay's calls in each worker.
    let out = run_ok(
        hookprof()
            .arg("callgraph")
            .arg(&bin)
            .arg("--exe")
            .arg(&program)
            .arg("--all-symbols"),
    );
    let graph = String::from_utf8_lossy(&out.stdout);
    for (task, n) in [
        ("tasks", DELAYS[0]),
        ("?task #1", DELAYS[1]),
        ("?task #2", DELAYS[2]),
    ] {
        let start = graph
            .find(&format!("Thread: {task}\t\t\t\n"))
            .unwrap_or_else(|| panic!("{what}: no section for {task}:\n{graph}"));
        let section = &graph[start..];
        let section = &section[..section[8..]
            .find("Thread:")
            .map_or(section.len(), |e| e + 8)];
        let line = section
            .lines()
            .find(|l| l.starts_with('[') && l.contains("\tdelay ["))
            .unwrap_or_else(|| panic!("{what}: no delay in {task}:\n{section}"));
        let calls: u64 = line.split('\t').nth(2).unwrap().parse().unwrap();
        assert_eq!(calls, n, "{what}: {line}");
    }
    assert!(graph.contains("Thread: main_task\t\t\t\n"), "{what}");
}

/// The same scenario with the circular hooks on 64 records: the dump is the wrapped buffer in
/// memory order; hookprof reads it from the oldest record.
fn check_circular(target: &Target, flags: &[&str]) {
    let what = format!("{} {} circular", target.name, flags.join(" "));
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build(d, target, flags, true);
    let (vars, prefix) = run(d, target, &program);
    assert_eq!(vars["capacity"], "64", "{what}");
    let count: u64 = vars["records"].parse::<u64>().unwrap() + 1; // + main's exit
    assert!(
        count > 64,
        "{what}: the buffer did not wrap ({count} records)"
    );
    let (status, call_list, profile_text) =
        ti(&prefix.with_extension("bin"), &program, &d.join("bin"), &[]);
    let (_, call_list_dat, profile_dat) =
        ti(&prefix.with_extension("dat"), &program, &d.join("dat"), &[]);
    assert_eq!(call_list, call_list_dat, "{what}");
    assert_eq!(profile_text, profile_dat, "{what}");
    for expected in [
        "Records: 64 valid, 0 invalid".to_string(),
        format!(
            "Circular buffer wrapped: the oldest record is record {} of the dump",
            count % 64
        ),
    ] {
        assert!(
            status.contains(&expected),
            "{what}: {expected:?} in\n{status}"
        );
    }
    let calls = calls(&call_list);
    check_inclusive_is_exclusive_plus_children(&calls, &what);
    assert!(!calls.is_empty(), "{what}");
    let p = profile(&profile_text);
    let delays = number(&p.functions["delay"], 1);
    assert!(
        (1..12).contains(&delays),
        "{what}: {delays} delays in the last 64 records"
    );
    assert!(p.task_valid_percent >= 99.0, "{what}:\n{profile_text}");
}

#[test]
fn seed_scenario_host() {
    for flags in [&["-O0"][..], &["-O2"], &["-O2", "-no-pie"]] {
        check_seed_scenario(&Target::host(), flags);
    }
}

#[test]
fn circular_buffer_that_wrapped_host() {
    for flags in [&["-O0"][..], &["-O2", "-no-pie"]] {
        check_circular(&Target::host(), flags);
    }
}

#[test]
fn aarch64_under_qemu() {
    match Target::cross("aarch64-linux-gnu", "qemu-aarch64") {
        Some(target) => {
            check_seed_scenario(&target, &["-O2"]);
            check_circular(&target, &["-O2"]);
        }
        None => assert!(
            !in_ci(),
            "CI must have qemu-user, lld-19 and libc6-dev-arm64-cross (scripts/setup.sh)"
        ),
    }
}

/// 4-byte records' addresses (32-bit Arm, i686) and a big-endian target (s390x): optional,
/// scripts/setup.sh does not install their sysroots.
#[test]
fn other_layouts_under_qemu() {
    for (triple, qemu) in [
        ("arm-linux-gnueabihf", "qemu-arm"),
        ("i686-linux-gnu", "qemu-i386"),
        ("s390x-linux-gnu", "qemu-s390x"),
    ] {
        if let Some(target) = Target::cross(triple, qemu) {
            check_seed_scenario(&target, &["-O2"]);
            check_circular(&target, &["-O2"]);
        }
    }
}

/// `--all-symbols` also names addresses after the section symbols there, joined with " - " as
/// the seed shows `.text - SL2MemoryBufInit`; global symbols only by default.
#[test]
fn all_symbols_include_section_symbols() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    run_ok(
        hookcc(d, false)
            .args([
                "--entry_hook=entry_hook",
                "--entry_parm=address",
                "--exit_hook=exit_hook",
                "--exit_parm=address",
                "--hook-runtime=ti",
                "-O1",
                "-no-pie",
                "-Wl,--emit-relocs",
                "-o",
                "prog",
            ])
            .arg(program_source("ti_sections.c")),
    );
    run_ok(
        Command::new(d.join("prog"))
            .current_dir(d)
            .env("HOOKCC_TI_OUTPUT", d.join("run")),
    );
    let functions = |extra: &[&str]| -> Vec<String> {
        run_ok(
            hookprof()
                .args(["ti", "run.bin", "--exe", "prog", "--out", "out"])
                .args(extra)
                .current_dir(d),
        );
        let text = std::fs::read_to_string(d.join("out_call_list.csv")).unwrap();
        calls(&text).into_iter().map(|c| c.function).collect()
    };
    // main was entered before hook_init: its exit has no entry and makes no call.
    assert_eq!(functions(&[]), ["fast", "fast", "fast"]);
    assert_eq!(
        functions(&["--all-symbols"]),
        ["fast - fastcode", "fast - fastcode", "fast - fastcode"]
    );
}

/// Issue 27: a function the ELF has no symbol for is `?function #n` (the seed's "?task #1"
/// style for "task or function" it cannot name), in the CSVs and the call graph, its ELF
/// address in the Address column; a task that ran but called nothing (an idle task switched to
/// and away) has no empty `Thread:` section in the call graph.
#[test]
fn unnamed_function_and_task_without_calls() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("unnamed.c"),
        r#"#include <stdint.h>
#include <hookcc/ti.h>
struct task { int id; } __attribute__((aligned(16)));
struct task main_task, worker, idle;
static volatile int sink;
__attribute__((noinline)) void mystery(void) { for (int i = 0; i < 100; i++) sink += i; }
__attribute__((noinline)) void work(void) { mystery(); mystery(); }
#define SWITCH(a, b) task_switch_hook((uintptr_t)&(a), (uintptr_t)&(b))
int main(void)
{
    hook_init();
    SWITCH(main_task, worker);
    work();
    SWITCH(worker, idle);
    SWITCH(idle, worker);
    work();
    SWITCH(worker, main_task);
    return 0;
}
"#,
    )
    .unwrap();
    run_ok(hookcc(d, false).args([
        "--entry_hook=entry_hook",
        "--entry_parm=address",
        "--exit_hook=exit_hook",
        "--exit_parm=address",
        "--hook-runtime=ti",
        "-O1",
        "-no-pie",
        "unnamed.c",
        "-o",
        "prog",
    ]));
    run_ok(
        Command::new(d.join("prog"))
            .current_dir(d)
            .env("HOOKCC_TI_OUTPUT", d.join("run")),
    );
    // mystery's address, then the program without its symbol.
    let nm = run_ok(Command::new("nm").arg(d.join("prog")));
    let mystery = String::from_utf8_lossy(&nm.stdout)
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3 && f[2] == "mystery").then(|| u64::from_str_radix(f[0], 16).unwrap())
        })
        .expect("nm shows mystery");
    run_ok(
        Command::new("objcopy")
            .args(["--strip-symbol=mystery", "prog", "stripped"])
            .current_dir(d),
    );

    let out = run_ok(
        hookprof()
            .args(["ti", "run.bin", "--exe", "stripped", "--out", "out"])
            .current_dir(d),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("1 of the 3 function addresses have no symbol")
            && stderr.contains("?function #1"),
        "{stderr}"
    );
    let list = calls(&std::fs::read_to_string(d.join("out_call_list.csv")).unwrap());
    let unnamed: Vec<&Call> = list
        .iter()
        .filter(|c| c.function == "?function #1")
        .collect();
    assert_eq!(unnamed.len(), 4, "{list:?}");
    assert!(unnamed
        .iter()
        .all(|c| c.address == mystery && c.task == "worker"));
    assert!(
        !list.iter().any(|c| c.function.contains("UNKNOWN")),
        "{list:?}"
    );
    let profile = std::fs::read_to_string(d.join("out_profile.csv")).unwrap();
    assert!(
        profile.contains("?function #1,4,") && profile.contains(&format!("{mystery:#x}")),
        "{profile}"
    );

    let out = run_ok(
        hookprof()
            .args(["callgraph", "run.bin", "--exe", "stripped"])
            .current_dir(d),
    );
    let graph = String::from_utf8_lossy(&out.stdout);
    assert!(
        graph.contains(
            "=====\t\t\t\nThread: worker\t\t\t\n=====\t\t\t\nindex\texcl_cycles\tcalled\tname\n"
        ),
        "{graph}"
    );
    assert!(graph.contains("\t4/4\t?function #1 ["), "{graph}");
    // idle and main_task ran (the profile's task part has them) but called nothing (main was
    // entered before hook_init: only its exit is recorded): no sections.
    assert!(
        profile.contains("\nidle,") && profile.contains("\nmain_task,"),
        "{profile}"
    );
    assert_eq!(graph.matches("Thread:").count(), 1, "{graph}");
}

/// Issue 12: the views read a TI dump too (`--exe` names the program), through the same
/// conversion as `hookprof callgraph`: the flame graph's folded stacks add up, per function,
/// to the exclusive cycles of `hookprof ti`'s profile, and the timeline has an event pair
/// for every call of it.
#[test]
fn views_read_a_ti_dump_and_agree_with_its_profile() {
    let target = Target::host();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build(d, &target, &["-O1"], false);
    let (_, prefix) = run(d, &target, &program);
    let dump = prefix.with_extension("bin");
    let (_, _, profile_text) = ti(&dump, &program, &d.join("out"), &[]);
    let profile = profile(&profile_text);
    let folded = run_ok(
        hookprof()
            .arg("flame")
            .arg(&dump)
            .arg("--exe")
            .arg(&program),
    );
    let mut exclusive: BTreeMap<String, u64> = BTreeMap::new();
    for line in String::from_utf8_lossy(&folded.stdout).lines() {
        let (stack, cycles) = line.rsplit_once(' ').unwrap();
        let leaf = stack.rsplit(';').next().unwrap().to_string();
        *exclusive.entry(leaf).or_default() += cycles.parse::<u64>().unwrap();
    }
    let mut calls = 0;
    for (function, row) in &profile.functions {
        assert_eq!(
            exclusive.get(function),
            Some(&number(row, 2)),
            "{function}: {exclusive:?}"
        );
        calls += number(row, 1);
    }
    assert_eq!(exclusive.len(), profile.functions.len(), "{exclusive:?}");
    let timeline = d.join("t.json");
    let out = run_ok(
        hookprof()
            .arg("timeline")
            .arg(&dump)
            .arg("--exe")
            .arg(&program)
            .arg("-o")
            .arg(&timeline),
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&timeline).unwrap()).unwrap();
    let events = json["traceEvents"].as_array().unwrap();
    let count = |ph: &str| events.iter().filter(|e| e["ph"] == ph).count() as u64;
    assert_eq!((count("B"), count("E")), (calls, calls));
    // Without the program there is no way to read a TI dump: one clear line, status 1.
    let bare = hookprof().arg("flame").arg(&dump).output().unwrap();
    assert_eq!(bare.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bare.stderr).contains("give the program with --exe"),
        "{}",
        String::from_utf8_lossy(&bare.stderr)
    );
}
