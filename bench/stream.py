#!/usr/bin/env python3
"""The bare-metal stream measured under qemu-system (docs/baremetal.md, "Streaming"): bytes per
record, instructions per record on the Cortex-M3, and what the GDB transport drains with no
loss, from examples/baremetal's own firmware:

- stream_calls.c's loop of 40 000 records timed by the board's SysTick (25 MHz; under
  `-icount shift=0` one instruction is one nanosecond, so a tick is 40 instructions) without
  hooks, with the RAM buffer (HOOKS=trace), streaming (HOOKS=stream, a ring that holds it
  all), the packed RAM buffer (HOOKS=packed, holding it all) and its flight recorder (16 KiB,
  which begins a half about every 5 000 records): instructions per record;
- stream_calls.c, 2 000 000 records, read by `hookprof record --gdb` at a 1 ms and a 10 ms poll
  (64 KiB ring): bytes per record, the fullest poll, records lost, wall time;
- FreeRTOS stream_app.c for 60 s of kernel ticks (`-icount shift=0,sleep=off`), 16 and 64 KiB
  rings at a 10 ms poll: the same.

    python3 bench/stream.py          # about a minute; needs scripts/setup.sh's tools
    python3 bench/stream.py --instructions [--board cortex-m4f|riscv32|arm926]
                                     # the instructions per record only (about 15 s a board)

hookcc and hookprof are taken from $CARGO_TARGET_DIR/debug (target/debug without it).

The examples are copied to a temporary directory and built there; nothing is left behind.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target")) / "debug"

# Instructions a tick of each board's counter under `-icount shift=0` (1 ns an instruction):
# SysTick at 25 MHz, the CLINT's mtime at 10 MHz, the SP804 at 1 MHz.
INSTRUCTIONS_PER_TICK = {"cortex-m3": 40, "cortex-m4f": 40, "riscv32": 100, "arm926": 1000}


def make(project: Path, *args: str) -> tuple[str, str, float]:
    env = dict(os.environ)
    env["PATH"] = f"{TARGET}:{env.get('PATH', '')}"
    env.pop("MAKEFLAGS", None)
    start = time.monotonic()
    out = subprocess.run(
        ["make", "-s", *args, f"HOOKCC_SCRIPTS={ROOT / 'scripts'}"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.monotonic() - start
    if out.returncode != 0:
        sys.exit(f"make {' '.join(args)} in {project} failed:\n{out.stdout}\n{out.stderr}")
    return out.stdout, out.stderr, wall


def clean(project: Path) -> None:
    for f in project.glob("*.o"):
        f.unlink()
    for name in ("firmware.elf", "firmware.hktrace"):
        (project / name).unlink(missing_ok=True)


def record_line(stderr: str) -> dict[str, float]:
    line = next(l for l in stderr.splitlines() if l.startswith("hookprof record: "))
    number = lambda pattern: float(re.search(pattern, line).group(1))  # noqa: E731
    return {
        "bytes": number(r"(\d+) bytes,"),
        "calls": number(r"(\d+) calls' records"),
        "per_call": number(r"\(([\d.]+) bytes each\)"),
        "lost": number(r"(\d+) lost \("),
        "fullest": number(r"fullest found (\d+) of"),
        "made": number(r"made (\d+) records"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instructions", action="store_true",
                        help="only the instructions per record (no GDB transport runs)")
    parser.add_argument("--board", choices=sorted(INSTRUCTIONS_PER_TICK), default="cortex-m3",
                        help="the board the instructions per record are measured on")
    opts = parser.parse_args()
    if not (TARGET / "hookprof").exists():
        sys.exit(f"build first: cargo build --workspace && scripts/build-plugins.sh "
                 f"({TARGET / 'hookprof'} is missing)")
    with tempfile.TemporaryDirectory() as tmp:
        examples = Path(tmp) / "baremetal"
        shutil.copytree(ROOT / "examples" / "baremetal", examples)
        m3 = examples / "cortex-m3"
        board = examples / opts.board
        per_tick = INSTRUCTIONS_PER_TICK[opts.board]

        print(f"## Instructions per record ({opts.board}, stream_calls.c, 40 000 records)\n")
        # Issue 38's goal: at most 80 instructions a record in the hooks on the Cortex-M3.
        print("| build | loop ticks | instructions per record | goal (issue 38, Cortex-M3) |")
        print("|---|---:|---:|---|")
        base = None
        for name, variables in (
            ("no hooks", []),
            ("RAM buffer (HOOKS=trace)", ["HOOKS=trace"]),
            ("stream (HOOKS=stream)", ["HOOKS=stream", "STREAM_BYTES=262144"]),
            ("packed RAM buffer (HOOKS=packed)", ["HOOKS=packed", "PACKED_BYTES=262144"]),
            ("packed flight recorder (PACKED_RING=1)",
             ["HOOKS=packed", "PACKED_RING=1", "PACKED_BYTES=16384"]),
        ):
            clean(board)
            debug = "-gdwarf-4" if opts.board == "riscv32" else "-g"
            stdout, _, _ = make(
                board, "run", "APP=../stream_calls.c", f"CFLAGS=-O1 {debug} -DPUMP_EVERY=0",
                *variables
            )
            ticks = int(re.search(r"loop ticks (\d+)", stdout).group(1))
            base = ticks if base is None else base
            per = (ticks - base) * per_tick / 40000
            goal = "" if ticks == base else (
                f"<= 80: {'met' if per <= 80 else 'not met'}" if opts.board == "cortex-m3" else "—")
            print(f"| {name} | {ticks} | {per:.1f} | {goal} |", flush=True)
        if opts.instructions:
            return

        print("\n## The GDB transport under qemu\n")
        print("| firmware | ring | poll | records | bytes per entry/exit | bytes per record | "
              "fullest poll | lost | wall |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        runs = [
            (m3, "stream_calls.c ×100 000", ["APP=../stream_calls.c",
                                             "CFLAGS=-O1 -g -DPUMP_EVERY=0 -DROUNDS=100000"],
             65536, poll)
            for poll in (1, 10)
        ] + [
            (examples / "freertos", "FreeRTOS stream_app.c, 60 s",
             ["APP=stream_app.c", "ICOUNT=-icount shift=0,sleep=off"], ring, 10)
            for ring in (16384, 65536)
        ]
        port = 3600
        for project, name, variables, ring, poll in runs:
            clean(project)
            port += 1
            _, stderr, wall = make(
                project, "stream", "HOOKS=stream", *variables, f"STREAM_BYTES={ring}",
                f"GDB_PORT={port}", f"RECORD_FLAGS=--poll-interval {poll}ms",
            )
            r = record_line(stderr)
            print(f"| {name} | {ring} | {poll} ms | {r['made']:.0f} | {r['per_call']:.2f} | "
                  f"{r['bytes'] / r['made']:.2f} | {r['fullest']:.0f} | {r['lost']:.0f} | "
                  f"{wall:.1f} s |")


if __name__ == "__main__":
    main()
