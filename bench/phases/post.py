"""The `post` phase: hookprof on a large native trace beside llvm-xray account and uftrace
report on theirs (time, memory, records per second).

A mixin of bench.Bench: `self` is the Bench (its variants, exes, results, scale,
work directory, run_variant, traced_run, measure_tool). May import: benchlib only, never
bench.py or another phase."""

from __future__ import annotations

import shutil

from benchlib.common import log, read_hktrace_header


class PostPhase:
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
