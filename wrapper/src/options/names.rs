//! The table of hookcc's own options' names, and the nearest of them to a misspelling.

/// What one of hookcc's own options does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum OwnOption {
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
pub(super) const OWN_OPTIONS: &[(&str, OwnOption)] = &[
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
pub(super) const RESERVED_PREFIXES: &[&str] = &[
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
pub(super) fn edit_distance_within(a: &str, b: &str, limit: usize) -> Option<usize> {
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

/// True if `arg` is one of hookcc's own options (or claims their reserved prefixes, to be
/// rejected by [`take_own_options`]).
pub fn is_own_option(arg: &str) -> bool {
    own_option(arg).is_some() || RESERVED_PREFIXES.iter().any(|p| arg.starts_with(p))
}

/// The entry of [`OWN_OPTIONS`] that `arg` is (a `=` spelling with its value), if any.
pub(super) fn own_option(arg: &str) -> Option<&'static (&'static str, OwnOption)> {
    OWN_OPTIONS.iter().find(|(spelling, _)| {
        if spelling.ends_with('=') {
            arg.starts_with(spelling)
        } else {
            arg == *spelling
        }
    })
}
