//! Compiling the runtime for the user's target, once per target, cached.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::options::RuntimeComponent;

/// The cache directory: `$HOOKCC_CACHE_DIR`, `$XDG_CACHE_HOME/hookcc` or `~/.cache/hookcc`.
pub fn cache_dir(env: &dyn Fn(&str) -> Option<String>) -> PathBuf {
    let nonempty = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(dir) = nonempty("HOOKCC_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = nonempty("XDG_CACHE_HOME") {
        return Path::new(&dir).join("hookcc");
    }
    match nonempty("HOME") {
        Some(home) => Path::new(&home).join(".cache/hookcc"),
        None => std::env::temp_dir().join("hookcc-cache"),
    }
}

/// 64-bit FNV-1a, twice with different bases: a cache key, not a security measure.
#[derive(Clone, Copy)]
struct Key(u64, u64);

impl Key {
    fn new() -> Self {
        Key(0xcbf2_9ce4_8422_2325, 0x6c62_272e_07bb_0142)
    }
    fn add(&mut self, bytes: &[u8]) {
        for &b in bytes.iter().chain(&[0xff]) {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
            self.1 = (self.1 ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    fn hex(self) -> String {
        format!("{:016x}{:016x}", self.0, self.1)
    }
}

/// A key for compiler caches (ccache's compiler_check, HOOKCC_LAUNCHER's define): what decides
/// hookcc's output beyond its command line, given as named parts.
pub fn cache_key(parts: &[(&str, String)]) -> String {
    let mut key = Key::new();
    for (name, value) in parts {
        key.add(name.as_bytes());
        key.add(value.as_bytes());
    }
    key.hex()
}

/// A file's identity for a cache key: its path, size and modification time (its contents
/// would cost a read of megabytes on every compile).
pub fn file_stamp(path: &Path) -> String {
    match fs::metadata(path) {
        Ok(meta) => format!(
            "{} {} {:?}",
            path.display(),
            meta.len(),
            meta.modified().ok()
        ),
        Err(_) => format!("{} missing", path.display()),
    }
}

/// The checksum of a file's contents, as kept beside a cached object (`<object>.sum`).
fn content_sum(path: &Path) -> Option<String> {
    let bytes = fs::read(path).ok()?;
    let mut key = Key::new();
    key.add(&bytes);
    Some(key.hex())
}

/// Whether the cached object at `object` is the one hookcc wrote: its `.sum` matches its
/// contents. A corrupted or truncated object (a full disk, a crash mid-write, a stray edit)
/// would otherwise fail every link ("file format not recognized") until removed by hand.
fn cached_object_intact(object: &Path) -> bool {
    let recorded = fs::read_to_string(sum_path(object)).ok();
    matches!((recorded, content_sum(object)), (Some(r), Some(c)) if r.trim() == c)
}

fn sum_path(object: &Path) -> PathBuf {
    let mut name = object.as_os_str().to_owned();
    name.push(".sum");
    PathBuf::from(name)
}

/// Removes hookcc's own files from the cache directory (`hookcc --clear-cache`), nothing
/// else: the directory may be one the user shares (HOOKCC_CACHE_DIR). Returns how many.
pub fn clear_cache(cache: &Path) -> Result<usize, String> {
    let entries = match fs::read_dir(cache) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(format!("{}: {e}", cache.display())),
    };
    let mut removed = 0;
    for entry in entries {
        let entry = entry.map_err(|e| format!("{}: {e}", cache.display()))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let ours = ["runtime-", "generated-", ".runtime-", ".generated-"]
            .iter()
            .any(|p| name.starts_with(p));
        if ours && entry.path().is_file() {
            fs::remove_file(entry.path())
                .map_err(|e| format!("{}: {e}", entry.path().display()))?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Writes `contents` to `cache/generated-<key>.<extension>` unless it is already there.
pub fn cached_file(cache: &Path, extension: &str, contents: &str) -> Result<PathBuf, String> {
    let mut key = Key::new();
    key.add(contents.as_bytes());
    let path = cache.join(format!("generated-{}.{extension}", key.hex()));
    if path.is_file() {
        return Ok(path);
    }
    fs::create_dir_all(cache)
        .map_err(|e| format!("cannot create cache {}: {e}", cache.display()))?;
    let temp = cache.join(format!(".generated-{}.{}", key.hex(), std::process::id()));
    fs::write(&temp, contents).map_err(|e| format!("{}: {e}", temp.display()))?;
    fs::rename(&temp, &path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// The flags every runtime component is compiled with. The runtime is never instrumented:
/// it is compiled without the plugin.
///
/// `-mno-outline-atomics`: on AArch64 Linux clang otherwise calls libgcc's `__aarch64_swp4_acq_rel`
/// and friends for atomics, so the runtime would need libgcc in every link. A link that has no
/// default libraries (rustc links with `-nodefaultlibs` and adds only what std asks for: a
/// `no_std` crate gets no libgcc) then fails. Inline atomics need none (other targets ignore the
/// flag; `-w` keeps that quiet).
const RUNTIME_CFLAGS: &[&str] = &[
    "-std=gnu11",
    "-O2",
    "-fPIC",
    "-fno-stack-protector",
    "-fvisibility=hidden",
    "-mno-outline-atomics",
    "-w",
];

/// What a bare-metal runtime is compiled with instead of `-fPIC` (the driver adds
/// `-ffreestanding` to the target flags of a bare-metal build): no position independence (the
/// firmware is linked at fixed addresses, and `-fPIC` would reach data through a GOT), and one
/// section per function and variable, so that `--gc-sections` drops what the firmware never
/// calls (OS_GetTick, and with it the program's counter, in a call-trace-only build).
const RUNTIME_CFLAGS_FREESTANDING: &[&str] = &["-ffunction-sections", "-fdata-sections"];

/// The flags a runtime is compiled with for these target flags.
fn runtime_cflags(target_flags: &[String]) -> Vec<&str> {
    let freestanding = target_flags.iter().any(|f| f == "-ffreestanding");
    let mut flags: Vec<&str> = RUNTIME_CFLAGS
        .iter()
        .copied()
        .filter(|f| !(freestanding && *f == "-fPIC"))
        .collect();
    if freestanding {
        flags.extend(RUNTIME_CFLAGS_FREESTANDING);
    }
    flags.extend(target_flags.iter().map(String::as_str));
    flags
}

/// A key over every runtime source and header: each file under `runtime_dir`'s `src` and
/// `include/hookcc`, subfolders included (trace.c `#include`s its parts from src/trace/, so an
/// edit to one must rebuild), by its path below that folder and its contents.
fn sources_key(runtime_dir: &Path) -> Result<Key, String> {
    let mut key = Key::new();
    for dir in ["src", "include/hookcc"] {
        let root = runtime_dir.join(dir);
        let mut files = Vec::new();
        let mut folders = vec![root.clone()];
        while let Some(folder) = folders.pop() {
            for entry in fs::read_dir(&folder).map_err(|e| format!("{}: {e}", folder.display()))? {
                let path = entry
                    .map_err(|e| format!("{}: {e}", folder.display()))?
                    .path();
                if path.is_dir() {
                    folders.push(path);
                } else if path.is_file() {
                    files.push(path);
                }
            }
        }
        files.sort();
        for file in files {
            // The path below `dir` (just the name for a file directly in it, as before parts
            // had a folder, so the keys of an unchanged tree stay what they were).
            let name = file.strip_prefix(&root).unwrap_or(&file);
            key.add(name.as_os_str().as_encoded_bytes());
            key.add(&fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?);
        }
    }
    Ok(key)
}

/// Returns the runtime object for `component` compiled for `target_flags`, compiling it into
/// the cache if it is not there yet. The key covers every runtime source and header, the
/// compiler and the target flags, so an edit to any of them rebuilds.
pub fn runtime_object(
    component: RuntimeComponent,
    clang: &Path,
    runtime_dir: &Path,
    target_flags: &[String],
    cache: &Path,
) -> Result<Option<PathBuf>, String> {
    let Some(name) = component.source_name() else {
        return Ok(None);
    };
    // A component with a bare-metal implementation of its own (trace: no OS for threads and
    // files) uses it for freestanding builds.
    let freestanding = target_flags.iter().any(|f| f == "-ffreestanding");
    let baremetal = runtime_dir.join("src").join(format!("{name}_baremetal.c"));
    let source = if freestanding && baremetal.is_file() {
        baremetal
    } else {
        runtime_dir.join("src").join(format!("{name}.c"))
    };
    if !source.is_file() {
        return Err(format!("runtime source {} is missing", source.display()));
    }
    let mut key = sources_key(runtime_dir)?;
    key.add(clang.as_os_str().as_encoded_bytes());
    if let Ok(meta) = fs::metadata(clang) {
        key.add(format!("{:?}{}", meta.modified().ok(), meta.len()).as_bytes());
    }
    let cflags = runtime_cflags(target_flags);
    for flag in &cflags {
        key.add(flag.as_bytes());
    }
    let object = cache.join(format!("runtime-{name}-{}.o", key.hex()));
    if object.is_file() && cached_object_intact(&object) {
        return Ok(Some(object));
    }
    // Missing, or not what hookcc wrote: compiled again, and replaced by the renames below.
    fs::create_dir_all(cache)
        .map_err(|e| format!("cannot create cache {}: {e}", cache.display()))?;
    // Compile to a private name and rename: parallel builds may race to fill the cache.
    let temp = cache.join(format!(
        ".runtime-{name}-{}.{}.o",
        key.hex(),
        std::process::id()
    ));
    let output = Command::new(clang)
        .args(&cflags)
        .arg("-I")
        .arg(runtime_dir.join("include"))
        .arg("-I")
        .arg(runtime_dir.join("src"))
        .arg("-c")
        .arg(&source)
        .arg("-o")
        .arg(&temp)
        .output()
        .map_err(|e| format!("{}: cannot run: {e}", clang.display()))?;
    if !output.status.success() {
        let _ = fs::remove_file(&temp);
        return Err(format!(
            "compiling the {name} runtime for target flags [{}] failed:\n{}",
            target_flags.join(" "),
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    // The checksum first, then the object: a reader that sees the new checksum with the old
    // object finds them different and compiles again, never trusts a wrong pair.
    let sum = content_sum(&temp).ok_or_else(|| format!("{}: cannot read back", temp.display()))?;
    let sum_temp = sum_path(&temp);
    fs::write(&sum_temp, format!("{sum}\n")).map_err(|e| format!("{}: {e}", sum_temp.display()))?;
    fs::rename(&sum_temp, sum_path(&object))
        .map_err(|e| format!("{}: {e}", sum_path(&object).display()))?;
    fs::rename(&temp, &object).map_err(|e| format!("{}: {e}", object.display()))?;
    Ok(Some(object))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_key_covers_the_parts_in_subfolders() {
        let dir = std::env::temp_dir().join(format!("hookcc-runtime-key-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("src/trace")).unwrap();
        fs::create_dir_all(dir.join("include/hookcc")).unwrap();
        fs::write(dir.join("src/trace.c"), "#include \"trace/hooks.h\"\n").unwrap();
        fs::write(dir.join("src/trace/hooks.h"), "int hooks;\n").unwrap();
        fs::write(dir.join("include/hookcc/trace.h"), "void f(void);\n").unwrap();
        let key = |dir: &Path| sources_key(dir).unwrap().hex();
        let before = key(&dir);
        assert_eq!(before, key(&dir), "the same tree, the same key");
        // An edited part must not reuse the runtime compiled from the old one.
        fs::write(dir.join("src/trace/hooks.h"), "int hooks2;\n").unwrap();
        let edited = key(&dir);
        assert_ne!(before, edited);
        // Nor a part moved between folders, or a new one.
        fs::rename(dir.join("src/trace/hooks.h"), dir.join("src/hooks.h")).unwrap();
        assert_ne!(edited, key(&dir));
        fs::write(dir.join("src/trace/new.h"), "").unwrap();
        let added = key(&dir);
        fs::write(dir.join("include/hookcc/trace.h"), "void g(void);\n").unwrap();
        assert_ne!(added, key(&dir), "the public headers count too");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn freestanding_runtime_is_not_position_independent() {
        let linux = ["--target=aarch64-linux-gnu".to_string()];
        let hosted = runtime_cflags(&linux);
        assert!(hosted.contains(&"-fPIC") && !hosted.contains(&"-ffunction-sections"));
        let arm926 = [
            "--target=armv5te-none-eabi".to_string(),
            "-ffreestanding".to_string(),
        ];
        let bare = runtime_cflags(&arm926);
        assert!(!bare.contains(&"-fPIC"), "{bare:?}");
        assert!(bare.contains(&"-ffunction-sections"), "{bare:?}");
        assert_eq!(bare.last(), Some(&"-ffreestanding"));
    }
}
