//! What hookcc and hookprof say when the setup or the input is wrong: one line that names
//! what is missing or wrong, not a compiler's option dump or an errno that misleads.

use hookcc_tests::*;

fn one_error_line(out: &std::process::Output, context: &str) -> String {
    assert_eq!(out.status.code(), Some(1), "{context}: {out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        stderr.lines().count(),
        1,
        "{context}: one line expected:\n{stderr}"
    );
    stderr
}

#[test]
fn a_missing_pass_or_frontend_plugin_is_one_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let out = hookcc(d, false)
        .env("HOOKCC_PLUGIN", "/nonexistent/libhookcc_pass.so")
        .args(["--trace", "-c"])
        .arg(program_source("calls.c"))
        .output()
        .unwrap();
    let stderr = one_error_line(&out, "HOOKCC_PLUGIN=/nonexistent");
    assert!(
        stderr.contains(
            "the pass plugin /nonexistent/libhookcc_pass.so (HOOKCC_PLUGIN) does not exist"
        ),
        "{stderr}"
    );
    // The pass plugin copied elsewhere without the frontend plugin it loads beside it.
    let copy = d.join("libhookcc_pass.so");
    std::fs::copy(tool("libhookcc_pass.so"), &copy).unwrap();
    let out = hookcc(d, false)
        .env("HOOKCC_PLUGIN", &copy)
        .args(["--trace", "-c"])
        .arg(program_source("calls.c"))
        .output()
        .unwrap();
    let stderr = one_error_line(&out, "pass plugin alone");
    assert!(
        stderr.contains("the frontend plugin libhookcc_clang.so is missing")
            && stderr.contains(&d.join("libhookcc_clang.so").display().to_string()),
        "{stderr}"
    );
}

#[test]
fn a_program_that_is_not_clang_is_said_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = hookcc(dir.path(), false)
        .env("HOOKCC_CLANG", "/bin/false")
        .args(["--trace", "-c"])
        .arg(program_source("calls.c"))
        .output()
        .unwrap();
    let stderr = one_error_line(&out, "HOOKCC_CLANG=/bin/false");
    assert!(
        stderr.contains("/bin/false does not look like clang"),
        "{stderr}"
    );
}

#[test]
fn a_directory_given_to_hookprof_is_called_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let out = hookprof().args(["info", &d]).output().unwrap();
    let stderr = one_error_line(&out, "hookprof info DIR");
    assert_eq!(
        stderr.trim_end(),
        format!("hookprof: error: {d}: is a directory, not a trace file")
    );
    let out = hookprof()
        .args([
            "nitro",
            &d,
            "--exe",
            &tool("hookprof").display().to_string(),
        ])
        .output()
        .unwrap();
    let stderr = one_error_line(&out, "hookprof nitro DIR");
    assert_eq!(
        stderr.trim_end(),
        format!("hookprof: error: {d}: is a directory")
    );
}

#[test]
fn a_corrupted_cached_runtime_is_rebuilt_and_clear_cache_empties_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cache = d.join("cache");
    let build = || {
        run_ok(
            hookcc(d, false)
                .env("HOOKCC_CACHE_DIR", &cache)
                .args(["--trace", SOURCE_PLACEMENT, "-O1"])
                .arg(program_source("calls.c"))
                .args(["-o", "calls"]),
        )
    };
    build();
    let objects: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "o"))
        .collect();
    assert_eq!(objects.len(), 1, "{objects:?}");
    // As a crash or a full disk mid-write could leave it.
    std::fs::write(&objects[0], b"not an object file").unwrap();
    build();
    let (trace, stdout) = run_traced(d, &d.join("calls"), &[]);
    assert_eq!(stdout.trim(), "16135");
    assert_eq!(call_counts(&trace, &[]).get("leaf"), Some(&100));

    std::fs::write(cache.join("mine.txt"), b"not hookcc's").unwrap();
    let out = run_ok(
        hookcc(d, false)
            .env("HOOKCC_CACHE_DIR", &cache)
            .arg("--clear-cache"),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    // The runtime object and its checksum.
    assert!(stdout.contains("removed 2 cached files"), "{stdout}");
    let left: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["mine.txt"], "only hookcc's files are removed");
}

/// Issue 34: a misspelt option of hookcc's (`--trce`) reaches clang as it was, and clang's error
/// and exit status stay clang's; then hookcc names the option that was meant. A valid clang
/// option near one of hookcc's (`--profile`, one edit from `-profile`) and an option's value
/// (`-Xlinker --trce`) get no such note. `cargo hookcc` does the same with cargo's options.
#[test]
fn a_misspelt_hookcc_option_is_named_after_clangs_and_cargos_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let compile = |args: &[&str]| {
        let out = hookcc(d, false)
            .args(args)
            .arg("-c")
            .arg(program_source("calls.c"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let stderr = compile(&["--trce", "-O1"]);
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines,
        [
            "clang-19: error: unknown argument: '--trce'",
            "hookcc: note: `--trce` is not an option of clang's either: did you mean hookcc's \
             `--trace`? (`hookcc --help` lists hookcc's options)"
        ],
        "{stderr}"
    );
    let stderr = compile(&["-pofile"]);
    assert!(
        stderr.contains("did you mean hookcc's `-profile`?"),
        "{stderr}"
    );
    let stderr = compile(&["--profile"]);
    assert!(
        stderr.contains("unsupported option '--profile'") && !stderr.contains("hookcc"),
        "{stderr}"
    );
    // A value, not an option: the linker's (not reached with -c; clang says nothing).
    let out = hookcc(d, false)
        .args(["-Xlinker", "--trce", "-c"])
        .arg(program_source("calls.c"))
        .args(["-o", "calls.o"])
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("did you mean"),
        "{out:?}"
    );
    // One of hookcc's reserved spellings: hookcc's own error, with the option meant.
    let out = hookcc(d, false)
        .args(["--hook-placment=source", "-c"])
        .arg(program_source("calls.c"))
        .output()
        .unwrap();
    let stderr = one_error_line(&out, "--hook-placment");
    assert!(
        stderr
            .contains("unknown option `--hook-placment=source`: did you mean `--hook-placement=`?"),
        "{stderr}"
    );

    // cargo hookcc: cargo's error, then the note; cargo's own --profile gets none.
    let project = copy_cargo_project(&workspace_root().join("examples/rust"), d);
    let out = cargo_with_hookcc(&project)
        .args(["hookcc", "build", "--trce"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("unexpected argument '--trce'")
            && stderr.contains(
                "cargo-hookcc: note: `--trce` is not an option of cargo's either: did you mean \
                 hookcc's `--trace`?"
            ),
        "{stderr}"
    );
    let out = cargo_with_hookcc(&project)
        .args(["hookcc", "build", "--profile=nonexistent"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("did you mean hookcc's"),
        "{out:?}"
    );
}

/// Issue 34: a trace that is not there is named with what its program says. Built without
/// `--trace`: "no trace: was `prog` built with `hookcc --trace`?", from the program the name
/// suggests (`prog.*.hktrace` as the shell leaves an unmatched glob) or from `--exe`; built
/// with it: the name its runs write, and the runs there are. Every view says the same.
#[test]
fn a_missing_trace_says_whether_its_program_was_built_to_write_one() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Without hook options hookcc is clang: no hooks.
    run_ok(
        hookcc(d, false)
            .arg("-O1")
            .arg(program_source("calls.c"))
            .args(["-o", "plain"]),
    );
    let fails = |args: &[&str]| -> String {
        let out = hookprof().current_dir(d).args(args).output().unwrap();
        one_error_line(&out, &format!("{args:?}"))
    };
    for view in ["report", "timeline", "flame", "replay", "info"] {
        let stderr = fails(&[view, "plain.*.hktrace"]);
        assert_eq!(
            stderr.trim_end(),
            "hookprof: error: plain.*.hktrace: no file matches: no trace: was `plain` built \
             with `hookcc --trace`? It has none of the trace runtime's hooks (no \
             __hookcc_enter): rebuild it with `hookcc --trace` (or CC=hookcc HOOKCC_TRACE=1 \
             make) and run it",
            "{view}"
        );
    }
    let stderr = fails(&["timeline", "run.hktrace", "--exe", "plain"]);
    assert!(
        stderr.contains("run.hktrace: no such file: no trace: was `plain` built with"),
        "{stderr}"
    );
    // Built to write one, run twice: its traces have the pid in their names.
    let traced = build_traced(d, "traced", &["calls.c"], &["-O1"], false);
    let stderr = fails(&["report", "traced.*.hktrace"]);
    assert!(
        stderr.contains("`traced` has hookcc's trace hooks: each run writes traced.<pid>.hktrace"),
        "{stderr}"
    );
    let mut pids = Vec::new();
    for _ in 0..2 {
        let child = std::process::Command::new(&traced)
            .current_dir(d)
            .env("HOOKCC_SWITCHES", "0")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        pids.push(child.id());
        assert!(child.wait_with_output().unwrap().status.success());
    }
    pids.sort();
    let stderr = fails(&["report", "traced.hktrace"]);
    let mut runs: Vec<String> = pids
        .iter()
        .map(|pid| format!("traced.{pid}.hktrace"))
        .collect();
    runs.sort();
    assert!(
        stderr.contains(&format!(
            "traced.hktrace: no such file: `traced` writes traced.<pid>.hktrace, one a run (or \
             $HOOKCC_OUTPUT); here: {}",
            runs.join(", ")
        )),
        "{stderr}"
    );
    // Nothing to look at: still what a trace's name is.
    let stderr = fails(&["report", "elsewhere/other.hktrace"]);
    assert!(
        stderr.contains("no such file (a program built with `hookcc --trace` writes"),
        "{stderr}"
    );
}

/// Issue 34: a stripped executable is named as such, with what to do, instead of "was it
/// rebuilt?" (which sent users looking for a build that never changed). Since the hooks are
/// passed functions' records, which hold names, a stripped `hookcc --trace` build names its
/// functions (tests/records.rs); the warning stays for addresses only a symbol table names:
/// hooks a program calls itself with a function's address.
#[test]
fn a_stripped_executable_is_called_stripped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = build_traced(d, "stripped", &["hooks_by_hand.c"], &["-O1", "-s"], false);
    let (trace, _) = run_traced(d, &program, &[]);
    let out = run_ok(hookprof().arg("report").arg(&trace));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{} is stripped (no symbol table)",
            program.display()
        )) && stderr.contains(
            "Build it without `-s` or `strip` and run it again, or give an \
                                unstripped copy of this same build with --exe"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("rebuilt"), "{stderr}");
}
