//! The TI cgtools dialect, compiler side: each option and pragma on a small program whose hooks
//! print or count, checked by running it, at several optimization levels.

use std::process::Command;

use hookcc_tests::*;

fn build(dir: &std::path::Path, source: &str, flags: &[&str], cxx: bool) -> std::process::Output {
    hookcc(dir, cxx)
        .args(flags)
        .arg(program_source(source))
        .args(["-o", "prog"])
        .output()
        .unwrap()
}

fn build_and_run(source: &str, flags: &[&str], cxx: bool) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = build(dir.path(), source, flags, cxx);
    assert!(
        out.status.success(),
        "{source} {flags:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run_ok(&mut Command::new(dir.path().join("prog")));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const OPT_LEVELS: &[&str] = &["-O0", "-O1", "-O2", "-O3", "-Os", "-Oz"];

#[test]
fn name_hooks_skip_no_hooks_inline_and_no_instrument_function() {
    for opt in OPT_LEVELS {
        for debug in [&[][..], &["-g"][..]] {
            let mut flags = vec![
                "--entry_hook=on_entry",
                "--entry_parm=name",
                "--exit_hook=on_exit",
                "--exit_parm=name",
                opt,
            ];
            flags.extend(debug);
            let out = build_and_run("ti_hooks.c", &flags, false);
            assert_eq!(
                out, "enter main\nenter helper\nexit helper\nexit main\n",
                "{flags:?}"
            );
        }
    }
}

#[test]
fn one_function_as_both_hooks_with_addresses() {
    for opt in ["-O0", "-O2"] {
        let flags = [
            "--entry_hook=both",
            "--entry_parm=address",
            "--exit_hook=both",
            "--exit_parm=address",
            opt,
        ];
        assert_eq!(
            build_and_run("ti_address.c", &flags, false),
            "E main\nE work\nX work\nX main\n",
            "{opt}"
        );
    }
}

#[test]
fn entry_and_exit_hooks_are_independent() {
    // Only an entry hook: the program's exit hook function is never called.
    let out = build_and_run(
        "ti_hooks.c",
        &["--entry_hook=on_entry", "--entry_parm=name", "-O1"],
        false,
    );
    assert_eq!(out, "enter main\nenter helper\n");
    let out = build_and_run(
        "ti_hooks.c",
        &["--exit_hook=on_exit", "--exit_parm=name", "-O1"],
        false,
    );
    assert_eq!(out, "exit helper\nexit main\n");
}

#[test]
fn remove_hooks_when_inlining() {
    let base = ["--entry_hook=count_entry", "--entry_parm=name", "-O2"];
    // Without the option, inlined bodies carry their hooks: every call counts.
    assert_eq!(
        build_and_run("ti_inlining.c", &base, false),
        "small=10 kept=11 opaque=10\n"
    );
    // With it, only out-of-line executions count: `small` and the inlined `kept` vanish.
    let mut flags = base.to_vec();
    flags.push("--remove_hooks_when_inlining");
    assert_eq!(
        build_and_run("ti_inlining.c", &flags, false),
        "small=0 kept=1 opaque=10\n"
    );
    // At -O0 nothing is inlined: the option changes nothing.
    let mut flags = flags.clone();
    flags.push("-O0");
    assert_eq!(
        build_and_run("ti_inlining.c", &flags, false),
        "small=10 kept=11 opaque=10\n"
    );
}

#[test]
fn cxx_hooks_are_extern_c() {
    let out = build_and_run(
        "ti_extern_c.cpp",
        &["--entry_hook=trace_hook", "--entry_parm=name", "-O1"],
        true,
    );
    assert_eq!(out, "hook main\nhook _ZN3app3addEii\n");
}

#[test]
fn a_disagreeing_hook_declaration_is_an_error_naming_hook_signature_and_place() {
    let dir = tempfile::tempdir().unwrap();
    let out = build(
        dir.path(),
        "ti_wrong_decl.c",
        &["--entry_hook", "--entry_parm=name", "-c"],
        false,
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ti_wrong_decl.c:2:6: error: conflicting types for '__entry_hook'"),
        "{err}"
    );
    assert!(
        err.contains("void __entry_hook(const char *name);"),
        "the expected signature: {err}"
    );
}

#[test]
fn malformed_and_misplaced_pragmas_warn_with_their_location() {
    let dir = tempfile::tempdir().unwrap();
    let out = build(
        dir.path(),
        "pragma_warnings.c",
        &["--entry_hook", "-c"],
        false,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    for expected in [
        "pragma_warnings.c:2:18: warning: malformed '#pragma NO_HOOKS': missing '('",
        "pragma_warnings.c:3:21: warning: malformed '#pragma NO_HOOKS': missing ')'",
        "pragma_warnings.c:4:17: warning: malformed '#pragma profile'",
        "pragma_warnings.c:7:9: warning: '#pragma NO_HOOKS(defined_first)' comes after the definition",
        "pragma_warnings.c:9:9: warning: '#pragma NO_HOOKS(nowhere)': no function named 'nowhere'",
    ] {
        assert!(err.contains(expected), "missing `{expected}` in:\n{err}");
    }
}

#[test]
fn exit_hooks_run_when_an_exception_unwinds() {
    let expected = "enter main\nenter _Z6middlei\nenter _Z7throweri\nexit _Z7throweri\nguard\nexit _Z6middlei\n\
                    enter _Z6middlei\nenter _Z7throweri\nexit _Z7throweri\nguard\nexit _Z6middlei\nexit main\n";
    for opt in ["-O0", "-O2"] {
        let flags = [
            "--entry_hook=on_entry",
            "--entry_parm=name",
            "--exit_hook=on_exit",
            "--exit_parm=name",
            opt,
        ];
        assert_eq!(
            build_and_run("exceptions.cpp", &flags, true),
            expected,
            "{opt}"
        );
    }
}
