//! hookcc's own options: taken off the command line before clang sees it.

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
    fn parse_ti(value: &str) -> Option<Self> {
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
    /// `--hook-outline=leaf|all|none|N`: which functions have their switched hooks in an
    /// outlined clone (the pass's default, `leaf`, when None).
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
    fn any(&self) -> bool {
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
    /// `--hook-outline=leaf|all|none|N`.
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

/// What one of hookcc's own options does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum OwnOption {
    Dialect,
    EntryHook,
    EntryHookNamed,
    EntryParm,
    ExitHook,
    ExitHookNamed,
    ExitParm,
    GccInstrument,
    GccInstrumentAfterInlining,
    GccExcludeFiles,
    GccExcludeFunctions,
    Help,
    HookExclude,
    HookExcludeCrate,
    HookInclude,
    HookIntrinsics,
    HookMinSize,
    HookOutline,
    HookPlacement,
    HookRuntime,
    NitroClock,
    PfpFunctions,
    PrintCacheKey,
    PrintMakeInclude,
    PrintHookRuntime,
    Profile,
    RemoveHooksWhenInlining,
    RustFlags,
    Trace,
    TraceClock,
    TraceStart,
    TraceStop,
    Verbose,
}

/// hookcc's own options, sorted. `=`-terminated spellings take a joined value.
const OWN_OPTIONS: &[(&str, OwnOption)] = &[
    ("--dialect=", OwnOption::Dialect),
    ("--entry_hook", OwnOption::EntryHook),
    ("--entry_hook=", OwnOption::EntryHookNamed),
    ("--entry_parm=", OwnOption::EntryParm),
    ("--exit_hook", OwnOption::ExitHook),
    ("--exit_hook=", OwnOption::ExitHookNamed),
    ("--exit_parm=", OwnOption::ExitParm),
    ("--help", OwnOption::Help),
    ("--hook-exclude-crate=", OwnOption::HookExcludeCrate),
    ("--hook-exclude=", OwnOption::HookExclude),
    ("--hook-include=", OwnOption::HookInclude),
    ("--hook-intrinsics", OwnOption::HookIntrinsics),
    ("--hook-min-size=", OwnOption::HookMinSize),
    ("--hook-outline=", OwnOption::HookOutline),
    ("--hook-placement=", OwnOption::HookPlacement),
    ("--hook-runtime=", OwnOption::HookRuntime),
    ("--hookcc-help", OwnOption::Help),
    ("--hookcc-verbose", OwnOption::Verbose),
    ("--nitro-clock=", OwnOption::NitroClock),
    ("--pfp-functions=", OwnOption::PfpFunctions),
    ("--print-cache-key", OwnOption::PrintCacheKey),
    ("--print-hook-runtime", OwnOption::PrintHookRuntime),
    ("--print-make-include", OwnOption::PrintMakeInclude),
    (
        "--remove_hooks_when_inlining",
        OwnOption::RemoveHooksWhenInlining,
    ),
    ("--rustflags", OwnOption::RustFlags),
    ("--trace", OwnOption::Trace),
    ("--trace-clock=", OwnOption::TraceClock),
    ("--trace-start=", OwnOption::TraceStart),
    ("--trace-stop=", OwnOption::TraceStop),
    ("-finstrument-functions", OwnOption::GccInstrument),
    (
        "-finstrument-functions-after-inlining",
        OwnOption::GccInstrumentAfterInlining,
    ),
    (
        "-finstrument-functions-exclude-file-list=",
        OwnOption::GccExcludeFiles,
    ),
    (
        "-finstrument-functions-exclude-function-list=",
        OwnOption::GccExcludeFunctions,
    ),
    ("-profile", OwnOption::Profile),
];

/// Prefixes reserved for hookcc: an unknown option starting with one of these is an error,
/// not something to hand to clang.
const RESERVED_PREFIXES: &[&str] = &[
    "--dialect",
    "--nitro",
    "--entry_",
    "--exit_",
    "--hook",
    "--remove_hooks",
    "--rustflags",
    "--trace",
    "-profile",
];

/// The edit distance between `a` and `b` (insertions, deletions, substitutions and swaps of
/// two neighbours, each 1: `--trce`, `--tarce` and `--tracee` are all 1 from `--trace`), if it
/// is at most `limit`. Every compile asks this of its arguments against hookcc's options, so
/// it gives up as soon as a row of the table has nothing within `limit`: `-Wno-unused` and
/// `--hook-…` part after a few characters.
fn edit_distance_within(a: &str, b: &str, limit: usize) -> Option<usize> {
    // Bytes: hookcc's options are ASCII (a non-ASCII letter counts as its bytes, which only
    // makes such an argument farther from them).
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    // Three rows of the table: rows[i % 3][j] is the distance between a[..i] and b[..j].
    let width = b.len() + 1;
    let mut rows = vec![0usize; 3 * width];
    for (j, cell) in rows[..width].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        let (cur, prev, prev2) = (i % 3 * width, (i - 1) % 3 * width, (i + 1) % 3 * width);
        rows[cur] = i;
        let mut best = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[prev + j] + 1)
                .min(rows[cur + j - 1] + 1)
                .min(rows[prev + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[prev2 + j - 2] + 1);
            }
            rows[cur + j] = d;
            best = best.min(d);
        }
        if best > limit {
            return None;
        }
    }
    Some(rows[a.len() % 3 * width + b.len()]).filter(|d| *d <= limit)
}

/// hookcc's own option that `arg` looks like a misspelling of (`--trce` → `--trace`,
/// `--hook-placment=source` → `--hook-placement=`), if any: the closest of [`OWN_OPTIONS`]
/// within 1 edit for a name of up to 7 characters, 2 for a longer one (the name is what comes
/// before any `=`). An option that is exactly hookcc's is not a misspelling. Whether a near
/// miss is one is for the caller to decide with clang: a valid clang option near one of
/// hookcc's passes through unchanged (the driver asks clang, `driver::plan`).
pub fn near_own_option(arg: &str) -> Option<&'static str> {
    if !arg.starts_with('-') || own_option(arg).is_some() {
        return None;
    }
    let name = arg.split_once('=').map_or(arg, |(name, _)| name);
    let limit = if name.chars().count() <= 7 { 1 } else { 2 };
    OWN_OPTIONS
        .iter()
        .map(|(spelling, _)| *spelling)
        .filter_map(|spelling| {
            edit_distance_within(name, spelling.trim_end_matches('='), limit).map(|d| (d, spelling))
        })
        .min()
        .map(|(_, spelling)| spelling)
}

/// TI's default hook names.
const TI_DEFAULT_ENTRY: &str = "__entry_hook";
const TI_DEFAULT_EXIT: &str = "__exit_hook";

/// `--nitro-clock=` values: true for the thread CPU clock.
const NITRO_CLOCKS: &str = "tick, thread-cpu";

fn parse_nitro_clock(value: &str) -> Option<bool> {
    match value {
        "tick" => Some(false),
        "thread-cpu" => Some(true),
        _ => None,
    }
}

/// `--trace-clock=` values: true for the serialized clock read.
const TRACE_CLOCKS: &str = "fast, serialized";

fn parse_trace_clock(value: &str) -> Option<bool> {
    match value {
        "fast" => Some(false),
        "serialized" => Some(true),
        _ => None,
    }
}

fn flag_from_env(variable: &str, value: Option<String>) -> Result<bool, OptionError> {
    match value.as_deref().map(str::to_ascii_lowercase).as_deref() {
        None | Some("" | "0" | "false" | "no" | "off") => Ok(false),
        Some("1" | "true" | "yes" | "on") => Ok(true),
        Some(_) => Err(OptionError::BadEnvironment {
            variable: variable.to_string(),
            value: value.unwrap_or_default(),
        }),
    }
}

/// Splits hookcc's options from clang's. Returns the options and the arguments for clang, in
/// their original order.
/// True if `arg` is one of hookcc's own options (or claims their reserved prefixes, to be
/// rejected by [`take_own_options`]).
pub fn is_own_option(arg: &str) -> bool {
    own_option(arg).is_some() || RESERVED_PREFIXES.iter().any(|p| arg.starts_with(p))
}

/// The entry of [`OWN_OPTIONS`] that `arg` is (a `=` spelling with its value), if any.
fn own_option(arg: &str) -> Option<&'static (&'static str, OwnOption)> {
    OWN_OPTIONS.iter().find(|(spelling, _)| {
        if spelling.ends_with('=') {
            arg.starts_with(spelling)
        } else {
            arg == *spelling
        }
    })
}

pub fn take_own_options(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(HookOptions, Vec<String>), OptionError> {
    // Empty is unset: make's `export` of an undefined variable (runtime/make/nitro.mk) puts
    // it in the environment empty.
    let nitro_profile = env("NITRO_PROFILE").filter(|v| !v.is_empty());
    let nitro_type = env("NITRO_PROFILE_TYPE").filter(|v| !v.is_empty());
    let mut options = HookOptions {
        trace: flag_from_env("HOOKCC_TRACE", env("HOOKCC_TRACE"))?,
        verbose: flag_from_env("HOOKCC_VERBOSE", env("HOOKCC_VERBOSE"))?,
        // NITRO-SDK's make variables: `make NITRO_PROFILE=TRUE` exports them to the recipes.
        profile: flag_from_env("NITRO_PROFILE", nitro_profile.clone())?,
        nitro: nitro_profile.is_some() || nitro_type.is_some(),
        ..HookOptions::default()
    };
    if let Some(clock) = env("HOOKCC_NITRO_CLOCK").filter(|v| !v.is_empty()) {
        options.nitro_thread_cpu_clock =
            parse_nitro_clock(&clock).ok_or_else(|| OptionError::BadValue {
                option: "HOOKCC_NITRO_CLOCK".into(),
                value: clock.clone(),
                expected: NITRO_CLOCKS.into(),
            })?;
    }
    if let Some(clock) = env("HOOKCC_TRACE_CLOCK").filter(|v| !v.is_empty()) {
        options.trace_serialized_clock =
            parse_trace_clock(&clock).ok_or_else(|| OptionError::BadValue {
                option: "HOOKCC_TRACE_CLOCK".into(),
                value: clock.clone(),
                expected: TRACE_CLOCKS.into(),
            })?;
    }
    if let Some(kind) = nitro_type {
        options.runtime = Some(match kind.to_ascii_uppercase().as_str() {
            "CALLTRACE" => RuntimeComponent::CallTrace,
            "FUNCTIONCOST" => RuntimeComponent::FunctionCost,
            _ => {
                return Err(OptionError::BadValue {
                    option: "NITRO_PROFILE_TYPE".into(),
                    value: kind,
                    expected: "CALLTRACE, FUNCTIONCOST".into(),
                })
            }
        });
    }
    let mut rest = Vec::with_capacity(args.len());
    for arg in args {
        let Some((spelling, option)) = own_option(arg) else {
            if RESERVED_PREFIXES.iter().any(|p| arg.starts_with(p)) {
                return Err(OptionError::UnknownOption(arg.clone()));
            }
            rest.push(arg.clone());
            continue;
        };
        let value = arg.get(spelling.len()..).unwrap_or("");
        let bad = |expected: &str| OptionError::BadValue {
            option: arg.clone(),
            value: value.to_string(),
            expected: expected.to_string(),
        };
        match option {
            OwnOption::Help => options.help = true,
            OwnOption::PrintMakeInclude => options.print_make_include = true,
            OwnOption::PrintCacheKey => options.print_cache_key = true,
            OwnOption::GccInstrument => options.gcc_instrument = true,
            OwnOption::GccInstrumentAfterInlining => {
                options.gcc_instrument = true;
                options.gcc_after_inlining = true;
            }
            // GCC's lists: comma-separated strings, matched as substrings; empty items skipped.
            OwnOption::GccExcludeFiles | OwnOption::GccExcludeFunctions => {
                let list = if *option == OwnOption::GccExcludeFiles {
                    &mut options.exclude_files
                } else {
                    &mut options.exclude_functions
                };
                list.extend(value.split(',').filter(|s| !s.is_empty()).map(String::from));
            }
            OwnOption::NitroClock => {
                options.nitro_thread_cpu_clock =
                    parse_nitro_clock(value).ok_or_else(|| bad(NITRO_CLOCKS))?;
            }
            OwnOption::Trace => options.trace = true,
            OwnOption::TraceClock => {
                options.trace_serialized_clock =
                    parse_trace_clock(value).ok_or_else(|| bad(TRACE_CLOCKS))?;
            }
            OwnOption::TraceStart | OwnOption::TraceStop => {
                // Symbol names as nm prints them; they become a C string in the runtime.
                let names: Vec<String> = value
                    .split(',')
                    .filter(|s| !s.is_empty())
                    .map(String::from)
                    .collect();
                if names.is_empty()
                    || names.iter().any(|n| {
                        !n.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "_$.@".contains(c))
                    })
                {
                    return Err(bad("function names as nm prints them, comma-separated"));
                }
                if *option == OwnOption::TraceStart {
                    options.trace_start.extend(names);
                } else {
                    options.trace_stop.extend(names);
                }
            }
            OwnOption::Verbose => options.verbose = true,
            OwnOption::Profile => options.profile = true,
            OwnOption::PrintHookRuntime => options.print_runtime = true,
            OwnOption::Dialect => match value {
                "nitro" => options.nitro = true,
                _ => return Err(bad("nitro")),
            },
            OwnOption::HookRuntime => {
                options.runtime = Some(
                    RuntimeComponent::parse(value)
                        .ok_or_else(|| bad(&RuntimeComponent::names()))?,
                );
            }
            OwnOption::EntryHook => options.ti.entry_hook = Some(TI_DEFAULT_ENTRY.into()),
            OwnOption::ExitHook => options.ti.exit_hook = Some(TI_DEFAULT_EXIT.into()),
            OwnOption::EntryHookNamed | OwnOption::ExitHookNamed => {
                if !is_c_identifier(value) {
                    return Err(bad("a C identifier"));
                }
                let slot = if *option == OwnOption::EntryHookNamed {
                    &mut options.ti.entry_hook
                } else {
                    &mut options.ti.exit_hook
                };
                *slot = Some(value.to_string());
            }
            OwnOption::EntryParm | OwnOption::ExitParm => {
                let parm = HookParm::parse_ti(value).ok_or_else(|| bad("name, address, none"))?;
                if *option == OwnOption::EntryParm {
                    options.ti.entry_parm = Some(parm);
                } else {
                    options.ti.exit_parm = Some(parm);
                }
            }
            OwnOption::HookPlacement | OwnOption::RemoveHooksWhenInlining => {
                let placement = if *option == OwnOption::HookPlacement {
                    HookPlacement::parse(value).ok_or_else(|| bad(&HookPlacement::names()))?
                } else {
                    HookPlacement::AfterInlining
                };
                if let (Some(earlier), Some(written)) =
                    (options.placement, &options.placement_option)
                {
                    if earlier != placement {
                        return Err(OptionError::Conflict(format!(
                            "{written} and {arg} ask for different hook placements; choose one"
                        )));
                    }
                }
                options.placement = Some(placement);
                options.placement_option = Some(arg.clone());
            }
            OwnOption::RustFlags => options.rustflags = true,
            OwnOption::HookIntrinsics => options.hook_intrinsics = true,
            OwnOption::PfpFunctions => {
                if value.is_empty() {
                    return Err(bad("a glob: `*` any characters, `?` one"));
                }
                options.pfp_functions.push(value.to_string());
                options.runtime.get_or_insert(RuntimeComponent::Pfp);
            }
            OwnOption::HookExcludeCrate => {
                let names: Vec<&str> = value.split(',').filter(|n| !n.is_empty()).collect();
                let is_name = |n: &&str| {
                    n.chars()
                        .all(|c| c == '_' || c == '*' || c == '?' || c.is_ascii_alphanumeric())
                };
                if names.is_empty() || !names.iter().all(is_name) {
                    return Err(bad(
                        "crate names as Rust spells them (serde_json, not serde-json), \
                         comma-separated: std,core,alloc",
                    ));
                }
                options
                    .exclude_crates
                    .extend(names.into_iter().map(String::from));
            }
            OwnOption::HookMinSize => {
                options.min_size = value
                    .parse()
                    .map_err(|_| bad("a number of IR instructions, such as 20"))?;
            }
            OwnOption::HookOutline => {
                if !matches!(value, "leaf" | "all" | "none") && value.parse::<u32>().is_err() {
                    return Err(bad(
                        "leaf, all, none, or a number of IR instructions, such as 200",
                    ));
                }
                options.outline = Some(value.to_string());
            }
            OwnOption::HookInclude | OwnOption::HookExclude => {
                if value.is_empty() {
                    return Err(bad("a glob: `*` any characters, `?` one"));
                }
                if *option == OwnOption::HookInclude {
                    options.include.push(value.to_string());
                } else {
                    options.exclude.push(value.to_string());
                }
            }
        }
    }
    let dialects = [
        (options.trace, "--trace"),
        (options.ti.any(), "--entry_hook/--exit_hook"),
        (options.profile, "-profile"),
        (options.gcc_instrument, "-finstrument-functions"),
        (!options.pfp_functions.is_empty(), "--pfp-functions"),
    ];
    let on: Vec<&str> = dialects
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, name)| *name)
        .collect();
    if options.runtime == Some(RuntimeComponent::Gprof) && !on.is_empty() {
        return Err(OptionError::Conflict(format!(
            "--hook-runtime=gprof inserts its own hooks (calls of __profile_mcount); it cannot \
             be combined with {}",
            on.join(" and ")
        )));
    }
    if on.len() > 1 {
        return Err(OptionError::Conflict(format!(
            "{} cannot be combined: each inserts its own hooks; choose one",
            on.join(" and ")
        )));
    }
    if !options.trace_stop.is_empty() && options.trace_start.is_empty() {
        return Err(OptionError::Conflict(
            "--trace-stop needs --trace-start: a window opens at an entry of a start function"
                .to_string(),
        ));
    }
    if !options.trace_start.is_empty() && !options.trace {
        return Err(OptionError::Conflict(
            "--trace-start and --trace-stop are the trace runtime's triggers: they need --trace"
                .to_string(),
        ));
    }
    Ok((options, rest))
}

/// Replaces each `--hook-include=@FILE` / `--hook-exclude=@FILE` by the globs FILE lists, one
/// per line (blank lines and lines starting with `#` skipped).
pub fn read_glob_files(options: &mut HookOptions) -> Result<(), String> {
    for (option, globs) in [
        ("--hook-include", &mut options.include),
        ("--hook-exclude", &mut options.exclude),
        ("--pfp-functions", &mut options.pfp_functions),
    ] {
        let mut expanded = Vec::with_capacity(globs.len());
        for glob in globs.drain(..) {
            let Some(file) = glob.strip_prefix('@') else {
                expanded.push(glob);
                continue;
            };
            let text = std::fs::read_to_string(file)
                .map_err(|e| format!("{option}=@{file}: cannot read {file}: {e}"))?;
            expanded.extend(
                text.lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with('#'))
                    .map(String::from),
            );
        }
        *globs = expanded;
    }
    Ok(())
}

fn is_c_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

pub const HELP: &str = "\
hookcc — a drop-in C/C++ compiler (clang-19) that inserts function entry/exit hooks

Usage: hookcc [hookcc options] [clang options] files…
       hookcc++ …            (the same, as a C++ compiler)

Every argument that is not one of hookcc's passes to clang unchanged; without a hook option
hookcc adds nothing and produces exactly what clang-19 produces. An argument clang does not
know either, near one of hookcc's options (--trce), gets a note naming that option after
clang's error.

hookcc options:
  --trace               insert hookcc's native entry/exit hooks into every function defined in
                        the sources (at -O1 and above: every function left after inlining; see
                        --hook-placement), and link the trace runtime: the program writes
                        <program>.<pid>.hktrace (or $HOOKCC_OUTPUT); read it with
                        `hookprof report`
  --trace-clock=fast|serialized
                        serialized: the trace runtime's hooks let the instructions before them
                        finish before reading the clock, so a hook pair costs the same beside
                        any code and compensation subtracts what it cost (about twice the
                        default's cost per call; docs/performance.md); HOOKCC_TRACE_CLOCK too
  --trace-start=F,…     record only from an entry of one of these functions (symbol names as
                        nm prints them: mangled for C++ and Rust) to its return, each time;
  --trace-stop=F,…      or, with this, to the return of the first of these called after it.
                        Per thread; built into the program, HOOKCC_TRACE_START and
                        HOOKCC_TRACE_STOP override them at run time (docs/recording.md)
  --hook-exclude=GLOB   no hooks in functions whose name (symbol, or demangled Rust name
                        such as mycrate::parse::*) matches GLOB (`*`, `?`); repeatable
  --hook-exclude-crate=NAME,…
                        no hooks in Rust functions defined in these crates (std,core,alloc:
                        also their code instantiated or inlined into yours), judged from the
                        symbol's crate path, not the printed name; `*`, `?` allowed
  --hook-include=GLOB   only functions whose name matches one such GLOB get hooks
                        (either option also as =@FILE: one glob per line, # comments)
  --pfp-functions=GLOB  a TI profile point (<hookcc/pfp.h>) around each function whose name
                        matches GLOB (repeatable, or =@FILE): ids from 31 down, statistics
                        printed at exit with the function's name (links the pfp runtime)
  --hook-intrinsics     hooks in always_inline functions and in the functions of the
                        compiler's own headers (intrinsics such as _mm256_add_epi32) too,
                        which get none by default
  --hook-min-size=N     no hooks in functions of fewer than N LLVM IR instructions that
                        have no loop (as XRay's -fxray-instruction-threshold), unless
                        --hook-include names them
  --hook-outline=leaf|all|none|N
                        with --trace and the placement after inlining, which functions
                        have their hooks in a clone NAME.hookcc, so that switched off they
                        run their own body (no frame of the hooks'): `leaf` (the default)
                        the functions that call nothing but tail calls; N those and the
                        functions of at most N LLVM IR instructions; `all` every one (code
                        about twice the plain build's; tracing off then costs about 3 %)
  --hook-placement=source|after-inlining|auto
                        when the hooks go in: `source` gives every function of the source
                        hooks, inlined bodies keeping theirs (exact source-level counts);
                        `after-inlining` only the functions the optimizer leaves (a body it
                        inlines records nothing, and costs nothing); `auto` source at -O0,
                        after inlining at -O1 and above. Default: auto with --trace; source
                        with the TI, NITRO, GCC and pfp hooks; after-inlining with gprof.
                        Every runtime honours it (docs/driver.md, docs/performance.md)
  --hook-runtime=NAME   runtime component linked into executables: trace, ti,
                        calltrace, functioncost, pfp (TI profile points, <hookcc/pfp.h>:
                        needs no hook option), gprof (a PC histogram and call-graph arcs
                        from its own entry hooks: writes gmon.out for GNU gprof), none (default: trace with --trace, the
                        NITRO_PROFILE_TYPE component if set, else none)

TI cgtools dialect (docs/dialects.md):
  --entry_hook[=NAME]   call NAME (default __entry_hook) at every function entry
  --exit_hook[=NAME]    call NAME (default __exit_hook) at every function exit
  --entry_parm={name|address|none}, --exit_parm=…
                        what the hook receives: void hook(const char *name),
                        void hook(void (*addr)()) or void hook(void) (the default)
  --remove_hooks_when_inlining
                        no hooks for the bodies the optimizer inlines: the same as
                        --hook-placement=after-inlining, with any hook option
  #pragma NO_HOOKS(func) and __attribute__((no_instrument_function)) exclude a function;
  functions declared inline get no hooks.

GCC / Clang:
  -finstrument-functions, -finstrument-functions-after-inlining
                        __cyg_profile_func_enter/exit(this_fn, call_site) in every function,
                        by hookcc's pass (exits on C++ unwinding too); the program brings them
  -finstrument-functions-exclude-function-list=S,…, -finstrument-functions-exclude-file-list=S,…
                        no hooks in functions whose name, or whose file's path, contains an S
                        (GCC's; any dialect)

Metrowerks / NITRO-SDK dialect:
  -profile              call __PROFILE_ENTRY(name, …) and __PROFILE_EXIT() in every function
  --dialect=nitro       honour #pragma profile on|off|reset without -profile
  #pragma profile on|off|reset: the state at a function's closing brace decides.
  --nitro-clock=tick|thread-cpu
                        what function cost (NITRO_PROFILE_TYPE=FUNCTIONCOST) measures: the OS
                        tick (default: cycles, so time a thread is pre-empted or blocked counts)
                        or each thread's CPU time in ns, as the seed leaves switched-out time
                        out (a system call per hook; docs/nitro.md); HOOKCC_NITRO_CLOCK too
  --print-make-include  print the path of hookcc's make definitions for NITRO-SDK style
                        Makefiles: `include $(shell $(CC) --print-make-include)` makes
                        NITRO_PROFILE = TRUE and NITRO_PROFILE_TYPE = … written in the
                        Makefile reach hookcc, as the SDK's commondefs did
  --print-cache-key     print a key of everything hookcc's output depends on besides its
                        command line (environment, plugins, clang): with CC=\"ccache hookcc\",
                        set CCACHE_COMPILERCHECK='%compiler% --print-cache-key'
                        (docs/build-systems.md)
  --print-hook-runtime  print the path of the runtime object for the target flags on the
                        line (compiled into the cache if needed; an empty line when no
                        component is selected), for builds that link with another tool:
                        bare-metal firmware linked by arm-none-eabi-gcc (docs/baremetal.md)

Rust (docs/rust.md):
  --rustflags           print the RUSTFLAGS that instrument a Cargo build the way the other
                        options say: RUSTC_BOOTSTRAP=1 RUSTFLAGS=\"$(hookcc --rustflags --trace)\"
                        cargo build --target=<host triple>; or `cargo hookcc build|run|test`
  --hookcc-verbose      print the clang command hookcc runs
  --help, --hookcc-help this text (clang's own options: clang-19 --help)
  --version             clang's --version text, then hookcc's version and the clang it runs
  --print-man-page      this text as the manual page hookcc(1), in roff (alone on the line)
  --clear-cache         remove the runtimes compiled for each target (alone on the line)

Environment:
  HOOKCC_TRACE=1        as --trace, for build systems that cannot add flags
  HOOKCC_VERBOSE=1      as --hookcc-verbose
  NITRO_PROFILE=TRUE    as -profile (make NITRO_PROFILE=TRUE exports it to the compiler)
  NITRO_PROFILE_TYPE=CALLTRACE|FUNCTIONCOST
                        link that NITRO runtime component
  HOOKCC_CLANG          the clang to run (default: clang-19, else clang, on PATH)
  HOOKCC_LAUNCHER       run clang through this compiler cache (ccache, sccache): hookcc puts
                        a key of its plugins and settings on the command line, so the cache
                        can never hand back an object built with other hooks
  HOOKCC_CACHE_DIR      where runtimes compiled for each target are kept
                        (default: $XDG_CACHE_HOME/hookcc or ~/.cache/hookcc)
  HOOKCC_PLUGIN         the pass plugin library (default: found beside hookcc)
  HOOKCC_RUNTIME_DIR    the runtime sources (default: found beside hookcc)
  RUSTC                 the rustc whose LLVM --rustflags matches (default: rustc on PATH)

In the traced program: HOOKCC_OUTPUT, HOOKCC_MAX_BYTES, HOOKCC_BUFFER_RECORDS, HOOKCC_DISABLE
(see docs/trace-format.md). The runtime's API is <hookcc/trace.h>.
";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ti_options_with_defaults_and_names() {
        let (o, rest) = take_own_options(
            &strings(&[
                "--entry_hook",
                "--exit_hook=my_exit",
                "--exit_parm=name",
                "-c",
                "a.c",
            ]),
            &no_env,
        )
        .unwrap();
        assert_eq!(rest, ["-c", "a.c"]);
        let c = o.pass_config().unwrap();
        assert_eq!(
            c.entry,
            Some(Hook {
                symbol: "__entry_hook".into(),
                parm: HookParm::None
            })
        );
        assert_eq!(
            c.exit,
            Some(Hook {
                symbol: "my_exit".into(),
                parm: HookParm::Name
            })
        );
        assert!(c.skip_inline && c.declare_hooks);
        assert_eq!(c.placement, HookPlacement::Source);
        let e = take_own_options(&strings(&["--entry_hook", "--entry_parm=adress"]), &no_env)
            .unwrap_err();
        assert!(e.to_string().contains("name, address, none"), "{e}");
        let e = take_own_options(&strings(&["--entry_hook=1bad"]), &no_env).unwrap_err();
        assert!(e.to_string().contains("C identifier"), "{e}");
    }

    #[test]
    fn nitro_from_make_variables() {
        let env = |k: &str| match k {
            "NITRO_PROFILE" => Some("TRUE".to_string()),
            "NITRO_PROFILE_TYPE" => Some("CALLTRACE".to_string()),
            _ => None,
        };
        let (o, _) = take_own_options(&strings(&["-c", "a.c"]), &env).unwrap();
        assert!(o.profile);
        assert_eq!(o.runtime_component(), RuntimeComponent::CallTrace);
        let c = o.pass_config().unwrap();
        assert_eq!(c.entry.unwrap().symbol, "__PROFILE_ENTRY");
        assert!(c.default_on);
        // The dialect without -profile: only #pragma profile on functions.
        let (o, _) = take_own_options(&strings(&["--dialect=nitro"]), &no_env).unwrap();
        assert!(!o.pass_config().unwrap().default_on);
        // Set but empty, as make exports a variable the Makefile never set: not the dialect.
        let empty = |k: &str| k.starts_with("NITRO_PROFILE").then(String::new);
        let (o, _) = take_own_options(&strings(&["a.c"]), &empty).unwrap();
        assert!(!o.nitro && !o.instruments());
        let bad = |k: &str| (k == "NITRO_PROFILE_TYPE").then(|| "COST".to_string());
        assert!(take_own_options(&strings(&[]), &bad)
            .unwrap_err()
            .to_string()
            .contains("FUNCTIONCOST"));
    }

    #[test]
    fn gprof_runtime_brings_its_arc_hook() {
        let (o, _) = take_own_options(&strings(&["--hook-runtime=gprof", "a.c"]), &no_env).unwrap();
        let c = o.pass_config().unwrap();
        assert_eq!(
            c.entry,
            Some(Hook {
                symbol: "__profile_mcount".into(),
                parm: HookParm::CallSiteAddress
            })
        );
        assert!(c.exit.is_none() && c.default_on);
        assert_eq!(c.placement, HookPlacement::AfterInlining);
        let e =
            take_own_options(&strings(&["--trace", "--hook-runtime=gprof"]), &no_env).unwrap_err();
        assert!(
            e.to_string().contains("cannot be combined with --trace"),
            "{e}"
        );
    }

    #[test]
    fn placement_is_one_option_every_dialect_takes() {
        let placement = |args: &[&str]| {
            take_own_options(&strings(args), &no_env)
                .unwrap()
                .0
                .pass_config()
                .unwrap()
                .placement
        };
        // Each dialect's default.
        assert_eq!(placement(&["--trace"]), HookPlacement::Auto);
        assert_eq!(placement(&["--entry_hook"]), HookPlacement::Source);
        assert_eq!(placement(&["-profile"]), HookPlacement::Source);
        assert_eq!(
            placement(&["-finstrument-functions"]),
            HookPlacement::Source
        );
        assert_eq!(
            placement(&["--hook-runtime=gprof"]),
            HookPlacement::AfterInlining
        );
        // The TI spelling works with the native trace too (it used to be dropped there).
        assert_eq!(
            placement(&["--trace", "--remove_hooks_when_inlining"]),
            HookPlacement::AfterInlining
        );
        for (args, expected) in [
            (
                &["--trace", "--hook-placement=source"][..],
                HookPlacement::Source,
            ),
            (
                &["-profile", "--hook-placement=after-inlining"],
                HookPlacement::AfterInlining,
            ),
            (
                &["--entry_hook", "--hook-placement=auto"],
                HookPlacement::Auto,
            ),
            (
                &["--hook-runtime=gprof", "--hook-placement=source"],
                HookPlacement::Source,
            ),
            (
                &["--pfp-functions=f", "--hook-placement=after-inlining"],
                HookPlacement::AfterInlining,
            ),
            (
                &[
                    "-finstrument-functions-after-inlining",
                    "--hook-placement=source",
                ],
                HookPlacement::Source,
            ),
        ] {
            assert_eq!(placement(args), expected, "{args:?}");
        }
        let e = take_own_options(&strings(&["--trace", "--hook-placement=late"]), &no_env)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--hook-placement=late") && e.contains("after-inlining, auto, source"),
            "{e}"
        );
        let e = take_own_options(
            &strings(&["--hook-placement=source", "--remove_hooks_when_inlining"]),
            &no_env,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("--hook-placement=source and --remove_hooks_when_inlining"),
            "{e}"
        );
    }

    #[test]
    fn exclude_crate_lists_add_up_and_bad_names_are_refused() {
        let (o, rest) = take_own_options(
            &strings(&[
                "--trace",
                "--hook-exclude-crate=std,core",
                "--hook-exclude-crate=alloc,,serde_*",
                "-O2",
            ]),
            &no_env,
        )
        .unwrap();
        assert_eq!(rest, ["-O2"]);
        assert_eq!(
            o.pass_config().unwrap().exclude_crates,
            ["std", "core", "alloc", "serde_*"]
        );
        for bad in ["--hook-exclude-crate=", "--hook-exclude-crate=serde-json"] {
            let e = take_own_options(&strings(&["--trace", bad]), &no_env)
                .unwrap_err()
                .to_string();
            assert!(e.contains(bad) && e.contains("serde_json"), "{e}");
        }
    }

    #[test]
    fn dialects_do_not_mix() {
        let e = take_own_options(&strings(&["--trace", "-profile"]), &no_env).unwrap_err();
        assert!(e.to_string().contains("--trace and -profile"), "{e}");
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn table_is_sorted() {
        for pair in OWN_OPTIONS.windows(2) {
            assert!(
                pair[0].0 < pair[1].0,
                "OWN_OPTIONS not sorted at {}",
                pair[1].0
            );
        }
    }

    #[test]
    fn own_options_are_removed_in_order() {
        let (o, rest) = take_own_options(
            &strings(&["-O2", "--trace", "-c", "a.c", "--hook-runtime=none"]),
            &no_env,
        )
        .unwrap();
        assert!(o.trace);
        assert_eq!(o.runtime_component(), RuntimeComponent::None);
        assert_eq!(rest, ["-O2", "-c", "a.c"]);
    }

    #[test]
    fn environment_turns_tracing_on() {
        let env = |k: &str| (k == "HOOKCC_TRACE").then(|| "1".to_string());
        let (o, _) = take_own_options(&strings(&["a.c"]), &env).unwrap();
        assert!(o.trace && o.instruments());
        assert_eq!(o.runtime_component(), RuntimeComponent::Trace);
    }

    #[test]
    fn glob_files_expand_in_place() {
        let dir = std::env::temp_dir().join(format!("hookcc-globs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("exclude.txt");
        std::fs::write(&file, "# hot paths\ncrc_byte\n\n  mycrate::parse::*  \n").unwrap();
        let arg = format!("--hook-exclude=@{}", file.display());
        let (mut o, _) =
            take_own_options(&strings(&["--trace", "--hook-exclude=a", &arg]), &no_env).unwrap();
        read_glob_files(&mut o).unwrap();
        assert_eq!(o.exclude, ["a", "crc_byte", "mycrate::parse::*"]);
        let (mut o, _) =
            take_own_options(&strings(&["--hook-include=@/nonexistent/list"]), &no_env).unwrap();
        let e = read_glob_files(&mut o).unwrap_err();
        assert!(e.contains("--hook-include=@/nonexistent/list"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn edit_distances_within_a_limit() {
        assert_eq!(edit_distance_within("--trce", "--trace", 2), Some(1));
        assert_eq!(edit_distance_within("--tarce", "--trace", 2), Some(1));
        assert_eq!(edit_distance_within("--tracee", "--trace", 1), Some(1));
        assert_eq!(edit_distance_within("--trace", "--trace", 0), Some(0));
        assert_eq!(edit_distance_within("--tr", "--trace", 2), None);
        assert_eq!(edit_distance_within("-Wno-unused", "--hook-exclu", 2), None);
        assert_eq!(edit_distance_within("abcdef", "badcfe", 3), Some(3));
        assert_eq!(edit_distance_within("abcdef", "badcfe", 2), None);
    }

    #[test]
    fn misspelt_own_options_are_found_and_clangs_own_left_alone() {
        for (typed, meant) in [
            ("--trce", "--trace"),
            ("--tarce", "--trace"),
            ("-trace", "--trace"),
            ("--tracee", "--trace"),
            ("--hook-placment=source", "--hook-placement="),
            ("--hook-placement", "--hook-placement="),
            ("--rustflag", "--rustflags"),
            ("--entry-hook", "--entry_hook"),
            ("-profil", "-profile"),
            ("--trace-strat=main", "--trace-start="),
            ("-finstrument-function", "-finstrument-functions"),
        ] {
            assert_eq!(near_own_option(typed), Some(meant), "{typed}");
        }
        // Exactly hookcc's, far from all of them, not an option at all.
        for arg in [
            "--trace",
            "--hook-placement=source",
            "-O2",
            "-o",
            "--target=x",
            "-fprofile-arcs",
            "trce",
            "--verbose",
        ] {
            assert_eq!(near_own_option(arg), None, "{arg}");
        }
        let e = take_own_options(&strings(&["--hook-placment=source"]), &no_env)
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `--hook-placement=`?"), "{e}");
    }

    #[test]
    fn errors_name_the_option() {
        let e = take_own_options(&strings(&["--hook-runtime=tarce"]), &no_env).unwrap_err();
        assert!(
            e.to_string().contains("tarce") && e.to_string().contains("ti, trace"),
            "{e}"
        );
        let e = take_own_options(&strings(&["--trace-all"]), &no_env).unwrap_err();
        assert!(e.to_string().contains("--trace-all"));
        let env = |_: &str| Some("maybe".to_string());
        let e = take_own_options(&strings(&[]), &env).unwrap_err();
        assert!(e.to_string().contains("HOOKCC_TRACE"));
    }
}
