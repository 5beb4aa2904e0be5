"""The variants bench.py compares (`make_variants`): each a compiler, its flags, the runtime it
needs, the environment of its runs and where its trace goes.

May import: benchlib.common."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from benchlib.common import Scale


# ------------------------------------------------------------------------------------------
# Variants

@dataclass
class Variant:
    key: str
    label: str
    cc: str  # "clang", "gcc" or "hookcc"
    flags: list  # compile and link flags
    ref: str = "clang"  # the baseline it is compared with
    defines: list = field(default_factory=list)  # -D for the benchmark's own sources
    extra: Optional[str] = None  # bench/<extra>.c, compiled plainly and linked in
    runtime: Optional[str] = None  # runtime/src/<runtime>.c must exist
    tools: list = field(default_factory=list)  # packages / tools needed
    binary_of: Optional[str] = None  # runs the binary built for another variant
    env: Callable = lambda ctx, d, prog: {}  # noqa: E731
    wrap: Callable = lambda ctx, d, argv: argv  # noqa: E731
    trace_globs: list = field(default_factory=list)
    in_memory: bool = False  # records stay in memory: the program reports their bytes
    cg_children: bool = False  # callgrind must follow exec (uftrace)
    cg_smc: bool = False  # code patched at run time (XRay)
    ti_buffer: bool = False  # gets -DBENCH_TI_RECORDS=<records> sized for the program
    # set at run time
    status: str = "ok"
    note: list = field(default_factory=list)


def xray_env(mode: str):
    def env(ctx, d: Path, prog: str) -> dict:
        calls = ctx.expected_calls(prog)
        # FDR keeps every record in memory until the flush at the end and recycles its buffers
        # when they are all used: size them for every call (16 bytes a call pair, measured;
        # 24 for headroom). One large buffer per thread rather than many small ones: with
        # hundreds of 1 MiB buffers, llvm-xray 19's `account` rejected the trace of 2 M calls
        # or more ("Error processing record ... record-type: exit", an exit with an empty
        # stack), while the same calls in one buffer decode. buffer_size is an int flag.
        mib = 1 << 20
        buffer_size = min(((calls * 24) // mib + 2) * mib, (1 << 31) - mib)
        buffer_max = 2
        e = {
            "XRAY_OPTIONS": f"patch_premain=true xray_mode={mode} xray_logfile_base={d}/xray-log. verbosity=0",
            # 0: keep every call; the default (5 us) drops short calls, and a trace without them
            # could not be compared with the others.
            "XRAY_FDR_OPTIONS": f"func_duration_threshold_us=0 buffer_size={buffer_size} buffer_max={buffer_max}",
            "XRAY_BASIC_OPTIONS": "func_duration_threshold_us=0",
        }
        if mode == "xray-fdr":
            e["BENCH_XRAY_INIT_MODE"] = "xray-fdr"
        return e
    return env


def uftrace_wrap(ctx, d: Path, argv: list) -> list:
    # --no-libcall: trace the -pg functions only, as every other variant does (by default
    # uftrace also hooks every PLT call into libc).
    return ["uftrace", "record", "--no-libcall", "-d", str(d / "uftrace.data")] + argv


def make_variants(scale: Scale) -> list:
    ti_flags = ["--entry_parm=address", "--exit_parm=address", "--hook-runtime=ti", "-O2"]
    vs = [
        Variant("clang", "baseline clang-19 -O2", "clang", ["-O2"]),
        Variant("gcc", "baseline gcc -O2", "gcc", ["-O2"], ref="gcc"),
        Variant("empty", "empty hooks (gcc -finstrument-functions)", "gcc",
                ["-O2", "-finstrument-functions"], ref="gcc", extra="empty_hooks"),
        Variant("logger", "rdtsc TLS logger (clang -finstrument-functions)", "clang",
                ["-O2", "-finstrument-functions"], extra="rdtsc_logger",
                env=lambda ctx, d, prog: {"HOOKLOG_OUTPUT": str(d / "rdtsc.hklog")},
                trace_globs=["*.hklog"]),
        Variant("empty-native", "hookcc --trace calls, empty hooks", "hookcc",
                ["--trace", "--hook-runtime=none", "-O2"], extra="empty_hookcc_hooks"),
        Variant("empty-nitro", "hookcc -profile calls, empty hooks", "hookcc",
                ["-profile", "--hook-runtime=none", "-O2"], extra="empty_hookcc_hooks"),
        # Every call recorded (HOOKCC_THROTTLE=0): micro's leaf is what the throttle stops
        # recording, and the recording is what this variant measures.
        Variant("native", "hookcc --trace (native trace, every call recorded)", "hookcc",
                ["--trace", "-O2"], runtime="trace",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace"),
                                          "HOOKCC_THROTTLE": "0"},
                trace_globs=["*.hktrace"]),
        Variant("native-throttled", "hookcc --trace with its defaults (leaf throttled: counted)",
                "hookcc", ["--trace", "-O2"], runtime="trace", binary_of="native",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace")},
                trace_globs=["*.hktrace"]),
        Variant("native-nosample", "hookcc --trace without samples (HOOKCC_SAMPLE_HZ=0)",
                "hookcc", ["--trace", "-O2"], runtime="trace", binary_of="native",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace"),
                                          "HOOKCC_SAMPLE_HZ": "0", "HOOKCC_THROTTLE": "0"},
                trace_globs=["*.hktrace"]),
        Variant("native-off", "hookcc --trace, tracing off (HOOKCC_DISABLE=1)", "hookcc",
                ["--trace", "-O2"], runtime="trace", binary_of="native",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace"),
                                          "HOOKCC_DISABLE": "1"},
                trace_globs=["*.hktrace"]),
        Variant("native-leaf-off", "hookcc --trace, leaf switched off (HOOKCC_FUNCTIONS='!leaf')",
                "hookcc", ["--trace", "-O2"], runtime="trace", binary_of="native",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace"),
                                          "HOOKCC_FUNCTIONS": "!leaf"},
                trace_globs=["*.hktrace"]),
        Variant("native-raw", "hookcc --trace, 16-byte records (HOOKCC_PACK=0)", "hookcc",
                ["--trace", "-O2"], runtime="trace", binary_of="native",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace"),
                                          "HOOKCC_PACK": "0"},
                trace_globs=["*.hktrace"]),
        Variant("native-ring", "hookcc --trace, HOOKCC_MODE=ring (1 MiB rings)", "hookcc",
                ["--trace", "-O2"], runtime="trace", binary_of="native",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace"),
                                          "HOOKCC_MODE": "ring"},
                trace_globs=["*.hktrace"]),
        Variant("native-profile", "hookcc --trace, HOOKCC_MODE=profile", "hookcc",
                ["--trace", "-O2"], runtime="trace", binary_of="native",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace"),
                                          "HOOKCC_MODE": "profile"},
                trace_globs=["*.hktrace"]),
        Variant("native-min-duration", "hookcc --trace, HOOKCC_MIN_DURATION=5us", "hookcc",
                ["--trace", "-O2"], runtime="trace", binary_of="native",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace"),
                                          "HOOKCC_MIN_DURATION": "5us"},
                trace_globs=["*.hktrace"]),
        Variant("native-min20", "hookcc --trace --hook-min-size=20", "hookcc",
                ["--trace", "--hook-min-size=20", "-O2"], runtime="trace",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace")},
                trace_globs=["*.hktrace"]),
        Variant("native-min50", "hookcc --trace --hook-min-size=50", "hookcc",
                ["--trace", "--hook-min-size=50", "-O2"], runtime="trace",
                env=lambda ctx, d, prog: {"HOOKCC_OUTPUT": str(d / "trace.hktrace")},
                trace_globs=["*.hktrace"]),
        Variant("ct-stack", "NITRO call trace, stack", "hookcc",
                ["-profile", "--hook-runtime=calltrace", "-O2"], defines=["BENCH_NITRO_CALLTRACE=1"],
                runtime="calltrace", in_memory=True),
        Variant("ct-log", "NITRO call trace, log", "hookcc",
                ["-profile", "--hook-runtime=calltrace", "-O2"], defines=["BENCH_NITRO_CALLTRACE=2"],
                runtime="calltrace", in_memory=True),
        Variant("fcost", "NITRO function cost", "hookcc",
                ["-profile", "--hook-runtime=functioncost", "-O2"], defines=["BENCH_NITRO_FUNCTIONCOST"],
                runtime="functioncost", in_memory=True,
                env=lambda ctx, d, prog: {"BENCH_CALLS": str(ctx.expected_calls(prog))}),
        Variant("fcost-cpu", "NITRO function cost, --nitro-clock=thread-cpu", "hookcc",
                ["-profile", "--hook-runtime=functioncost", "--nitro-clock=thread-cpu", "-O2"],
                defines=["BENCH_NITRO_FUNCTIONCOST"], runtime="functioncost", in_memory=True,
                env=lambda ctx, d, prog: {"BENCH_CALLS": str(ctx.expected_calls(prog))}),
        Variant("hk-gprof", "hookcc --hook-runtime=gprof (arcs + SIGPROF)", "hookcc",
                ["--hook-runtime=gprof", "-O2"], runtime="gprof",
                env=lambda ctx, d, prog: {"HOOKCC_GMON_OUT": str(d / "gmon.out")},
                trace_globs=["gmon.out"]),
        Variant("pfp", "PFP pfpBegin/pfpEnd around each call (no hooks)", "hookcc",
                ["--hook-runtime=pfp", "-O2"], defines=["BENCH_PFP"], runtime="pfp",
                in_memory=True),
        Variant("ti-linear", "TI records, linear", "hookcc",
                ["--entry_hook=entry_hook", "--exit_hook=exit_hook"] + ti_flags,
                ti_buffer=True, runtime="ti",
                env=lambda ctx, d, prog: {"HOOKCC_TI_OUTPUT": str(d / "ti")},
                trace_globs=["*.bin"]),
        Variant("ti-circular", "TI records, circular", "hookcc",
                ["--entry_hook=entry_hook_circular", "--exit_hook=exit_hook_circular"] + ti_flags,
                ti_buffer=True, runtime="ti",
                env=lambda ctx, d, prog: {"HOOKCC_TI_OUTPUT": str(d / "ti")},
                trace_globs=["*.bin"]),
        Variant("xray-fdr", "XRay FDR (clang -fxray-instrument)", "clang",
                ["-O2", "-fxray-instrument", "-fxray-instruction-threshold=1"], defines=["BENCH_XRAY"],
                tools=["libclang-rt-19-dev"], env=xray_env("xray-fdr"), trace_globs=["xray-log.*"],
                cg_smc=True),
        Variant("xray-basic", "XRay basic", "clang",
                ["-O2", "-fxray-instrument", "-fxray-instruction-threshold=1"], defines=["BENCH_XRAY"],
                tools=["libclang-rt-19-dev"], binary_of="xray-fdr", env=xray_env("xray-basic"),
                trace_globs=["xray-log.*"], cg_smc=True),
        Variant("uftrace", "uftrace record (gcc -pg)", "gcc", ["-O2", "-pg"], ref="gcc",
                tools=["uftrace"], wrap=uftrace_wrap, trace_globs=["uftrace.data"],
                cg_children=True),
        Variant("gprof", "gprof (gcc -pg)", "gcc", ["-O2", "-pg"], ref="gcc", tools=["binutils"],
                binary_of="uftrace", trace_globs=["gmon.out"]),
    ]
    return vs
