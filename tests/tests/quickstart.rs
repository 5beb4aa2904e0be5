//! The first hour, as the README tells it (issue 34): `scripts/quickstart.sh` runs
//! `scripts/demo.sh` with this build, pastes the PATH line the demo ends with, and runs the
//! README's C and Rust quick starts line by line exactly as the README writes them. A README
//! whose commands name files the programs do not write, or a demo that leaves the tools off
//! PATH, fails here.

use std::process::Command;

use hookcc_tests::*;

/// The system's directories and the Rust toolchain's (cargo's, which runs this test).
fn new_users_path() -> String {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let toolchain = std::path::Path::new(&cargo)
        .parent()
        .map(|d| format!("{}:", d.display()))
        .unwrap_or_default();
    let rustup = std::env::var("CARGO_HOME")
        .map(|home| format!("{home}/bin:"))
        .unwrap_or_default();
    format!("{rustup}{toolchain}/usr/local/bin:/usr/bin:/bin")
}

#[test]
fn the_demo_its_path_line_and_the_readmes_quick_starts_work_as_written() {
    let work = tempfile::tempdir().unwrap();
    let out = Command::new(workspace_root().join("scripts/quickstart.sh"))
        .arg(target_dir())
        .arg(work.path())
        // As a new user's shell: a Rust toolchain, and hookcc not on PATH until the demo's
        // line puts it there.
        .env("PATH", new_users_path())
        .env("HOOKCC_CACHE_DIR", work.path().join("cache"))
        .env_remove("HOOKCC_TRACE")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("work as written"), "{stderr}");
    // The demo's last line is the PATH line, naming this build.
    let demo = std::fs::read_to_string(work.path().join("demo.out")).unwrap();
    let last = demo.lines().last().unwrap();
    assert_eq!(
        last,
        format!("export PATH={}:\"$PATH\"", target_dir().display())
    );
    // The README's lines ran, as written.
    for line in [
        "quickstart: $ HOOKCC_OUTPUT=prog.hktrace ./prog",
        "quickstart: $ hookprof report prog.hktrace",
        "quickstart: $ cd examples/rust && cargo hookcc run --trace",
    ] {
        assert!(stderr.contains(line), "{line}: {stderr}");
    }
    let c = std::fs::read_to_string(work.path().join("c/C.out")).unwrap();
    assert!(c.contains("parse_primary"), "{c}");
    let rust = std::fs::read_to_string(work.path().join("rust/Rust.out")).unwrap();
    assert!(
        rust.contains("mixed::checksum") && rust.contains("crc32"),
        "{rust}"
    );
    the_demo_installs_where_asked_and_prints_that_path_line();
}

/// `scripts/demo.sh --install DIR` installs hookcc into DIR (scripts/install.sh, with the
/// build it names) and ends with DIR/bin's PATH line; the installed tools work from there and
/// `man hookcc` has its page in DIR/share/man. (Called by the test above: two demos at once
/// would build examples/build/calc over each other.)
fn the_demo_installs_where_asked_and_prints_that_path_line() {
    let work = tempfile::tempdir().unwrap();
    let prefix = work.path().join("prefix");
    let out = Command::new(workspace_root().join("scripts/demo.sh"))
        .arg("--install")
        .arg(&prefix)
        .env("HOOKCC_BUILD_DIR", target_dir())
        .env("PATH", new_users_path())
        .env("HOOKCC_CACHE_DIR", work.path().join("cache"))
        .env_remove("HOOKCC_TRACE")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.lines().last().unwrap(),
        format!("export PATH={}:\"$PATH\"", prefix.join("bin").display())
    );
    assert!(stdout.contains("parse_primary"), "{stdout}");
    for file in [
        "bin/hookcc",
        "bin/hookprof",
        "bin/cargo-hookcc",
        "share/man/man1/hookcc.1",
    ] {
        assert!(prefix.join(file).is_file(), "{file} is not installed");
    }
    let version = run_ok(Command::new(prefix.join("bin/hookcc")).arg("--version"));
    assert!(String::from_utf8_lossy(&version.stdout).contains("hookcc 0."));
    // A wrong word is a usage error, before anything is built.
    let out = Command::new(workspace_root().join("scripts/demo.sh"))
        .arg("--instal")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}
