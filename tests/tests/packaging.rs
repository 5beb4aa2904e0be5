//! How users install hookcc: the Debian package `scripts/package-deb.sh` builds with cargo-deb
//! (from this build), unpacked into an empty directory and used from there as the quick start
//! uses the build tree: examples/calc.c instrumented, run, its report equal to the build tree's;
//! hookcc++ on C++; hookprof's man pages and completions where the system looks for them.

use std::path::Path;
use std::process::Command;

use hookcc_tests::*;

fn have_cargo_deb() -> bool {
    have_tool("cargo", &["deb", "--version"], "cargo-deb")
}

/// calc's report as (function, calls), sorted by function.
fn calc_counts(hookcc: &Path, hookprof: &Path, dir: &Path) -> Vec<(String, u64)> {
    std::fs::create_dir_all(dir).unwrap();
    let program = dir.join("calc");
    run_ok(
        Command::new(hookcc)
            .current_dir(dir)
            .env("HOOKCC_CACHE_DIR", dir.join("cache"))
            .args(["--trace", "--hook-placement=source", "-O2"])
            .arg(workspace_root().join("examples/calc.c"))
            .arg("-o")
            .arg(&program),
    );
    let (trace, _) = run_traced(dir, &program, &[]);
    let out = run_ok(
        Command::new(hookprof)
            .arg("report")
            .arg(&trace)
            .arg("--format=csv"),
    );
    let mut rows: Vec<(String, u64)> = parse_report_csv(&String::from_utf8_lossy(&out.stdout))
        .into_iter()
        .map(|r| (r.function, r.calls))
        .collect();
    rows.sort();
    rows
}

#[test]
fn the_debian_package_installs_a_working_hookcc() {
    if !have_cargo_deb() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let debs = work.path().join("debian");
    // The test binaries are debug builds: the package is made from that build.
    let out = run_ok(
        Command::new(workspace_root().join("scripts/package-deb.sh"))
            .args(["--profile", "dev", "-o"])
            .arg(&debs),
    );
    let deb = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        deb.ends_with(".deb") && Path::new(&deb).is_file(),
        "package-deb.sh should print the .deb it wrote: {deb:?}"
    );
    let info = run_ok(Command::new("dpkg-deb").arg("--info").arg(&deb));
    let info = String::from_utf8_lossy(&info.stdout);
    for field in ["Package: hookcc", "Depends: clang-19", "Section: devel"] {
        assert!(info.contains(field), "{field}: {info}");
    }
    let root = work.path().join("root");
    run_ok(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&root));
    let bin = root.join("usr/bin");

    // The quick start with the packaged tools, against the build tree's.
    let packaged = calc_counts(
        &bin.join("hookcc"),
        &bin.join("hookprof"),
        &work.path().join("packaged"),
    );
    let built = calc_counts(
        &tool("hookcc"),
        &tool("hookprof"),
        &work.path().join("built"),
    );
    assert!(
        packaged.contains(&("parse_primary".to_string(), 76_000)) && packaged.len() >= 8,
        "{packaged:?}"
    );
    assert_eq!(packaged, built);

    // hookcc++ is the C++ driver (a link to hookcc in the package).
    let cxx = work.path().join("cxx");
    std::fs::create_dir_all(&cxx).unwrap();
    run_ok(
        Command::new(bin.join("hookcc++"))
            .current_dir(&cxx)
            .env("HOOKCC_CACHE_DIR", cxx.join("cache"))
            .args(["--trace", "-O1"])
            .arg(program_source("shapes.cpp"))
            .args(["-o", "shapes"]),
    );
    let (trace, _) = run_traced(&cxx, &cxx.join("shapes"), &[]);
    let counts = call_counts(&trace, &[]);
    assert_eq!(counts.get("Square::area() const"), Some(&3), "{counts:#?}");

    // Documentation where man and the shells look for it.
    let share = root.join("usr/share");
    for path in [
        "man/man1/hookprof.1",
        "man/man1/hookprof-report.1",
        "bash-completion/completions/hookprof",
        "zsh/vendor-completions/_hookprof",
        "fish/vendor_completions.d/hookprof.fish",
        "doc/hookcc/README.md",
    ] {
        assert!(share.join(path).is_file(), "{path} is not in the package");
    }
}

#[test]
fn cargo_install_of_the_wrapper_gives_a_hookcc_that_finds_its_plugin_and_runtime() {
    // `cargo install --path wrapper` copies executables only. The installed hookcc then uses the
    // source tree it was built from: the plugin in that tree's cargo target directory (here the
    // one these tests were built in, named by CARGO_TARGET_DIR; built there when missing) and
    // its runtime sources. --debug and the same target directory: cargo reuses this build.
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("cargo-root");
    let cargo_target = target_dir().parent().unwrap().to_path_buf();
    run_ok(
        cargo()
            .args(["install", "--debug", "--quiet", "--locked", "--path"])
            .arg(workspace_root().join("wrapper"))
            .arg("--root")
            .arg(&root)
            .arg("--target-dir")
            .arg(&cargo_target)
            .env_remove("CARGO_TARGET_DIR"),
    );
    let installed = root.join("bin/hookcc");
    assert!(installed.is_file() && root.join("bin/cargo-hookcc").is_file());
    assert!(
        !root.join("lib").exists(),
        "cargo install should have installed executables only"
    );
    let dir = work.path().join("calc");
    std::fs::create_dir_all(&dir).unwrap();
    let program = dir.join("calc");
    run_ok(
        Command::new(&installed)
            .current_dir(&dir)
            .env("CARGO_TARGET_DIR", &cargo_target)
            .env("HOOKCC_CACHE_DIR", dir.join("cache"))
            .args(["--trace", "--hook-placement=source", "-O2"])
            .arg(workspace_root().join("examples/calc.c"))
            .arg("-o")
            .arg(&program),
    );
    let (trace, _) = run_traced(&dir, &program, &[]);
    let counts = call_counts(&trace, &[]);
    assert_eq!(counts.get("parse_primary"), Some(&76_000), "{counts:#?}");
    // HOOKCC_PLUGIN still wins over the source tree, and a wrong one is named.
    let out = Command::new(&installed)
        .current_dir(&dir)
        .env("HOOKCC_PLUGIN", dir.join("missing.so"))
        .args(["--trace", "-c"])
        .arg(workspace_root().join("examples/calc.c"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("missing.so (HOOKCC_PLUGIN)"),
        "{stderr}"
    );
}
