//! The native trace end to end for another architecture: built with
//! `hookcc --target=aarch64-linux-gnu` against Debian's cross libc, run under qemu-aarch64, the
//! trace decoded on the host.

use hookcc_tests::*;

const SYSROOT: &str = "/usr/aarch64-linux-gnu";

#[test]
fn aarch64_under_qemu() {
    if !have_cross_target("aarch64-linux-gnu", "qemu-aarch64") {
        return;
    }
    for opt in ["-O0", "-O2"] {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let program = build_traced(
            d,
            "calls-aarch64",
            &["calls.c"],
            &["--target=aarch64-linux-gnu", opt],
            false,
        );
        // ELF e_machine (bytes 18-19, little-endian) is EM_AARCH64 = 183.
        let elf = std::fs::read(&program).unwrap();
        assert_eq!(
            (&elf[..4], u16::from_le_bytes([elf[18], elf[19]])),
            (&b"\x7fELF"[..], 183)
        );
        let (trace, stdout) = run_traced(d, &program, &["qemu-aarch64", "-L", SYSROOT]);
        assert_eq!(stdout.trim(), "16135");
        let counts = call_counts(&trace, &["--exe", program.to_str().unwrap()]);
        for (f, n) in CALLS_C {
            assert_eq!(counts.get(f), Some(&n), "{opt}: {f}: {counts:#?}");
        }
    }
}
