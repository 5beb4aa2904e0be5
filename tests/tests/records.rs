//! Issue 35, item 2: the native trace names functions by their records. The hooks are passed
//! the address of the function's record (`hookcc_fns`, a writable section of the function's
//! own file), not the function's, and the reader finds the function from the record in the ELF
//! file alone: in a PIE, an executable that is not one, and a shared library. Each test decodes
//! the records independently of hookprof's naming (readelf's section bytes, nm's symbols,
//! [`records_by_readelf_and_nm`]) and compares with the counts the program made and with
//! `hookprof report`'s names.

use std::collections::BTreeMap;
use std::path::Path;

use hookcc_tests::*;

/// The records of `trace` name the functions `expected` with these counts, by readelf and nm,
/// and `hookprof report` names them the same.
fn check(trace: &Path, exe: &Path, expected: &[(&str, u64)], what: &str) {
    let by_records = records_by_readelf_and_nm(trace, exe, "readelf", "nm");
    let expected: BTreeMap<String, u64> =
        expected.iter().map(|(f, n)| (f.to_string(), *n)).collect();
    assert_eq!(
        by_records, expected,
        "{what}: the records' functions, by readelf and nm"
    );
    let reported = call_counts(trace, &["--no-compensation"]);
    assert_eq!(reported, expected, "{what}: hookprof report");
}

#[test]
fn records_name_functions_in_a_pie_and_an_executable_that_is_not_one() {
    let expected: Vec<(&str, u64)> = CALLS_C.to_vec();
    for flags in [&["-O1"][..], &["-O2", "-no-pie"], &["-O0", "-fPIE", "-pie"]] {
        let dir = tempfile::tempdir().unwrap();
        let program = build_traced(dir.path(), "calls", &["calls.c"], flags, false);
        let (trace, stdout) = run_traced(dir.path(), &program, &[]);
        assert_eq!(stdout.trim(), "16135");
        check(&trace, &program, &expected, &format!("calls.c {flags:?}"));
    }
}

#[test]
fn records_name_a_shared_librarys_functions() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_shlib_program(dir.path());
    let (trace, _) = run_traced(dir.path(), &program, &[]);
    check(
        &trace,
        &program,
        &[("main", 1), ("lib_square", 7), ("lib_helper", 21)],
        "shared library",
    );
}

/// A stripped executable (no symbol table) still names every traced function: by the name its
/// record holds, read through the PIE's dynamic relocations, where before this the report
/// showed addresses and warned.
#[test]
fn a_stripped_executable_names_its_functions_by_their_records() {
    for flags in [&["-O1"][..], &["-O1", "-no-pie"]] {
        let dir = tempfile::tempdir().unwrap();
        let program = build_traced(dir.path(), "calls", &["calls.c"], flags, false);
        run_ok(std::process::Command::new("strip").arg(&program));
        let nm = run_ok(std::process::Command::new("nm").arg(&program));
        assert!(
            String::from_utf8_lossy(&nm.stderr).contains("no symbols"),
            "{flags:?}: strip left symbols"
        );
        let (trace, _) = run_traced(dir.path(), &program, &[]);
        let (rows, stderr) = report_csv(&trace, &[]);
        assert!(
            stderr.is_empty(),
            "{flags:?}: hookprof report warned:\n{stderr}"
        );
        let counts: BTreeMap<String, u64> =
            rows.into_iter().map(|r| (r.function, r.calls)).collect();
        let expected: BTreeMap<String, u64> =
            CALLS_C.iter().map(|(f, n)| (f.to_string(), *n)).collect();
        assert_eq!(counts, expected, "{flags:?}: the stripped program's report");
    }
}

/// A program's own native hooks (`--hook-runtime=none`) get the function's name and address
/// from the record they are passed (`HOOKCC_NAME_OF`, `HOOKCC_FUNCTION_OF`), in either hook.
#[test]
fn own_native_hooks_read_the_name_and_the_address_from_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(
        dir.path(),
        "own",
        &["own_native_hooks.c"],
        &["-O1", "--hook-runtime=none"],
        false,
    );
    let out = run_ok(&mut std::process::Command::new(&program));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "> main\n  > twice_square\n    > square\n    < square\n  < twice_square\n\
         18, square's address seen\n< main\n"
    );
}

/// The hosted targets under qemu-user: 32-bit records (i686, armhf), big-endian ones (s390x),
/// RISC-V's and AArch64's PC-relative data relocations; decoded on the host by LLVM's readelf
/// and nm, which read every target.
#[test]
fn records_name_functions_on_every_hosted_target() {
    let targets = [
        ("aarch64-linux-gnu", "qemu-aarch64"),
        ("arm-linux-gnueabihf", "qemu-arm"),
        ("i686-linux-gnu", "qemu-i386"),
        ("riscv64-linux-gnu", "qemu-riscv64"),
        ("s390x-linux-gnu", "qemu-s390x"),
    ];
    let expected: Vec<(&str, u64)> = CALLS_C.to_vec();
    for (triple, qemu) in targets {
        if !have_cross_target(triple, qemu) {
            continue;
        }
        let sysroot = format!("/usr/{triple}");
        let dir = tempfile::tempdir().unwrap();
        let target = format!("--target={triple}");
        // lld: it links every target (GNU ld is the host's only, but for AArch64's).
        let flags = [target.as_str(), "-O1", "-fuse-ld=lld"];
        let program = build_traced(dir.path(), "calls", &["calls.c"], &flags, false);
        let (trace, stdout) = run_traced(dir.path(), &program, &[qemu, "-L", &sysroot]);
        assert_eq!(stdout.trim(), "16135", "{triple}");
        let by_records =
            records_by_readelf_and_nm(&trace, &program, "llvm-readelf-19", "llvm-nm-19");
        let want: BTreeMap<String, u64> =
            expected.iter().map(|(f, n)| (f.to_string(), *n)).collect();
        assert_eq!(
            by_records, want,
            "{triple}: the records' functions, by readelf and nm"
        );
        let reported = call_counts(&trace, &["--exe", program.to_str().unwrap()]);
        assert_eq!(reported, want, "{triple}: hookprof report");
    }
}

/// The outputs that show a function's address show the function's, at run time, not its
/// record's: `report --format=json`'s `address` and the timeline's `args.address` are nm's
/// address plus the executable's load bias (a PIE).
#[test]
fn outputs_show_the_functions_address_not_its_records() {
    let dir = tempfile::tempdir().unwrap();
    let program = build_traced(dir.path(), "calls", &["calls.c"], &["-O1"], false);
    let (trace, _) = run_traced(dir.path(), &program, &[]);
    let nm = run_ok(std::process::Command::new("nm").arg(&program));
    let symbols: BTreeMap<String, u64> = String::from_utf8_lossy(&nm.stdout)
        .lines()
        .filter_map(
            |l| match l.split_whitespace().collect::<Vec<_>>().as_slice() {
                [a, "T" | "t", name] => Some((name.to_string(), u64::from_str_radix(a, 16).ok()?)),
                _ => None,
            },
        )
        .collect();
    let profile = hookprof::input::trace_file::TraceFile::open(&trace)
        .unwrap()
        .profile()
        .unwrap();
    let bias = profile
        .summary
        .modules
        .iter()
        .find(|m| m.path.is_none())
        .unwrap()
        .bias;
    let expected = |name: &str| format!("{:#x}", symbols[name] + bias);
    let hex = |v: &serde_json::Value| v.as_str().unwrap().to_string();

    let out = run_ok(hookprof().arg("report").arg(&trace).arg("--format=json"));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let functions = report["functions"].as_array().unwrap();
    assert_eq!(functions.len(), CALLS_C.len(), "{report:#}");
    for f in functions {
        let name = f["function"].as_str().unwrap();
        assert_eq!(hex(&f["address"]), expected(name), "report: {name}");
    }

    let timeline = dir.path().join("timeline.json");
    run_ok(
        hookprof()
            .arg("timeline")
            .arg(&trace)
            .arg("-o")
            .arg(&timeline),
    );
    let events: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&timeline).unwrap()).unwrap();
    let mut seen = 0;
    for e in events["traceEvents"].as_array().unwrap() {
        if e["ph"] == "B" {
            let name = e["name"].as_str().unwrap();
            assert_eq!(
                hex(&e["args"]["address"]),
                expected(name),
                "timeline: {name}"
            );
            seen += 1;
        }
    }
    assert!(seen > 0);
}
