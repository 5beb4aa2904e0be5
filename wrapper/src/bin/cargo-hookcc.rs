//! `cargo hookcc build|run|test [hookcc options] [cargo arguments]`: runs cargo with the
//! RUSTFLAGS of `hookcc --rustflags` (docs/rust.md).
//!
//! Besides the RUSTFLAGS it sets `RUSTC_BOOTSTRAP=1` (`-Z llvm-plugins` on stable), `CC` and
//! `CFLAGS` so that C compiled by `cc`-crate build scripts gets the same hooks, `--target` (the
//! host's unless given, so that build scripts and proc macros, built for the host without
//! RUSTFLAGS, are not instrumented) and a target directory of its own (`<target>/hookcc`), so
//! instrumented and plain builds do not overwrite each other. Without a hook option it traces
//! (`--trace`).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use hookcc_driver::options::take_own_options;
use hookcc_driver::rust::{rustc_host, rustflags, RustHost, SystemRust};

const USAGE: &str = "\
Usage: cargo hookcc <cargo command> [hookcc options] [cargo arguments]
       e.g. cargo hookcc run --trace --release -- program arguments

Runs `cargo <command>` with the user's crates (not the precompiled std) and the C that `cc`
build scripts compile instrumented by hookcc. hookcc options are those of `hookcc --help`
(--trace, -profile, --entry_hook/--exit_hook/--*_parm, --hook-runtime=…); without one, --trace.
The build goes to <target dir>/hookcc/<target triple>/.
";

fn main() -> ExitCode {
    match run() {
        Ok(never) => match never {},
        Err(message) => {
            eprintln!("cargo-hookcc: error: {message}");
            ExitCode::from(1)
        }
    }
}

enum Never {}

fn run() -> Result<Never, String> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // cargo runs `cargo-hookcc hookcc <args>`; run directly, there is no `hookcc` word.
    if args.first().map(String::as_str) == Some("hookcc") {
        args.remove(0);
    }
    let Some(command) = args.first().cloned() else {
        return Err(format!("no cargo command given\n{USAGE}"));
    };
    if command == "--help" || command == "-h" {
        print!("{USAGE}");
        std::process::exit(0);
    }
    // hookcc's options are recognized anywhere before `--` (after it, the program's own).
    let split = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let (options, mut cargo_args) =
        take_own_options(&args[1..split], &|k| std::env::var(k).ok()).map_err(|e| e.to_string())?;
    // The same options, as written, for hookcc compiling C (CFLAGS).
    let own_args: Vec<String> = args[1..split]
        .iter()
        .filter(|a| {
            take_own_options(std::slice::from_ref(*a), &|_| None)
                .is_ok_and(|(_, rest)| rest.is_empty())
        })
        .cloned()
        .collect();
    cargo_args.extend(args[split..].iter().cloned());
    let mut options = options;
    let mut c_options = own_args;
    if options.pass_config().is_none() {
        options.trace = true;
        c_options.push("--trace".to_string());
    }

    let me = std::env::current_exe().map_err(|e| format!("cannot locate cargo-hookcc: {e}"))?;
    let me = me.canonicalize().unwrap_or(me);
    let hookcc = me.with_file_name("hookcc");
    if !hookcc.is_file() {
        return Err(format!(
            "{}: hookcc is not beside cargo-hookcc (install both, scripts/install.sh)",
            hookcc.display()
        ));
    }
    let host = SystemRust {
        hookcc: hookcc.clone(),
    };
    let flags = rustflags(&options, &host)?;

    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut extra = Vec::new();
    if !cargo_args
        .iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "--target" || a.starts_with("--target="))
    {
        let version = host.rustc_version()?;
        let triple =
            rustc_host(&version).ok_or_else(|| format!("{} -vV: no `host:` line", host.rustc()))?;
        extra.push(format!("--target={triple}"));
    }
    if !cargo_args
        .iter()
        .take_while(|a| *a != "--")
        .any(|a| a == "--target-dir" || a.starts_with("--target-dir="))
    {
        extra.push(format!(
            "--target-dir={}",
            target_dir(&cargo)?.join("hookcc").display()
        ));
    }

    let mut cmd = Command::new(&cargo);
    cmd.arg(&command).args(&extra).args(&cargo_args);
    // CARGO_ENCODED_RUSTFLAGS, when set, wins over RUSTFLAGS: extend whichever is in use.
    if let Ok(encoded) = std::env::var("CARGO_ENCODED_RUSTFLAGS") {
        let mut all: Vec<String> = encoded
            .split('\u{1f}')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        all.extend(flags.iter().cloned());
        cmd.env("CARGO_ENCODED_RUSTFLAGS", all.join("\u{1f}"));
    } else {
        let user = std::env::var("RUSTFLAGS").unwrap_or_default();
        cmd.env("RUSTFLAGS", format!("{user} {}", flags.join(" ")).trim());
    }
    cmd.env("RUSTC_BOOTSTRAP", "1");
    cmd.env("CC", &hookcc);
    let cxx = hookcc.with_file_name("hookcc++");
    if cxx.is_file() {
        cmd.env("CXX", &cxx);
    }
    for var in ["CFLAGS", "CXXFLAGS"] {
        let user = std::env::var(var).unwrap_or_default();
        cmd.env(var, format!("{user} {}", c_options.join(" ")).trim());
    }
    if options.verbose {
        eprintln!(
            "cargo-hookcc: RUSTFLAGS={} CFLAGS={} {cargo} {command} {} {}",
            flags.join(" "),
            c_options.join(" "),
            extra.join(" "),
            cargo_args.join(" ")
        );
    }
    let error = cmd.exec();
    Err(format!("cannot run {cargo}: {error}"))
}

/// Cargo's target directory for the current package: `$CARGO_TARGET_DIR`, else `target/`
/// beside the workspace's Cargo.toml.
fn target_dir(cargo: &str) -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
        return Ok(absolute(PathBuf::from(dir)));
    }
    let out = Command::new(cargo)
        .args(["locate-project", "--workspace", "--message-format=plain"])
        .output()
        .map_err(|e| format!("cannot run {cargo}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{cargo} locate-project: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let manifest = PathBuf::from(OsString::from(
        String::from_utf8_lossy(&out.stdout).trim().to_string(),
    ));
    Ok(manifest.parent().unwrap_or(Path::new(".")).join("target"))
}

fn absolute(path: PathBuf) -> PathBuf {
    if path.is_absolute() {
        path
    } else {
        std::env::current_dir()
            .map(|d| d.join(&path))
            .unwrap_or(path)
    }
}
