"""What every benchmark script shares: the paths, the pinned scale of a run, small helpers
(logging, medians, byte counts), running a program measured (time, CPU, memory), setup
(Debian packages, hookcc built) and reading what the runs leave (hookbench lines, .hktrace
headers, uftrace data).

May import: the standard library only."""

from __future__ import annotations

import glob
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[2]  # bench/benchlib/common.py
BENCH = ROOT / "bench"
RESULTS = BENCH / "results"

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
    # Without a build, the profile built last: a release build left from an older checkout
    # would otherwise be measured instead of the code at hand (it once refused an option the
    # benchmark passes).
    def built(profile: str) -> float:
        paths = [ROOT / "target" / profile / n for n in ("hookcc", "hookprof")]
        return min(p.stat().st_mtime for p in paths) if all(p.exists() for p in paths) else -1.0
    profiles = ["release", "debug"]
    if not build:
        profiles.sort(key=built, reverse=True)
    for profile in profiles:
        hk = ROOT / "target" / profile / "hookcc"
        hp = ROOT / "target" / profile / "hookprof"
        if hk.exists() and hp.exists() and info["hookcc"] is None:
            info["hookcc"], info["hookprof"] = str(hk), str(hp)
            info["profile"] = profile
    if info["profile"] == "debug":
        info["note"] += " (using the debug hookcc: compile times are not representative)"
    return info


# ------------------------------------------------------------------------------------------
# What the runs leave

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
