//! Bare metal under qemu-system: firmware built by `make` with `CC=hookcc` from
//! examples/baremetal/<board>/, booted in qemu, its output compared with the seed's.
//!
//! On the ARM926EJ-S (qemu's versatilepb; ARM and Thumb code), a Cortex-M3 (mps2-an385), a
//! Cortex-M4F and a Cortex-M7 with the hard-float ABI (mps2-an386, mps2-an500) and a
//! rv32imac RISC-V (virt, machine mode): the NITRO-SDK programs of
//! seeds/nitro-sdk-profiler.txt §3.5.1 (stack mode), §3.5.2 (log mode) and §4.5 (statistics)
//! built with `make NITRO_PROFILE=TRUE NITRO_PROFILE_TYPE=CALLTRACE|FUNCTIONCOST`, run, and their
//! dumps compared with runtime/test/nitro/expected/ (the seed's text; lr values and costs vary)
//! — and every lr symbolized with the ELF must lie in the caller the seed names. Also: main's
//! return value is qemu's exit status.
//!
//! Each firmware runs under gdb-multiarch, which saves the buffer where the program prints it:
//! `hookprof nitro` on that dump must print the program's text. The ARM926 also runs the TI
//! flow: its buffer dumped by gdb-multiarch, decoded by hookprof ti.
//!
//! Needs qemu-system-arm, qemu-system-misc, arm-none-eabi-gcc, riscv64-unknown-elf-gcc,
//! picolibc for both and gdb-multiarch (scripts/setup.sh): without them the tests fail in CI
//! and skip with a message elsewhere.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hookcc_tests::*;

const PICOLIBC_ARM: &str = "/usr/lib/picolibc/arm-none-eabi/include";
const PICOLIBC_RISCV: &str = "/usr/lib/picolibc/riscv64-unknown-elf/include";

/// A board of examples/baremetal and how to check what its firmware prints.
struct Board {
    /// Its directory under examples/baremetal.
    dir: &'static str,
    /// make variables for the build (THUMB=1).
    variables: &'static [&'static str],
    /// Symbolizes the lr values.
    addr2line: &'static str,
    /// Every lr has bit 0 set (the caller is Thumb code).
    thumb: bool,
}

const BOARDS: &[Board] = &[
    Board {
        dir: "arm926",
        variables: &[],
        addr2line: "arm-none-eabi-addr2line",
        thumb: false,
    },
    Board {
        dir: "arm926",
        variables: &["THUMB=1"],
        addr2line: "arm-none-eabi-addr2line",
        thumb: true,
    },
    Board {
        dir: "cortex-m3",
        variables: &[],
        addr2line: "arm-none-eabi-addr2line",
        thumb: true,
    },
    Board {
        dir: "cortex-m4f",
        variables: &[],
        addr2line: "arm-none-eabi-addr2line",
        thumb: true,
    },
    Board {
        dir: "cortex-m4f",
        variables: &["MACHINE=mps2-an500"],
        addr2line: "arm-none-eabi-addr2line",
        thumb: true,
    },
    Board {
        dir: "riscv32",
        variables: &[],
        addr2line: "riscv64-unknown-elf-addr2line",
        thumb: false,
    },
];

fn runs(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// True if the bare-metal tools are installed; otherwise fails in CI, and says what is
/// missing elsewhere.
fn have_tools() -> bool {
    let missing: Vec<&str> = [
        ("qemu-system-arm", runs("qemu-system-arm")),
        (
            "qemu-system-riscv32 (qemu-system-misc)",
            runs("qemu-system-riscv32"),
        ),
        ("arm-none-eabi-gcc", runs("arm-none-eabi-gcc")),
        ("arm-none-eabi-addr2line", runs("arm-none-eabi-addr2line")),
        ("riscv64-unknown-elf-gcc", runs("riscv64-unknown-elf-gcc")),
        (
            "riscv64-unknown-elf-addr2line",
            runs("riscv64-unknown-elf-addr2line"),
        ),
        ("picolibc-arm-none-eabi", Path::new(PICOLIBC_ARM).is_dir()),
        (
            "picolibc-riscv64-unknown-elf",
            Path::new(PICOLIBC_RISCV).is_dir(),
        ),
        ("gdb-multiarch", runs("gdb-multiarch")),
        ("make", runs("make")),
    ]
    .iter()
    .filter(|(_, ok)| !ok)
    .map(|(name, _)| *name)
    .collect();
    if missing.is_empty() {
        return true;
    }
    assert!(
        !in_ci(),
        "CI must have {} for the bare-metal tests (scripts/setup.sh)",
        missing.join(", ")
    );
    eprintln!(
        "skipping the bare-metal tests: {} missing (run scripts/setup.sh)",
        missing.join(", ")
    );
    false
}

/// The make variables that build tests/programs/calls.c with the native trace on `board`,
/// and `extra` (see [`boot_traced_calls`]).
fn traced_calls_variables(board: &Board, extra: &[&str]) -> Vec<String> {
    let mut variables = vec![
        "HOOKS=trace".to_string(),
        format!("APP={}", program_source("calls.c").display()),
        format!("HOOKCC_FLAGS=--trace {SOURCE_PLACEMENT}"),
    ];
    variables.extend(extra.iter().chain(board.variables).map(|v| v.to_string()));
    variables
}

/// tests/programs/calls.c booted with the native trace and `extra` make variables on `board`,
/// in a fresh copy of the examples: its description (`label` after the board), the temporary
/// directory holding the copy, the board's directory in it, and make's output (make succeeded).
/// Exact counts: the source placement (--trace's default at -O1 is after inlining). A
/// command-line variable overrides common.mk's `HOOKCC_FLAGS := --trace`; the board's CFLAGS
/// stay its own (riscv32's -gdwarf-4: its ld crashed on DWARF 5).
fn boot_traced_calls(
    board: &Board,
    extra: &[&str],
    label: &str,
) -> (String, tempfile::TempDir, PathBuf, Output) {
    let what = format!(
        "{} {} calls.c {label}",
        board.dir,
        board.variables.join(" ")
    );
    let dir = tempfile::tempdir().unwrap();
    let project = copy_baremetal_example(dir.path(), board.dir);
    let variables = traced_calls_variables(board, extra);
    let out = make_run(
        &project,
        &variables.iter().map(String::as_str).collect::<Vec<_>>(),
    );
    assert!(
        out.status.success(),
        "{what}: make run failed with {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    (what, dir, project, out)
}

/// `make VARIABLES… run` in `project`, with the workspace's hookcc first on PATH: the output,
/// whatever the status.
fn make_run(project: &Path, variables: &[&str]) -> Output {
    make_baremetal(project, "run", variables)
}

/// The comparisons' view of a dump, as runtime/test/nitro/run.sh normalizes it: lr values and
/// costs vary from build to build, everything else is the seed's text.
fn normalize(text: &str) -> String {
    text.lines()
        .map(|line| {
            let mut out = String::new();
            let mut rest = line;
            while let Some(at) = rest.find("lr=") {
                out.push_str(&rest[..at + 3]);
                let hex = rest[at + 3..]
                    .find(|c: char| !c.is_ascii_hexdigit())
                    .unwrap_or(rest.len() - at - 3);
                out.push_str("ADDR");
                rest = &rest[at + 3 + hex..];
            }
            out.push_str(rest);
            match out.rfind(", cost ") {
                Some(at) if out[at + 7..].chars().all(|c| c.is_ascii_digit()) => {
                    format!("{}, cost C\n", &out[..at])
                }
                _ => out + "\n",
            }
        })
        .collect()
}

fn expected(name: &str) -> String {
    let path = workspace_root()
        .join("runtime/test/nitro/expected")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The function of `elf` that holds the instruction before return address `lr` (bit 0, the
/// Thumb bit, cleared first), by the board's addr2line.
fn caller_of(addr2line: &str, elf: &Path, lr: u64) -> String {
    let out = run_ok(
        Command::new(addr2line)
            .arg("-f")
            .arg("-e")
            .arg(elf)
            .arg(format!("{:#x}", (lr & !1) - 1)),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

/// Every "NAME: lr=HEX" line of `dump` has its lr in the function `callers` names for NAME.
/// Returns how many lines were checked.
fn check_lr(
    addr2line: &str,
    elf: &Path,
    dump: &str,
    callers: &[(&str, &str)],
    what: &str,
) -> usize {
    let mut checked = 0;
    for line in dump.lines() {
        let line = line.trim_start();
        let Some((name, rest)) = line.split_once(": lr=") else {
            continue;
        };
        let hex: String = rest.chars().take_while(char::is_ascii_hexdigit).collect();
        let lr = u64::from_str_radix(&hex, 16).unwrap();
        let want = callers
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("{what}: unexpected line {line:?}"))
            .1;
        let got = caller_of(addr2line, elf, lr);
        assert_eq!(
            got, want,
            "{what}: {name}: lr={hex} is in {got}, not {want}"
        );
        checked += 1;
    }
    checked
}

struct NitroCase {
    program: &'static str,
    profile_type: &'static str,
    expected: &'static str,
    /// Where the debugger stops the firmware, and the buffer it saves there.
    dump_at: &'static str,
    buffer: &'static str,
    /// For each dumped name, the function its lr must be in.
    callers: &'static [(&'static str, &'static str)],
    lines_with_lr: usize,
}

const NITRO_CASES: &[NitroCase] = &[
    NitroCase {
        program: "nitro_calltrace_stack.c",
        profile_type: "CALLTRACE",
        expected: "calltrace_stack.txt",
        dump_at: "OS_DumpCallTrace",
        buffer: "buffer",
        callers: &[
            ("OS_DumpCallTrace", "test3"),
            ("test3", "test2"),
            ("test2", "test1"),
            ("test1", "NitroMain"),
        ],
        lines_with_lr: 4,
    },
    NitroCase {
        program: "nitro_calltrace_log.c",
        profile_type: "CALLTRACE",
        expected: "calltrace_log.txt",
        dump_at: "OS_DumpCallTrace",
        buffer: "buffer",
        callers: &[
            ("OS_DumpCallTrace", "NitroMain"),
            ("test3", "test2"),
            ("test2", "test1"),
            ("test1", "NitroMain"),
        ],
        lines_with_lr: 7,
    },
    NitroCase {
        program: "nitro_functioncost.c",
        profile_type: "FUNCTIONCOST",
        expected: "functioncost.txt",
        dump_at: "OS_DumpStatistics",
        buffer: "StatBuffer",
        callers: &[],
        lines_with_lr: 0,
    },
];

#[test]
fn nitro_programs_print_the_seed_dumps_on_every_board() {
    if !have_tools() {
        return;
    }
    for board in BOARDS {
        for case in NITRO_CASES {
            let what = format!(
                "{} {} {} NITRO_PROFILE_TYPE={}",
                board.dir,
                board.variables.join(" "),
                case.program,
                case.profile_type
            );
            let dir = tempfile::tempdir().unwrap();
            let project = copy_baremetal_example(dir.path(), board.dir);
            let app = format!("APP={}", program_source(case.program).display());
            let profile_type = format!("NITRO_PROFILE_TYPE={}", case.profile_type);
            let dump_at = format!("BREAK={}", case.dump_at);
            let buffer = format!("BUFFER={}", case.buffer);
            let mut variables = vec![
                app.as_str(),
                "NITRO_PROFILE=TRUE",
                profile_type.as_str(),
                dump_at.as_str(),
                buffer.as_str(),
            ];
            variables.extend(board.variables);
            // Booted under gdb-multiarch, which saves the buffer where the program is about to
            // print it (scripts/baremetal-dump.sh); the program then prints it itself.
            let out = make_baremetal(&project, "gdb-dump", &variables);
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(
                out.status.success(),
                "{what}: make run failed with {}\n--- stdout\n{stdout}\n--- stderr\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                normalize(&stdout),
                expected(case.expected),
                "{what}: the dump differs from the seed's (runtime/test/nitro/expected/{})",
                case.expected
            );
            let elf = project.join("firmware.elf");
            // The debugger's dump, decoded on the host, is the program's own text.
            let mut decode = hookprof();
            decode
                .arg("nitro")
                .arg(project.join(format!("{}.bin", case.buffer)))
                .arg("--exe")
                .arg(&elf);
            if let Some(lr) = stdout
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("OS_DumpCallTrace: lr="))
            {
                decode.arg("--lr").arg(lr);
            }
            let decoded = run_ok(&mut decode);
            assert_eq!(
                String::from_utf8_lossy(&decoded.stdout),
                stdout,
                "{what}: hookprof nitro on the debugger's dump of {}",
                case.buffer
            );
            let checked = check_lr(board.addr2line, &elf, &stdout, case.callers, &what);
            assert_eq!(checked, case.lines_with_lr, "{what}: lr lines in\n{stdout}");
            if checked > 0 {
                // Thumb callers: the lr the runtime records is the register, bit 0 set
                // (interworking); ARM and RISC-V return addresses are even.
                assert!(
                    stdout.lines().filter(|l| l.contains("lr=")).all(|l| {
                        let hex = l.split("lr=").nth(1).unwrap();
                        u64::from_str_radix(&hex[..8], 16).unwrap() & 1 == board.thumb as u64
                    }),
                    "{what}: lr bit 0 is not {}:\n{stdout}",
                    board.thumb as u8
                );
            }
            if case.profile_type == "FUNCTIONCOST" {
                // The board's counter (SP804, SysTick, mtime) ticks: every function took some.
                for line in stdout.lines() {
                    let cost: u64 = line.rsplit(' ').next().unwrap().parse().unwrap();
                    assert!(cost > 0, "{what}: {line}: no time measured");
                }
            }
        }
    }
}

#[test]
fn arm926_exit_status_is_mains() {
    if !have_tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let project = copy_baremetal_example(dir.path(), "arm926");
    // The example's own program, unprofiled: hookcc is plain clang here.
    let out = make_run(&project, &[]);
    assert!(
        out.status.success(),
        "arm926 app.c: make run failed\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "test1(0x100) = 0x107\n"
    );
    // The unprofiled build is clang's alone: no runtime in it.
    let symbols = run_ok(Command::new("arm-none-eabi-nm").arg(project.join("firmware.elf")));
    let symbols = String::from_utf8_lossy(&symbols.stdout);
    assert!(
        !symbols.contains("__PROFILE_ENTRY"),
        "a runtime in the plain build"
    );
    // A program returning 3: qemu exits with 3, so make fails saying so.
    let app = dir.path().join("three.c");
    std::fs::write(&app, "int main(void) { return 3; }\n").unwrap();
    run_ok(
        Command::new("make")
            .arg("-s")
            .arg("clean")
            .current_dir(&project),
    );
    let out = make_run(&project, &[&format!("APP={}", app.display())]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("Error 3"),
        "main returned 3 but make run said {}:\n{stderr}",
        out.status
    );
}

/// hookprof ti's call list: (function, task, inclusive, exclusive, depth, enter, exit).
fn ti_calls(call_list: &str) -> Vec<(String, String, u64, u64, u64, u64, u64)> {
    let mut lines = call_list.lines();
    assert_eq!(
        lines.next(),
        Some("Function,EnterTSC,ExitTSC,InclusiveCycles,ExclusiveCycles,Task,Depth,Address")
    );
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            let n = |i: usize| f[i].parse::<u64>().unwrap_or_else(|e| panic!("{l}: {e}"));
            (
                f[0].to_string(),
                f[5].to_string(),
                n(3),
                n(4),
                n(6),
                n(1),
                n(2),
            )
        })
        .collect()
}

/// The TI flow as a CCS user has it, on every board: firmware built with TI's hook options and
/// hookcc's TI runtime (examples/baremetal/ti_tasks.c: three tasks with stacks of their own, a
/// timer interrupt running instrumented code meanwhile), booted under gdb-multiarch,
/// ProfileData dumped at the hookcc_ti_done breakpoint by scripts/baremetal-dump.sh (@ti), the
/// dump decoded by `hookprof ti` and checked against what the firmware counted itself.
#[test]
fn ti_tasks_dumped_by_gdb_and_decoded_on_every_board() {
    if !have_tools() {
        return;
    }
    if !runs("gdb-multiarch") {
        assert!(!in_ci(), "CI must have gdb-multiarch (scripts/setup.sh)");
        eprintln!("skipping the TI debugger test: gdb-multiarch missing (run scripts/setup.sh)");
        return;
    }
    for board in BOARDS {
        let what = format!("{} {} ti_tasks.c", board.dir, board.variables.join(" "));
        let dir = tempfile::tempdir().unwrap();
        let project = copy_baremetal_example(dir.path(), board.dir);
        let path = format!(
            "{}:{}",
            target_dir().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut make = Command::new("make");
        make.args(["-s", "ti-dump", "APP=../ti_tasks.c", "HOOKS=ti"])
            .arg(format!(
                "HOOKCC_SCRIPTS={}",
                workspace_root().join("scripts").display()
            ))
            .current_dir(&project)
            .env("PATH", &path)
            .env("HOOKCC_CACHE_DIR", target_dir().join("hookcc-test-cache"))
            .env_remove("MAKEFLAGS");
        make.args(board.variables);
        let out = run_ok(&mut make);
        let elf = project.join("firmware.elf");
        let dump = project.join("ti.bin");
        let vars: std::collections::BTreeMap<String, String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let number = |k: &str| -> u64 {
            vars.get(k)
                .unwrap_or_else(|| panic!("{what}: no {k}= in {vars:?}"))
                .parse()
                .unwrap()
        };
        let (records, ticks, switches) = (number("records"), number("ticks"), number("switches"));
        assert_eq!(number("dropped"), 0, "{what}");
        // 12 delays: 1 switch from main, one per yield but t2's lonely last one, 3 finishes.
        assert_eq!(switches, 1 + 12 - 1 + 3, "{what}");
        assert!(ticks > 0, "{what}: the timer never interrupted");
        let size = std::fs::metadata(&dump).unwrap().len();
        assert_eq!(
            size,
            records * 12,
            "{what}: {} bytes for {records} records",
            size
        );

        let prefix = project.join("ti");
        let status = run_ok(
            hookprof()
                .arg("ti")
                .arg(&dump)
                .arg("--exe")
                .arg(&elf)
                .arg("--all-symbols")
                .arg("--out")
                .arg(&prefix),
        );
        let status = String::from_utf8_lossy(&status.stdout).into_owned();
        for expected in [
            format!("Records: {records} valid, 0 invalid (binary, "),
            "Functions found: 6".to_string(),
            "Tasks found: 4".to_string(),
            "Enter records without exit: 0".to_string(),
            "Exit records without enter: 0".to_string(),
        ] {
            assert!(
                status.contains(&expected),
                "{what}: {expected:?} not in\n{status}"
            );
        }
        let read = |suffix: &str| {
            let path = format!("{}{suffix}", prefix.display());
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
        };
        let calls = ti_calls(&read("_call_list.csv"));
        let count = |function: &str, task: Option<&str>| {
            calls
                .iter()
                .filter(|c| c.0 == function && task.is_none_or(|t| c.1 == t))
                .count() as u64
        };
        // t0 is `tasks` (the array's first element); t1 and t2 have no symbol of their own.
        for (task, delays) in [("tasks", 3), ("?task #1", 4), ("?task #2", 5)] {
            assert_eq!(
                count("delay", Some(task)),
                delays,
                "{what}: delays of {task}"
            );
        }
        for (function, n) in [
            ("task_yield", 12),
            ("task_function", 3),
            ("run_scheduler", 1),
            ("switch_to", switches - 3),
            ("on_tick", ticks),
        ] {
            assert_eq!(count(function, None), n, "{what}: calls of {function}");
        }
        // Nesting holds, interrupts included: inclusive = exclusive + the inclusive time of
        // the calls made inside, for every call. Calls are listed as they complete, so the
        // calls made inside one are the ones of its task listed just before it, deeper than it
        // (the direct ones one level deeper). Nested by the records' order, not their times: an
        // interrupt between a hook's timestamp and its record puts a later time first
        // (docs/baremetal.md, "Interrupts").
        for (i, c) in calls.iter().enumerate() {
            let children: u64 = calls[..i]
                .iter()
                .rev()
                .filter(|d| d.1 == c.1)
                .take_while(|d| d.4 > c.4)
                .filter(|d| d.4 == c.4 + 1)
                .map(|d| d.2)
                .sum();
            assert_eq!(c.2, c.3 + children, "{what}: {c:?}");
        }
    }
}

/// NITRO stack mode with a timer interrupt running a profiled function every 20 µs while the
/// main line runs the seed's call chain 20000 times (examples/baremetal/nitro_interrupts.c):
/// the interrupt's pushes and pops interleave with the main line's, and the final dump is
/// still exactly the seed's (no frame of the interrupt, no unmatched return), every lr in the
/// seed's caller.
#[test]
fn nitro_stack_survives_interrupts_on_every_board() {
    if !have_tools() {
        return;
    }
    for board in BOARDS {
        let what = format!(
            "{} {} nitro_interrupts.c",
            board.dir,
            board.variables.join(" ")
        );
        let dir = tempfile::tempdir().unwrap();
        let project = copy_baremetal_example(dir.path(), board.dir);
        let mut variables = vec![
            "APP=../nitro_interrupts.c",
            "NITRO_PROFILE=TRUE",
            "NITRO_PROFILE_TYPE=CALLTRACE",
        ];
        variables.extend(board.variables);
        let out = make_run(&project, &variables);
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{what}: make run failed with {}\n--- stdout\n{stdout}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            normalize(&stdout),
            expected("calltrace_stack.txt") + "sum=200130000 ticks>100=1\n",
            "{what}: the dump differs from the seed's, or the interrupt did not run"
        );
        let callers = &NITRO_CASES[0].callers;
        let checked = check_lr(
            board.addr2line,
            &project.join("firmware.elf"),
            &stdout,
            callers,
            &what,
        );
        assert_eq!(checked, 4, "{what}");
    }
}

/// Every runtime component a bare-metal firmware may link compiles freestanding without a
/// warning (-Wall -Wextra -Werror) for each board's CPU, and needs nothing from outside but
/// what the firmware provides (its counter, TI's buffer) and the compiler's own helpers: no
/// libatomic, which arm-none-eabi does not have (ARMv5TE's atomics are the runtime's own).
#[test]
fn runtime_components_are_freestanding_on_every_board() {
    if !have_tools() {
        return;
    }
    let targets: &[(&[&str], &str)] = &[
        (
            &["--target=armv5te-none-eabi", "-mcpu=arm926ej-s"],
            "arm-none-eabi-nm",
        ),
        (
            &["--target=armv5te-none-eabi", "-mcpu=arm926ej-s", "-mthumb"],
            "arm-none-eabi-nm",
        ),
        (
            &["--target=thumbv7m-none-eabi", "-mcpu=cortex-m3"],
            "arm-none-eabi-nm",
        ),
        (
            &[
                "--target=thumbv7em-none-eabihf",
                "-mcpu=cortex-m4",
                "-mfpu=fpv4-sp-d16",
                "-mfloat-abi=hard",
            ],
            "arm-none-eabi-nm",
        ),
        (
            &[
                "--target=riscv32-unknown-elf",
                "-march=rv32imac",
                "-mabi=ilp32",
            ],
            "riscv64-unknown-elf-nm",
        ),
    ];
    let allowed = |symbol: &str| {
        symbol.starts_with("__aeabi_")
            || matches!(
                symbol,
                "hkrt_ticks_extern"
                    | "hkrt_ticks_per_second_extern"
                    | "hookcc_ti_timestamp"
                    | "ProfileData"
                    | "uiMaxProfileRecordNum"
                    | "memset"
                    | "__udivdi3"
                    | "__umoddi3"
            )
    };
    let runtime = workspace_root().join("runtime");
    let dir = tempfile::tempdir().unwrap();
    for (flags, nm) in targets {
        for component in ["calltrace", "functioncost", "ti", "trace_baremetal"] {
            let what = format!("{component}.c {}", flags.join(" "));
            let object = dir.path().join(format!("{component}.o"));
            run_ok(
                Command::new("clang-19")
                    .args(*flags)
                    .args([
                        "-std=gnu11",
                        "-O2",
                        "-ffreestanding",
                        "-ffunction-sections",
                        "-fdata-sections",
                        "-fno-stack-protector",
                        "-fvisibility=hidden",
                        "-Wall",
                        "-Wextra",
                        "-Werror",
                    ])
                    .arg("-I")
                    .arg(runtime.join("include"))
                    .arg("-I")
                    .arg(runtime.join("src"))
                    .arg("-c")
                    .arg(runtime.join(format!("src/{component}.c")))
                    .arg("-o")
                    .arg(&object),
            );
            let undefined = run_ok(Command::new(nm).arg("-u").arg(&object));
            let undefined = String::from_utf8_lossy(&undefined.stdout);
            let unexpected: Vec<&str> = undefined
                .split_whitespace()
                .filter(|w| *w != "U" && !allowed(w))
                .collect();
            assert!(
                unexpected.is_empty(),
                "{what}: needs {unexpected:?}, which a bare-metal firmware does not have"
            );
        }
    }
}

/// hookcc's native trace on every board (`make run HOOKS=trace`): the bare-metal trace
/// runtime records into RAM, the firmware writes the finished trace through semihosting at
/// exit (examples/baremetal/trace_out.c), and `hookprof report` reads it like a Linux trace:
/// tests/programs/calls.c's call counts, known by construction, named from the ELF, and times
/// in real units from the board's counter frequency.
#[test]
fn native_trace_in_ram_read_by_hookprof_on_every_board() {
    if !have_tools() {
        return;
    }
    for board in BOARDS {
        let (what, _dir, project, out) = boot_traced_calls(board, &[], "--trace");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "16135\n", "{what}");
        let trace = project.join("firmware.hktrace");
        assert!(trace.is_file(), "{what}: no firmware.hktrace written");
        let report = run_ok(
            hookprof()
                .arg("report")
                .arg(&trace)
                .arg("--exe")
                .arg(project.join("firmware.elf"))
                .arg("--format=csv"),
        );
        let stderr = String::from_utf8_lossy(&report.stderr);
        assert!(
            stderr.is_empty(),
            "{what}: hookprof report warned:\n{stderr}"
        );
        let rows = parse_report_csv(&String::from_utf8_lossy(&report.stdout));
        let counts: std::collections::BTreeMap<&str, u64> = rows
            .iter()
            .map(|r| (r.function.as_str(), r.calls))
            .collect();
        let expected: std::collections::BTreeMap<&str, u64> = CALLS_C.into_iter().collect();
        assert_eq!(counts, expected, "{what}");
        let main = rows.iter().find(|r| r.function == "main").unwrap();
        assert!(
            main.inclusive_ns > 0.0 && main.inclusive_ns < 1e9,
            "{what}: main took {} ns",
            main.inclusive_ns
        );
    }
}

/// Without a hook option hookcc is clang-19 for bare-metal targets too: the same object, byte
/// for byte, from the same command line.
#[test]
fn bare_metal_compile_without_hooks_is_clang_exactly() {
    if !have_tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let source = workspace_root().join("examples/baremetal/app.c");
    for flags in [
        &["--target=armv5te-none-eabi", "-mcpu=arm926ej-s", "-mthumb"][..],
        &["--target=thumbv7m-none-eabi", "-mcpu=cortex-m3"][..],
        &[
            "--target=thumbv7em-none-eabihf",
            "-mcpu=cortex-m4",
            "-mfpu=fpv4-sp-d16",
            "-mfloat-abi=hard",
        ][..],
        &[
            "--target=riscv32-unknown-elf",
            "-march=rv32imac",
            "-mabi=ilp32",
        ][..],
    ] {
        let include = if flags[0].contains("riscv") {
            PICOLIBC_RISCV
        } else {
            PICOLIBC_ARM
        };
        let compile = |cmd: &mut Command, out: &str| {
            run_ok(
                cmd.args(flags)
                    .args(["-O2", "-g", "-isystem", include, "-c"])
                    .arg(&source)
                    .arg("-o")
                    .arg(dir.path().join(out)),
            );
            std::fs::read(dir.path().join(out)).unwrap()
        };
        let by_hookcc = compile(
            hookcc(dir.path(), false)
                .env_remove("NITRO_PROFILE")
                .env_remove("NITRO_PROFILE_TYPE"),
            "hookcc.o",
        );
        let by_clang = compile(Command::new("clang-19").current_dir(dir.path()), "clang.o");
        assert!(
            by_hookcc == by_clang,
            "{}: hookcc's object differs from clang-19's",
            flags.join(" ")
        );
    }
}

/// The call graph's primary lines of GNU gprof's `-b -q` output: function → its `called`
/// column (`100`, or `1+1972` for a recursive function: calls from outside + recursive).
fn gprof_called(text: &str) -> std::collections::BTreeMap<String, String> {
    text.lines()
        .filter(|l| l.starts_with('['))
        .filter_map(|l| {
            // [4]     42.5    0.00    0.00       1+1972    fib [4]
            let fields: Vec<&str> = l.split_whitespace().collect();
            (fields.len() >= 7).then(|| (fields[5].to_string(), fields[4].to_string()))
        })
        .collect()
}

#[test]
fn gprof_on_every_board_sampled_by_its_timer_dumped_by_gdb_read_by_gnu_gprof() {
    // seeds/ecos-gprof.txt on a board: the arcs from hookcc's entry hooks, the histogram from
    // the board's timer interrupt handing the interrupted PC to __profile_hit
    // (examples/baremetal/gprof_sampling.c, each board's board_start_sample: CMSDK timer 0 on
    // the Cortex-M3, SP804 timer 1 on the ARM926 in ARM and Thumb code, the CLINT's mtimecmp
    // on RV32), the data taken out by gdb at exit as gprof.gdb's gprof_fetch does, converted by
    // hookprof gprof, and read by the target's GNU gprof.
    if !have_tools() {
        return;
    }
    for board in BOARDS {
        let what = format!("{} {}", board.dir, board.variables.join(" "));
        let gprof = board.addr2line.replace("addr2line", "gprof");
        let dir = tempfile::tempdir().unwrap();
        let project = copy_baremetal_example(dir.path(), board.dir);
        let app = format!("APP={}", program_source("calls.c").display());
        // -O0: every call of calls.c stays a call (the hooks go in after inlining, as -pg's).
        // DWARF 4 on RV32: Debian 12's riscv64-unknown-elf ld crashes on DWARF 5 (its Makefile).
        let cflags = if board.dir == "riscv32" {
            "CFLAGS=-O0 -gdwarf-4"
        } else {
            "CFLAGS=-O0 -g"
        };
        let mut variables = vec!["HOOKS=gprof", app.as_str(), cflags];
        variables.extend(board.variables);
        let out = make_baremetal(&project, "gprof-dump", &variables);
        assert!(
            out.status.success(),
            "{what}: make gprof-dump failed with {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "16135\n", "{what}");
        let elf = project.join("firmware.elf");
        let gmon = project.join("gmon.out");
        run_ok(
            hookprof()
                .arg("gprof")
                .arg(project.join("gprof.dump"))
                .arg("--exe")
                .arg(&elf)
                .arg("-o")
                .arg(&gmon),
        );
        let graph = run_ok(Command::new(&gprof).args(["-b", "-q"]).arg(&elf).arg(&gmon));
        let called = gprof_called(&String::from_utf8_lossy(&graph.stdout));
        for (function, calls) in [
            ("main", "1"),
            ("fib", "1+1972"),
            ("apply", "50"),
            ("leaf", "100"),
            ("twice", "25"),
            ("negate", "25"),
        ] {
            assert_eq!(
                called.get(function).map(String::as_str),
                Some(calls),
                "{what}: calls of {function}: {called:#?}"
            );
        }
        // The histogram: samples landed in the program's code (icount makes them the same in
        // every run; how many depends on the code the build made).
        let flat = run_ok(Command::new(&gprof).args(["-b", "-p"]).arg(&elf).arg(&gmon));
        let flat = String::from_utf8_lossy(&flat.stdout);
        let sampled: f64 = flat
            .lines()
            .filter(|l| {
                ["fib", "twice", "leaf", "apply", "negate", "main"]
                    .contains(&l.split_whitespace().last().unwrap_or(""))
            })
            .filter_map(|l| l.split_whitespace().next()?.parse::<f64>().ok())
            .sum();
        assert!(
            sampled > 0.0,
            "{what}: no samples in the program's functions:\n{flat}"
        );
    }
}

#[test]
fn profile_points_on_every_board_pre_empted_by_an_interrupt_and_dumped_by_gdb() {
    // seeds/ti-pfp-profile-points.txt on bare metal: examples/baremetal/pfp_points.c checks
    // its own measurements (exclusive nesting against reference loops; a region pre-empted by
    // the board's tick interrupt, whose handler calls pfpHwiBegin/End, does not count the
    // handler's cycles) and prints pfpPrintStats' lines; gdb saves pfpInst at pfp_done, and
    // hookprof pfp must print exactly those lines from the dump.
    if !have_tools() {
        return;
    }
    for board in BOARDS {
        let what = format!("{} {} pfp_points.c", board.dir, board.variables.join(" "));
        let dir = tempfile::tempdir().unwrap();
        let project = copy_baremetal_example(dir.path(), board.dir);
        let mut variables = vec![
            "HOOKS=pfp",
            "APP=../pfp_points.c",
            "BREAK=pfp_done",
            "BUFFER=pfpInst",
        ];
        variables.extend(board.variables);
        let out = make_baremetal(&project, "gdb-dump", &variables);
        let printed = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(
            out.status.success(),
            "{what}: make gdb-dump failed with {}\n{printed}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let (lines, verdict) = printed
            .trim_end()
            .rsplit_once('\n')
            .unwrap_or_else(|| panic!("{what}: {printed}"));
        assert!(verdict.starts_with("pfp: ok"), "{what}: {printed}");
        assert!(lines.starts_with("ID: 00, n=1000, C="), "{what}: {printed}");
        let decoded = run_ok(
            hookprof()
                .arg("pfp")
                .arg(project.join("pfpInst.bin"))
                .arg("--exe")
                .arg(project.join("firmware.elf")),
        );
        assert_eq!(
            String::from_utf8_lossy(&decoded.stdout).trim_end(),
            lines,
            "{what}: hookprof pfp on the dump"
        );
    }
}

/// Issue 23, the flight recorder on bare metal: `make run HOOKS=trace TRACE_RING=64` makes the
/// trace buffer a ring of 64 records (HOOKCC_TRACE_RING_BUFFER); at exit the file holds the
/// last 64 records, oldest first, after a RING chunk counting the ones written over, on every
/// board. The calls whose entries were written over are not reported as errors.
#[test]
fn a_ring_buffer_keeps_the_last_records_on_every_board() {
    if !have_tools() {
        return;
    }
    let made: u64 = 2 * CALLS_C.iter().map(|(_, calls)| calls).sum::<u64>();
    for board in BOARDS {
        let (what, _dir, project, _) =
            boot_traced_calls(board, &["TRACE_RING=64"], "TRACE_RING=64");
        let trace = project.join("firmware.hktrace");
        let exe = project.join("firmware.elf");
        let info = String::from_utf8_lossy(&run_ok(hookprof().arg("info").arg(&trace)).stdout)
            .into_owned();
        assert!(info.contains("records:           64"), "{what}:\n{info}");
        assert!(
            info.contains(&format!(
                "ring:              1 windows (HOOKCC_MODE=ring snapshots), {} records dropped",
                made - 64
            )),
            "{what}: {made} records made:\n{info}"
        );
        assert!(info.contains("unmatched exits:   0"), "{what}:\n{info}");
        // The last calls: main's return is the last record.
        let report = run_ok(
            hookprof()
                .arg("report")
                .arg(&trace)
                .arg("--exe")
                .arg(&exe)
                .arg("--format=csv"),
        );
        let rows = parse_report_csv(&String::from_utf8_lossy(&report.stdout));
        let calls: u64 = rows.iter().map(|r| r.calls).sum();
        assert!(
            (20..=32).contains(&calls),
            "{what}: {calls} complete calls in 64 records: {rows:?}"
        );

        // A debugger halted inside the program (at negate's first call) finishes the file and
        // saves it: scripts/baremetal-dump.sh's @trace.
        let variables =
            traced_calls_variables(board, &["TRACE_RING=64", "BREAK=negate", "BUFFER=@trace"]);
        let variables: Vec<&str> = variables.iter().map(String::as_str).collect();
        let out = make_baremetal(&project, "gdb-dump", &variables);
        assert!(
            out.status.success(),
            "{what}: make gdb-dump failed\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let dump = project.join("@trace.bin");
        let info =
            String::from_utf8_lossy(&run_ok(hookprof().arg("info").arg(&dump)).stdout).into_owned();
        assert!(
            info.contains("records:           64"),
            "{what}, @trace:\n{info}"
        );
        assert!(
            info.contains("unmatched exits:   0"),
            "{what}, @trace:\n{info}"
        );
        let report = run_ok(
            hookprof()
                .arg("report")
                .arg(&dump)
                .arg("--exe")
                .arg(&exe)
                .arg("--format=csv"),
        );
        let rows = parse_report_csv(&String::from_utf8_lossy(&report.stdout));
        assert!(
            rows.iter().any(|r| r.function == "negate" && r.calls == 1),
            "{what}: negate, where the debugger stopped, is the last frame open: {rows:?}"
        );
    }
}

/// Issue 23, the profile mode on bare metal: `make run HOOKS=trace TRACE_PROFILE=64` folds the
/// 1024-record buffer into a tree of call paths each time it fills (calls.c makes 4348 records:
/// four folds and the rest at exit), and the file at exit is the tree: calls.c's exact counts,
/// on every board, in under a kilobyte where the trace has 69 KB.
#[test]
fn a_call_path_profile_in_constant_memory_on_every_board() {
    if !have_tools() {
        return;
    }
    for board in BOARDS {
        let (what, _dir, project, out) =
            boot_traced_calls(board, &["TRACE_PROFILE=64"], "TRACE_PROFILE=64");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "16135\n", "{what}");
        let trace = project.join("firmware.hktrace");
        let elf = project.join("firmware.elf");
        let (rows, stderr) = report_csv(&trace, &["--exe", elf.to_str().unwrap()]);
        assert!(
            stderr.is_empty(),
            "{what}: hookprof report warned:\n{stderr}"
        );
        let counts: std::collections::BTreeMap<String, u64> =
            rows.into_iter().map(|r| (r.function, r.calls)).collect();
        let expected: std::collections::BTreeMap<String, u64> =
            CALLS_C.iter().map(|(f, c)| (f.to_string(), *c)).collect();
        assert_eq!(counts, expected, "{what}");
        let info = String::from_utf8_lossy(&run_ok(hookprof().arg("info").arg(&trace)).stdout)
            .into_owned();
        assert!(
            info.contains("format:            version 5"),
            "{what}:\n{info}"
        );
        assert!(info.contains("records:           4348"), "{what}:\n{info}");
        let size = std::fs::metadata(&trace).unwrap().len();
        assert!(size < 1024, "{what}: the profile has {size} bytes");
    }
}

/// Issue 23, the duration threshold and triggers on bare metal: with a profile's memory and
/// `hookcc_trace_min_ticks` set (TRACE_MIN_TICKS), every call is in the tree (calls.c's exact
/// counts) and the records keep only the long calls, with the number left out; with a start
/// function in `hookcc_trace_triggers` (TRACE_START=apply), only apply's calls and theirs.
#[test]
fn threshold_and_triggers_cut_a_firmwares_records_on_every_board() {
    if !have_tools() {
        return;
    }
    for board in BOARDS {
        for (extra, name) in [
            (
                &["TRACE_PROFILE=64", "TRACE_MIN_TICKS=100000000"][..],
                "threshold",
            ),
            (&["TRACE_START=apply"][..], "trigger"),
        ] {
            let (what, _dir, project, _) = boot_traced_calls(board, extra, name);
            let trace = project.join("firmware.hktrace");
            let report = run_ok(
                hookprof()
                    .arg("report")
                    .arg(&trace)
                    .arg("--exe")
                    .arg(project.join("firmware.elf"))
                    .arg("--format=csv"),
            );
            let counts: std::collections::BTreeMap<String, u64> =
                parse_report_csv(&String::from_utf8_lossy(&report.stdout))
                    .into_iter()
                    .map(|r| (r.function, r.calls))
                    .collect();
            let info = String::from_utf8_lossy(&run_ok(hookprof().arg("info").arg(&trace)).stdout)
                .into_owned();
            if name == "threshold" {
                let expected: std::collections::BTreeMap<String, u64> =
                    CALLS_C.iter().map(|(f, c)| (f.to_string(), *c)).collect();
                assert_eq!(counts, expected, "{what}");
                let kept: u64 = info
                    .lines()
                    .find_map(|l| {
                        l.strip_prefix("records:           4348 in the trees (every call), ")
                    })
                    .and_then(|l| l.split(' ').next())
                    .and_then(|n| n.parse().ok())
                    .unwrap_or_else(|| panic!("{what}: no records line:\n{info}"));
                assert!(kept < 200, "{what}: {kept} records kept:\n{info}");
                assert!(info.contains("calls under"), "{what}:\n{info}");
            } else {
                let expected: std::collections::BTreeMap<String, u64> =
                    [("apply", 50), ("twice", 25), ("negate", 25)]
                        .iter()
                        .map(|(f, c)| (f.to_string(), *c))
                        .collect();
                assert_eq!(counts, expected, "{what}");
                assert!(info.contains("records:           200"), "{what}:\n{info}");
            }
        }
    }
}

/// The EVENTS chunks of each thread in a trace file (a little-endian one, as the bare-metal
/// runtime writes on these boards): walked chunk by chunk from the header.
fn events_chunks_per_thread(trace: &[u8]) -> std::collections::BTreeMap<u64, u64> {
    let u32_at = |at: usize| u32::from_le_bytes(trace[at..at + 4].try_into().unwrap());
    let mut chunks = std::collections::BTreeMap::new();
    let mut at = 64;
    while at < trace.len() {
        assert!(at + 16 <= trace.len(), "chunk header cut at byte {at}");
        let (kind, length) = (u32_at(at), u32_at(at + 4) as usize);
        let thread = u64::from_le_bytes(trace[at + 8..at + 16].try_into().unwrap());
        if kind == 3 {
            *chunks.entry(thread).or_insert(0) += 1;
        }
        at += 16 + length;
    }
    assert_eq!(at, trace.len(), "the last chunk runs past the end");
    chunks
}

/// FreeRTOS-Kernel V11.2.0 (fetched from crates.io by scripts/freertos-kernel.sh) on the
/// Cortex-M3 board (port GCC/ARM_CM3, the tick from timer 0) and the RV32 board (port
/// GCC/RISC-V, the tick from the CLINT): examples/baremetal/freertos's application (four tasks
/// of its own, a queue, a software timer) and the kernel, all compiled by hookcc with the
/// native trace, end the run with exit() from a task. <hookcc/freertos.h> makes every
/// task a thread of the trace: each task's calls counted by the report equal the program's own
/// counters (checksum() is called by all four, each counting its own), every thread's entries
/// and exits match, the tick's calls of xTaskIncrementTick equal the kernel's tick count, and the trace's
/// switches (EVENTS chunks of the tasks) equal the kernel's count of traceTASK_SWITCHED_IN.
#[test]
fn freertos_tasks_each_a_thread_of_the_native_trace_with_the_apps_counts() {
    if !have_tools() {
        return;
    }
    for board in ["cortex-m3", "cortex-m4f", "riscv32"] {
        freertos_trace_on(board);
    }
}

/// Issue 37, item 12: the same application ending with exit() while interrupts are on (as a
/// user's application does; rtos_app.c's EXIT_INTERRUPTS_ON): the tick's records and task
/// switches that came while hookcc_trace_finish wrote the THREAD chunks after the records, and
/// while the trace was written out, landed on them: the tasks' names were gone ("tid 2") and
/// hookprof could not read the chunks there. The finish takes those slots from the hooks now.
#[test]
fn freertos_ending_with_interrupts_on_keeps_its_task_names_and_chunks() {
    if !have_tools() {
        return;
    }
    for board in ["cortex-m3", "cortex-m4f", "riscv32"] {
        let what = format!("freertos BOARD={board} EXIT_INTERRUPTS_ON");
        let dir = tempfile::tempdir().unwrap();
        let project = copy_baremetal_example(dir.path(), "freertos");
        let hookcc_flags = format!("HOOKCC_FLAGS=--trace {SOURCE_PLACEMENT}");
        let board_variable = format!("BOARD={board}");
        let out = make_run(
            &project,
            &[
                "HOOKS=trace",
                hookcc_flags.as_str(),
                board_variable.as_str(),
                "EXIT_INTERRUPTS_ON=1",
            ],
        );
        assert!(
            out.status.success(),
            "{what}: make run failed with {}\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let trace = project.join("firmware.hktrace");
        let info = run_ok(hookprof().arg("info").arg(&trace));
        let info = String::from_utf8_lossy(&info.stdout);
        let mut names: Vec<String> = Vec::new();
        for line in info.lines().map(str::trim).filter(|l| l.starts_with('#')) {
            names.push(line.split('"').nth(1).unwrap_or(line).to_string());
            assert!(
                line.contains("unmatched entries 0, unmatched exits 0"),
                "{what}: {line}"
            );
        }
        names.sort_unstable();
        let mut expected = ["main", "producer", "consumer", "worker", "IDLE", "Tmr Svc"];
        expected.sort_unstable();
        assert_eq!(names, expected, "{what}: threads\n{info}");
        assert!(info.contains("\nlost:              0\n"), "{what}:\n{info}");
        let elf = project.join("firmware.elf");
        let report = run_ok(
            hookprof()
                .arg("report")
                .arg(&trace)
                .arg("--exe")
                .arg(&elf)
                .arg("--per-thread")
                .arg("--format=csv"),
        );
        let stderr = String::from_utf8_lossy(&report.stderr);
        assert!(
            stderr.is_empty(),
            "{what}: hookprof report warned:\n{stderr}"
        );
    }
}

/// What examples/baremetal/freertos/rtos_app.c prints of itself: "total X ticks T switches S",
/// "tick calls C", "pause wall W", then "count TASK FUNCTION N" for each of its functions and
/// tasks.
struct FreertosApp {
    /// (task, function) -> calls.
    counts: std::collections::BTreeMap<(String, String), u64>,
    ticks: u64,
    /// The kernel's own count of xTaskIncrementTick's calls: a tick that comes while the
    /// scheduler is suspended is a call then and another when xTaskResumeAll replays it.
    tick_calls: u64,
    switches: u64,
    /// The shortest pause_a_tick() in wall time, in the profilers' ticks.
    pause_wall: u64,
}

impl FreertosApp {
    fn read(what: &str, stdout: &str) -> FreertosApp {
        let mut counts = std::collections::BTreeMap::new();
        let (mut ticks, mut switches, mut pause_wall, mut tick_calls) = (None, None, None, None);
        for line in stdout.lines() {
            if let Some(rest) = line.strip_prefix("count ") {
                let mut fields = rest.rsplitn(3, ' ');
                let calls: u64 = fields.next().unwrap().parse().expect(line);
                let function = fields.next().expect(line).to_string();
                let task = fields.next().expect(line).to_string();
                counts.insert((task, function), calls);
            } else if line.starts_with("total ") {
                let fields: Vec<&str> = line.split(' ').collect();
                ticks = Some(fields[3].parse::<u64>().expect(line));
                switches = Some(fields[5].parse::<u64>().expect(line));
            } else if let Some(calls) = line.strip_prefix("tick calls ") {
                tick_calls = Some(calls.parse::<u64>().expect(line));
            } else if let Some(wall) = line.strip_prefix("pause wall ") {
                pause_wall = Some(wall.parse::<u64>().expect(line));
            }
        }
        let app = FreertosApp {
            counts,
            ticks: ticks.unwrap_or_else(|| panic!("{what}: no totals in\n{stdout}")),
            switches: switches.unwrap(),
            tick_calls: tick_calls.unwrap_or_else(|| panic!("{what}: no tick calls in\n{stdout}")),
            pause_wall: pause_wall.unwrap_or_else(|| panic!("{what}: no pause in\n{stdout}")),
        };
        assert_eq!(
            app.counts.len(),
            9,
            "{what}: the program's counts:\n{stdout}"
        );
        assert!(app.ticks >= 20, "{what}: only {} ticks", app.ticks);
        app
    }

    /// Calls of `function` in all tasks.
    fn calls(&self, function: &str) -> u64 {
        self.counts
            .iter()
            .filter(|((_, f), _)| f == function)
            .map(|(_, n)| n)
            .sum()
    }
}

fn freertos_trace_on(board: &str) {
    let what = format!("freertos BOARD={board} rtos_app.c --trace");
    let dir = tempfile::tempdir().unwrap();
    let project = copy_baremetal_example(dir.path(), "freertos");
    let hookcc_flags = format!("HOOKCC_FLAGS=--trace {SOURCE_PLACEMENT}");
    let board_variable = format!("BOARD={board}");
    let out = make_run(
        &project,
        &[
            "HOOKS=trace",
            hookcc_flags.as_str(),
            board_variable.as_str(),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{what}: make run failed with {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );

    let FreertosApp {
        counts: app_counts,
        tick_calls,
        switches,
        ..
    } = FreertosApp::read(&what, &stdout);

    let trace = project.join("firmware.hktrace");
    let elf = project.join("firmware.elf");
    let (names, rows) = per_task_report(&what, &trace, &elf);
    let expected_threads = ["main", "producer", "consumer", "worker", "IDLE", "Tmr Svc"];
    let mut seen: Vec<&str> = names.values().map(String::as_str).collect();
    seen.sort_unstable();
    let mut expected_sorted = expected_threads.to_vec();
    expected_sorted.sort_unstable();
    assert_eq!(seen, expected_sorted, "{what}: threads {names:?}");

    let mut traced = std::collections::BTreeMap::new();
    let mut ticks_traced = 0;
    for row in &rows {
        let thread = row.thread.as_ref().expect("a thread column");
        let name = names
            .get(thread)
            .unwrap_or_else(|| panic!("{what}: thread {thread} of the report has no name"));
        if row.function == "xTaskIncrementTick" {
            ticks_traced += row.calls;
        }
        if app_counts.contains_key(&(name.clone(), row.function.clone())) {
            traced.insert((name.clone(), row.function.clone()), row.calls);
        }
    }
    assert_eq!(
        traced, app_counts,
        "{what}: calls per task, traced vs counted"
    );
    assert_eq!(
        ticks_traced, tick_calls,
        "{what}: xTaskIncrementTick's calls, traced vs the kernel's count"
    );

    let chunks = events_chunks_per_thread(&std::fs::read(&trace).unwrap());
    let task_chunks: u64 = chunks
        .iter()
        .filter(|(t, _)| **t >= 2)
        .map(|(_, n)| n)
        .sum();
    assert_eq!(
        task_chunks, switches,
        "{what}: task switches, traced vs the kernel's"
    );
}

/// The same FreeRTOS application with each of the other runtimes, on both boards, every task
/// given its own profile by <hookcc/freertos.h>'s switch macros:
/// - NITRO function cost (inclusive statistics): each function's calls, summed over the tasks'
///   buffers, equal the program's counters, and pause_a_tick() (vTaskDelay(1)) costs less than a
///   tenth of the tick it spends switched out, which the program measured in wall time;
/// - NITRO call trace: the consumer's stack, dumped in its last consume(), holds its own frame
///   and no other task's;
/// - TI hooks, dumped by gdb at hookcc_ti_done: every task by the symbol of its control block,
///   each task's calls of each function equal the program's counters, no exit without its entry;
/// - TI profile points: the region around each pause_a_tick() is measured without the time
///   the producer is switched out.
#[test]
fn freertos_tasks_in_the_nitro_ti_and_pfp_runtimes() {
    if !have_tools() {
        return;
    }
    let gdb = runs("gdb-multiarch");
    assert!(
        gdb || !in_ci(),
        "CI must have gdb-multiarch (scripts/setup.sh)"
    );
    let functions = [
        "produce",
        "consume",
        "work",
        "on_timer",
        "pause_a_tick",
        "checksum",
    ];
    for board in ["cortex-m3", "cortex-m4f", "riscv32"] {
        let board_variable = format!("BOARD={board}");
        let dir = tempfile::tempdir().unwrap();
        let project = copy_baremetal_example(dir.path(), "freertos");
        let run = |target: &str, variables: &[&str], what: &str| {
            let mut all = vec![board_variable.as_str()];
            all.extend_from_slice(variables);
            let clean = make_baremetal(&project, "clean", &all);
            assert!(clean.status.success(), "{what}: make clean failed");
            let out = make_baremetal(&project, target, &all);
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(
                out.status.success(),
                "{what}: make {target} failed with {}\n{stdout}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
            let app = FreertosApp::read(what, &stdout);
            (stdout, app)
        };

        // NITRO function cost: "name: count N, cost C" per function.
        let what = format!("freertos {board} FUNCTIONCOST");
        let (stdout, app) = run(
            "run",
            &["NITRO_PROFILE=TRUE", "NITRO_PROFILE_TYPE=FUNCTIONCOST"],
            &what,
        );
        let statistics: std::collections::BTreeMap<&str, (u64, u64)> = stdout
            .lines()
            .filter_map(|l| {
                let (name, rest) = l.split_once(": count ")?;
                let (count, cost) = rest.split_once(", cost ")?;
                Some((name, (count.parse().ok()?, cost.parse().ok()?)))
            })
            .collect();
        for function in functions {
            let (count, _) = statistics
                .get(function)
                .unwrap_or_else(|| panic!("{what}: no line for {function}:\n{stdout}"));
            assert_eq!(*count, app.calls(function), "{what}: calls of {function}");
        }
        let (pauses, pause_cost) = statistics["pause_a_tick"];
        assert!(
            pause_cost > 0 && pause_cost / pauses < app.pause_wall / 10,
            "{what}: pause_a_tick costs {} a call, the tick it waits {} (switched-out time \
             not left out)",
            pause_cost / pauses,
            app.pause_wall
        );

        // NITRO call trace: the dump's frames ("NAME: lr=…"; the first line is the dump's own).
        let what = format!("freertos {board} CALLTRACE");
        let (stdout, _) = run(
            "run",
            &["NITRO_PROFILE=TRUE", "NITRO_PROFILE_TYPE=CALLTRACE"],
            &what,
        );
        let frames: Vec<&str> = stdout
            .lines()
            .filter(|l| l.contains(": lr="))
            .map(|l| l.split(':').next().unwrap())
            .collect();
        assert_eq!(
            frames,
            ["OS_DumpCallTrace", "consume"],
            "{what}: the consumer's stack\n{stdout}"
        );

        // TI profile points: "ID: 01, n=N, C=…, Cmin=…, Cmax=M, …".
        let what = format!("freertos {board} PFP");
        let (stdout, app) = run("run", &["HOOKS=pfp"], &what);
        let point = |id: &str| -> (u64, u64) {
            let line = stdout
                .lines()
                .find(|l| l.starts_with(&format!("ID: {id}, ")))
                .unwrap_or_else(|| panic!("{what}: no point {id}:\n{stdout}"));
            let field = |name: &str| -> u64 {
                line.split(", ")
                    .find_map(|f| f.strip_prefix(name))
                    .unwrap_or_else(|| panic!("{what}: {line}"))
                    .parse()
                    .unwrap()
            };
            (field("n="), field("Cmax="))
        };
        let (n, longest) = point("01");
        assert_eq!(n, app.calls("pause_a_tick"), "{what}: pauses measured");
        assert!(
            longest < app.pause_wall / 10,
            "{what}: the longest pause measured {longest}, the tick waited {}",
            app.pause_wall
        );
        assert_eq!(point("02").0, app.calls("work"), "{what}: work measured");

        // TI hooks, the buffer dumped by gdb.
        if !gdb {
            eprintln!("skipping FreeRTOS with the TI runtime: gdb-multiarch missing");
            continue;
        }
        let what = format!("freertos {board} TI");
        let (stdout, app) = run("ti-dump", &["HOOKS=ti"], &what);
        assert!(
            stdout.contains("\ndropped=0\n"),
            "{what}: records dropped\n{stdout}"
        );
        let prefix = project.join("ti");
        let status = run_ok(
            hookprof()
                .arg("ti")
                .arg(project.join("ti.bin"))
                .arg("--exe")
                .arg(project.join("firmware.elf"))
                .arg("--all-symbols") // the kernel's static control blocks of idle and timer
                .arg("--out")
                .arg(&prefix),
        );
        let status = String::from_utf8_lossy(&status.stdout).into_owned();
        // main, the three tasks, idle and the timer service.
        for expected in ["Tasks found: 6", "Exit records without enter: 0"] {
            assert!(
                status.contains(expected),
                "{what}: {expected:?} not in\n{status}"
            );
        }
        let call_list =
            std::fs::read_to_string(format!("{}_call_list.csv", prefix.display())).unwrap();
        let mut traced = std::collections::BTreeMap::new();
        for (function, task, ..) in ti_calls(&call_list) {
            *traced.entry((task, function)).or_insert(0u64) += 1;
        }
        for ((task, function), calls) in &app.counts {
            let symbol = match task.as_str() {
                "Tmr Svc" => "vApplicationGetTimerTaskMemory.xTimerTaskTCB".to_string(),
                task => format!("{task}_task"),
            };
            assert_eq!(
                traced.get(&(symbol.clone(), function.clone())),
                Some(calls),
                "{what}: calls of {function} in {symbol}"
            );
        }
    }
}

/// The bare-metal trace runtime's task switches, driven by hand on the host
/// (tests/programs/baremetal_tasks.c compiled with runtime/src/trace_baremetal.c by clang-19):
/// each task's calls in its own thread, named; the 16 tasks the runtime names, a name cut to 15
/// bytes, later tasks in one shared thread; hookcc_trace_finish called again continues where
/// it stopped; a full buffer keeps what fits, switches included, and counts the rest as lost.
#[test]
fn bare_metal_trace_task_switches_become_threads_on_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = workspace_root().join("runtime");
    // Buffer records, then for each file: calls by (thread name, function), the lost line.
    type Expected = (&'static [(&'static str, &'static str, u64)], &'static str);
    let cases: [(u32, [Expected; 2]); 2] = [
        (
            256,
            [
                (
                    &[
                        ("main", "main_fn", 1),
                        ("a_task_name_lon", "fa", 1),
                        ("t1", "fb", 1),
                        ("other tasks", "fc", 2),
                    ],
                    "lost:              0",
                ),
                (
                    &[
                        ("main", "main_fn", 1),
                        ("a_task_name_lon", "fa", 1),
                        ("t1", "fb", 3),
                        ("other tasks", "fc", 2),
                    ],
                    "lost:              0",
                ),
            ],
        ),
        (
            // main_fn's entry, a switch, fa's entry, a switch, fb: then full.
            6,
            [
                (
                    &[
                        ("main", "main_fn", 1),
                        ("a_task_name_lon", "fa", 1),
                        ("t1", "fb", 1),
                    ],
                    "lost:              8",
                ),
                (
                    &[
                        ("main", "main_fn", 1),
                        ("a_task_name_lon", "fa", 1),
                        ("t1", "fb", 1),
                    ],
                    "lost:              13",
                ),
            ],
        ),
    ];
    for (records, parts) in cases {
        let exe = dir.path().join(format!("tasks{records}"));
        run_ok(
            Command::new("clang-19")
                .args(["-O1", "-g", "-no-pie", &format!("-DRECORDS={records}")])
                .arg("-I")
                .arg(runtime.join("include"))
                .arg("-I")
                .arg(runtime.join("src"))
                .arg("-o")
                .arg(&exe)
                .arg(program_source("baremetal_tasks.c"))
                .arg(runtime.join("src/trace_baremetal.c")),
        );
        let files = [
            dir.path().join(format!("{records}-1.hktrace")),
            dir.path().join(format!("{records}-2.hktrace")),
        ];
        run_ok(Command::new(&exe).args(&files));
        for (file, (expected, lost)) in files.iter().zip(parts) {
            let what = format!("{records} records, {}", file.display());
            let info = run_ok(hookprof().arg("info").arg(file));
            let info = String::from_utf8_lossy(&info.stdout);
            assert!(
                info.contains(&format!("{lost}\n")),
                "{what}: {lost}?\n{info}"
            );
            let mut names = std::collections::BTreeMap::new();
            for line in info.lines().map(str::trim).filter(|l| l.starts_with('#')) {
                let sequence = line[1..line.find(' ').unwrap()].to_string();
                names.insert(sequence, line.split('"').nth(1).expect(line).to_string());
                assert!(
                    line.contains("unmatched entries 0, unmatched exits 0"),
                    "{what}: {line}"
                );
            }
            let report = run_ok(
                hookprof()
                    .arg("report")
                    .arg(file)
                    .arg("--exe")
                    .arg(&exe)
                    .arg("--per-thread")
                    .arg("--format=csv"),
            );
            // thread,function,calls,… (in ticks: the host's counter has no rate here)
            let csv = String::from_utf8_lossy(&report.stdout);
            let mut calls: Vec<(String, String, u64)> = csv
                .lines()
                .skip(1)
                .map(|line| {
                    let fields: Vec<&str> = line.split(',').collect();
                    let name = names
                        .get(fields[0])
                        .unwrap_or_else(|| panic!("{what}: {line}"));
                    (
                        name.clone(),
                        fields[1].to_string(),
                        fields[2].parse().unwrap(),
                    )
                })
                .collect();
            calls.sort();
            let mut expected: Vec<(String, String, u64)> = expected
                .iter()
                .map(|(t, f, n)| (t.to_string(), f.to_string(), *n))
                .collect();
            expected.sort();
            assert_eq!(calls, expected, "{what}");
        }
    }
}

/// What a streamed run printed: the firmware's numbers (examples/baremetal/freertos/
/// stream_app.c) and hookprof record's summary line.
#[derive(Debug, Default)]
struct StreamedRun {
    ticks: u64,
    switches: u64,
    counts: std::collections::BTreeMap<String, u64>,
    /// The runtime's own counts: records made, records dropped.
    made: u64,
    dropped: u64,
    /// hookprof record's: calls' records, task switches, tasks created, lost, places.
    calls: u64,
    traced_switches: u64,
    created: u64,
    lost: u64,
    places: u64,
    polls: u64,
    record_line: String,
}

fn number_before(line: &str, word: &str) -> u64 {
    let at = line
        .find(word)
        .unwrap_or_else(|| panic!("no `{word}` in: {line}"));
    let head = line[..at].trim_end();
    let digits = head.rsplit([' ', '(']).next().unwrap();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no number before `{word}` in: {line}"))
}

/// `make stream HOOKS=stream APP=stream_app.c VARIABLES…` in a copy of
/// examples/baremetal/freertos (the Cortex-M3 board unless BOARD= is among them): qemu waits for hookprof record --gdb, which reads
/// the RTT ring until the firmware exits. Returns what it printed, and the project.
fn stream_run(what: &str, dir: &Path, variables: &[&str]) -> (StreamedRun, PathBuf) {
    let project = copy_baremetal_example(dir, "freertos");
    let port = format!("GDB_PORT={}", free_port());
    let hookprof_bin = format!("HOOKPROF={}", target_dir().join("hookprof").display());
    let mut all = vec![
        "HOOKS=stream",
        "APP=stream_app.c",
        "ICOUNT=-icount shift=0,sleep=off",
        port.as_str(),
        hookprof_bin.as_str(),
    ];
    all.extend_from_slice(variables);
    let out = make_baremetal(&project, "stream", &all);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.success(),
        "{what}: make stream failed with {}\n{stdout}\n{stderr}",
        out.status
    );
    let mut run = StreamedRun::default();
    for line in stdout.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        match fields.as_slice() {
            ["ticks", t, "switches", s] => {
                run.ticks = t.parse().unwrap();
                run.switches = s.parse().unwrap();
            }
            ["count", f, n] => {
                run.counts.insert(f.to_string(), n.parse().unwrap());
            }
            ["stream", "records", r, "lost", l] => {
                run.made = r.parse().unwrap();
                run.dropped = l.parse().unwrap();
            }
            _ => {}
        }
    }
    let line = stderr
        .lines()
        .find(|l| l.starts_with("hookprof record: "))
        .unwrap_or_else(|| panic!("{what}: no summary from hookprof record\n{stderr}"));
    run.calls = number_before(line, "calls' records");
    run.traced_switches = number_before(line, "task switches");
    run.created = number_before(line, "tasks created");
    run.lost = number_before(line, "lost (");
    run.places = number_before(line, "places)");
    run.polls = number_before(line, "polls");
    run.record_line = line.to_string();
    assert!(
        run.made > 0 && run.counts.len() == 4,
        "{what}: the firmware's numbers\n{stdout}"
    );
    assert!(
        !line.contains("do not add up") && !line.contains("no end record"),
        "{what}: {line}"
    );
    (run, project)
}

/// The calls of each function in the whole trace (hookprof report's CSV), and the thread
/// names by sequence number (hookprof info), with every thread's unmatched counts.
fn stream_report(what: &str, project: &Path) -> (std::collections::BTreeMap<String, u64>, String) {
    let trace = project.join("firmware.hktrace");
    let elf = project.join("firmware.elf");
    let report = run_ok(
        hookprof()
            .arg("report")
            .arg(&trace)
            .arg("--exe")
            .arg(&elf)
            .arg("--format=csv"),
    );
    let mut calls = std::collections::BTreeMap::new();
    for row in parse_report_csv(&String::from_utf8_lossy(&report.stdout)) {
        calls.insert(row.function.clone(), row.calls);
    }
    let info = run_ok(hookprof().arg("info").arg(&trace));
    let info = String::from_utf8_lossy(&info.stdout).into_owned();
    assert!(info.contains("complete:          yes"), "{what}:\n{info}");
    (calls, info)
}

/// Streaming while the firmware runs (docs/baremetal.md, "Streaming"): FreeRTOS
/// (examples/baremetal/freertos/stream_app.c: three tasks and a queue) on the Cortex-M3, the
/// Cortex-M4F and the RV32 boards for 60 s of target time (the kernel's 60 000 ticks; qemu's -icount sleep=off lets the idle time pass
/// at once, so it takes seconds), the hooks writing into a SEGGER RTT up-buffer that hookprof
/// record --gdb drains through qemu's gdb stub while it runs. Nothing is lost: every record the
/// runtime made is in the trace (calls, task switches, creations), the calls of each function
/// equal the program's own counters, the task switches the kernel's count, each task's
/// entries and exits match, and the records take under 3 bytes each.
#[test]
fn freertos_streamed_over_gdb_for_60_seconds_every_record_there() {
    if !have_tools() {
        return;
    }
    for board in ["cortex-m3", "cortex-m4f", "riscv32"] {
        freertos_streamed_on(board);
    }
}

fn freertos_streamed_on(board: &str) {
    let what = &format!("stream_app.c on {board} over --gdb");
    let dir = tempfile::tempdir().unwrap();
    // A ring of 128 KiB: the reader halts and reads it every 10 ms of wall time, in which qemu
    // runs up to about 8 KiB of records here on an idle machine; a loaded machine may be
    // several times slower to come back. Since the Cortex-M3 board's tick counts the periods
    // qemu's late interrupts leave out (rtos_board.c), the 60 000 ticks take 3.1 s of wall time
    // instead of 4.0 (half the wake-ups from WFI), and the fullest poll alone was 28 KB, not
    // 20.5: 64 KiB overflowed in two of four runs beside the other tests (load 6 on 2 cores).
    let board_variable = format!("BOARD={board}");
    let (run, project) = stream_run(
        what,
        dir.path(),
        &["STREAM_BYTES=131072", board_variable.as_str()],
    );
    assert!(run.ticks >= 60_000, "{what}: {} ticks", run.ticks);
    assert_eq!(
        (run.lost, run.dropped),
        (0, 0),
        "{what}: {}",
        run.record_line
    );
    assert_eq!(
        run.calls + run.traced_switches + run.created,
        run.made,
        "{what}: records in the trace vs the runtime's count: {}",
        run.record_line
    );
    assert_eq!(run.traced_switches, run.switches, "{what}: task switches");
    let (calls, info) = stream_report(what, &project);
    for (function, count) in &run.counts {
        assert_eq!(
            calls.get(function),
            Some(count),
            "{what}: calls of {function}, traced vs counted"
        );
    }
    for line in info.lines().map(str::trim).filter(|l| l.starts_with('#')) {
        assert!(
            line.contains("unmatched entries 0, unmatched exits 0"),
            "{what}: {line}"
        );
    }
    for task in ["producer", "consumer", "worker", "IDLE"] {
        assert!(
            info.contains(&format!("\"{task}\"")),
            "{what}: {task}?\n{info}"
        );
    }
    let bytes = number_before(&run.record_line, "bytes,");
    let per_record = bytes as f64 / run.made as f64;
    assert!(
        per_record < 3.0,
        "{what}: {per_record:.2} bytes per record ({bytes} bytes)"
    );
}

/// A reader too slow for its ring (64 bytes, read every 50 ms): the runtime drops records and
/// says so. What the trace holds plus what it says was lost is what the runtime made; the
/// LOST chunks carry the runtime's whole count, each at its place (its time after every record
/// before it, before every record after it); every view shows them there (a timeline instant
/// event per place, a replay line, the report's summary).
#[test]
fn a_slow_stream_reader_sees_every_loss_where_it_happened() {
    if !have_tools() {
        return;
    }
    let what = "stream_app.c SECONDS=3, a 128-byte ring read every 50 ms";
    let dir = tempfile::tempdir().unwrap();
    let (run, project) = stream_run(
        what,
        dir.path(),
        &[
            "STREAM_BYTES=128",
            "CFLAGS=-O1 -g -DSECONDS=3",
            "RECORD_FLAGS=--poll-interval 50ms",
        ],
    );
    assert!(
        run.dropped > 0 && run.places > 0,
        "{what}: {}",
        run.record_line
    );
    assert_eq!(run.lost, run.dropped, "{what}: {}", run.record_line);
    assert_eq!(
        run.calls + run.traced_switches + run.created + run.lost,
        run.made,
        "{what}: kept + lost vs made: {}",
        run.record_line
    );
    assert!(run.places <= run.polls, "{what}: {}", run.record_line);

    // The places: LOST chunks in stream order between the records.
    let trace = project.join("firmware.hktrace");
    let bytes = std::fs::read(&trace).unwrap();
    let parsed = hookprof::input::format::Trace::new(&bytes).unwrap();
    let (mut last, mut markers, mut in_chunks) = (0u64, 0u64, 0u64);
    for chunk in parsed.chunks() {
        match chunk.unwrap().chunk {
            hookprof::input::format::Chunk::Events(events) => {
                for r in events.iter() {
                    let r = r.unwrap();
                    assert!(
                        r.time >= last,
                        "{what}: a record at {} after {last}",
                        r.time
                    );
                    last = r.time;
                }
            }
            hookprof::input::format::Chunk::Lost { count, at } => {
                let at = at.expect("a stream's LOST chunk has its time");
                assert!(
                    at >= last,
                    "{what}: a loss at {at} after a record at {last}"
                );
                last = at;
                in_chunks += count;
                markers += u64::from(count > 0);
            }
            _ => {}
        }
    }
    assert_eq!((in_chunks, markers), (run.lost, run.places), "{what}");

    let elf = project.join("firmware.elf");
    let timeline = dir.path().join("t.json");
    run_ok(
        hookprof()
            .arg("timeline")
            .arg(&trace)
            .arg("--exe")
            .arg(&elf)
            .arg("-o")
            .arg(&timeline),
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&timeline).unwrap()).unwrap();
    let instants: u64 = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "i" && e["cat"] == "lost")
        .map(|e| e["args"]["lost"].as_u64().unwrap())
        .sum();
    assert_eq!(instants, run.lost, "{what}: the timeline's lost instants");
    let pftrace = dir.path().join("t.pftrace");
    run_ok(
        hookprof()
            .arg("timeline")
            .arg(&trace)
            .arg("--exe")
            .arg(&elf)
            .arg("-o")
            .arg(&pftrace),
    );
    let protobuf = std::fs::read(&pftrace).unwrap();
    let named = protobuf
        .windows(b"lost ".len())
        .filter(|w| w == b"lost ")
        .count() as u64;
    assert_eq!(named, run.places, "{what}: Perfetto's lost instants");
    let replay = run_ok(hookprof().arg("replay").arg(&trace).arg("--exe").arg(&elf));
    let replayed = String::from_utf8_lossy(&replay.stdout);
    assert_eq!(
        replayed.matches("/* lost ").count() as u64,
        run.places,
        "{what}: replay's loss lines"
    );
    let report = run_ok(hookprof().arg("report").arg(&trace).arg("--exe").arg(&elf));
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(
        text.contains(&format!("the stream lost records at {} places", run.places)),
        "{what}: report\n{text}"
    );
}

/// The stream without a debugger: the firmware sends its ring through the Cortex-M3 board's
/// UART itself (stream_out.c's STREAM_UART, examples/baremetal/stream_calls.c: 2000 rounds of a
/// call tree, the ring pumped after each), which qemu writes to a file, read by hookprof record
/// --serial, or serves on a TCP socket, read by hookprof record --tcp (as from OpenOCD's or
/// J-Link's RTT server). Both traces hold every record the runtime made, the calls of each
/// function equal the program's counts, and the records take under 3 bytes each.
#[test]
fn a_firmware_streams_through_its_uart_read_by_serial_and_tcp() {
    if !have_tools() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let project = copy_baremetal_example(dir.path(), "cortex-m3");
    let elf = project.join("firmware.elf");
    let counts = |what: &str, stdout: &str| -> std::collections::BTreeMap<String, u64> {
        let counts: std::collections::BTreeMap<String, u64> = stdout
            .lines()
            .filter_map(|l| l.strip_prefix("count "))
            .map(|l| {
                let (f, n) = l.split_once(' ').unwrap();
                (f.to_string(), n.parse().unwrap())
            })
            .collect();
        assert_eq!(counts.len(), 3, "{what}: the program's counts\n{stdout}");
        counts
    };
    let check = |what: &str,
                 trace: &Path,
                 record: &Output,
                 expected: &std::collections::BTreeMap<String, u64>| {
        let stderr = String::from_utf8_lossy(&record.stderr);
        let line = stderr
            .lines()
            .find(|l| l.starts_with("hookprof record: "))
            .unwrap_or_else(|| panic!("{what}: {stderr}"));
        assert!(
            line.contains("end of stream")
                && line.contains("dropped 0;")
                && !line.contains("do not add up"),
            "{what}: {line}"
        );
        let bytes = number_before(line, "bytes,");
        let calls = number_before(line, "calls' records");
        assert!(
            (bytes as f64) < 3.0 * calls as f64,
            "{what}: {bytes} bytes for {calls} records"
        );
        let report = run_ok(
            hookprof()
                .arg("report")
                .arg(trace)
                .arg("--exe")
                .arg(&elf)
                .arg("--format=csv"),
        );
        let rows = parse_report_csv(&String::from_utf8_lossy(&report.stdout));
        for (function, n) in expected {
            let traced = rows
                .iter()
                .find(|r| &r.function == function)
                .map(|r| r.calls);
            assert_eq!(traced, Some(*n), "{what}: calls of {function}");
        }
    };

    // --serial: qemu writes the UART to a file.
    let what = "stream_calls.c through the UART, --serial";
    let out = make_run(
        &project,
        &[
            "HOOKS=stream",
            "APP=../stream_calls.c",
            "STREAM_UART=0x40004000",
            "SERIAL=file:uart.bin",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{what}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = counts(what, &stdout);
    let trace = dir.path().join("serial.hktrace");
    let record = run_ok(
        hookprof()
            .args(["record", "--serial"])
            .arg(project.join("uart.bin"))
            .arg("--exe")
            .arg(&elf)
            .arg("-o")
            .arg(&trace),
    );
    check(what, &trace, &record, &expected);

    // --tcp: qemu serves the UART on a socket and waits for the reader.
    let what = "stream_calls.c through the UART, --tcp";
    let port = free_port();
    let serial = format!("SERIAL=tcp:127.0.0.1:{port},server=on,wait=on");
    let firmware = {
        let project = project.clone();
        std::thread::spawn(move || {
            make_run(
                &project,
                &[
                    "HOOKS=stream",
                    "APP=../stream_calls.c",
                    "STREAM_UART=0x40004000",
                    serial.as_str(),
                ],
            )
        })
    };
    let trace = dir.path().join("tcp.hktrace");
    let record = run_ok(
        hookprof()
            .args(["record", "--tcp"])
            .arg(format!("127.0.0.1:{port}"))
            .arg("--exe")
            .arg(&elf)
            .arg("-o")
            .arg(&trace),
    );
    let out = firmware.join().unwrap();
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    check(what, &trace, &record, &expected);
}

/// The stream on every board (examples/baremetal/stream_calls.c, 40 000 records, read over
/// qemu's gdb stub by hookprof record --gdb): the ARM926 in ARM and Thumb code (the interrupt
/// mask in ARM state), the Cortex-M3 and RV32. Every record there, the calls of each function
/// equal the program's counts.
#[test]
fn plain_firmware_streamed_over_gdb_on_every_board() {
    if !have_tools() {
        return;
    }
    for board in BOARDS {
        let what = format!("stream_calls.c on {} {:?}", board.dir, board.variables);
        let dir = tempfile::tempdir().unwrap();
        let project = copy_baremetal_example(dir.path(), board.dir);
        let port = format!("GDB_PORT={}", free_port());
        let hookprof_bin = format!("HOOKPROF={}", target_dir().join("hookprof").display());
        let mut variables = vec![
            "HOOKS=stream",
            "APP=../stream_calls.c",
            port.as_str(),
            hookprof_bin.as_str(),
        ];
        variables.extend_from_slice(board.variables);
        let out = make_baremetal(&project, "stream", &variables);
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{what}: {stdout}\n{stderr}");
        let line = stderr
            .lines()
            .find(|l| l.starts_with("hookprof record: "))
            .unwrap_or_else(|| panic!("{what}: {stderr}"));
        assert!(
            line.contains("made 40002 records and dropped 0;")
                && number_before(line, "calls' records") == 40002,
            "{what}: {line}"
        );
        let report = run_ok(
            hookprof()
                .arg("report")
                .arg(project.join("firmware.hktrace"))
                .arg("--exe")
                .arg(project.join("firmware.elf"))
                .arg("--format=csv"),
        );
        let rows = parse_report_csv(&String::from_utf8_lossy(&report.stdout));
        for l in stdout.lines().filter_map(|l| l.strip_prefix("count ")) {
            let (function, n) = l.split_once(' ').unwrap();
            let traced = rows
                .iter()
                .find(|r| r.function == function)
                .map(|r| r.calls);
            assert_eq!(
                traced,
                Some(n.parse().unwrap()),
                "{what}: calls of {function}"
            );
        }
    }
}

/// Ctrl-C on hookprof record --gdb while the firmware runs (FreeRTOS stream_app.c, which would
/// run for minutes of wall time here: -icount without sleep=off): the trace is finished and
/// complete, every record read so far in it, its tasks named, and the target left running
/// (detached).
#[test]
fn ctrl_c_on_a_stream_reader_finishes_a_complete_trace() {
    if !have_tools() {
        return;
    }
    let what = "stream_app.c, hookprof record interrupted";
    let dir = tempfile::tempdir().unwrap();
    let project = copy_baremetal_example(dir.path(), "freertos");
    let out = make_baremetal(
        &project,
        "firmware.elf",
        &["HOOKS=stream", "APP=stream_app.c"],
    );
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let port = free_port();
    let mut qemu = Command::new("qemu-system-arm")
        .args([
            "-M",
            "mps2-an385",
            "-display",
            "none",
            "-monitor",
            "none",
            "-serial",
            "null",
        ])
        .args([
            "-semihosting-config",
            "enable=on,target=native",
            "-icount",
            "shift=0",
        ])
        .args(["-S", "-gdb", &format!("tcp:127.0.0.1:{port}"), "-kernel"])
        .arg(project.join("firmware.elf"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("qemu-system-arm");
    let trace = dir.path().join("interrupted.hktrace");
    let recorder = hookprof()
        .args(["record", "--gdb", &format!("127.0.0.1:{port}"), "--exe"])
        .arg(project.join("firmware.elf"))
        .arg("-o")
        .arg(&trace)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("hookprof record");
    std::thread::sleep(std::time::Duration::from_secs(2));
    run_ok(Command::new("kill").args(["-INT", &recorder.id().to_string()]));
    let record = recorder.wait_with_output().unwrap();
    let still_running = qemu.try_wait().unwrap().is_none();
    let _ = qemu.kill();
    let _ = qemu.wait();
    let stderr = String::from_utf8_lossy(&record.stderr);
    assert!(record.status.success(), "{what}: {stderr}");
    assert!(still_running, "{what}: the target stopped with the reader");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("hookprof record: "))
        .unwrap_or_else(|| panic!("{what}: {stderr}"));
    assert!(line.contains("interrupted"), "{what}: {line}");
    let calls = number_before(line, "calls' records");
    assert!(calls > 0, "{what}: {line}");
    let info = run_ok(hookprof().arg("info").arg(&trace));
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(
        info.contains("complete:          yes")
            && info.contains(&format!("records:           {calls}\n"))
            && info.contains("\"worker\""),
        "{what}:\n{info}"
    );
}

/// The stream's losses when task switches are among the records dropped, driven by hand on the
/// host (tests/programs/stream_tasks.c compiled with runtime/src/trace_baremetal.c by clang-19:
/// two tasks, "A" calling fa and "B" calling fb, a 128-byte ring drained only every seven
/// rounds): what the trace holds plus what it lost is what the runtime made, every call kept is
/// in its own task's thread (a LOST record says which task runs after dropped switches), and
/// no exit is unmatched (the frames open at a gap are closed there).
#[test]
fn stream_losses_with_task_switches_keep_each_call_in_its_task() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = workspace_root().join("runtime");
    let exe = dir.path().join("stream_tasks");
    run_ok(
        Command::new("clang-19")
            .args(["-O1", "-g", "-no-pie"])
            .arg("-I")
            .arg(runtime.join("include"))
            .arg("-I")
            .arg(runtime.join("src"))
            .arg("-o")
            .arg(&exe)
            .arg(program_source("stream_tasks.c"))
            .arg(runtime.join("src/trace_baremetal.c")),
    );
    let stream = dir.path().join("stream.bin");
    let out = run_ok(Command::new(&exe).arg(&stream));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let (mut made, mut dropped) = (0u64, 0u64);
    for line in stdout.lines() {
        if let Some(rest) = line.strip_prefix("stream records ") {
            let (m, d) = rest.split_once(" lost ").unwrap();
            (made, dropped) = (m.parse().unwrap(), d.parse().unwrap());
        }
    }
    assert!(dropped > 0, "the reader keeps up after all:\n{stdout}");
    let trace = dir.path().join("stream.hktrace");
    let record = run_ok(
        hookprof()
            .args(["record", "--serial"])
            .arg(&stream)
            .arg("--exe")
            .arg(&exe)
            .arg("-o")
            .arg(&trace),
    );
    let line = String::from_utf8_lossy(&record.stderr).into_owned();
    let kept = number_before(&line, "calls' records")
        + number_before(&line, "task switches")
        + number_before(&line, "tasks created");
    assert_eq!(kept + number_before(&line, "lost ("), made, "{line}");
    assert_eq!(number_before(&line, "lost ("), dropped, "{line}");
    let info = run_ok(hookprof().arg("info").arg(&trace));
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(info.contains("unmatched exits:   0\n"), "{info}");
    let mut names = std::collections::BTreeMap::new();
    for l in info.lines().map(str::trim).filter(|l| l.starts_with('#')) {
        names.insert(
            l[1..l.find(' ').unwrap()].to_string(),
            l.split('"').nth(1).unwrap().to_string(),
        );
    }
    let report = run_ok(
        hookprof()
            .arg("report")
            .arg(&trace)
            .arg("--exe")
            .arg(&exe)
            .arg("--per-thread")
            .arg("--format=csv"),
    );
    // thread,function,calls,… (in ticks: the host's counter has no rate here)
    let csv = String::from_utf8_lossy(&report.stdout);
    let mut seen = 0;
    for row in csv.lines().skip(1) {
        let fields: Vec<&str> = row.split(',').collect();
        let thread = &names[fields[0]];
        match fields[1] {
            "fa" => assert_eq!(thread, "A", "fa's calls"),
            "fb" => assert_eq!(thread, "B", "fb's calls"),
            _ => continue,
        }
        seen += 1;
    }
    assert_eq!(seen, 2, "fa and fb in the report:\n{csv}");
}

/// A real stream (examples/baremetal/stream_calls.c through the Cortex-M3 board's UART, written
/// by qemu to a file) and the firmware's ELF, in `dir`; `None` without the bare-metal tools.
fn uart_stream(dir: &Path) -> Option<(Vec<u8>, PathBuf)> {
    if !have_tools() {
        return None;
    }
    let project = copy_baremetal_example(dir, "cortex-m3");
    let out = make_run(
        &project,
        &[
            "HOOKS=stream",
            "APP=../stream_calls.c",
            "STREAM_UART=0x40004000",
            "SERIAL=file:uart.bin",
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stream = std::fs::read(project.join("uart.bin")).unwrap();
    assert!(stream.len() > 10_000, "{} bytes", stream.len());
    Some((stream, project.join("firmware.elf")))
}

/// `hookprof record ARGS… -o TRACE`, killed after `limit` (a hang is the failure).
fn record_within(args: &[&str], trace: &Path, limit: std::time::Duration) -> Output {
    let mut child = hookprof()
        .arg("record")
        .args(args)
        .arg("-o")
        .arg(trace)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "hookprof record {args:?} still ran after {limit:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// What a cut recording must leave: an error naming `cause`, and a trace that decodes, holds
/// the calls before the cut (at least `at_least`), ends its thread's chunks with a LOST mark
/// and is not marked complete (every report says so).
fn assert_cut_recording(what: &str, out: &Output, trace: &Path, cause: &str, at_least: u64) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{what}: {stderr}");
    assert!(
        stderr.contains(cause) && stderr.contains("the recording stopped there"),
        "{what}: {stderr}"
    );
    let bytes = std::fs::read(trace).unwrap();
    let parsed = hookprof::input::format::Trace::new(&bytes).unwrap();
    assert!(!parsed.header().is_complete(), "{what}: marked complete");
    let chunks: Vec<_> = parsed.chunks().map(|c| c.unwrap()).collect();
    let last_records = chunks
        .iter()
        .rposition(|c| matches!(c.chunk, hookprof::input::format::Chunk::Events(_)))
        .expect("records");
    assert!(
        chunks[last_records..].iter().any(|c| matches!(
            c.chunk,
            hookprof::input::format::Chunk::Lost { at: Some(_), .. }
        ) && c.thread == chunks[last_records].thread),
        "{what}: no LOST mark after the last records"
    );
    let report = run_ok(hookprof().arg("report").arg(trace).arg("--format=csv"));
    let calls: u64 = parse_report_csv(&String::from_utf8_lossy(&report.stdout))
        .iter()
        .map(|r| r.calls)
        .sum();
    assert!(calls >= at_least, "{what}: {calls} calls kept");
    assert!(
        String::from_utf8_lossy(&report.stderr).contains("the trace is incomplete"),
        "{what}"
    );
}

#[test]
fn a_stream_cut_by_a_reset_or_a_bad_byte_keeps_what_came_before_with_a_lost_mark() {
    // Before (issue 37 item 6): a TCP reset or one bad byte ended hookprof record with an error
    // and a trace without its tail's chunks, its header never written, and no LOST mark.
    let dir = tempfile::tempdir().unwrap();
    let Some((stream, elf)) = uart_stream(dir.path()) else {
        return;
    };
    let elf = elf.to_str().unwrap();
    let half = stream.len() / 2;

    // One bad byte run in the middle: a number wider than 64 bits.
    let bad = dir.path().join("bad.bin");
    let mut damaged = stream[..half].to_vec();
    damaged.extend_from_slice(&[0xff; 16]);
    damaged.extend_from_slice(&stream[half..]);
    std::fs::write(&bad, &damaged).unwrap();
    let trace = dir.path().join("bad.hktrace");
    let out = record_within(
        &["--serial", bad.to_str().unwrap(), "--exe", elf],
        &trace,
        std::time::Duration::from_secs(60),
    );
    // Each of the 3 functions' calls takes about 2 to 3 bytes a record, 2 records a call.
    let before = half as u64 / 8;
    assert_cut_recording("a bad byte", &out, &trace, "stream byte", before);

    // A TCP connection reset half way (python's socket with SO_LINGER 0: an RST at close).
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let first = dir.path().join("first-half.bin");
    std::fs::write(&first, &stream[..half]).unwrap();
    let server = Command::new("python3")
        .arg("-c")
        .arg(
            "import socket, struct, sys, time\n\
             s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n\
             s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(1)\n\
             c, _ = s.accept(); c.sendall(open(sys.argv[2], 'rb').read()); time.sleep(0.5)\n\
             c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, 0))\n\
             c.close()\n",
        )
        .arg(port.to_string())
        .arg(&first)
        .spawn()
        .unwrap();
    let trace = dir.path().join("reset.hktrace");
    let out = record_within(
        &["--tcp", &format!("127.0.0.1:{port}"), "--exe", elf],
        &trace,
        std::time::Duration::from_secs(60),
    );
    let mut server = server;
    let _ = server.wait();
    assert_cut_recording("a connection reset", &out, &trace, "reset", before);
}

/// How a fake GDB server misbehaves ([`fake_gdb_server`]).
#[derive(Clone, Copy, Debug)]
enum BadServer {
    /// Bytes that are no packet, without end, as fast as they go.
    Garbage,
    /// Bytes that are no packet, one every 50 ms: within every bound for minutes.
    SlowGarbage,
    /// Console output (`O…` packets) without end instead of a reply.
    Console,
    /// A packet that never ends.
    NoEnd,
    /// A well-behaved stub whose target's RTT control block says its up-buffer has
    /// 0xFFFFFFF0 bytes (WrOff below RdOff: a whole ring to read).
    LyingSize { control_block: u64, buffer: u64 },
}

/// A GDB server on a free port that behaves as `how` says; its port.
fn fake_gdb_server(how: BadServer) -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let Ok((mut c, _)) = listener.accept() else {
            return;
        };
        let packet = |payload: &str| {
            let sum = payload.bytes().fold(0u8, |a, b| a.wrapping_add(b));
            format!("${payload}#{sum:02x}")
        };
        let take = |c: &mut std::net::TcpStream| -> Option<String> {
            // The next packet's payload (a ^C as "\x03"), acknowledged.
            let mut byte = [0u8];
            loop {
                c.read_exact(&mut byte).ok()?;
                match byte[0] {
                    b'$' => break,
                    3 => return Some("\x03".to_string()),
                    _ => {}
                }
            }
            let mut payload = Vec::new();
            loop {
                c.read_exact(&mut byte).ok()?;
                if byte[0] == b'#' {
                    break;
                }
                payload.push(byte[0]);
            }
            let mut sum = [0u8; 2];
            c.read_exact(&mut sum).ok()?;
            c.write_all(b"+").ok()?;
            Some(String::from_utf8_lossy(&payload).into_owned())
        };
        match how {
            BadServer::Garbage => {
                let junk = vec![b'x'; 65536];
                while c.write_all(&junk).is_ok() {}
            }
            BadServer::SlowGarbage => {
                while c.write_all(b"x").is_ok() {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
            }
            BadServer::Console => {
                take(&mut c);
                let out = packet("O48656c6c6f0a").repeat(1000);
                while c.write_all(out.as_bytes()).is_ok() {}
            }
            BadServer::NoEnd => {
                take(&mut c);
                let _ = c.write_all(b"$");
                let junk = vec![b'a'; 65536];
                while c.write_all(&junk).is_ok() {}
            }
            BadServer::LyingSize {
                control_block,
                buffer,
            } => {
                let mut block = b"SEGGER RTT\0\0\0\0\0\0".to_vec();
                for word in [1u32, 0, 0, buffer as u32, 0xFFFF_FFF0, 0x10, 0x20, 0] {
                    block.extend_from_slice(&word.to_le_bytes());
                }
                while let Some(p) = take(&mut c) {
                    let reply = if p.starts_with("qSupported") {
                        packet("PacketSize=4000")
                    } else if p == "?" || p == "\x03" {
                        packet("S05")
                    } else if let Some(m) = p.strip_prefix('m') {
                        let (at, len) = m.split_once(',').unwrap();
                        let at = u64::from_str_radix(at, 16).unwrap();
                        let len = usize::from_str_radix(len, 16).unwrap();
                        let hex: String = (0..len)
                            .map(|i| {
                                let byte = at
                                    .checked_sub(control_block)
                                    .and_then(|o| block.get(o as usize + i))
                                    .copied()
                                    .unwrap_or(0);
                                format!("{byte:02x}")
                            })
                            .collect();
                        packet(&hex)
                    } else if p == "c" {
                        continue;
                    } else {
                        packet("OK")
                    };
                    if c.write_all(reply.as_bytes()).is_err() {
                        return;
                    }
                }
            }
        }
    });
    port
}

/// The address of `symbol` in `elf` (arm-none-eabi-nm).
fn symbol_address(elf: &Path, symbol: &str) -> u64 {
    let out = run_ok(Command::new("arm-none-eabi-nm").arg(elf));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.ends_with(&format!(" {symbol}")))
        .unwrap_or_else(|| panic!("no {symbol} in {}", elf.display()));
    u64::from_str_radix(line.split(' ').next().unwrap(), 16).unwrap()
}

#[test]
fn a_gdb_server_that_makes_no_sense_is_an_error_within_bounds() {
    // Before (issue 37 item 6): garbage, endless console output or a packet with no end kept
    // hookprof record --gdb reading forever, deaf to Ctrl-C (one case growing by 290 MB in
    // 30 s); a control block whose up-buffer "had" 0xFFFFFFF0 bytes was read at its word.
    let dir = tempfile::tempdir().unwrap();
    let Some((_, elf)) = uart_stream(dir.path()) else {
        return;
    };
    let trace = dir.path().join("gdb.hktrace");
    let limit = std::time::Duration::from_secs(20);
    for (how, expected) in [
        (BadServer::Garbage, "bytes that are not a GDB packet"),
        (BadServer::Console, "packets of console output"),
        (BadServer::NoEnd, "without its end"),
    ] {
        let port = fake_gdb_server(how);
        let out = record_within(
            &[
                "--gdb",
                &format!("127.0.0.1:{port}"),
                "--exe",
                elf.to_str().unwrap(),
            ],
            &trace,
            limit,
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{how:?}: {stderr}");
        assert!(
            stderr.contains(&format!("127.0.0.1:{port}")) && stderr.contains(expected),
            "{how:?}: {stderr}"
        );
    }

    // The up-buffer's size against the firmware's RAM.
    let control_block = symbol_address(&elf, "_SEGGER_RTT");
    let buffer = symbol_address(&elf, "hookcc_trace_stream_ring_");
    let port = fake_gdb_server(BadServer::LyingSize {
        control_block,
        buffer,
    });
    let out = record_within(
        &[
            "--gdb",
            &format!("127.0.0.1:{port}"),
            "--exe",
            elf.to_str().unwrap(),
        ],
        &trace,
        limit,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "says its up-buffer is 4294967280 bytes at {buffer:#x}, which is not in the RAM"
        )),
        "{stderr}"
    );

    // Ctrl-C while a server sends a byte of garbage every 50 ms: within bounds for an hour.
    let port = fake_gdb_server(BadServer::SlowGarbage);
    let mut child = hookprof()
        .args(["record", "--gdb", &format!("127.0.0.1:{port}"), "--exe"])
        .arg(&elf)
        .arg("-o")
        .arg(&trace)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_secs(1));
    run_ok(Command::new("kill").args(["-INT", &child.id().to_string()]));
    let sent = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if sent.elapsed() > std::time::Duration::from_secs(5) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("hookprof record --gdb did not stop on Ctrl-C");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("interrupted"), "{stderr}");
}

/// `hookprof top --serial` on the UART's stream (the path `top --gdb` and `--tcp` take too:
/// record's decoder, then the live profile): the file is read to its end, the view says so with
/// the firmware's own counts, and its rows have stream_calls.c's calls in their proportions
/// (`top` 2 000, `mid` 6 000, `leaf` 12 000 in the stream's one window).
#[test]
fn top_serial_shows_a_uart_streams_calls_and_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let Some((_, elf)) = uart_stream(dir.path()) else {
        return;
    };
    let out = hookprof()
        .args(["top", "--serial"])
        .arg(elf.with_file_name("uart.bin"))
        .arg("--exe")
        .arg(&elf)
        .args(["--interval", "100ms", "--iterations", "50"])
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = text
        .rsplit("\x1b[H\x1b[2J")
        .next()
        .unwrap()
        .replace('\r', "");
    assert!(
        last.contains("the stream ended (end of stream): ")
            && last.contains("the firmware made 40002 records and dropped 0")
            && last.contains(", lost 0 "),
        "{last}"
    );
    // calls a second: the fourth column (fixed widths: self% 6, then 10 each).
    let calls = |function: &str| -> f64 {
        last.lines()
            .find(|l| l.ends_with(&format!("  {function}")))
            .and_then(|l| l.get(29..39)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no row of {function}:\n{last}"))
    };
    let (top, mid, leaf) = (calls("top"), calls("mid"), calls("leaf"));
    assert!(
        top > 0.0 && (mid / top - 3.0).abs() < 0.01 && (leaf / top - 6.0).abs() < 0.01,
        "{last}"
    );
}
