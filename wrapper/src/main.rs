//! `hookcc` / `hookcc++`: see `hookcc --help`.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use hookcc_driver::driver::{plan, Action, Host};
use hookcc_driver::options::{RuntimeComponent, HELP};
use hookcc_driver::runtime;
use hookcc_driver::rust::{self, SystemRust};
use hookcc_driver::toolchain::{self, Layout};

struct RealHost;

impl Host for RealHost {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
    fn find_clang(&self) -> Result<PathBuf, String> {
        toolchain::find_clang(&|k| self.var(k))
    }
    fn check_clang(&self, clang: &Path) -> Result<(), String> {
        toolchain::check_clang_version(clang)
    }
    fn layout(&self) -> Result<Layout, String> {
        let exe =
            std::env::current_exe().map_err(|e| format!("cannot locate hookcc itself: {e}"))?;
        let exe = exe.canonicalize().unwrap_or(exe);
        Layout::find_or_build(&exe, &|k| self.var(k))
    }
    fn runtime_object(
        &self,
        component: RuntimeComponent,
        clang: &Path,
        layout: &Layout,
        target_flags: &[String],
    ) -> Result<Option<PathBuf>, String> {
        let cache = runtime::cache_dir(&|k| self.var(k));
        runtime::runtime_object(component, clang, &layout.runtime_dir, target_flags, &cache)
    }
    fn cached_file(&self, extension: &str, contents: &str) -> Result<PathBuf, String> {
        runtime::cached_file(&runtime::cache_dir(&|k| self.var(k)), extension, contents)
    }
    fn parent_program(&self) -> Option<String> {
        let parent = std::os::unix::process::parent_id();
        let comm = std::fs::read_to_string(format!("/proc/{parent}/comm")).ok()?;
        Some(comm.trim_end().to_string())
    }
    fn file_stamp(&self, path: &Path) -> String {
        runtime::file_stamp(path)
    }
    fn check_plugins(&self, layout: &Layout) -> Result<(), String> {
        toolchain::check_plugins(layout, self.var("HOOKCC_PLUGIN").is_some())
    }
    fn calls_trace_hooks(&self, path: &Path) -> bool {
        hookcc_driver::inputs::calls_trace_hooks(path)
    }
    fn unknown_to_clang(
        &self,
        clang: &Path,
        args: &[String],
        candidates: &[String],
    ) -> Vec<String> {
        toolchain::unknown_to_clang(clang, args, candidates)
    }
}

fn main() -> ExitCode {
    let mut argv = std::env::args();
    let argv0 = argv.next().unwrap_or_default();
    let args: Vec<String> = argv.collect();
    let name = Path::new(&argv0)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("hookcc");
    let cxx = name.ends_with("++") || name.ends_with("hookcxx");
    // `hookcc-ar` and `hookcc-ranlib` (links to hookcc): clang-19's own llvm-ar and
    // llvm-ranlib, for build systems whose archiver must read `-flto` objects (docs/build-systems.md).
    if let Some(tool) = ["ar", "ranlib"]
        .into_iter()
        .find(|tool| name.ends_with(&format!("-{tool}")))
    {
        let error = toolchain::find_clang(&|k| RealHost.var(k))
            .and_then(|clang| toolchain::llvm_tool(&clang, &format!("llvm-{tool}")))
            .map(|path| Command::new(path).args(&args).exec());
        let message = match error {
            Ok(error) => format!("cannot run llvm-{tool}: {error}"),
            Err(message) => message,
        };
        eprintln!("{name}: error: {message}");
        return ExitCode::from(1);
    }
    if args.len() == 1 && args[0] == "--print-man-page" {
        // Alone on the command line, as --clear-cache: hookcc(1), made from --help.
        print!("{}", hookcc_driver::man::man_page());
        return ExitCode::SUCCESS;
    }
    if args.len() == 1 && args[0] == "--clear-cache" {
        // Alone on the command line: with other arguments it would be passed to clang.
        let cache = runtime::cache_dir(&|k| RealHost.var(k));
        return match runtime::clear_cache(&cache) {
            Ok(n) => {
                println!("{name}: removed {n} cached files from {}", cache.display());
                ExitCode::SUCCESS
            }
            Err(message) => {
                eprintln!("{name}: error: {message}");
                ExitCode::from(1)
            }
        };
    }
    match plan(cxx, &args, &RealHost) {
        Ok(Action::Help) => {
            print!("{HELP}");
            ExitCode::SUCCESS
        }
        Ok(Action::RustFlags(options)) => match std::env::current_exe()
            .map_err(|e| format!("cannot locate hookcc itself: {e}"))
            .and_then(|exe| {
                let hookcc = exe.canonicalize().unwrap_or(exe);
                rust::rustflags(&options, &SystemRust { hookcc })
            }) {
            Ok(flags) => {
                println!("{}", flags.join(" "));
                ExitCode::SUCCESS
            }
            Err(message) => {
                eprintln!("{name}: error: {message}");
                ExitCode::from(1)
            }
        },
        Ok(Action::Version { clang, args }) => {
            // clang's text first, as it prints it, then hookcc's line (driver::version_line).
            let out = match Command::new(&clang).args(&args).output() {
                Ok(out) => out,
                Err(error) => {
                    eprintln!("{name}: error: cannot run {}: {error}", clang.display());
                    return ExitCode::from(1);
                }
            };
            use std::io::Write;
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(&out.stdout);
            let _ = writeln!(stdout, "{}", hookcc_driver::driver::version_line(&clang));
            let _ = std::io::stderr().write_all(&out.stderr);
            ExitCode::from(out.status.code().unwrap_or(1).clamp(0, 255) as u8)
        }
        Ok(Action::Print(line)) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Ok(Action::Run(plan)) => {
            let mut command = match &plan.launcher {
                Some(launcher) => {
                    let mut c = Command::new(launcher);
                    c.arg(&plan.clang);
                    c
                }
                None => Command::new(&plan.clang),
            };
            command.args(&plan.args);
            if plan.verbose {
                let program = command.get_program().to_string_lossy().into_owned();
                let args: Vec<_> = command.get_args().map(|a| a.to_string_lossy()).collect();
                eprintln!("hookcc: {program} {}", args.join(" "));
            }
            if !plan.notes.is_empty() {
                // A misspelt option of hookcc's: clang says what it says, then the notes.
                use std::os::unix::process::ExitStatusExt;
                return match command.status() {
                    Ok(status) => {
                        if !status.success() {
                            for note in &plan.notes {
                                eprintln!("{name}: note: {note}");
                            }
                        }
                        match (status.code(), status.signal()) {
                            (Some(code), _) => ExitCode::from(code.clamp(0, 255) as u8),
                            (None, Some(signal)) => {
                                ExitCode::from((128 + signal).clamp(0, 255) as u8)
                            }
                            _ => ExitCode::FAILURE,
                        }
                    }
                    Err(error) => {
                        eprintln!(
                            "{name}: error: cannot run {}: {error}",
                            command.get_program().to_string_lossy()
                        );
                        ExitCode::from(1)
                    }
                };
            }
            // exec: clang's exit status, signals and output reach the caller unchanged.
            let error = command.exec();
            eprintln!(
                "{name}: error: cannot run {}: {error}",
                command.get_program().to_string_lossy()
            );
            ExitCode::from(1)
        }
        Err(message) => {
            eprintln!("{name}: error: {message}");
            ExitCode::from(1)
        }
    }
}
