//! Compiles probe.c with $CC $CFLAGS (hookcc --trace under cargo hookcc) and runs it in the
//! package's source directory, where a traced program's default trace file would land.
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=probe.c");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let cflags = std::env::var("CFLAGS").unwrap_or_default();
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("probe");
    let status = Command::new(&cc)
        .args(cflags.split_whitespace())
        .args(["probe.c", "-o"])
        .arg(&out)
        .status()
        .expect("run $CC");
    assert!(status.success(), "{cc} probe.c failed");
    let status = Command::new(&out).status().expect("run probe");
    assert!(status.success(), "probe failed");
}
