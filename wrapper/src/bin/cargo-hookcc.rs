//! `cargo hookcc build|run|test [hookcc options] [cargo arguments]`: runs cargo with the
//! RUSTFLAGS of `hookcc --rustflags` (docs/rust.md; the plan is [`hookcc_driver::cargo`]).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use hookcc_driver::cargo::{
    cargo_plan, options_in_help, runner_output, CargoAction, CargoHost, RUNNER_ARG, TRACES_DIR_VAR,
    USAGE,
};
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

    /// Those of `candidates` that `cargo COMMAND --help` does not name.
    fn unknown_to_cargo(&self, command: &str, candidates: &[String]) -> Vec<String> {
        let Ok(out) = Command::new(&self.cargo).args([command, "--help"]).output() else {
            return Vec::new();
        };
        if !out.status.success() {
            return Vec::new();
        }
        let known = options_in_help(&String::from_utf8_lossy(&out.stdout));
        candidates
            .iter()
            .filter(|arg| {
                let name = arg.split_once('=').map_or(arg.as_str(), |(name, _)| name);
                !known.iter().any(|k| k == name)
            })
            .cloned()
            .collect()
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

/// As cargo's runner: `cargo-hookcc --hookcc-runner=N [user runner, N words] PROGRAM ARGS…`.
/// Sets the program's HOOKCC_OUTPUT to the traces directory and execs (the pid stays the
/// program's, so the name it gets is its own).
fn run_as_runner(user_words: &str, rest: &[String]) -> Result<ExitCode, String> {
    let n: usize = user_words
        .parse()
        .map_err(|_| format!("{RUNNER_ARG}={user_words}: not a number of words"))?;
    let program = rest
        .get(n)
        .ok_or_else(|| format!("{RUNNER_ARG}: no program to run after {n} runner words"))?;
    let dir = std::env::var_os(TRACES_DIR_VAR)
        .map(PathBuf::from)
        .ok_or_else(|| {
            format!("{RUNNER_ARG}: {TRACES_DIR_VAR} is not set (run by cargo hookcc)")
        })?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let output = runner_output(&dir, Path::new(program), std::process::id());
    let error = Command::new(&rest[0])
        .args(&rest[1..])
        .env("HOOKCC_OUTPUT", &output)
        .env_remove(TRACES_DIR_VAR)
        .exec();
    Err(format!("cannot run {}: {error}", rest[0]))
}

/// The traces in `dir` written since `since`, oldest first.
fn traces_since(dir: &Path, since: std::time::SystemTime) -> Vec<PathBuf> {
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let modified = e.metadata().ok()?.modified().ok()?;
            (modified >= since).then(|| (modified, e.path()))
        })
        .collect();
    found.sort();
    found.into_iter().map(|(_, p)| p).collect()
}

fn run(args: &[String]) -> Result<ExitCode, String> {
    if let Some(words) = args.first().and_then(|a| a.strip_prefix(RUNNER_ARG)) {
        return run_as_runner(words.trim_start_matches('='), &args[1..]);
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
    let mut cargo = Command::new(&host.cargo);
    cargo
        .args(&plan.args)
        .envs(plan.env.iter().map(|(k, v)| (k, v)));
    if plan.traces_dir.is_none() && plan.notes.is_empty() {
        // exec: cargo's exit status, signals and output reach the caller unchanged.
        let error = cargo.exec();
        return Err(format!("cannot run {}: {error}", host.cargo));
    }
    // Waits for cargo, to list the traces its programs wrote (the file system's clock: a
    // second's slack for coarse timestamps).
    let start = std::time::SystemTime::now() - std::time::Duration::from_secs(1);
    let status = cargo
        .status()
        .map_err(|e| format!("cannot run {}: {e}", host.cargo))?;
    if !status.success() {
        // After cargo's own error ("unexpected argument '--trce' found").
        for note in &plan.notes {
            eprintln!("cargo-hookcc: note: {note}");
        }
    }
    let traces = plan
        .traces_dir
        .as_deref()
        .map(|dir| traces_since(dir, start))
        .unwrap_or_default();
    if !traces.is_empty() {
        eprintln!("cargo-hookcc: traces written (hookprof report FILE):");
        for trace in &traces {
            eprintln!("  {}", trace.display());
        }
    }
    use std::os::unix::process::ExitStatusExt;
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => ExitCode::from(code.clamp(0, 255) as u8),
        (None, Some(signal)) => ExitCode::from((128 + signal).clamp(0, 255) as u8),
        _ => ExitCode::FAILURE,
    })
}
