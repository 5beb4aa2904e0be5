#!/usr/bin/env python3
"""Checks the TI runtime's exit dump (PREFIX.bin and PREFIX.dat) against docs/ti-runtime.md.

A second, independent reader of the formats (stdlib only), for the runtime's tests: it parses
the CCS .dat text and the .bin memory image, checks that they hold the same 32-bit words,
decodes the records (3 words each on 32-bit targets, 4 on 64-bit ones), and replays them the
way the TI post tool does: a call stack per task, entries pushed, exits popped, task switches
(TASK_EXIT of the running task, then TASK_ENTRY of the next one) changing the stack in use.

    check_ti.py PREFIX --pointer-size {4,8} --endian {little,big} [--vars FILE]
                [--records N | --records-var KEY] [--full] [--oldest N]
                [--replay] [--unmatched-exits N] [--open-entries N]
                [--task-entries TASK:FUNC=N ...] [--entries FUNC=N ...] [--tasks N]
                [--monotonic]

--vars names a file of key=value lines the test program printed: `profiledata=0x...` must be
the .dat header's start address, `addr.NAME=0x...` names functions and `task.NAME=0x...`
task handles for the counts, `capacity=` is the buffer size for --full.
--oldest N rotates the records so that record N comes first (a wrapped circular buffer:
N = uiProfileDataCnt & (capacity - 1)); --oldest-var KEY reads N from the vars.
Exits 0 if everything holds, 1 with one line per failure.
"""

import argparse
import re
import struct
import sys

TYPE_FUNC_ENTRY, TYPE_FUNC_EXIT, TYPE_TASK_ENTRY, TYPE_TASK_EXIT = 0, 1, 2, 3
TYPE_NAMES = ["FUNC_ENTRY", "FUNC_EXIT", "TASK_ENTRY", "TASK_EXIT"]
DAT_WORD = re.compile(r"0x[0-9A-F]{8}")


class CheckError(Exception):
    pass


def read_vars(path):
    out = {}
    if path is None:
        return out
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            key, sep, value = line.rstrip("\n").partition("=")
            if sep:
                out.setdefault(key, value)
    return out


def read_dat(path):
    """Returns (start_address, words) of a CCS "32-bit Hex - C Style" data file."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError as e:
        raise CheckError(f"{path}: byte {e.start}: not ASCII")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    else:
        raise CheckError(f"{path}: does not end with a newline")
    if not lines:
        raise CheckError(f"{path}: empty")
    header = lines[0].split(" ")
    if len(header) != 5:
        raise CheckError(f"{path}:1: header {lines[0]!r} does not have 5 fields")
    magic, fmt, start, page, length = header
    if magic != "1651":
        raise CheckError(f"{path}:1: magic {magic!r}, expected 1651")
    if fmt != "1":
        raise CheckError(f"{path}:1: format {fmt!r}, expected 1 (hexadecimal)")
    if page != "0":
        raise CheckError(f"{path}:1: page {page!r}, expected 0")
    for name, field in (("start address", start), ("length", length)):
        if not re.fullmatch(r"[0-9a-f]+", field):
            raise CheckError(f"{path}:1: {name} {field!r} is not lowercase hex without 0x")
    words = []
    for i, line in enumerate(lines[1:], start=2):
        if not DAT_WORD.fullmatch(line):
            raise CheckError(f"{path}:{i}: {line!r} is not a 0xXXXXXXXX word")
        words.append(int(line, 16))
    if len(words) != int(length, 16):
        raise CheckError(f"{path}:1: length 0x{length} but {len(words)} words follow")
    return int(start, 16), words


def decode(data, pointer_size, endian):
    e = "<" if endian == "little" else ">"
    fmt = e + ("I" if pointer_size == 4 else "Q") + "II"
    size = struct.calcsize(fmt)
    if size != pointer_size + 8:
        raise CheckError(f"internal: record format {fmt} is {size} bytes")
    if len(data) % size != 0:
        raise CheckError(f".bin: {len(data)} bytes is not a whole number of {size}-byte records")
    invalid = (1 << (8 * pointer_size)) - 1
    records = []
    for off in range(0, len(data), size):
        address_type, lo, hi = struct.unpack_from(fmt, data, off)
        if address_type == invalid:
            records.append(None)  # never written (0xFF fill), or being written
        else:
            records.append((address_type & ~3, address_type & 3, (hi << 32) | lo, off))
    return records


def parse_counts(specs, what):
    out = {}
    for spec in specs:
        key, sep, n = spec.rpartition("=")
        if not sep or not n.isdigit():
            raise CheckError(f"bad {what} {spec!r}: expected NAME=N")
        out[key] = int(n)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("prefix")
    ap.add_argument("--pointer-size", type=int, choices=(4, 8), required=True)
    ap.add_argument("--endian", choices=("little", "big"), required=True)
    ap.add_argument("--vars")
    ap.add_argument("--records", type=int)
    ap.add_argument("--records-var")
    ap.add_argument("--full", action="store_true", help="the dump is the whole buffer")
    ap.add_argument("--oldest", type=int)
    ap.add_argument("--oldest-var")
    ap.add_argument("--invalid", type=int, default=0, help="invalid records expected")
    ap.add_argument("--replay", action="store_true")
    ap.add_argument("--unmatched-exits", type=int, default=0)
    ap.add_argument("--open-entries", type=int, default=0)
    ap.add_argument("--entries", action="append", default=[])
    ap.add_argument("--task-entries", action="append", default=[])
    ap.add_argument("--tasks", type=int, help="number of distinct task handles")
    ap.add_argument("--switches", type=int, help="number of task switches")
    ap.add_argument("--monotonic", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    failures = []

    def fail(msg):
        failures.append(msg)

    try:
        v = read_vars(args.vars)
        with open(args.prefix + ".bin", "rb") as f:
            data = f.read()
        start, words = read_dat(args.prefix + ".dat")

        # .bin and .dat: the same words, in memory order.
        e = "<" if args.endian == "little" else ">"
        if len(data) % 4 != 0:
            raise CheckError(f".bin: {len(data)} bytes is not a whole number of words")
        bin_words = list(struct.unpack(f"{e}{len(data) // 4}I", data))
        if bin_words != words:
            n = min(len(bin_words), len(words))
            first = next((i for i in range(n) if bin_words[i] != words[i]), n)
            fail(f".bin ({len(bin_words)} words) and .dat ({len(words)} words) differ "
                 f"from word {first}")
        if "profiledata" in v and int(v["profiledata"], 16) != start:
            fail(f".dat start address 0x{start:x} is not ProfileData ({v['profiledata']})")

        records = decode(data, args.pointer_size, args.endian)
        words_per_record = (args.pointer_size + 8) // 4
        if len(words) != len(records) * words_per_record:
            fail(f".dat has {len(words)} words, not {words_per_record} per record")
        want = args.records
        if args.records_var is not None:
            want = int(v[args.records_var])
        if args.full:
            want = int(v["capacity"])
        if want is not None and len(records) != want:
            fail(f"{len(records)} records in the dump, expected {want}")

        oldest = args.oldest
        if args.oldest_var is not None:
            oldest = int(v[args.oldest_var])
        if oldest:
            records = records[oldest:] + records[:oldest]

        invalid = sum(1 for r in records if r is None)
        if invalid != args.invalid:
            fail(f"{invalid} invalid (all-ones) records, expected {args.invalid}")
        records = [r for r in records if r is not None]

        if args.monotonic:
            for a, b in zip(records, records[1:]):
                if b[2] < a[2]:
                    fail(f"record at byte {b[3]}: time 0x{b[2]:x} before 0x{a[2]:x}")
                    break

        names = {}  # address -> name, for messages
        funcs = {}  # name -> address (addr.NAME)
        tasks = {}  # name -> handle (task.NAME)
        for key, value in v.items():
            kind, _, n = key.partition(".")
            if kind in ("addr", "task") and n:
                a = int(value, 16) & ~3
                names[a] = n
                (funcs if kind == "addr" else tasks)[n] = a

        def name(addr):
            return names.get(addr, f"0x{addr:x}")

        # Task records: a switch is a TASK_EXIT immediately followed by a TASK_ENTRY with the
        # same timestamp; the TASK_EXIT names the task that was running.
        handles = set()
        switches = 0
        for i, r in enumerate(records):
            if r[1] == TYPE_TASK_EXIT:
                handles.add(r[0])
                nxt = records[i + 1] if i + 1 < len(records) else None
                if nxt is None:
                    continue  # the buffer filled between the two (stop-when-full)
                if nxt[1] != TYPE_TASK_ENTRY or nxt[2] != r[2]:
                    fail(f"record at byte {r[3]}: TASK_EXIT not followed by a TASK_ENTRY "
                         f"with the same time")
                switches += 1
            elif r[1] == TYPE_TASK_ENTRY:
                handles.add(r[0])
                prev = records[i - 1] if i > 0 else None
                if prev is not None and prev[1] != TYPE_TASK_EXIT:
                    fail(f"record at byte {r[3]}: TASK_ENTRY without a TASK_EXIT before it")
        if args.tasks is not None and len(handles) != args.tasks:
            fail(f"{len(handles)} task handles ({', '.join(sorted(map(name, handles)))}), "
                 f"expected {args.tasks}")
        if args.switches is not None and switches != args.switches:
            fail(f"{switches} task switches, expected {args.switches}")

        entries = {}
        task_entries = {}
        if args.replay:
            stacks = {}
            current = None  # the task running before the first switch: learnt from it
            unmatched = 0
            for r in records:
                addr, typ, _, off = r
                if typ == TYPE_TASK_EXIT:
                    if current is None:  # the first switch names the task that ran so far
                        stacks[addr] = stacks.pop(None, [])
                        for key in [k for k in task_entries if k[0] is None]:
                            task_entries[(addr, key[1])] = task_entries.pop(key)
                    elif current != addr:
                        fail(f"record at byte {off}: TASK_EXIT of {name(addr)} while "
                             f"{name(current)} runs")
                    current = addr
                    continue
                if typ == TYPE_TASK_ENTRY:
                    current = addr
                    stacks.setdefault(current, [])
                    continue
                stack = stacks.setdefault(current, [])
                if typ == TYPE_FUNC_ENTRY:
                    stack.append(addr)
                    entries[addr] = entries.get(addr, 0) + 1
                    key = (current, addr)
                    task_entries[key] = task_entries.get(key, 0) + 1
                elif stack and stack[-1] == addr:
                    stack.pop()
                elif not stack:
                    unmatched += 1  # its entry happened before recording began
                else:
                    fail(f"record at byte {off}: exit of {name(addr)} in task "
                         f"{name(current)}, but {name(stack[-1])} is the innermost frame")
                    break
            still_open = sum(len(s) for s in stacks.values())
            if unmatched != args.unmatched_exits:
                fail(f"{unmatched} unmatched exits, expected {args.unmatched_exits}")
            if still_open != args.open_entries:
                fail(f"{still_open} entries without an exit, expected {args.open_entries}")
        else:
            for r in records:
                if r[1] == TYPE_FUNC_ENTRY:
                    entries[r[0]] = entries.get(r[0], 0) + 1

        for fn, n in parse_counts(args.entries, "--entries").items():
            if fn not in funcs:
                raise CheckError(f"--entries {fn}: no addr.{fn} in the vars")
            got = entries.get(funcs[fn], 0)
            if got != n:
                fail(f"{got} entries of {fn}, expected {n}")
        for spec, n in parse_counts(args.task_entries, "--task-entries").items():
            task, _, fn = spec.partition(":")
            if task not in tasks or fn not in funcs:
                raise CheckError(f"--task-entries {spec}: task.{task} or addr.{fn} not in vars")
            got = task_entries.get((tasks[task], funcs[fn]), 0)
            if got != n:
                fail(f"{got} entries of {fn} in task {task}, expected {n}")
        if args.verbose:
            print(f"{len(records)} valid records, {invalid} invalid, {switches} switches, "
                  f"{len(handles)} tasks, .dat start 0x{start:x}")
    except (CheckError, OSError, KeyError, ValueError) as e:
        fail(str(e))

    for f in failures:
        print(f"check_ti: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
