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
