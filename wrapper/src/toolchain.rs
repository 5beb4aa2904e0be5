//! Finding clang, the pass plugin and the runtime sources.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The LLVM major version the pass plugin is built for.
pub const LLVM_MAJOR: u32 = 19;
pub const PLUGIN_FILE: &str = "libhookcc_pass.so";
/// Every LLVM major a pass plugin is built for (pass/Cargo.toml's features): clang-19's, and
/// rustc's (1.95 is LLVM 22). The others sit beside [`PLUGIN_FILE`] as
/// `libhookcc_pass_llvmN.so` (scripts/build-plugins.sh).
pub const SUPPORTED_LLVM: &[u32] = &[LLVM_MAJOR, 22];

/// The file name of the pass plugin built for LLVM `major`.
pub fn plugin_file_for(major: u32) -> String {
    if major == LLVM_MAJOR {
        PLUGIN_FILE.to_string()
    } else {
        format!("libhookcc_pass_llvm{major}.so")
    }
}
/// The clang frontend plugin (pragmas and attributes), found beside the pass plugin.
pub const FRONTEND_PLUGIN_FILE: &str = "libhookcc_clang.so";

/// Finds the clang to run: `$HOOKCC_CLANG`, else `clang-19`, else `clang` on PATH.
pub fn find_clang(env: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, String> {
    if let Some(path) = env("HOOKCC_CLANG").filter(|p| !p.is_empty()) {
        return which::which(&path).map_err(|_| {
            format!("HOOKCC_CLANG={path}: no such program (give a path or a name on PATH)")
        });
    }
    for name in [format!("clang-{LLVM_MAJOR}"), "clang".to_string()] {
        if let Ok(path) = which::which(&name) {
            return Ok(path);
        }
    }
    Err(format!(
        "no clang found: neither clang-{LLVM_MAJOR} nor clang is on PATH (set HOOKCC_CLANG, or on \
         Debian 12: apt-get install clang-{LLVM_MAJOR})"
    ))
}

/// The LLVM tool `name` (`llvm-ar`, `llvm-ranlib`) of the same LLVM as `clang`: beside the
/// real clang binary (`/usr/bin/clang-19` is a link to `/usr/lib/llvm-19/bin/clang`, beside
/// `llvm-ar`), else `NAME-19` on PATH. A build system's unversioned `llvm-ar` may be another
/// LLVM's (Debian 12's is LLVM 14), which cannot read clang-19's `-flto` bitcode.
pub fn llvm_tool(clang: &Path, name: &str) -> Result<PathBuf, String> {
    let real = clang.canonicalize().unwrap_or_else(|_| clang.to_path_buf());
    if let Some(beside) = real.parent().map(|dir| dir.join(name)) {
        if beside.is_file() {
            return Ok(beside);
        }
    }
    let versioned = format!("{name}-{LLVM_MAJOR}");
    which::which(&versioned).map_err(|_| {
        format!(
            "no {name} of {}'s LLVM: neither {} nor {versioned} on PATH (on Debian 12: apt-get \
             install llvm-{LLVM_MAJOR})",
            clang.display(),
            real.with_file_name(name).display()
        )
    })
}

/// Of `candidates`, the arguments of the command line `args` that clang's driver calls unknown:
/// `clang -### ARGS` parses the line as a compile would (an option's value stays a value) and
/// runs nothing; its "unknown argument: 'X'" (or "unknown argument 'X'; did you mean …") names
/// each. If clang cannot be run, none.
pub fn unknown_to_clang(clang: &Path, args: &[String], candidates: &[String]) -> Vec<String> {
    let Ok(out) = Command::new(clang).arg("-###").args(args).output() else {
        return Vec::new();
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    candidates
        .iter()
        .filter(|arg| {
            stderr.contains(&format!("unknown argument: '{arg}'"))
                || stderr.contains(&format!("unknown argument '{arg}'"))
        })
        .cloned()
        .collect()
}

/// Checks that `clang` is LLVM 19, the version the plugin is built for. Only needed when the
/// plugin is loaded; transparent runs do not pay for it.
pub fn check_clang_version(clang: &Path) -> Result<(), String> {
    let out = Command::new(clang)
        .arg("--version")
        .output()
        .map_err(|e| format!("{}: cannot run: {e}", clang.display()))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(major) = clang_major(&text) else {
        return Err(format!(
            "{} does not look like clang: its `--version` says no \"clang version\" (set \
             HOOKCC_CLANG to a clang-{LLVM_MAJOR})",
            clang.display()
        ));
    };
    if major == LLVM_MAJOR {
        return Ok(());
    }
    Err(format!(
        "{} is clang {major}, but hookcc's pass plugin is built for clang {LLVM_MAJOR}; set \
         HOOKCC_CLANG to a clang-{LLVM_MAJOR}",
        clang.display()
    ))
}

/// The major version in clang's `--version` text: the number after "clang version" (any
/// vendor prefix before it, as in "Debian clang version 19.1.7"). Not just any "version N":
/// `/bin/false --version` says "GNU GPL version 3".
fn clang_major(text: &str) -> Option<u32> {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .windows(3)
        .find(|w| w[0] == "clang" && w[1] == "version")
        .and_then(|w| w[2].split('.').next())
        .and_then(|m| m.parse::<u32>().ok())
}

/// Checks that the plugins the compile step loads exist, so that a wrong `HOOKCC_PLUGIN` (or
/// a pass plugin copied without its neighbour) is one line, not clang's 300-line option dump.
pub fn check_plugins(layout: &Layout, from_env: bool) -> Result<(), String> {
    let origin = if from_env { " (HOOKCC_PLUGIN)" } else { "" };
    if !layout.plugin.is_file() {
        return Err(format!(
            "the pass plugin {}{origin} does not exist or is not a file",
            layout.plugin.display()
        ));
    }
    if !layout.frontend_plugin.is_file() {
        return Err(format!(
            "the frontend plugin {FRONTEND_PLUGIN_FILE} is missing: hookcc looks for it beside \
             the pass plugin{origin}, at {} (copy both files together)",
            layout.frontend_plugin.display()
        ));
    }
    Ok(())
}

/// Where hookcc's own files are: the plugin and the runtime sources.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    pub plugin: PathBuf,
    pub frontend_plugin: PathBuf,
    /// Holds `include/hookcc/*.h` and `src/*.c`.
    pub runtime_dir: PathBuf,
}

impl Layout {
    /// Finds the files relative to hookcc's executable, in an install prefix
    /// (`PREFIX/bin/hookcc`, `PREFIX/lib/hookcc/{libhookcc_pass.so,libhookcc_clang.so,runtime/}`)
    /// or in the build tree (`TARGET/PROFILE/{hookcc,libhookcc_*.so}` with `REPO/runtime/`,
    /// `TARGET` being `REPO/target` or wherever `CARGO_TARGET_DIR` put it: then the sources
    /// are found where this hookcc was built from).
    /// The frontend plugin is always the pass plugin's neighbour.
    /// `HOOKCC_PLUGIN` and `HOOKCC_RUNTIME_DIR` override each.
    pub fn find(exe: &Path, env: &dyn Fn(&str) -> Option<String>) -> Result<Layout, String> {
        let exe_dir = exe.parent().unwrap_or(Path::new("."));
        let installed = exe_dir.join("../lib/hookcc");
        let source_runtime = Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime");
        let candidates = [
            (installed.join(PLUGIN_FILE), installed.join("runtime")),
            (exe_dir.join(PLUGIN_FILE), exe_dir.join("../../runtime")),
            (exe_dir.join(PLUGIN_FILE), source_runtime),
        ];
        let found = candidates
            .iter()
            .find(|(p, r)| p.is_file() && r.join("src").is_dir());
        let plugin = env("HOOKCC_PLUGIN")
            .map(PathBuf::from)
            .or_else(|| found.map(|(p, _)| p.clone()));
        let runtime_dir = env("HOOKCC_RUNTIME_DIR")
            .map(PathBuf::from)
            .or_else(|| found.map(|(_, r)| r.clone()));
        match (plugin, runtime_dir) {
            (Some(plugin), Some(runtime_dir)) => Ok(Layout {
                frontend_plugin: plugin.with_file_name(FRONTEND_PLUGIN_FILE),
                plugin: plugin.canonicalize().unwrap_or(plugin),
                runtime_dir: runtime_dir.canonicalize().unwrap_or(runtime_dir),
            }),
            _ => Err(format!(
                "cannot find hookcc's pass plugin ({PLUGIN_FILE}) and runtime sources near {}: \
                 looked in {} and {} (build with `cargo build --release`, install with \
                 `scripts/install.sh`, or set HOOKCC_PLUGIN and HOOKCC_RUNTIME_DIR)",
                exe.display(),
                candidates[0].0.display(),
                candidates[1].0.display()
            )),
        }
    }

    /// [`Layout::find`], and for a hookcc with nothing beside it — installed by `cargo install
    /// --path wrapper`, which installs executables only — the source tree it was built from:
    /// the plugins in that tree's cargo target directory (`CARGO_TARGET_DIR`, else
    /// `SOURCE/target`; release, else debug), built there with `cargo build --release` when
    /// they are missing (once, with a note on stderr), and the runtime sources in
    /// `SOURCE/runtime`.
    pub fn find_or_build(
        exe: &Path,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Layout, String> {
        let err = match Layout::find(exe, env) {
            Ok(layout) => return Ok(layout),
            Err(err) => err,
        };
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        if !source.join("Cargo.toml").is_file() {
            return Err(err);
        }
        let runtime_dir = env("HOOKCC_RUNTIME_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| source.join("runtime"));
        let plugin = match env("HOOKCC_PLUGIN") {
            Some(plugin) => PathBuf::from(plugin),
            None => Self::source_plugins(exe, &source, env, &err)?.join(PLUGIN_FILE),
        };
        Ok(Layout {
            frontend_plugin: plugin.with_file_name(FRONTEND_PLUGIN_FILE),
            plugin,
            runtime_dir: runtime_dir.canonicalize().unwrap_or(runtime_dir),
        })
    }

    /// The directory of the plugins built in the source tree's target directory, building
    /// them first if they are not there (see [`Layout::find_or_build`]).
    fn source_plugins(
        exe: &Path,
        source: &Path,
        env: &dyn Fn(&str) -> Option<String>,
        err: &str,
    ) -> Result<PathBuf, String> {
        let target = env("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| source.join("target"));
        let built = || {
            ["release", "debug"]
                .iter()
                .map(|profile| target.join(profile))
                .find(|dir| {
                    dir.join(PLUGIN_FILE).is_file() && dir.join(FRONTEND_PLUGIN_FILE).is_file()
                })
        };
        if let Some(dir) = built() {
            return Ok(dir);
        }
        eprintln!(
            "hookcc: no pass plugin beside {} (cargo install copies executables only): \
             building it from {} into {} (cargo build --release, a minute or two, once)",
            exe.display(),
            source.display(),
            target.display()
        );
        let status = std::process::Command::new(env("CARGO").unwrap_or_else(|| "cargo".into()))
            .args(["build", "--release", "--quiet"])
            .args(["-p", "hookcc-pass", "-p", "hookcc-frontend"])
            .arg("--manifest-path")
            .arg(source.join("Cargo.toml"))
            .env("CARGO_TARGET_DIR", &target)
            .stdout(std::process::Stdio::null())
            .status()
            .map_err(|e| format!("{err}; building the plugin: cannot run cargo: {e}"))?;
        match built() {
            Some(dir) if status.success() => Ok(dir),
            _ => Err(format!("{err}; building it in {} failed", source.display())),
        }
    }

    /// The pass plugin for a compiler whose LLVM major is `major` (`what` names that compiler
    /// in errors): an error names the version found and the ones supported.
    pub fn plugin_for_llvm(&self, major: u32, what: &str) -> Result<PathBuf, String> {
        if !SUPPORTED_LLVM.contains(&major) {
            let supported: Vec<String> = SUPPORTED_LLVM.iter().map(u32::to_string).collect();
            return Err(format!(
                "{what} uses LLVM {major}, but hookcc's pass plugin is built for LLVM {} only; \
                 use a compiler with one of those (for rustc: a toolchain whose `rustc -vV` says \
                 LLVM version {}.x)",
                supported.join(", "),
                supported.join(".x or ")
            ));
        }
        let plugin = self.plugin.with_file_name(plugin_file_for(major));
        if !plugin.is_file() {
            return Err(format!(
                "{what} uses LLVM {major}, and hookcc's plugin for it, {}, is not built: run \
                 scripts/build-plugins.sh (after scripts/setup.sh, which fetches the LLVM \
                 {major} headers)",
                plugin.display()
            ));
        }
        Ok(plugin)
    }

    /// [`Layout::plugin_for_llvm`], and when the plugin for a supported major is not built but
    /// the source tree this hookcc was built from is there, builds it (as
    /// scripts/build-plugins.sh does: its own cargo target directory `T/llvmN`, `T` being the
    /// target directory holding the pass plugin, else `CARGO_TARGET_DIR`, else `SOURCE/target`)
    /// and copies it beside the pass plugin, saying so on stderr. That happens once: the next
    /// run finds the copy. A hookcc built by `cargo build` (the README's first command, or
    /// `cargo install --path wrapper`) then works for `cargo hookcc` with nothing else to run.
    pub fn plugin_for_llvm_or_build(
        &self,
        major: u32,
        what: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<PathBuf, String> {
        let missing = match self.plugin_for_llvm(major, what) {
            Ok(plugin) => return Ok(plugin),
            Err(e) if SUPPORTED_LLVM.contains(&major) => e,
            Err(e) => return Err(e),
        };
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        if !source.join("pass/Cargo.toml").is_file() {
            return Err(missing);
        }
        let source = source.canonicalize().unwrap_or(source);
        let plugin_dir = self.plugin.parent().unwrap_or(Path::new("."));
        // A cargo target directory (it has CACHEDIR.TAG) holding PROFILE/libhookcc_pass.so.
        let target = plugin_dir
            .parent()
            .filter(|t| t.join("CACHEDIR.TAG").is_file())
            .map(Path::to_path_buf)
            .or_else(|| env("CARGO_TARGET_DIR").map(PathBuf::from))
            .unwrap_or_else(|| source.join("target"));
        let release = plugin_dir.file_name().is_none_or(|n| n != "debug");
        let build_dir = target.join(format!("llvm{major}"));
        let built = build_dir
            .join(if release { "release" } else { "debug" })
            .join(PLUGIN_FILE);
        let dest = self.plugin.with_file_name(plugin_file_for(major));
        eprintln!(
            "hookcc: {what} uses LLVM {major}, and the pass plugin for it is not built yet: \
             building it from {} (cargo build -p hookcc-pass --features llvm{major}{}, a few \
             minutes, once) into {}",
            source.display(),
            if release { " --release" } else { "" },
            dest.display()
        );
        let mut cargo = Command::new(env("CARGO").unwrap_or_else(|| "cargo".into()));
        cargo
            .args([
                "build",
                "--quiet",
                "-p",
                "hookcc-pass",
                "--no-default-features",
            ])
            .arg(format!("--features=llvm{major}"))
            .arg("--manifest-path")
            .arg(source.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(&build_dir)
            // Flags meant for the user's crates (cargo hookcc's caller) are not the plugin's.
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("CARGO_TARGET_DIR")
            // Its output goes to stderr: `hookcc --rustflags` prints the flags on stdout.
            .stdout(std::process::Stdio::null());
        if release {
            cargo.arg("--release");
        }
        let status = cargo
            .status()
            .map_err(|e| format!("{missing}; building it: cannot run cargo: {e}"))?;
        if !status.success() || !built.is_file() {
            return Err(format!(
                "building the LLVM {major} pass plugin in {} failed ({status}): run \
                 scripts/setup.sh (it fetches the LLVM {major} headers), then \
                 scripts/build-plugins.sh",
                source.display()
            ));
        }
        // Copied under a private name and renamed: a concurrent hookcc sees all or nothing.
        let partial = dest.with_extension(format!("so.{}", std::process::id()));
        std::fs::copy(&built, &partial)
            .and_then(|_| std::fs::rename(&partial, &dest))
            .map_err(|e| {
                let _ = std::fs::remove_file(&partial);
                format!(
                    "built {}, but cannot copy it to {}: {e}",
                    built.display(),
                    dest.display()
                )
            })?;
        Ok(dest)
    }

    pub fn include_dir(&self) -> PathBuf {
        self.runtime_dir.join("include")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn llvm_tools_come_from_beside_the_real_clang() {
        let dir = std::env::temp_dir().join(format!("hookcc-llvm-tool-{}", std::process::id()));
        let bin = dir.join("llvm-19/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("clang"), "").unwrap();
        std::fs::write(bin.join("llvm-ar"), "").unwrap();
        // /usr/bin/clang-19 -> ../lib/llvm-19/bin/clang, as Debian lays it out.
        let link = dir.join("clang-19");
        std::os::unix::fs::symlink(bin.join("clang"), &link).unwrap();
        let found = llvm_tool(&link, "llvm-ar");
        let missing = llvm_tool(&link, "llvm-no-such-tool");
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            found.unwrap(),
            bin.canonicalize().unwrap_or(bin).join("llvm-ar")
        );
        let message = missing.unwrap_err();
        assert!(message.contains("llvm-no-such-tool-19"), "{message}");
    }

    #[test]
    fn clang_major_reads_the_number_after_clang_version_only() {
        assert_eq!(
            clang_major("Debian clang version 19.1.7 (++20250114)\nTarget: x"),
            Some(19)
        );
        assert_eq!(clang_major("clang version 17.0.6\n"), Some(17));
        assert_eq!(
            clang_major("false (GNU coreutils) 9.1\nLicense GPLv3+: GNU GPL version 3 or later"),
            None
        );
        assert_eq!(clang_major(""), None);
    }

    /// A build in a target directory outside the source tree (`CARGO_TARGET_DIR`) still finds
    /// the runtime sources: those of the tree this hookcc was built from.
    #[test]
    fn build_tree_outside_the_sources_finds_their_runtime() {
        let target = std::env::temp_dir().join(format!("hookcc-layout-{}", std::process::id()));
        let profile = target.join("debug");
        std::fs::create_dir_all(&profile).unwrap();
        std::fs::write(profile.join(PLUGIN_FILE), b"").unwrap();
        let layout = Layout::find(&profile.join("hookcc"), &|_| None);
        std::fs::remove_dir_all(&target).unwrap();
        let layout = layout.unwrap();
        let sources = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../runtime")
            .canonicalize()
            .unwrap();
        assert_eq!(layout.runtime_dir, sources);
        assert_eq!(layout.frontend_plugin, profile.join(FRONTEND_PLUGIN_FILE));
        // Nothing beside the executable: an error naming where it looked.
        let err = Layout::find(Path::new("/nonexistent/bin/hookcc"), &|_| None).unwrap_err();
        assert!(err.contains("/nonexistent/bin/libhookcc_pass.so"), "{err}");
    }
}
