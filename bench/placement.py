#!/usr/bin/env python3
"""Hook placement measured: SQLite, zstd and Lua built with clang-19 (untraced) and with
`hookcc --trace` in both placements (`--hook-placement=source`, `--hook-placement=after-inlining`),
at -O0 and -O2; each run timed, its trace's calls and bytes counted, and `main`'s corrected
inclusive time (hookprof report) set beside the untraced run's. docs/performance.md ("Hook
placement") has the figures and the defaults chosen from them.

    python3 bench/placement.py            # about ten minutes on two cores
    python3 bench/placement.py --reps 5

Sources come from crates.io through cargo, as bench.py fetches Lua and SQLite (lua-src,
libsqlite3-sys's bundled amalgamation, zstd-sys's bundled lib/); the drivers are bench/lua_main.c
(workload.lua), bench/sqlite_main.c and bench/zstd_main.c. Traces are written to a temporary
directory (/dev/shm when it has room) with HOOKCC_MAX_BYTES set, and deleted after each run.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import (  # noqa: E402
    BENCH,
    RESULTS,
    ROOT,
    default_tmpdir,
    ensure_hookcc,
    first_lines,
    log,
    median,
    read_hktrace_header,
    run_measured,
)

ZSTD_SYS_VERSION = "2.0.16"
LUA_SRC_VERSION = "551.1.0"
SQLITE_SYS_VERSION = "0.39.1"
MAX_BYTES = 3 << 30

BUILDS = {
    "plain": [],
    "source": ["--trace", "--hook-placement=source"],
    "after-inlining": ["--trace", "--hook-placement=after-inlining"],
}
LEVELS = ["-O0", "-O2"]


def fetch_sources(work: Path) -> dict:
    proj = work / "fetch"
    (proj / "src").mkdir(parents=True, exist_ok=True)
    (proj / "src" / "lib.rs").write_text("")
    (proj / "Cargo.toml").write_text(
        "[package]\nname = \"hookcc-placement-sources\"\nversion = \"0.0.0\"\nedition = \"2021\"\n"
        "publish = false\n\n[dependencies]\n"
        f"lua-src = \"={LUA_SRC_VERSION}\"\n"
        f"libsqlite3-sys = {{ version = \"={SQLITE_SYS_VERSION}\", default-features = false }}\n"
        f"zstd-sys = {{ version = \"={ZSTD_SYS_VERSION}\", default-features = false }}\n\n"
        "[workspace]\n")
    r = subprocess.run(["cargo", "fetch", "--quiet"], cwd=proj, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("cargo fetch failed: " + first_lines(r.stderr))
    meta = subprocess.run(["cargo", "metadata", "--format-version", "1"], cwd=proj,
                          capture_output=True, text=True, check=True)
    found = {}
    for pkg in json.loads(meta.stdout)["packages"]:
        base = Path(pkg["manifest_path"]).parent
        if pkg["name"] == "lua-src":
            found["lua"] = sorted(base.glob("lua-5.4.*"))[-1]
        elif pkg["name"] == "libsqlite3-sys":
            found["sqlite"] = base / "sqlite3"
        elif pkg["name"] == "zstd-sys":
            found["zstd"] = base / "zstd" / "lib"
    return found


def workloads(src: dict, args) -> dict:
    """name -> (sources, flags, libraries, program arguments)."""
    lua, sqlite, zstd = src["lua"], src["sqlite"], src["zstd"]
    lua_srcs = sorted(p for p in lua.glob("*.c") if p.name not in ("lua.c", "luac.c", "onelua.c"))
    zstd_srcs = sorted(p for d in ("common", "compress", "decompress") for p in (zstd / d).glob("*.c"))
    return {
        "sqlite": ([sqlite / "sqlite3.c", BENCH / "sqlite_main.c"],
                   [f"-I{sqlite}", "-DSQLITE_THREADSAFE=0", "-DSQLITE_OMIT_LOAD_EXTENSION", "-w"],
                   ["-lm"], [str(args.sqlite_rows)]),
        "zstd": (zstd_srcs + [BENCH / "zstd_main.c"],
                 [f"-I{zstd}", f"-I{zstd / 'common'}", "-DZSTD_DISABLE_ASM", "-w"], [],
                 [str(args.zstd_mib), "3"]),
        "lua": (lua_srcs + [BENCH / "lua_main.c"],
                [f"-I{lua}", f"-I{BENCH}", "-DLUA_USE_LINUX", "-w"], ["-lm", "-ldl"],
                [str(BENCH / "workload.lua"), str(args.lua_rounds)]),
    }


def build(hookcc: str, name: str, wl, build_key: str, level: str, out: Path, env: dict) -> Path:
    sources, flags, libs, _ = wl
    out.mkdir(parents=True, exist_ok=True)
    cc = ["clang-19"] if build_key == "plain" else [hookcc] + BUILDS[build_key]
    objs = []

    def compile_one(s: Path):
        obj = out / (s.stem + ".o")
        r = subprocess.run(cc + [level, "-g"] + flags + ["-c", str(s), "-o", str(obj)],
                           capture_output=True, text=True, env=env)
        if r.returncode != 0:
            raise RuntimeError(f"{name} {build_key} {level}: {s.name}: {first_lines(r.stderr)}")
        return obj

    with ThreadPoolExecutor(max_workers=2) as pool:
        objs = list(pool.map(compile_one, sources))
    exe = out / name
    r = subprocess.run(cc + [level] + [str(o) for o in objs] + libs + ["-o", str(exe)],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"{name} {build_key} {level}: link: {first_lines(r.stderr)}")
    return exe


def main_inclusive_ms(hookprof: str, trace: Path) -> float | None:
    r = subprocess.run([hookprof, "report", str(trace), "--format=csv"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        return None
    for row in csv.DictReader(io.StringIO(r.stdout)):
        if row["function"] == "main":
            return float(row["inclusive_ns"]) / 1e6
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=3, help="timed runs per build (median)")
    ap.add_argument("--sqlite-rows", type=int, default=20000)
    ap.add_argument("--zstd-mib", type=int, default=4)
    ap.add_argument("--lua-rounds", type=int, default=2)
    ap.add_argument("--only", help="comma-separated workloads")
    args = ap.parse_args()

    hk = ensure_hookcc(False)
    if not hk["hookcc"]:
        log("hookcc is not built: run cargo build --workspace first")
        return 1
    work = Path(tempfile.mkdtemp(prefix="hookcc-placement-", dir=default_tmpdir()))
    env = dict(os.environ, HOOKCC_CACHE_DIR=str(work / "cache"))
    env.pop("HOOKCC_TRACE", None)
    results = {"hookcc": hk["hookcc"], "hookprof": hk["hookprof"], "reps": args.reps,
               "args": vars(args), "runs": {}}
    try:
        src = fetch_sources(work)
        wls = workloads(src, args)
        if args.only:
            wls = {k: v for k, v in wls.items() if k in args.only.split(",")}
        for name, wl in wls.items():
            for level in LEVELS:
                exes = {}
                for key in BUILDS:
                    log(f"build {name} {level} {key}")
                    exes[key] = build(hk["hookcc"], name, wl, key, level,
                                      work / f"{name}{level}-{key}", env)
                reference = None
                for key, exe in exes.items():
                    times, rec = [], {}
                    for rep in range(args.reps):
                        d = Path(tempfile.mkdtemp(prefix="run-", dir=work))
                        trace = d / "t.hktrace"
                        run_env = dict(env, HOOKCC_OUTPUT=str(trace),
                                       HOOKCC_MAX_BYTES=str(MAX_BYTES))
                        r = run_measured([str(exe)] + wl[3], d, run_env, 1800)
                        if r.rc != 0:
                            raise RuntimeError(f"{name} {level} {key}: exit {r.rc}: "
                                               f"{first_lines(r.stderr)}")
                        reference = reference or r.stdout
                        if r.stdout != reference:
                            raise RuntimeError(f"{name} {level} {key}: output differs")
                        times.append(r.wall)
                        if key != "plain" and rep == args.reps - 1:
                            hdr = read_hktrace_header(trace) or {}
                            rec = {"calls": hdr.get("records", 0) // 2,
                                   "lost": hdr.get("lost"),
                                   "bytes": trace.stat().st_size if trace.exists() else None,
                                   "main_ms": main_inclusive_ms(hk["hookprof"], trace)}
                        shutil.rmtree(d, ignore_errors=True)
                    rec["wall_ms"] = median(times) * 1000
                    results["runs"][f"{name} {level} {key}"] = rec
                    log(f"{name} {level} {key}: {rec}")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    lines = [f"{'workload':<8} {'level':<5} {'placement':<15} {'wall ms':>9} {'slowdown':>9} "
             f"{'calls':>12} {'bytes':>14} {'main ms':>9} {'main err':>9}"]
    for key, rec in results["runs"].items():
        name, level, build_key = key.split()
        if build_key == "plain":
            continue
        plain = results["runs"][f"{name} {level} plain"]["wall_ms"]
        rec["slowdown"] = rec["wall_ms"] / plain
        main_ms = rec.get("main_ms")
        rec["main_error"] = (main_ms / plain - 1) if main_ms else None

        def f(x, spec):
            return format(x, spec) if isinstance(x, (int, float)) else "—"
        lines.append(f"{name:<8} {level:<5} {build_key:<15} {rec['wall_ms']:9.1f} "
                     f"{rec['slowdown']:9.2f} {f(rec.get('calls'), '12,')} "
                     f"{f(rec.get('bytes'), '14,')} {f(main_ms, '9.1f')} "
                     f"{f(rec['main_error'] and rec['main_error'] * 100, '+8.0f')}%"
                     f"  (untraced {plain:.1f} ms)")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / "placement-latest.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print("\n".join(lines))
    log(f"results in {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
