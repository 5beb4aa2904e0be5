//! The `hookprof` binary: subcommands, exit codes, messages, and -o safety.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use hookprof::input::format::Endian;

fn hookprof(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hookprof"))
        .args(args)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).unwrap()
}

fn write_trace(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn info_describes_the_trace() {
    let dir = scratch_dir("cli-info");
    let trace = write_trace(&dir, "golden.hktrace", &golden_trace(Endian::Big));
    let out = hookprof(&["info", trace.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for expected in [
        "format:            version 4, 64 header bytes, big-endian, 8-byte pointers",
        "complete:          yes",
        "pid:               4321",
        "started:           2023-11-14 22:13:20 UTC",
        "ticks per second:  1000000000; CLOCK chunk: 1000000000 ticks/s, ticks 0..200",
        "executable:        /nonexistent/golden-prog",
        "  0x0000000000001000-0x0000000000009000  bias 0x0  (the executable)",
        "threads:           2",
        "#1 tid 100 \"main\": 16 records (8 entries, 8 exits), lost 0, unmatched entries 0, unmatched exits 0, closed at end 0, max depth 4",
        "- tid 4242: 6 records (4 entries, 2 exits), lost 2, unmatched entries 1, unmatched exits 1, closed at end 2, max depth 2",
        "records:           22\n",
        "lost:              2\n",
        "unmatched entries: 1\n",
        "unmatched exits:   1\n",
        "closed at end:     2\n",
        "unknown chunks:    1 (skipped)",
    ] {
        assert!(stdout.contains(expected), "missing {expected:?} in:\n{stdout}");
    }
}

#[test]
fn format_errors_name_the_file_and_byte() {
    let dir = scratch_dir("cli-errors");
    let mut bytes = golden_trace(Endian::Little);
    bytes.truncate(bytes.len() - 8);
    let trace = write_trace(&dir, "cut.hktrace", &bytes);
    for command in ["info", "report"] {
        let out = hookprof(&[command, trace.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1));
        let stderr = text(&out.stderr);
        let prefix = format!("hookprof: error: {}: byte ", trace.display());
        assert!(stderr.starts_with(&prefix), "{stderr}");
        assert!(
            stderr.contains("truncated: CLOCK chunk declares 24 payload bytes but only 16 remain"),
            "{stderr}"
        );
    }
    let missing = dir.join("missing.hktrace");
    let out = hookprof(&["info", missing.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).starts_with(&format!("hookprof: error: {}: ", missing.display())));
}

#[test]
fn missing_executable_is_an_error_naming_it() {
    let dir = scratch_dir("cli-missing-exe");
    let trace = write_trace(&dir, "golden.hktrace", &golden_trace(Endian::Little));
    let out = hookprof(&["report", trace.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("hookprof: error: /nonexistent/golden-prog: cannot read: "),
        "{stderr}"
    );
    assert!(
        stderr.contains("give its current path with --exe"),
        "{stderr}"
    );
}

#[test]
fn usage_errors_exit_with_2() {
    for args in [
        &["report"][..],
        &["report", "t", "--format", "xml"],
        &["frobnicate"],
        &[],
    ] {
        let out = hookprof(args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    for args in [&["--help"][..], &["report", "--help"], &["info", "--help"]] {
        let out = hookprof(args);
        assert!(out.status.success());
        assert!(text(&out.stdout).contains("Usage: hookprof"));
    }
}

#[test]
fn output_never_overwrites_the_trace() {
    let dir = scratch_dir("cli-output");
    let bytes = golden_trace(Endian::Little);
    let trace = write_trace(&dir, "t.hktrace", &bytes);
    let exe = std::env::current_exe().unwrap(); // any ELF file: names will not match
    let exe = exe.to_str().unwrap();
    // Same file under another spelling, and through a hard link.
    let other_spelling = dir.join(".").join("t.hktrace");
    let link = dir.join("link.hktrace");
    std::fs::hard_link(&trace, &link).unwrap();
    for output in [&trace, &other_spelling, &link] {
        let out = hookprof(&[
            "report",
            trace.to_str().unwrap(),
            "--exe",
            exe,
            "-o",
            output.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(1));
        assert!(text(&out.stderr).contains("refusing to write the report over the input trace"));
        assert_eq!(std::fs::read(&trace).unwrap(), bytes);
    }
    // A real output file gets the report.
    let csv = dir.join("report.csv");
    let out = hookprof(&[
        "report",
        trace.to_str().unwrap(),
        "--exe",
        exe,
        "--format",
        "csv",
        "--per-thread",
        "-o",
        csv.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let report = std::fs::read_to_string(&csv).unwrap();
    assert!(
        report.starts_with("thread,function,calls,inclusive_ns,"),
        "{report}"
    );
    assert_eq!(report.lines().count(), 8);
    let stderr = text(&out.stderr);
    // The test binary is not the traced program: every address is flagged.
    assert!(stderr.contains("--exe"), "{stderr}");
    assert!(stderr.contains("2 records were lost"), "{stderr}");
}

const VIEWS: [&str; 5] = ["timeline", "flame", "callgrind", "replay", "speedscope"];

#[test]
fn views_name_the_file_and_byte_of_a_format_error_and_leave_no_output() {
    let dir = scratch_dir("cli-views-errors");
    let mut bytes = golden_trace(Endian::Little);
    bytes.truncate(bytes.len() - 8);
    let trace = write_trace(&dir, "cut.hktrace", &bytes);
    let exe = env!("CARGO_BIN_EXE_hookprof");
    for view in VIEWS {
        let output = dir.join(format!("{view}.out"));
        let out = hookprof(&[
            view,
            trace.to_str().unwrap(),
            "--exe",
            exe,
            "-o",
            output.to_str().unwrap(),
        ]);
        assert_eq!(out.status.code(), Some(1), "{view}");
        let stderr = text(&out.stderr);
        let prefix = format!("hookprof: error: {}: byte ", trace.display());
        assert!(stderr.starts_with(&prefix), "{view}: {stderr}");
        assert!(!output.exists(), "{view}: an output file after an error");
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().contains("partial"))
            .collect();
        assert!(leftovers.is_empty(), "{view}: {leftovers:?}");
        // Never over the input.
        let out = hookprof(&[view, trace.to_str().unwrap(), "-o", trace.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(1), "{view}");
        assert!(text(&out.stderr).contains("refusing to write"), "{view}");
    }
}

#[test]
fn views_reject_bad_options_with_usage_errors() {
    let dir = scratch_dir("cli-views-usage");
    let trace = write_trace(&dir, "golden.hktrace", &golden_trace(Endian::Little));
    let t = trace.to_str().unwrap();
    for (args, message) in [
        (&["flame", t, "--inverted"][..], "--format=svg"),
        (
            &["timeline", t, "--min-duration=5parsecs"][..],
            "unknown unit",
        ),
        (&["replay", t, "--function=[a"][..], "not a valid pattern"),
        (&["callgrind", t, "--depth=0"][..], "--depth"),
        (&["report", t, "--sort=size"][..], "--sort"),
        (
            &["speedscope", t, "--time-range=5ms"][..],
            "not a time range",
        ),
        (
            &["timeline", t, "--time-range=5ms..1ms"][..],
            "ends before it starts",
        ),
        // One duration syntax (issue 34): a number needs its unit in every option.
        (&["timeline", t, "--min-duration=5"][..], "5ns, 5us"),
        (&["flame", t, "--min-duration", "20"][..], "20ns, 20us"),
        (&["replay", t, "--time-range=5..10ms"][..], "5ns, 5us"),
        (&["callgrind", t, "--time-range=1ms..7"][..], "7ns, 7us"),
        (
            &["diff", t, t, "--fail-if", "calls > +1", "--min-time", "3"][..],
            "3ns, 3us",
        ),
        (
            &["record", "--serial", t, "--poll-interval", "50"][..],
            "50ns, 50us",
        ),
    ] {
        let out = hookprof(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            text(&out.stderr).contains(message),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
    for view in VIEWS {
        let out = hookprof(&[view, "--help"]);
        assert!(out.status.success());
        let help = text(&out.stdout);
        for option in [
            "--function",
            "--exclude",
            "--thread",
            "--depth",
            "--min-duration",
            "--exe",
            "--output",
        ] {
            assert!(
                help.contains(option),
                "{view} --help lacks {option}:\n{help}"
            );
        }
    }
}

/// The subcommands `hookprof --help` lists (but `help`).
fn subcommands() -> Vec<String> {
    let help = text(&hookprof(&["--help"]).stdout);
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(String::from)
        .collect()
}

#[test]
fn bash_completion_completes_subcommands_and_options() {
    // The generated script, loaded by bash and asked as bash's completion would ask it.
    let out = hookprof(&["completions", "bash"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dir = scratch_dir("cli-completions");
    let script = dir.join("hookprof.bash");
    std::fs::write(&script, &out.stdout).unwrap();
    let complete = |words: &str| -> String {
        let probe = format!(
            "source {}\nCOMP_WORDS=({words}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))\n\
             _hookprof hookprof \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"\n\
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script.display()
        );
        let out = Command::new("bash").arg("-c").arg(probe).output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    let subs = complete("hookprof ''");
    for sub in subcommands() {
        assert!(
            subs.lines().any(|l| l == sub),
            "`hookprof <TAB>` lacks {sub}: {subs}"
        );
    }
    let options = complete("hookprof report --so");
    assert_eq!(options.trim(), "--sort", "{options}");
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = hookprof(&["completions", shell]);
        assert!(
            out.status.success() && text(&out.stdout).contains("report"),
            "{shell}"
        );
    }
    let out = hookprof(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("invalid value 'tcsh'"));
}

#[test]
fn man_pages_for_the_program_and_every_subcommand() {
    let out = hookprof(&["man"]);
    assert!(out.status.success());
    let page = text(&out.stdout);
    assert!(page.contains(".TH hookprof 1"), "{page}");
    for sub in subcommands() {
        assert!(page.contains(&sub), "hookprof(1) does not list {sub}");
    }
    let dir = scratch_dir("cli-man");
    let out = hookprof(&["man", "-o", dir.join("man1").to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    for sub in subcommands() {
        let path = dir.join(format!("man1/hookprof-{sub}.1"));
        let page =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            page.contains(&format!(".TH hookprof-{sub} 1"))
                && page.contains(&format!("hookprof {sub}")),
            "{}:\n{page}",
            path.display()
        );
    }
    // The report page carries its options' help.
    let report = std::fs::read_to_string(dir.join("man1/hookprof-report.1")).unwrap();
    assert!(report.contains("percentiles"), "{report}");
}

/// `-o` naming a FIFO (or /dev/null, a terminal): the view is written into it, and it stays
/// what it was. The write-beside-then-rename that protects regular files once replaced
/// /dev/null with a regular file when run as root (`hookprof timeline T -o /dev/null`).
#[cfg(unix)]
#[test]
fn output_to_a_fifo_or_device_writes_into_it_and_leaves_it_in_place() {
    use std::io::Read;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let dir = scratch_dir("cli-fifo");
    let trace = write_trace(&dir, "t.hktrace", &golden_trace(Endian::Little));
    let exe = std::env::current_exe().unwrap();
    let fifo = dir.join("out.fifo");
    let _ = std::fs::remove_file(&fifo);
    let c_path = std::ffi::CString::new(fifo.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path; mkfifo only creates the file.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    // Opened for reading first, without waiting for a writer; the golden trace's timeline
    // fits in the pipe's buffer, so hookprof never waits for us either.
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let out = hookprof(&[
        "timeline",
        trace.to_str().unwrap(),
        "--exe",
        exe.to_str().unwrap(),
        "-o",
        fifo.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(!dir.join("out.fifo.hookprof-partial").exists());
    let mut json = String::new();
    reader.read_to_string(&mut json).unwrap();
    assert!(json.starts_with("{\"traceEvents\":["), "{json}");
    // A character device too (writing to /dev/null is harmless).
    let out = hookprof(&[
        "flame",
        trace.to_str().unwrap(),
        "--exe",
        exe.to_str().unwrap(),
        "-o",
        "/dev/null",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(std::fs::metadata("/dev/null")
        .unwrap()
        .file_type()
        .is_char_device());
}

#[cfg(unix)]
#[test]
fn an_interrupted_view_leaves_neither_output_nor_temporary() {
    use hookprof::input::format::{Record, Writer};
    use std::os::unix::process::ExitStatusExt;

    let dir = scratch_dir("cli-interrupted");
    // 2 M records: a timeline of about 170 MB, long enough to be interrupted while written.
    let mut w = Writer::new(Vec::new(), &header(Endian::Little)).unwrap();
    let records: Vec<Record> = (0..1_000_000u64)
        .flat_map(|i| [Record::entry(2 * i, A), Record::exit(2 * i + 1, A)])
        .collect();
    w.events(TID_MAIN, &records).unwrap();
    let trace = write_trace(&dir, "long.hktrace", &w.into_inner());
    let output = dir.join("out.json");
    let partials = || -> Vec<String> {
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("hookprof-partial"))
            .collect()
    };
    // Once the temporary has bytes, hookprof is writing it.
    let writing = || {
        partials()
            .iter()
            .any(|n| std::fs::metadata(dir.join(n)).is_ok_and(|m| m.len() > 0))
    };
    // On a busy machine the view may finish before the signal reaches it (a run that then
    // says nothing about an interruption): such a run is tried again, up to five times.
    let mut interrupted = None;
    for _ in 0..5 {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hookprof"))
            .arg("timeline")
            .arg(&trace)
            .args(["--exe", env!("CARGO_BIN_EXE_hookprof"), "-o"])
            .arg(&output)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while !writing() && start.elapsed().as_secs() < 30 && child.try_wait().unwrap().is_none() {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        // SAFETY: kill(2) on our own child's pid (not yet waited for, so not reused).
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
        let status = child.wait().unwrap();
        if status.success() && output.exists() {
            assert!(partials().is_empty(), "{:?}", partials());
            std::fs::remove_file(&output).unwrap();
            continue;
        }
        interrupted = Some((status, partials(), output.exists()));
        break;
    }
    std::fs::remove_dir_all(&dir).unwrap();
    let (status, left, output_left) = interrupted.expect("the view finished before SIGINT 5 times");
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}");
    assert!(left.is_empty(), "{left:?}");
    assert!(!output_left);
}
