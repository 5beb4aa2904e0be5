#!/usr/bin/env python3
"""The PACKED encoder (runtime/src/trace_pack.h) checked and measured alone, against another
revision's: byte-identical output and throttle statistics, and instructions a record.

    python3 bench/pack_check.py TRACE...                 # cmp against main's encoder
    python3 bench/pack_check.py --callgrind TRACE...     # and Ir/record of both (callgrind)
    python3 bench/pack_check.py --base HEAD~3 --synthetic-only

TRACEs are raw traces (a run with HOOKCC_PACK=0 HOOKCC_THROTTLE=0). Besides them, synthetic
raw traces are generated (seeded, reproducible) for what real runs rarely show: clocks that go
back or jump (the clock escape), recursion deeper than the predicted stack's ring, resync
records (exits of address 0), exits that are not of the top frame, tables that fill up, and
deltas of every varint length. Each trace is packed by bench/pack_check.c built on each
revision's trace_pack.h, with hkt_pack and with hkt_pack_timed (whose dump holds the table's
calls and ticks), at a cap of 1 MiB and at small caps (many chunks: the stop rule), and the
dumps compared byte for byte. Nothing is installed; clang-19 and (for --callgrind) valgrind
must be on PATH.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXIT_BIT = 2
EVENTS = 3


def header(records: int) -> bytes:
    return struct.pack("<8sBBHIQQQQQQ", b"HKTRACE\0", 1, 8, 4, 64, 1_000_000_000, 1, 0, 0,
                       records, 0)


def write_trace(path: Path, chunks: list[list[tuple[int, int]]]) -> None:
    with open(path, "wb") as f:
        f.write(header(sum(len(c) for c in chunks)))
        for c in chunks:
            payload = b"".join(struct.pack("<QQ", t & (2**64 - 1), w) for t, w in c)
            f.write(struct.pack("<IIQ", EVENTS, len(payload), 1))
            f.write(payload)


def synthetic(seed: int, n: int, functions: int, deep: bool) -> list[tuple[int, int]]:
    """A random walk over a call stack: mostly entries and exits of the top frame, with
    mispredicted exits, resync records, deep recursion and clock jumps mixed in."""
    rng = random.Random(seed)
    base = 0x401000
    pool = [base + 16 * rng.randrange(1 << 20) for _ in range(functions)]
    stack: list[int] = []
    now = rng.randrange(1 << 40)
    out = []
    while len(out) < n:
        x = rng.random()
        # deltas of every length: 1, 2 and more varint bytes, >= 2^58 (escape), backwards
        y = rng.random()
        if y < 0.80:
            now += rng.randrange(32)
        elif y < 0.95:
            now += rng.randrange(4096)
        elif y < 0.985:
            now += rng.randrange(1 << rng.randrange(12, 57))
        elif y < 0.990:
            now += (1 << 58) + rng.randrange(1 << 60)
        elif y < 0.995:
            now -= rng.randrange(1, 1 << 40)
        else:
            now += rng.randrange(1 << 64)
        if deep and x < 0.002:
            # recursion past the ring (256 frames), then back out, partly
            f = rng.choice(pool)
            depth = rng.randrange(200, 700)
            for _ in range(depth):
                stack.append(f)
                out.append((now, f))
                now += rng.randrange(8)
            for _ in range(rng.randrange(depth + 1)):
                out.append((now, stack.pop() | EXIT_BIT))
                now += rng.randrange(8)
            continue
        if x < 0.01 and stack:
            # a longjmp: frames popped without their exits, a resync record, maybe an entry
            # of a frame still on the stack
            k = rng.randrange(len(stack) + 1)
            del stack[len(stack) - k:]
            out.append((now, 0 | EXIT_BIT))
            if stack and rng.random() < 0.7:
                f = rng.choice(stack[-300:])
                out.append((now, f))
                i = len(stack) - 1 - stack[::-1].index(f)
                del stack[i + 1:]
            continue
        if x < 0.02:
            # an exit of something not on top (or of nothing)
            if stack and rng.random() < 0.5:
                i = rng.randrange(len(stack))
                f = stack[i]
                del stack[i:]
            else:
                f = rng.choice(pool)
            out.append((now, f | EXIT_BIT))
            continue
        if x < 0.025:
            out.append((now, rng.choice([0, 4, 8]) | rng.choice([0, EXIT_BIT])))
            continue
        if stack and (x < 0.5 or len(stack) > 40):
            out.append((now, stack.pop() | EXIT_BIT))
        else:
            # loops calling the same function, a small hot set, and the whole pool
            if out and rng.random() < 0.3 and not (out[-1][1] & EXIT_BIT):
                f = out[-1][1]
            elif rng.random() < 0.6:
                f = pool[rng.randrange(min(64, functions))]
            else:
                f = rng.choice(pool)
            stack.append(f)
            out.append((now, f))
    return out[:n]


def synthetic_traces(tmp: Path) -> list[Path]:
    made = []
    for name, seed, n, functions, deep, per_chunk in [
        ("syn-small", 1, 200_000, 50, False, 65536),
        ("syn-deep", 2, 300_000, 300, True, 65536),
        ("syn-wide", 3, 300_000, 20_000, True, 100_000),  # tables that fill up (4096)
        ("syn-tiny-chunks", 4, 50_000, 500, True, 7),
    ]:
        recs = synthetic(seed, n, functions, deep)
        path = tmp / f"{name}.raw"
        write_trace(path, [recs[i:i + per_chunk] for i in range(0, len(recs), per_chunk)])
        made.append(path)
    return made


def build(header_dir: Path, out: Path) -> None:
    subprocess.run(["clang-19", "-O2", "-gdwarf-4", "-I", str(header_dir), "-I",
                    str(ROOT / "runtime" / "src"), str(ROOT / "bench" / "pack_check.c"), "-o",
                    str(out)], check=True)


def callgrind(binary: Path, args: list[str], tmp: Path) -> float:
    out = tmp / "callgrind.out"
    r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        "--toggle-collect=pack_chunk", str(binary)] + args,
                       capture_output=True, text=True, check=True)
    records = int(r.stdout.split()[1])
    m = re.search(r"^summary:\s*(\d+)", out.read_text(), re.M)
    return int(m.group(1)) / records


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="*", type=Path)
    ap.add_argument("--base", default="main", help="revision to compare with (default main)")
    ap.add_argument("--callgrind", action="store_true", help="also Ir/record, both revisions")
    ap.add_argument("--synthetic-only", action="store_true")
    ap.add_argument("--caps", default="1048576,4096,200",
                    help="chunk caps in bytes (comma-separated)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="pack_check."))
    try:
        base_dir = tmp / "base"
        base_dir.mkdir()
        src = subprocess.run(["git", "-C", str(ROOT), "show",
                              f"{args.base}:runtime/src/trace_pack.h"],
                             capture_output=True, check=True).stdout
        (base_dir / "trace_pack.h").write_bytes(src)
        build(base_dir, tmp / "pack_base")
        build(ROOT / "runtime" / "src", tmp / "pack_new")
        traces = synthetic_traces(tmp) + ([] if args.synthetic_only else args.traces)
        failed = 0
        for t in traces:
            for timed in ([], ["--timed"]):
                for cap in args.caps.split(","):
                    dumps = []
                    for which in ("base", "new"):
                        d = tmp / f"{which}.dump"
                        subprocess.run([str(tmp / f"pack_{which}")] + timed +
                                       ["--cap", cap, str(t), str(d)],
                                       check=True, capture_output=True)
                        dumps.append(d)
                    same = dumps[0].read_bytes() == dumps[1].read_bytes()
                    failed += not same
                    print(f"{t.name:24} {' '.join(timed) or 'plain':8} cap {cap:>8}: "
                          f"{'identical' if same else 'DIFFERENT'} ({dumps[0].stat().st_size} bytes)")
            if args.callgrind:
                for timed in ([], ["--timed"]):
                    b = callgrind(tmp / "pack_base", timed + [str(t)], tmp)
                    n = callgrind(tmp / "pack_new", timed + [str(t)], tmp)
                    print(f"{t.name:24} {' '.join(timed) or 'plain':8} Ir/record: "
                          f"{args.base} {b:.2f}, now {n:.2f} ({(n - b) / b * 100:+.1f} %)")
        print("all identical" if failed == 0 else f"{failed} DIFFERENT")
        return 1 if failed else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
