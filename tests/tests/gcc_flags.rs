//! GCC's instrumentation flags under hookcc: `-finstrument-functions` (and clang's
//! `-finstrument-functions-after-inlining`) done by hookcc's pass with GCC's
//! `__cyg_profile_func_enter/exit(this_fn, call_site)` hooks, and GCC's
//! `-finstrument-functions-exclude-function-list=` / `-exclude-file-list=`, which clang-19
//! rejects. Each case runs the same program built by hookcc and by the compiler the flags come
//! from (gcc, or clang-19 for the after-inlining flag), and the outputs must be equal.

use std::path::Path;
use std::process::Command;

use hookcc_tests::*;

fn output_of(dir: &Path, mut cmd: Command, name: &str) -> String {
    run_ok(
        cmd.arg("-I")
            .arg(program_source(""))
            .arg(program_source("gcc_hooks.c"))
            .arg("-o")
            .arg(dir.join(name)),
    );
    let out = run_ok(&mut Command::new(dir.join(name)));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn compare(reference: &str, flags: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut theirs = Command::new(reference);
    theirs.args(flags);
    let mut ours = hookcc(d, false);
    ours.args(flags);
    let (want, got) = (output_of(d, theirs, "theirs"), output_of(d, ours, "ours"));
    assert_eq!(got, want, "hookcc {flags:?} differs from {reference}");
    got
}

#[test]
fn instrument_functions_as_gcc_does() {
    for opt in ["-O0", "-O2"] {
        let out = compare("gcc", &["-finstrument-functions", opt]);
        assert!(
            out.starts_with("enter main\nenter work\nenter helper\nexit helper\nenter in_header\n"),
            "{opt}: {out}"
        );
        assert!(!out.contains("no call site") && !out.contains('?'), "{out}");
        let out = compare(
            "gcc",
            &[
                "-finstrument-functions",
                "-finstrument-functions-exclude-function-list=help,nothing",
                opt,
            ],
        );
        assert!(
            !out.contains("helper") && out.contains("in_header"),
            "{opt}: {out}"
        );
        let out = compare(
            "gcc",
            &[
                "-finstrument-functions",
                "-finstrument-functions-exclude-file-list=gcc_hooks_excluded",
                opt,
            ],
        );
        assert!(
            !out.contains("in_header") && out.contains("helper"),
            "{opt}: {out}"
        );
    }
}

#[test]
fn after_inlining_as_clang_does() {
    let out = compare(
        "clang-19",
        &["-finstrument-functions-after-inlining", "-O2"],
    );
    // helper and work are inlined into main at -O2; in_header is noinline.
    assert!(!out.contains("helper") && !out.contains("work"), "{out}");
    assert!(
        out.contains("enter main") && out.contains("enter in_header"),
        "{out}"
    );
}
