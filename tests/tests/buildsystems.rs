//! hookcc in the build systems people use (docs/build-systems.md): tests/buildsystems — a C
//! shared library and a C++ program over it — built with CMake, Meson + ninja and plain
//! `make -j` (several links at once from an empty runtime cache), traced, and every count
//! checked; compiler caches (ccache, sccache) never handing back an object built with other
//! hook settings; and distcc compiling on a server the objects hookcc compiles here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use hookcc_tests::*;

/// tests/buildsystems/src's counts by construction (see main.cpp).
const SHAPES: &[(&str, u64)] = &[
    ("main", 1),
    ("(anonymous namespace)::scaled(int)", 3),
    ("(anonymous namespace)::Report::print(int, int) const", 1),
    ("shapes_total", 1),
    ("shapes_area", 13),
    ("square", 13),
];

fn have(tool: &str, package: &str) -> bool {
    have_tool(tool, &["--version"], package)
}

/// A copy of tests/buildsystems in a fresh directory, and the environment its builds run in:
/// this build's hookcc first on PATH, a runtime cache of its own, no hook settings inherited.
fn project(dir: &Path) -> PathBuf {
    copy_cargo_project(&workspace_root().join("tests/buildsystems"), dir)
}

fn with_hookcc<'a>(cmd: &'a mut Command, dir: &Path) -> &'a mut Command {
    let path = format!(
        "{}:{}",
        target_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // Run in the test's directory: what a build system runs there (Meson's compiler sanity
    // checks, built traced, write their traces to the current directory) stays out of the
    // source tree.
    cmd.env("PATH", path)
        .env("HOOKCC_CACHE_DIR", dir.join("hookcc-cache"))
        .current_dir(dir);
    for var in [
        "HOOKCC_TRACE",
        "NITRO_PROFILE",
        "NITRO_PROFILE_TYPE",
        "CC",
        "CXX",
        "CFLAGS",
        "CXXFLAGS",
        "LDFLAGS",
        "MAKEFLAGS",
        "HOOKCC_LAUNCHER",
        "CCACHE_DIR",
        "SCCACHE_DIR",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Runs `program`, checks its output, and compares its trace's counts with [`SHAPES`].
fn check_traced(program: &Path, what: &str) {
    let dir = program.parent().unwrap();
    let (trace, stdout) = run_traced(dir, program, &[]);
    assert_eq!(stdout, "385 14\n", "{what}");
    let counts = call_counts(&trace, &[]);
    let expected: BTreeMap<String, u64> = SHAPES.iter().map(|(f, n)| (f.to_string(), *n)).collect();
    assert_eq!(counts, expected, "{what}");
}

#[test]
fn cmake_builds_a_shared_library_and_a_cpp_program_traced_through_one_runtime() {
    if !have("cmake", "cmake") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let source = project(dir.path());
    let build = dir.path().join("build");
    // --trace in the flags: CMake's compiler checks (try_compile) build with it too and pass.
    let configure = run_ok(
        with_hookcc(&mut Command::new("cmake"), dir.path())
            .arg("-S")
            .arg(&source)
            .arg("-B")
            .arg(&build)
            .args([
                "-DCMAKE_C_COMPILER=hookcc",
                "-DCMAKE_CXX_COMPILER=hookcc++",
                "-DCMAKE_C_FLAGS=--trace --hook-placement=source",
                "-DCMAKE_CXX_FLAGS=--trace --hook-placement=source",
                "-DCMAKE_BUILD_TYPE=RelWithDebInfo",
            ]),
    );
    let text = String::from_utf8_lossy(&configure.stdout);
    assert!(
        text.contains("The C compiler identification is Clang 19")
            && text.contains("The CXX compiler identification is Clang 19"),
        "CMake should see clang-19 through hookcc:\n{text}"
    );
    // CMake's ABI probe (built with --trace in the flags) must not record what hookcc adds as
    // the compiler's own directories and libraries.
    for (file, lang) in [
        ("CMakeCCompiler.cmake", "C"),
        ("CMakeCXXCompiler.cmake", "CXX"),
    ] {
        let found = std::fs::read_dir(build.join("CMakeFiles"))
            .unwrap()
            .map(|e| e.unwrap().path().join(file))
            .find(|p| p.is_file())
            .unwrap_or_else(|| panic!("no {file}"));
        let text = std::fs::read_to_string(&found).unwrap();
        for line in text
            .lines()
            .filter(|l| l.contains(&format!("CMAKE_{lang}_IMPLICIT_")))
        {
            assert!(
                !line.contains("runtime/include"),
                "{}: {line}",
                found.display()
            );
            assert!(!line.contains("pthread"), "{}: {line}", found.display());
        }
    }
    run_ok(
        with_hookcc(&mut Command::new("cmake"), dir.path())
            .args(["--build"])
            .arg(&build),
    );
    check_traced(&build.join("app"), "cmake");
}

#[test]
fn meson_and_ninja_build_it_traced() {
    if !have("meson", "meson") || !have("ninja", "ninja-build") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let source = project(dir.path());
    let build = dir.path().join("build");
    let setup = run_ok(
        with_hookcc(&mut Command::new("meson"), dir.path())
            .arg("setup")
            // Meson links shared libraries with --no-undefined by default; an instrumented one
            // leaves the hooks to the executable's runtime (docs/build-systems.md).
            .arg("-Db_lundef=false")
            .arg(&build)
            .arg(&source)
            .env("CC", "hookcc")
            .env("CXX", "hookcc++")
            // Meson would take clang's llvm-ar, Debian's default LLVM's (not setup.sh's).
            .env("AR", "ar")
            .env("HOOKCC_TRACE", "1"),
    );
    // Meson identifies a compiler by its `--version` text: hookcc's own line, after clang's,
    // leaves it clang 19 (issue 34).
    let text = String::from_utf8_lossy(&setup.stdout);
    assert!(
        text.contains("C compiler for the host machine: hookcc (clang 19.")
            && text.contains("C++ compiler for the host machine: hookcc++ (clang 19."),
        "Meson should see clang-19 through hookcc:\n{text}"
    );
    run_ok(
        with_hookcc(&mut Command::new("ninja"), dir.path())
            .arg("-C")
            .arg(&build)
            .env("HOOKCC_TRACE", "1"),
    );
    check_traced(&build.join("app"), "meson");
}

#[test]
fn make_j_links_four_programs_at_once_from_an_empty_runtime_cache() {
    // Each link needs the trace runtime; from an empty cache the four compile it at the same
    // time: each into a private file renamed into place, so all four get a whole object and
    // the cache ends with exactly one.
    let dir = tempfile::tempdir().unwrap();
    let source = project(dir.path());
    let cache = dir.path().join("hookcc-cache");
    run_ok(
        with_hookcc(&mut Command::new("make"), dir.path())
            .args([
                "-s",
                "-j4",
                "CC=hookcc",
                "CXX=hookcc++",
                "CFLAGS=-O1 --trace --hook-placement=source",
            ])
            .current_dir(&source),
    );
    for app in ["app1", "app2", "app3", "app4"] {
        check_traced(&source.join(app), &format!("make -j: {app}"));
    }
    let cached: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.contains("runtime-trace"))
        .collect();
    // The object and its checksum (docs/reliability.md); no temporary left behind.
    let objects: Vec<&String> = cached.iter().filter(|n| n.ends_with(".o")).collect();
    assert_eq!(objects.len(), 1, "one runtime object: {cached:?}");
    assert!(
        cached.iter().all(|n| !n.starts_with('.')),
        "no temporary files left: {cached:?}"
    );
}

/// Whether the object file calls the native trace's hooks.
fn calls_hooks(object: &Path) -> bool {
    let out = run_ok(Command::new("llvm-nm-19").arg("-u").arg(object));
    String::from_utf8_lossy(&out.stdout).contains("__hookcc_enter")
}

/// A command run in `dir` with [`with_hookcc`]'s environment and `vars`.
fn command(program: &str, dir: &Path, vars: &[(&str, &Path)]) -> Command {
    let mut cmd = Command::new(program);
    with_hookcc(&mut cmd, dir).current_dir(dir);
    for (name, value) in vars {
        cmd.env(name, value);
    }
    cmd
}

/// `ccache -s`'s "Hits:" and "Misses:" counts (ccache 4.7).
fn ccache_hits_misses(mut ccache: Command) -> (u64, u64) {
    let out = run_ok(ccache.arg("-s"));
    let text = String::from_utf8_lossy(&out.stdout);
    let number = |label: &str| -> u64 {
        text.lines()
            .find(|l| l.trim_start().starts_with(label))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no `{label}` in ccache -s:\n{text}"))
    };
    (number("Hits:"), number("Misses:"))
}

#[test]
fn ccache_never_hands_back_an_object_built_with_other_hook_settings() {
    if !have("ccache", "ccache") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let source = project(dir.path()).join("src/shapes.c");
    let ccache_dir = dir.path().join("ccache");
    let vars = [("CCACHE_DIR", ccache_dir.as_path())];
    let env = |program: &str| command(program, dir.path(), &vars);
    // Both ways of putting ccache in: hookcc running it, and ccache running hookcc with
    // hookcc's key as the compiler check.
    type Way<'a> = (&'static str, Box<dyn Fn(&Path, bool) -> Command + 'a>);
    let ways: [Way<'_>; 2] = [
        (
            "HOOKCC_LAUNCHER=ccache",
            Box::new(|out: &Path, trace: bool| {
                let mut cmd = env("hookcc");
                cmd.env("HOOKCC_LAUNCHER", "ccache");
                if trace {
                    cmd.env("HOOKCC_TRACE", "1");
                }
                cmd.args(["-O2", "-c"]).arg(&source).arg("-o").arg(out);
                cmd
            }),
        ),
        (
            "CC=\"ccache hookcc\"",
            Box::new(|out: &Path, trace: bool| {
                let mut cmd = env("ccache");
                cmd.env("CCACHE_COMPILERCHECK", "%compiler% --print-cache-key");
                if trace {
                    cmd.env("HOOKCC_TRACE", "1");
                }
                cmd.args(["hookcc", "-O2", "-c"])
                    .arg(&source)
                    .arg("-o")
                    .arg(out);
                cmd
            }),
        ),
    ];
    for (way, compile) in &ways {
        run_ok(env("ccache").arg("-C"));
        run_ok(env("ccache").arg("-z"));
        // Traced, then plain, then traced again, then plain again: each object as its setting.
        for (round, trace) in [true, false, true, false].into_iter().enumerate() {
            let object = dir.path().join(format!("o{round}.o"));
            run_ok(&mut compile(&object, trace));
            assert_eq!(
                calls_hooks(&object),
                trace,
                "{way}: round {round} (trace {trace})"
            );
        }
        // Two misses (one per setting), then two hits.
        assert_eq!(ccache_hits_misses(env("ccache")), (2, 2), "{way}");
    }
    // And CC="ccache hookcc" without the compiler check: hookcc refuses a hook setting from
    // the environment under ccache, ccache takes that for a preprocessor error and runs
    // hookcc itself, uncached: slower, but every object is still what its setting asks for.
    run_ok(env("ccache").arg("-C"));
    for (round, trace) in [true, false, true, false].into_iter().enumerate() {
        let object = dir.path().join(format!("unkeyed{round}.o"));
        let mut cmd = env("ccache");
        if trace {
            cmd.env("HOOKCC_TRACE", "1");
        }
        run_ok(
            cmd.args(["hookcc", "-O2", "-c"])
                .arg(&source)
                .arg("-o")
                .arg(&object),
        );
        assert_eq!(
            calls_hooks(&object),
            trace,
            "unkeyed: round {round} (trace {trace})"
        );
    }
}

#[test]
fn sccache_through_hookcc_never_hands_back_an_object_built_with_other_hook_settings() {
    if !have("sccache", "sccache") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let source = project(dir.path()).join("src/shapes.c");
    let sccache_dir = dir.path().join("sccache");
    // A server of this test's own (its port), stopped at the end.
    let port = free_port().to_string();
    let vars = [("SCCACHE_DIR", sccache_dir.as_path())];
    let env = |program: &str| {
        let mut cmd = command(program, dir.path(), &vars);
        cmd.env("SCCACHE_SERVER_PORT", &port);
        cmd
    };
    // The server first (`--show-stats` starts it), given three tries: on a loaded machine its
    // start can pass the 10 s sccache waits for it ("Timed out waiting for server startup"), and
    // it is up by the next try. What is under test is hookcc's key, not sccache's start-up.
    let started = (0..3).any(|_| {
        env("sccache")
            .arg("--show-stats")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    assert!(started, "sccache's server did not start in three tries");
    for (round, trace) in [true, false, true, false].into_iter().enumerate() {
        let object = dir.path().join(format!("o{round}.o"));
        let mut cmd = env("hookcc");
        cmd.env("HOOKCC_LAUNCHER", "sccache");
        if trace {
            cmd.env("HOOKCC_TRACE", "1");
        }
        run_ok(cmd.args(["-O2", "-c"]).arg(&source).arg("-o").arg(&object));
        assert_eq!(calls_hooks(&object), trace, "round {round} (trace {trace})");
    }
    let stats = run_ok(env("sccache").arg("--show-stats"));
    let _ = env("sccache").arg("--stop-server").output();
    let text = String::from_utf8_lossy(&stats.stdout);
    let number = |label: &str| -> u64 {
        text.lines()
            .find(|l| l.starts_with(label))
            .and_then(|l| l.split_whitespace().last())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no `{label}` in sccache --show-stats:\n{text}"))
    };
    assert_eq!(
        (number("Cache hits"), number("Cache misses")),
        (2, 2),
        "two misses (one per setting), then two hits:\n{text}"
    );
}

/// The directory cargo unpacked crate `name` (`version`, exact) into: a throwaway project
/// depending on it, `cargo fetch`, and `cargo metadata` to say where (as bench/bench.py fetches
/// Lua).
fn fetch_crate(dir: &Path, name: &str, version: &str) -> PathBuf {
    let project = dir.join("fetch");
    std::fs::create_dir_all(project.join("src")).unwrap();
    std::fs::write(project.join("src/lib.rs"), "").unwrap();
    std::fs::write(
        project.join("Cargo.toml"),
        format!(
            "[package]\nname = \"fetch\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
             [dependencies]\n{name} = \"={version}\"\n\n[workspace]\n"
        ),
    )
    .unwrap();
    run_ok(cargo().arg("fetch").arg("--quiet").current_dir(&project));
    let out = run_ok(
        cargo()
            .args(["metadata", "--format-version=1"])
            .current_dir(&project),
    );
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let manifest = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .and_then(|p| p["manifest_path"].as_str())
        .unwrap_or_else(|| panic!("{name} not in cargo metadata"));
    Path::new(manifest).parent().unwrap().to_path_buf()
}

#[test]
fn autotools_libffi_configured_and_built_by_hookcc_traced_into_its_own_functions() {
    // libffi 3.4.7's bundled sources (the libffi-sys crate): `./configure CC=hookcc` and
    // `make` with HOOKCC_TRACE=1 (configure's test programs build and run with hooks; their
    // traces go to /dev/null), then a program calling ffi_call: libffi's functions are in the
    // trace with the program's, and add() is reached through libffi's assembly.
    let dir = tempfile::tempdir().unwrap();
    let sources = fetch_crate(dir.path(), "libffi-sys", "3.3.3").join("libffi");
    let build = dir.path().join("build");
    std::fs::create_dir_all(&build).unwrap();
    let env = |cmd: &mut Command| {
        with_hookcc(cmd, dir.path())
            .env("HOOKCC_TRACE", "1")
            .env("HOOKCC_OUTPUT", "/dev/null")
            .current_dir(&build);
    };
    let mut configure = Command::new("sh");
    env(&mut configure);
    // CXX too: configure looks for a C++ compiler and would find g++ (not in setup.sh).
    run_ok(configure.arg(sources.join("configure")).args([
        "CC=hookcc",
        "CXX=hookcc++",
        "--disable-shared",
        "--disable-docs",
        "--disable-multi-os-directory",
    ]));
    let mut make = Command::new("make");
    env(&mut make);
    run_ok(make.args(["-s", "-j2"]));
    let library = build.join(".libs/libffi.a");
    assert!(library.is_file(), "{} missing", library.display());

    let program = dir.path().join("ffi_add");
    run_ok(
        with_hookcc(&mut Command::new("hookcc"), dir.path())
            .args(["--trace", "-O2", "-I"])
            .arg(build.join("include"))
            .arg(workspace_root().join("tests/buildsystems/ffi_add.c"))
            .arg(&library)
            .arg("-o")
            .arg(&program),
    );
    let (trace, stdout) = run_traced(dir.path(), &program, &[]);
    assert_eq!(stdout, "145\n");
    let counts = call_counts(&trace, &[]);
    for (function, calls) in [
        ("main", 1),
        ("add", 10),
        ("ffi_prep_cif", 1),
        ("ffi_call", 10),
    ] {
        assert_eq!(
            counts.get(function),
            Some(&calls),
            "calls of {function}: {counts:#?}"
        );
    }
    assert!(
        counts.len() > 5,
        "libffi's internal functions should be traced too: {counts:#?}"
    );
}

#[test]
fn cmake_builds_an_flto_static_library_with_cc_hookcc_and_nothing_else() {
    if !have("cmake", "cmake") {
        return;
    }
    // CMake takes `llvm-ar` for a clang from the compiler's directory, else from PATH, where
    // Debian 12's is LLVM 14's, which cannot read clang-19's bitcode: `CC=hookcc cmake
    // -DCMAKE_C_FLAGS=-flto` failed at `libutil.a` where `CC=clang-19` works (issue 37 item
    // 13). hookcc's directory has `llvm-ar` and `llvm-ranlib` (links to hookcc, which runs
    // clang-19's), and CMake finds them there first.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let source = d.join("src");
    std::fs::create_dir(&source).unwrap();
    std::fs::write(
        source.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.13)\nproject(lto C)\n\
         add_library(util STATIC util.c)\nadd_executable(app main.c)\n\
         target_link_libraries(app util)\n",
    )
    .unwrap();
    std::fs::write(
        source.join("util.c"),
        "int twice(int x) { return 2 * x; }\n",
    )
    .unwrap();
    std::fs::write(
        source.join("main.c"),
        "#include <stdio.h>\nint twice(int);\n\
         int main(void) { int s = 0; for (int i = 0; i < 5; ++i) s += twice(i); printf(\"%d\\n\", s); return 0; }\n",
    )
    .unwrap();
    let build = d.join("build");
    run_ok(
        with_hookcc(&mut Command::new("cmake"), d)
            .env("CC", "hookcc")
            .arg("-S")
            .arg(&source)
            .arg("-B")
            .arg(&build)
            .arg("-DCMAKE_C_FLAGS=--trace -flto"),
    );
    run_ok(
        with_hookcc(&mut Command::new("cmake"), d)
            .arg("--build")
            .arg(&build),
    );
    // The archiver CMake found is hookcc's.
    let cache = std::fs::read_to_string(build.join("CMakeCache.txt")).unwrap();
    for (tool, name) in [("CMAKE_AR", "llvm-ar"), ("CMAKE_RANLIB", "llvm-ranlib")] {
        let expected = format!("{tool}:FILEPATH={}", tool_path(name).display());
        assert!(
            cache.lines().any(|l| l == expected),
            "{expected} not in CMakeCache.txt"
        );
    }
    let (trace, stdout) = run_traced(&build, &build.join("app"), &[]);
    assert_eq!(stdout.trim(), "20");
    let counts = call_counts(&trace, &[]);
    assert_eq!(counts.get("twice"), Some(&5), "{counts:?}");
}

/// `target/<profile>/NAME`, as the build tree has it (not resolved: CMake keeps the link).
fn tool_path(name: &str) -> std::path::PathBuf {
    target_dir().join(name)
}

/// A distcc server of the test's own on loopback, in a process group of its own (it forks
/// its workers), stopped with them when dropped.
struct Distccd(std::process::Child);

impl Drop for Distccd {
    fn drop(&mut self) {
        let group = format!("-{}", self.0.id());
        let _ = Command::new("kill").args(["-TERM", "--", &group]).status();
        let _ = self.0.wait();
    }
}

/// `distcc hookcc` (CC="distcc hookcc"): a multi-file C program compiled on a distcc server —
/// a daemon of the test's own on loopback, as the unprivileged user distccd switches to, with
/// hookcc on its PATH — gives the same objects, byte for byte, as hookcc on this machine: the
/// hook options travel on the command line, the server's hookcc finds its own plugins, the
/// pragmas survive the local preprocessing (NO_HOOKS in static_one.c). With `-g`, DWARF 4 and
/// `-fdebug-compilation-dir=.` (DWARF 5 line tables carry the source's MD5, which a server
/// that sees only the preprocessed file cannot compute: plain clang under distcc differs the
/// same way). The linked program's trace has the counts of the local build's.
#[test]
fn distcc_compiles_instrumented_objects_equal_to_local_ones() {
    if !have("distcc", "distcc") || !have_tool("distccd", &["--version"], "distcc") {
        return;
    }
    // distccd drops root for `nobody`, which must reach hookcc, its plugins and headers (the
    // target directory and the checkout; scripts/test.sh --fresh makes its directory
    // enterable), its log and hookcc's runtime cache.
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let closed = [target_dir(), workspace_root()]
        .into_iter()
        .find_map(|dir| {
            dir.ancestors()
                .find(|d| std::fs::metadata(d).is_ok_and(|m| m.mode() & 0o001 == 0))
                .map(Path::to_path_buf)
        });
    if let Some(closed) = closed {
        assert!(
            !in_ci(),
            "{}: others cannot enter it, so distccd's `nobody` cannot run this build's hookcc",
            closed.display()
        );
        eprintln!(
            "skipping the distcc test: {} is closed to others (distccd compiles as nobody)",
            closed.display()
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let server_cache = dir.path().join("server-cache");
    std::fs::create_dir(&server_cache).unwrap();
    std::fs::set_permissions(&server_cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    let port = free_port().to_string();
    let log = std::fs::File::create(dir.path().join("distccd.log")).unwrap();
    // --enable-tcp-insecure: hookcc is not in the masquerade directory (/usr/lib/distcc) that
    // distccd accepts compilers from; a real server gets a symlink there (docs/build-systems.md).
    let mut daemon = Command::new("distccd");
    with_hookcc(&mut daemon, dir.path())
        .args([
            "--daemon",
            "--no-detach",
            "--listen",
            "127.0.0.1",
            "--port",
            &port,
        ])
        .args([
            "--allow",
            "127.0.0.1",
            "--jobs",
            "2",
            "--log-stderr",
            "--log-level",
            "info",
        ])
        .args(["--enable-tcp-insecure", "--user", "nobody"])
        .env("HOOKCC_CACHE_DIR", &server_cache)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(log);
    std::os::unix::process::CommandExt::process_group(&mut daemon, 0);
    let _server = Distccd(daemon.spawn().expect("distccd starts"));
    // Wait until it listens.
    let address = format!("127.0.0.1:{port}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while std::net::TcpStream::connect(&address).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "distccd did not listen on {address}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let client_state = dir.path().join("distcc-client");
    std::fs::create_dir(&client_state).unwrap();
    let sources = ["static_main.c", "static_one.c", "static_two.c"];
    for flags in [
        &["-O1"][..],
        &["-O1", "-gdwarf-4", "-fdebug-compilation-dir=."][..],
    ] {
        let mut objects = Vec::new();
        for source in sources {
            let stem = source.trim_end_matches(".c");
            let (remote, local) = (
                dir.path().join(format!("{stem}.remote.o")),
                dir.path().join(format!("{stem}.local.o")),
            );
            let compile = |launcher: Option<&str>, out: &Path| {
                let mut cmd = Command::new("timeout");
                with_hookcc(&mut cmd, dir.path())
                    .arg("120")
                    .args(launcher)
                    .args(["hookcc", "--trace", SOURCE_PLACEMENT])
                    .args(flags)
                    .arg("-c")
                    .arg(program_source(source))
                    .arg("-o")
                    .arg(out)
                    // Distributed or failed: no quiet local fallback.
                    .env("DISTCC_HOSTS", &address)
                    .env("DISTCC_FALLBACK", "0")
                    .env("DISTCC_BACKOFF_PERIOD", "0")
                    .env("DISTCC_DIR", &client_state);
                let out = run_ok(&mut cmd);
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(
                    stderr.is_empty(),
                    "{launcher:?} {source} {flags:?}: {stderr}"
                );
            };
            compile(Some("distcc"), &remote);
            compile(None, &local);
            assert!(
                std::fs::read(&remote).unwrap() == std::fs::read(&local).unwrap(),
                "{source} {flags:?}: the server's object differs from the local one"
            );
            assert!(calls_hooks(&remote), "{source}: no hooks");
            objects.push(remote);
        }
        let program = dir.path().join("static_prog");
        run_ok(
            command("hookcc", dir.path(), &[])
                .arg("--trace")
                .args(&objects)
                .arg("-o")
                .arg(&program),
        );
        let (trace, _) = run_traced(dir.path(), &program, &[]);
        assert!(!call_counts(&trace, &[]).is_empty());
    }
    // A setting in the environment would not reach the server: refused, not a plain object.
    let mut cmd = Command::new("timeout");
    with_hookcc(&mut cmd, dir.path())
        .args(["120", "distcc", "hookcc", "-O1", "-c"])
        .arg(program_source("static_one.c"))
        .arg("-o")
        .arg(dir.path().join("env.o"))
        .env("HOOKCC_TRACE", "1")
        .env("DISTCC_HOSTS", &address)
        .env("DISTCC_FALLBACK", "0")
        .env("DISTCC_BACKOFF_PERIOD", "0")
        .env("DISTCC_DIR", &client_state);
    let stderr = run_fails(&mut cmd, "running under distcc");
    assert!(stderr.contains("HOOKCC_TRACE=1"), "{stderr}");
    let log = std::fs::read_to_string(dir.path().join("distccd.log")).unwrap();
    assert_eq!(
        log.matches("COMPILE_OK").count(),
        2 * sources.len(),
        "every compile ran on the server:\n{log}"
    );
}
