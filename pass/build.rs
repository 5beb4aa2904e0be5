//! Builds the C++ registration shim against the headers of the LLVM major selected by the
//! cargo feature (`llvm19`: clang-19's, from llvm-19-dev; `llvm22`: rustc's, from the wheel
//! scripts/setup.sh fetches), and stops early with a clear message when they are missing: the
//! plugin is loaded into a compiler of exactly that LLVM major.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The LLVM majors the plugin can be built for, and where each one's headers come from.
enum Headers {
    /// An installed LLVM, queried with its llvm-config.
    LlvmConfig { candidates: &'static [&'static str] },
    /// A header-only copy (`include/llvm/…`) fetched by scripts/setup.sh into
    /// `$HOOKCC_LLVM_HEADERS_DIR/llvm-<version>/include` (default `~/.cache/hookcc/…`).
    Fetched { version: &'static str },
}

const LLVMS: &[(&str, &str, Headers)] = &[
    (
        "llvm19",
        "19",
        Headers::LlvmConfig {
            candidates: &["llvm-config-19", "/usr/lib/llvm-19/bin/llvm-config"],
        },
    ),
    (
        "llvm22",
        "22",
        Headers::Fetched {
            version: "22.1.8.2",
        },
    ),
];

fn selected() -> &'static (&'static str, &'static str, Headers) {
    let on: Vec<_> = LLVMS
        .iter()
        .filter(|(feature, _, _)| {
            std::env::var_os(format!("CARGO_FEATURE_{}", feature.to_uppercase())).is_some()
        })
        .collect();
    match on.as_slice() {
        [one] => one,
        [] => panic!(
            "\n\nhookcc-pass: no LLVM selected: enable exactly one of the features {}\n\n",
            LLVMS.iter().map(|l| l.0).collect::<Vec<_>>().join(", ")
        ),
        many => panic!(
            "\n\nhookcc-pass: features {} are all on, but one plugin is built for one LLVM \
             major: build each on its own (scripts/build-plugins.sh)\n\n",
            many.iter().map(|l| l.0).collect::<Vec<_>>().join(" and ")
        ),
    }
}

fn query(config: &str, arg: &str) -> String {
    let out = Command::new(config)
        .arg(arg)
        .output()
        .unwrap_or_else(|e| panic!("hookcc-pass: running {config} {arg}: {e}"));
    assert!(out.status.success(), "hookcc-pass: {config} {arg} failed");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn llvm_config(major: &str, candidates: &[&str]) -> String {
    if let Ok(path) = std::env::var("LLVM_CONFIG") {
        return path;
    }
    for candidate in candidates {
        if Command::new(candidate).arg("--version").output().is_ok() {
            return candidate.to_string();
        }
    }
    panic!(
        "\n\nhookcc-pass: llvm-config-{major} not found. The pass plugin is built against LLVM \
         {major}.\nOn Debian 12: apt-get install clang-{major} llvm-{major}-dev \
         libclang-{major}-dev llvm-{major}-tools lld-{major}\n(or set LLVM_CONFIG to an LLVM \
         {major} llvm-config).\n\n"
    );
}

fn headers_dir(version: &str) -> PathBuf {
    let base = std::env::var_os("HOOKCC_LLVM_HEADERS_DIR")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("XDG_CACHE_HOME").map(|d| PathBuf::from(d).join("hookcc")))
        .or_else(|| std::env::var_os("HOME").map(|d| PathBuf::from(d).join(".cache/hookcc")))
        .unwrap_or_else(|| PathBuf::from(".cache/hookcc"));
    base.join(format!("llvm-{version}")).join("include")
}

fn main() {
    println!("cargo:rerun-if-changed=shim/shim.cpp");
    println!("cargo:rerun-if-env-changed=LLVM_CONFIG");
    println!("cargo:rerun-if-env-changed=HOOKCC_LLVM_HEADERS_DIR");
    let (_, major, headers) = selected();
    let mut build = cc::Build::new();
    build.cpp(true).file("shim/shim.cpp").warnings(false);
    let compiler = std::env::var("CXX").unwrap_or_else(|_| "clang++-19".to_string());
    if Command::new(&compiler).arg("--version").output().is_ok() {
        build.compiler(compiler);
    }
    match headers {
        Headers::LlvmConfig { candidates } => {
            let config = llvm_config(major, candidates);
            let version = query(&config, "--version");
            if version.split('.').next() != Some(*major) {
                panic!(
                    "\n\nhookcc-pass: {config} reports LLVM {version}, but feature llvm{major} \
                     builds the plugin for LLVM {major}. Set LLVM_CONFIG to an LLVM {major} \
                     llvm-config.\n\n"
                );
            }
            for flag in query(&config, "--cxxflags").split_whitespace() {
                // Keep LLVM's include path, language level and defines; our own warning set.
                if flag.starts_with("-W") || flag.starts_with("-O") || flag == "-g" {
                    continue;
                }
                build.flag(flag);
            }
            // LLVM is built without RTTI on Debian; a shim with RTTI would reference typeinfo
            // symbols that libLLVM does not export, and fail to load.
            if query(&config, "--has-rtti") != "YES" {
                build.flag("-fno-rtti");
            }
        }
        Headers::Fetched { version } => {
            let include = headers_dir(version);
            println!("cargo:rerun-if-changed={}", include.display());
            if !include.join("llvm/Config/llvm-config.h").is_file() {
                panic!(
                    "\n\nhookcc-pass: the LLVM {major} headers are not in {}. Run \
                     scripts/setup.sh (it fetches them: PyPI wheel xtc-llvm-dev=={version}), or \
                     set HOOKCC_LLVM_HEADERS_DIR to the directory holding llvm-{version}/.\n\n",
                    include.display()
                );
            }
            // The wheel's headers were configured with LLVM_ENABLE_ABI_BREAKING_CHECKS=1, and
            // rustc's libLLVM was built without: a plugin compiled as is references
            // llvm::EnableABIBreakingChecks, which rustc does not define, and fails to load.
            // An overlay abi-breaking.h first on the include path says 0 (checked with rustc
            // 1.95.0, LLVM 22.1.2).
            let overlay = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("overlay");
            write_abi_overlay(&include, &overlay);
            build.include(&overlay).include(&include);
            // What llvm-config --cxxflags says for a release libLLVM without RTTI.
            build
                .flag("-std=c++17")
                .flag("-fno-rtti")
                .flag("-fno-exceptions")
                .define("_GNU_SOURCE", None)
                .define("__STDC_CONSTANT_MACROS", None)
                .define("__STDC_FORMAT_MACROS", None)
                .define("__STDC_LIMIT_MACROS", None);
        }
    }
    build.flag("-fvisibility=hidden");
    build.compile("hookcc_shim");
}

/// Writes `overlay/llvm/Config/abi-breaking.h`: the fetched header with
/// `LLVM_ENABLE_ABI_BREAKING_CHECKS` set to 0, as in rustc's own build of LLVM.
fn write_abi_overlay(include: &Path, overlay: &Path) {
    let original = include.join("llvm/Config/abi-breaking.h");
    let text = std::fs::read_to_string(&original)
        .unwrap_or_else(|e| panic!("hookcc-pass: reading {}: {e}", original.display()));
    let on = "#define LLVM_ENABLE_ABI_BREAKING_CHECKS 1";
    if !text.contains(on) {
        panic!(
            "hookcc-pass: {} has no `{on}` line: these headers differ from the pinned ones",
            original.display()
        );
    }
    let dir = overlay.join("llvm/Config");
    std::fs::create_dir_all(&dir).expect("hookcc-pass: creating the abi-breaking.h overlay");
    std::fs::write(
        dir.join("abi-breaking.h"),
        text.replace(
            on,
            "#define LLVM_ENABLE_ABI_BREAKING_CHECKS 0 /* hookcc overlay */",
        ),
    )
    .expect("hookcc-pass: writing the abi-breaking.h overlay");
}
