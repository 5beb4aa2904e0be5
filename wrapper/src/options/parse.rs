//! Reading hookcc's own options off the command line and the environment
//! ([`take_own_options`]); their names' table is `names`.

use super::names::{own_option, OwnOption, RESERVED_PREFIXES};
use super::types::*;

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
                if !matches!(value, "auto" | "leaf" | "all" | "none")
                    && value.parse::<u32>().is_err()
                {
                    return Err(bad(
                        "auto, leaf, all, none, or a number of IR instructions, such as 200",
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
