//! What the pass is asked to do, decoded from the `-hookcc-*` options.
//!
//! LLVM-free (compiled into the unit tests). May import: mangling only.

use std::fmt;

/// What a hook receives as arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HookParams {
    /// `void hook(void)`
    None,
    /// `void hook(const char *name)`: the function's name.
    Name,
    /// `void hook(void (*addr)())`: the function's address.
    Address,
    /// `void hook(void *fn_exit)`: the function's address plus 2 (bit 1 set), hookcc's native
    /// exit hook. The function is 4-byte aligned, so bit 1 of its address is free, and a
    /// record that stores the argument as it comes tells an exit from an entry at no cost.
    ExitAddress,
    /// `void hook(const char *name, void *lr, uintptr_t r0, r1, r2, r3)`: NITRO's
    /// `__PROFILE_ENTRY`, with the call site and the first four integer or pointer arguments
    /// (0 for the missing ones) that the ARM original found in lr and r0–r3.
    NameCallSiteArgs,
    /// `void hook(void *call_site, void *fn)`: where the function was called from (its return
    /// address) and the function's address: the seed's `__profile_mcount(caller_pc,
    /// callee_pc)` (seeds/ecos-gprof.txt), which records call-graph arcs.
    CallSiteAddress,
    /// `void hook(void *this_fn, void *call_site)`: GCC's `__cyg_profile_func_enter/exit`.
    AddressCallSite,
    /// `void hook(void *point)`: the function's profile point (`--pfp-functions`,
    /// pfp_points.rs).
    PfpPoint,
}

impl HookParams {
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "" | "none" => Ok(HookParams::None),
            "name" => Ok(HookParams::Name),
            "address" => Ok(HookParams::Address),
            "exit-address" => Ok(HookParams::ExitAddress),
            "name-callsite-args" => Ok(HookParams::NameCallSiteArgs),
            "callsite-address" => Ok(HookParams::CallSiteAddress),
            "address-callsite" => Ok(HookParams::AddressCallSite),
            "pfp-point" => Ok(HookParams::PfpPoint),
            other => Err(format!(
                "unknown hook parameter kind `{other}` (expected none, name, address, \
                 exit-address, name-callsite-args, callsite-address, address-callsite or \
                 pfp-point)"
            )),
        }
    }

    /// The C signature, for diagnostics.
    pub fn c_signature(self, hook: &str) -> String {
        match self {
            HookParams::None => format!("void {hook}(void)"),
            HookParams::Name => format!("void {hook}(const char *name)"),
            HookParams::Address => format!("void {hook}(void (*addr)())"),
            HookParams::ExitAddress => format!("void {hook}(void *fn_exit)"),
            HookParams::CallSiteAddress => format!("void {hook}(void *call_site, void *fn)"),
            HookParams::AddressCallSite => {
                format!("void {hook}(void *this_fn, void *call_site)")
            }
            HookParams::PfpPoint => format!("void {hook}(void *point)"),
            HookParams::NameCallSiteArgs => format!(
                "void {hook}(const char *name, void *lr, uintptr_t r0, uintptr_t r1, uintptr_t r2, \
                 uintptr_t r3)"
            ),
        }
    }
}

/// One hook to call: its symbol and what it receives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hook {
    pub symbol: String,
    pub params: HookParams,
}

/// When in the optimization pipeline the hooks go in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// At the start of the pipeline: every function defined in the source gets hooks, and a
    /// function inlined later carries its hooks into its callers.
    BeforeInlining,
    /// At the end of the optimizer: functions inlined everywhere have no hooks left, and the
    /// places they were inlined into have none of theirs.
    AfterInlining,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub entry: Option<Hook>,
    pub exit: Option<Hook>,
    pub placement: Placement,
    /// Functions without a mark get hooks (`-profile`, `--trace`, `--entry_hook`); when false,
    /// only functions marked `hookcc:on` (`#pragma profile on`) do.
    pub default_on: bool,
    /// No hooks in functions declared inline (TI's rule).
    pub skip_inline: bool,
    /// Which functions get hooks by name (`--hook-include` / `--hook-exclude`).
    pub names: NameFilter,
    /// `--hook-min-size=N`: a function of fewer than N IR instructions gets no hooks unless
    /// it has a loop or an include glob names it (0: every function).
    pub min_size: u32,
    /// `--hook-exclude-crate=NAME`: no hooks in Rust functions defined in these crates (globs),
    /// judged from the symbol ([`crate::mangling::rust_defining_crate`]).
    pub exclude_crates: Vec<String>,
    /// `--hook-outline=`: which functions have their switched hooks in an outlined clone.
    pub outline: Outline,
}

/// `--hook-outline=auto|leaf|all|none|N`: which native-trace functions, with the placement
/// after inlining, get their hooks in an outlined clone (switches.rs, `outlines`): a function
/// that tests its switch and jumps to `NAME.hookcc` runs its own body when it is off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Outline {
    /// None: every function tests its switch inline.
    None,
    /// Functions that make no call but tail calls (whose frame is what the hooks add).
    Leaf,
    /// Those and functions of at most this many IR instructions.
    UpTo(u32),
    /// Every function that can be.
    All,
    /// The default: [`Outline::UpTo`] [`OUTLINE_AUTO_HOSTED`] on a hosted target, whose
    /// programs leave tracing off most often; [`Outline::Leaf`] on bare metal, whose flash
    /// the clones would fill.
    #[default]
    Auto,
}

/// What `auto` outlines on a hosted target: functions of at most 200 IR instructions (and
/// leaves). sqlite3.c -O2 with tracing off, instructions against the plain build (callgrind,
/// docs/performance.md "Outlined hooks"): `leaf` +8.2 %, `100` +4.1 %, `200` +4.0 %, `all`
/// +3.1 %; Lua 5.4 -O2: +14.6 %, +9.7 %, +7.5 %, +7.3 %; the object code +46 % (`all` +111 %).
pub const OUTLINE_AUTO_HOSTED: u32 = 200;

impl Outline {
    pub fn parse(text: &str) -> Result<Self, String> {
        match text {
            "" | "auto" => Ok(Outline::Auto),
            "leaf" => Ok(Outline::Leaf),
            "all" => Ok(Outline::All),
            "none" => Ok(Outline::None),
            n => n.parse().map(Outline::UpTo).map_err(|_| {
                format!(
                    "hook outline `{n}`: expected auto, leaf, all, none or a number of IR \
                     instructions"
                )
            }),
        }
    }
}

/// `--hook-include=GLOB` / `--hook-exclude=GLOB`: with includes, only functions matching one
/// get hooks; a function matching an exclude gets none. A function matches when its symbol or
/// its demangled name (Rust: without the hash, `calls::fib`, `<calls::Square>::new`) does.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NameFilter {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

impl NameFilter {
    /// From the options' newline-separated glob lists.
    pub fn from_lists(include: &str, exclude: &str) -> Self {
        let split = |text: &str| {
            text.lines()
                .filter(|l| !l.is_empty())
                .map(String::from)
                .collect()
        };
        NameFilter {
            include: split(include),
            exclude: split(exclude),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.include.is_empty() && self.exclude.is_empty()
    }

    /// True if a function known by `names` (its symbol, its demangled name) gets hooks.
    pub fn allows(&self, names: &[&str]) -> bool {
        let any = |globs: &[String]| {
            globs
                .iter()
                .any(|g| names.iter().any(|n| glob_matches(g, n)))
        };
        (self.include.is_empty() || any(&self.include)) && !any(&self.exclude)
    }

    /// True if an include glob names the function (it then gets hooks whatever its size).
    pub fn includes(&self, names: &[&str]) -> bool {
        self.include
            .iter()
            .any(|g| names.iter().any(|n| glob_matches(g, n)))
    }
}

/// Shell-style matching of the whole of `text`: `*` any run of characters (`::` included),
/// `?` any one character; everything else stands for itself.
pub fn glob_matches(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // Greedy with backtracking to the last star: linear in practice, no recursion.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || (p[pi] != '*' && p[pi] == t[ti])) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

impl Config {
    pub fn from_options(
        entry: &str,
        exit: &str,
        entry_parm: &str,
        exit_parm: &str,
        after_inlining: bool,
        default_on: bool,
        skip_inline: bool,
    ) -> Result<Self, String> {
        let hook = |symbol: &str, parm: &str, which: &str| -> Result<Option<Hook>, String> {
            let params =
                HookParams::parse(parm).map_err(|e| format!("-hookcc-{which}-parm: {e}"))?;
            Ok((!symbol.is_empty()).then(|| Hook {
                symbol: symbol.to_string(),
                params,
            }))
        };
        Ok(Config {
            entry: hook(entry, entry_parm, "entry")?,
            exit: hook(exit, exit_parm, "exit")?,
            placement: if after_inlining {
                Placement::AfterInlining
            } else {
                Placement::BeforeInlining
            },
            default_on,
            skip_inline,
            names: NameFilter::default(),
            min_size: 0,
            exclude_crates: Vec::new(),
            outline: Outline::default(),
        })
    }

    pub fn is_empty(&self) -> bool {
        self.entry.is_none() && self.exit.is_none()
    }

    /// True if `symbol` is a Rust function defined in an excluded crate.
    pub fn excludes_crate_of(&self, symbol: &str) -> bool {
        if self.exclude_crates.is_empty() {
            return false;
        }
        crate::mangling::rust_defining_crate(symbol).is_some_and(|krate| {
            self.exclude_crates
                .iter()
                .any(|glob| glob_matches(glob, &krate))
        })
    }

    /// True if `name` is one of the hooks: hooks never get hooks of their own.
    pub fn is_hook(&self, name: &str) -> bool {
        [&self.entry, &self.exit]
            .iter()
            .any(|h| h.as_ref().is_some_and(|h| h.symbol == name))
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let show = |h: &Option<Hook>| match h {
            Some(h) => h.params.c_signature(&h.symbol),
            None => "none".to_string(),
        };
        write!(
            f,
            "entry={} exit={} {:?}",
            show(&self.entry),
            show(&self.exit),
            self.placement
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outline_modes_parse_and_a_bad_one_is_named() {
        assert_eq!(Outline::parse(""), Ok(Outline::Auto));
        assert_eq!(Outline::parse("auto"), Ok(Outline::Auto));
        assert_eq!(Outline::parse("leaf"), Ok(Outline::Leaf));
        assert_eq!(Outline::parse("all"), Ok(Outline::All));
        assert_eq!(Outline::parse("none"), Ok(Outline::None));
        assert_eq!(Outline::parse("200"), Ok(Outline::UpTo(200)));
        let e = Outline::parse("big").unwrap_err();
        assert!(e.contains("`big`") && e.contains("leaf, all, none"), "{e}");
    }

    #[test]
    fn parses_native_trace_options() {
        let c = Config::from_options(
            "__hookcc_enter",
            "__hookcc_exit",
            "address",
            "exit-address",
            false,
            true,
            false,
        )
        .unwrap();
        assert_eq!(c.entry.as_ref().unwrap().params, HookParams::Address);
        assert_eq!(c.exit.as_ref().unwrap().params, HookParams::ExitAddress);
        assert!(c.is_hook("__hookcc_exit"));
        assert!(!c.is_hook("main"));
        assert_eq!(c.placement, Placement::BeforeInlining);
    }

    #[test]
    fn rejects_unknown_parameter_kind() {
        let e = Config::from_options("h", "", "adress", "none", false, true, false).unwrap_err();
        assert!(
            e.contains("-hookcc-entry-parm") && e.contains("adress"),
            "{e}"
        );
    }

    #[test]
    fn globs_match_whole_names() {
        assert!(glob_matches("calls::*", "calls::fib"));
        assert!(glob_matches("*::{closure#?}", "calls::quiet::{closure#0}"));
        assert!(glob_matches("crc*", "crc_byte"));
        assert!(!glob_matches("crc", "crc_byte"));
        assert!(glob_matches("*", ""));
        assert!(glob_matches("a*b*c", "aXbYbZc"));
        assert!(!glob_matches("a*b*c", "aXbYbZ"));
    }

    #[test]
    fn include_then_exclude() {
        let f = NameFilter::from_lists("calls::*\n", "calls::quiet*\n*::noisy\n");
        assert!(f.allows(&["_RNv…", "calls::fib"]));
        assert!(!f.allows(&["_RNv…", "calls::quiet::{closure#0}"]));
        assert!(!f.allows(&["main"]));
        let only_exclude = NameFilter::from_lists("", "crc_byte");
        assert!(only_exclude.allows(&["crc32"]) && !only_exclude.allows(&["crc_byte"]));
    }

    #[test]
    fn no_symbol_means_no_hook() {
        let c = Config::from_options("", "", "none", "none", true, true, false).unwrap();
        assert!(c.is_empty());
    }
}
