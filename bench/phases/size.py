"""The `size` phase: trace bytes per call pair on disk, beside the peers' output of the same runs.

A mixin of bench.Bench: `self` is the Bench (its variants, exes, results, scale,
work directory, run_variant, traced_run, measure_tool). May import: benchlib only, never
bench.py or another phase."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Optional

from benchlib.common import first_lines, hktrace_pairs, log, uftrace_pairs
from benchlib.variants import Variant


class SizePhase:
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
