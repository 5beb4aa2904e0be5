//! Hook placement (`--hook-placement=source|after-inlining|auto`, `--remove_hooks_when_inlining`):
//! tests/programs/inlining.c, whose small static `square` clang inlines at -O2, built with each
//! placement and each dialect's hooks; the IR shows where the hooks went, the native trace what
//! was recorded.

use std::collections::BTreeMap;
use std::path::Path;

use hookcc_tests::*;

const ROUNDS: u64 = 40;

/// `square`'s calls, by construction: `sum_of_squares(r % 7 + 3)` calls it `r % 7 + 3` times.
fn square_calls() -> u64 {
    (0..ROUNDS).map(|r| r % 7 + 3).sum()
}

/// The optimized IR hookcc emits for inlining.c with `flags`: for each function defined, how
/// many calls of `hook` it has.
fn hook_calls_per_function(dir: &Path, flags: &[&str], hook: &str) -> BTreeMap<String, usize> {
    let out = run_ok(
        hookcc(dir, false)
            .args(flags)
            .args(["-S", "-emit-llvm", "-o", "-"])
            .arg(program_source("inlining.c")),
    );
    let ir = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut calls = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in ir.lines() {
        if line.starts_with("define ") {
            let name = line
                .split('@')
                .nth(1)
                .and_then(|rest| rest.split('(').next())
                .expect("define … @name(")
                .to_string();
            // The program's functions: not the constructor --trace adds to each module
            // (__hookcc_register_module: it hands the module's switches to the runtime).
            if name.starts_with("__hookcc_") {
                current = None;
                continue;
            }
            // An outlined clone's hooks are its function's (docs/recording.md, "Outlined
            // hooks"): the function tests its switch, the clone calls the hooks.
            let name = name.strip_suffix(".hookcc").unwrap_or(&name).to_string();
            calls.entry(name.clone()).or_insert(0);
            current = Some(name);
        } else if line == "}" {
            current = None;
        } else if let Some(function) = &current {
            if line.contains(&format!("@{hook}(")) && line.contains("call ") {
                *calls.get_mut(function).unwrap() += 1;
            }
        }
    }
    assert!(
        calls.contains_key("sum_of_squares") && calls.contains_key("main"),
        "{flags:?}: functions missing from the IR:\n{ir}"
    );
    calls
}

/// Builds inlining.c with `--trace` and `flags`, runs it, and returns its output and counts.
fn traced_counts(dir: &Path, flags: &[&str]) -> (String, BTreeMap<String, u64>) {
    // Not build_traced, which asks for the source placement.
    let program = dir.join("inlining");
    run_ok(
        hookcc(dir, false)
            .arg("--trace")
            .args(flags)
            .arg(program_source("inlining.c"))
            .arg("-o")
            .arg(&program),
    );
    let trace = dir.join("inlining.hktrace");
    let out = run_ok(
        std::process::Command::new(&program)
            .arg(ROUNDS.to_string())
            .current_dir(dir)
            .env("HOOKCC_OUTPUT", &trace)
            .env("HOOKCC_MAX_BYTES", "16000000"),
    );
    assert_balanced(&trace);
    (
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
        call_counts(&trace, &[]),
    )
}

#[test]
fn trace_after_inlining_has_no_hooks_in_inlined_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The source placement at -O2: sum_of_squares carries square's hooks as well as its own.
    let source = hook_calls_per_function(
        d,
        &["--trace", "-O2", "--hook-placement=source"],
        "__hookcc_enter",
    );
    assert_eq!(source["sum_of_squares"], 2, "source placement: {source:?}");
    let (source_output, exact) = traced_counts(d, &["-O2", "--hook-placement=source"]);
    assert_eq!(exact.get("square"), Some(&square_calls()), "{exact:?}");
    assert_eq!(exact.get("sum_of_squares"), Some(&ROUNDS), "{exact:?}");
    assert_eq!(exact.get("main"), Some(&1), "{exact:?}");
    // After inlining, by either spelling: one entry hook per function left, none for square.
    for placement in [
        "--hook-placement=after-inlining",
        "--remove_hooks_when_inlining",
    ] {
        let after = hook_calls_per_function(d, &["--trace", "-O2", placement], "__hookcc_enter");
        assert!(
            after.values().all(|&n| n == 1) && !after.contains_key("square"),
            "{placement}: hooks per function {after:?}"
        );
        let (output, counts) = traced_counts(d, &["-O2", placement]);
        assert_eq!(output, source_output, "{placement}: the program's output");
        assert_eq!(
            counts,
            BTreeMap::from([
                ("main".to_string(), 1),
                ("sum_of_squares".to_string(), ROUNDS)
            ]),
            "{placement}: the inlined square is not recorded, its callers are"
        );
    }
}

#[test]
fn trace_default_is_exact_at_o0_and_after_inlining_when_optimizing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (_, o0) = traced_counts(d, &["-O0"]);
    assert_eq!(o0.get("square"), Some(&square_calls()), "-O0: {o0:?}");
    assert_eq!(o0.get("sum_of_squares"), Some(&ROUNDS), "-O0: {o0:?}");
    for opt in ["-O1", "-O2", "-Os"] {
        let hooks = hook_calls_per_function(d, &["--trace", opt], "__hookcc_enter");
        assert!(
            hooks.values().all(|&n| n == 1) && !hooks.contains_key("square"),
            "{opt}: the default placement put hooks in inlined bodies: {hooks:?}"
        );
    }
    let (_, o2) = traced_counts(d, &["-O2"]);
    assert!(
        !o2.contains_key("square") && o2.get("sum_of_squares") == Some(&ROUNDS),
        "{o2:?}"
    );
    // `auto` spelled out is the default.
    let (_, auto) = traced_counts(d, &["-O2", "--hook-placement=auto"]);
    assert_eq!(auto, o2);
}

#[test]
fn every_dialect_honours_the_placement() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // (the dialect's flags, its entry hook)
    let dialects: &[(&[&str], &str)] = &[
        (&["--entry_hook", "--exit_hook"], "__entry_hook"),
        (&["-profile", "--hook-runtime=calltrace"], "__PROFILE_ENTRY"),
        (
            &["-profile", "--hook-runtime=functioncost"],
            "__PROFILE_ENTRY",
        ),
        (&["--hook-runtime=gprof"], "__profile_mcount"),
        (&["-finstrument-functions"], "__cyg_profile_func_enter"),
        (&["--pfp-functions=s*"], "__hookcc_pfp_begin"),
    ];
    for (flags, hook) in dialects {
        let with = |placement: &str| {
            let mut all = flags.to_vec();
            all.extend(["-O2", placement]);
            hook_calls_per_function(d, &all, hook)
        };
        let source = with("--hook-placement=source");
        let after = with("--hook-placement=after-inlining");
        assert!(
            source["sum_of_squares"] > after["sum_of_squares"] && after["sum_of_squares"] <= 1,
            "{flags:?}: sum_of_squares should lose the inlined square's hook after inlining: \
             source {source:?}, after inlining {after:?}"
        );
        assert!(
            after.get("square").is_none_or(|&n| n == 0),
            "{flags:?}: {after:?}"
        );
        assert_eq!(
            with("--remove_hooks_when_inlining"),
            after,
            "{flags:?}: --remove_hooks_when_inlining is the same placement"
        );
    }
}

#[test]
fn conflicting_or_unknown_placements_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    for (args, expected) in [
        (
            &["--trace", "--hook-placement=late"][..],
            "--hook-placement=late",
        ),
        (
            &[
                "--trace",
                "--hook-placement=source",
                "--remove_hooks_when_inlining",
            ],
            "--hook-placement=source and --remove_hooks_when_inlining",
        ),
    ] {
        let out = hookcc(dir.path(), false)
            .args(args)
            .args(["-c", "-o", "x.o"])
            .arg(program_source("inlining.c"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains(expected),
            "{args:?}: {stderr}"
        );
    }
}
