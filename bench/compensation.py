#!/usr/bin/env python3
"""How close hook-overhead compensation gets to the uninstrumented program (issue 12).

The trace runtime times its own hooks at start (the OVERHEAD chunk) and hookprof subtracts
that time from every call (docs/trace-format.md, "OVERHEAD"). This script measures what is
left, against a build without hooks, in the same run:

  micro  bench/micro.c: run() calls leaf() N times. The time run() takes per iteration in the
         plain build (its own CLOCK_MONOTONIC measurement, median of 5 runs) against run()'s
         inclusive time per iteration in the trace, raw and compensated; and how that time
         splits between leaf and run's own loop, against the split of callgrind's instruction
         counts of the plain build (callgrind cannot time, but it can tell the shares).
  lua    Lua 5.4 (the lua-src crate's sources, as bench.py) running bench/workload.lua, built
         with -O2 -fno-inline on both sides so that every function of the trace is a function
         of the plain build: each of the top functions' share of the exclusive time, raw and
         compensated, against its share of the plain build's instructions (callgrind).

Prints a table and writes JSON (--output). Times depend on the machine and what else runs
on it; the shares and the instruction counts do not.

    python3 bench/compensation.py [--calls N] [--lua-rounds R] [--output FILE]
"""

import argparse
import csv
import io
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib.common import BENCH, ROOT, parse_hookbench  # noqa: E402  (bench.py's helpers)
from benchlib.crates import fetch_crate_sources  # noqa: E402  (bench.py's sources)


def run(argv, cwd, env=None, check=True):
    r = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    if check and r.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, argv))}: exit {r.returncode}: {r.stderr[-2000:]}")
    return r


def build(cc: list, sources: list, includes: list, flags: list, libs: list, out: Path) -> Path:
    argv = cc + flags + [f"-I{i}" for i in includes] + [str(s) for s in sources] + libs + ["-o", str(out)]
    run(argv, out.parent)
    return out


def report_rows(hookprof: str, trace: Path, raw: bool) -> dict:
    argv = [hookprof, "report", str(trace), "--format=csv"] + (["--no-compensation"] if raw else [])
    out = run(argv, trace.parent).stdout
    return {row["function"]: row for row in csv.DictReader(io.StringIO(out))}


def callgrind_self(argv: list, cwd: Path, toggle: str = "") -> dict:
    """Instructions per function (exclusive), from callgrind_annotate."""
    out_file = cwd / "cg.out"
    vg = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"]
    if toggle:
        vg.append(f"--toggle-collect={toggle}")
    run(vg + argv, cwd)
    text = run(["callgrind_annotate", "--inclusive=no", "--threshold=100", str(out_file)], cwd).stdout
    ir = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S+?):(\S+)", line)
        if m and m.group(2) not in ("PROGRAM", "Ir"):
            name = re.sub(r"'\d+$", "", m.group(3))  # callgrind's recursion levels: one function
            ir[name] = ir.get(name, 0) + int(m.group(1).replace(",", ""))
    return ir


def micro(args, work: Path, hookcc: str, hookprof: str) -> dict:
    d = work / "micro"
    d.mkdir()
    src = [BENCH / "micro.c"]
    plain = build(["clang-19"], src, [BENCH], ["-O2"], [], d / "plain")
    traced = build([hookcc], src, [BENCH], ["--trace", "-O2"], [], d / "traced")
    n = args.calls
    loop = []
    for _ in range(5):
        r = run([str(plain), str(n)], d)
        loop.append(parse_hookbench(r.stderr)["loop_ns"] / n)
    base_ns = statistics.median(loop)
    per = {"raw": [], "compensated": []}
    leaf_share = {"raw": [], "compensated": []}
    overhead = None
    for i in range(3):
        trace = d / f"micro{i}.hktrace"
        env = dict(os.environ, HOOKCC_OUTPUT=str(trace))
        run([str(traced), str(n)], d, env)
        for kind in per:
            rows = report_rows(hookprof, trace, kind == "raw")
            incl = float(rows["run"]["inclusive_ns"])
            per[kind].append(incl / n)
            leaf_share[kind].append(float(rows["leaf"]["exclusive_ns"]) / incl)
        if overhead is None:
            info = run([hookprof, "info", str(trace)], d).stdout
            overhead = next((l.split(":", 1)[1].strip() for l in info.splitlines()
                             if l.startswith("hook overhead:")), "?")
        trace.unlink()
    ir = callgrind_self([str(plain), "200000"], d, toggle="run")
    cg_leaf = ir.get("leaf", 0) / max(1, ir.get("leaf", 0) + ir.get("run", 0))
    res = {
        "calls": n,
        "overhead": overhead,
        "plain_ns_per_iteration": base_ns,
        "raw_ns_per_iteration": statistics.median(per["raw"]),
        "compensated_ns_per_iteration": statistics.median(per["compensated"]),
        "leaf_share_callgrind": cg_leaf,
        "leaf_share_raw": statistics.median(leaf_share["raw"]),
        "leaf_share_compensated": statistics.median(leaf_share["compensated"]),
    }
    return res


def overlap(args, work: Path, hookcc: str, hookprof: str) -> dict:
    """bench/overlap.c at -O0 and -O2: per call of work(K), the time the hooks added (traced
    minus plain, both the fastest of 5 runs) beside what compensation takes out (raw minus
    compensated inclusive time of run(), per call)."""
    d = work / "overlap"
    d.mkdir()
    n = args.overlap_calls
    res = {}
    for level in ("-O0", "-O2"):
        plain = build(["clang-19"], [BENCH / "overlap.c"], [], [level], [], d / f"plain{level}")
        traced = build([hookcc], [BENCH / "overlap.c"], [],
                       ["--trace", level] + args.overlap_flags.split(), [], d / f"traced{level}")
        rows_out = []
        for k in (0, 2, 5, 8, 12, 20, 50):
            def loop_ns(exe, env=None):
                r = run([str(exe), str(k), str(n)], d, env)
                return int(re.search(r"loop_ns=(\d+)", r.stderr).group(1)) / n
            base = min(loop_ns(plain) for _ in range(5))
            best, sub = None, None
            for _ in range(5):
                trace = d / "o.hktrace"
                t = loop_ns(traced, dict(os.environ, HOOKCC_OUTPUT=str(trace)))
                if best is None or t < best:
                    raw = float(report_rows(hookprof, trace, True)["run"]["inclusive_ns"])
                    comp = float(report_rows(hookprof, trace, False)["run"]["inclusive_ns"])
                    best, sub = t, (raw - comp) / n
                trace.unlink()
            rows_out.append({"k": k, "plain_ns": base, "traced_ns": best,
                             "hooks_added_ns": best - base, "compensation_ns": sub})
        res[level] = rows_out
    return res


def lua(args, work: Path, hookcc: str, hookprof: str) -> dict:
    d = work / "lua"
    d.mkdir()
    srcs = fetch_crate_sources(work)
    if not srcs.get("lua"):
        return {"error": "no Lua sources: " + srcs.get("note", "")}
    lua_dir = Path(srcs["lua"])
    sources = sorted(p for p in lua_dir.glob("*.c") if p.name not in ("lua.c", "luac.c", "onelua.c"))
    sources.append(BENCH / "lua_main.c")
    flags = ["-O2", "-fno-inline", "-DLUA_USE_LINUX", "-w"]
    plain = build(["clang-19"], sources, [lua_dir, BENCH], flags, ["-lm", "-ldl"], d / "plain")
    traced = build([hookcc], sources, [lua_dir, BENCH], ["--trace"] + flags, ["-lm", "-ldl"], d / "traced")
    script = [str(BENCH / "workload.lua"), str(args.lua_rounds)]
    ir = callgrind_self([str(plain)] + script, d)
    trace = d / "lua.hktrace"
    run([str(traced)] + script, d, dict(os.environ, HOOKCC_OUTPUT=str(trace)))
    # Only the functions both sides know: libc's (not traced) count as their callers' time in
    # the trace, and callgrind cannot give that back; shares are of these functions' total.
    rows = {kind: report_rows(hookprof, trace, kind == "raw") for kind in ("raw", "compensated")}
    common = [f for f in ir if f in rows["raw"]]
    total_ir = sum(ir[f] for f in common)
    shares = {}
    for kind, kind_rows in rows.items():
        total = sum(float(kind_rows[f]["exclusive_ns"]) for f in common)
        shares[kind] = {f: float(kind_rows[f]["exclusive_ns"]) / total for f in common}
    top = sorted(common, key=ir.get, reverse=True)[: args.top]
    table = []
    for f in top:
        table.append({"function": f, "callgrind": ir[f] / total_ir,
                      "raw": shares["raw"][f], "compensated": shares["compensated"][f]})
    err = {k: sum(abs(row[k] - row["callgrind"]) for row in table) for k in ("raw", "compensated")}
    return {"rounds": args.lua_rounds, "top": table,
            "sum_abs_share_error_raw": err["raw"], "sum_abs_share_error_compensated": err["compensated"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=3_000_000, help="leaf calls of micro (default 3 M)")
    ap.add_argument("--lua-rounds", type=int, default=3, help="rounds of workload.lua (default 3)")
    ap.add_argument("--top", type=int, default=12, help="Lua functions compared (default 12)")
    ap.add_argument("--overlap-calls", type=int, default=1_000_000,
                    help="calls of work() in the overlap phase (default 1 M)")
    ap.add_argument("--overlap-flags", default="",
                    help="more hookcc flags for the overlap phase's traced build, e.g. "
                         "--trace-clock=serialized")
    ap.add_argument("--phases", default="micro,lua,overlap", help="comma-separated phases")
    ap.add_argument("--output", default=None, help="JSON results (default: bench/results/compensation-<date>.json)")
    args = ap.parse_args()
    run(["cargo", "build", "--quiet", "--release", "-p", "hookcc", "-p", "hookprof"], ROOT)
    run([str(ROOT / "scripts" / "build-plugins.sh")], ROOT)
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    hookcc, hookprof = str(target / "release" / "hookcc"), str(target / "release" / "hookprof")
    work = Path(tempfile.mkdtemp(prefix="hookcc-compensation-"))
    try:
        phases = {"micro": micro, "lua": lua, "overlap": overlap}
        res = {name: fn(args, work, hookcc, hookprof) for name, fn in phases.items()
               if name in args.phases.split(",")}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for level, rows in res.get("overlap", {}).items():
        print(f"overlap {level}: ns per call of work(K): plain, traced, what the hooks added, "
              "what compensation takes out")
        for r in rows:
            print(f"  K={r['k']:<3} {r['plain_ns']:7.2f} {r['traced_ns']:7.2f} "
                  f"{r['hooks_added_ns']:7.2f} {r['compensation_ns']:7.2f}")
    m = res.get("micro")
    if m:
        print_micro(m)
    lu = res.get("lua")
    if lu:
        print_lua(lu)
    out = Path(args.output) if args.output else BENCH / "results" / f"compensation-{__import__('time').strftime('%Y%m%d-%H%M%S')}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=2) + "\n")
    print(f"results: {out}")
    return 0


def print_micro(m: dict) -> None:
    print(f"micro, {m['calls']:,} calls; hook overhead: {m['overhead']}")
    print(f"  run() per iteration: plain {m['plain_ns_per_iteration']:.2f} ns; traced raw "
          f"{m['raw_ns_per_iteration']:.2f} ns, compensated {m['compensated_ns_per_iteration']:.2f} ns "
          f"(residual {m['compensated_ns_per_iteration'] - m['plain_ns_per_iteration']:+.2f} ns)")
    print(f"  leaf's share of run(): callgrind {100 * m['leaf_share_callgrind']:.1f} %, raw "
          f"{100 * m['leaf_share_raw']:.1f} %, compensated {100 * m['leaf_share_compensated']:.1f} %")


def print_lua(lu: dict) -> None:
    if "error" in lu:
        print(f"lua: {lu['error']}")
    else:
        print(f"lua, workload.lua {lu['rounds']} rounds, -O2 -fno-inline: share of exclusive time vs callgrind's share of "
              "instructions, among the functions both see (libc's are not traced)")
        print(f"  {'function':<28} {'callgrind':>9} {'raw':>7} {'compensated':>11}")
        for row in lu["top"]:
            print(f"  {row['function']:<28} {100 * row['callgrind']:8.1f}% {100 * row['raw']:6.1f}% "
                  f"{100 * row['compensated']:10.1f}%")
        print(f"  sum of |share - callgrind's| over these: raw {100 * lu['sum_abs_share_error_raw']:.1f} points, "
              f"compensated {100 * lu['sum_abs_share_error_compensated']:.1f} points")


if __name__ == "__main__":
    sys.exit(main())
