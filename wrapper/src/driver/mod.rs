//! From hookcc's command line to the clang command it runs.

use std::path::{Path, PathBuf};

use crate::args::{expand_response_files, quote_gnu, CommandLine};
use crate::options::{
    is_own_option, read_glob_files, take_own_options, HookOptions, HookPlacement, PassConfig,
    RuntimeComponent,
};
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
    /// Stores a generated file (named by its contents) in the cache and returns its path.
    fn cached_file(&self, extension: &str, contents: &str) -> Result<PathBuf, String>;
    /// The name of the program that started hookcc (`/proc/PPID/comm`), if known.
    fn parent_program(&self) -> Option<String>;
    /// A file's identity for cache keys (path, size, modification time).
    fn file_stamp(&self, path: &Path) -> String;
    /// Checks that the plugins a compile loads exist (see `toolchain::check_plugins`).
    fn check_plugins(&self, _layout: &Layout) -> Result<(), String> {
        Ok(())
    }
    /// Of `candidates` (arguments of clang's command line `args`), those clang's driver does
    /// not know, as it says itself: `clang -### ARGS` prints "unknown argument" for each and
    /// runs nothing. Asked only when an argument looks like a misspelt option of hookcc's.
    fn unknown_to_clang(
        &self,
        _clang: &Path,
        _args: &[String],
        _candidates: &[String],
    ) -> Vec<String> {
        Vec::new()
    }
    /// Whether the link input at `path` (an object, an archive, a shared library) calls the
    /// trace runtime's hooks (see `inputs::calls_trace_hooks`).
    fn calls_trace_hooks(&self, _path: &Path) -> bool {
        false
    }
}

/// The environment variables that change what hookcc does without showing on its command line:
/// a compiler cache that hashes the command line only must not see them change.
const HOOK_ENVIRONMENT: &[&str] = &[
    "HOOKCC_TRACE",
    "NITRO_PROFILE",
    "NITRO_PROFILE_TYPE",
    "HOOKCC_NITRO_CLOCK",
    "HOOKCC_TRACE_CLOCK",
];

/// The key of everything hookcc's output depends on besides its command line: the settings it
/// reads from the environment, its plugins and runtime sources, and the clang it runs.
fn cache_key(host: &dyn Host, clang: &Path) -> Result<String, String> {
    let mut parts: Vec<(&str, String)> = Vec::new();
    for name in
        HOOK_ENVIRONMENT
            .iter()
            .chain(&["HOOKCC_CLANG", "HOOKCC_PLUGIN", "HOOKCC_RUNTIME_DIR"])
    {
        parts.push((name, host.var(name).unwrap_or_default()));
    }
    let layout = host.layout()?;
    parts.push(("pass", host.file_stamp(&layout.plugin)));
    parts.push(("frontend", host.file_stamp(&layout.frontend_plugin)));
    parts.push(("runtime", host.file_stamp(&layout.include_dir())));
    parts.push(("clang", host.file_stamp(clang)));
    Ok(crate::runtime::cache_key(&parts))
}

/// The hook settings the environment gives (`NAME=value`, the set ones of [`HOOK_ENVIRONMENT`]).
fn hook_settings_in_environment(host: &dyn Host) -> Vec<String> {
    HOOK_ENVIRONMENT
        .iter()
        .filter_map(|name| {
            host.var(name)
                .filter(|v| !v.is_empty())
                .map(|v| format!("{name}={v}"))
        })
        .collect()
}

/// Refuses to compile under a compiler cache that does not hash what hookcc's output depends
/// on (`CC="ccache hookcc"` without `CCACHE_COMPILERCHECK='%compiler% --print-cache-key'`, or
/// `CC="sccache hookcc"`). Every compile, with hooks or without: ccache's direct mode hands an
/// object back without running hookcc at all, so a plain object cached now would be the answer
/// to a later build that has HOOKCC_TRACE=1 in its environment (and the other way round).
/// ccache takes the refusal of its `-E` run for a preprocessor error and compiles uncached, by
/// running hookcc itself: correct, not cached. sccache stops with this message.
fn check_cache_launcher(host: &dyn Host) -> Result<(), String> {
    let Some(parent) = host.parent_program() else {
        return Ok(());
    };
    if parent != "ccache" && parent != "sccache" {
        return Ok(());
    }
    let keyed = parent == "ccache"
        && host
            .var("CCACHE_COMPILERCHECK")
            .is_some_and(|check| check.contains("--print-cache-key"));
    if keyed {
        return Ok(());
    }
    let from_environment = hook_settings_in_environment(host);
    Err(format!(
        "running under {parent}, which hashes neither hookcc's environment{} nor its plugins: \
         it could hand this object back to a build with other hook settings, or another's to \
         this one. Let hookcc run the cache (CC=hookcc HOOKCC_LAUNCHER={parent}){}",
        if from_environment.is_empty() {
            String::new()
        } else {
            format!(" ({})", from_environment.join(" "))
        },
        if parent == "ccache" {
            ", or make ccache ask hookcc: CCACHE_COMPILERCHECK='%compiler% --print-cache-key'"
        } else {
            ""
        }
    ))
}

/// Refuses hook settings from the environment under distcc (`CC="distcc hookcc"`): distcc sends
/// its servers the command line, not the environment, so this machine's preprocessing would see
/// HOOKCC_TRACE=1 or NITRO_PROFILE=TRUE and the server's compile would not — objects without
/// hooks, silently. Settings on the command line travel (`--trace`, `-profile`).
fn check_distcc(host: &dyn Host) -> Result<(), String> {
    if host.parent_program().as_deref() != Some("distcc") {
        return Ok(());
    }
    let from_environment = hook_settings_in_environment(host);
    if from_environment.is_empty() {
        return Ok(());
    }
    Err(format!(
        "running under distcc, which sends its servers the command line but not the \
         environment: {} would reach this machine's preprocessing, not the server's compile, \
         and the object would have no hooks. Put the settings on the command line (hookcc \
         --trace, -profile, --nitro-clock=…; docs/build-systems.md, \"distcc\")",
        from_environment.join(" ")
    ))
}

/// The command to run.
#[derive(Debug, PartialEq, Eq)]
pub struct Plan {
    pub clang: PathBuf,
    pub args: Vec<String>,
    pub verbose: bool,
    /// A compiler cache to run clang through (`HOOKCC_LAUNCHER`): run `launcher clang args`.
    pub launcher: Option<PathBuf>,
    /// Notes to print if clang fails: an argument that is neither clang's nor hookcc's but
    /// near one of hookcc's own options (`--trce`), with that option ([`misspelling_notes`]).
    pub notes: Vec<String>,
}

/// For every argument of clang's that looks like a misspelt option of hookcc's (`--trce`,
/// [`crate::options::near_own_option`]) and that clang does not know either, a note naming
/// hookcc's option. hookcc stays transparent: clang still gets the argument and says what it
/// says ("unknown argument: '--trce'"), with its exit status; the note comes after. A valid
/// clang option near one of hookcc's (`--profile`, clang's, is one edit from `-profile`) gets
/// no note, since clang is asked.
pub fn misspelling_notes(host: &dyn Host, clang: &Path, clang_args: &[String]) -> Vec<String> {
    let near: Vec<(String, &str)> = clang_args
        .iter()
        .filter_map(|arg| crate::options::near_own_option(arg).map(|own| (arg.clone(), own)))
        .collect();
    if near.is_empty() {
        return Vec::new();
    }
    let candidates: Vec<String> = near.iter().map(|(arg, _)| arg.clone()).collect();
    let unknown = host.unknown_to_clang(clang, clang_args, &candidates);
    near.into_iter()
        .filter(|(arg, _)| unknown.contains(arg))
        .map(|(arg, own)| {
            format!(
                "`{arg}` is not an option of clang's either: did you mean hookcc's `{own}`? \
                 (`hookcc --help` lists hookcc's options)"
            )
        })
        .collect()
}

/// One a compiler run, so a `Plan` kept inline costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, PartialEq, Eq)]
pub enum Action {
    Help,
    /// Print this line (a path hookcc was asked for) and exit.
    Print(String),
    Run(Plan),
    /// `--rustflags`: print the RUSTFLAGS for these options (see [`crate::rust`]).
    RustFlags(HookOptions),
    /// `--version` alone: clang's own `--version` text, then [`version_line`].
    Version {
        clang: PathBuf,
        args: Vec<String>,
    },
}

/// What `hookcc --version` prints after clang's own text: hookcc's version and the clang it
/// runs. After, not before: build systems read a compiler's version from the start of that
/// text (Meson takes the first version number in it and looks for "clang"; CMake's own
/// compiler-ID check compiles a file instead, and autotools only log it), so they still see
/// clang 19.1.7. The words avoid what Meson looks for before "clang" ("Free Software
/// Foundation", "xt-"; tests/tests/buildsystems.rs builds with Meson and CMake).
pub fn version_line(clang: &Path) -> String {
    format!(
        "hookcc {} (hook plugins for LLVM {}), running {}",
        env!("CARGO_PKG_VERSION"),
        crate::toolchain::LLVM_MAJOR,
        clang.display()
    )
}

/// The flags the runtime component is compiled with for this command line: its target flags;
/// for a bare-metal build `-ffreestanding` (no hosted C library to ask for threads, files or
/// clocks) after the C library's `-isystem` directories, so that the runtime sees the same
/// `<stdint.h>` types as the firmware; and the component's build options.
fn runtime_flags(
    command_line: &CommandLine,
    component: RuntimeComponent,
    options: &HookOptions,
) -> Vec<String> {
    let mut flags = command_line.target_flags.clone();
    if command_line.bare_metal() {
        flags.extend(command_line.system_includes.iter().cloned());
        flags.push("-ffreestanding".to_string());
    }
    if component == RuntimeComponent::FunctionCost && options.nitro_thread_cpu_clock {
        flags.push("-DHKN_FC_THREAD_CPU_CLOCK".to_string());
    }
    if component == RuntimeComponent::Trace && options.trace_serialized_clock {
        flags.push("-DHKRT_CLOCK_SERIALIZED".to_string());
    }
    if component == RuntimeComponent::Trace {
        // The names were checked (letters, digits, `_$.@`): safe inside a C string.
        for (define, names) in [
            ("HKRT_TRACE_START", &options.trace_start),
            ("HKRT_TRACE_STOP", &options.trace_stop),
        ] {
            if !names.is_empty() {
                flags.push(format!("-D{define}=\"{}\"", names.join(",")));
            }
        }
    }
    flags
}

/// The arguments that load the plugins and configure them. The frontend plugin turns pragmas
/// and attributes into marks. The pass library goes in twice: as `-fpass-plugin` for the pass,
/// and as `-fplugin` so that clang loads it before it parses `-mllvm` (clang-19 loads pass
/// plugins only after parsing `-mllvm`, which then rejects the plugin's options).
fn plugin_args(layout: &Layout, config: &PassConfig) -> Vec<String> {
    let plugin = layout.plugin.display();
    let mut args = vec![
        format!("-fplugin={}", layout.frontend_plugin.display()),
        format!("-fplugin={plugin}"),
        format!("-fpass-plugin={plugin}"),
    ];
    // The exclusion lists go to the frontend plugin, which knows names as written and the files
    // functions are defined in: one argument per item (an item may hold a comma).
    for (kind, list) in [
        ("exclude-function", &config.exclude_functions),
        ("exclude-file", &config.exclude_files),
    ] {
        for item in list {
            args.push(format!("-fplugin-arg-hookcc-{kind}={item}"));
        }
    }
    if config.hook_intrinsics {
        args.push("-fplugin-arg-hookcc-hook-intrinsics".to_string());
    }
    // `-Xclang -mllvm -Xclang OPTION`, not `-mllvm OPTION`: the driver gives `-mllvm` to every
    // job, `-cc1as` included, which has no plugin and rejects the options (with
    // `-save-temps` clang assembles in a job of its own: it printed LLVM's usage and wrote no
    // object); `-Xclang` arguments reach only the `-cc1` jobs, where the plugin is loaded.
    let mut mllvm = |option: String| {
        args.extend(["-Xclang", "-mllvm", "-Xclang"].map(String::from));
        args.push(option);
    };
    for (which, hook) in [("entry", &config.entry), ("exit", &config.exit)] {
        if let Some(hook) = hook {
            mllvm(format!("-hookcc-{which}={}", hook.symbol));
            mllvm(format!("-hookcc-{which}-parm={}", hook.parm.pass_name()));
        }
    }
    if config.placement != HookPlacement::Source {
        mllvm(format!(
            "-hookcc-placement={}",
            config.placement.pass_name()
        ));
    }
    if !config.default_on {
        mllvm("-hookcc-default-off".to_string());
    }
    if config.skip_inline {
        mllvm("-hookcc-skip-inline".to_string());
    }
    for glob in &config.include {
        mllvm(format!("-hookcc-include={glob}"));
    }
    for glob in &config.exclude {
        mllvm(format!("-hookcc-exclude={glob}"));
    }
    if config.min_size > 0 {
        mllvm(format!("-hookcc-min-size={}", config.min_size));
    }
    for name in &config.exclude_crates {
        mllvm(format!("-hookcc-exclude-crate={name}"));
    }
    if let Some(outline) = &config.outline {
        mllvm(format!("-hookcc-outline={outline}"));
    }
    args
}

/// The implicit declarations TI's hook options create: a header force-included into every
/// translation unit, so that a disagreeing declaration or definition is clang's own error
/// ("conflicting types for '__entry_hook'") pointing at the user's line, with a note showing
/// the expected signature. In C++ the hooks are `extern "C"`.
fn hook_declarations(config: &PassConfig) -> String {
    let mut text = String::from(
        "/* Generated by hookcc: the hook declarations implied by --entry_hook/--exit_hook. */\n\
         #ifndef __ASSEMBLER__\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n",
    );
    let mut seen = Vec::new();
    for hook in [&config.entry, &config.exit].into_iter().flatten() {
        if !seen.contains(&hook.symbol) {
            text.push_str(&hook.parm.c_declaration(&hook.symbol));
            text.push('\n');
            seen.push(hook.symbol.clone());
        }
    }
    text.push_str("#ifdef __cplusplus\n}\n#endif\n#endif\n");
    text
}

/// Whether this command links an executable from inputs compiled with --trace. Such a link
/// needs the trace runtime whatever the environment says now: Meson relinked test programs
/// without HOOKCC_TRACE while their libraries kept hooks, and every later traced run failed
/// with `undefined symbol: __hookcc_enter` (ninja does not track the environment). Only the
/// inputs named on the command line are read, not libraries found through `-l`.
fn links_hooked_inputs(command_line: &CommandLine, host: &dyn Host) -> bool {
    command_line.links()
        && !command_line.shared
        && !command_line.relocatable
        && command_line
            .link_inputs
            .iter()
            .any(|input| host.calls_trace_hooks(Path::new(input)))
}

/// CMake's compiler ABI probe: `CMake<LANG>CompilerABI.<ext>`, compiled and linked with `-v`
/// (CMakeDetermineCompilerABI.cmake) to read the compiler's implicit directories and libraries.
fn is_cmake_abi_probe(command_line: &CommandLine) -> bool {
    command_line
        .sources
        .iter()
        .chain(&command_line.link_inputs)
        .filter_map(|input| Path::new(input).file_name()?.to_str())
        .any(|name| name.starts_with("CMake") && name.contains("CompilerABI."))
}

/// hookcc's own options inside `@file` response files, read as clang reads the files (and
/// the files they name): such a file is replaced by its own options and a response file of
/// the rest, in the cache (clang rejected `--trace` from a file as an unknown argument). A
/// file without any of hookcc's options stays as it is, so a long command line stays short.
fn own_options_out_of_response_files(
    args: &[String],
    host: &dyn Host,
) -> Result<Vec<String>, String> {
    let mut out = Vec::with_capacity(args.len());
    for arg in args {
        if arg.starts_with('@') {
            let expanded = expand_response_files(std::slice::from_ref(arg));
            if expanded.iter().any(|a| is_own_option(a)) {
                let (own, rest): (Vec<String>, Vec<String>) =
                    expanded.into_iter().partition(|a| is_own_option(a));
                out.extend(own);
                let file = host.cached_file("rsp", &quote_gnu(&rest))?;
                out.push(format!("@{}", file.display()));
                continue;
            }
        }
        out.push(arg.clone());
    }
    Ok(out)
}

/// Works out the clang command for hookcc's arguments (`argv[1..]`). `cxx` is true when hookcc
/// runs as a C++ compiler (`hookcc++`).
pub fn plan(cxx: bool, raw_args: &[String], host: &dyn Host) -> Result<Action, String> {
    let raw_args = own_options_out_of_response_files(raw_args, host)?;
    let (mut options, clang_args) =
        take_own_options(&raw_args, &|k| host.var(k)).map_err(|e| e.to_string())?;
    read_glob_files(&mut options)?;
    if options.help {
        return Ok(Action::Help);
    }
    if options.rustflags {
        if let Some(extra) = clang_args.first() {
            return Err(format!(
                "--rustflags takes only hookcc's own options, not `{extra}` (target and \
                 compiler flags belong to cargo and rustc)"
            ));
        }
        return Ok(Action::RustFlags(options));
    }
    if options.print_make_include {
        let path = host.layout()?.runtime_dir.join("make/nitro.mk");
        return Ok(Action::Print(path.display().to_string()));
    }
    let clang = host.find_clang()?;
    if clang_args == ["--version"] {
        let mut args = Vec::new();
        if cxx {
            args.push("--driver-mode=g++".to_string());
        }
        args.push("--version".to_string());
        return Ok(Action::Version { clang, args });
    }
    if options.print_cache_key {
        return Ok(Action::Print(format!(
            "hookcc-cache-key {}",
            cache_key(host, &clang)?
        )));
    }
    let launcher = match host.var("HOOKCC_LAUNCHER").filter(|v| !v.is_empty()) {
        Some(name) => Some(which::which(&name).map_err(|_| {
            format!("HOOKCC_LAUNCHER={name}: no such program (give a path or a name on PATH)")
        })?),
        None => None,
    };
    if options.print_runtime {
        let command_line = CommandLine::parse(&expand_response_files(&clang_args));
        let layout = host.layout()?;
        let component = options.runtime_component();
        let object = host.runtime_object(
            component,
            &clang,
            &layout,
            &runtime_flags(&command_line, component, &options),
        )?;
        return Ok(Action::Print(
            object.map(|o| o.display().to_string()).unwrap_or_default(),
        ));
    }
    let notes = misspelling_notes(host, &clang, &clang_args);
    let mut args = Vec::with_capacity(clang_args.len() + 12);
    if cxx {
        // Exactly what clang++ is: the same binary in g++ driver mode.
        args.push("--driver-mode=g++".to_string());
    }
    check_cache_launcher(host)?;
    check_distcc(host)?;
    let command_line = CommandLine::parse(&expand_response_files(&clang_args));
    let mut component = options.runtime_component();
    // CMake learns the compiler's own include directories and libraries from the verbose
    // output of its ABI probe: what hookcc adds (its runtime's include directory, -pthread)
    // was recorded as the compiler's, and then dropped from, or added to, every target's flags.
    let cmake_probe = is_cmake_abi_probe(&command_line);
    if cmake_probe {
        component = RuntimeComponent::None;
    } else if !options.instruments()
        && component == RuntimeComponent::None
        && links_hooked_inputs(&command_line, host)
    {
        component = RuntimeComponent::Trace;
    }
    if component == RuntimeComponent::None && (cmake_probe || !options.instruments()) {
        // Transparent: clang sees exactly the user's arguments.
        args.extend(clang_args);
        return Ok(Action::Run(Plan {
            clang,
            args,
            verbose: options.verbose,
            launcher,
            notes,
        }));
    }
    let layout = host.layout()?;
    let config = options.pass_config();
    if let Some(config) = config.as_ref().filter(|_| command_line.compiles()) {
        host.check_plugins(&layout)?;
        host.check_clang(&clang)?;
        args.extend(plugin_args(&layout, config));
    }
    if command_line.preprocesses && (config.is_some() || component != RuntimeComponent::None) {
        // <hookcc/trace.h> and friends, after the user's own include directories (not for
        // preprocessed input, where clang would warn that the option is unused).
        args.push("-idirafter".to_string());
        args.push(layout.include_dir().display().to_string());
    }
    if let Some(config) = config.as_ref().filter(|_| command_line.preprocesses) {
        if config.declare_hooks {
            args.push("-include".to_string());
            args.push(
                host.cached_file("h", &hook_declarations(config))?
                    .display()
                    .to_string(),
            );
        }
    }
    if launcher.is_some() && config.is_some() {
        // The cache hashes the command line: this define puts the plugins and settings on it.
        args.push(format!(
            "-D__HOOKCC_CACHE_KEY__={}",
            cache_key(host, &clang)?
        ));
    }
    args.extend(clang_args);
    if command_line.links() && !command_line.shared && !command_line.relocatable {
        let flags = runtime_flags(&command_line, component, &options);
        if let Some(object) = host.runtime_object(component, &clang, &layout, &flags)? {
            if command_line.sets_language {
                args.push("-x".to_string());
                args.push("none".to_string());
            }
            args.push(object.display().to_string());
            if command_line.bare_metal() {
                // No threads and no dynamic linking on bare metal.
                return Ok(Action::Run(Plan {
                    clang,
                    args,
                    verbose: options.verbose,
                    launcher,
                    notes,
                }));
            }
            // Instrumented shared libraries call the hooks of the executable's runtime.
            for symbol in component.exported_symbols() {
                args.push(format!("-Wl,--export-dynamic-symbol={symbol}"));
            }
            // The runtime's threads. Not where clang adds no libraries (-nodefaultlibs, as
            // rustc links): -pthread would add nothing there, and clang warns that it is unused,
            // which nightly rustc shows on every link ("warning: linker stderr"); rustc's link
            // names -lpthread and -lc itself.
            if !command_line.no_default_libs {
                args.push("-pthread".to_string());
            }
        }
    }
    Ok(Action::Run(Plan {
        clang,
        args,
        verbose: options.verbose,
        launcher,
        notes,
    }))
}

#[cfg(test)]
mod tests;
