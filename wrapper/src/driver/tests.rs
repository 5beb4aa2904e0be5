//! The tests of [`super::plan`]: hookcc's command lines and the clang commands they make,
//! with a fake host.

use super::*;
use std::cell::RefCell;

/// A host that starts nothing and records the runtime builds asked for.
struct FakeHost {
    env: Vec<(&'static str, &'static str)>,
    runtime_builds: RefCell<Vec<Vec<String>>>,
    /// The response files written, in order.
    response_files: RefCell<Vec<String>>,
}

impl FakeHost {
    fn new(env: &[(&'static str, &'static str)]) -> Self {
        FakeHost {
            env: env.to_vec(),
            runtime_builds: RefCell::new(vec![]),
            response_files: RefCell::new(vec![]),
        }
    }
}

impl Host for FakeHost {
    fn var(&self, name: &str) -> Option<String> {
        self.env
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
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
        Ok(component
            .source_name()
            .map(|n| PathBuf::from(format!("/cache/{n}.o"))))
    }
    fn cached_file(&self, extension: &str, contents: &str) -> Result<PathBuf, String> {
        if extension == "rsp" {
            // Written for real: the plan reads it back to see what clang will do.
            let mut files = self.response_files.borrow_mut();
            files.push(contents.to_string());
            let path = std::env::temp_dir().join(format!(
                "hookcc-fake-{}-{}.rsp",
                std::process::id(),
                files.len()
            ));
            std::fs::write(&path, contents).unwrap();
            return Ok(path);
        }
        assert!(contents.contains("extern \"C\""));
        Ok(PathBuf::from(format!("/cache/decl.{extension}")))
    }
    fn parent_program(&self) -> Option<String> {
        self.var("TEST_PARENT")
    }
    fn unknown_to_clang(&self, _: &Path, _: &[String], candidates: &[String]) -> Vec<String> {
        // clang-19 knows --profile (and refuses it for this target), not --trce.
        candidates
            .iter()
            .filter(|c| *c != "--profile")
            .cloned()
            .collect()
    }
    fn calls_trace_hooks(&self, path: &Path) -> bool {
        path.to_string_lossy().contains("hooked")
    }
    fn file_stamp(&self, path: &Path) -> String {
        path.display().to_string()
    }
}

fn run(cxx: bool, args: &[&str], host: &FakeHost) -> Vec<String> {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    match plan(cxx, &args, host).unwrap() {
        Action::Run(plan) => plan.args,
        Action::Help => vec!["<help>".into()],
        Action::RustFlags(_) => vec!["<rustflags>".into()],
        Action::Print(line) => vec![format!("<print {line}>")],
        Action::Version { .. } => vec!["<version>".into()],
    }
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

#[test]
fn bare_metal_runtime_is_freestanding_with_the_c_library_headers() {
    let host = FakeHost::new(&[("NITRO_PROFILE_TYPE", "CALLTRACE")]);
    let flags = [
        "--target=armv5te-none-eabi",
        "-mcpu=arm926ej-s",
        "-isystem",
        "/usr/lib/picolibc/arm-none-eabi/include",
    ];
    let mut args = flags.to_vec();
    args.push("--print-hook-runtime");
    assert_eq!(run(false, &args, &host), ["<print /cache/calltrace.o>"]);
    let mut expected: Vec<String> = flags.iter().map(|s| s.to_string()).collect();
    expected.push("-ffreestanding".into());
    assert_eq!(host.runtime_builds.borrow()[0], expected);
    // Linking with hookcc: the same runtime, and no -pthread.
    let mut args = flags.to_vec();
    args.extend(["-profile", "main.o", "-o", "fw.elf"]);
    let linked = run(false, &args, &host);
    assert!(
        linked.contains(&"/cache/calltrace.o".to_string()),
        "{linked:?}"
    );
    assert!(!linked.contains(&"-pthread".to_string()), "{linked:?}");
    assert_eq!(host.runtime_builds.borrow()[1], expected);
    // No component: an empty line.
    let none = FakeHost::new(&[]);
    assert_eq!(run(false, &["--print-hook-runtime"], &none), ["<print >"]);
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
fn own_options_in_a_response_file_are_read_and_the_rest_passed_on() {
    let dir = std::env::temp_dir().join(format!("hookcc-rsp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rsp = dir.join("args");
    std::fs::write(&rsp, "--trace -O2 '-DNAME=a b'\n-c a.c").unwrap();
    let host = FakeHost::new(&[]);
    let at = format!("@{}", rsp.display());
    let args = run(false, &[at.as_str(), "-o", "a.o"], &host);
    std::fs::remove_dir_all(&dir).unwrap();
    let written = std::env::temp_dir().join(format!("hookcc-fake-{}-1.rsp", std::process::id()));
    std::fs::remove_file(&written).unwrap();
    assert!(
        args.contains(&"-fpass-plugin=/p/libhookcc_pass.so".to_string()),
        "{args:?}"
    );
    assert!(!args.contains(&"--trace".to_string()), "{args:?}");
    assert!(args.ends_with(&[format!("@{}", written.display()), "-o".into(), "a.o".into()]));
    assert_eq!(
        *host.response_files.borrow(),
        ["-O2\n-DNAME=a\\ b\n-c\na.c\n"]
    );
    // A response file without hookcc's options is passed as it is.
    let args = run(false, &["--trace", "@missing-or-plain", "-c", "a.c"], &host);
    assert!(args.contains(&"@missing-or-plain".to_string()), "{args:?}");
}

#[test]
fn a_link_of_hooked_inputs_gets_the_trace_runtime_without_hook_options() {
    let host = FakeHost::new(&[]);
    let args = run(false, &["main.o", "libhooked.so", "-o", "app"], &host);
    assert!(args.contains(&"/cache/trace.o".to_string()), "{args:?}");
    assert!(
        args.iter()
            .any(|a| a.starts_with("-Wl,--export-dynamic-symbol=")),
        "{args:?}"
    );
    // No hooked input, or a shared library or relocatable link: nothing added.
    for plain in [
        &["main.o", "libplain.a", "-o", "app"][..],
        &["-shared", "hooked.o", "-o", "libx.so"],
        &["-r", "hooked.o", "-o", "all.o"],
        &["-c", "hooked.c"],
    ] {
        assert_eq!(run(false, plain, &host), plain, "{plain:?}");
    }
}

#[test]
fn cmakes_compiler_abi_probe_is_built_as_clang_would() {
    let host = FakeHost::new(&[]);
    for probe in [
        &[
            "--trace",
            "-v",
            "-c",
            "/usr/share/cmake-3.25/Modules/CMakeCCompilerABI.c",
        ][..],
        &[
            "--trace",
            "-v",
            "CMakeFiles/cmTC_1.dir/CMakeCXXCompilerABI.cpp.o",
            "-o",
            "cmTC_1",
        ],
    ] {
        assert_eq!(run(false, probe, &host), &probe[1..], "{probe:?}");
    }
}

#[test]
fn hook_intrinsics_reaches_the_frontend_plugin() {
    let host = FakeHost::new(&[]);
    let arg = "-fplugin-arg-hookcc-hook-intrinsics".to_string();
    assert!(!run(false, &["--trace", "-c", "a.c"], &host).contains(&arg));
    let args = run(false, &["--trace", "--hook-intrinsics", "-c", "a.c"], &host);
    assert!(args.contains(&arg), "{args:?}");
    assert!(!args.contains(&"--hook-intrinsics".to_string()), "{args:?}");
}

#[test]
fn hook_options_reach_only_the_cc1_jobs_not_the_assembler() {
    // `-mllvm` would also reach `-cc1as` (with -save-temps), which rejects them.
    let host = FakeHost::new(&[]);
    let args = run(false, &["--trace", "-save-temps", "-c", "a.c"], &host);
    assert!(
        args.windows(2)
            .all(|w| w[1] != "-mllvm" || w[0] == "-Xclang"),
        "{args:?}"
    );
    let exclude = ["-Xclang", "-mllvm", "-Xclang", "-hookcc-exclude=main"].map(String::from);
    let args = run(
        false,
        &["--trace", "--hook-exclude=main", "-c", "a.c"],
        &host,
    );
    assert!(args.windows(4).any(|w| w == exclude), "{args:?}");
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
    let args = run(
        false,
        &["--target=aarch64-linux-gnu", "a.o", "b.o", "-o", "prog"],
        &host,
    );
    assert!(!args.iter().any(|a| a.contains("plugin")));
    assert!(args.contains(&"/cache/trace.o".to_string()));
    assert_eq!(
        host.runtime_builds.borrow()[0],
        ["--target=aarch64-linux-gnu"]
    );
}

/// Issue 27 item 4: rustc links with -nodefaultlibs, where clang ignores -pthread and
/// warns, which nightly rustc printed on every link. Other links keep it.
#[test]
fn pthread_only_where_clang_adds_default_libraries() {
    let host = FakeHost::new(&[("HOOKCC_TRACE", "1")]);
    let plain = run(false, &["a.o", "-o", "prog"], &host);
    assert!(plain.contains(&"-pthread".to_string()), "{plain:?}");
    for flag in ["-nodefaultlibs", "-nostdlib"] {
        let args = run(
            false,
            &["a.o", "-lpthread", "-lc", flag, "-o", "prog"],
            &host,
        );
        assert!(args.contains(&"/cache/trace.o".to_string()), "{args:?}");
        assert!(
            args.iter()
                .any(|a| a.starts_with("-Wl,--export-dynamic-symbol=")),
            "{args:?}"
        );
        assert!(!args.contains(&"-pthread".to_string()), "{flag}: {args:?}");
    }
}

#[test]
fn shared_library_and_preprocessing_get_no_runtime() {
    let host = FakeHost::new(&[]);
    let shared = run(
        false,
        &["--trace", "-shared", "-fPIC", "l.c", "-o", "l.so"],
        &host,
    );
    assert!(shared.iter().any(|a| a.starts_with("-fpass-plugin")));
    assert!(!shared.contains(&"/cache/trace.o".to_string()));
    let pre = run(false, &["--trace", "-E", "a.c"], &host);
    assert!(!pre.iter().any(|a| a.starts_with("-fpass-plugin")));
    assert!(pre.contains(&"/p/runtime/include".to_string()));
}

#[test]
fn preprocessed_input_gets_the_plugin_and_no_include_options() {
    // What a distcc server runs: the hooks go in, but include options would only make
    // clang warn that they are unused.
    let host = FakeHost::new(&[]);
    for args in [
        vec!["--trace", "-c", "a.i", "-o", "a.o"],
        vec!["--trace", "-x", "cpp-output", "-c", "a.src", "-o", "a.o"],
        vec!["--trace", "-c", "a.ii", "-o", "a.o"],
    ] {
        let planned = run(false, &args, &host);
        assert!(
            planned.iter().any(|a| a.starts_with("-fpass-plugin")),
            "{args:?}"
        );
        assert!(
            !planned.contains(&"-idirafter".to_string()),
            "{args:?}: {planned:?}"
        );
        assert!(
            !planned.contains(&"-include".to_string()),
            "{args:?}: {planned:?}"
        );
    }
    let mixed = run(false, &["--trace", "-c", "a.i", "b.c"], &host);
    assert!(mixed.contains(&"-idirafter".to_string()));
}

#[test]
fn runtime_after_a_language_flag_is_not_read_as_source() {
    let host = FakeHost::new(&[]);
    let args = run(false, &["--trace", "-x", "c", "prog.src", "-o", "p"], &host);
    let n = args.len();
    assert_eq!(&args[n - 5..n - 2], ["-x", "none", "/cache/trace.o"]);
}

#[test]
fn ti_hooks_are_declared_and_configured() {
    let host = FakeHost::new(&[]);
    let args = run(
        false,
        &[
            "--entry_hook=h",
            "--entry_parm=address",
            "--exit_hook=h",
            "--remove_hooks_when_inlining",
            "-c",
            "a.c",
        ],
        &host,
    );
    for expected in [
        "-hookcc-entry=h",
        "-hookcc-entry-parm=address",
        "-hookcc-exit-parm=none",
        "-hookcc-placement=after-inlining",
        "-hookcc-skip-inline",
        "/cache/decl.h",
    ] {
        assert!(
            args.contains(&expected.to_string()),
            "{expected} missing from {args:?}"
        );
    }
    let decls = hook_declarations(
        &crate::options::take_own_options(
            &[
                "--entry_hook=h".to_string(),
                "--entry_parm=address".to_string(),
                "--exit_hook=h".to_string(),
            ],
            &|_| None,
        )
        .unwrap()
        .0
        .pass_config()
        .unwrap(),
    );
    assert_eq!(
        decls.matches("void h(").count(),
        1,
        "one declaration for a hook used twice: {decls}"
    );
    assert!(decls.contains("void h(void (*addr)());"), "{decls}");
}

#[test]
fn hook_runtime_none_links_nothing() {
    let host = FakeHost::new(&[]);
    let args = run(false, &["--trace", "--hook-runtime=none", "a.c"], &host);
    assert!(!args.contains(&"/cache/trace.o".to_string()));
}

#[test]
fn nitro_clock_builds_the_function_cost_runtime_with_the_thread_cpu_clock() {
    let host = FakeHost::new(&[("NITRO_PROFILE_TYPE", "FUNCTIONCOST")]);
    run(
        false,
        &["-profile", "--nitro-clock=thread-cpu", "a.c"],
        &host,
    );
    run(false, &["-profile", "a.c"], &host);
    let builds = host.runtime_builds.borrow();
    assert_eq!(builds[0], ["-DHKN_FC_THREAD_CPU_CLOCK"]);
    assert!(builds[1].is_empty(), "{builds:?}");
    let err = plan(false, &["--nitro-clock=wall".to_string()], &host).unwrap_err();
    assert!(err.contains("tick, thread-cpu"), "{err}");
}

#[test]
fn trace_clock_serialized_builds_the_trace_runtime_with_the_serialized_clock_read() {
    let host = FakeHost::new(&[]);
    run(
        false,
        &["--trace", "--trace-clock=serialized", "a.c"],
        &host,
    );
    run(false, &["--trace", "--trace-clock=fast", "a.c"], &host);
    let builds = host.runtime_builds.borrow();
    assert_eq!(builds[0], ["-DHKRT_CLOCK_SERIALIZED"]);
    assert!(builds[1].is_empty(), "{builds:?}");
    let err = plan(false, &["--trace-clock=lfence".to_string()], &host).unwrap_err();
    assert!(err.contains("fast, serialized"), "{err}");
}

#[test]
fn a_runtime_without_hooks_gets_its_header_and_object_but_no_plugin() {
    let host = FakeHost::new(&[]);
    let args = run(false, &["--hook-runtime=pfp", "p.c", "-o", "p"], &host);
    assert!(!args.iter().any(|a| a.contains("plugin")), "{args:?}");
    assert!(args.contains(&"/p/runtime/include".to_string()), "{args:?}");
    assert!(args.contains(&"/cache/pfp.o".to_string()), "{args:?}");
    assert!(args.contains(&"-Wl,--export-dynamic-symbol=pfp*".to_string()));
}

#[test]
fn gcc_instrument_functions_uses_the_pass_with_cyg_hooks_and_exclusions() {
    let host = FakeHost::new(&[]);
    let args = run(
        false,
        &[
            "-finstrument-functions",
            "-finstrument-functions-exclude-function-list=helper,ns::skip",
            "-finstrument-functions-exclude-file-list=/usr/include",
            "-c",
            "a.c",
        ],
        &host,
    );
    for expected in [
        "-hookcc-entry=__cyg_profile_func_enter",
        "-hookcc-exit=__cyg_profile_func_exit",
        "-hookcc-entry-parm=address-callsite",
        "-fplugin-arg-hookcc-exclude-function=helper",
        "-fplugin-arg-hookcc-exclude-function=ns::skip",
        "-fplugin-arg-hookcc-exclude-file=/usr/include",
    ] {
        assert!(
            args.contains(&expected.to_string()),
            "{expected} missing: {args:?}"
        );
    }
    assert!(
        !args.iter().any(|a| a.starts_with("-finstrument")),
        "{args:?}"
    );
    assert!(host.runtime_builds.borrow().is_empty());
    // The lists alone instrument nothing: clang sees neither them nor a plugin.
    let args = run(
        false,
        &["-finstrument-functions-exclude-file-list=x", "-c", "a.c"],
        &host,
    );
    assert_eq!(args, ["-c", "a.c"]);
}

#[test]
fn hook_settings_from_the_environment_are_refused_under_distcc() {
    let host = FakeHost::new(&[("HOOKCC_TRACE", "1"), ("TEST_PARENT", "distcc")]);
    let err = plan(false, &["-E".into(), "a.c".into()], &host).unwrap_err();
    assert!(
        err.contains("HOOKCC_TRACE=1") && err.contains("--trace"),
        "{err}"
    );
    let host = FakeHost::new(&[("NITRO_PROFILE", "TRUE"), ("TEST_PARENT", "distcc")]);
    assert!(plan(false, &["-c".into(), "a.c".into()], &host).is_err());
    // On the command line they travel; without settings nothing is refused.
    let host = FakeHost::new(&[("TEST_PARENT", "distcc")]);
    assert!(plan(false, &["--trace".into(), "-c".into(), "a.c".into()], &host).is_ok());
    assert!(plan(false, &["-c".into(), "a.c".into()], &host).is_ok());
}

#[test]
fn compiler_caches_never_see_a_hook_setting_they_do_not_hash() {
    // CC="ccache hookcc" with HOOKCC_TRACE=1: refused, naming the ways out.
    let host = FakeHost::new(&[("HOOKCC_TRACE", "1"), ("TEST_PARENT", "ccache")]);
    let err = plan(false, &["-c".into(), "a.c".into()], &host).unwrap_err();
    assert!(
        err.contains("HOOKCC_TRACE=1")
            && err.contains("HOOKCC_LAUNCHER=ccache")
            && err.contains("CCACHE_COMPILERCHECK='%compiler% --print-cache-key'"),
        "{err}"
    );
    // Without hooks too, and with hooks on the command line: a direct-mode hit would
    // hand the object to a later build with other settings in its environment.
    let host = FakeHost::new(&[("TEST_PARENT", "ccache")]);
    assert!(plan(false, &["-c".into(), "a.c".into()], &host).is_err());
    let host = FakeHost::new(&[("TEST_PARENT", "sccache")]);
    let err = plan(false, &["--trace".into(), "-c".into(), "a.c".into()], &host).unwrap_err();
    assert!(err.contains("HOOKCC_LAUNCHER=sccache"), "{err}");
    // ... unless ccache asks hookcc for its key.
    let host = FakeHost::new(&[
        ("HOOKCC_TRACE", "1"),
        ("TEST_PARENT", "ccache"),
        ("CCACHE_COMPILERCHECK", "%compiler% --print-cache-key"),
    ]);
    assert!(plan(false, &["-c".into(), "a.c".into()], &host).is_ok());
    // The key changes with each setting.
    let key = |env: &[(&'static str, &'static str)]| {
        let host = FakeHost::new(env);
        run(false, &["--print-cache-key"], &host)
    };
    assert_ne!(key(&[]), key(&[("HOOKCC_TRACE", "1")]));
    assert_ne!(key(&[("NITRO_PROFILE_TYPE", "CALLTRACE")]), key(&[]));
}

#[test]
fn launcher_runs_clang_with_a_key_of_the_hooks() {
    let host = FakeHost::new(&[("HOOKCC_LAUNCHER", "sh")]);
    let Action::Run(p) =
        plan(false, &["--trace".into(), "-c".into(), "a.c".into()], &host).unwrap()
    else {
        panic!()
    };
    assert!(p.launcher.is_some_and(|l| l.ends_with("sh")));
    assert!(p
        .args
        .iter()
        .any(|a| a.starts_with("-D__HOOKCC_CACHE_KEY__=")));
    // Transparent: launched, nothing added.
    let Action::Run(p) = plan(false, &["-c".into(), "a.c".into()], &host).unwrap() else {
        panic!()
    };
    assert_eq!(p.args, ["-c", "a.c"]);
    assert!(p.launcher.is_some());
    let host = FakeHost::new(&[("HOOKCC_LAUNCHER", "/nonexistent/ccache")]);
    let err = plan(false, &["-c".into()], &host).unwrap_err();
    assert!(err.contains("HOOKCC_LAUNCHER=/nonexistent/ccache"), "{err}");
}

#[test]
fn print_make_include_names_the_runtimes_make_file() {
    let host = FakeHost::new(&[]);
    assert_eq!(
        run(false, &["--print-make-include"], &host),
        ["<print /p/runtime/make/nitro.mk>"]
    );
}

#[test]
fn version_alone_is_clangs_and_then_hookccs() {
    let host = FakeHost::new(&[]);
    let version = |cxx, args: &[&str]| plan(cxx, &strings(args), &host).unwrap();
    assert_eq!(
        version(false, &["--version"]),
        Action::Version {
            clang: "/usr/bin/clang-19".into(),
            args: strings(&["--version"])
        }
    );
    assert_eq!(
        version(true, &["--trace", "--version"]),
        Action::Version {
            clang: "/usr/bin/clang-19".into(),
            args: strings(&["--driver-mode=g++", "--version"])
        }
    );
    // With anything else on the line it is clang's (`-v --version`, a compile).
    assert!(matches!(
        version(false, &["-v", "--version"]),
        Action::Run(_)
    ));
    let line = version_line(Path::new("/usr/bin/clang-19"));
    assert!(
        line.starts_with("hookcc ") && line.ends_with("/usr/bin/clang-19"),
        "{line}"
    );
    assert!(
        !line.contains("clang version") && !line.contains("xt-"),
        "{line}"
    );
}

#[test]
fn a_misspelt_own_option_goes_to_clang_with_a_note_for_its_failure() {
    let host = FakeHost::new(&[]);
    let plan_of = |args: &[&str]| match plan(false, &strings(args), &host).unwrap() {
        Action::Run(plan) => plan,
        other => panic!("{other:?}"),
    };
    let p = plan_of(&["--trce", "-O2", "a.c"]);
    // Transparent: clang gets the line as it was and says what it says.
    assert_eq!(p.args, ["--trce", "-O2", "a.c"]);
    assert_eq!(p.notes.len(), 1);
    assert!(
        p.notes[0].contains("`--trce` is not an option of clang's either")
            && p.notes[0].contains("did you mean hookcc's `--trace`?"),
        "{:?}",
        p.notes
    );
    // clang's own option near one of hookcc's: no note.
    assert!(plan_of(&["--profile", "a.c"]).notes.is_empty());
    assert!(plan_of(&["-O2", "-c", "a.c"]).notes.is_empty());
}

#[test]
fn help_and_bad_options() {
    let host = FakeHost::new(&[]);
    assert_eq!(run(false, &["--help"], &host), ["<help>"]);
    let err = plan(false, &["--hook-runtime=x".to_string()], &host).unwrap_err();
    assert!(err.contains("--hook-runtime=x"), "{err}");
}
