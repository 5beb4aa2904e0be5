"""The `micro` and `lua` phases: wall and CPU time of micro and of the Lua interpreter, each
variant's runs interleaved with the others' (one method, phase_wall, serves both), and the
calls of one Lua run estimated from its native trace.

A mixin of bench.Bench: `self` is the Bench (its variants, exes, results, scale,
work directory, run_variant, traced_run, measure_tool). May import: benchlib only, never
bench.py or another phase."""

from __future__ import annotations

import random
import shutil

from benchlib.common import first_lines, log, median, parse_hookbench, read_hktrace_header


class WallPhase:
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
