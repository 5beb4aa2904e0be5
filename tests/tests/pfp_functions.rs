//! `hookcc --pfp-functions=GLOB` (docs/pfp.md, "The compiler bridge"): a TI profile point
//! around each named function, without editing the code. tests/programs/pfp_functions_a.cpp
//! and _b.cpp: C++ names matched and shown demangled, exclusive nesting between two wrapped
//! functions, an explicit point of the program's own beside them, an inline function of two
//! translation units with one id, and `hookprof pfp` on the dump printing the same lines.

use std::collections::BTreeMap;
use std::process::Command;

use hookcc_tests::*;

/// A measurement line: (n, Cmin) by its fn= name, or by `ID: NN` for points without one.
fn points(text: &str) -> BTreeMap<String, (u64, u64)> {
    text.lines()
        .filter(|l| l.starts_with("ID: "))
        .map(|l| {
            let field = |name: &str| -> String {
                l.split(", ")
                    .find_map(|f| f.strip_prefix(name))
                    .unwrap_or_else(|| panic!("no {name} in {l}"))
                    .to_string()
            };
            let key = l
                .split(", fn=")
                .nth(1)
                .map(String::from)
                .unwrap_or_else(|| l[..6].to_string());
            (
                key,
                (
                    field("n=").parse().unwrap(),
                    field("Cmin=").parse().unwrap(),
                ),
            )
        })
        .collect()
}

#[test]
fn pfp_functions_wraps_the_named_functions_in_profile_points() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let program = d.join("pfp_functions");
    run_ok(
        hookcc(d, true)
            .args([
                "--pfp-functions=work::*",
                "--pfp-functions=shared()",
                "-O2",
                "-I",
            ])
            .arg(workspace_root().join("tests/programs"))
            .arg(program_source("pfp_functions_a.cpp"))
            .arg(program_source("pfp_functions_b.cpp"))
            .arg("-o")
            .arg(&program),
    );
    let out = run_ok(Command::new(&program).current_dir(d));
    let printed = String::from_utf8_lossy(&out.stdout).to_string();
    let p = points(&printed);
    assert_eq!(
        p.len(),
        4,
        "three functions and the explicit point:\n{printed}"
    );
    let (inner, outer) = (p["work::inner()"], p["work::outer()"]);
    assert_eq!((inner.0, outer.0, p["shared()"].0), (5, 5, 5), "{printed}");
    // Exclusive: outer's own 2 × 20 000 iterations against inner's 100 000 (inclusive would
    // be 1.4 times inner's).
    let ratio = outer.1 as f64 / inner.1 as f64;
    assert!(
        (0.3..0.5).contains(&ratio),
        "outer/inner = {ratio}:\n{printed}"
    );
    // The program's own point around outer() counts only what is outside the wrapped one.
    let own = p["ID: 01"];
    assert!(own.0 == 5 && own.1 * 4 < outer.1, "{printed}");
    // The ids: the program's 1, the functions' from 31 down.
    for line in printed.lines().filter(|l| l.contains("fn=")) {
        let id: u32 = line[4..6].parse().unwrap();
        assert!((29..=31).contains(&id), "{line}");
    }
    let decoded = run_ok(
        hookprof()
            .arg("pfp")
            .arg(d.join("pfp.bin"))
            .arg("--exe")
            .arg(&program),
    );
    assert_eq!(String::from_utf8_lossy(&decoded.stdout), printed);
}

#[test]
fn pfp_functions_on_a_program_that_knows_nothing_of_pfp_prints_at_exit() {
    // calls.c never calls the PFP API: the points are created, enabled and printed (on
    // standard error, the default print) when the program exits. fib's recursion is part of
    // its outermost call's region: one measurement.
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("calls");
    run_ok(
        hookcc(dir.path(), false)
            .args(["--pfp-functions=fib", "--pfp-functions=apply", "-O2"])
            .arg(program_source("calls.c"))
            .arg("-o")
            .arg(&program),
    );
    let out = run_ok(&mut Command::new(&program));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "16135");
    let p = points(&String::from_utf8_lossy(&out.stderr));
    assert_eq!(
        p.iter().map(|(k, v)| (k.as_str(), v.0)).collect::<Vec<_>>(),
        [("apply", 50), ("fib", 1)]
    );
    // Combined with another dialect: refused.
    let out = hookcc(dir.path(), false)
        .args(["--pfp-functions=fib", "--trace", "-c"])
        .arg(program_source("calls.c"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("--pfp-functions"),
        "{stderr}"
    );
}
