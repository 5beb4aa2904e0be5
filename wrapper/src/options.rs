//! hookcc's own options: taken off the command line before clang sees it.

use std::fmt;

/// Which runtime component is linked into executables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RuntimeComponent {
    /// The native trace runtime (runtime/src/trace.c): per-thread buffers, `.hktrace` files.
    Trace,
    /// Nothing: the user provides the hooks.
    None,
}

impl RuntimeComponent {
    pub const NAMES: &'static [&'static str] = &["trace", "none"];

    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "trace" => Some(RuntimeComponent::Trace),
            "none" => Some(RuntimeComponent::None),
            _ => None,
        }
    }

    /// The runtime source file compiled for this component, if any.
    pub fn source_name(self) -> Option<&'static str> {
        match self {
            RuntimeComponent::Trace => Some("trace"),
            RuntimeComponent::None => None,
        }
    }
}

/// What hookcc was asked to do, from its options and the environment.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HookOptions {
    /// `--trace` / `HOOKCC_TRACE=1`: native entry/exit hooks into the trace runtime.
    pub trace: bool,
    /// `--hook-runtime=NAME`; when unset, the mode's default.
    pub runtime: Option<RuntimeComponent>,
    /// `--hookcc-verbose` / `HOOKCC_VERBOSE=1`: print the clang command on stderr.
    pub verbose: bool,
    /// `--help` / `--hookcc-help`.
    pub help: bool,
}

impl HookOptions {
    /// True if any hooks are to be inserted.
    pub fn instruments(&self) -> bool {
        self.trace
    }

    /// The runtime component to link, if any.
    pub fn runtime_component(&self) -> RuntimeComponent {
        match (self.runtime, self.trace) {
            (Some(r), _) => r,
            (None, true) => RuntimeComponent::Trace,
            (None, false) => RuntimeComponent::None,
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
pub enum OptionError {
    UnknownOption(String),
    BadValue { option: String, value: String, expected: String },
    BadEnvironment { variable: String, value: String },
}

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OptionError::UnknownOption(o) => {
                write!(f, "unknown option `{o}` (hookcc's options are listed by `hookcc --help`)")
            }
            OptionError::BadValue { option, value, expected } => {
                write!(f, "`{option}`: unknown value `{value}` (expected one of: {expected})")
            }
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
    Help,
    HookRuntime,
    Trace,
    Verbose,
}

/// hookcc's own options, sorted. `=`-terminated spellings take a joined value.
const OWN_OPTIONS: &[(&str, OwnOption)] = &[
    ("--help", OwnOption::Help),
    ("--hook-runtime=", OwnOption::HookRuntime),
    ("--hookcc-help", OwnOption::Help),
    ("--hookcc-verbose", OwnOption::Verbose),
    ("--trace", OwnOption::Trace),
];

/// Prefixes reserved for hookcc: an unknown option starting with one of these is an error,
/// not something to hand to clang.
const RESERVED_PREFIXES: &[&str] = &["--hook", "--trace"];

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
    let mut options = HookOptions {
        trace: flag_from_env("HOOKCC_TRACE", env("HOOKCC_TRACE"))?,
        verbose: flag_from_env("HOOKCC_VERBOSE", env("HOOKCC_VERBOSE"))?,
        ..HookOptions::default()
    };
    let mut rest = Vec::with_capacity(args.len());
    for arg in args {
        let own = OWN_OPTIONS.iter().find(|(spelling, _)| {
            if spelling.ends_with('=') { arg.starts_with(spelling) } else { arg == spelling }
        });
        match own {
            Some((_, OwnOption::Help)) => options.help = true,
            Some((_, OwnOption::Trace)) => options.trace = true,
            Some((_, OwnOption::Verbose)) => options.verbose = true,
            Some((spelling, OwnOption::HookRuntime)) => {
                let value = &arg[spelling.len()..];
                options.runtime = Some(RuntimeComponent::parse(value).ok_or_else(|| {
                    OptionError::BadValue {
                        option: arg.clone(),
                        value: value.to_string(),
                        expected: RuntimeComponent::NAMES.join(", "),
                    }
                })?);
            }
            None if RESERVED_PREFIXES.iter().any(|p| arg.starts_with(p)) => {
                return Err(OptionError::UnknownOption(arg.clone()));
            }
            None => rest.push(arg.clone()),
        }
    }
    Ok((options, rest))
}

pub const HELP: &str = "\
hookcc — a drop-in C/C++ compiler (clang-19) that inserts function entry/exit hooks

Usage: hookcc [hookcc options] [clang options] files…
       hookcc++ …            (the same, as a C++ compiler)

Every argument that is not one of hookcc's passes to clang unchanged; without a hook option
hookcc adds nothing and produces exactly what clang-19 produces.

hookcc options:
  --trace               insert hookcc's native entry/exit hooks into every function defined in
                        the sources, and link the trace runtime: the program writes
                        <program>.<pid>.hktrace (or $HOOKCC_OUTPUT); read it with
                        `hookprof report`
  --hook-runtime=NAME   runtime component linked into executables: trace, none
                        (default: trace with --trace, else none)
  --hookcc-verbose      print the clang command hookcc runs
  --help, --hookcc-help this text (clang's own options: clang-19 --help)

Environment:
  HOOKCC_TRACE=1        as --trace, for build systems that cannot add flags
  HOOKCC_VERBOSE=1      as --hookcc-verbose
  HOOKCC_CLANG          the clang to run (default: clang-19, else clang, on PATH)
  HOOKCC_CACHE_DIR      where runtimes compiled for each target are kept
                        (default: $XDG_CACHE_HOME/hookcc or ~/.cache/hookcc)
  HOOKCC_PLUGIN         the pass plugin library (default: found beside hookcc)
  HOOKCC_RUNTIME_DIR    the runtime sources (default: found beside hookcc)

In the traced program: HOOKCC_OUTPUT, HOOKCC_MAX_BYTES, HOOKCC_BUFFER_RECORDS, HOOKCC_DISABLE
(see docs/trace-format.md). The runtime's API is <hookcc/trace.h>.
";

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn strings(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn table_is_sorted() {
        for pair in OWN_OPTIONS.windows(2) {
            assert!(pair[0].0 < pair[1].0, "OWN_OPTIONS not sorted at {}", pair[1].0);
        }
    }

    #[test]
    fn own_options_are_removed_in_order() {
        let (o, rest) =
            take_own_options(&strings(&["-O2", "--trace", "-c", "a.c", "--hook-runtime=none"]), &no_env)
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
    fn errors_name_the_option() {
        let e = take_own_options(&strings(&["--hook-runtime=tarce"]), &no_env).unwrap_err();
        assert!(e.to_string().contains("tarce") && e.to_string().contains("trace, none"));
        let e = take_own_options(&strings(&["--trace-all"]), &no_env).unwrap_err();
        assert!(e.to_string().contains("--trace-all"));
        let env = |_: &str| Some("maybe".to_string());
        let e = take_own_options(&strings(&[]), &env).unwrap_err();
        assert!(e.to_string().contains("HOOKCC_TRACE"));
    }
}
