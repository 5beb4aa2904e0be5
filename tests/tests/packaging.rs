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
        "man/man1/hookcc.1",
        "bash-completion/completions/hookprof",
        "zsh/vendor-completions/_hookprof",
        "fish/vendor_completions.d/hookprof.fish",
        "doc/hookcc/README.md",
        "hookcc/gprof.gdb",
        "hookcc/baremetal-dump.sh",
    ] {
        assert!(share.join(path).is_file(), "{path} is not in the package");
    }
}

/// Issue 34: `man hookcc` exists (hookcc(1), made from `hookcc --help`), and every page a man
/// page names — hookprof(1)'s list of its subcommands' pages, every SEE ALSO — is written
/// beside it, or is clang-19's (Debian's clang-19 package). hookprof(1) named a
/// hookprof-help(1) that was never written.
#[test]
fn every_man_page_the_pages_name_exists() {
    let work = tempfile::tempdir().unwrap();
    let share = work.path().join("share");
    run_ok(
        Command::new(workspace_root().join("scripts/hookprof-docs.sh"))
            .arg(tool("hookprof"))
            .arg(&share),
    );
    let man1 = share.join("man/man1");
    let hookcc = std::fs::read_to_string(man1.join("hookcc.1")).expect("hookcc.1 is written");
    let help =
        String::from_utf8(run_ok(Command::new(tool("hookcc")).arg("--help")).stdout).unwrap();
    // The page is the help text: each option line of --help is in it (roff escapes hyphens).
    for line in help.lines().filter(|l| l.trim_start().starts_with("--")) {
        let option = line.split_whitespace().next().unwrap();
        assert!(
            hookcc.contains(&option.replace('-', "\\-")),
            "hookcc.1 lacks {option}"
        );
    }
    let mut pages = 0;
    for entry in std::fs::read_dir(&man1).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        pages += 1;
        assert!(
            text.contains(".SH \"SEE ALSO\""),
            "{}: no SEE ALSO",
            path.display()
        );
        for line in text.lines() {
            let line = line.replace("\\-", "-");
            let name = if let Some(rest) = line.strip_prefix(".BR ") {
                rest.split_whitespace().next().unwrap().to_string()
            } else if let Some(name) = line.strip_suffix("(1)").filter(|n| !n.contains(' ')) {
                name.to_string()
            } else {
                continue;
            };
            let exists = man1.join(format!("{name}.1")).is_file()
                || (name == "clang-19" && Path::new("/usr/share/man/man1/clang-19.1.gz").is_file());
            assert!(
                exists,
                "{} names {name}(1), which is not written",
                path.display()
            );
        }
    }
    assert!(pages > 10, "{pages} pages");
    assert!(!man1.join("hookprof-help.1").exists());
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

/// Whether something listens on TCP `port` (qemu's gdb stub): /proc/net/tcp{,6}, state 0A. A
/// test connection would take the stub's one connection.
fn listening(port: u16) -> bool {
    ["/proc/net/tcp", "/proc/net/tcp6"].iter().any(|table| {
        std::fs::read_to_string(table).is_ok_and(|text| {
            text.lines().skip(1).any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.len() > 3 && f[1].ends_with(&format!(":{port:04X}")) && f[3] == "0A"
            })
        })
    })
}

/// Issue 27 item 9: scripts/install.sh puts the debugger scripts in PREFIX/share/hookcc, and
/// the installed gprof.gdb's gprof_dump writes gmon.out itself (with the prefix's hookprof,
/// not one on PATH), keeping gprof.dump: a gprof build stopped in gdb, as a board is, through
/// qemu-user's gdb stub; GNU gprof reads the gmon.out, which is hookprof gprof's of the dump.
#[test]
fn install_puts_the_gdb_scripts_in_the_prefix_and_gprof_dump_writes_gmon_out() {
    let qemu = format!("qemu-{}", std::env::consts::ARCH);
    if !have_tool(&qemu, &["--version"], "qemu-user")
        || !have_tool("gdb-multiarch", &["--version"], "gdb-multiarch")
        || !have_tool("gprof", &["--version"], "binutils")
    {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let prefix = work.path().join("prefix");
    run_ok(
        Command::new(workspace_root().join("scripts/install.sh"))
            .arg(&prefix)
            .env("HOOKCC_BUILD_DIR", target_dir()),
    );
    let share = prefix.join("share/hookcc");
    let gdb_script = share.join("gprof.gdb");
    let dump_script = share.join("baremetal-dump.sh");
    assert!(gdb_script.is_file(), "{} missing", gdb_script.display());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&dump_script)
        .unwrap()
        .permissions()
        .mode();
    assert!(
        mode & 0o111 != 0,
        "{} is not executable",
        dump_script.display()
    );
    let out = Command::new(&dump_script).output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("usage:"),
        "the installed baremetal-dump.sh does not run"
    );

    let dir = work.path().join("run");
    std::fs::create_dir_all(&dir).unwrap();
    run_ok(
        Command::new(prefix.join("bin/hookcc"))
            .current_dir(&dir)
            .env("HOOKCC_CACHE_DIR", dir.join("cache"))
            .args(["--hook-runtime=gprof", "-O1", "-g", "-no-pie"])
            .arg(workspace_root().join("runtime/test/gprof/gprof_calls.c"))
            .args(["-o", "prog"]),
    );
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut target = Command::new(&qemu)
        .current_dir(&dir)
        .args(["-g", &port.to_string(), "./prog"])
        // The program's own gmon.out at exit goes elsewhere: gmon.out is gdb's.
        .env("HOOKCC_GMON_OUT", dir.join("at-exit.out"))
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..100 {
        if listening(port) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let gdb = Command::new("timeout")
        .current_dir(&dir)
        .env("PATH", "/usr/bin:/bin")
        .env_remove("HOOKPROF")
        .args(["120", "gdb-multiarch", "-batch", "-nx", "-x"])
        .arg(&gdb_script)
        .args(["-ex", "file prog", "-ex"])
        .arg(format!("target remote localhost:{port}"))
        .args([
            "-ex",
            "break spin",
            "-ex",
            "continue",
            "-ex",
            "gprof_dump",
            "-ex",
            "continue",
        ])
        .output()
        .unwrap();
    let status = target.wait().unwrap();
    let gdb_out = String::from_utf8_lossy(&gdb.stdout);
    assert!(
        gdb.status.success() && status.success(),
        "gdb {:?}, program {status:?}\n{gdb_out}\n{}",
        gdb.status,
        String::from_utf8_lossy(&gdb.stderr)
    );
    assert!(
        gdb_out.contains("gprof: wrote gmon.out from gprof.dump (kept)"),
        "{gdb_out}"
    );
    assert!(dir.join("gprof.dump").is_file(), "gprof.dump not kept");
    let flat = run_ok(
        Command::new("gprof")
            .current_dir(&dir)
            .args(["-b", "-p", "prog", "gmon.out"]),
    );
    let flat = String::from_utf8_lossy(&flat.stdout);
    for (function, calls) in [("work", 40), ("leaf", 120), ("twice", 20)] {
        assert!(
            flat.lines().any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.last() == Some(&function) && f.len() == 7 && f[3] == calls.to_string()
            }),
            "{function}: {calls} calls expected in\n{flat}"
        );
    }
    run_ok(Command::new(tool("hookprof")).current_dir(&dir).args([
        "gprof",
        "gprof.dump",
        "--exe",
        "prog",
        "-o",
        "converted.out",
    ]));
    assert_eq!(
        std::fs::read(dir.join("gmon.out")).unwrap(),
        std::fs::read(dir.join("converted.out")).unwrap()
    );
}
