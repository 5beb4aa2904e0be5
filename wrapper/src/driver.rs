//! From hookcc's command line to the clang command it runs.

use std::path::{Path, PathBuf};

use crate::args::{expand_response_files, CommandLine};
use crate::options::{take_own_options, HookOptions, RuntimeComponent};
use crate::toolchain::Layout;

/// What hookcc needs from the machine. Behind a trait so that tests of the argument handling
/// never start a compiler.
pub trait Host {
    fn var(&self, name: &str) -> Option<String>;
    fn find_clang(&self) -> Result<PathBuf, String>;
    fn check_clang(&self, clang: &Path) -> Result<(), String>;
    fn layout(&self) -> Result<Layout, String>;
    fn runtime_object(
        &self,
        component: RuntimeComponent,
        clang: &Path,
        layout: &Layout,
        target_flags: &[String],
    ) -> Result<Option<PathBuf>, String>;
}

/// The command to run.
#[derive(Debug, PartialEq, Eq)]
pub struct Plan {
    pub clang: PathBuf,
    pub args: Vec<String>,
    pub verbose: bool,
}

#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    Help,
    Run(Plan),
}

/// The native trace hooks: `void __hookcc_enter(void *fn, void *call_site)` and `_exit`.
const TRACE_ENTRY: &str = "__hookcc_enter";
const TRACE_EXIT: &str = "__hookcc_exit";

/// The arguments that load the plugins and configure them. The frontend plugin turns pragmas
/// and attributes into marks. The pass library goes in twice: as `-fpass-plugin` for the pass,
/// and as `-fplugin` so that clang loads it before it parses `-mllvm` (clang-19 loads pass
/// plugins only after parsing `-mllvm`, which then rejects the plugin's options).
fn plugin_args(layout: &Layout, options: &HookOptions) -> Vec<String> {
    let plugin = layout.plugin.display();
    let mut args = vec![
        format!("-fplugin={}", layout.frontend_plugin.display()),
        format!("-fplugin={plugin}"),
        format!("-fpass-plugin={plugin}"),
    ];
    let mut mllvm = |option: String| {
        args.push("-mllvm".to_string());
        args.push(option);
    };
    if options.trace {
        mllvm(format!("-hookcc-entry={TRACE_ENTRY}"));
        mllvm(format!("-hookcc-exit={TRACE_EXIT}"));
        mllvm("-hookcc-entry-parm=address-callsite".to_string());
        mllvm("-hookcc-exit-parm=address-callsite".to_string());
    }
    args
}

/// Works out the clang command for hookcc's arguments (`argv[1..]`). `cxx` is true when hookcc
/// runs as a C++ compiler (`hookcc++`).
pub fn plan(cxx: bool, raw_args: &[String], host: &dyn Host) -> Result<Action, String> {
    let (options, clang_args) = take_own_options(raw_args, &|k| host.var(k)).map_err(|e| e.to_string())?;
    if options.help {
        return Ok(Action::Help);
    }
    let clang = host.find_clang()?;
    let mut args = Vec::with_capacity(clang_args.len() + 12);
    if cxx {
        // Exactly what clang++ is: the same binary in g++ driver mode.
        args.push("--driver-mode=g++".to_string());
    }
    let component = options.runtime_component();
    if !options.instruments() && component == RuntimeComponent::None {
        // Transparent: clang sees exactly the user's arguments.
        args.extend(clang_args);
        return Ok(Action::Run(Plan { clang, args, verbose: options.verbose }));
    }
    let command_line = CommandLine::parse(&expand_response_files(&clang_args));
    let layout = host.layout()?;
    if options.instruments() && command_line.compiles() {
        host.check_clang(&clang)?;
        args.extend(plugin_args(&layout, &options));
    }
    if options.instruments() && !command_line.sources.is_empty() {
        // <hookcc/trace.h> and friends, after the user's own include directories.
        args.push("-idirafter".to_string());
        args.push(layout.include_dir().display().to_string());
    }
    args.extend(clang_args);
    if command_line.links() && !command_line.shared && !command_line.relocatable {
        let target_flags = &command_line.target_flags;
        if let Some(object) = host.runtime_object(component, &clang, &layout, target_flags)? {
            if command_line.sets_language {
                args.push("-x".to_string());
                args.push("none".to_string());
            }
            args.push(object.display().to_string());
            // Instrumented shared libraries call the hooks of the executable's runtime.
            args.push("-Wl,--export-dynamic-symbol=__hookcc_*".to_string());
            args.push("-pthread".to_string());
        }
    }
    Ok(Action::Run(Plan { clang, args, verbose: options.verbose }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A host that starts nothing and records the runtime builds asked for.
    struct FakeHost {
        env: Vec<(&'static str, &'static str)>,
        runtime_builds: RefCell<Vec<Vec<String>>>,
    }

    impl FakeHost {
        fn new(env: &[(&'static str, &'static str)]) -> Self {
            FakeHost { env: env.to_vec(), runtime_builds: RefCell::new(vec![]) }
        }
    }

    impl Host for FakeHost {
        fn var(&self, name: &str) -> Option<String> {
            self.env.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
        }
        fn find_clang(&self) -> Result<PathBuf, String> {
            Ok(PathBuf::from("/usr/bin/clang-19"))
        }
        fn check_clang(&self, _: &Path) -> Result<(), String> {
            Ok(())
        }
        fn layout(&self) -> Result<Layout, String> {
            Ok(Layout {
                plugin: "/p/libhookcc_pass.so".into(),
                frontend_plugin: "/p/libhookcc_clang.so".into(),
                runtime_dir: "/p/runtime".into(),
            })
        }
        fn runtime_object(
            &self,
            component: RuntimeComponent,
            _: &Path,
            _: &Layout,
            target_flags: &[String],
        ) -> Result<Option<PathBuf>, String> {
            self.runtime_builds.borrow_mut().push(target_flags.to_vec());
            Ok(component.source_name().map(|n| PathBuf::from(format!("/cache/{n}.o"))))
        }
    }

    fn run(cxx: bool, args: &[&str], host: &FakeHost) -> Vec<String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match plan(cxx, &args, host).unwrap() {
            Action::Run(plan) => plan.args,
            Action::Help => vec!["<help>".into()],
        }
    }

    #[test]
    fn without_hook_options_arguments_pass_unchanged() {
        let host = FakeHost::new(&[]);
        let args = ["-O2", "-c", "a.c", "-o", "a.o", "-Werror", "@rsp"];
        assert_eq!(run(false, &args, &host), args);
        assert_eq!(run(true, &["x.cpp"], &host), ["--driver-mode=g++", "x.cpp"]);
        assert!(host.runtime_builds.borrow().is_empty());
    }

    #[test]
    fn trace_compile_only_adds_plugin_and_include_but_no_runtime() {
        let host = FakeHost::new(&[]);
        let args = run(false, &["--trace", "-O2", "-c", "a.c"], &host);
        assert!(args.contains(&"-fpass-plugin=/p/libhookcc_pass.so".to_string()));
        assert!(args.contains(&"-fplugin=/p/libhookcc_pass.so".to_string()));
        assert!(args.contains(&"-fplugin=/p/libhookcc_clang.so".to_string()));
        assert!(args.contains(&"-hookcc-entry=__hookcc_enter".to_string()));
        assert!(args.contains(&"/p/runtime/include".to_string()));
        assert!(!args.iter().any(|a| a.ends_with(".o")));
        assert!(!args.contains(&"--trace".to_string()));
        assert!(host.runtime_builds.borrow().is_empty());
    }

    #[test]
    fn trace_link_only_adds_runtime_for_the_target_and_no_plugin() {
        let host = FakeHost::new(&[("HOOKCC_TRACE", "1")]);
        let args = run(false, &["--target=aarch64-linux-gnu", "a.o", "b.o", "-o", "prog"], &host);
        assert!(!args.iter().any(|a| a.contains("plugin")));
        assert!(args.contains(&"/cache/trace.o".to_string()));
        assert_eq!(host.runtime_builds.borrow()[0], ["--target=aarch64-linux-gnu"]);
    }

    #[test]
    fn shared_library_and_preprocessing_get_no_runtime() {
        let host = FakeHost::new(&[]);
        let shared = run(false, &["--trace", "-shared", "-fPIC", "l.c", "-o", "l.so"], &host);
        assert!(shared.iter().any(|a| a.starts_with("-fpass-plugin")));
        assert!(!shared.contains(&"/cache/trace.o".to_string()));
        let pre = run(false, &["--trace", "-E", "a.c"], &host);
        assert!(!pre.iter().any(|a| a.starts_with("-fpass-plugin")));
        assert!(pre.contains(&"/p/runtime/include".to_string()));
    }

    #[test]
    fn runtime_after_a_language_flag_is_not_read_as_source() {
        let host = FakeHost::new(&[]);
        let args = run(false, &["--trace", "-x", "c", "prog.src", "-o", "p"], &host);
        let n = args.len();
        assert_eq!(&args[n - 5..n - 2], ["-x", "none", "/cache/trace.o"]);
    }

    #[test]
    fn hook_runtime_none_links_nothing() {
        let host = FakeHost::new(&[]);
        let args = run(false, &["--trace", "--hook-runtime=none", "a.c"], &host);
        assert!(!args.contains(&"/cache/trace.o".to_string()));
    }

    #[test]
    fn help_and_bad_options() {
        let host = FakeHost::new(&[]);
        assert_eq!(run(false, &["--help"], &host), ["<help>"]);
        let err = plan(false, &["--hook-runtime=x".to_string()], &host).unwrap_err();
        assert!(err.contains("--hook-runtime=x"), "{err}");
    }
}
