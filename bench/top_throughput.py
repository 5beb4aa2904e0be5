#!/usr/bin/env python3
"""How many records a second `hookprof top` takes in on one core (docs/performance.md, "The
live view"), against issue 36's goal of 10 million:

- a firmware's stream (`top --serial FILE`, the path `top --gdb` and `--tcp` take too: record's
  decoder, then analysis/live.rs): a stream file made here of RECORDS records (entries and
  exits three to five deep in three tasks switched every 200 records, the addresses of the
  FreeRTOS example's functions), read as fast as one core decodes it; the view's end line says
  how long the read took. `hookprof record --serial` on the same file (decoder and trace
  writer) for comparison;
- a trace file (`top PID` reads each window's file so, `top --follow` the whole file every
  interval): `top --follow TRACE --iterations 1`, timed, on the trace `record` wrote, and on a
  hosted program's own trace (a loop of 2.5 million calls of a function that calls another
  twice, built with target/debug/hookcc --trace and run with HOOKCC_THROTTLE=0: 15 million
  records).

    python3 bench/top_throughput.py [RECORDS] [--exe firmware.elf]

Needs a release build (`cargo build --release -p hookprof`). Pinned to CPU 0 with taskset
where there is one. The files go to a temporary directory, removed at the end.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOOKPROF = ROOT / "target" / "release" / "hookprof"
HOOKCC = ROOT / "target" / "debug" / "hookcc"
HOSTED = """
__attribute__((noinline)) int leaf(int x) { return x * 3 + 1; }
__attribute__((noinline)) int mid(int x) { return leaf(x) + leaf(x + 1); }
int main(void)
{
    int s = 0;
    for (int i = 0; i < 2500000; i++)
        s += mid(i);
    return s & 1;
}
"""

# Stream record kinds (docs/trace-format.md, "The stream"; hookprof/src/input/stream.rs).
EXIT_SAME, ENTRY, EXIT, OTHER = 0, 1, 2, 3
S_START, S_SWITCH, S_CREATED, S_ENTRY_RAW, S_EXIT_RAW, S_END = 0, 3, 4, 5, 6, 8


def varint(out: bytearray, v: int) -> None:
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def zigzag(d: int) -> int:
    return (d << 1) ^ (d >> 63) if d < 0 else d << 1


def functions(exe: Path | None) -> list[int]:
    """Addresses of functions (the example's when its ELF is given, else made up)."""
    if exe is None:
        return [0x1001 + 0x40 * i for i in range(12)]
    nm = subprocess.run(["nm", str(exe)], capture_output=True, text=True, check=True).stdout
    wanted = {"checksum", "produce", "consume", "work", "producer", "consumer", "worker",
              "vTaskDelay", "xQueueReceive", "xQueueGenericSend", "vPortEnterCritical",
              "vPortExitCritical"}
    found = [int(l.split()[0], 16) | 1 for l in nm.splitlines()
             if len(l.split()) == 3 and l.split()[2] in wanted]
    return found or functions(None)


def block(addresses: list[int], prev: int) -> tuple[bytes, int]:
    """One stretch: three tasks, 200 calls' records each, switched in turn; `prev` is the
    decoder's address before it (0 at the start, else the block's own last address, so that
    copies of it follow each other). Returns it and its records."""
    calls: list[tuple[int, bool]] = []
    n = len(addresses)
    for task in range(3):
        calls.append((-1 - task, False))  # a switch to the task
        i = task
        made = 0
        while made < 200:
            outer = addresses[i % n]
            inner = [addresses[(i + k) % n] for k in (1, 2, 3)][: 1 + i % 3]
            calls.append((outer, False))
            for a in inner:
                calls += [(a, False), (a, True)]
            calls.append((outer, True))
            made += 2 + 2 * len(inner)
            i += 1
    out = bytearray()
    for address, exit_ in calls:
        dt = 3
        if address < 0:
            varint(out, dt << 2 | OTHER)
            varint(out, S_SWITCH)
            varint(out, 0x2000_0000 + 0x100 * (-1 - address))
            continue
        delta = address - prev
        if exit_ and delta == 0:
            varint(out, dt << 2 | EXIT_SAME)
        elif delta % 4 == 0:
            varint(out, dt << 2 | (EXIT if exit_ else ENTRY))
            varint(out, zigzag(delta // 4))
        else:
            varint(out, dt << 2 | OTHER)
            varint(out, S_EXIT_RAW if exit_ else S_ENTRY_RAW)
            varint(out, zigzag(delta))
        prev = address
    return bytes(out), len(calls)


def last_address(addresses: list[int]) -> int:
    """The address a block ends at (the last task's last outer call)."""
    n = len(addresses)
    i, made = 2, 0
    while True:
        inner = 1 + i % 3
        made += 2 + 2 * inner
        if made >= 200:
            return addresses[i % n]
        i += 1


def stream_file(path: Path, records: int, addresses: list[int]) -> int:
    head = bytearray()
    varint(head, OTHER)
    varint(head, S_START)
    for v in (1, 4, 25_000_000, 0):
        varint(head, v)
    for task, name in enumerate(["producer", "consumer", "worker"]):
        varint(head, OTHER)
        varint(head, S_CREATED)
        varint(head, 0x2000_0000 + 0x100 * task)
        varint(head, len(name))
        head += name.encode()
    first, per_block = block(addresses, 0)
    body, _ = block(addresses, last_address(addresses))
    copies = max(1, records // per_block)
    made = 3 + copies * per_block  # what the firmware counts: creations, calls, switches
    with open(path, "wb") as f:
        f.write(head)
        f.write(first)
        for _ in range(copies - 1):
            f.write(body)
        end = bytearray()
        varint(end, OTHER)
        varint(end, S_END)
        varint(end, made)
        varint(end, 0)
        f.write(end)
    return made + 2  # the decoder's records: START and END too


def run(cmd: list[str]) -> tuple[str, float]:
    if shutil.which("taskset"):
        cmd = ["taskset", "-c", "0"] + cmd
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    took = time.monotonic() - start
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return p.stdout + p.stderr, took


def main() -> None:
    args = sys.argv[1:]
    exe = None
    if "--exe" in args:
        i = args.index("--exe")
        exe = Path(args[i + 1])
        del args[i : i + 2]
    records = int(args[0]) if args else 50_000_000
    if not HOOKPROF.exists():
        sys.exit(f"{HOOKPROF} is not built: cargo build --release -p hookprof")
    with tempfile.TemporaryDirectory(prefix="hookcc-top-bench") as tmp:
        stream = Path(tmp) / "stream.bin"
        total = stream_file(stream, records, functions(exe))
        size = stream.stat().st_size
        print(f"stream: {total} records, {size} bytes ({size / total:.2f} a record)")
        exe_args = ["--exe", str(exe)] if exe else []
        out, took = run([str(HOOKPROF), "top", "--serial", str(stream), *exe_args,
                         "--interval", "100ms", "--iterations", "1000000"])
        m = re.search(r"the stream ended \(([^)]*)\): (\d+) records in ([\d.]+) s \((\d+) a second\), (\d+) lost", out)
        if not m:
            sys.exit(f"no end line in top's output:\n{out[-3000:]}")
        print(f"top --serial: {int(m[2])} records in {float(m[3]):.2f} s: "
              f"{int(m[4]) / 1e6:.1f} M records a second ({m[1]}, lost {m[5]}); "
              f"the whole run {took:.2f} s")
        trace = Path(tmp) / "stream.hktrace"
        _, took = run([str(HOOKPROF), "record", "--serial", str(stream), *exe_args,
                       "-o", str(trace), "--quiet"])
        print(f"record --serial: {took:.2f} s: {total / took / 1e6:.1f} M records a second "
              f"(decoder and trace writer, the whole run)")
        _, took = run([str(HOOKPROF), "top", "--follow", str(trace), *exe_args,
                       "--interval", "10ms", "--iterations", "1"])
        print(f"top --follow (one read of the {trace.stat().st_size}-byte trace): {took:.2f} s: "
              f"{total / took / 1e6:.1f} M records a second (the whole run)")
        if not HOOKCC.exists():
            print(f"no {HOOKCC}: the hosted trace is left out (cargo build --workspace)")
            return
        source = Path(tmp) / "calls.c"
        source.write_text(HOSTED)
        program = Path(tmp) / "calls"
        subprocess.run([str(HOOKCC), "--trace", "-O1", str(source), "-o", str(program)],
                       check=True)
        hosted = Path(tmp) / "calls.hktrace"
        env = dict(os.environ, HOOKCC_THROTTLE="0", HOOKCC_OUTPUT=str(hosted),
                   HOOKCC_MAX_BYTES="1000000000")
        subprocess.run([str(program)], env=env, check=False)
        _, took = run([str(HOOKPROF), "top", "--follow", str(hosted), "--interval", "10ms",
                       "--iterations", "1"])
        print(f"top --follow (one read of a hosted program's {hosted.stat().st_size}-byte trace, "
              f"15 000 002 records): {took:.2f} s: {15_000_002 / took / 1e6:.1f} M records a "
              f"second (the whole run)")


if __name__ == "__main__":
    main()
