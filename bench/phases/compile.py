"""The `compile` phase: compile time of sqlite3.c with each compiler, and the code bytes each
instrumentation adds per instrumented function.

A mixin of bench.Bench: `self` is the Bench (its variants, exes, results, scale,
work directory, run_variant, traced_run, measure_tool). May import: benchlib only, never
bench.py or another phase."""

from __future__ import annotations

import re
import struct
import subprocess
from pathlib import Path

from benchlib.common import first_lines, log, median, run_measured


class CompilePhase:
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
