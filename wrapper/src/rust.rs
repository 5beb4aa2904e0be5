//! The Rust entry point: the RUSTFLAGS that make rustc insert the hooks the options ask for
//! (docs/rust.md).
//!
//! rustc gets the pass plugin built for its own LLVM major (`-Z llvm-plugins=`), the pass's
//! options as a pipeline element (`-C passes=hookcc-options<…>`: rustc loads plugins only when
//! it builds the pipeline, after it parsed `-C llvm-args`, so the plugin's cl::opts are unknown
//! there), and hookcc as its linker with `--hook-runtime=…`, so that the runtime component is
//! compiled for the target and linked exactly as for C.

use std::path::PathBuf;
use std::process::Command;

use crate::options::{read_glob_files, HookOptions, HookPlacement, PassConfig, RuntimeComponent};
use crate::toolchain::Layout;

/// What `--rustflags` needs from the machine (behind a trait so tests start no rustc).
pub trait RustHost {
    fn layout(&self) -> Result<Layout, String>;
    /// The rustc to match, for messages (`$RUSTC`, else `rustc`).
    fn rustc(&self) -> String;
    /// The output of `rustc -vV`.
    fn rustc_version(&self) -> Result<String, String>;
    /// hookcc itself, the linker rustc is to run.
    fn hookcc_exe(&self) -> Result<PathBuf, String>;
    /// The pass plugin for LLVM `major` in `layout` (the machine's builds it when missing).
    fn plugin_for_llvm(&self, layout: &Layout, major: u32) -> Result<PathBuf, String> {
        layout.plugin_for_llvm(major, &self.rustc())
    }
}

/// The machine: `$RUSTC` (else `rustc`), and hookcc's files found from its executable.
pub struct SystemRust {
    /// The hookcc executable (the linker rustc is given; hookcc's files are found from it).
    pub hookcc: PathBuf,
}

impl RustHost for SystemRust {
    fn layout(&self) -> Result<Layout, String> {
        Layout::find_or_build(&self.hookcc, &|k| std::env::var(k).ok())
    }
    fn rustc(&self) -> String {
        std::env::var("RUSTC")
            .ok()
            .filter(|r| !r.is_empty())
            .unwrap_or_else(|| "rustc".to_string())
    }
    fn rustc_version(&self) -> Result<String, String> {
        let rustc = self.rustc();
        let out = Command::new(&rustc)
            .arg("-vV")
            .output()
            .map_err(|e| format!("{rustc}: cannot run: {e} (set RUSTC, or install Rust)"))?;
        if !out.status.success() {
            return Err(format!(
                "{rustc} -vV failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
    fn hookcc_exe(&self) -> Result<PathBuf, String> {
        Ok(self.hookcc.clone())
    }
    fn plugin_for_llvm(&self, layout: &Layout, major: u32) -> Result<PathBuf, String> {
        layout.plugin_for_llvm_or_build(major, &self.rustc(), &|k| std::env::var(k).ok())
    }
}

/// The host triple from `rustc -vV` (`host: x86_64-unknown-linux-gnu`).
pub fn rustc_host(version_text: &str) -> Option<&str> {
    version_text
        .lines()
        .find_map(|l| l.strip_prefix("host:"))
        .map(str::trim)
}

/// The LLVM major from `rustc -vV` (`LLVM version: 22.1.2`).
pub fn rustc_llvm_major(version_text: &str) -> Option<u32> {
    version_text
        .lines()
        .find_map(|l| l.strip_prefix("LLVM version:"))
        .and_then(|v| v.trim().split('.').next())
        .and_then(|m| m.parse().ok())
}

/// The pass options as the `hookcc-options<…>` pipeline element shim/shim.cpp parses.
pub fn pass_element(config: &PassConfig) -> String {
    let mut items = Vec::new();
    for (which, hook) in [("entry", &config.entry), ("exit", &config.exit)] {
        if let Some(hook) = hook {
            items.push(format!("{which}={}", hook.symbol));
            items.push(format!("{which}-parm={}", hook.parm.pass_name()));
        }
    }
    if config.placement != HookPlacement::Source {
        items.push(format!("placement={}", config.placement.pass_name()));
    }
    for (on, flag) in [
        (!config.default_on, "default-off"),
        (config.skip_inline, "skip-inline"),
    ] {
        if on {
            items.push(flag.to_string());
        }
    }
    for glob in &config.include {
        items.push(format!("include={glob}"));
    }
    for glob in &config.exclude {
        items.push(format!("exclude={glob}"));
    }
    if config.min_size > 0 {
        items.push(format!("min-size={}", config.min_size));
    }
    for name in &config.exclude_crates {
        items.push(format!("exclude-crate={name}"));
    }
    if let Some(outline) = &config.outline {
        items.push(format!("outline={outline}"));
    }
    format!("hookcc-options<{}>", items.join(";"))
}

/// The RUSTFLAGS for `options`, one flag per element.
pub fn rustflags(options: &HookOptions, host: &dyn RustHost) -> Result<Vec<String>, String> {
    let mut options = options.clone();
    read_glob_files(&mut options)?;
    let Some(config) = options.pass_config() else {
        return Err(
            "--rustflags needs a hook option to say what to insert: --trace, -profile \
                    or --entry_hook/--exit_hook (hookcc --help)"
                .to_string(),
        );
    };
    // The pipeline element's own separators cannot be in a glob.
    if let Some(glob) = config
        .include
        .iter()
        .chain(&config.exclude)
        .find(|g| g.contains([';', ',', '(', ')']))
    {
        return Err(format!(
            "--hook-include/--hook-exclude `{glob}`: `;`, `,` and parentheses cannot reach rustc \
             in -C passes=; match them with `?` or `*`"
        ));
    }
    let rustc = host.rustc();
    let version = host.rustc_version()?;
    let major = rustc_llvm_major(&version).ok_or_else(|| {
        format!("{rustc} -vV: no `LLVM version:` line, cannot tell which plugin it needs")
    })?;
    let layout = host.layout()?;
    let plugin = host.plugin_for_llvm(&layout, major)?;
    let hookcc = host.hookcc_exe()?;
    let mut flags = vec![
        format!("-Zllvm-plugins={}", plugin.display()),
        format!("-Cpasses={}", pass_element(&config)),
        format!("-Clinker={}", hookcc.display()),
    ];
    // rustc inlines small functions and closures in MIR, before LLVM and so before the pass
    // sees them. The source placement wants every function of the source counted (checked: a
    // closure called 5 times is counted 5 times at opt-level 3 only with this): MIR inlining
    // off, LLVM still inlines them after the hooks are in. The placement after inlining (the
    // default when optimizing) wants the plain build's inlining: MIR inlining stays on (off, a
    // release build defined 4 % more functions than without hookcc, and the hooks timed
    // one-instruction intrinsics that the plain build inlines). At opt-level 0 rustc does not
    // inline in MIR.
    if config.placement == HookPlacement::Source {
        flags.push("-Zinline-mir=no".to_string());
    }
    let component = options.runtime_component();
    if component != RuntimeComponent::None {
        let name = component.source_name().unwrap_or("none");
        flags.push(format!("-Clink-arg=--hook-runtime={name}"));
    }
    // RUSTFLAGS is split at whitespace: a path with a space cannot go through it.
    if let Some(bad) = flags.iter().find(|f| f.contains(char::is_whitespace)) {
        return Err(format!(
            "`{bad}` contains whitespace, which RUSTFLAGS cannot carry: install hookcc under a \
             path without spaces"
        ));
    }
    Ok(flags)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::take_own_options;

    struct FakeRust(&'static str);

    impl RustHost for FakeRust {
        fn layout(&self) -> Result<Layout, String> {
            let dir = std::env::temp_dir().join(format!("hookcc-rust-test-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("libhookcc_pass_llvm22.so"), "").unwrap();
            Ok(Layout {
                plugin: dir.join("libhookcc_pass.so"),
                frontend_plugin: dir.join("libhookcc_clang.so"),
                runtime_dir: "/p/runtime".into(),
            })
        }
        fn rustc(&self) -> String {
            "rustc".into()
        }
        fn rustc_version(&self) -> Result<String, String> {
            Ok(format!(
                "rustc 1.95.0\nhost: x86_64-unknown-linux-gnu\n{}\n",
                self.0
            ))
        }
        fn hookcc_exe(&self) -> Result<PathBuf, String> {
            Ok("/bin/hookcc".into())
        }
    }

    fn flags(args: &[&str], host: &FakeRust) -> Result<Vec<String>, String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let (options, rest) = take_own_options(&args, &|_| None).unwrap();
        assert!(options.rustflags && rest.is_empty());
        rustflags(&options, host)
    }

    #[test]
    fn trace_flags_load_the_llvm22_plugin_and_link_the_trace_runtime() {
        let f = flags(
            &["--rustflags", "--trace"],
            &FakeRust("LLVM version: 22.1.2"),
        )
        .unwrap();
        assert!(f[0].starts_with("-Zllvm-plugins=") && f[0].ends_with("libhookcc_pass_llvm22.so"));
        assert_eq!(
            f[1],
            "-Cpasses=hookcc-options<entry=__hookcc_enter;entry-parm=address;\
             exit=__hookcc_exit;exit-parm=exit-address;placement=auto>"
        );
        assert_eq!(
            f[2..],
            ["-Clinker=/bin/hookcc", "-Clink-arg=--hook-runtime=trace"]
        );
    }

    #[test]
    fn placement_and_crate_exclusion_reach_the_pipeline_element() {
        let f = flags(
            &[
                "--rustflags",
                "--trace",
                "--hook-placement=source",
                "--hook-exclude-crate=std,core",
            ],
            &FakeRust("LLVM version: 22.1.2"),
        )
        .unwrap();
        assert!(
            f[1].ends_with("exit-parm=exit-address;exclude-crate=std;exclude-crate=core>"),
            "{}",
            f[1]
        );
        // Every function of the source counted: MIR inlining off (only then).
        assert!(f.iter().any(|x| x == "-Zinline-mir=no"), "{f:?}");
        let f = flags(
            &[
                "--rustflags",
                "--entry_hook",
                "--remove_hooks_when_inlining",
            ],
            &FakeRust("LLVM version: 22.1.2"),
        )
        .unwrap();
        assert!(f[1].contains(";placement=after-inlining;"), "{}", f[1]);
    }

    #[test]
    fn ti_flags_carry_parms_and_no_runtime() {
        let f = flags(
            &["--rustflags", "--entry_hook=h", "--entry_parm=name"],
            &FakeRust("LLVM version: 22.1.2"),
        )
        .unwrap();
        assert_eq!(
            f[1],
            "-Cpasses=hookcc-options<entry=h;entry-parm=name;skip-inline>"
        );
        assert!(!f.iter().any(|a| a.contains("hook-runtime")));
    }

    #[test]
    fn name_filters_reach_the_pass() {
        let f = flags(
            &[
                "--rustflags",
                "--trace",
                "--hook-exclude=calls::quiet*",
                "--hook-include=calls::*",
            ],
            &FakeRust("LLVM version: 22.1.2"),
        )
        .unwrap();
        assert!(
            f[1].ends_with(";include=calls::*;exclude=calls::quiet*>"),
            "{}",
            f[1]
        );
        let e = flags(
            &["--rustflags", "--trace", "--hook-exclude=f(a,b)"],
            &FakeRust("LLVM version: 22.1.2"),
        )
        .unwrap_err();
        assert!(e.contains("f(a,b)"), "{e}");
    }

    #[test]
    fn unsupported_llvm_names_found_and_supported_versions() {
        let e = flags(
            &["--rustflags", "--trace"],
            &FakeRust("LLVM version: 23.1.0"),
        )
        .unwrap_err();
        assert!(e.contains("LLVM 23") && e.contains("19, 22"), "{e}");
        let e = flags(&["--rustflags", "--trace"], &FakeRust("")).unwrap_err();
        assert!(e.contains("LLVM version"), "{e}");
        let e = flags(&["--rustflags"], &FakeRust("LLVM version: 22.1.2")).unwrap_err();
        assert!(e.contains("--trace"), "{e}");
    }
}
