"""The `views` phase: hookprof's views (timeline, flame, speedscope, callgrind) against the
peers' converters (uftrace dump --chrome, llvm-xray convert/stack) on the same calls.

A mixin of bench.Bench: `self` is the Bench (its variants, exes, results, scale,
work directory, run_variant, traced_run, measure_tool). May import: benchlib only, never
bench.py or another phase."""

from __future__ import annotations

import shutil

from benchlib.common import QUICK, log


class ViewsPhase:
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
