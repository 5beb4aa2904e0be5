#!/usr/bin/env python3
"""hookcc's benchmark: one command builds every variant, runs every workload, prints a table and
writes bench/results/<date>.json. docs/performance.md says how to read it.

    python3 bench/bench.py --quick      # a few minutes
    python3 bench/bench.py              # the full run

Workloads
  micro      bench/micro.c: leaf() called N times, N + 2 instrumented calls (main, run, leafs)
  lua        the Lua 5.4 interpreter from the crates.io package lua-src (fetched with cargo),
             driven by bench/lua_main.c, running bench/workload.lua
  sqlite3.c  from libsqlite3-sys's bundled sources: compile time and code size only

Measures
  Ir/call    instructions per call pair (entry + exit, the two calls included), from callgrind
             collecting inside run() only (start-up and exit-time dumps are not per-call costs):
             ((V(N2) - V(N1)) - (B(N2) - B(N1))) / (N2 - N1), V the variant, B the baseline of
             the same compiler, N1 < N2 two call counts, so start-up and exit costs cancel
  ns/call    (median loop CPU time of V - median of B) / calls, the loop timed inside micro
  micro x    whole-process wall time of micro, median of V / median of B
  lua x      the same for the Lua interpreter
  B/call     trace bytes per call pair (files written, or bytes of records kept in memory)

Nothing here fails on a goal miss, a missing tool or a failed variant: each is reported.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import datetime
import glob
import hashlib
import json
import os
import platform
import random
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"

# Pinned so that every machine measures the same sources. lua-src 551.1.0 ships Lua 5.4.9.
LUA_SRC_VERSION = "551.1.0"
SQLITE_SYS_VERSION = "0.39.1"

# Debian package -> what needs it. Installed when missing (apt-get, sudo when not root).
APT_PACKAGES = {
    "clang-19": "the baseline and every clang variant",
    "gcc": "the gcc variants (empty hooks, gprof, uftrace)",
    "valgrind": "instructions per call (callgrind)",
    "uftrace": "uftrace record / report",
    "libclang-rt-19-dev": "the XRay runtime",
    "llvm-19": "llvm-xray account",
    "binutils": "gprof, readelf",
}


# ------------------------------------------------------------------------------------------
# Scale of a run

@dataclass
class Scale:
    name: str
    cg_calls: tuple  # (N1, N2) for the callgrind runs of micro
    wall_calls: int  # N of the timed micro runs
    reps: int  # interleaved repetitions, median taken
    lua_rounds: int  # argument of workload.lua
    compile_reps: int  # sqlite3.c compiles per compiler
    post_calls: int  # micro calls behind the large trace for the post tool
    cmp_calls: int  # micro calls behind the traces compared with llvm-xray / uftrace
    ti_lua_records: int  # TI buffer of the Lua driver (records, power of two)


QUICK = Scale("quick", (100_000, 600_000), 3_000_000, 5, 15, 1, 10_000_000, 1_000_000, 1 << 22)
FULL = Scale("full", (1_000_000, 5_000_000), 10_000_000, 7, 60, 3, 50_000_000, 10_000_000, 1 << 24)


def next_pow2(n: int) -> int:
    p = 1
    while p < n:
        p <<= 1
    return p


# ------------------------------------------------------------------------------------------
# Small helpers

def log(msg: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def first_lines(text: str, n: int = 3) -> str:
    lines = [l.strip() for l in text.strip().splitlines() if l.strip()]
    # Prefer lines that say "error".
    errs = [l for l in lines if "error" in l.lower()]
    pick = (errs or lines)[:n]
    return " | ".join(pick)[:300]


def tree_bytes(path: Path) -> int:
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


def glob_bytes(directory: Path, patterns: list) -> int:
    total = 0
    seen = set()
    for pat in patterns:
        for p in glob.glob(str(directory / pat), recursive=True):
            if p in seen:
                continue
            seen.add(p)
            if os.path.isdir(p):
                total += tree_bytes(Path(p))
            elif os.path.isfile(p):
                total += os.path.getsize(p)
    return total


def median(xs: list) -> Optional[float]:
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


@dataclass
class RunResult:
    rc: int
    wall: float  # seconds
    cpu: float  # user + sys seconds of the child
    maxrss_kb: int  # peak resident set, file-backed pages (a mapped trace) included
    stdout: str
    stderr: str
    timed_out: bool = False
    peak_anon_kb: Optional[int] = None  # peak anonymous memory, sampled (sample_memory=True)


class AnonSampler(threading.Thread):
    """Samples RssAnon of a process every 10 ms. ru_maxrss counts the pages of a memory-mapped
    input as resident, so a tool that maps its trace shows a peak RSS that grows with the
    trace although those pages are page cache the kernel can drop; anonymous memory (heap,
    stacks) is what the tool itself needs."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_kb = 0
        self.stop = threading.Event()

    def run(self):
        path = f"/proc/{self.pid}/status"
        while not self.stop.is_set():
            try:
                with open(path) as f:
                    for line in f:
                        if line.startswith("RssAnon:"):
                            self.peak_kb = max(self.peak_kb, int(line.split()[1]))
                            break
            except (OSError, ValueError):
                pass
            self.stop.wait(0.01)


def run_measured(argv: list, cwd: Path, env: Optional[dict] = None, timeout: float = 900.0,
                 cpu: Optional[int] = None, stdout_to_null: bool = False,
                 sample_memory: bool = False) -> RunResult:
    """Runs argv, returning its wall time, its own rusage (os.wait4: only this child) and its
    output. A timer thread kills it after `timeout` seconds; the main thread blocks in wait4, so
    the wall time is not quantized by polling."""
    out_path = cwd / ".bench-stdout"
    err_path = cwd / ".bench-stderr"
    preexec = None
    if cpu is not None and hasattr(os, "sched_setaffinity"):
        preexec = lambda: os.sched_setaffinity(0, {cpu})  # noqa: E731
    with open(os.devnull if stdout_to_null else out_path, "wb") as out, open(err_path, "wb") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, preexec_fn=preexec)
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            try:
                proc.kill()
            except OSError:
                pass

        timer = threading.Timer(timeout, kill)
        timer.start()
        sampler = AnonSampler(proc.pid) if sample_memory else None
        if sampler:
            sampler.start()
        try:
            _, status, ru = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
            if sampler:
                sampler.stop.set()
                sampler.join()
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
    stdout = "" if stdout_to_null else out_path.read_text(errors="replace")
    stderr = err_path.read_text(errors="replace")
    for p in (out_path, err_path):
        try:
            p.unlink()
        except OSError:
            pass
    return RunResult(proc.returncode, wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, stdout, stderr,
                     timed_out.is_set(), sampler.peak_kb if sampler else None)


def tool_version(argv: list) -> str:
    try:
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        return (r.stdout or r.stderr).strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return "not found"


# ------------------------------------------------------------------------------------------
# Setup: Debian packages, hookcc, the Lua and SQLite sources

def ensure_packages(install: bool, packages: Optional[dict] = None) -> dict:
    """Returns {package: None if installed, else why it is missing}, for `packages` (default
    APT_PACKAGES: package -> what needs it)."""
    packages = APT_PACKAGES if packages is None else packages
    def installed(pkg: str) -> bool:
        r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
        return r.returncode == 0 and "install ok installed" in r.stdout

    if not shutil.which("dpkg-query"):
        return {p: None for p in packages}  # not Debian: take the tools as found on PATH
    missing = [p for p in packages if not installed(p)]
    status = {p: None for p in packages}
    if missing and install:
        sudo = [] if os.geteuid() == 0 else (["sudo", "-n"] if shutil.which("sudo") else None)
        if sudo is None:
            for p in missing:
                status[p] = "not installed, and not root and no sudo to install it"
            return status
        log(f"installing Debian packages: {' '.join(missing)}")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.run(sudo + ["apt-get", "update", "-q"], env=env, capture_output=True)
        r = subprocess.run(sudo + ["apt-get", "install", "-y", "-q", "--no-install-recommends"] + missing,
                           env=env, capture_output=True, text=True)
        if r.returncode != 0:
            log(f"apt-get install failed: {first_lines(r.stderr)}")
    for p in missing:
        if not installed(p):
            status[p] = "not installed" + ("" if install else " (--no-install)")
    return status


def ensure_hookcc(build: bool) -> dict:
    """Builds the workspace in release mode and returns the paths of hookcc and hookprof (the
    debug ones if the release build fails), with a note."""
    info = {"hookcc": None, "hookprof": None, "profile": None, "note": ""}
    if build and shutil.which("cargo"):
        log("cargo build --release --workspace")
        r = subprocess.run(["cargo", "build", "--release", "--workspace"], cwd=ROOT,
                           capture_output=True, text=True)
        if r.returncode != 0:
            info["note"] = "release build failed: " + first_lines(r.stderr)
            log(info["note"])
    for profile in ("release", "debug"):
        hk = ROOT / "target" / profile / "hookcc"
        hp = ROOT / "target" / profile / "hookprof"
        if hk.exists() and info["hookcc"] is None:
            info["hookcc"] = str(hk)
            info["profile"] = profile
        if hp.exists() and info["hookprof"] is None:
            info["hookprof"] = str(hp)
    if info["profile"] == "debug":
        info["note"] += " (using the debug hookcc: compile times are not representative)"
    return info


def fetch_crate_sources(work: Path) -> dict:
    """The Lua and SQLite sources, from crates.io through cargo: a throwaway project depending
    on both, `cargo fetch`, then `cargo metadata` says where cargo unpacked them."""
    proj = work / "fetch"
    (proj / "src").mkdir(parents=True, exist_ok=True)
    (proj / "src" / "lib.rs").write_text("")
    (proj / "Cargo.toml").write_text(
        "[package]\nname = \"hookcc-bench-sources\"\nversion = \"0.0.0\"\nedition = \"2021\"\n"
        "publish = false\n\n[dependencies]\n"
        f"lua-src = \"={LUA_SRC_VERSION}\"\n"
        f"libsqlite3-sys = {{ version = \"={SQLITE_SYS_VERSION}\", default-features = false }}\n\n"
        "[workspace]\n")
    out = {"lua": None, "sqlite": None, "note": ""}
    if not shutil.which("cargo"):
        out["note"] = "cargo not found"
        return out
    r = subprocess.run(["cargo", "fetch", "--quiet"], cwd=proj, capture_output=True, text=True)
    if r.returncode != 0:
        out["note"] = "cargo fetch failed: " + first_lines(r.stderr)
        return out
    r = subprocess.run(["cargo", "metadata", "--format-version", "1"], cwd=proj,
                       capture_output=True, text=True)
    if r.returncode != 0:
        out["note"] = "cargo metadata failed: " + first_lines(r.stderr)
        return out
    for pkg in json.loads(r.stdout)["packages"]:
        base = Path(pkg["manifest_path"]).parent
        if pkg["name"] == "lua-src":
            dirs = sorted(base.glob("lua-5.4.*"))
            if dirs:
                out["lua"] = str(dirs[-1])
        elif pkg["name"] == "libsqlite3-sys":
            s = base / "sqlite3" / "sqlite3.c"
            if s.exists():
                out["sqlite"] = str(s)
    if not out["lua"]:
        out["note"] += " lua-src has no lua-5.4.* directory"
    if not out["sqlite"]:
        out["note"] += " libsqlite3-sys has no sqlite3/sqlite3.c"
    return out


# ------------------------------------------------------------------------------------------
# Variants

@dataclass
class Variant:
    key: str
    label: str
    cc: str  # "clang", "gcc" or "hookcc"
    flags: list  # compile and link flags
    ref: str = "clang"  # the baseline it is compared with
    defines: list = field(default_factory=list)  # -D for the benchmark's own sources
    extra: Optional[str] = None  # bench/<extra>.c, compiled plainly and linked in
    runtime: Optional[str] = None  # runtime/src/<runtime>.c must exist
    tools: list = field(default_factory=list)  # packages / tools needed
    binary_of: Optional[str] = None  # runs the binary built for another variant
    env: Callable = lambda ctx, d, prog: {}  # noqa: E731
    wrap: Callable = lambda ctx, d, argv: argv  # noqa: E731
    trace_globs: list = field(default_factory=list)
    in_memory: bool = False  # records stay in memory: the program reports their bytes
    cg_children: bool = False  # callgrind must follow exec (uftrace)
    cg_smc: bool = False  # code patched at run time (XRay)
    ti_buffer: bool = False  # gets -DBENCH_TI_RECORDS=<records> sized for the program
    # set at run time
    status: str = "ok"
    note: list = field(default_factory=list)


def xray_env(mode: str):
    def env(ctx, d: Path, prog: str) -> dict:
        calls = ctx.expected_calls(prog)
        # FDR keeps every record in memory until the flush at the end and recycles its buffers
        # when they are all used: size them for every call (16 bytes a call pair, measured;
        # 24 for headroom). One large buffer per thread rather than many small ones: with
        # hundreds of 1 MiB buffers, llvm-xray 19's `account` rejected the trace of 2 M calls
        # or more ("Error processing record ... record-type: exit", an exit with an empty
        # stack), while the same calls in one buffer decode. buffer_size is an int flag.
        mib = 1 << 20
        buffer_size = min(((calls * 24) // mib + 2) * mib, (1 << 31) - mib)
        buffer_max = 2
        e = {
            "XRAY_OPTIONS": f"patch_premain=true xray_mode={mode} xray_logfile_base={d}/xray-log. verbosity=0",
            # 0: keep every call; the default (5 us) drops short calls, and a trace without them
            # could not be compared with the others.
            "XRAY_FDR_OPTIONS": f"func_duration_threshold_us=0 buffer_size={buffer_size} buffer_max={buffer_max}",
            "XRAY_BASIC_OPTIONS": "func_duration_threshold_us=0",
        }
        if mode == "xray-fdr":
            e["BENCH_XRAY_INIT_MODE"] = "xray-fdr"
        return e
    return env


def uftrace_wrap(ctx, d: Path, argv: list) -> list:
    # --no-libcall: trace the -pg functions only, as every other variant does (by default
    # uftrace also hooks every PLT call into libc).
    return ["uftrace", "record", "--no-libcall", "-d", str(d / "uftrace.data")] + argv


def make_variants(scale: Scale) -> list:
    ti_flags = ["--entry_parm=address", "--exit_parm=address", "--hook-runtime=ti", "-O2"]
    vs = [
        Variant("clang", "baseline clang-19 -O2", "clang", ["-O2"]),
        Variant("gcc", "baseline gcc -O2", "gcc", ["-O2"], ref="gcc"),
        Variant("empty", "empty hooks (gcc -finstrument-functions)", "gcc",
                ["-O2", "-finstrument-functions"], ref="gcc", extra="empty_hooks"),
        Variant("logger", "rdtsc TLS logger (clang -finstrument-functions)", "clang",
                ["-O2", "-finstrument-functions"], extra="rdtsc_logger",
                env=lambda ctx, d, prog: {"HOOKLOG_OUTPUT": str(d / "rdtsc.hklog")},
                trace_globs=["*.hklog"]),
        Variant("empty-native", "hookcc --trace calls, empty hooks", "hookcc",
                ["--trace", "--hook-runtime=none", "-O2"], extra="empty_hookcc_hooks"),
        Variant("empty-nitro", "hookcc -profile calls, empty hooks", "hookcc",
                ["-profile", "--hook-runtime=none", "-O2"], extra="empty_hookcc_hooks"),
        Variant("native", "hookcc --trace (native trace)", "hookcc", ["--trace", "-O2"],
                runtime="trace",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace")},
                trace_globs=["*.hktrace"]),
        Variant("native-raw", "hookcc --trace, 16-byte records (HOOKCC_PACK=0)", "hookcc",
                ["--trace", "-O2"], runtime="trace", binary_of="native",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace"),
                                          "HOOKCC_PACK": "0"},
                trace_globs=["*.hktrace"]),
        Variant("native-ring", "hookcc --trace, HOOKCC_MODE=ring (1 MiB rings)", "hookcc",
                ["--trace", "-O2"], runtime="trace", binary_of="native",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace"),
                                          "HOOKCC_MODE": "ring"},
                trace_globs=["*.hktrace"]),
        Variant("native-profile", "hookcc --trace, HOOKCC_MODE=profile", "hookcc",
                ["--trace", "-O2"], runtime="trace", binary_of="native",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace"),
                                          "HOOKCC_MODE": "profile"},
                trace_globs=["*.hktrace"]),
        Variant("native-min-duration", "hookcc --trace, HOOKCC_MIN_DURATION=5us", "hookcc",
                ["--trace", "-O2"], runtime="trace", binary_of="native",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace"),
                                          "HOOKCC_MIN_DURATION": "5us"},
                trace_globs=["*.hktrace"]),
        Variant("native-min20", "hookcc --trace --hook-min-size=20", "hookcc",
                ["--trace", "--hook-min-size=20", "-O2"], runtime="trace",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace")},
                trace_globs=["*.hktrace"]),
        Variant("native-min50", "hookcc --trace --hook-min-size=50", "hookcc",
                ["--trace", "--hook-min-size=50", "-O2"], runtime="trace",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace")},
                trace_globs=["*.hktrace"]),
        Variant("ct-stack", "NITRO call trace, stack", "hookcc",
                ["-profile", "--hook-runtime=calltrace", "-O2"], defines=["BENCH_NITRO_CALLTRACE=1"],
                runtime="calltrace", in_memory=True),
        Variant("ct-log", "NITRO call trace, log", "hookcc",
                ["-profile", "--hook-runtime=calltrace", "-O2"], defines=["BENCH_NITRO_CALLTRACE=2"],
                runtime="calltrace", in_memory=True),
        Variant("fcost", "NITRO function cost", "hookcc",
                ["-profile", "--hook-runtime=functioncost", "-O2"], defines=["BENCH_NITRO_FUNCTIONCOST"],
                runtime="functioncost", in_memory=True,
                env=lambda ctx, d, prog: {"BENCH_CALLS": str(ctx.expected_calls(prog))}),
        Variant("fcost-cpu", "NITRO function cost, --nitro-clock=thread-cpu", "hookcc",
                ["-profile", "--hook-runtime=functioncost", "--nitro-clock=thread-cpu", "-O2"],
                defines=["BENCH_NITRO_FUNCTIONCOST"], runtime="functioncost", in_memory=True,
                env=lambda ctx, d, prog: {"BENCH_CALLS": str(ctx.expected_calls(prog))}),
        Variant("hk-gprof", "hookcc --hook-runtime=gprof (arcs + SIGPROF)", "hookcc",
                ["--hook-runtime=gprof", "-O2"], runtime="gprof",
                env=lambda ctx, d, prog: {"HOOKCC_GMON_OUT": str(d / "gmon.out")},
                trace_globs=["gmon.out"]),
        Variant("pfp", "PFP pfpBegin/pfpEnd around each call (no hooks)", "hookcc",
                ["--hook-runtime=pfp", "-O2"], defines=["BENCH_PFP"], runtime="pfp",
                in_memory=True),
        Variant("ti-linear", "TI records, linear", "hookcc",
                ["--entry_hook=entry_hook", "--exit_hook=exit_hook"] + ti_flags,
                ti_buffer=True, runtime="ti",
                env=lambda ctx, d, prog: {"HOOKCC_TI_OUTPUT": str(d / "ti")},
                trace_globs=["*.bin"]),
        Variant("ti-circular", "TI records, circular", "hookcc",
                ["--entry_hook=entry_hook_circular", "--exit_hook=exit_hook_circular"] + ti_flags,
                ti_buffer=True, runtime="ti",
                env=lambda ctx, d, prog: {"HOOKCC_TI_OUTPUT": str(d / "ti")},
                trace_globs=["*.bin"]),
        Variant("xray-fdr", "XRay FDR (clang -fxray-instrument)", "clang",
                ["-O2", "-fxray-instrument", "-fxray-instruction-threshold=1"], defines=["BENCH_XRAY"],
                tools=["libclang-rt-19-dev"], env=xray_env("xray-fdr"), trace_globs=["xray-log.*"],
                cg_smc=True),
        Variant("xray-basic", "XRay basic", "clang",
                ["-O2", "-fxray-instrument", "-fxray-instruction-threshold=1"], defines=["BENCH_XRAY"],
                tools=["libclang-rt-19-dev"], binary_of="xray-fdr", env=xray_env("xray-basic"),
                trace_globs=["xray-log.*"], cg_smc=True),
        Variant("uftrace", "uftrace record (gcc -pg)", "gcc", ["-O2", "-pg"], ref="gcc",
                tools=["uftrace"], wrap=uftrace_wrap, trace_globs=["uftrace.data"],
                cg_children=True),
        Variant("gprof", "gprof (gcc -pg)", "gcc", ["-O2", "-pg"], ref="gcc", tools=["binutils"],
                binary_of="uftrace", trace_globs=["gmon.out"]),
    ]
    return vs


# ------------------------------------------------------------------------------------------
# Building

class BuildError(Exception):
    pass


class Builder:
    def __init__(self, ctx, cache_dir: Optional[Path], jobs: int):
        self.ctx = ctx
        self.cache_dir = cache_dir
        self.jobs = jobs
        self._identity = None

    def prune_cache(self, days: int = 14) -> None:
        """Every rebuild of hookcc or edit of the runtime makes new entries: drop those not
        used for two weeks."""
        if not self.cache_dir or not self.cache_dir.is_dir():
            return
        limit = time.time() - days * 86400
        for d in self.cache_dir.iterdir():
            try:
                if d.is_dir() and d.stat().st_mtime < limit:
                    shutil.rmtree(d, ignore_errors=True)
            except OSError:
                pass

    def compiler(self, v: Variant) -> list:
        if v.cc == "clang":
            return ["clang-19"]
        if v.cc == "gcc":
            return ["gcc"]
        return [self.ctx.hookcc]

    def plain_compiler(self, v: Variant) -> list:
        return ["gcc"] if v.cc == "gcc" else ["clang-19"]

    def identity(self) -> str:
        """What a built program depends on besides its command lines and sources: the
        compilers, hookcc's plugins and the runtime sources."""
        if self._identity is None:
            h = hashlib.sha256()
            for exe in ("clang-19", "gcc"):
                p = shutil.which(exe)
                if p:
                    st = os.stat(os.path.realpath(p))
                    h.update(f"{p}:{st.st_size}:{st.st_mtime_ns}".encode())
            if self.ctx.hookcc:
                d = Path(self.ctx.hookcc).parent
                for f in ["hookcc", "libhookcc_pass.so", "libhookcc_clang.so"]:
                    p = d / f
                    if p.exists():
                        st = p.stat()
                        h.update(f"{p}:{st.st_size}:{st.st_mtime_ns}".encode())
                for f in sorted((ROOT / "runtime").rglob("*")):
                    if f.is_file() and f.suffix in (".c", ".h"):
                        h.update(str(f).encode())
                        h.update(f.read_bytes())
            self._identity = h.hexdigest()
        return self._identity

    def program_sources(self, prog: str) -> tuple:
        """(sources, include dirs, extra flags, libraries)."""
        if prog == "micro":
            return [BENCH / "micro.c"], [BENCH], [], []
        lua = Path(self.ctx.lua_dir)
        srcs = sorted(p for p in lua.glob("*.c") if p.name not in ("lua.c", "luac.c", "onelua.c"))
        return srcs + [BENCH / "lua_main.c"], [lua, BENCH], ["-DLUA_USE_LINUX", "-w"], ["-lm", "-ldl"]

    def build(self, v: Variant, prog: str, out_dir: Path, extra_defines: list) -> Path:
        srcs, incs, pflags, libs = self.program_sources(prog)
        cc = self.compiler(v)
        defs = [f"-D{d}" for d in v.defines + extra_defines]
        inc = [f"-I{i}" for i in incs]
        compile_cmds = []
        out_dir.mkdir(parents=True, exist_ok=True)
        for s in srcs:
            obj = out_dir / (s.stem + ".o")
            compile_cmds.append(cc + v.flags + pflags + defs + inc + ["-c", str(s), "-o", str(obj)])
        extra_cmd = None
        objs = [out_dir / (s.stem + ".o") for s in srcs]
        if v.extra:
            eobj = out_dir / (v.extra + ".o")
            extra_cmd = self.plain_compiler(v) + ["-O2", "-c", str(BENCH / (v.extra + ".c")), "-o", str(eobj)]
            objs.append(eobj)
        exe = out_dir / prog
        link_cmd = cc + v.flags + [str(o) for o in objs] + libs + ["-o", str(exe)]

        key = None
        if self.cache_dir:
            h = hashlib.sha256(self.identity().encode())
            for c in compile_cmds + [extra_cmd or [], link_cmd]:
                h.update(json.dumps([a.replace(str(out_dir), "@") for a in c]).encode())
            for f in srcs + sorted(BENCH.glob("*.h")) + ([BENCH / (v.extra + ".c")] if v.extra else []):
                h.update(f.read_bytes())
            if prog == "lua":
                for f in sorted(Path(self.ctx.lua_dir).glob("*.h")):
                    h.update(f.read_bytes())
            key = h.hexdigest()[:32]
            cached = self.cache_dir / key / prog
            if cached.exists():
                shutil.copy2(cached, exe)
                os.utime(cached.parent)  # last use, for prune_cache
                return exe

        def run(cmd):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                raise BuildError(f"{Path(cmd[0]).name} failed: {first_lines(r.stderr)}")

        cmds = compile_cmds + ([extra_cmd] if extra_cmd else [])
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.jobs) as pool:
            for f in [pool.submit(run, c) for c in cmds]:
                f.result()
        run(link_cmd)
        for o in objs:
            o.unlink(missing_ok=True)
        if key:
            dst = self.cache_dir / key
            dst.mkdir(parents=True, exist_ok=True)
            tmp = dst / (prog + ".tmp")
            shutil.copy2(exe, tmp)
            os.replace(tmp, dst / prog)
        return exe


# ------------------------------------------------------------------------------------------
# The benchmark

HOOKBENCH_RE = re.compile(r"hookbench: (.*)")


def parse_hookbench(stderr: str) -> dict:
    out = {}
    for m in HOOKBENCH_RE.finditer(stderr):
        for kv in m.group(1).split():
            if "=" in kv:
                k, val = kv.split("=", 1)
                try:
                    out[k] = float(val)
                except ValueError:
                    out[k] = val
    return out


def read_hktrace_header(path: Path) -> Optional[dict]:
    try:
        with open(path, "rb") as f:
            h = f.read(64)
    except OSError:
        return None
    if len(h) < 64 or h[:8] != b"HKTRACE\0":
        return None
    endian = "<" if h[8] == 1 else ">"
    records, lost = struct.unpack(endian + "QQ", h[48:64])
    flags = struct.unpack(endian + "Q", h[32:40])[0]
    return {"records": records, "lost": lost, "complete": bool(flags & 1)}


def hktrace_pairs(d: Path) -> Optional[int]:
    """Call pairs in the native trace a run left in d (its header's records / 2)."""
    hdr = next((read_hktrace_header(t) for t in sorted(d.glob("*.hktrace"))), None)
    return hdr["records"] // 2 if hdr else None


def uftrace_pairs(d: Path) -> int:
    """Call pairs uftrace recorded in d/uftrace.data: 16 bytes a record in each task's .dat
    file, an entry and an exit a call with --no-libcall."""
    return sum(f.stat().st_size for f in (d / "uftrace.data").glob("*.dat")) // 32


def default_tmpdir() -> Optional[str]:
    """/dev/shm when it has room: traces of hundreds of MB per run written to a disk-backed
    /tmp pile up as dirty pages, and the kernel's writeback and throttling then land on
    whichever run comes next, which made run times vary by 2-3x here. In memory every tool
    pays the same copy into the page cache and nothing else. Otherwise $TMPDIR or /tmp."""
    shm = "/dev/shm"
    try:
        st = os.statvfs(shm)
        if os.access(shm, os.W_OK) and st.f_bavail * st.f_frsize >= 8 << 30:
            return shm
    except OSError:
        pass
    return None


class Bench:
    def __init__(self, args, scale: Scale):
        self.args = args
        self.scale = scale
        self.work = Path(tempfile.mkdtemp(prefix="hookcc-bench-", dir=args.tmpdir or default_tmpdir()))
        self.hookcc = None
        self.hookprof = None
        self.lua_dir = None
        self.sqlite = None
        self.lua_calls = None  # instrumented calls of one Lua run, from the native trace
        self.current_micro_calls = scale.wall_calls  # N of the micro run being prepared
        self.variants = [v for v in make_variants(scale)
                         if not args.variants or v.key in args.variants or v.key in ("clang", "gcc")]
        self.by_key = {v.key: v for v in self.variants}
        self.exes = {}  # (variant key, prog) -> Path
        self.results = {v.key: {} for v in self.variants}
        self.baseline_output = {}
        self.report = {}

    # -- context used by variants
    def expected_calls(self, prog: str) -> int:
        if prog == "micro":
            return self.current_micro_calls + 2
        return self.lua_calls or (1 << 24)

    def note(self, v: Variant, text: str) -> None:
        if text not in v.note:
            v.note.append(text)

    def fail(self, v: Variant, status: str, text: str) -> None:
        v.status = status
        self.note(v, text)
        log(f"{v.key}: {status}: {text}")

    # -- setup
    def setup(self) -> None:
        pk = ensure_packages(not self.args.no_install)
        self.report["packages"] = pk
        hk = ensure_hookcc(not self.args.no_build)
        self.hookcc, self.hookprof = hk["hookcc"], hk["hookprof"]
        self.report["hookcc"] = hk
        src = fetch_crate_sources(self.work)
        self.lua_dir, self.sqlite = src["lua"], src["sqlite"]
        self.report["sources"] = src
        log(f"hookcc: {self.hookcc} ({hk['profile']}); lua: {self.lua_dir}; sqlite: {self.sqlite}")

        for v in self.variants:
            if v.cc == "hookcc" and not self.hookcc:
                self.fail(v, "skipped", "hookcc not built")
            if v.runtime and not (ROOT / "runtime" / "src" / f"{v.runtime}.c").exists():
                self.fail(v, "skipped", f"runtime/src/{v.runtime}.c does not exist (not written yet)")
            for t in v.tools:
                if pk.get(t):
                    self.fail(v, "skipped", f"{t}: {pk[t]}")
            if v.cc in ("clang",) and not shutil.which("clang-19"):
                self.fail(v, "skipped", "clang-19 not found")
            if v.cc == "gcc" and not shutil.which("gcc"):
                self.fail(v, "skipped", "gcc not found")
            if v.key == "uftrace" and not shutil.which("uftrace"):
                self.fail(v, "skipped", "uftrace not found")
            if v.key == "gprof" and not shutil.which("gprof"):
                self.fail(v, "skipped", "gprof not found")

        self.report["machine"] = {
            "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "cpu": self.cpu_model(),
            "cores": os.cpu_count(),
            "kernel": platform.release(),
            "clang": tool_version(["clang-19", "--version"]),
            "gcc": tool_version(["gcc", "--version"]),
            "valgrind": tool_version(["valgrind", "--version"]),
            "uftrace": tool_version(["uftrace", "--version"]),
            "python": platform.python_version(),
            "load_before": os.getloadavg()[0],
        }

    @staticmethod
    def cpu_model() -> str:
        try:
            for line in open("/proc/cpuinfo"):
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
        except OSError:
            pass
        return platform.processor()

    # -- building
    def build_all(self) -> None:
        cache = None if self.args.no_cache else Path(
            os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "hookcc-bench"
        builder = Builder(self, cache, self.args.jobs)
        builder.prune_cache()
        progs = ["micro"] + (["lua"] if self.lua_dir and "lua" in self.args.phases else [])
        s = self.scale
        # TI's stop-when-full buffer holds every record of a micro run, so that what is timed is
        # recording, not the "full" branch; the Lua one is a fixed size per scale (a full
        # buffer is reported).
        ti_records = {"micro": next_pow2(2 * (max(s.cg_calls[1], s.wall_calls) + 2) + 1024),
                      "lua": s.ti_lua_records}
        for v in self.variants:
            if v.status != "ok":
                continue
            src = self.by_key.get(v.binary_of) if v.binary_of else None
            for prog in progs:
                if src is not None and (src.key, prog) in self.exes:
                    self.exes[(v.key, prog)] = self.exes[(src.key, prog)]  # same binary
                    continue
                extra = [f"BENCH_TI_RECORDS={ti_records[prog]}"] if v.ti_buffer else []
                log(f"build {v.key} {prog}")
                try:
                    self.exes[(v.key, prog)] = builder.build(v, prog, self.work / "build" / v.key, extra)
                except BuildError as e:
                    self.fail(v, "build failed", f"{prog}: {e}")
                    break

    # -- running one program of a variant
    def run_variant(self, v: Variant, prog: str, args: list, timeout: float = 1800.0,
                    keep: bool = False, cpu: Optional[int] = None) -> tuple:
        """Runs prog of v in a fresh directory. Returns (RunResult, trace bytes, directory); the
        directory is deleted unless keep."""
        exe = self.exes[(v.key, prog)]
        d = Path(tempfile.mkdtemp(prefix=f"{v.key}-", dir=self.work))
        argv = [str(exe)] + ([str(BENCH / "workload.lua")] if prog == "lua" else []) + args
        argv = v.wrap(self, d, argv)
        env = dict(os.environ)
        env.update(v.env(self, d, prog))
        r = run_measured(argv, d, env, timeout, cpu=cpu)
        nbytes = glob_bytes(d, v.trace_globs) if v.trace_globs else 0
        if not keep:
            shutil.rmtree(d, ignore_errors=True)
        return r, nbytes, d

    def check_output(self, v: Variant, prog: str, r: RunResult) -> bool:
        if r.timed_out:
            self.fail(v, "failed", f"{prog}: timed out")
            return False
        if r.rc != 0:
            self.fail(v, "failed", f"{prog}: exit status {r.rc}: {first_lines(r.stderr)}")
            return False
        out = r.stdout.strip()
        ref = self.baseline_output.get(prog)
        if ref is not None and out != ref:
            self.fail(v, "failed", f"{prog}: printed {out[:40]!r}, the baseline {ref[:40]!r}")
            return False
        return True

    # -- phase: callgrind instructions per call
    def callgrind_ir(self, v: Variant, n: int, all_threads: bool = False) -> tuple:
        """(instructions of the micro process, calls to leaf seen by callgrind). With
        `all_threads`, every instruction of the process, the runtime's writer thread's too."""
        exe = self.exes[(v.key, "micro")]
        d = Path(tempfile.mkdtemp(prefix=f"cg-{v.key}-", dir=self.work))
        self.current_micro_calls = n
        argv = v.wrap(self, d, [str(exe), str(n)])
        # Collect only while run() is on the stack: the loop with its hooks (buffer flushes
        # inside it included), not start-up or what a runtime does at exit (TI formats its
        # whole buffer as text then, XRay FDR writes its buffers), which is not per-call cost
        # of the hooks. The difference between two N removes run()'s own fixed part.
        vg = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={d}/cg.%p.out",
              "--compress-strings=no", "--compress-pos=no"]
        if not all_threads:
            vg.append("--toggle-collect=run")
        if v.cg_children:
            vg.append("--trace-children=yes")
        if v.cg_smc:
            vg.append("--smc-check=all")
        env = dict(os.environ)
        env.update(v.env(self, d, "micro"))
        r = run_measured(vg + argv, d, env, 3600)
        try:
            if r.rc != 0:
                raise RuntimeError(f"exit status {r.rc}: {first_lines(r.stderr)}")
            for f in d.glob("cg.*.out"):
                text = f.read_text(errors="replace")
                m = re.search(r"^cmd:\s*(\S+)", text, re.M)
                if not m or Path(m.group(1)).name != exe.name:
                    continue
                t = re.search(r"^totals:\s*(\d+)", text, re.M) or re.search(r"^summary:\s*(\d+)", text, re.M)
                leaf_calls = 0
                lines = text.splitlines()
                for i, line in enumerate(lines):
                    if line.startswith("cfn=") and line.split("=", 1)[1].split()[-1] == "leaf":
                        if i + 1 < len(lines) and lines[i + 1].startswith("calls="):
                            leaf_calls += int(lines[i + 1][6:].split()[0])
                return int(t.group(1)), leaf_calls
            raise RuntimeError("no callgrind output for the program (did it run under valgrind?)")
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def phase_callgrind(self) -> None:
        if not shutil.which("valgrind"):
            for v in self.variants:
                self.note(v, "valgrind missing: no Ir/call")
            return
        n1, n2 = self.scale.cg_calls
        raw = {}
        order = [v for v in self.variants if v.status == "ok"]
        for v in order:
            log(f"callgrind {v.key} N={n1},{n2}")
            try:
                (i1, c1), (i2, c2) = self.callgrind_ir(v, n1), self.callgrind_ir(v, n2)
            except (RuntimeError, OSError) as e:
                self.note(v, f"callgrind: {e}")
                continue
            raw[v.key] = (i1, i2)
            res = self.results[v.key]
            res["callgrind"] = {"N1": n1, "N2": n2, "Ir1": i1, "Ir2": i2, "leaf_calls1": c1, "leaf_calls2": c2}
            if (c1, c2) != (n1, n2):
                self.note(v, f"callgrind saw {c1}/{c2} calls to leaf, expected {n1}/{n2}")
        for v in order:
            if v.key not in raw:
                continue
            i1, i2 = raw[v.key]
            per_iter = (i2 - i1) / (n2 - n1)
            self.results[v.key]["ir_per_iteration"] = per_iter
            if v.ref in raw and v.key != v.ref:
                b1, b2 = raw[v.ref]
                self.results[v.key]["ir_per_call"] = ((i2 - i1) - (b2 - b1)) / (n2 - n1)
        # The recording modes do part of their work in the runtime's writer thread (packing a
        # full buffer, or folding it into a tree): every thread's instructions, against the
        # baseline's whole process, per call pair.
        base = self.by_key.get("clang")
        if base is None or base.status != "ok":
            return
        try:
            b1, b2 = (self.callgrind_ir(base, n, True)[0] for n in (n1, n2))
        except (RuntimeError, OSError) as e:
            self.note(base, f"callgrind (all threads): {e}")
            return
        for v in order:
            if v.key not in ("native", "native-ring", "native-profile", "native-min-duration") \
                    or v.key not in raw:
                continue
            log(f"callgrind {v.key}, all threads")
            try:
                i1, i2 = (self.callgrind_ir(v, n, True)[0] for n in (n1, n2))
            except (RuntimeError, OSError) as e:
                self.note(v, f"callgrind (all threads): {e}")
                continue
            self.results[v.key]["ir_per_call_all_threads"] = ((i2 - i1) - (b2 - b1)) / (n2 - n1)

    # -- phase: wall time of micro and Lua, interleaved
    def phase_wall(self, prog: str, args: list, reps: int) -> None:
        runnable = [v for v in self.variants if v.status == "ok" and (v.key, prog) in self.exes]
        if prog == "micro":
            self.current_micro_calls = int(args[0])
        # Reference output first, then one validation run of each variant (also measures the
        # trace bytes), then the timed repetitions in a shuffled order each time.
        for v in runnable:
            if v.key not in ("clang", "gcc"):
                continue
            r, _, _ = self.run_variant(v, prog, args)
            if r.rc == 0:
                self.baseline_output.setdefault(prog, r.stdout.strip())
        for v in runnable:
            log(f"{prog}: validate {v.key}")
            native = v.key == "native" or v.key.startswith("native-")
            r, nbytes, d = self.run_variant(v, prog, args, keep=native)
            if native:
                hdr = None
                for t in d.glob("*.hktrace"):
                    hdr = read_hktrace_header(t)
                shutil.rmtree(d, ignore_errors=True)
                if hdr:
                    self.results[v.key][f"{prog}_trace_header"] = hdr
                    if v.key in ("native-ring", "native-profile", "native-min-duration"):
                        pass  # the ring's last records; the records a threshold kept
                    elif prog == "lua" and v.key != "native":
                        # --hook-min-size variants: the calls they still hook, exactly.
                        self.results[v.key]["lua_calls"] = hdr["records"] // 2
                    elif prog == "lua":
                        self.lua_calls = hdr["records"] // 2
                    elif v.key != "native":
                        pass  # micro's leaf is below any size threshold: nothing to check
                    elif hdr["records"] != 2 * self.expected_calls("micro"):
                        self.note(v, f"micro trace holds {hdr['records']} records, expected "
                                     f"{2 * self.expected_calls('micro')}")
                    if hdr["lost"]:
                        self.note(v, f"{prog}: {hdr['lost']} records lost")
            if not self.check_output(v, prog, r):
                continue
            hb = parse_hookbench(r.stderr)
            res = self.results[v.key]
            res[f"{prog}_trace_bytes"] = nbytes
            if "record_bytes_per_call" in hb:
                res[f"{prog}_record_bytes_per_call"] = hb["record_bytes_per_call"]
            if hb.get("ti_dropped"):
                self.note(v, f"{prog}: TI buffer full, {int(hb['ti_dropped'])} records dropped")
        runnable = [v for v in runnable if v.status == "ok"]
        walls = {v.key: [] for v in runnable}
        cpus = {v.key: [] for v in runnable}
        loops = {v.key: [] for v in runnable}
        loop_cpus = {v.key: [] for v in runnable}
        for rep in range(reps):
            order = list(runnable)
            random.Random(rep).shuffle(order)
            log(f"{prog}: repetition {rep + 1}/{reps}")
            for v in order:
                r, _, _ = self.run_variant(v, prog, args)
                if r.rc != 0:
                    self.note(v, f"{prog}: a timed run failed: {first_lines(r.stderr)}")
                    continue
                walls[v.key].append(r.wall)
                cpus[v.key].append(r.cpu)
                hb = parse_hookbench(r.stderr)
                if "loop_ns" in hb:
                    loops[v.key].append(hb["loop_ns"])
                if "loop_cpu_ns" in hb:
                    loop_cpus[v.key].append(hb["loop_cpu_ns"])
        for v in runnable:
            res = self.results[v.key]
            res[f"{prog}_wall_s"] = walls[v.key]
            res[f"{prog}_wall_median_s"] = median(walls[v.key])
            res[f"{prog}_cpu_s"] = cpus[v.key]
            res[f"{prog}_cpu_median_s"] = median(cpus[v.key])
            if loops[v.key]:
                res[f"{prog}_loop_ns"] = loops[v.key]
                res[f"{prog}_loop_median_ns"] = median(loops[v.key])
            if loop_cpus[v.key]:
                res[f"{prog}_loop_cpu_ns"] = loop_cpus[v.key]
                res[f"{prog}_loop_cpu_median_ns"] = median(loop_cpus[v.key])
        for v in runnable:
            res = self.results[v.key]
            ref = self.results.get(v.ref, {})
            for kind, suffix in (("wall", "ratio"), ("cpu", "cpu_ratio")):
                if res.get(f"{prog}_{kind}_median_s") and ref.get(f"{prog}_{kind}_median_s"):
                    res[f"{prog}_{suffix}"] = res[f"{prog}_{kind}_median_s"] / ref[f"{prog}_{kind}_median_s"]
            if prog == "micro" and v.key != v.ref:
                calls = self.expected_calls("micro")
                # ns/call from the loop's CPU time (steady when other programs share the
                # machine); the wall-clock figure is kept beside it.
                for name, field_ in (("ns_per_call", "micro_loop_cpu_median_ns"),
                                     ("ns_per_call_wall", "micro_loop_median_ns")):
                    if res.get(field_) is not None and ref.get(field_) is not None:
                        res[name] = (res[field_] - ref[field_]) / calls
            if prog == "micro":
                calls = self.expected_calls("micro")
                if v.in_memory and "micro_record_bytes_per_call" in res:
                    res["bytes_per_call"] = res["micro_record_bytes_per_call"]
                elif v.trace_globs and "micro_trace_bytes" in res:
                    res["bytes_per_call"] = res["micro_trace_bytes"] / calls

    def estimate_lua_calls(self) -> None:
        """Instrumented calls of one Lua run per variant. They differ: hookcc --trace and
        -finstrument-functions hook functions before inlining (an inlined body keeps its
        hooks), XRay and -pg after it. Exact for the native trace (its header), estimated for
        the other file-writing variants as trace bytes / bytes per call measured on micro."""
        for v in self.variants:
            res = self.results[v.key]
            if v.key == "native" and self.lua_calls:
                res["lua_calls"] = self.lua_calls
            elif v.key.startswith("native-"):
                pass  # exact, from the validation run's header
            elif v.trace_globs and not v.in_memory and res.get("bytes_per_call") and v.key != "gprof" \
                    and not v.key.startswith("ti-") and res.get("lua_trace_bytes"):
                res["lua_calls"] = int(res["lua_trace_bytes"] / res["bytes_per_call"])

    # -- phase: compile time of sqlite3.c and code bytes per instrumented function
    def phase_compile(self) -> None:
        """Compile time of sqlite3.c, hookcc --trace against clang-19 (-O2 -c, CPU time of the
        compiler, interleaved), and code bytes per instrumented function. The bytes are taken
        twice: at -O2 as built, where hooks also change what the optimizer inlines, and at
        -O2 -fno-inline on both sides, where the difference is the hook calls alone."""
        out = {}
        self.report["compile"] = out
        if not self.sqlite or not self.hookcc:
            out["note"] = "no sqlite3.c" if not self.sqlite else "no hookcc"
            return
        d = self.work / "sqlite"
        d.mkdir(exist_ok=True)
        configs = {"O2": ["-O2"], "noinline": ["-O2", "-fno-inline"]}
        cmds = {}
        for cfg, flags in configs.items():
            cmds[("clang", cfg)] = ["clang-19"] + flags + ["-c", self.sqlite, "-o", str(d / f"clang-{cfg}.o")]
            cmds[("hookcc", cfg)] = [self.hookcc, "--trace"] + flags + ["-c", self.sqlite,
                                                                       "-o", str(d / f"hookcc-{cfg}.o")]
        cpu = {k: [] for k in cmds}
        wall = {k: [] for k in cmds}
        for rep in range(self.scale.compile_reps):
            for cfg in configs:
                order = ["clang", "hookcc"] if rep % 2 == 0 else ["hookcc", "clang"]
                for cc in order:
                    log(f"compile sqlite3.c {' '.join(configs[cfg])} with {cc} "
                        f"({rep + 1}/{self.scale.compile_reps})")
                    r = run_measured(cmds[(cc, cfg)], d, None, 3600)
                    if r.rc != 0:
                        out["note"] = f"{cc} {cfg} failed: {first_lines(r.stderr)}"
                        return
                    cpu[(cc, cfg)].append(r.cpu)
                    wall[(cc, cfg)].append(r.wall)
        for cfg in configs:
            c = out.setdefault(cfg, {})
            c["flags"] = configs[cfg]
            c["cpu_s"] = {cc: cpu[(cc, cfg)] for cc in ("clang", "hookcc")}
            c["wall_s"] = {cc: wall[(cc, cfg)] for cc in ("clang", "hookcc")}
            c["ratio_cpu"] = median(cpu[("hookcc", cfg)]) / median(cpu[("clang", cfg)])
            c["ratio_wall"] = median(wall[("hookcc", cfg)]) / median(wall[("clang", cfg)])
            clang_o, hook_o = d / f"clang-{cfg}.o", d / f"hookcc-{cfg}.o"
            c["text_clang"] = self.text_bytes(clang_o)
            c["text_hookcc"] = self.text_bytes(hook_o)
            c["entry_call_sites"] = self.count_relocs(hook_o, "__hookcc_enter")
            c["exit_call_sites"] = self.count_relocs(hook_o, "__hookcc_exit")
            c["functions_clang"] = self.count_functions(clang_o)
            if c["entry_call_sites"]:
                c["bytes_per_function"] = (c["text_hookcc"] - c["text_clang"]) / c["entry_call_sites"]

    @staticmethod
    def text_bytes(obj: Path) -> int:
        """Sum of the sizes of the executable sections of an ELF64 object."""
        data = obj.read_bytes()
        if data[:4] != b"\x7fELF" or data[4] != 2:
            return 0
        e = "<" if data[5] == 1 else ">"
        shoff = struct.unpack_from(e + "Q", data, 0x28)[0]
        shentsize, shnum = struct.unpack_from(e + "HH", data, 0x3A)
        total = 0
        for i in range(shnum):
            base = shoff + i * shentsize
            sh_type = struct.unpack_from(e + "I", data, base + 4)[0]
            sh_flags = struct.unpack_from(e + "Q", data, base + 8)[0]
            sh_size = struct.unpack_from(e + "Q", data, base + 32)[0]
            if sh_type == 1 and sh_flags & 0x4:  # PROGBITS, SHF_EXECINSTR
                total += sh_size
        return total

    @staticmethod
    def count_relocs(obj: Path, sym: str) -> int:
        r = subprocess.run(["readelf", "-rW", str(obj)], capture_output=True, text=True)
        return sum(1 for line in r.stdout.splitlines() if re.search(rf"\s{re.escape(sym)}\b", line))

    @staticmethod
    def count_functions(obj: Path) -> int:
        r = subprocess.run(["readelf", "-sW", str(obj)], capture_output=True, text=True)
        n = 0
        for line in r.stdout.splitlines():
            f = line.split()
            if len(f) >= 8 and f[3] == "FUNC" and f[6] != "UND":
                n += 1
        return n

    # -- the post-tool phases' helpers
    def traced_run(self, v: Variant, calls: int) -> Path:
        """Runs micro with `calls` calls under variant v; returns the directory it left its
        trace in (the caller removes it)."""
        self.current_micro_calls = calls
        r, _, d = self.run_variant(v, "micro", [str(calls)], keep=True)
        if r.rc != 0:
            shutil.rmtree(d, ignore_errors=True)
            raise RuntimeError(f"{v.key} failed: {first_lines(r.stderr)}")
        return d

    @staticmethod
    def measure_tool(name: str, argv: list, cwd: Path, records: int, reps: int = 1) -> dict:
        """A post tool on core 0, its output thrown away: time, memory, records/s. With
        `reps` runs, the median wall and CPU time and the largest memory (single runs on a
        shared VM vary by some 10 %)."""
        runs = []
        for _ in range(reps):
            r = run_measured(argv, cwd, None, 3600, cpu=0, stdout_to_null=True, sample_memory=True)
            runs.append(r)
            if r.rc != 0:
                break
        r = runs[-1]
        wall = statistics.median(x.wall for x in runs)
        res = {"wall_s": wall, "cpu_s": statistics.median(x.cpu for x in runs),
               "maxrss_mb": max(x.maxrss_kb for x in runs) / 1024,
               "peak_anon_mb": max(x.peak_anon_kb or 0 for x in runs) / 1024,
               "records": records, "rc": r.rc, "runs": len(runs),
               "wall_runs": [round(x.wall, 3) for x in runs]}
        if r.rc != 0:
            res["error"] = first_lines(r.stderr)
            log(f"{name} failed: {res['error']}")
        else:
            res["records_per_s"] = records / wall
        return res

    # -- phase: the post tool against llvm-xray account and uftrace report
    def phase_post(self) -> None:
        out = {}
        self.report["post"] = out
        native = self.by_key.get("native")
        if not native or native.status != "ok" or not self.hookprof:
            out["note"] = "no native trace variant or no hookprof"
            return
        traced_run, measure = self.traced_run, self.measure_tool

        # 1. hookprof on the large trace and on a trace 1/10 as long: speed, and peak memory
        #    against trace length.
        for label, calls in (("large", self.scale.post_calls), ("small", self.scale.post_calls // 10)):
            log(f"post tool: hookprof report on {2 * (calls + 2):,} records")
            d = traced_run(native, calls)
            try:
                trace = next(d.glob("*.hktrace"))
                hdr = read_hktrace_header(trace) or {}
                records = hdr.get("records", 2 * (calls + 2))
                res = measure("hookprof", [self.hookprof, "report", str(trace)], d, records)
                res["trace_bytes"] = trace.stat().st_size
                out[f"hookprof_{label}"] = res
            finally:
                shutil.rmtree(d, ignore_errors=True)

        # 2. The same program and number of calls through each tool's own post tool.
        calls = self.scale.cmp_calls
        records = 2 * (calls + 2)
        log(f"post tools on {records:,} records each")
        d = traced_run(native, calls)
        try:
            out["hookprof_cmp"] = measure("hookprof", [self.hookprof, "report", str(next(d.glob('*.hktrace')))],
                                          d, records)
        finally:
            shutil.rmtree(d, ignore_errors=True)
        xv = self.by_key.get("xray-fdr")
        xray = shutil.which("llvm-xray-19") or shutil.which("llvm-xray")
        if xv and xv.status == "ok" and xray:
            d = traced_run(xv, calls)
            try:
                logs = sorted(d.glob("xray-log.*"))
                if logs:
                    out["llvm_xray_account"] = measure(
                        "llvm-xray account",
                        [xray, "account", f"-instr_map={self.exes[('xray-fdr', 'micro')]}", str(logs[0])],
                        d, records)
                else:
                    out["llvm_xray_account"] = {"error": "XRay FDR wrote no log"}
            finally:
                shutil.rmtree(d, ignore_errors=True)
        else:
            out["llvm_xray_account"] = {"error": "XRay FDR variant or llvm-xray unavailable"}
        uv = self.by_key.get("uftrace")
        if uv and uv.status == "ok":
            d = traced_run(uv, calls)
            try:
                out["uftrace_report"] = measure("uftrace report",
                                                ["uftrace", "report", "-d", str(d / "uftrace.data")], d, records)
            finally:
                shutil.rmtree(d, ignore_errors=True)
        else:
            out["uftrace_report"] = {"error": "uftrace variant unavailable"}

    # -- phase: trace bytes per call pair on disk, beside the peers' output of the same runs
    def recorded_pairs(self, v: Variant, prog: str, d: Path) -> Optional[float]:
        """Call pairs a run of v recorded: the native trace's header; uftrace's records (16
        bytes each in its *.dat files, an entry and an exit a call with --no-libcall); XRay's
        calls counted by llvm-xray account."""
        if v.key.startswith("native"):
            return hktrace_pairs(d)
        if v.key == "uftrace":
            return uftrace_pairs(d)
        xray = shutil.which("llvm-xray-19") or shutil.which("llvm-xray")
        logs = sorted(d.glob("xray-log.*"))
        if v.key == "xray-fdr" and xray and logs:
            r = subprocess.run([xray, "account", f"-instr_map={self.exes[(v.key, prog)]}",
                                str(logs[0])], cwd=d, capture_output=True, text=True)
            counts = [int(m.group(1)) for m in re.finditer(r"^\s*\d+\s+(\d+)\s+\[", r.stdout, re.M)]
            return float(sum(counts)) if counts else None
        return None

    def phase_size(self) -> None:
        """Bytes per call pair on disk for micro and Lua: the native trace (PACKED), the same
        with 16-byte records (HOOKCC_PACK=0), XRay FDR and uftrace, one run each; and the
        native runtime's time writing its buffers (its PAUSE chunks: packing included)."""
        out = {}
        self.report["size"] = out
        progs = [("micro", [str(self.scale.cmp_calls)])]
        if self.lua_dir and ("native", "lua") in self.exes:
            progs.append(("lua", [str(self.scale.lua_rounds)]))
        for prog, args in progs:
            if prog == "micro":
                self.current_micro_calls = int(args[0])
            res = out[prog] = {}
            for key in ("native", "native-raw", "native-ring", "native-profile", "native-min-duration",
                        "xray-fdr", "uftrace"):
                v = self.by_key.get(key)
                if not v or v.status != "ok" or (key, prog) not in self.exes:
                    continue
                log(f"size: {prog} under {key}")
                r, nbytes, d = self.run_variant(v, prog, args, keep=True)
                try:
                    if r.rc != 0:
                        res[key] = {"error": first_lines(r.stderr)}
                        continue
                    row = {"bytes": nbytes, "wall_s": r.wall,
                           "bytes_per_s": nbytes / r.wall if r.wall > 0 else None}
                    pairs = self.recorded_pairs(v, prog, d)
                    if pairs:
                        row["pairs"] = pairs
                        row["bytes_per_pair"] = nbytes / pairs
                    trace = next(d.glob("*.hktrace"), None)
                    if trace is not None and self.hookprof:
                        info = subprocess.run([self.hookprof, "info", str(trace)], capture_output=True,
                                              text=True).stdout
                        m = re.search(r"buffer writes:\s+(\d+) from inside hooks, ([\d.]+) ms", info)
                        if m:
                            row["buffer_writes"] = int(m.group(1))
                            row["write_ms"] = float(m.group(2))
                            if pairs:
                                row["write_ns_per_pair"] = row["write_ms"] * 1e6 / pairs
                    res[key] = row
                finally:
                    shutil.rmtree(d, ignore_errors=True)
            native = res.get("native", {}).get("bytes_per_pair")
            for key in ("native-raw", "xray-fdr", "uftrace"):
                peer = res.get(key, {}).get("bytes_per_pair")
                if native and peer:
                    res.setdefault("native", {})[f"vs_{key}"] = native / peer

    # -- phase: hookprof's views against the peers' converters, on the same calls
    def phase_views(self) -> None:
        """hookprof timeline / flame / speedscope / callgrind beside `uftrace dump --chrome`,
        `uftrace dump --flame-graph`, `llvm-xray convert --output-format=trace_event` and
        `llvm-xray stack`, each on a trace of the same micro calls; and hookprof's views on the
        large trace and on one a tenth as long, for their memory against trace length."""
        out = {}
        self.report["views"] = out
        native = self.by_key.get("native")
        if not native or native.status != "ok" or not self.hookprof:
            out["note"] = "no native trace variant or no hookprof"
            return
        hp = self.hookprof
        views = {
            "timeline": ["timeline"],
            "timeline_perfetto": ["timeline", "--format=perfetto"],
            "flame_folded": ["flame", "--format=folded"],
            "speedscope": ["speedscope"],
            "callgrind": ["callgrind"],
        }
        calls = self.scale.cmp_calls
        records = 2 * (calls + 2)
        # Each tool three times (once in quick mode), its median: the goals are ratios of
        # single-core times that vary by some 10 % from run to run here.
        reps = 1 if self.scale is QUICK else 3
        log(f"views on {records:,} records each, {reps} run(s) of each tool")
        d = self.traced_run(native, calls)
        try:
            trace = str(next(d.glob("*.hktrace")))
            for key, argv in views.items():
                out[f"hookprof_{key}"] = self.measure_tool(f"hookprof {key}", [hp] + argv + [trace], d, records,
                                                           reps)
        finally:
            shutil.rmtree(d, ignore_errors=True)
        uv = self.by_key.get("uftrace")
        if uv and uv.status == "ok":
            d = self.traced_run(uv, calls)
            try:
                data = str(d / "uftrace.data")
                out["uftrace_chrome"] = self.measure_tool(
                    "uftrace dump --chrome", ["uftrace", "dump", "--chrome", "-d", data], d, records, reps)
                out["uftrace_flame"] = self.measure_tool(
                    "uftrace dump --flame-graph", ["uftrace", "dump", "--flame-graph", "-d", data], d, records,
                    reps)
            finally:
                shutil.rmtree(d, ignore_errors=True)
        else:
            out["uftrace_chrome"] = out["uftrace_flame"] = {"error": "uftrace variant unavailable"}
        xv = self.by_key.get("xray-fdr")
        xray = shutil.which("llvm-xray-19") or shutil.which("llvm-xray")
        if xv and xv.status == "ok" and xray:
            d = self.traced_run(xv, calls)
            try:
                logs = sorted(d.glob("xray-log.*"))
                instr_map = f"-instr_map={self.exes[('xray-fdr', 'micro')]}"
                if logs:
                    out["xray_trace_event"] = self.measure_tool(
                        "llvm-xray convert", [xray, "convert", instr_map, "--output-format=trace_event",
                                              "-output=-", str(logs[0])], d, records, reps)
                    out["xray_stack"] = self.measure_tool(
                        "llvm-xray stack", [xray, "stack", instr_map, "-all-stacks",
                                            "-stack-format=flame", "-aggregation-type=time", str(logs[0])],
                        d, records, reps)
                else:
                    out["xray_trace_event"] = out["xray_stack"] = {"error": "XRay FDR wrote no log"}
            finally:
                shutil.rmtree(d, ignore_errors=True)
        else:
            out["xray_trace_event"] = out["xray_stack"] = {"error": "XRay FDR variant or llvm-xray unavailable"}
        # Memory against trace length: the streamed views on the large trace and a tenth of it.
        for label, n in (("large", self.scale.post_calls), ("small", self.scale.post_calls // 10)):
            log(f"views: hookprof timeline and flame on {2 * (n + 2):,} records")
            d = self.traced_run(native, n)
            try:
                trace = str(next(d.glob("*.hktrace")))
                for key in ("timeline", "flame_folded"):
                    out[f"hookprof_{key}_{label}"] = self.measure_tool(
                        f"hookprof {key}", [hp] + views[key] + [trace], d, 2 * (n + 2))
            finally:
                shutil.rmtree(d, ignore_errors=True)

    # -- the whole run
    def run(self) -> None:
        self.setup()
        self.build_all()
        s = self.scale
        phases = [
            ("callgrind", self.phase_callgrind),
            ("micro", lambda: self.phase_wall("micro", [str(s.wall_calls)], s.reps)),
            ("lua", lambda: self.lua_dir and (self.phase_wall("lua", [str(s.lua_rounds)], s.reps),
                                              self.estimate_lua_calls())),
            ("compile", self.phase_compile),
            ("size", self.phase_size),
            ("post", self.phase_post),
            ("views", self.phase_views),
        ]
        for name, phase in phases:
            if name not in self.args.phases:
                continue
            try:
                phase()
            except Exception as e:  # noqa: BLE001 - a phase that breaks is reported, the rest runs
                msg = f"{type(e).__name__}: {e}"
                self.report.setdefault("phase_errors", {})[name] = msg
                log(f"phase {name} failed: {msg}")
        self.report["machine"]["load_after"] = os.getloadavg()[0]

    def cleanup(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)


# ------------------------------------------------------------------------------------------
# Goals and output

def evaluate_goals(b: Bench) -> list:
    R = b.results
    comp = b.report.get("compile", {})
    post = b.report.get("post", {})

    def get(key, field_):
        return R.get(key, {}).get(field_)

    goals = []

    def goal(name, value, limit, fmt, ok_if_le=True, detail=""):
        if value is None:
            state = "not measured"
        else:
            state = "met" if ((value <= limit) if ok_if_le else (value >= limit)) else "NOT met"
        goals.append({"goal": name, "value": value, "limit": limit, "state": state,
                      "at_most": ok_if_le,
                      "shown": "—" if value is None else fmt.format(value), "detail": detail})

    goal("native trace: instructions per call pair", get("native", "ir_per_call"), 30, "{:.1f}")
    goal("HOOKCC_MODE=profile: instructions per call pair (the traced thread)",
         get("native-profile", "ir_per_call"), 40, "{:.1f}",
         detail=f"all threads, the writer's folding included: "
                f"{fmt(get('native-profile', 'ir_per_call_all_threads'))}")
    for prog in ("micro", "lua"):
        bpp = b.report.get("size", {}).get(prog, {}).get("native", {}).get("bytes_per_pair")
        goal(f"native trace: bytes per call pair on disk, {prog}", bpp, 8, "{:.2f}")
    n, l = get("native", "ns_per_call"), get("logger", "ns_per_call")
    goal("native trace: time per call vs the rdtsc TLS logger", None if n is None or not l else n / l, 1.25,
         "{:.2f}x", detail=f"native {n:.1f} ns, logger {l:.1f} ns" if n is not None and l else "")
    # CPU time: on a machine shared with other work the wall time of a 30 ms baseline run is
    # mostly waiting for a core, which makes wall ratios look better than they are.
    goal("native trace: Lua interpreter slowdown (CPU time)", get("native", "lua_cpu_ratio"), 8, "{:.2f}x",
         detail=(f"wall {get('native', 'lua_ratio'):.2f}x; rdtsc logger {get('logger', 'lua_cpu_ratio'):.2f}x CPU"
                 if get("native", "lua_ratio") and get("logger", "lua_cpu_ratio") else ""))
    e = get("empty", "ns_per_call")
    for k, name in (("ct-stack", "stack"), ("ct-log", "log")):
        c = get(k, "ns_per_call")
        goal(f"NITRO call trace {name}: time per call vs empty hooks",
             None if c is None or not e else c / e, 2, "{:.2f}x",
             detail=f"{c:.1f} ns vs {e:.1f} ns" if c is not None and e else "")
    for k, name in (("ct-stack", "stack"), ("ct-log", "log")):
        goal(f"NITRO call trace {name}: instructions per call pair", get(k, "ir_per_call"), 40, "{:.1f}")
    goal("NITRO function cost: instructions per call pair", get("fcost", "ir_per_call"), 35, "{:.1f}")
    o2, ni = comp.get("O2", {}), comp.get("noinline", {})
    goal("compile time of sqlite3.c -O2, hookcc --trace / clang-19 (CPU time)", o2.get("ratio_cpu"), 1.05,
         "{:.3f}x", detail=f"{ni['ratio_cpu']:.3f}x at -O2 -fno-inline" if ni.get("ratio_cpu") else "")
    goal("code bytes per instrumented function (sqlite3.c -O2 -fno-inline)", ni.get("bytes_per_function"), 24,
         "{:.1f}", detail=f"{o2['bytes_per_function']:.1f} at -O2, where hooks also change inlining"
         if o2.get("bytes_per_function") else "")
    large = post.get("hookprof_large", {})
    goal("post tool: records per second, one core", large.get("records_per_s"), 100e6, "{:,.0f}/s",
         ok_if_le=False, detail=f"{large.get('records', 0):,} records" if large else "")
    small = post.get("hookprof_small", {})
    mem = None
    if large.get("peak_anon_mb") and small.get("peak_anon_mb"):
        mem = large["peak_anon_mb"] / small["peak_anon_mb"]
    goal("post tool: peak anonymous memory, 10x longer trace / shorter one", mem, 1.25, "{:.2f}x",
         detail=(f"{small['peak_anon_mb']:.1f} MB -> {large['peak_anon_mb']:.1f} MB anonymous; peak RSS with "
                 f"the mapped trace {small['maxrss_mb']:.0f} MB -> {large['maxrss_mb']:.0f} MB") if mem else "")
    hx, xr = post.get("hookprof_cmp", {}), post.get("llvm_xray_account", {})
    sp = None
    if hx.get("wall_s") and xr.get("wall_s") and not xr.get("error") and not hx.get("error"):
        sp = xr["wall_s"] / hx["wall_s"]
    goal("post tool: speed vs llvm-xray account, same calls", sp, 10, "{:.1f}x", ok_if_le=False)
    views = b.report.get("views", {})

    def speedup(ours: str, theirs: str):
        a, t = views.get(ours, {}), views.get(theirs, {})
        if a.get("wall_s") and t.get("wall_s") and not a.get("error") and not t.get("error"):
            return t["wall_s"] / a["wall_s"]
        return None

    for ours, theirs, what in (("hookprof_timeline", "uftrace_chrome", "timeline vs uftrace dump --chrome"),
                               ("hookprof_timeline_perfetto", "uftrace_chrome",
                                "timeline --format=perfetto vs uftrace dump --chrome"),
                               ("hookprof_timeline", "xray_trace_event", "timeline vs llvm-xray convert trace_event"),
                               ("hookprof_flame_folded", "uftrace_flame", "flame vs uftrace dump --flame-graph"),
                               ("hookprof_flame_folded", "xray_stack", "flame vs llvm-xray stack")):
        goal(f"views: {what}, same calls", speedup(ours, theirs), 10, "{:.1f}x", ok_if_le=False)
    for key in ("timeline", "flame_folded"):
        lg, sm = views.get(f"hookprof_{key}_large", {}), views.get(f"hookprof_{key}_small", {})
        mem = lg["peak_anon_mb"] / sm["peak_anon_mb"] if lg.get("peak_anon_mb") and sm.get("peak_anon_mb") else None
        goal(f"views: {key} peak anonymous memory, 10x longer trace / shorter one", mem, 1.25, "{:.2f}x",
             detail=f"{sm['peak_anon_mb']:.1f} MB -> {lg['peak_anon_mb']:.1f} MB" if mem else "")
    return goals


def fmt(v, f="{:.1f}", dash="—"):
    return dash if v is None else f.format(v)


def print_table(b: Bench, goals: list) -> str:
    lines = []
    m = b.report["machine"]
    lines.append(f"hookcc benchmark ({b.scale.name}) — {m['date']} — {m['cpu']}, {m['cores']} cores")
    n1, n2 = b.scale.cg_calls
    lines.append(f"micro: Ir/call from callgrind at N={n1:,} and {n2:,}; ns/call and micro x at "
                 f"N={b.scale.wall_calls:,}; lua: workload.lua {b.scale.lua_rounds} rounds"
                 + (f" ({b.lua_calls:,} instrumented calls with hookcc --trace)" if b.lua_calls else "")
                 + f"; median of {b.scale.reps} interleaved runs")
    lines.append("")
    hdr = (f"{'variant':<48} {'Ir/call':>8} {'ns/call':>8} {'micro x':>8} {'lua x':>7} {'lua cpu':>8} "
           f"{'B/call':>7} {'lua Mcall':>9}  note")
    lines.append(hdr)
    lines.append("-" * len(hdr))
    for v in b.variants:
        r = b.results[v.key]
        note = list(v.note)
        if v.key in ("clang", "gcc"):
            if r.get("ir_per_iteration") is not None:
                note.insert(0, f"{r['ir_per_iteration']:.1f} Ir per loop iteration")
            if r.get("micro_loop_cpu_median_ns"):
                note.insert(1, f"{r['micro_loop_cpu_median_ns'] / (b.scale.wall_calls + 2):.2f} ns per iteration")
        if v.key not in ("clang", "gcc") and v.ref == "gcc":
            note.insert(0, "vs gcc baseline")
        if v.in_memory and r.get("bytes_per_call") is not None:
            note.insert(0, "records in memory")
        status = "" if v.status == "ok" else f"[{v.status}] "
        bpc = r.get("bytes_per_call")
        lua_calls = r.get("lua_calls")
        lines.append(f"{v.label:<48} {fmt(r.get('ir_per_call')):>8} {fmt(r.get('ns_per_call')):>8} "
                     f"{fmt(r.get('micro_ratio'), '{:.2f}'):>8} {fmt(r.get('lua_ratio'), '{:.2f}'):>7} "
                     f"{fmt(r.get('lua_cpu_ratio'), '{:.2f}'):>8} "
                     f"{fmt(bpc, '{:.1f}'):>7} {fmt(lua_calls / 1e6 if lua_calls else None, '{:.1f}'):>9}  "
                     f"{status}{'; '.join(note)}")
    comp = b.report.get("compile", {})
    lines.append("")
    for cfg in ("O2", "noinline"):
        c = comp.get(cfg)
        if not c:
            continue
        flags = " ".join(c["flags"])
        lines.append(f"sqlite3.c {flags}: compile CPU time hookcc --trace / clang-19 = {c['ratio_cpu']:.3f}x "
                     f"({median(c['cpu_s']['hookcc']):.2f} s / {median(c['cpu_s']['clang']):.2f} s; wall "
                     f"{c['ratio_wall']:.3f}x); code {c['text_clang']:,} -> {c['text_hookcc']:,} bytes over "
                     f"{c['entry_call_sites']:,} instrumented bodies = {fmt(c.get('bytes_per_function'))} bytes each")
    if comp.get("note"):
        lines.append(f"sqlite3.c: {comp['note']}")
    size = b.report.get("size", {})
    if size:
        lines.append("")
        lines.append(f"{'trace size, one run each':<44} {'bytes':>14} {'call pairs':>13} {'B/pair':>7} "
                     f"{'write ms':>9} {'ns/pair':>8} {'B/s of run':>11}")
        names = {"native": "hookcc --trace (PACKED)", "native-raw": "hookcc --trace, HOOKCC_PACK=0",
                 "native-ring": "HOOKCC_MODE=ring (1 MiB rings)",
                 "native-profile": "HOOKCC_MODE=profile",
                 "native-min-duration": "HOOKCC_MIN_DURATION=5us",
                 "xray-fdr": "XRay FDR", "uftrace": "uftrace record"}
        for prog, rows in size.items():
            for key, name in names.items():
                p = rows.get(key)
                if p is None:
                    continue
                label = f"{prog}: {name}"
                if p.get("error"):
                    lines.append(f"{label:<44} {p['error']}")
                    continue
                lines.append(f"{label:<44} {p['bytes']:>14,} {fmt(p.get('pairs'), '{:,.0f}'):>13} "
                             f"{fmt(p.get('bytes_per_pair'), '{:.3f}'):>7} {fmt(p.get('write_ms'), '{:.1f}'):>9} "
                             f"{fmt(p.get('write_ns_per_pair'), '{:.2f}'):>8} "
                             f"{fmt(p.get('bytes_per_s'), '{:,.0f}'):>11}")
            n = rows.get("native", {})
            ratios = [f"{k}: {n[f'vs_{k}']:.3f}x" for k in ("native-raw", "xray-fdr", "uftrace") if n.get(f"vs_{k}")]
            if ratios:
                lines.append(f"  {prog}: hookcc's bytes per pair / theirs: " + ", ".join(ratios))
    post = b.report.get("post", {})
    if post:
        lines.append("")
        lines.append(f"{'post tool (one core)':<44} {'records':>13} {'wall s':>8} {'Mrec/s':>8} {'peak RSS':>9} "
                     f"{'anon MB':>8}")
        for key, name in (("hookprof_large", "hookprof report (large trace)"),
                          ("hookprof_small", "hookprof report (1/10 of it)"),
                          ("hookprof_cmp", "hookprof report"),
                          ("llvm_xray_account", "llvm-xray account (XRay FDR)"),
                          ("uftrace_report", "uftrace report")):
            p = post.get(key)
            if p is None:
                continue
            if p.get("error") and "wall_s" not in p:
                lines.append(f"{name:<44} {p['error']}")
                continue
            rate = p.get("records_per_s")
            lines.append(f"{name:<44} {p['records']:>13,} {p['wall_s']:>8.2f} "
                         f"{fmt(rate / 1e6 if rate else None, '{:.1f}'):>8} {p['maxrss_mb']:>9.0f} "
                         f"{p.get('peak_anon_mb', 0):>8.1f}"
                         + (f"  error: {p['error']}" if p.get("error") else ""))
        if post.get("note"):
            lines.append(post["note"])
    views = b.report.get("views", {})
    if views:
        lines.append("")
        lines.append(f"{'views (core 0, output discarded, median)':<44} {'records':>13} {'wall s':>8} {'Mrec/s':>8} "
                     f"{'peak RSS':>9} {'anon MB':>8}")
        rows = [("hookprof_timeline", "hookprof timeline (Chrome JSON)"),
                ("hookprof_timeline_perfetto", "hookprof timeline --format=perfetto"),
                ("uftrace_chrome", "uftrace dump --chrome"),
                ("xray_trace_event", "llvm-xray convert trace_event (FDR)"),
                ("hookprof_flame_folded", "hookprof flame --format=folded"),
                ("uftrace_flame", "uftrace dump --flame-graph"),
                ("xray_stack", "llvm-xray stack -stack-format=flame (FDR)"),
                ("hookprof_speedscope", "hookprof speedscope"),
                ("hookprof_callgrind", "hookprof callgrind"),
                ("hookprof_timeline_large", "hookprof timeline (large trace)"),
                ("hookprof_timeline_small", "hookprof timeline (1/10 of it)"),
                ("hookprof_flame_folded_large", "hookprof flame (large trace)"),
                ("hookprof_flame_folded_small", "hookprof flame (1/10 of it)")]
        for key, name in rows:
            p = views.get(key)
            if p is None:
                continue
            if p.get("error") and "wall_s" not in p:
                lines.append(f"{name:<44} {p['error']}")
                continue
            rate = p.get("records_per_s")
            lines.append(f"{name:<44} {p['records']:>13,} {p['wall_s']:>8.2f} "
                         f"{fmt(rate / 1e6 if rate else None, '{:.1f}'):>8} {p['maxrss_mb']:>9.0f} "
                         f"{p.get('peak_anon_mb', 0):>8.1f}"
                         + (f"  error: {p['error']}" if p.get("error") else ""))
        if views.get("note"):
            lines.append(views["note"])
    lines.append("")
    lines.append("goals")
    for g in goals:
        lim = g["limit"]
        lim_s = f"{lim:,.0f}" if lim >= 1000 else f"{lim:g}"
        rel = "≤" if g["at_most"] else "≥"
        lines.append(f"  {g['state']:<13} {g['goal']}: {g['shown']} (goal {rel} {lim_s})"
                     + (f" — {g['detail']}" if g["detail"] else ""))
    for name, msg in b.report.get("phase_errors", {}).items():
        lines.append(f"phase {name} failed: {msg}")
    hk = b.report.get("hookcc", {})
    if hk.get("note"):
        lines.append("")
        lines.append("hookcc: " + hk["note"].strip())
    lines.append(f"load average: {m['load_before']:.2f} before, {m.get('load_after', 0):.2f} after "
                 f"(other work on the machine makes times noisier; callgrind counts are not affected)")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions, smaller workloads (minutes)")
    ap.add_argument("--variants", type=lambda s: s.split(","), default=None,
                    help="only these variants (comma-separated keys; the baselines always run): "
                         + ",".join(v.key for v in make_variants(QUICK)))
    ap.add_argument("--phases", type=lambda s: s.split(","),
                    default=["callgrind", "micro", "lua", "compile", "size", "post", "views"],
                    help="only these phases: callgrind,micro,lua,compile,size,post,views")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="parallel compiles")
    ap.add_argument("--no-build", action="store_true", help="use the hookcc already in target/")
    ap.add_argument("--no-install", action="store_true", help="never run apt-get")
    ap.add_argument("--no-cache", action="store_true", help="rebuild every program (cache: ~/.cache/hookcc-bench)")
    ap.add_argument("--tmpdir", default=None, help="where builds and traces go (default: /dev/shm if it has 8 GB free, else $TMPDIR or /tmp)")
    ap.add_argument("--output", default=None, help="JSON results file (default: bench/results/<date>.json)")
    args = ap.parse_args()
    scale = QUICK if args.quick else FULL
    b = Bench(args, scale)
    try:
        b.run()
    except KeyboardInterrupt:
        log("interrupted")
        b.cleanup()
        return 130
    except BaseException:
        b.cleanup()  # traces of several GB may sit in /dev/shm
        raise
    goals = evaluate_goals(b)
    table = print_table(b, goals)
    print(table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = Path(args.output) if args.output else RESULTS / f"{stamp}-{scale.name}.json"
    doc = {
        "scale": scale.__dict__,
        "machine": b.report.get("machine"),
        "hookcc": b.report.get("hookcc"),
        "sources": b.report.get("sources"),
        "packages": b.report.get("packages"),
        "lua_calls": b.lua_calls,
        "variants": {v.key: {"label": v.label, "status": v.status, "notes": v.note, "reference": v.ref,
                             **b.results[v.key]} for v in b.variants},
        "compile": b.report.get("compile"),
        "post": b.report.get("post"),
        "size": b.report.get("size"),
        "views": b.report.get("views"),
        "phase_errors": b.report.get("phase_errors"),
        "goals": goals,
        "table": table,
    }
    path.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    shutil.copyfile(path, RESULTS / f"latest-{scale.name}.json")
    log(f"results: {path}")
    b.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
