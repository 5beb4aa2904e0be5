#!/usr/bin/env python3
"""hookcc on Rust code beside rustc's own instrumentations: one command builds the crate
bench/rust (rbench) once per variant, runs its two workloads, prints a table and writes
bench/results/rust-latest.json. docs/performance.md ("Rust") says how to read it.

    python3 bench/rust_bench.py --quick     # about two minutes
    python3 bench/rust_bench.py             # the full run

Variants (all `cargo build --release --target <host>` of the same crate; RUSTFLAGS differ)
  plain        no instrumentation: the baseline
  empty        hookcc's pass with -finstrument-functions' hooks, linked to empty ones
               (bench/empty_hooks.c): the cost of the two calls alone
  logger       the same hooks linked to bench/rdtsc_logger.c: the floor of a timed tracer
  native       hookcc --trace (`hookcc --rustflags --trace`): at --release the hooks go in after
               inlining (`--hook-placement=auto`, the default)
  native-src   hookcc --trace --hook-placement=source: every source-level call
  native-crate the same with --hook-exclude-crate=std,core,alloc
  native-min   the same with --hook-min-size=20
  native-crate-after  --hook-exclude-crate=std,core,alloc, after inlining
  xray         rustc -Zinstrument-xray=always, XRay basic mode (clang-19's runtime, linked by
               clang-19 -fxray-instrument), every function patched at start
  uftrace      rustc -Zinstrument-mcount -Cforce-frame-pointers=yes, run under uftrace record

Workloads
  micro N      leaf() called N times from bench_run() (bench/rust/src/main.rs)
  json R       R rounds of serde_json parse + serialize of a generated 400-object document

Measures
  Ir/call      instructions per call pair, callgrind collecting inside bench_run() only, two N
               so start-up and the fixed part cancel: ((V(N2)-V(N1)) - (P(N2)-P(N1)))/(N2-N1)
  micro x      median CPU time of the timed loop, variant / plain
  json x       the same for the json workload
  / floor      the variant's json time / the logger's: how far above two timestamps per call
  pairs/round  call pairs the tracer recorded in one json round (runs of 2 and 4 rounds)
  ns/pair      json time over plain, per recorded pair: what one traced call costs (the tools
               do not trace the same calls: XRay and uftrace place their hooks after inlining,
               as hookcc's default does at --release; native-src counts every source-level call)
  top 10       perf record of the plain build's json run (DWARF call chains, linux-perf): how
               many of perf's 10 top functions are in each native variant's 10 top exclusive
               (hookprof report), by perf's self time, among rbench's own functions, and with
               libc's samples given to their caller as a trace does (--no-sampler: skipped)

As bench/bench.py: nothing fails on a missing tool or a failed variant, each is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchlib.common import (  # noqa: E402  (the shared toolbox of the benchmarks)
    BENCH,
    RESULTS,
    ROOT,
    default_tmpdir,
    ensure_hookcc,
    first_lines,
    hktrace_pairs,
    log,
    median,
    run_measured,
    tool_version,
    uftrace_pairs,
)
import benchlib.common as _bench  # noqa: E402
from placement import PERF_HZ, agreement, perf_self, report_rows, top_exclusive  # noqa: E402


def normalize_rust(d: dict) -> dict:
    """Symbol names as both tools print them: without a legacy mangling's `::h<hash>` or the
    ` (crate.hash-cgu.N)` hookprof adds to a local symbol."""
    return {re.sub(r"(::h[0-9a-f]{16}| \([^()]*-cgu\.\d+\))$", "", k): v for k, v in d.items()}

APT_PACKAGES = {
    "clang-19": "links the XRay variant and compiles the C hooks",
    "libclang-rt-19-dev": "the XRay runtime",
    "uftrace": "uftrace record",
    "valgrind": "instructions per call (callgrind)",
    "linux-perf": "perf record: the sampler the top-10 functions are compared with",
}

QUICK = {"cg": (50_000, 300_000), "micro": 3_000_000, "json": 30, "reps": 5, "perf_runs": 3}
# json: each round records 1.4 M call pairs with hookcc (45 MB of trace): 60 rounds, 2.7 GB a run.
FULL = {"cg": (500_000, 3_000_000), "micro": 20_000_000, "json": 60, "reps": 7, "perf_runs": 5}


class Variant:
    def __init__(self, key: str, what: str, rustflags: list, c_object: str = "",
                 env: dict | None = None, wrap: list | None = None, cg_children: bool = False):
        self.key, self.what, self.rustflags = key, what, rustflags
        self.c_object, self.env, self.wrap = c_object, env or {}, wrap or []
        self.cg_children = cg_children
        self.exe: Path | None = None
        self.status = "ok"
        self.notes: list = []
        self.pairs: dict = {}  # recorded call pairs per micro iteration and per json round


def host_triple() -> str:
    out = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    return re.search(r"^host: (\S+)", out, re.M).group(1)


def rustflags_of(hookcc: str, options: list) -> list:
    r = subprocess.run([hookcc, "--rustflags"] + options, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(first_lines(r.stderr))
    return r.stdout.split()


def make_variants(hookcc: str, work: Path) -> list:
    gcc_style = rustflags_of(hookcc, ["-finstrument-functions"])
    xray_opts = "patch_premain=true xray_mode=xray-basic verbosity=0"
    return [
        Variant("plain", "no instrumentation (rustc -O)", []),
        Variant("empty", "hookcc pass, empty hooks", gcc_style, c_object="empty_hooks"),
        Variant("logger", "hookcc pass, rdtsc TLS logger (the floor)", gcc_style,
                c_object="rdtsc_logger", env={"HOOKLOG_OUTPUT": "rdtsc.hklog"}),
        Variant("native", "hookcc --trace (after inlining at --release)",
                rustflags_of(hookcc, ["--trace"]), env={"HOOKCC_OUTPUT": "trace.hktrace"}),
        Variant("native-src", "hookcc --trace --hook-placement=source",
                rustflags_of(hookcc, ["--trace", "--hook-placement=source"]),
                env={"HOOKCC_OUTPUT": "trace.hktrace"}),
        Variant("native-crate", "… source, --hook-exclude-crate=std,core,alloc",
                rustflags_of(hookcc, ["--trace", "--hook-placement=source",
                                      "--hook-exclude-crate=std,core,alloc"]),
                env={"HOOKCC_OUTPUT": "trace.hktrace"}),
        Variant("native-min", "… source, --hook-min-size=20",
                rustflags_of(hookcc, ["--trace", "--hook-placement=source", "--hook-min-size=20"]),
                env={"HOOKCC_OUTPUT": "trace.hktrace"}),
        Variant("native-min50", "hookcc --trace --hook-min-size=50 (after inlining)",
                rustflags_of(hookcc, ["--trace", "--hook-min-size=50"]),
                env={"HOOKCC_OUTPUT": "trace.hktrace"}),
        Variant("native-crate-after", "… after inlining, --hook-exclude-crate=std,core,alloc",
                rustflags_of(hookcc, ["--trace", "--hook-exclude-crate=std,core,alloc"]),
                env={"HOOKCC_OUTPUT": "trace.hktrace"}),
        Variant("xray", "rustc -Zinstrument-xray, XRay basic",
                ["-Zinstrument-xray=always", "-Clinker=clang-19", "-Clink-arg=-fxray-instrument"],
                env={"XRAY_OPTIONS": xray_opts, "XRAY_BASIC_OPTIONS": "func_duration_threshold_us=0"}),
        Variant("uftrace", "rustc -Zinstrument-mcount, uftrace record",
                ["-Zinstrument-mcount", "-Cforce-frame-pointers=yes"],
                wrap=["uftrace", "record", "--no-libcall", "-d", "uftrace.data"], cg_children=True),
    ]


def build(v: Variant, crate: Path, work: Path, triple: str) -> None:
    flags = list(v.rustflags)
    if v.c_object:
        obj = work / f"{v.c_object}.o"
        if not obj.exists():
            r = subprocess.run(["clang-19", "-O2", "-fPIC", "-c", str(BENCH / f"{v.c_object}.c"),
                                "-o", str(obj)], capture_output=True, text=True)
            if r.returncode != 0:
                raise RuntimeError(f"{v.c_object}.c: {first_lines(r.stderr)}")
        flags.append(f"-Clink-arg={obj}")
    target_dir = work / f"target-{v.key}"
    env = dict(os.environ, RUSTC_BOOTSTRAP="1", RUSTFLAGS=" ".join(flags),
               CARGO_TARGET_DIR=str(target_dir))
    env.pop("CARGO_ENCODED_RUSTFLAGS", None)
    # --target: RUSTFLAGS reach only the crates built for the target, not build scripts.
    r = subprocess.run(["cargo", "build", "--release", "--quiet", "--locked", "--target", triple],
                       cwd=crate, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(first_lines(r.stderr, 4))
    v.exe = target_dir / triple / "release" / "rbench"


def run(v: Variant, args: list, d: Path, valgrind: list | None = None, env_extra: dict | None = None):
    env = dict(os.environ, **v.env, **(env_extra or {}))
    argv = (valgrind or []) + v.wrap + [str(v.exe)] + [str(a) for a in args]
    return run_measured(argv, d, env, 3600)


def loop_cpu_ns(stderr: str):
    m = re.search(r"hookbench: loop_ns=(\d+) loop_cpu_ns=(\d+)", stderr)
    return int(m.group(2)) if m else None


def callgrind_ir(v: Variant, n: int, work: Path) -> tuple:
    d = Path(tempfile.mkdtemp(prefix=f"cg-{v.key}-", dir=work))
    try:
        vg = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={d}/cg.%p.out",
              "--toggle-collect=bench_run"]
        if v.cg_children:
            vg.append("--trace-children=yes")
        if v.key == "xray":
            vg.append("--smc-check=all")  # XRay patches its sleds at start
        r = run(v, ["micro", n], d, vg)
        if r.rc != 0:
            raise RuntimeError(f"exit status {r.rc}: {first_lines(r.stderr)}")
        for f in d.glob("cg.*.out"):
            text = f.read_text(errors="replace")
            m = re.search(r"^cmd:\s*(\S+)", text, re.M)
            if m and Path(m.group(1)).name == "rbench":
                t = re.search(r"^(?:totals|summary):\s*(\d+)", text, re.M)
                return int(t.group(1)), r.stdout.strip()
        raise RuntimeError("no callgrind output for rbench")
    finally:
        shutil.rmtree(d, ignore_errors=True)


def recorded_pairs(v: Variant, d: Path) -> int | None:
    """Entry/exit pairs the variant's tracer wrote in directory d, or None if it writes none."""
    if v.key.startswith("native"):
        return hktrace_pairs(d)
    if v.key == "logger":  # 16-byte records, no header
        return sum(f.stat().st_size for f in d.glob("*.hklog")) // 32
    if v.key == "xray":  # basic mode: a 32-byte file header, then 32 bytes per entry or exit
        return sum(f.stat().st_size - 32 for f in d.glob("xray-log.*")) // 64
    if v.key == "uftrace":
        return uftrace_pairs(d)
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller N and fewer repetitions")
    ap.add_argument("--no-install", action="store_true", help="do not apt-get missing packages")
    ap.add_argument("--no-build", action="store_true", help="use the hookcc already built")
    ap.add_argument("--variants", help="comma-separated variants to run (default: all)")
    ap.add_argument("--no-callgrind", action="store_true", help="skip the Ir/call runs")
    ap.add_argument("--no-sampler", action="store_true",
                    help="skip the perf record phase (agreement of the top-10 functions)")
    args = ap.parse_args()
    scale = QUICK if args.quick else FULL

    _bench.APT_PACKAGES = APT_PACKAGES
    missing = {p: why for p, why in _bench.ensure_packages(not args.no_install).items() if why}
    hk = ensure_hookcc(not args.no_build)
    hookprof_path = hk["hookprof"]
    if not hk["hookcc"]:
        log("hookcc is not built: run cargo build --workspace first")
        return 1
    if not args.no_build:
        log("scripts/build-plugins.sh --release (the pass for rustc's LLVM)")
        r = subprocess.run([str(ROOT / "scripts/build-plugins.sh"), "--release"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            log(f"build-plugins.sh failed: {first_lines(r.stderr)}")
    triple = host_triple()
    work = Path(tempfile.mkdtemp(prefix="hookcc-rust-bench-", dir=default_tmpdir()))
    crate = work / "rbench"
    shutil.copytree(BENCH / "rust", crate, ignore=shutil.ignore_patterns("target"))
    results: dict = {"scale": "quick" if args.quick else "full", "host": triple,
                     "rustc": tool_version(["rustc", "--version"]),
                     "missing_packages": missing, "variants": {}}
    try:
        variants = make_variants(hk["hookcc"], work)
        if args.variants:
            wanted = args.variants.split(",")
            variants = [v for v in variants if v.key == "plain" or v.key in wanted]
        for v in variants:
            log(f"build {v.key}")
            try:
                build(v, crate, work, triple)
            except RuntimeError as e:
                v.status = f"build failed: {e}"
        ok = [v for v in variants if v.status == "ok"]

        # Reference outputs; and the call pairs each tracer records in a json round and in a
        # micro iteration (runs of 2 and 4 rounds, of 1000 and 2000 calls: the difference).
        reference = {}
        for v in ok:
            d = Path(tempfile.mkdtemp(prefix=f"check-{v.key}-", dir=work))
            counts = {}
            for w, n in (("micro", 1000), ("micro", 2000), ("json", 2), ("json", 4)):
                for old in d.iterdir():
                    shutil.rmtree(old) if old.is_dir() else old.unlink()
                r = run(v, [w, n], d)
                if r.rc != 0:
                    v.status = f"{w} failed: exit {r.rc}: {first_lines(r.stderr)}"
                    break
                reference.setdefault((w, n), r.stdout)
                if r.stdout != reference[(w, n)]:
                    v.status = (f"{w} {n} printed {r.stdout.strip()!r}, plain printed "
                                f"{reference[(w, n)].strip()!r}")
                    break
                counts[(w, n)] = recorded_pairs(v, d)
            shutil.rmtree(d, ignore_errors=True)
            if v.status == "ok" and None not in counts.values() and counts:
                v.pairs = {"micro": (counts[("micro", 2000)] - counts[("micro", 1000)]) / 1000,
                           "json": (counts[("json", 4)] - counts[("json", 2)]) / 2}
        ok = [v for v in variants if v.status == "ok"]

        # Bytes on disk per recorded call pair: one json run of each tracer, and the native
        # trace once more with 16-byte records (HOOKCC_PACK=0): what PACKED saves.
        sizes: dict = {}
        for v in ok:
            runs = [(v.key, {})] + ([("native-raw", {"HOOKCC_PACK": "0"})] if v.key == "native-src" else [])
            for label, extra in runs:
                if v.key in ("plain", "empty"):
                    continue
                d = Path(tempfile.mkdtemp(prefix=f"size-{label}-", dir=work))
                r = run(v, ["json", scale["json"]], d, env_extra=extra)
                pairs = recorded_pairs(v, d) if r.rc == 0 else None
                if pairs:
                    on_disk = sum(f.stat().st_size for f in d.rglob("*") if f.is_file())
                    sizes[label] = {"bytes": on_disk, "pairs": pairs, "bytes_per_pair": on_disk / pairs}
                shutil.rmtree(d, ignore_errors=True)
        results["json_size"] = sizes

        # Agreement with a sampler (issue 24): perf record's top-10 self-time functions of the
        # plain build's json run against each native variant's top-10 exclusive (hookprof
        # report) of the same run. perf is installed with the packages above (linux-perf).
        plain_v = next((v for v in ok if v.key == "plain"), None)
        if plain_v and shutil.which("perf") and not args.no_sampler:
            d = Path(tempfile.mkdtemp(prefix="perf-", dir=work))
            samples = perf_self(plain_v.exe, ["json", str(scale["json"])], d,
                                dict(os.environ), scale["perf_runs"])
            shutil.rmtree(d, ignore_errors=True)
            samples = {view: normalize_rust(s) for view, s in samples.items()}
            for v in ok:
                if not v.key.startswith("native") or not samples:
                    continue
                # As many runs as perf's, sampled at perf's rate: like with like.
                runs_rows = []
                for _ in range(scale["perf_runs"]):
                    d = Path(tempfile.mkdtemp(prefix=f"top-{v.key}-", dir=work))
                    r = run(v, ["json", scale["json"]], d,
                            env_extra={"HOOKCC_SAMPLE_HZ": str(PERF_HZ)})
                    rows = report_rows(hookprof_path, d / "trace.hktrace") if r.rc == 0 else {}
                    shutil.rmtree(d, ignore_errors=True)
                    if rows:
                        runs_rows.append(rows)
                if runs_rows:
                    top = list(normalize_rust({k: 0 for k in top_exclusive(runs_rows)}))
                    results.setdefault("sampler", {})[v.key] = agreement(samples, top)

        n1, n2 = scale["cg"]
        ir = {}
        if shutil.which("valgrind") and not args.no_callgrind:
            for v in ok:
                log(f"callgrind {v.key} N={n1},{n2}")
                try:
                    ir[v.key] = (callgrind_ir(v, n1, work)[0], callgrind_ir(v, n2, work)[0])
                except RuntimeError as e:
                    v.notes.append(f"callgrind: {e}")
        # Timed runs, interleaved in a new random order each repetition.
        times: dict = {(v.key, w): [] for v in ok for w in ("micro", "json")}
        for rep in range(scale["reps"]):
            log(f"timed runs {rep + 1}/{scale['reps']}")
            order = [(v, w) for v in ok for w in ("micro", "json")]
            random.shuffle(order)
            for v, w in order:
                d = Path(tempfile.mkdtemp(prefix=f"t-{v.key}-", dir=work))
                r = run(v, [w, scale[w]], d)
                times[(v.key, w)].append(loop_cpu_ns(r.stderr) if r.rc == 0 else None)
                shutil.rmtree(d, ignore_errors=True)

        plain = {w: median(times.get(("plain", w), [])) for w in ("micro", "json")}
        floor = median(times.get(("logger", "json"), []))
        for v in variants:
            res = {"what": v.what, "status": v.status, "notes": v.notes,
                   "rustflags": " ".join(v.rustflags)}
            if v.key in ir and "plain" in ir:
                (i1, i2), (p1, p2) = ir[v.key], ir["plain"]
                res["callgrind"] = {"N1": n1, "N2": n2, "Ir1": i1, "Ir2": i2}
                if v.key != "plain":
                    res["ir_per_call"] = ((i2 - i1) - (p2 - p1)) / (n2 - n1)
            for w in ("micro", "json"):
                t = median(times.get((v.key, w), []))
                res[f"{w}_cpu_ns"] = t
                if t and plain[w]:
                    res[f"{w}_x"] = t / plain[w]
            t = res.get("json_cpu_ns")
            if t and floor:
                res["json_over_floor"] = t / floor
            res["pairs_per_micro_iteration"] = v.pairs.get("micro")
            res["pairs_per_json_round"] = v.pairs.get("json")
            # What one recorded pair costs: the time over plain, per pair the tool recorded
            # (the tools do not record the same calls: XRay and uftrace place their hooks after
            # inlining, hookcc before).
            if t and plain["json"] and v.pairs.get("json"):
                res["json_ns_per_pair"] = (t - plain["json"]) / (scale["json"] * v.pairs["json"])
            results["variants"][v.key] = res
    finally:
        shutil.rmtree(work, ignore_errors=True)

    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / ("rust-latest-quick.json" if args.quick else "rust-latest.json")
    out.write_text(json.dumps(results, indent=2) + "\n")

    def f(x, spec):
        return format(x, spec) if isinstance(x, (int, float)) else "—"

    lines = [f"Rust ({results['rustc']}, {triple}); micro: {scale['micro']:,} calls, "
             f"json: {scale['json']} rounds",
             f"{'variant':<18} {'Ir/call':>8} {'micro x':>8} {'json x':>8} {'/ floor':>8} "
             f"{'pairs/round':>12} {'ns/pair':>8}  what / status"]
    for key, res in results["variants"].items():
        status = "" if res["status"] == "ok" else f"  [{res['status']}]"
        notes = "".join(f"  [{n}]" for n in res["notes"])
        lines.append(f"{key:<18} {f(res.get('ir_per_call'), '8.1f')} {f(res.get('micro_x'), '8.2f')} "
                     f"{f(res.get('json_x'), '8.2f')} {f(res.get('json_over_floor'), '8.2f')} "
                     f"{f(res.get('pairs_per_json_round'), '12,.0f')} "
                     f"{f(res.get('json_ns_per_pair'), '8.1f')}  {res['what']}{status}{notes}")
    if results.get("json_size"):
        lines.append(f"json, {scale['json']} rounds: bytes on disk per recorded call pair: " + ", ".join(
            f"{k} {f(r['bytes_per_pair'], '.2f')} ({r['bytes']:,} B)" for k, r in results["json_size"].items()))
    for key, a in results.get("sampler", {}).items():
        lines.append(f"json: {key}: of perf's top 10, in hookcc's top 10 exclusive: "
                     f"{a['agree_self']} by self time, {a['agree_own']} among rbench's own "
                     f"functions, {a['agree_folded']} with libc's samples given to their caller")
    if missing:
        lines.append("missing packages: " + ", ".join(f"{p} ({w})" for p, w in missing.items()))
    print("\n".join(lines))
    log(f"results in {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
