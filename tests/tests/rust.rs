//! Rust end to end: the Cargo project tests/rust/calls built with `cargo hookcc` and with
//! `RUSTFLAGS="$(hookcc --rustflags --trace)"`, run, its trace decoded by hookprof; call counts
//! known by construction (see tests/rust/calls/src/main.rs).

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use hookcc_tests::*;

/// Counts of tests/rust/calls, the same at every optimization level.
const CALLS_COUNTS: &[(&str, u64)] = &[
    ("main", 1),
    ("calls::main", 1),
    ("calls::fib", 177),
    ("calls::total_area", 1),
    ("calls::total_area::{closure#0}", 5),
    ("<calls::Square as calls::Shape>::area", 3),
    ("<calls::Circle as calls::Shape>::area", 2),
    ("calls::largest::<i32>", 2),
    ("calls::largest::<f64>", 1),
    ("calls::guarded", 1),
    ("calls::guarded::{closure#0}", 1),
    ("calls::descend", 4),
    // The panic hook installed by main, run once by the panic.
    ("calls::main::{closure#0}", 1),
];

const CALLS_OUTPUT: &str = "fib=55 area=29 largest=9,-2,1.5 caught=true\n";

fn expect_counts(counts: &BTreeMap<String, u64>, context: &str) {
    for (function, calls) in CALLS_COUNTS {
        assert_eq!(
            counts.get(*function),
            Some(calls),
            "{context}: calls of `{function}`; whole report: {counts:#?}"
        );
    }
}

fn calls_project(dir: &Path) -> std::path::PathBuf {
    copy_cargo_project(&workspace_root().join("tests/rust/calls"), dir)
}

#[test]
fn cargo_hookcc_run_traces_a_rust_program_at_debug_with_exact_counts() {
    let dir = tempfile::tempdir().unwrap();
    let project = calls_project(dir.path());
    let trace = dir.path().join("debug.hktrace");
    let out = run_ok(
        cargo_with_hookcc(&project)
            .args(["hookcc", "run", "--trace", "--quiet"])
            .env("HOOKCC_OUTPUT", &trace),
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), CALLS_OUTPUT);
    // The instrumented build has a directory of its own.
    let host = rust_host();
    assert!(
        project
            .join(format!("target/hookcc/{host}/debug/calls"))
            .is_file(),
        "cargo hookcc should build into target/hookcc/{host}/"
    );
    // The panic unwound through descend ×4 and the closure: each exit is recorded.
    assert_balanced(&trace);
    expect_counts(&call_counts(&trace, &[]), "cargo hookcc run (debug)");
    // Issue 34: read at 100 columns, every row on its line, the name last (std's generics
    // elided where long, short ones kept to tell instances apart).
    let text = assert_report_fits(&trace, 100);
    assert!(
        text.contains("  calls::largest::<i32>\n")
            && text.contains("  <calls::Square as calls::Shape>::area\n"),
        "{text}"
    );
}

#[test]
fn rustflags_from_hookcc_trace_a_release_build_with_exact_counts() {
    let dir = tempfile::tempdir().unwrap();
    let project = calls_project(dir.path());
    let out =
        run_ok(Command::new(tool("hookcc")).args(["--rustflags", "--trace", SOURCE_PLACEMENT]));
    let rustflags = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let host = rust_host();
    run_ok(
        cargo_with_hookcc(&project)
            .args(["build", "--release", "--quiet", "--target", &host])
            .env("RUSTC_BOOTSTRAP", "1")
            .env("RUSTFLAGS", &rustflags),
    );
    let program = project.join(format!("target/{host}/release/calls"));
    let (trace, stdout) = run_traced(dir.path(), &program, &[]);
    assert_eq!(stdout, CALLS_OUTPUT);
    assert_balanced(&trace);
    expect_counts(&call_counts(&trace, &[]), "RUSTFLAGS build (release)");
}

#[test]
fn rustc_with_an_llvm_without_plugin_is_refused_naming_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("rustc");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'rustc 9.99.0'\necho 'host: x86_64-unknown-linux-gnu'\necho 'LLVM version: 23.1.0'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = Command::new(tool("hookcc"))
        .args(["--rustflags", "--trace"])
        .env("RUSTC", &fake)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains("uses LLVM 23") && stderr.contains("LLVM 19, 22"),
        "the error should name the LLVM found and the supported ones: {stderr}"
    );
}

#[test]
fn the_llvm22_plugin_is_built() {
    // scripts/test.sh builds it (scripts/build-plugins.sh); without it every Rust test fails
    // with hookcc's own message, which this states once.
    let plugin = target_dir().join("libhookcc_pass_llvm22.so");
    assert!(
        plugin.is_file(),
        "{} is missing: run scripts/build-plugins.sh",
        plugin.display()
    );
}

#[test]
fn mixed_rust_and_c_example_gives_one_trace_with_both_languages() {
    let dir = tempfile::tempdir().unwrap();
    let project = copy_cargo_project(&workspace_root().join("examples/rust"), dir.path());
    let trace = dir.path().join("mixed.hktrace");
    let out = run_ok(
        cargo_with_hookcc(&project)
            .args(["hookcc", "run", "--trace", "--quiet"])
            .env("HOOKCC_OUTPUT", &trace),
    );
    // The CRCs are zlib's (python3 -c "import zlib; print('%08x' % zlib.crc32(b'hook'))").
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "crc32(hook) = a4584355\ncrc32(cc) = dbb21a79\ncrc32(rust) = e13282a0\n\
         digit sum of 2026 = 10\n"
    );
    assert_balanced(&trace);
    let counts = call_counts(&trace, &[]);
    for (function, calls) in [
        // Rust
        ("mixed::main", 1),
        ("mixed::checksum", 3),
        ("mixed::visit_digit", 4),
        // C, compiled by the cc crate with CC=hookcc
        ("crc32", 3),
        ("crc_byte", 10),
        ("for_each_digit", 4),
    ] {
        assert_eq!(
            counts.get(function),
            Some(&calls),
            "calls of `{function}`; whole report: {counts:#?}"
        );
    }
}

/// Copies tests/rust/<name> into `dir`, its `hookcc` dependency pointed at this repository's
/// crate.
fn project_using_hookcc_crate(name: &str, dir: &Path) -> std::path::PathBuf {
    let project = copy_cargo_project(&workspace_root().join("tests/rust").join(name), dir);
    let manifest = project.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let crate_dir = workspace_root().join("rust/hookcc");
    assert!(text.contains("\"../../../rust/hookcc\""), "{text}");
    std::fs::write(
        &manifest,
        text.replace(
            "\"../../../rust/hookcc\"",
            &format!("{:?}", crate_dir.display().to_string()),
        ),
    )
    .unwrap();
    project
}

/// Builds tests/rust/marks with `cargo hookcc run --trace --hook-exclude=marks::noi*` and
/// `extra` cargo arguments.
fn run_marks(dir: &Path, extra: &[&str]) -> BTreeMap<String, u64> {
    let project = project_using_hookcc_crate("marks", dir);
    let trace = dir.join("marks.hktrace");
    let out = run_ok(
        cargo_with_hookcc(&project)
            .args([
                "hookcc",
                "run",
                "--trace",
                SOURCE_PLACEMENT,
                "--hook-exclude=marks::noi*",
                "--quiet",
            ])
            .args(extra)
            .env("HOOKCC_OUTPUT", &trace),
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "sum=47 generic=1,2 tracing=true file=true\n"
    );
    assert_balanced(&trace);
    call_counts(&trace, &[])
}

#[test]
fn no_hooks_attribute_and_hook_exclude_leave_out_exactly_the_marked_functions() {
    for profile in [&[][..], &["--release"][..]] {
        let dir = tempfile::tempdir().unwrap();
        let counts = run_marks(dir.path(), profile);
        let context = format!("cargo hookcc run {profile:?}");
        for (function, calls) in [("marks::main", 1), ("marks::helper", 3), ("marks::loud", 5)] {
            assert_eq!(
                counts.get(function),
                Some(&calls),
                "{context}: calls of `{function}`; whole report: {counts:#?}"
            );
        }
        // #[hookcc::no_hooks]: the function, its closure (in another codegen unit at debug),
        // both generic instances, and the hookcc crate's own wrappers; --hook-exclude: noisy.
        for name in counts.keys() {
            assert!(
                !(name.starts_with("marks::quiet")
                    || name.starts_with("marks::noisy")
                    || name.starts_with("hookcc::")),
                "{context}: `{name}` should have no hooks; whole report: {counts:#?}"
            );
        }
    }
}

/// True if a row of tests/rust/calls's report is the crate's own code (its functions, its impls,
/// the C `main` rustc generates), judged from the printed name.
fn is_calls_own_row(name: &str) -> bool {
    name == "main" || name.starts_with("calls::") || name.starts_with("<calls::")
}

#[test]
fn hook_exclude_crate_leaves_out_std_core_and_alloc_and_keeps_own_counts() {
    for profile in [&[][..], &["--release", SOURCE_PLACEMENT][..]] {
        let run = |extra: &[&str], name: &str| {
            let dir = tempfile::tempdir().unwrap();
            let project = calls_project(dir.path());
            let trace = dir.path().join(format!("{name}.hktrace"));
            let out = run_ok(
                cargo_with_hookcc(&project)
                    .args(["hookcc", "run", "--trace", "--quiet"])
                    .args(profile)
                    .args(extra)
                    .env("HOOKCC_OUTPUT", &trace)
                    .env("HOOKCC_MAX_BYTES", "64000000"),
            );
            assert_eq!(String::from_utf8_lossy(&out.stdout), CALLS_OUTPUT);
            assert_balanced(&trace);
            call_counts(&trace, &[])
        };
        let context = format!("cargo hookcc run {profile:?}");
        let all = run(&[], "all");
        let others: Vec<&String> = all.keys().filter(|n| !is_calls_own_row(n)).collect();
        assert!(
            !others.is_empty(),
            "{context}: without the option std's instantiated code should have rows: {all:#?}"
        );
        let own = run(
            &[
                "--hook-exclude-crate=std,core",
                "--hook-exclude-crate=alloc",
            ],
            "own",
        );
        expect_counts(&own, &format!("{context} --hook-exclude-crate"));
        for (name, calls) in &own {
            assert!(
                is_calls_own_row(name),
                "{context}: `{name}` is not the crate's own code; whole report: {own:#?}"
            );
            assert_eq!(all.get(name), Some(calls), "{context}: calls of `{name}`");
        }
    }
}

#[test]
fn hook_exclude_works_on_c_compiled_by_cc_build_scripts() {
    let dir = tempfile::tempdir().unwrap();
    let project = copy_cargo_project(&workspace_root().join("examples/rust"), dir.path());
    let trace = dir.path().join("mixed.hktrace");
    run_ok(
        cargo_with_hookcc(&project)
            .args([
                "hookcc",
                "run",
                "--trace",
                "--hook-exclude=crc_byte",
                "--quiet",
            ])
            .env("HOOKCC_OUTPUT", &trace),
    );
    let counts = call_counts(&trace, &[]);
    assert_eq!(counts.get("crc32"), Some(&3), "{counts:#?}");
    assert_eq!(counts.get("mixed::checksum"), Some(&3), "{counts:#?}");
    assert_eq!(counts.get("crc_byte"), None, "excluded: {counts:#?}");
}

#[test]
fn ti_name_hooks_receive_rust_paths() {
    for profile in [&[][..], &["--release"][..]] {
        let dir = tempfile::tempdir().unwrap();
        let project = copy_cargo_project(&workspace_root().join("tests/rust/ti"), dir.path());
        let out = run_ok(
            cargo_with_hookcc(&project)
                .args([
                    "hookcc",
                    "run",
                    "--entry_hook=on_entry",
                    "--entry_parm=name",
                    "--exit_hook=on_exit",
                    "--exit_parm=name",
                    "--quiet",
                ])
                .args(profile),
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "total=68\n");
        let stderr = String::from_utf8_lossy(&out.stderr);
        let count = |line: &str| stderr.lines().filter(|l| *l == line).count();
        for (name, calls) in [
            ("ti::main", 1),
            ("ti::parse::number", 3),
            ("ti::parse::digit", 5),
            ("main", 1),
        ] {
            for prefix in ["> ", "< "] {
                assert_eq!(
                    count(&format!("{prefix}{name}")),
                    calls,
                    "{profile:?}: `{prefix}{name}` lines in the hooks' output:\n{stderr}"
                );
            }
        }
        // Every name is a demangled path, none a symbol; the hooks themselves have no hooks.
        assert!(
            !stderr
                .lines()
                .any(|l| l.contains("_R") || l.ends_with(" on_entry")),
            "{stderr}"
        );
    }
}

/// `lr=<hex>` → `lr=ADDR`, as the C tests normalize NITRO dumps.
fn without_addresses(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("lr=") {
        out.push_str(&rest[..at + 3]);
        out.push_str("ADDR");
        rest = rest[at + 3..].trim_start_matches(|c: char| c.is_ascii_hexdigit());
    }
    out.push_str(rest);
    out
}

/// Runs tests/rust/nitro with `cargo hookcc run <dialect> --hook-runtime=calltrace`.
fn run_nitro(dialect: &str, extra: &[&str]) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let project = project_using_hookcc_crate("nitro", dir.path());
    let out = run_ok(
        cargo_with_hookcc(&project)
            .args([
                "hookcc",
                "run",
                dialect,
                "--hook-runtime=calltrace",
                "--quiet",
            ])
            .args(extra),
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        without_addresses(&String::from_utf8_lossy(&out.stderr)),
    )
}

#[test]
fn nitro_default_off_dialect_hooks_only_profile_on_functions() {
    let (stdout, dump) = run_nitro("--dialect=nitro", &[]);
    assert_eq!(stdout, "263\n");
    assert_eq!(
        dump,
        "OS_DumpCallTrace: lr=ADDR\n\
         nitro::test3: lr=ADDR, r0=00000103, r1=00000000, r2=00000000, r3=00000000\n\
         nitro::test2: lr=ADDR, r0=00000101, r1=00000000, r2=00000000, r3=00000000\n"
    );
}

#[test]
fn nitro_profile_call_trace_dump_of_rust_code() {
    for profile in [&[][..], &["--release"][..]] {
        let (stdout, dump) = run_nitro("-profile", profile);
        assert_eq!(stdout, "263\n");
        // seeds/nitro-sdk-profiler.txt §3.5.1, with Rust paths for the function names.
        assert_eq!(
            dump,
            "OS_DumpCallTrace: lr=ADDR\n\
             nitro::test3: lr=ADDR, r0=00000103, r1=00000000, r2=00000000, r3=00000000\n\
             nitro::test2: lr=ADDR, r0=00000101, r1=00000000, r2=00000000, r3=00000000\n\
             nitro::test1: lr=ADDR, r0=00000100, r1=00000000, r2=00000000, r3=00000000\n",
            "{profile:?}"
        );
    }
}

#[test]
fn nitro_function_cost_statistics_of_rust_code() {
    for profile in [&[][..], &["--release"][..]] {
        let dir = tempfile::tempdir().unwrap();
        let project = project_using_hookcc_crate("cost", dir.path());
        let out = run_ok(
            cargo_with_hookcc(&project)
                .args([
                    "hookcc",
                    "run",
                    "-profile",
                    "--hook-runtime=functioncost",
                    "--quiet",
                ])
                .args(profile),
        );
        let dump = String::from_utf8_lossy(&out.stderr);
        // seeds/nitro-sdk-profiler.txt §4.5: one line per measured function, no other (the
        // hookcc crate's wrappers and `work` have no hooks).
        let mut costs = Vec::new();
        let mut shape = String::new();
        for line in dump.lines() {
            let (head, cost) = line
                .rsplit_once(", cost ")
                .unwrap_or_else(|| panic!("{profile:?}: not a statistics line: {line}\n{dump}"));
            costs.push(cost.parse::<u64>().expect("cost is a number"));
            shape.push_str(&format!("{head}, cost C\n"));
        }
        assert_eq!(
            shape,
            "cost::test1: count 1, cost C\ncost::test2: count 3, cost C\n\
             cost::test3: count 4, cost C\n",
            "{profile:?}: {dump}"
        );
        assert!(
            costs[1] > costs[0],
            "{profile:?}: test2 (24 units of work) should cost more than test1 (1): {dump}"
        );
    }
}

#[test]
fn legacy_symbol_mangling_is_traced_and_demangled_too() {
    let dir = tempfile::tempdir().unwrap();
    let project = calls_project(dir.path());
    let trace = dir.path().join("legacy.hktrace");
    // cargo hookcc extends the user's RUSTFLAGS.
    let out = run_ok(
        cargo_with_hookcc(&project)
            .args(["hookcc", "run", "--trace", "--quiet"])
            .env(
                "RUSTFLAGS",
                "-Csymbol-mangling-version=legacy -Zunstable-options",
            )
            .env("HOOKCC_OUTPUT", &trace),
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), CALLS_OUTPUT);
    assert_balanced(&trace);
    let counts = call_counts(&trace, &[]);
    // Legacy names have no generic arguments, and closures are `{{closure}}`.
    for (function, calls) in [
        ("calls::fib", 177),
        ("calls::descend", 4),
        ("calls::total_area::{{closure}}", 5),
        ("<calls::Square as calls::Shape>::area", 3),
        ("<calls::Circle as calls::Shape>::area", 2),
        ("calls::guarded::{{closure}}", 1),
    ] {
        assert_eq!(
            counts.get(function),
            Some(&calls),
            "calls of `{function}`; whole report: {counts:#?}"
        );
    }
}

/// Counts of tests/rust/nocore, the same at debug and release (see its main.rs).
const NOCORE_COUNTS: &[(&str, u64)] = &[
    ("main", 1),
    ("nocore::fib", 177),
    ("nocore::twice::<i32>", 2),
    ("nocore::twice::<i64>", 1),
    ("<i32 as nocore::Add>::add", 2),
    ("<i64 as nocore::Add>::add", 1),
    ("nocore::apply", 3),
    ("nocore::square", 2),
    ("nocore::negate", 1),
];

#[test]
fn cargo_hookcc_cross_builds_rust_for_aarch64_and_the_trace_decodes_on_the_host() {
    // rustup cannot fetch aarch64's std on this machine kind (static.rust-lang.org is outside
    // the reachable network), so the crate is `#![no_core]`: rustc builds it for any target its
    // LLVM has. What is tested is the cross path itself: the LLVM 22 plugin on aarch64 IR,
    // `cargo hookcc --target`, hookcc linking the runtime built for that target.
    const SYSROOT: &str = "/usr/aarch64-linux-gnu";
    let runner_ok = Command::new("qemu-aarch64")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !(runner_ok && Path::new(SYSROOT).join("lib").is_dir()) {
        assert!(
            !in_ci(),
            "CI must have qemu-user and libc6-dev-arm64-cross (scripts/setup.sh)"
        );
        eprintln!("skipping: qemu-aarch64 or {SYSROOT} missing (run scripts/setup.sh)");
        return;
    }
    let target = "aarch64-unknown-linux-gnu";
    for profile in ["debug", "release"] {
        let dir = tempfile::tempdir().unwrap();
        let project = copy_cargo_project(&workspace_root().join("tests/rust/nocore"), dir.path());
        let trace = dir.path().join("nocore.hktrace");
        let mut cmd = cargo_with_hookcc(&project);
        cmd.args([
            "hookcc",
            "run",
            "--trace",
            SOURCE_PLACEMENT,
            "--quiet",
            "--target",
            target,
        ])
        .env(
            "CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER",
            format!("qemu-aarch64 -L {SYSROOT}"),
        )
        .env("HOOKCC_OUTPUT", &trace);
        if profile == "release" {
            cmd.arg("--release");
        }
        // main returns the number of the first wrong result: 0 = every check passed.
        run_ok(&mut cmd);
        let program = project.join(format!("target/hookcc/{target}/{profile}/nocore"));
        let elf = std::fs::read(&program).unwrap_or_else(|e| panic!("{}: {e}", program.display()));
        // ELF e_machine (bytes 18-19, little-endian) is EM_AARCH64 = 183.
        assert_eq!(u16::from_le_bytes([elf[18], elf[19]]), 183, "{profile}");
        assert_balanced(&trace);
        let counts = call_counts(&trace, &["--exe", program.to_str().unwrap()]);
        for (function, calls) in NOCORE_COUNTS {
            assert_eq!(
                counts.get(*function),
                Some(calls),
                "{profile}: calls of `{function}`; whole report: {counts:#?}"
            );
        }
        assert_eq!(counts.len(), NOCORE_COUNTS.len(), "{profile}: {counts:#?}");
    }
}

/// Calls per function of `object` in a callgrind output file (`--compress-strings=no`): the
/// sum of the `calls=` lines under each `cfn=` whose callee is in that object (the dynamic
/// linker has a `check_match` too). A callee's object is the `cob=` given with the call, else
/// the caller's `ob=`. callgrind names the second level of a recursion `name'2`: counted as
/// `name`.
fn callgrind_calls(text: &str, object: &Path) -> BTreeMap<String, u64> {
    let object = object.to_str().unwrap();
    let mut counts = BTreeMap::new();
    let (mut caller_object, mut callee_object) = (String::new(), None::<String>);
    let mut callee: Option<String> = None;
    for line in text.lines() {
        if let Some(path) = line.strip_prefix("ob=") {
            caller_object = path.trim().to_string();
        } else if let Some(path) = line.strip_prefix("cob=") {
            callee_object = Some(path.trim().to_string());
        } else if let Some(name) = line.strip_prefix("cfn=") {
            let name = name.trim();
            let name = match name.rsplit_once('\'') {
                Some((base, level)) if level.chars().all(|c| c.is_ascii_digit()) => base,
                _ => name,
            };
            let in_object = callee_object.as_deref().unwrap_or(&caller_object) == object;
            callee = in_object.then(|| name.to_string());
        } else if let Some(rest) = line.strip_prefix("calls=") {
            let n: u64 = rest.split_whitespace().next().unwrap().parse().unwrap();
            if let Some(name) = callee.take() {
                *counts.entry(name).or_insert(0) += n;
            }
            callee_object = None;
        }
    }
    counts
}

#[test]
fn a_sys_style_build_of_lua_and_cpp_is_traced_with_counts_equal_to_callgrinds() {
    // Lua 5.4 from lua-src's bundled sources and a C++ file, both compiled by cc in the build
    // script, under a Rust program. hookcc's counts of Lua's C functions (release: -O2, hooks
    // placed before inlining) are compared with callgrind's on a plain debug build (-O0: no
    // inlining, every call is a call instruction). Both builds fix Lua's string-hash seed (it
    // mixes the time and addresses), so its internal calls are the same in both.
    let dir = tempfile::tempdir().unwrap();
    let project = copy_cargo_project(&workspace_root().join("tests/rust/sys"), dir.path());
    let cflags = "-Dluai_makeseed(L)=0x2026u";
    let expected_stdout = "lua: 6457\ngeo: 210\n";

    let trace = dir.path().join("sys.hktrace");
    let out = run_ok(
        cargo_with_hookcc(&project)
            .args([
                "hookcc",
                "run",
                "--trace",
                SOURCE_PLACEMENT,
                "--release",
                "--quiet",
            ])
            .env("CFLAGS", cflags)
            .env("HOOKCC_OUTPUT", &trace),
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected_stdout);
    assert_balanced(&trace);
    let report = run_ok(hookprof().arg("report").arg(&trace).arg("--format=csv"));
    let mut traced: BTreeMap<String, u64> = BTreeMap::new();
    for row in parse_report_csv(&String::from_utf8_lossy(&report.stdout)) {
        // Two static functions of one name in different files are two rows.
        *traced.entry(row.function).or_insert(0) += row.calls;
    }
    // Rust and C++ names, demangled; counts by construction.
    for (function, calls) in [
        ("sys::main", 1),
        ("sys::run_lua", 1),
        ("geo_sum", 1),
        ("geo::square(int)", 5),
        ("geo::Grid::cell(int, int) const", 5),
        ("luaL_newstate", 1),
        ("lua_close", 1),
    ] {
        assert_eq!(
            traced.get(function),
            Some(&calls),
            "calls of `{function}`; whole report: {traced:#?}"
        );
    }

    // The plain build, under callgrind: clang-19 (cc's default C++ compiler would be g++,
    // which scripts/setup.sh does not install).
    run_ok(
        cargo_with_hookcc(&project)
            .args(["build", "--quiet"])
            .env("CFLAGS", cflags)
            .env("CC", "clang-19")
            .env("CXX", "clang++-19"),
    );
    let plain = project.join("target/debug/sys");
    let cg_out = dir.path().join("callgrind.out");
    let out = run_ok(
        Command::new("valgrind")
            .arg("--tool=callgrind")
            .arg(format!("--callgrind-out-file={}", cg_out.display()))
            .args(["--compress-strings=no", "--compress-pos=no"])
            .arg(&plain),
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), expected_stdout);
    let reference = callgrind_calls(
        &std::fs::read_to_string(&cg_out).unwrap(),
        &plain.canonicalize().unwrap(),
    );

    // Every C function hookcc traced (C names: no `::`, no generics), with callgrind's count.
    let c_functions: Vec<(&String, &u64)> = traced
        .iter()
        .filter(|(name, _)| name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    assert!(
        c_functions.len() > 150,
        "Lua's functions should be in the trace: {traced:#?}"
    );
    let differing: Vec<String> = c_functions
        .iter()
        .filter(|(name, calls)| reference.get(name.as_str()) != Some(calls))
        .map(|(name, calls)| {
            format!(
                "{name}: hookcc {calls}, callgrind {:?}",
                reference.get(name.as_str())
            )
        })
        .collect();
    assert!(
        differing.is_empty(),
        "{} of {} C functions differ from callgrind's counts:\n{}",
        differing.len(),
        c_functions.len(),
        differing.join("\n")
    );
}

#[test]
fn hook_exclude_and_include_match_cpp_names_demangled() {
    // The name filters are the pass's, for every language: C++ functions match by their
    // demangled name as hookprof prints it (and by their symbol).
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("geo.cpp");
    std::fs::write(
        &source,
        "namespace geo {\n\
         int square(int x) { return x * x; }\n\
         struct Grid { int width; int cell(int r, int c) const { return r * width + c; } };\n\
         }\n\
         int main() { geo::Grid g{10}; int s = 0;\n\
         for (int i = 0; i < 3; i++) s += geo::square(i) + g.cell(i, 1);\n\
         return s == 38 ? 0 : 1; }\n",
    )
    .unwrap();
    for (filter, expected) in [
        (
            "--hook-exclude=geo::square(int)",
            &[("main", 1), ("geo::Grid::cell(int, int) const", 3)][..],
        ),
        (
            "--hook-include=geo::*",
            &[
                ("geo::square(int)", 3),
                ("geo::Grid::cell(int, int) const", 3),
            ][..],
        ),
        (
            "--hook-exclude=*const",
            &[("main", 1), ("geo::square(int)", 3)][..],
        ),
    ] {
        let program = dir.path().join("geo");
        run_ok(
            hookcc(dir.path(), true)
                .args(["--trace", SOURCE_PLACEMENT, "-O2", filter])
                .arg(&source)
                .arg("-o")
                .arg(&program),
        );
        let (trace, _) = run_traced(dir.path(), &program, &[]);
        let counts = call_counts(&trace, &[]);
        let expected: BTreeMap<String, u64> =
            expected.iter().map(|(f, n)| (f.to_string(), *n)).collect();
        assert_eq!(counts, expected, "{filter}");
    }
}

/// Issue 27 item 1: a hookcc whose build has no LLVM 22 plugin (the README's first command
/// used to make one) builds it on the first `cargo hookcc`, says so once, and the next run
/// finds it. The build tree is a copy of this one's executables and LLVM 19 plugins, its
/// `llvm22` cargo directory a link to this one's, so cargo's build is the real one with
/// nothing left to compile.
#[test]
fn cargo_hookcc_builds_the_missing_llvm22_plugin_once_on_first_use() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("target");
    let profile = target.join(target_dir().file_name().unwrap());
    std::fs::create_dir_all(&profile).unwrap();
    // What cargo writes at the top of every target directory it creates.
    std::fs::write(
        target.join("CACHEDIR.TAG"),
        "Signature: 8a477f597d28d172789f06886806bc55\n",
    )
    .unwrap();
    for file in [
        "hookcc",
        "cargo-hookcc",
        "libhookcc_pass.so",
        "libhookcc_clang.so",
    ] {
        std::fs::copy(tool(file), profile.join(file)).unwrap();
    }
    std::os::unix::fs::symlink(
        target_dir().parent().unwrap().join("llvm22"),
        target.join("llvm22"),
    )
    .unwrap();
    let project = calls_project(&dir.path().join("p"));
    let run = |n: u32| {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let mut dirs = vec![profile.clone()];
        dirs.extend(std::env::split_paths(&path));
        let trace = dir.path().join(format!("run{n}.hktrace"));
        let out = run_ok(
            cargo_with_hookcc(&project)
                .args(["hookcc", "run", "--quiet"])
                .env("PATH", std::env::join_paths(dirs).unwrap())
                .env("HOOKCC_OUTPUT", &trace),
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), CALLS_OUTPUT);
        expect_counts(
            &call_counts(&trace, &[]),
            "cargo hookcc with a plugin built on first use",
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let first = run(1);
    assert_eq!(
        first
            .matches("the pass plugin for it is not built yet: building it")
            .count(),
        1,
        "the first run should say once that it builds the plugin: {first}"
    );
    assert!(profile.join("libhookcc_pass_llvm22.so").is_file());
    let second = run(2);
    assert!(
        !second.contains("building it"),
        "the second run should find the plugin: {second}"
    );
}

/// The `.hktrace` files under `dir` (not descending into `target/`).
fn traces_in(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "hktrace"))
        .collect()
}

/// Issue 27 item 3: `cargo hookcc test` and `run` put the traces of the programs they run under
/// `target/hookcc/traces/` and list them at the end; the C program a build script compiles
/// with $CC $CFLAGS and runs in the source directory (a `configure`'s way) writes none; a
/// HOOKCC_OUTPUT of the user's wins.
#[test]
fn cargo_hookcc_traces_land_under_the_target_directory_and_build_scripts_are_not_traced() {
    let dir = tempfile::tempdir().unwrap();
    let project = copy_cargo_project(&workspace_root().join("tests/rust/probe"), dir.path());
    let traces = project.join("target/hookcc/traces");
    let out = run_ok(
        cargo_with_hookcc(&project)
            .args(["hookcc", "test", "--quiet"])
            .env_remove("HOOKCC_OUTPUT"),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        traces_in(&project),
        [] as [std::path::PathBuf; 0],
        "{stderr}"
    );
    let written = traces_in(&traces);
    assert_eq!(
        written.len(),
        1,
        "one test binary, one trace: {written:?}\n{stderr}"
    );
    let name = written[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert!(name.starts_with("probe-"), "{name}");
    assert!(
        stderr.contains(&written[0].display().to_string()),
        "listed at the end: {stderr}"
    );
    assert_eq!(
        call_counts(&written[0], &[]).get("probe::tests::doubles"),
        Some(&1)
    );

    let out = run_ok(
        cargo_with_hookcc(&project)
            .args(["hookcc", "run", "--quiet"])
            .env_remove("HOOKCC_OUTPUT"),
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "double(21) = 42\n");
    let run: Vec<_> = traces_in(&traces)
        .into_iter()
        .filter(|p| !written.contains(p))
        .collect();
    assert_eq!(run.len(), 1, "{run:?}");
    assert!(run[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("probe."));
    assert_eq!(call_counts(&run[0], &[]).get("probe::double"), Some(&1));
    assert_eq!(traces_in(&project), [] as [std::path::PathBuf; 0]);

    // The user's HOOKCC_OUTPUT applies to everything, the build script's program too.
    let mine = dir.path().join("mine.hktrace");
    std::fs::remove_dir_all(project.join("target")).unwrap();
    run_ok(
        cargo_with_hookcc(&project)
            .args(["hookcc", "run", "--quiet"])
            .env("HOOKCC_OUTPUT", &mine),
    );
    let counts = call_counts(&mine, &[]);
    assert_eq!(counts.get("probe::double"), Some(&1), "{counts:?}");
}

/// Issue 23, the recording modes on a Rust crate with std threads (tests/rust/threads): the
/// trace, a ring big enough for the whole run, and the profile give the same exact counts; a
/// small ring keeps only the last calls, with nothing reported as an error.
#[test]
fn recording_modes_give_a_rust_programs_threads_the_same_counts() {
    let dir = tempfile::tempdir().unwrap();
    let project = copy_cargo_project(&workspace_root().join("tests/rust/threads"), dir.path());
    run_ok(cargo_with_hookcc(&project).args(["hookcc", "build", "--trace", "--quiet"]));
    let program = project.join(format!("target/hookcc/{}/debug/threads", rust_host()));
    let rounds = 200u64;
    let runs = std::cell::Cell::new(0);
    let run = |mode: &str, extra: &[(&str, &str)]| -> std::path::PathBuf {
        runs.set(runs.get() + 1);
        let trace = dir.path().join(format!("{mode}-{}.hktrace", runs.get()));
        let mut cmd = Command::new(&program);
        cmd.arg(rounds.to_string())
            .env("HOOKCC_OUTPUT", &trace)
            .env("HOOKCC_MODE", mode);
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let out = run_ok(&mut cmd);
        assert!(String::from_utf8_lossy(&out.stdout).starts_with("sum="));
        trace
    };
    let expected = [
        ("threads::main", 1),
        ("threads::rounds", 5),
        ("threads::step", 5 * rounds),
        ("threads::leaf", 10 * rounds),
        ("threads::fib", 5 * rounds / 10 * 465),
    ];
    let check = |trace: &Path, context: &str| {
        let counts = call_counts(trace, &[]);
        for (function, calls) in expected {
            assert_eq!(
                counts.get(function),
                Some(&calls),
                "{context}: calls of `{function}`; whole report: {counts:#?}"
            );
        }
    };
    let trace = run("trace", &[]);
    check(&trace, "HOOKCC_MODE=trace");
    assert_balanced(&trace);
    let ring = run("ring", &[("HOOKCC_RING_BYTES", "64M")]);
    check(&ring, "HOOKCC_MODE=ring, 64 MiB rings");
    let profile = run("profile", &[("HOOKCC_BUFFER_RECORDS", "1024")]);
    check(&profile, "HOOKCC_MODE=profile");
    assert_balanced(&profile);
    // Each worker thread keeps its own tree: per thread, a fifth of the calls.
    let csv = run_ok(
        hookprof()
            .arg("report")
            .arg(&profile)
            .args(["--format=csv", "--per-thread"]),
    )
    .stdout;
    let per_thread: Vec<(Option<String>, u64)> = parse_report_csv(&String::from_utf8_lossy(&csv))
        .into_iter()
        .filter(|r| r.function == "threads::step")
        .map(|r| (r.thread, r.calls))
        .collect();
    assert_eq!(per_thread.len(), 5, "{per_thread:?}");
    assert!(
        per_thread.iter().all(|(_, c)| *c == rounds),
        "{per_thread:?}"
    );

    // A duration threshold: the same report (from the threads' trees), few records kept.
    let short = run("trace", &[("HOOKCC_MIN_DURATION", "1ms")]);
    check(&short, "HOOKCC_MIN_DURATION=1ms");
    assert!(
        std::fs::metadata(&short).unwrap().len() * 4 < std::fs::metadata(&trace).unwrap().len(),
        "the threshold's file is a fraction of the trace"
    );
    // A trigger by the symbol's name as nm prints it (v0 or legacy mangling): only fib's calls.
    // nm and nm -C list the same symbols in the same order.
    let (mangled, demangled) = (
        run_ok(Command::new("nm").arg(&program)).stdout,
        run_ok(Command::new("nm").arg("-C").arg(&program)).stdout,
    );
    let fib = String::from_utf8_lossy(&mangled)
        .lines()
        .zip(String::from_utf8_lossy(&demangled).lines())
        .find(|(_, d)| d.ends_with(" threads::fib") || d.contains(" threads::fib::h"))
        .and_then(|(m, _)| m.split_whitespace().nth(2).map(String::from))
        .expect("threads::fib in nm's output");
    let only_fib = run("trace", &[("HOOKCC_TRACE_START", fib.as_str())]);
    let counts = call_counts(&only_fib, &[]);
    // fib's calls and what they call (u64::from at each of fib(12)'s 233 leaves).
    assert_eq!(
        counts.into_iter().collect::<Vec<_>>(),
        vec![
            (
                "<u64 as core::convert::From<u32>>::from".to_string(),
                5 * rounds / 10 * 233
            ),
            ("threads::fib".to_string(), 5 * rounds / 10 * 465)
        ],
        "HOOKCC_TRACE_START={fib}"
    );

    // 4 KiB rings: 256 records a thread at the end, no unmatched exit reported.
    let small = run("ring", &[("HOOKCC_RING_BYTES", "4K")]);
    let out = run_ok(hookprof().arg("report").arg(&small));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("unmatched"), "{stderr}");
    let leaf = call_counts(&small, &[])
        .get("threads::leaf")
        .copied()
        .unwrap_or(0);
    assert!(
        leaf > 0 && leaf < 10 * rounds,
        "leaf calls in small rings: {leaf}"
    );
}

/// Issue 27 item 4: nightly rustc shows the linker's stderr, and clang-19 warned on every link
/// that the -pthread hookcc added was unused (rustc links with -nodefaultlibs). With a nightly
/// toolchain installed (`rustup toolchain install nightly`), `cargo +nightly hookcc run` links
/// without a warning and traces; the argument handling itself is wrapper/src/driver.rs's
/// `pthread_only_where_clang_adds_default_libraries`.
#[test]
fn nightly_links_without_an_unused_pthread_warning() {
    let nightly = Command::new("rustup")
        .args(["run", "nightly", "rustc", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !nightly {
        eprintln!("skipping: no nightly toolchain (rustup toolchain install nightly)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let project = copy_cargo_project(&workspace_root().join("examples/rust"), dir.path());
    let trace = dir.path().join("mixed.hktrace");
    let mut cmd = Command::new("rustup");
    with_hookcc_env(&mut cmd, &project);
    let out = run_ok(
        cmd.args(["run", "nightly", "cargo", "hookcc", "run", "--trace"])
            .env("HOOKCC_OUTPUT", &trace),
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("warning: linker stderr") && !stderr.contains("-pthread"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("digit sum of 2026 = 10"));
    let counts = call_counts(&trace, &[]);
    assert_eq!(counts.get("mixed::checksum"), Some(&3), "{counts:#?}");
    assert_eq!(counts.get("crc_byte"), Some(&10), "{counts:#?}");
}

/// The mangling scheme of the function `mixed::checksum` in `binary`: "v0" or "legacy".
fn checksum_mangling(binary: &Path) -> &'static str {
    let nm = run_ok(Command::new("nm").arg(binary));
    let text = String::from_utf8_lossy(&nm.stdout);
    let symbol = text
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .find(|s| s.contains("5mixed8checksum"))
        .unwrap_or_else(|| panic!("no mixed::checksum in {}", binary.display()));
    if symbol.starts_with("_R") {
        "v0"
    } else if symbol.starts_with("_ZN") {
        "legacy"
    } else {
        panic!("{symbol}: neither v0 nor legacy")
    }
}

/// Issue 27 item 5 (docs/rust.md, "Symbol names"): under RUSTC_BOOTSTRAP=1 the instrumented
/// build's symbols are v0; `-C symbol-mangling-version=v0` gives the plain build the same
/// scheme, `-C symbol-mangling-version=legacy -Z unstable-options` the instrumented one the
/// plain build's.
#[test]
fn both_builds_get_one_mangling_with_symbol_mangling_version() {
    let dir = tempfile::tempdir().unwrap();
    let project = copy_cargo_project(&workspace_root().join("examples/rust"), dir.path());
    let host = rust_host();
    let instrumented = project.join(format!("target/hookcc/{host}/debug/mixed"));
    let plain = project.join("target/debug/mixed");
    let build = |hookcc: bool, rustflags: Option<&str>| {
        let mut cmd = cargo_with_hookcc(&project);
        if hookcc {
            cmd.arg("hookcc");
        }
        cmd.args(["build", "--quiet"]);
        if let Some(flags) = rustflags {
            cmd.env("RUSTFLAGS", flags);
        }
        run_ok(&mut cmd);
    };
    build(true, None);
    assert_eq!(checksum_mangling(&instrumented), "v0");
    build(false, Some("-C symbol-mangling-version=v0"));
    assert_eq!(checksum_mangling(&plain), "v0");
    build(
        true,
        Some("-C symbol-mangling-version=legacy -Z unstable-options"),
    );
    assert_eq!(checksum_mangling(&instrumented), "legacy");
    // The instrumented legacy build still traces, its names demangled as the v0 build's.
    let trace = dir.path().join("legacy.hktrace");
    run_ok(Command::new(&instrumented).env("HOOKCC_OUTPUT", &trace));
    let counts = call_counts(&trace, &[]);
    assert_eq!(counts.get("mixed::checksum"), Some(&3), "{counts:#?}");
}

/// The Rust functions a binary defines (`nm -C --defined-only`, text symbols whose demangled
/// names are paths: hookcc's runtime is C), hashes and LLVM suffixes left out, each with the
/// number of its symbols (the legacy mangling's names leave out generic arguments). A
/// function's outlined hooked clone (`NAME.hookcc`, its body with the hooks, which `NAME`
/// tail-calls while it is switched on) is the function's second half, not a function of its
/// own: it is left out.
fn defined_rust_functions(binary: &Path) -> BTreeMap<String, usize> {
    // Demangling drops the suffix: the clones are found by their mangled names.
    let mangled = run_ok(Command::new("nm").arg("--defined-only").arg(binary));
    let clones: std::collections::HashSet<String> = String::from_utf8_lossy(&mangled.stdout)
        .lines()
        .filter(|l| l.ends_with(".hookcc"))
        .filter_map(|l| l.split(' ').next().map(str::to_string))
        .collect();
    let out = run_ok(
        Command::new("nm")
            .args(["-C", "--defined-only"])
            .arg(binary),
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, ' ');
            let (address, kind, name) = (f.next()?, f.next()?, f.next()?);
            (matches!(kind, "t" | "T" | "W" | "w") && !clones.contains(address)).then_some(name)
        })
        .filter(|n| n.contains("::"))
        .map(|n| {
            let n = n.split(".llvm.").next().unwrap();
            match n.rfind("::h") {
                Some(at) if n.len() - at == 19 => n[..at].to_string(),
                _ => n.to_string(),
            }
        })
        .fold(BTreeMap::new(), |mut m, n| {
            *m.entry(n).or_insert(0) += 1;
            m
        })
}

/// Issue 35 item 3: hooks that leave the optimizer's decisions alone. `cargo hookcc build
/// --release` (the default placement: after inlining) defines the functions the plain release
/// build defines, within 2 % — small helpers, closures, iterator adapters and SIMD intrinsics
/// are inlined as they are without hookcc (rustc's MIR inlining stays on: only
/// `--hook-placement=source` turns it off).
#[test]
fn a_hooked_rust_release_build_defines_the_plain_builds_functions() {
    let dir = tempfile::tempdir().unwrap();
    let project = copy_cargo_project(&workspace_root().join("tests/rust/inlining"), dir.path());
    let host = rust_host();
    run_ok(cargo_with_hookcc(&project).args(["build", "--release", "--quiet", "--target", &host]));
    let plain = defined_rust_functions(&project.join(format!("target/{host}/release/inlining")));
    run_ok(cargo_with_hookcc(&project).args([
        "hookcc",
        "build",
        "--release",
        "--trace",
        "--quiet",
    ]));
    let hooked =
        defined_rust_functions(&project.join(format!("target/hookcc/{host}/release/inlining")));
    let count = |m: &BTreeMap<String, usize>| m.values().sum::<usize>();
    let (plain_n, hooked_n) = (count(&plain), count(&hooked));
    // Where they differ (by name, then by number of symbols), for the message.
    let differ: Vec<String> = plain
        .keys()
        .chain(hooked.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .filter(|n| plain.get(*n) != hooked.get(*n))
        .map(|n| format!("{n}: {:?} plain, {:?} hooked", plain.get(n), hooked.get(n)))
        .collect();
    assert!(
        plain_n.abs_diff(hooked_n) * 50 <= plain_n,
        "{plain_n} functions plain, {hooked_n} hooked; differing: {differ:#?}"
    );
}
