//! `hookprof nitro` end to end: programs built with `hookcc -profile
//! --hook-runtime=calltrace|functioncost` print their own OS_DumpCallTrace / OS_DumpStatistics
//! and write the buffers to files (tests/programs/nitro_dump_*.c); `hookprof nitro` on those
//! files must print the same bytes. At -O0 and -O2, PIE and -no-pie, on the host and for
//! aarch64 under qemu-aarch64; also for 32-bit Arm (4-byte pointers), i686 and big-endian
//! s390x when their cross libc and qemu are installed (linked with ld.lld-19).

use std::path::{Path, PathBuf};
use std::process::Command;

use hookcc_tests::*;

/// A target to build for and how to run its programs.
struct Target {
    name: &'static str,
    flags: Vec<String>,
    runner: Vec<String>,
}

impl Target {
    fn host() -> Target {
        Target {
            name: "host",
            flags: Vec::new(),
            runner: Vec::new(),
        }
    }

    /// A cross target run under `qemu-<arch> -L /usr/<triple>`, if its sysroot, qemu and (with
    /// `lld`) ld.lld-19 are installed.
    fn cross(triple: &'static str, qemu: &str, lld: bool) -> Option<Target> {
        let sysroot = format!("/usr/{triple}");
        let runs = |tool: &str| {
            Command::new(tool)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        };
        let ok =
            Path::new(&sysroot).join("lib").is_dir() && runs(qemu) && (!lld || runs("ld.lld-19"));
        if !ok {
            eprintln!("skipping {triple}: {qemu}, {sysroot} or ld.lld-19 missing");
            return None;
        }
        let mut flags = vec![format!("--target={triple}")];
        if lld {
            flags.push("-fuse-ld=lld-19".to_string());
        }
        Some(Target {
            name: triple,
            flags,
            runner: vec![qemu.to_string(), "-L".to_string(), sysroot],
        })
    }

    fn command(&self, program: &Path) -> Command {
        match self.runner.split_first() {
            Some((first, rest)) => {
                let mut c = Command::new(first);
                c.args(rest).arg(program);
                c
            }
            None => Command::new(program),
        }
    }
}

fn build(dir: &Path, target: &Target, runtime: &str, source: &str, flags: &[&str]) -> PathBuf {
    let program = dir.join(format!("{runtime}{}", flags.join("")));
    run_ok(
        hookcc(dir, false)
            .args(["-profile", &format!("--hook-runtime={runtime}")])
            .args(&target.flags)
            .args(flags)
            .arg(program_source(source))
            .arg("-o")
            .arg(&program),
    );
    if flags.contains(&"-no-pie") {
        // ELF e_type (bytes 16-17, in the file's byte order: byte 5 is 2 for big-endian):
        // ET_EXEC = 2, not ET_DYN = 3.
        let elf = std::fs::read(&program).unwrap();
        let e_type = if elf[5] == 2 { elf[17] } else { elf[16] };
        assert_eq!(e_type, 2, "{}: -no-pie gave no ET_EXEC", program.display());
    }
    program
}

/// `hookprof nitro DUMP --exe ELF [extra]`: (stdout, stderr).
fn nitro(dump: &Path, exe: &Path, extra: &[&str]) -> (Vec<u8>, String) {
    let out = run_ok(
        hookprof()
            .arg("nitro")
            .arg(dump)
            .arg("--exe")
            .arg(exe)
            .args(extra),
    );
    (
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn read(path: PathBuf) -> Vec<u8> {
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn show(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs every mode of nitro_dump_calltrace.c and decodes its buffer.
fn check_calltrace(dir: &Path, target: &Target, program: &Path, what: &str) {
    for mode in [
        "stack",
        "log",
        "log-wrap",
        "stack-noregs",
        "stack-overflow",
        "stack-unmatched",
        "stack-misaligned",
    ] {
        let context = format!("{what}, {mode}");
        let prefix = dir.join(mode);
        run_ok(target.command(program).arg(mode).arg(&prefix));
        let printed = read(prefix.with_extension("txt"));
        let text = show(&printed);
        let (first, rest) = text.split_once('\n').expect("a first line");
        let lr = first
            .strip_prefix("OS_DumpCallTrace: lr=")
            .unwrap_or_else(|| panic!("{context}: first line {first:?}"));
        // The seed's calls are there (so that two empty texts cannot agree).
        let expected_r0 = match mode {
            "log-wrap" => "r0=00000303",
            "stack-noregs" => "test1: lr=",
            _ => "r0=00000100",
        };
        assert!(text.contains(expected_r0), "{context}:\n{text}");

        let dump = prefix.with_extension("bin");
        let (decoded, warnings) = nitro(&dump, program, &["--lr", lr]);
        assert_eq!(
            show(&decoded),
            text,
            "{context}: hookprof nitro differs from the program's OS_DumpCallTrace"
        );
        assert_eq!(decoded, printed, "{context}: not byte for byte");
        assert_eq!(warnings, "", "{context}");

        // Without --lr only the first line differs.
        let (decoded, _) = nitro(&dump, program, &[]);
        assert_eq!(
            show(&decoded),
            format!("OS_DumpCallTrace: lr=????????\n{rest}"),
            "{context}"
        );
    }
    // The stack-mode texts, exactly (lr aside).
    let text = show(&read(dir.join("stack-overflow.txt")));
    let lines: Vec<&str> = text.lines().skip(1).collect();
    assert_eq!(lines.len(), 3, "{what}:\n{text}");
    assert!(lines[0].starts_with("test2: lr="), "{what}:\n{text}");
    assert_eq!(
        lines[2],
        "OS_DumpCallTrace: 1 calls were not recorded: the buffer holds 2; the 1 innermost \
         calls in progress are missing above"
    );
    let text = show(&read(dir.join("stack-unmatched.txt")));
    assert!(
        text.contains("OS_DumpCallTrace: 1 returns had no record to remove"),
        "{what}:\n{text}"
    );
}

/// Runs every mode of nitro_dump_functioncost.c and decodes its buffers.
fn check_functioncost(dir: &Path, target: &Target, program: &Path, what: &str) {
    for mode in ["stats", "full", "dropped", "switch"] {
        let context = format!("{what}, {mode}");
        let prefix = dir.join(mode);
        run_ok(target.command(program).arg(mode).arg(&prefix));
        let file = |suffix: &str| dir.join(format!("{mode}.{suffix}"));
        let calc = read(file("calc.txt"));
        let dump = read(file("dump.txt"));
        let text = show(&dump);
        assert!(
            text.starts_with("test1: count 1, cost ") && text.contains("\ntest2: count "),
            "{context}:\n{text}"
        );

        // The statistics buffer: exactly what OS_DumpStatistics printed.
        let (decoded, warnings) = nitro(&file("stats.bin"), program, &[]);
        assert_eq!(show(&decoded), text, "{context}: statistics buffer");
        assert_eq!(decoded, dump, "{context}: not byte for byte");
        assert_eq!(warnings, "", "{context}");

        // The measurement buffer before the summary: what OS_CalcStatistics and then
        // OS_DumpStatistics printed, except that it has no statistics buffer to fill up.
        let (decoded, warnings) = nitro(&file("cost.bin"), program, &[]);
        let mut expected = calc.clone();
        expected.extend(&dump);
        if mode == "dropped" {
            assert!(
                show(&decoded).starts_with(text.lines().next().unwrap())
                    && show(&decoded).contains("\ntest3: count 4, cost "),
                "{context}:\n{}",
                show(&decoded)
            );
        } else {
            assert_eq!(
                show(&decoded),
                show(&expected),
                "{context}: measurement buffer"
            );
            assert_eq!(decoded, expected, "{context}: not byte for byte");
        }
        match mode {
            "full" => {
                assert!(
                    show(&calc).starts_with("OS_CalcStatistics: the function cost buffer was full"),
                    "{context}: {}",
                    show(&calc)
                );
                assert_eq!(warnings, "", "{context}");
            }
            _ => {
                assert_eq!(calc, b"", "{context}");
                // finish(), which saved the buffer, was still running.
                assert!(
                    warnings.contains("1 calls were in progress when the buffer was dumped"),
                    "{context}: {warnings}"
                );
            }
        }
        if mode == "stats" {
            assert!(
                text.contains("\ntest2: count 3, cost "),
                "{context}:\n{text}"
            );
            assert!(
                text.contains("\ntest3: count 4, cost "),
                "{context}:\n{text}"
            );
        }
    }
}

fn check_target(target: &Target, variants: &[&[&str]]) {
    for flags in variants {
        let what = format!("{} {}", target.name, flags.join(" "));
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let program = build(d, target, "calltrace", "nitro_dump_calltrace.c", flags);
        check_calltrace(d, target, &program, &what);
        let program = build(
            d,
            target,
            "functioncost",
            "nitro_dump_functioncost.c",
            flags,
        );
        check_functioncost(d, target, &program, &what);
    }
}

const ALL_VARIANTS: [&[&str]; 4] = [&["-O0"], &["-O2"], &["-O0", "-no-pie"], &["-O2", "-no-pie"]];

#[test]
fn host() {
    check_target(&Target::host(), &ALL_VARIANTS);
}

#[test]
fn aarch64_under_qemu() {
    match Target::cross("aarch64-linux-gnu", "qemu-aarch64", false) {
        Some(target) => check_target(&target, &ALL_VARIANTS),
        None => assert!(
            !in_ci(),
            "CI must have qemu-user and libc6-dev-arm64-cross (scripts/setup.sh)"
        ),
    }
}

/// 4-byte pointers (32-bit Arm with Thumb function addresses, i686) and big-endian s390x: the
/// decoder's other layouts against the real runtime. Optional: scripts/setup.sh does not
/// install these sysroots.
#[test]
fn other_layouts_under_qemu() {
    for (triple, qemu) in [
        ("arm-linux-gnueabihf", "qemu-arm"),
        ("i686-linux-gnu", "qemu-i386"),
        ("s390x-linux-gnu", "qemu-s390x"),
    ] {
        if let Some(target) = Target::cross(triple, qemu, true) {
            check_target(&target, &[&["-O2"], &["-O0", "-no-pie"]]);
        }
    }
}

/// Issue 12: the views read a NITRO function cost measurement buffer (`--exe` names the
/// program). Its flame graph's stacks add up, per function, to the costs `OS_DumpStatistics`
/// printed (own time, intervals switched out taken away: the `switch` mode has them), and the
/// call tree has each function's calls; a statistics buffer is refused with a clear message.
#[test]
fn views_read_a_function_cost_buffer_and_agree_with_the_runtime() {
    let target = Target::host();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build(
        d,
        &target,
        "functioncost",
        "nitro_dump_functioncost.c",
        &["-O2"],
    );
    for mode in ["stats", "switch"] {
        run_ok(target.command(&program).arg(mode).arg(d.join(mode)));
        let cost = d.join(format!("{mode}.cost.bin"));
        // "test2: count 3, cost 128700" lines, as the program printed them.
        let dump = show(&read(d.join(format!("{mode}.dump.txt"))));
        let expected: Vec<(String, u64, u64)> = dump
            .lines()
            .filter_map(|l| {
                let (name, rest) = l.split_once(": count ")?;
                let (count, cost) = rest.split_once(", cost ")?;
                Some((name.to_string(), count.parse().ok()?, cost.parse().ok()?))
            })
            .collect();
        assert_eq!(expected.len(), 3, "{mode}: {dump}");
        let view = |name: &str| {
            let out = run_ok(hookprof().arg(name).arg(&cost).arg("--exe").arg(&program));
            show(&out.stdout)
        };
        let folded = view("flame");
        let tree = view("replay");
        for (function, count, cost) in &expected {
            let own: u64 = folded
                .lines()
                .filter_map(|l| l.rsplit_once(' '))
                .filter(|(stack, _)| stack.rsplit(';').next() == Some(function.as_str()))
                .map(|(_, ticks)| ticks.parse::<u64>().unwrap())
                .sum();
            assert_eq!(own, *cost, "{mode}: {function}\n{folded}");
            let calls = tree
                .lines()
                .filter(|l| l.contains(&format!("| {function}()")))
                .count() as u64;
            assert_eq!(calls, *count, "{mode}: {function}\n{tree}");
        }
    }
    let refused = hookprof()
        .arg("flame")
        .arg(d.join("stats.stats.bin"))
        .arg("--exe")
        .arg(&program)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        show(&refused.stderr).contains("a NITRO statistics buffer: the views read function cost"),
        "{}",
        show(&refused.stderr)
    );
    // `report` reads traces only: it says what reads a NITRO buffer.
    let report = hookprof()
        .arg("report")
        .arg(d.join("stats.cost.bin"))
        .output()
        .unwrap();
    assert_eq!(report.status.code(), Some(1));
    assert!(
        show(&report.stderr).contains("(a NITRO buffer: `hookprof nitro DUMP --exe PROGRAM`"),
        "{}",
        show(&report.stderr)
    );
}
