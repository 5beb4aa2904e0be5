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

# Layout: this file is the command line, the Bench (setup, building, running a program, the
# phases in order) and the JSON it writes; each phase's methods are in phases/<phase>.py (a mixin
# of Bench), what every benchmark script shares in benchlib/ (paths, helpers, measured runs,
# crates, variants, builds, the goals and the table).

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

from benchlib.builder import BuildError, Builder
from benchlib.common import (BENCH, FULL, QUICK, RESULTS, ROOT, RunResult, Scale, default_tmpdir,
                             ensure_hookcc, ensure_packages, first_lines, glob_bytes, log, next_pow2,
                             run_measured, tool_version)
from benchlib.crates import fetch_crate_sources
from benchlib.report import evaluate_goals, print_table
from benchlib.variants import Variant, make_variants
from phases.callgrind import CallgrindPhase
from phases.compile import CompilePhase
from phases.post import PostPhase
from phases.size import SizePhase
from phases.views import ViewsPhase
from phases.wall import WallPhase


# ------------------------------------------------------------------------------------------
# The benchmark: setup, building, running, the phases (phases/) in order

class Bench(CallgrindPhase, WallPhase, CompilePhase, PostPhase, SizePhase, ViewsPhase):
    """One run of the benchmark; the phases' methods come from the mixins in phases/."""

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
