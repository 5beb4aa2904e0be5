//! `cargo hookcc`: from its command line to the cargo command it runs (the binary,
//! src/bin/cargo-hookcc.rs, only gathers the machine's facts and runs the plan).

use std::path::{Path, PathBuf};

use crate::options::take_own_options;
use crate::rust::{rustc_host, rustflags, RustHost};

pub const USAGE: &str = "\
Usage: cargo hookcc <cargo command> [hookcc options] [cargo arguments]
       e.g. cargo hookcc run --trace --release -- program arguments

Runs `cargo <command>` with the user's crates (not the precompiled std) and the C that `cc`
build scripts compile instrumented by hookcc. hookcc options are those of `hookcc --help`
(--trace, -profile, --entry_hook/--exit_hook/--*_parm, --hook-runtime=…, --hook-exclude=…,
--hook-exclude-crate=std,core,alloc, --hook-placement=…); without one, --trace. With --trace a
--release build has hooks only in the functions left after inlining, a debug build in every
function (--hook-placement=source: every function at any level). The build goes to
<target dir>/hookcc/<target triple>/. A misspelt hookcc option (--trce) goes to cargo as it
is; after cargo's error, cargo hookcc names the option meant.
";

/// The cargo command to run.
#[derive(Debug, PartialEq, Eq)]
pub struct CargoPlan {
    /// The arguments after `cargo`.
    pub args: Vec<String>,
    /// The environment variables to set.
    pub env: Vec<(String, String)>,
    pub verbose: bool,
    /// Where the programs cargo runs write their traces (`<target dir>/hookcc/traces`), when
    /// cargo hookcc chose it: the traces written there are listed at the end.
    pub traces_dir: Option<PathBuf>,
    /// Notes to print if cargo fails: an argument that is neither cargo's nor hookcc's but near
    /// one of hookcc's own options (`--trce`), with that option (as `hookcc` does for clang).
    pub notes: Vec<String>,
}

/// The first argument of `cargo-hookcc` run as cargo's runner (`CARGO_TARGET_<TRIPLE>_RUNNER`),
/// followed by how many words of the user's own runner come before the program.
pub const RUNNER_ARG: &str = "--hookcc-runner";
/// The traces directory, handed from `cargo hookcc` to its runner through cargo.
pub const TRACES_DIR_VAR: &str = "HOOKCC_CARGO_TRACES_DIR";

/// The `HOOKCC_OUTPUT` of a program run by cargo under `cargo hookcc`: `DIR/NAME.PID.hktrace`,
/// NAME the program's file name (a test binary's has cargo's hash: `calls-0f3c….1234.hktrace`).
pub fn runner_output(traces_dir: &Path, program: &Path, pid: u32) -> PathBuf {
    let name = program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "program".to_string());
    traces_dir.join(format!("{name}.{pid}.hktrace"))
}

#[derive(Debug, PartialEq, Eq)]
pub enum CargoAction {
    Help,
    Run(CargoPlan),
}

/// What `cargo hookcc` needs from the machine besides [`RustHost`].
pub trait CargoHost: RustHost {
    fn var(&self, name: &str) -> Option<String>;
    /// Cargo's target directory for the current package.
    fn target_dir(&self) -> Result<PathBuf, String>;
    /// `hookcc++`, if installed beside hookcc.
    fn cxx(&self) -> Option<PathBuf>;
    /// Of `candidates`, the options `cargo COMMAND` does not know (not in its `--help`).
    /// Asked only when an argument looks like a misspelt option of hookcc's.
    fn unknown_to_cargo(&self, _command: &str, _candidates: &[String]) -> Vec<String> {
        Vec::new()
    }
}

/// The long and short options a `cargo COMMAND --help` text names (`--release`, `-p`, …).
pub fn options_in_help(help: &str) -> Vec<String> {
    let mut options = Vec::new();
    for word in help.split(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_')) {
        let dashes = word.len() - word.trim_start_matches('-').len();
        if (dashes == 1 || dashes == 2) && word.len() > dashes {
            options.push(word.to_string());
        }
    }
    options
}

/// Plans `cargo hookcc` for its arguments (after `cargo-hookcc`; a leading `hookcc`, as cargo
/// passes it, is skipped).
pub fn cargo_plan(raw: &[String], host: &dyn CargoHost) -> Result<CargoAction, String> {
    let args = match raw.first().map(String::as_str) {
        Some("hookcc") => &raw[1..],
        _ => raw,
    };
    let Some((command, rest)) = args.split_first() else {
        return Err(format!("no cargo command given\n{USAGE}"));
    };
    if command == "--help" || command == "-h" {
        return Ok(CargoAction::Help);
    }
    // hookcc's options are recognized before `--` (after it, the program's own arguments).
    let split = rest.iter().position(|a| a == "--").unwrap_or(rest.len());
    let (mut options, mut cargo_args) =
        take_own_options(&rest[..split], &|k| host.var(k)).map_err(|e| e.to_string())?;
    cargo_args.extend(rest[split..].iter().cloned());
    // The same options as written, for hookcc compiling C (CFLAGS): the arguments that
    // take_own_options takes as its own, one at a time.
    let mut c_options: Vec<String> = rest[..split]
        .iter()
        .filter(|a| {
            take_own_options(std::slice::from_ref(*a), &|_| None)
                .is_ok_and(|(_, left)| left.is_empty())
        })
        .cloned()
        .collect();
    if options.pass_config().is_none() {
        options.trace = true;
        c_options.push("--trace".to_string());
    }
    let mut flags = rustflags(&options, host)?;

    let before_program_args = || cargo_args.iter().take_while(|a| *a != "--");
    let mut extra = Vec::new();
    // An explicit --target keeps RUSTFLAGS away from build scripts and proc macros (built for
    // the host without them); the host's own triple does that for a native build.
    let mut user_target = None;
    let mut words = before_program_args();
    while let Some(word) = words.next() {
        if word == "--target" {
            user_target = words.next().cloned();
        } else if let Some(triple) = word.strip_prefix("--target=") {
            user_target = Some(triple.to_string());
        }
    }
    match &user_target {
        // A cross build: hookcc, as rustc's linker, links and compiles the runtime for it
        // (clang takes Rust's triples). Not run end to end here: this machine has no Rust
        // standard library for another target (docs/rust.md).
        Some(triple) => flags.push(format!("-Clink-arg=--target={triple}")),
        None => {
            let version = host.rustc_version()?;
            let triple = rustc_host(&version)
                .ok_or_else(|| format!("{} -vV: no `host:` line", host.rustc()))?;
            extra.push(format!("--target={triple}"));
        }
    }
    if !before_program_args().any(|a| a == "--target-dir" || a.starts_with("--target-dir=")) {
        extra.push(format!(
            "--target-dir={}",
            host.target_dir()?.join("hookcc").display()
        ));
    }

    let mut env = Vec::new();
    // Traces go under the target directory, not into the package's source directory (cargo
    // test's working directory) where they get committed: each program cargo runs (run, test,
    // bench: through the runner) writes <target dir>/hookcc/traces/NAME.PID.hktrace. Build
    // scripts and what they run (a `configure`'s test programs, in a registry's source
    // directory) are not traced: they inherit HOOKCC_OUTPUT=/dev/null. A HOOKCC_OUTPUT of the
    // user's own is left alone and then applies to everything, build scripts too.
    let mut traces_dir = None;
    if options.trace && host.var("HOOKCC_OUTPUT").is_none() {
        let triple = match &user_target {
            Some(triple) => triple.clone(),
            None => rustc_host(&host.rustc_version()?)
                .unwrap_or_default()
                .to_string(),
        };
        let runner_var = format!(
            "CARGO_TARGET_{}_RUNNER",
            triple.to_uppercase().replace(['-', '.'], "_")
        );
        let user_runner: Vec<String> = host
            .var(&runner_var)
            .map(|r| r.split_whitespace().map(String::from).collect())
            .unwrap_or_default();
        let me = host.hookcc_exe()?.with_file_name("cargo-hookcc");
        let mut runner = vec![
            path_text(&me),
            format!("{RUNNER_ARG}={}", user_runner.len()),
        ];
        runner.extend(user_runner);
        let dir = host.target_dir()?.join("hookcc").join("traces");
        env.push((runner_var, runner.join(" ")));
        env.push((TRACES_DIR_VAR.to_string(), path_text(&dir)));
        env.push(("HOOKCC_OUTPUT".to_string(), "/dev/null".to_string()));
        traces_dir = Some(dir);
    }
    // CARGO_ENCODED_RUSTFLAGS, when set, wins over RUSTFLAGS: extend whichever is in use.
    if let Some(encoded) = host.var("CARGO_ENCODED_RUSTFLAGS") {
        let mut all: Vec<String> = encoded
            .split('\u{1f}')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        all.extend(flags.iter().cloned());
        env.push(("CARGO_ENCODED_RUSTFLAGS".to_string(), all.join("\u{1f}")));
    } else {
        let user = host.var("RUSTFLAGS").unwrap_or_default();
        let all = format!("{user} {}", flags.join(" ")).trim().to_string();
        env.push(("RUSTFLAGS".to_string(), all));
    }
    env.push(("RUSTC_BOOTSTRAP".to_string(), "1".to_string()));
    env.push(("CC".to_string(), path_text(&host.hookcc_exe()?)));
    if let Some(cxx) = host.cxx() {
        env.push(("CXX".to_string(), path_text(&cxx)));
    }
    for var in ["CFLAGS", "CXXFLAGS"] {
        let user = host.var(var).unwrap_or_default();
        let all = format!("{user} {}", c_options.join(" ")).trim().to_string();
        env.push((var.to_string(), all));
    }
    // A misspelt option of hookcc's (`--trce`) went to cargo, which will refuse it: say which
    // option was meant, unless cargo knows it (`--profile`, one edit from hookcc's -profile).
    let near: Vec<(String, &str)> = before_program_args()
        .filter_map(|arg| crate::options::near_own_option(arg).map(|own| (arg.clone(), own)))
        .collect();
    let mut notes = Vec::new();
    if !near.is_empty() {
        let candidates: Vec<String> = near.iter().map(|(arg, _)| arg.clone()).collect();
        let unknown = host.unknown_to_cargo(command, &candidates);
        for (arg, own) in near {
            if unknown.contains(&arg) {
                notes.push(format!(
                    "`{arg}` is not an option of cargo's either: did you mean hookcc's `{own}`? \
                     (`cargo hookcc --help`; `hookcc --help` lists hookcc's options)"
                ));
            }
        }
    }
    let mut args = vec![command.clone()];
    args.extend(extra);
    args.extend(cargo_args);
    Ok(CargoAction::Run(CargoPlan {
        args,
        env,
        verbose: options.verbose,
        traces_dir,
        notes,
    }))
}

fn path_text(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toolchain::Layout;

    struct FakeCargo(Vec<(&'static str, &'static str)>);

    impl RustHost for FakeCargo {
        fn layout(&self) -> Result<Layout, String> {
            let dir =
                std::env::temp_dir().join(format!("hookcc-cargo-test-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("libhookcc_pass_llvm22.so"), "").unwrap();
            Ok(Layout {
                plugin: dir.join("libhookcc_pass.so"),
                frontend_plugin: dir.join("libhookcc_clang.so"),
                runtime_dir: "/p/runtime".into(),
            })
        }
        fn rustc(&self) -> String {
            "rustc".into()
        }
        fn rustc_version(&self) -> Result<String, String> {
            Ok("host: x86_64-unknown-linux-gnu\nLLVM version: 22.1.2\n".into())
        }
        fn hookcc_exe(&self) -> Result<PathBuf, String> {
            Ok("/bin/hookcc".into())
        }
    }

    impl CargoHost for FakeCargo {
        fn var(&self, name: &str) -> Option<String> {
            self.0
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
        fn target_dir(&self) -> Result<PathBuf, String> {
            Ok("/ws/target".into())
        }
        fn cxx(&self) -> Option<PathBuf> {
            None
        }
        fn unknown_to_cargo(&self, _command: &str, candidates: &[String]) -> Vec<String> {
            let known = options_in_help("  -r, --release  build\n      --profile <NAME>  x");
            candidates
                .iter()
                .filter(|c| !known.contains(&c.split('=').next().unwrap().to_string()))
                .cloned()
                .collect()
        }
    }

    #[test]
    fn a_misspelt_hookcc_option_gets_a_note_and_cargos_own_none() {
        let p = plan(&["run", "--trce", "--profile=dev", "--", "--trce"], &[]);
        assert_eq!(p.notes.len(), 1, "{:?}", p.notes);
        assert!(
            p.notes[0].contains("`--trce` is not an option of cargo's either")
                && p.notes[0].contains("did you mean hookcc's `--trace`?"),
            "{:?}",
            p.notes
        );
        // Passed to cargo as they were, which says what it says.
        assert!(p.args.contains(&"--trce".to_string()));
        assert!(plan(&["run", "--release"], &[]).notes.is_empty());
        assert_eq!(
            options_in_help("  -p, --package [<SPEC>]  Package\n      --target-dir <DIRECTORY>"),
            ["-p", "--package", "--target-dir"]
        );
    }

    fn plan(args: &[&str], env: &[(&'static str, &'static str)]) -> CargoPlan {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match cargo_plan(&args, &FakeCargo(env.to_vec())).unwrap() {
            CargoAction::Run(plan) => plan,
            CargoAction::Help => panic!("help"),
        }
    }

    fn env<'a>(plan: &'a CargoPlan, name: &str) -> &'a str {
        &plan.env.iter().find(|(k, _)| k == name).expect(name).1
    }

    #[test]
    fn host_target_and_own_directory_before_the_program_arguments() {
        let p = plan(
            &["hookcc", "run", "--release", "--trace", "--", "--trace"],
            &[],
        );
        assert_eq!(
            p.args,
            [
                "run",
                "--target=x86_64-unknown-linux-gnu",
                "--target-dir=/ws/target/hookcc",
                "--release",
                "--",
                "--trace"
            ]
        );
        assert!(env(&p, "RUSTFLAGS").contains("-Cpasses=hookcc-options<entry=__hookcc_enter"));
        assert_eq!(env(&p, "RUSTC_BOOTSTRAP"), "1");
        assert_eq!(env(&p, "CC"), "/bin/hookcc");
        assert_eq!(env(&p, "CFLAGS"), "--trace");
        // Programs trace into the target directory, through the runner; build scripts not.
        assert_eq!(
            env(&p, "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER"),
            "/bin/cargo-hookcc --hookcc-runner=0"
        );
        assert_eq!(env(&p, TRACES_DIR_VAR), "/ws/target/hookcc/traces");
        assert_eq!(env(&p, "HOOKCC_OUTPUT"), "/dev/null");
        assert_eq!(
            p.traces_dir,
            Some(PathBuf::from("/ws/target/hookcc/traces"))
        );
    }

    #[test]
    fn a_user_runner_is_kept_and_a_user_output_wins() {
        let p = plan(
            &["test"],
            &[(
                "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER",
                "valgrind -q",
            )],
        );
        assert_eq!(
            env(&p, "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER"),
            "/bin/cargo-hookcc --hookcc-runner=2 valgrind -q"
        );
        let p = plan(&["test"], &[("HOOKCC_OUTPUT", "/tmp/t.hktrace")]);
        assert!(!p
            .env
            .iter()
            .any(|(k, _)| k.ends_with("_RUNNER") || k == "HOOKCC_OUTPUT"));
        assert_eq!(p.traces_dir, None);
        let p = plan(&["test", "-profile"], &[]);
        assert_eq!(p.traces_dir, None);
        assert_eq!(
            runner_output(Path::new("/t"), Path::new("/x/deps/calls-0f3c"), 42),
            Path::new("/t/calls-0f3c.42.hktrace")
        );
    }

    #[test]
    fn user_target_directory_and_flags_are_kept() {
        let p = plan(
            &[
                "build",
                "--target",
                "aarch64-unknown-linux-gnu",
                "--target-dir=t",
                "-profile",
            ],
            &[("RUSTFLAGS", "-Cdebuginfo=1"), ("CFLAGS", "-O1")],
        );
        assert_eq!(
            p.args,
            [
                "build",
                "--target",
                "aarch64-unknown-linux-gnu",
                "--target-dir=t"
            ]
        );
        assert!(env(&p, "RUSTFLAGS").starts_with("-Cdebuginfo=1 -Zllvm-plugins="));
        assert!(env(&p, "RUSTFLAGS").contains("entry=__PROFILE_ENTRY"));
        // The linker (hookcc) builds the runtime for that target.
        assert!(env(&p, "RUSTFLAGS").ends_with(" -Clink-arg=--target=aarch64-unknown-linux-gnu"));
        assert_eq!(env(&p, "CFLAGS"), "-O1 -profile");
    }

    #[test]
    fn without_a_hook_option_it_traces_and_encoded_flags_are_extended() {
        let p = plan(&["test"], &[("CARGO_ENCODED_RUSTFLAGS", "-Cfoo")]);
        let encoded = env(&p, "CARGO_ENCODED_RUSTFLAGS");
        assert!(
            encoded.starts_with("-Cfoo\u{1f}-Zllvm-plugins="),
            "{encoded}"
        );
        assert!(!p.env.iter().any(|(k, _)| k == "RUSTFLAGS"));
        assert_eq!(env(&p, "CFLAGS"), "--trace");
    }

    #[test]
    fn errors_and_help() {
        let none: Vec<String> = vec![];
        let e = cargo_plan(&none, &FakeCargo(vec![])).unwrap_err();
        assert!(e.contains("no cargo command"), "{e}");
        let help = cargo_plan(&["hookcc".into(), "--help".into()], &FakeCargo(vec![]));
        assert_eq!(help, Ok(CargoAction::Help));
        let e = cargo_plan(
            &["run".into(), "--hook-runtime=bad".into()],
            &FakeCargo(vec![]),
        )
        .unwrap_err();
        assert!(e.contains("--hook-runtime=bad"), "{e}");
    }
}
