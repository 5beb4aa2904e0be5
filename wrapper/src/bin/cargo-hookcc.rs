//! `cargo hookcc build|run|test [hookcc options] [cargo arguments]`: runs cargo with the
//! RUSTFLAGS of `hookcc --rustflags` (docs/rust.md; the plan is [`hookcc_driver::cargo`]).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use hookcc_driver::cargo::{cargo_plan, CargoAction, CargoHost, USAGE};
use hookcc_driver::rust::{RustHost, SystemRust};
use hookcc_driver::toolchain::Layout;

/// The machine: the environment, `cargo locate-project`, and hookcc beside this binary.
struct RealCargo {
    rust: SystemRust,
    cargo: String,
}

impl RustHost for RealCargo {
    fn layout(&self) -> Result<Layout, String> {
        self.rust.layout()
    }
    fn rustc(&self) -> String {
        self.rust.rustc()
    }
    fn rustc_version(&self) -> Result<String, String> {
        self.rust.rustc_version()
    }
    fn hookcc_exe(&self) -> Result<PathBuf, String> {
        self.rust.hookcc_exe()
    }
    fn plugin_for_llvm(&self, layout: &Layout, major: u32) -> Result<PathBuf, String> {
        self.rust.plugin_for_llvm(layout, major)
    }
}

impl CargoHost for RealCargo {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    /// `$CARGO_TARGET_DIR`, else `target/` beside the workspace's Cargo.toml.
    fn target_dir(&self) -> Result<PathBuf, String> {
        if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR").filter(|d| !d.is_empty()) {
            let dir = PathBuf::from(dir);
            return Ok(if dir.is_absolute() {
                dir
            } else {
                std::env::current_dir().map(|d| d.join(&dir)).unwrap_or(dir)
            });
        }
        let out = Command::new(&self.cargo)
            .args(["locate-project", "--workspace", "--message-format=plain"])
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.cargo))?;
        if !out.status.success() {
            return Err(format!(
                "{} locate-project: {}",
                self.cargo,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let manifest = PathBuf::from(OsString::from(
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
        ));
        Ok(manifest.parent().unwrap_or(Path::new(".")).join("target"))
    }

    fn cxx(&self) -> Option<PathBuf> {
        Some(self.rust.hookcc.with_file_name("hookcc++")).filter(|p| p.is_file())
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("cargo-hookcc: error: {message}");
            ExitCode::from(1)
        }
    }
}

fn run(args: &[String]) -> Result<ExitCode, String> {
    let me = std::env::current_exe().map_err(|e| format!("cannot locate cargo-hookcc: {e}"))?;
    let me = me.canonicalize().unwrap_or(me);
    let hookcc = me.with_file_name("hookcc");
    if !hookcc.is_file() {
        return Err(format!(
            "{}: hookcc is not beside cargo-hookcc (install both, scripts/install.sh)",
            hookcc.display()
        ));
    }
    let host = RealCargo {
        rust: SystemRust { hookcc },
        cargo: std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string()),
    };
    let plan = match cargo_plan(args, &host)? {
        CargoAction::Help => {
            print!("{USAGE}");
            return Ok(ExitCode::SUCCESS);
        }
        CargoAction::Run(plan) => plan,
    };
    if plan.verbose {
        let env: Vec<String> = plan.env.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
        eprintln!(
            "cargo-hookcc: {} {} {}",
            env.join(" "),
            host.cargo,
            plan.args.join(" ")
        );
    }
    // exec: cargo's exit status, signals and output reach the caller unchanged.
    let error = Command::new(&host.cargo)
        .args(&plan.args)
        .envs(plan.env.iter().map(|(k, v)| (k, v)))
        .exec();
    Err(format!("cannot run {}: {error}", host.cargo))
}
