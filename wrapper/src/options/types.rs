//! What hookcc's own options make: the runtime component, the hooks and their parameters,
//! the pass's configuration (`PassConfig`), and the errors of reading them.

use super::names::near_own_option;
use std::fmt;

/// Which runtime component is linked into executables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeComponent {
    /// The native trace runtime (runtime/src/trace.c): per-thread buffers, `.hktrace` files.
    Trace,
    /// TI record buffers (runtime/src/ti.c): `entry_hook`, `exit_hook`, `task_switch_hook`, ….
    Ti,
    /// NITRO-SDK call trace (runtime/src/calltrace.c): `OS_InitCallTrace`, ….
    CallTrace,
    /// NITRO-SDK function cost (runtime/src/functioncost.c): `OS_InitFunctionCost`, ….
    FunctionCost,
    /// TI profile points (runtime/src/pfp.c): `pfpCreate`, `pfpBegin`, …, the program's own
    /// calls; no compiler hooks needed.
    Pfp,
    /// eCos-style gprof (runtime/src/gprof.c): a PC histogram and call-graph arcs, the arcs
    /// from an entry hook that calls the seed's `__profile_mcount(caller_pc, callee_pc)`.
    Gprof,
    /// Nothing: the user provides the hooks.
    None,
}

/// The names of a table of named values (an option's accepted values), for a message.
fn table_names<T>(table: &[(&str, T)]) -> String {
    table.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// The value a table names `name`.
fn table_value<T: Copy>(table: &[(&str, T)], name: &str) -> Option<T> {
    table.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

impl RuntimeComponent {
    const ALL: &'static [(&'static str, RuntimeComponent)] = &[
        ("calltrace", RuntimeComponent::CallTrace),
        ("functioncost", RuntimeComponent::FunctionCost),
        ("gprof", RuntimeComponent::Gprof),
        ("none", RuntimeComponent::None),
        ("pfp", RuntimeComponent::Pfp),
        ("ti", RuntimeComponent::Ti),
        ("trace", RuntimeComponent::Trace),
    ];

    pub fn names() -> String {
        table_names(Self::ALL)
    }

    pub fn parse(name: &str) -> Option<Self> {
        table_value(Self::ALL, name)
    }

    /// The symbols of the component that instrumented shared libraries call: the executable
    /// exports them (`--export-dynamic-symbol` globs).
    pub fn exported_symbols(self) -> &'static [&'static str] {
        match self {
            RuntimeComponent::Trace => &["__hookcc_*"],
            RuntimeComponent::Ti => &[
                "entry_hook*",
                "exit_hook*",
                "task_switch_hook*",
                "hook_init",
            ],
            RuntimeComponent::CallTrace | RuntimeComponent::FunctionCost => {
                &["__PROFILE_*", "OS_*"]
            }
            RuntimeComponent::Pfp => &["pfp*"],
            RuntimeComponent::Gprof => &["__profile_*", "profile_*", "gprof_*"],
            RuntimeComponent::None => &[],
        }
    }

    /// The runtime source file (`runtime/src/<name>.c`) compiled for this component, if any.
    pub fn source_name(self) -> Option<&'static str> {
        match self {
            RuntimeComponent::None => None,
            other => Self::ALL.iter().find(|(_, c)| *c == other).map(|(n, _)| *n),
        }
    }
}

/// What a hook receives (the pass's `-hookcc-*-parm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookParm {
    None,
    Name,
    Address,
    /// hookcc's native exit hook: the function's address + 2 (bit 1 marks the exit).
    ExitAddress,
    /// NITRO's `__PROFILE_ENTRY`: name, call site (lr) and the first four integer arguments.
    NameCallSiteArgs,
    /// gprof's `__profile_mcount(caller_pc, callee_pc)`: the call site, then the function.
    CallSiteAddress,
    /// GCC's `__cyg_profile_func_enter/exit(this_fn, call_site)`: the function, then the
    /// call site.
    AddressCallSite,
    /// `--pfp-functions`: the function's profile point (a variable the pass emits).
    PfpPoint,
}

impl HookParm {
    /// TI's `--entry_parm` / `--exit_parm` values.
    pub(super) fn parse_ti(value: &str) -> Option<Self> {
        match value {
            "name" => Some(HookParm::Name),
            "address" => Some(HookParm::Address),
            "none" => Some(HookParm::None),
            _ => None,
        }
    }

    pub fn pass_name(self) -> &'static str {
        match self {
            HookParm::None => "none",
            HookParm::Name => "name",
            HookParm::Address => "address",
            HookParm::ExitAddress => "exit-address",
            HookParm::NameCallSiteArgs => "name-callsite-args",
            HookParm::CallSiteAddress => "callsite-address",
            HookParm::AddressCallSite => "address-callsite",
            HookParm::PfpPoint => "pfp-point",
        }
    }

    /// The C declaration TI's options imply (`void hook(const char *name)`, …).
    pub fn c_declaration(self, hook: &str) -> String {
        match self {
            HookParm::None => format!("void {hook}(void);"),
            HookParm::Name => format!("void {hook}(const char *name);"),
            HookParm::Address => format!("void {hook}(void (*addr)());"),
            HookParm::ExitAddress => format!("void {hook}(void *fn_exit);"),
            HookParm::CallSiteAddress => format!("void {hook}(void *call_site, void *fn);"),
            HookParm::AddressCallSite => format!("void {hook}(void *this_fn, void *call_site);"),
            HookParm::PfpPoint => format!("void {hook}(void *point);"),
            HookParm::NameCallSiteArgs => format!(
                "void {hook}(const char *name, void *lr, __UINTPTR_TYPE__ r0, __UINTPTR_TYPE__ r1, \
                 __UINTPTR_TYPE__ r2, __UINTPTR_TYPE__ r3);"
            ),
        }
    }
}

/// When in the optimization pipeline the hooks go in (`--hook-placement=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookPlacement {
    /// At the start of the pipeline: every function of the source gets hooks, and a body the
    /// optimizer inlines keeps them (exact source-level call counts).
    Source,
    /// At the end of the optimizer: only the functions left after inlining get hooks
    /// (`--remove_hooks_when_inlining`, clang's `-finstrument-functions-after-inlining`).
    AfterInlining,
    /// Source at -O0, after inlining when optimizing (the pass reads the pipeline's level).
    Auto,
}

impl HookPlacement {
    const ALL: &'static [(&'static str, HookPlacement)] = &[
        ("after-inlining", HookPlacement::AfterInlining),
        ("auto", HookPlacement::Auto),
        ("source", HookPlacement::Source),
    ];

    pub fn names() -> String {
        table_names(Self::ALL)
    }

    pub fn parse(name: &str) -> Option<Self> {
        table_value(Self::ALL, name)
    }

    /// The pass's `-hookcc-placement=` value (the same words).
    pub fn pass_name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, p)| *p == self)
            .map(|(n, _)| *n)
            .expect("every placement has a name")
    }
}

/// One hook the pass inserts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hook {
    pub symbol: String,
    pub parm: HookParm,
}

/// Everything the pass needs to know, whatever dialect asked for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassConfig {
    pub entry: Option<Hook>,
    pub exit: Option<Hook>,
    pub placement: HookPlacement,
    /// Unmarked functions get hooks; when false only `#pragma profile on` ones do.
    pub default_on: bool,
    /// No hooks in functions declared inline (TI).
    pub skip_inline: bool,
    /// Declare the hooks implicitly in every translation unit (TI), `extern "C"` in C++.
    pub declare_hooks: bool,
    /// `--hook-include=GLOB`: when any, only functions whose name matches one get hooks.
    pub include: Vec<String>,
    /// `--hook-exclude=GLOB`: functions whose name matches one get none.
    pub exclude: Vec<String>,
    /// `--hook-min-size=N`: no hooks in functions of fewer than N IR instructions without a
    /// loop, unless an include glob names them (0: none left out).
    pub min_size: u32,
    /// `--hook-exclude-crate=NAME,…`: no hooks in Rust functions defined in these crates.
    pub exclude_crates: Vec<String>,
    /// `--hook-outline=auto|leaf|all|none|N`: which functions have their switched hooks in an
    /// outlined clone (the pass's default, `auto`, when None).
    pub outline: Option<String>,
    /// No hooks in functions whose user-visible name contains one of these (GCC's
    /// `-finstrument-functions-exclude-function-list=`).
    pub exclude_functions: Vec<String>,
    /// No hooks in functions defined in a file whose path contains one of these (GCC's
    /// `-finstrument-functions-exclude-file-list=`).
    pub exclude_files: Vec<String>,
    /// Hooks in `always_inline` functions and in functions of the compiler's own headers
    /// (`_mm256_add_epi32`, …), which get none by default (`--hook-intrinsics`).
    pub hook_intrinsics: bool,
}

/// TI cgtools' options (seeds/ti-c6000-function-hooks.txt).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TiOptions {
    /// `--entry_hook[=name]` (default name `__entry_hook`).
    pub entry_hook: Option<String>,
    /// `--exit_hook[=name]` (default name `__exit_hook`).
    pub exit_hook: Option<String>,
    /// `--entry_parm={name|address|none}`.
    pub entry_parm: Option<HookParm>,
    /// `--exit_parm={name|address|none}`.
    pub exit_parm: Option<HookParm>,
}

impl TiOptions {
    pub(super) fn any(&self) -> bool {
        self.entry_hook.is_some() || self.exit_hook.is_some()
    }
}

/// What hookcc was asked to do, from its options and the environment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HookOptions {
    /// `--trace` / `HOOKCC_TRACE=1`: native entry/exit hooks into the trace runtime.
    pub trace: bool,
    pub ti: TiOptions,
    /// `-profile` / `NITRO_PROFILE=TRUE`: Metrowerks' `__PROFILE_ENTRY` / `__PROFILE_EXIT`.
    pub profile: bool,
    /// `--dialect=nitro` (or any NITRO_PROFILE* variable set): the NITRO dialect is in use, so
    /// `#pragma profile on` turns hooks on even without `-profile`.
    pub nitro: bool,
    /// `--hook-runtime=NAME`; when unset, the mode's default.
    pub runtime: Option<RuntimeComponent>,
    /// `--hookcc-verbose` / `HOOKCC_VERBOSE=1`: print the clang command on stderr.
    pub verbose: bool,
    /// `--help` / `--hookcc-help`.
    pub help: bool,
    /// `--hook-include=GLOB` (repeatable).
    pub include: Vec<String>,
    /// `--hook-exclude=GLOB` (repeatable).
    pub exclude: Vec<String>,
    /// `--hook-min-size=N`.
    pub min_size: u32,
    /// `--hook-exclude-crate=NAME,…` (repeatable).
    pub exclude_crates: Vec<String>,
    /// `--hook-outline=auto|leaf|all|none|N`.
    pub outline: Option<String>,
    /// `--hook-placement=` / `--remove_hooks_when_inlining`, for every dialect; when unset,
    /// the dialect's default (see [`HookOptions::pass_config`]).
    pub placement: Option<HookPlacement>,
    /// The option that set `placement`, as written (for conflicts).
    pub placement_option: Option<String>,
    /// `--pfp-functions=GLOB` (repeatable): a TI profile point around each such function.
    pub pfp_functions: Vec<String>,
    /// `--rustflags`: print the RUSTFLAGS that make rustc do what the other options say
    /// (docs/rust.md), instead of running clang.
    pub rustflags: bool,
    /// `--print-make-include`: print the path of the make definitions for NITRO projects.
    pub print_make_include: bool,
    /// `--print-cache-key`: print the key that covers what hookcc's output depends on beyond
    /// its command line (for ccache's compiler_check).
    pub print_cache_key: bool,
    /// `--nitro-clock=thread-cpu` / `HOOKCC_NITRO_CLOCK=thread-cpu`: function cost measures
    /// each thread's CPU time instead of the OS tick.
    pub nitro_thread_cpu_clock: bool,
    /// `--trace-clock=serialized` / `HOOKCC_TRACE_CLOCK=serialized`: the trace runtime's hooks
    /// wait for the instructions before them to finish before they read the clock (`lfence`
    /// before `rdtsc`, `isb` before reading the AArch64 counter), so that what a hook pair costs
    /// does not depend on the code around it (docs/performance.md, "Times you can trust").
    pub trace_serialized_clock: bool,
    /// `--trace-start=F,…` / `--trace-stop=F,…`: the trace runtime's default triggers
    /// (HOOKCC_TRACE_START / HOOKCC_TRACE_STOP at run time override them), built into the
    /// runtime object the program links.
    pub trace_start: Vec<String>,
    pub trace_stop: Vec<String>,
    /// `-finstrument-functions` (GCC's and clang's flag), done by hookcc's pass:
    /// `__cyg_profile_func_enter/exit(this_fn, call_site)`, exits on unwind included.
    pub gcc_instrument: bool,
    /// `-finstrument-functions-after-inlining`: the same, hooks placed after inlining.
    pub gcc_after_inlining: bool,
    /// `-finstrument-functions-exclude-function-list=` / `-exclude-file-list=` (any dialect).
    pub exclude_functions: Vec<String>,
    pub exclude_files: Vec<String>,
    /// `--hook-intrinsics`: hooks in `always_inline` functions and in those of the compiler's
    /// own headers too.
    pub hook_intrinsics: bool,
    /// `--print-hook-runtime`: print the runtime object for the target flags given (compiling
    /// it if needed), for a build that links with another tool (bare-metal firmware linked by
    /// arm-none-eabi-gcc).
    pub print_runtime: bool,
}

impl HookOptions {
    /// True if the plugins are loaded (hooks may be inserted).
    pub fn instruments(&self) -> bool {
        self.pass_config().is_some()
    }

    /// The runtime component to link, if any.
    pub fn runtime_component(&self) -> RuntimeComponent {
        match (self.runtime, self.trace) {
            (Some(r), _) => r,
            (None, true) => RuntimeComponent::Trace,
            (None, false) => RuntimeComponent::None,
        }
    }

    /// What the pass is to do, or None if no dialect is on.
    pub fn pass_config(&self) -> Option<PassConfig> {
        self.dialect_config().map(|config| PassConfig {
            // --pfp-functions names the functions; --hook-include narrows them further.
            include: if self.pfp_functions.is_empty() {
                self.include.clone()
            } else {
                config.include.clone()
            },
            exclude: self.exclude.clone(),
            min_size: self.min_size,
            exclude_crates: self.exclude_crates.clone(),
            outline: self.outline.clone(),
            exclude_functions: self.exclude_functions.clone(),
            exclude_files: self.exclude_files.clone(),
            hook_intrinsics: self.hook_intrinsics,
            placement: self.placement.unwrap_or(config.placement),
            ..config
        })
    }

    /// The dialect's hooks, before the exclusions every dialect takes. Each dialect's default
    /// placement: the native trace `auto` (docs/performance.md, "Hook placement": at -O2 the
    /// source placement recorded zstd's inlined one-liners 100× more often than the functions
    /// left, and its overhead swamped the times); TI, NITRO, GCC and profile points their own
    /// tools' rule, hooks in every source function; gprof after inlining, as gcc -pg.
    fn dialect_config(&self) -> Option<PassConfig> {
        if self.trace {
            let hook = |symbol: &str, parm| {
                Some(Hook {
                    symbol: symbol.into(),
                    parm,
                })
            };
            return Some(PassConfig {
                entry: hook("__hookcc_enter", HookParm::Address),
                exit: hook("__hookcc_exit", HookParm::ExitAddress),
                placement: HookPlacement::Auto,
                default_on: true,
                skip_inline: false,
                declare_hooks: false,
                include: vec![],
                exclude: vec![],
                min_size: 0,
                outline: None,
                exclude_crates: vec![],
                exclude_functions: vec![],
                exclude_files: vec![],
                hook_intrinsics: false,
            });
        }
        if self.ti.any() {
            let ti = &self.ti;
            let hook = |symbol: &Option<String>, parm: Option<HookParm>| {
                symbol.clone().map(|symbol| Hook {
                    symbol,
                    parm: parm.unwrap_or(HookParm::None),
                })
            };
            return Some(PassConfig {
                entry: hook(&ti.entry_hook, ti.entry_parm),
                exit: hook(&ti.exit_hook, ti.exit_parm),
                placement: HookPlacement::Source,
                default_on: true,
                skip_inline: true,
                declare_hooks: true,
                include: vec![],
                exclude: vec![],
                min_size: 0,
                outline: None,
                exclude_crates: vec![],
                exclude_functions: vec![],
                exclude_files: vec![],
                hook_intrinsics: false,
            });
        }
        if self.gcc_instrument {
            let hook = |symbol: &str| {
                Some(Hook {
                    symbol: symbol.into(),
                    parm: HookParm::AddressCallSite,
                })
            };
            return Some(PassConfig {
                entry: hook("__cyg_profile_func_enter"),
                exit: hook("__cyg_profile_func_exit"),
                placement: if self.gcc_after_inlining {
                    HookPlacement::AfterInlining
                } else {
                    HookPlacement::Source
                },
                default_on: true,
                skip_inline: false,
                declare_hooks: false,
                include: vec![],
                exclude: vec![],
                min_size: 0,
                outline: None,
                exclude_crates: vec![],
                exclude_functions: vec![],
                exclude_files: vec![],
                hook_intrinsics: false,
            });
        }
        if !self.pfp_functions.is_empty() {
            // A profile point around each named function (docs/pfp.md, "The compiler bridge").
            let hook = |symbol: &str| {
                Some(Hook {
                    symbol: symbol.into(),
                    parm: HookParm::PfpPoint,
                })
            };
            return Some(PassConfig {
                entry: hook("__hookcc_pfp_begin"),
                exit: hook("__hookcc_pfp_end"),
                placement: HookPlacement::Source,
                default_on: true,
                skip_inline: false,
                declare_hooks: false,
                include: self.pfp_functions.clone(),
                exclude: vec![],
                min_size: 0,
                outline: None,
                exclude_crates: vec![],
                exclude_functions: vec![],
                exclude_files: vec![],
                hook_intrinsics: false,
            });
        }
        if self.runtime == Some(RuntimeComponent::Gprof) {
            // Arcs as gcc -pg records them: from the functions left after inlining.
            return Some(PassConfig {
                entry: Some(Hook {
                    symbol: "__profile_mcount".into(),
                    parm: HookParm::CallSiteAddress,
                }),
                exit: None,
                placement: HookPlacement::AfterInlining,
                default_on: true,
                skip_inline: false,
                declare_hooks: false,
                include: vec![],
                exclude: vec![],
                min_size: 0,
                outline: None,
                exclude_crates: vec![],
                exclude_functions: vec![],
                exclude_files: vec![],
                hook_intrinsics: false,
            });
        }
        if self.profile || self.nitro {
            return Some(PassConfig {
                entry: Some(Hook {
                    symbol: "__PROFILE_ENTRY".into(),
                    parm: HookParm::NameCallSiteArgs,
                }),
                exit: Some(Hook {
                    symbol: "__PROFILE_EXIT".into(),
                    parm: HookParm::None,
                }),
                placement: HookPlacement::Source,
                default_on: self.profile,
                skip_inline: false,
                declare_hooks: false,
                include: vec![],
                exclude: vec![],
                min_size: 0,
                outline: None,
                exclude_crates: vec![],
                exclude_functions: vec![],
                exclude_files: vec![],
                hook_intrinsics: false,
            });
        }
        None
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum OptionError {
    UnknownOption(String),
    Conflict(String),
    BadValue {
        option: String,
        value: String,
        expected: String,
    },
    BadEnvironment {
        variable: String,
        value: String,
    },
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionError::UnknownOption(o) => match near_own_option(o) {
                Some(near) => write!(
                    f,
                    "unknown option `{o}`: did you mean `{near}`? (hookcc's options are listed \
                     by `hookcc --help`)"
                ),
                None => write!(
                    f,
                    "unknown option `{o}` (hookcc's options are listed by `hookcc --help`)"
                ),
            },
            OptionError::BadValue { option, value, expected } => {
                write!(f, "`{option}`: unknown value `{value}` (expected one of: {expected})")
            }
            OptionError::Conflict(what) => write!(f, "{what}"),
            OptionError::BadEnvironment { variable, value } => write!(
                f,
                "environment variable {variable}={value:?}: expected 1/true/yes/on or 0/false/no/off"
            ),
        }
    }
}
