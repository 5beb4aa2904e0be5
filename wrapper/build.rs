//! Puts `hookcc++` beside `hookcc` in the build tree (`target/<profile>/hookcc++ -> hookcc`),
//! and `hookcc-ar` and `hookcc-ranlib` (clang-19's llvm-ar and llvm-ranlib, for `-flto`
//! static libraries), and the same as `llvm-ar` and `llvm-ranlib`: the names CMake looks for
//! in a clang's directory before PATH (Modules/CMakeFindBinUtils.cmake), where Debian 12's
//! `llvm-ar` is LLVM 14's and cannot read clang-19's bitcode.
//!
//! hookcc is a C++ compiler when it runs under a name ending in `++` (as clang and clang++ are
//! one binary), but cargo cannot name a binary `hookcc++` (`+` is not allowed in target
//! names). Without the link, `CXX=target/release/hookcc++` would not exist until
//! `scripts/install.sh` ran, and `hookcc` on C++ links without libstdc++ as `clang` does.

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out_dir = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    // OUT_DIR is target/[<triple>/]<profile>/build/hookcc-<hash>/out.
    let Some(profile_dir) = Path::new(&out_dir).ancestors().nth(3) else {
        return;
    };
    for name in [
        "hookcc++",
        "hookcc-ar",
        "hookcc-ranlib",
        "llvm-ar",
        "llvm-ranlib",
    ] {
        let link = profile_dir.join(name);
        // A relative link: it resolves once cargo has linked hookcc, and survives moving
        // target/.
        if std::fs::read_link(&link).is_ok_and(|t| t == Path::new("hookcc")) {
            continue;
        }
        let _ = std::fs::remove_file(&link);
        if let Err(e) = std::os::unix::fs::symlink("hookcc", &link) {
            println!(
                "cargo:warning=cannot create {}: {e} (use scripts/install.sh, or link {name} to hookcc yourself)",
                link.display()
            );
        }
    }
}
