//! Builds the C++ registration shim against LLVM 19's headers, and stops early with a clear
//! message when LLVM 19 is not installed: the plugin is loaded into clang-19 / opt-19 and must be
//! compiled against exactly that LLVM.

use std::process::Command;

const LLVM_MAJOR: &str = "19";

fn llvm_config() -> String {
    if let Ok(path) = std::env::var("LLVM_CONFIG") {
        return path;
    }
    for candidate in ["llvm-config-19", "/usr/lib/llvm-19/bin/llvm-config"] {
        if Command::new(candidate).arg("--version").output().is_ok() {
            return candidate.to_string();
        }
    }
    panic!(
        "\n\nhookcc-pass: llvm-config-19 not found. The pass plugin is built against LLVM 19.\n\
         On Debian 12: apt-get install clang-19 llvm-19-dev libclang-19-dev llvm-19-tools lld-19\n\
         (or set LLVM_CONFIG to an LLVM 19 llvm-config).\n\n"
    );
}

fn query(config: &str, arg: &str) -> String {
    let out = Command::new(config)
        .arg(arg)
        .output()
        .unwrap_or_else(|e| panic!("hookcc-pass: running {config} {arg}: {e}"));
    assert!(out.status.success(), "hookcc-pass: {config} {arg} failed");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn main() {
    println!("cargo:rerun-if-changed=shim/shim.cpp");
    println!("cargo:rerun-if-env-changed=LLVM_CONFIG");
    let config = llvm_config();
    let version = query(&config, "--version");
    if version.split('.').next() != Some(LLVM_MAJOR) {
        panic!(
            "\n\nhookcc-pass: {config} reports LLVM {version}, but this plugin targets LLVM \
             {LLVM_MAJOR} (clang-19). Set LLVM_CONFIG to an LLVM {LLVM_MAJOR} llvm-config.\n\n"
        );
    }
    let mut build = cc::Build::new();
    build.cpp(true).file("shim/shim.cpp").warnings(false);
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "clang++-19".to_string());
    if Command::new(&compiler).arg("--version").output().is_ok() {
        build.compiler(compiler);
    }
    for flag in query(&config, "--cxxflags").split_whitespace() {
        // Keep LLVM's include path, language level and defines; our own warning set.
        if flag.starts_with("-W") || flag.starts_with("-O") || flag == "-g" {
            continue;
        }
        build.flag(flag);
    }
    // LLVM is built without RTTI on Debian; a shim with RTTI would reference typeinfo symbols
    // that libLLVM does not export, and fail to load.
    if query(&config, "--has-rtti") != "YES" {
        build.flag("-fno-rtti");
    }
    build.flag("-fvisibility=hidden");
    build.compile("hookcc_shim");
}
