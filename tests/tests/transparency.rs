//! With no hook option, hookcc is clang-19: byte-identical objects, the same diagnostics, the
//! same exit codes.

use std::process::Command;

use hookcc_tests::*;

fn clang(cxx: bool) -> Command {
    Command::new(if cxx { "clang++-19" } else { "clang-19" })
}

#[test]
fn objects_are_byte_identical_to_clang_19() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: &[(&str, bool, &[&str])] = &[
        ("calls.c", false, &["-O0"]),
        ("calls.c", false, &["-O2", "-g"]),
        ("threads.c", false, &["-Os", "-pthread", "-DEXTRA=1"]),
        ("shapes.cpp", true, &["-O2", "-std=c++17"]),
        ("shapes.cpp", true, &["-O0", "-g", "-fno-exceptions"]),
    ];
    for (i, (source, cxx, flags)) in cases.iter().enumerate() {
        let ours = d.join(format!("hookcc-{i}.o"));
        let theirs = d.join(format!("clang-{i}.o"));
        run_ok(
            hookcc(d, *cxx)
                .args(*flags)
                .arg("-c")
                .arg(program_source(source))
                .arg("-o")
                .arg(&ours),
        );
        run_ok(
            clang(*cxx)
                .current_dir(d)
                .args(*flags)
                .arg("-c")
                .arg(program_source(source))
                .arg("-o")
                .arg(&theirs),
        );
        assert_eq!(
            std::fs::read(&ours).unwrap(),
            std::fs::read(&theirs).unwrap(),
            "{source} {flags:?}: hookcc's object differs from clang-19's"
        );
    }
}

#[test]
fn diagnostics_and_exit_codes_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("warn.c"), "int f(int x) { int unused; return x; }\n").unwrap();
    std::fs::write(d.join("bad.c"), "int main(void) { return undeclared; }\n").unwrap();
    for (file, flags) in [
        ("warn.c", &["-Wall", "-c"][..]),
        ("bad.c", &["-c"][..]),
        ("warn.c", &["-Wall", "-Werror", "-c"][..]),
    ] {
        for trace in [false, true] {
            let mut ours = hookcc(d, false);
            if trace {
                ours.arg("--trace");
            }
            let ours = ours
                .args(flags)
                .arg(file)
                .arg("-o")
                .arg("x.o")
                .output()
                .unwrap();
            let theirs = clang(false)
                .current_dir(d)
                .args(flags)
                .arg(file)
                .arg("-o")
                .arg("y.o")
                .output()
                .unwrap();
            assert_eq!(
                ours.status.code(),
                theirs.status.code(),
                "{file} {flags:?} trace={trace}: exit code"
            );
            assert_eq!(
                String::from_utf8_lossy(&ours.stderr),
                String::from_utf8_lossy(&theirs.stderr),
                "{file} {flags:?} trace={trace}: diagnostics"
            );
        }
    }
}

#[test]
fn preprocessing_and_version_pass_through() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ours = run_ok(hookcc(d, false).arg("-E").arg(program_source("calls.c")));
    let theirs = run_ok(
        clang(false)
            .current_dir(d)
            .arg("-E")
            .arg(program_source("calls.c")),
    );
    assert_eq!(ours.stdout, theirs.stdout);
    // `--version`: clang's text unchanged and first (build systems read the compiler's
    // version from its start), then one line of hookcc's: its version and the clang it runs.
    for cxx in [false, true] {
        let ours = run_ok(hookcc(d, cxx).arg("--version"));
        let theirs = run_ok(clang(cxx).arg("--version"));
        let ours = String::from_utf8_lossy(&ours.stdout).into_owned();
        let theirs = String::from_utf8_lossy(&theirs.stdout).into_owned();
        let (clangs, hookccs) = ours.split_at(theirs.len().min(ours.len()));
        assert_eq!(clangs, theirs, "cxx={cxx}");
        assert!(
            theirs.starts_with("Debian clang version 19.") || theirs.contains("clang version 19.")
        );
        let line = hookccs.trim_end();
        assert!(
            line.starts_with(&format!(
                "hookcc {} (hook plugins for LLVM 19), running /",
                env!("CARGO_PKG_VERSION")
            )) && line.ends_with("clang-19")
                && !line.contains('\n'),
            "cxx={cxx}: {line:?}"
        );
    }
}

#[test]
fn response_files_are_understood() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The response file says "compile only": hookcc must not try to link the runtime.
    std::fs::write(
        d.join("args.rsp"),
        format!(
            "-O1 -c\n\"{}\"\n-o calls.o\n",
            program_source("calls.c").display()
        ),
    )
    .unwrap();
    run_ok(hookcc(d, false).args(["--trace", SOURCE_PLACEMENT, "@args.rsp"]));
    run_ok(hookcc(d, false).args(["--trace", "calls.o", "-o", "calls"]));
    let (trace, _) = run_traced(d, &d.join("calls"), &[]);
    assert_eq!(call_counts(&trace, &[]).get("fib"), Some(&1973));
}

#[test]
fn unknown_hookcc_option_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = hookcc(dir.path(), false)
        .args(["--hook-runtime=bogus", "-c", "x.c"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--hook-runtime=bogus") && err.contains("trace"),
        "{err}"
    );
}
