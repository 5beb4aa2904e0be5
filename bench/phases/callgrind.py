"""The `callgrind` phase: instructions per call pair of micro under valgrind --tool=callgrind
(collecting inside run() only), and for the recording modes every thread's instructions.

A mixin of bench.Bench: `self` is the Bench (its variants, exes, results, scale,
work directory, run_variant, traced_run, measure_tool). May import: benchlib only, never
bench.py or another phase."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from benchlib.common import first_lines, log, run_measured
from benchlib.variants import Variant


class CallgrindPhase:
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
            if v.key not in ("native", "native-throttled", "native-off", "native-leaf-off", "native-ring",
                             "native-profile", "native-min-duration") \
                    or v.key not in raw:
                continue
            log(f"callgrind {v.key}, all threads")
            try:
                i1, i2 = (self.callgrind_ir(v, n, True)[0] for n in (n1, n2))
            except (RuntimeError, OSError) as e:
                self.note(v, f"callgrind (all threads): {e}")
                continue
            self.results[v.key]["ir_per_call_all_threads"] = ((i2 - i1) - (b2 - b1)) / (n2 - n1)
