//! Compiles the clang frontend plugin against clang 19's headers and links it whole into the
//! cdylib (its registrations are static objects nothing references).

use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=plugin.cpp");
    println!("cargo:rerun-if-env-changed=LLVM_CONFIG");
    let config = std::env::var("LLVM_CONFIG").unwrap_or_else(|_| "llvm-config-19".into());
    let query = |arg: &str| -> String {
        let out = Command::new(&config).arg(arg).output().unwrap_or_else(|e| {
            panic!(
                "\n\nhookcc-frontend: cannot run {config} ({e}). On Debian 12: apt-get install \
                 clang-19 llvm-19-dev libclang-19-dev (or set LLVM_CONFIG).\n\n"
            )
        });
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let version = query("--version");
    assert!(
        version.starts_with("19."),
        "\n\nhookcc-frontend: {config} reports LLVM {version}; the plugin targets clang 19.\n\n"
    );
    let include = query("--includedir");
    assert!(
        std::path::Path::new(&include).join("clang/Frontend/FrontendPluginRegistry.h").exists(),
        "\n\nhookcc-frontend: clang headers missing under {include}: apt-get install libclang-19-dev\n\n"
    );
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .file("plugin.cpp")
        .warnings(false)
        .cargo_metadata(false);
    if Command::new("clang++-19").arg("--version").output().is_ok() {
        build.compiler("clang++-19");
    }
    for flag in query("--cxxflags").split_whitespace() {
        if !(flag.starts_with("-W") || flag.starts_with("-O") || flag == "-g") {
            build.flag(flag);
        }
    }
    if query("--has-rtti") != "YES" {
        build.flag("-fno-rtti");
    }
    build.compile("hookcc_frontend");
    let out = std::env::var("OUT_DIR").unwrap();
    println!("cargo:rustc-link-search=native={out}");
    println!("cargo:rustc-link-lib=static:+whole-archive=hookcc_frontend");
}
