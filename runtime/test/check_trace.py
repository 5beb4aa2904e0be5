#!/usr/bin/env python3
"""Checks a hookcc trace file (.hktrace) against docs/trace-format.md and a test's expectations.

A second, independent reader of the format (stdlib only), for the runtime's unit tests: it
parses every chunk, validates what the doc promises, pairs records the way the doc says the
reader does, and compares the result with expectations given on the command line.

    check_trace.py FILE [--vars OUT] [--complete | --incomplete] [--records N] [--lost N]
                   [--lost-min N] [--threads N] [--thread-records NAME=N] ...

--vars names a file of `key=value` lines printed by the test program: `pid=` is compared with
the header, `addr.NAME=0x...` gives the addresses that --entries NAME=N counts.
Exits 0 if everything holds, 1 with one line per failure (byte offsets for format errors).
"""

import argparse
import struct
import sys

MAGIC = b"HKTRACE\0"
HEADER_SIZE = 64
CHUNK_EXE, CHUNK_MODULE, CHUNK_EVENTS, CHUNK_LOST, CHUNK_THREAD, CHUNK_CLOCK = 1, 2, 3, 4, 5, 6
CHUNK_END, CHUNK_CHECK, CHUNK_OVERHEAD, CHUNK_PAUSE, CHUNK_PACKED = 7, 8, 9, 10, 11
CHUNK_PROFILE, CHUNK_FOLDED, CHUNK_SWITCH, CHUNK_SAMPLE = 13, 14, 15, 16
CHUNK_WRITER = 17
FLAG_SWITCH_REASONS = 4
FLAG_COMPLETE, FLAG_CHECKED = 1, 2
VERSIONS = (4, 5)  # what the runtime writes: a trace, a profile (HOOKCC_MODE=profile)
KIND_ENTRY, KIND_EXIT = 0, 1
COUNT_MARK = 4  # an "exit" of address 4: a count mark (docs/trace-format.md, "Count marks")
EXIT_BIT = 2  # bit 1 of a record's address word marks an exit


class FormatError(Exception):
    pass


PACK_TABLE_MAX, PACK_STACK = 4096, 256


def unpack_records(stream, count, first_time, where):
    """The records of a PACKED stream (docs/trace-format.md, "PACKED"), as (time, kind,
    address) tuples: the writer's table and predicted stack rebuilt step by step."""
    pos = 0

    def varint():
        nonlocal pos
        value, shift = 0, 0
        while True:
            if pos >= len(stream):
                raise FormatError(f"{where}: PACKED stream ends inside a record")
            b = stream[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            if b < 0x80:
                if value >> 64:
                    raise FormatError(f"{where}: PACKED number wider than 64 bits")
                return value
            shift += 7

    table, ring = [], [0] * PACK_STACK
    now, last_new, depth, after_escape = first_time, 0, 0, False
    mask64 = (1 << 64) - 1

    def new_address():
        nonlocal last_new
        z = varint()
        delta = (z >> 1) ^ -(z & 1)
        last_new = (last_new + delta) & mask64
        if len(table) < PACK_TABLE_MAX:
            table.append(last_new)
        return last_new

    def entry_of(index):
        if index >= len(table):
            raise FormatError(f"{where}: PACKED table index {index} of {len(table)}")
        return table[index]

    def search(address):
        for d in range(depth, max(0, depth - PACK_STACK), -1):
            if ring[(d - 1) % PACK_STACK] == address:
                return d - 1
        return depth

    records = []
    while len(records) < count:
        v = varint()
        if v == 3:
            save = pos
            if varint() == 1:  # a clock escape
                now = varint()
                v = varint()
            else:
                pos = save
        now = (now + (v >> 2)) & mask64
        k = v & 3
        if k == 0:
            if depth == 0:
                raise FormatError(f"{where}: PACKED exit of the top frame with none open")
            depth -= 1
            address = ring[depth % PACK_STACK]
            after_escape = address == 0
            records.append((now, KIND_EXIT, address))
        elif k in (1, 2):
            address = entry_of(varint()) if k == 1 else new_address()
            found = search(address) if after_escape else depth
            if found < depth:
                depth = found + 1
            else:
                ring[depth % PACK_STACK] = address
                depth += 1
            after_escape = False
            records.append((now, KIND_ENTRY, address))
        else:
            sub = varint()
            if sub == 1:
                raise FormatError(f"{where}: PACKED clock escape in the wrong place")
            address = new_address() if sub == 0 else entry_of(sub - 2)
            depth = search(address)
            after_escape = address == 0
            records.append((now, KIND_EXIT, address))
    if pos != len(stream):
        raise FormatError(f"{where}: PACKED stream has {len(stream) - pos} bytes after its "
                          "last record")
    return records


def cstring(payload, offset, where):
    end = payload.find(b"\0", offset)
    if end < 0:
        raise FormatError(f"{where}: string is not NUL-terminated")
    if any(payload[end:]):
        raise FormatError(f"{where}: padding after the string is not NUL")
    return payload[offset:end].decode("utf-8", "replace")


def read_profile(payload, e, where):
    """A PROFILE payload (docs/trace-format.md, "PROFILE"): a dict with the thread's records
    folded, its nodes as (parent or None, address, calls, unwound, longjmp), its open frames'
    nodes (outermost first) and its unmatched exits as (address, count)."""
    if len(payload) < 48:
        raise FormatError(f"{where}: PROFILE payload of {len(payload)} bytes")
    _seq, first, last, records, nodes, opened, unmatched, nbytes = struct.unpack_from(
        e + "4Q4I", payload, 0)
    stream = payload[48:48 + nbytes]
    if 48 + nbytes > len(payload) or any(payload[48 + nbytes:]):
        raise FormatError(f"{where}: PROFILE stream of {nbytes} bytes in a {len(payload)}-byte "
                          "payload (or padding not zero)")
    if first > last:
        raise FormatError(f"{where}: PROFILE first tick {first} after last {last}")
    pos = 0

    def varint():
        nonlocal pos
        value, shift = 0, 0
        while True:
            if pos >= len(stream):
                raise FormatError(f"{where}: PROFILE stream ends inside a number")
            b = stream[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            if b < 0x80:
                return value
            shift += 7

    def address(last):
        z = varint()
        return (last + ((z >> 1) ^ -(z & 1))) % (1 << 64)
    tree = {"records": records, "nodes": [], "open": [], "unmatched": []}
    addr = 0
    for i in range(nodes):
        parent = varint()
        if parent > i:
            raise FormatError(f"{where}: PROFILE node {i}'s parent {parent - 1} comes after it")
        addr = address(addr)
        calls, ticks, excl, _min, _span, unwound, longjmp = (varint() for _ in range(7))
        if unwound > calls or longjmp > unwound or excl > ticks:
            raise FormatError(f"{where}: PROFILE node {i}: counts do not add up")
        tree["nodes"].append((parent - 1 if parent else None, addr, calls, unwound, longjmp))
    for j in range(opened):
        node, _entry, _child = varint(), varint(), varint()
        want = tree["open"][-1] if tree["open"] else None
        if node >= nodes or tree["nodes"][node][0] != want:
            raise FormatError(f"{where}: PROFILE open frame {j} is not on one call path")
        tree["open"].append(node)
    addr = 0
    for _ in range(unmatched):
        addr = address(addr)
        tree["unmatched"].append((addr, varint()))
    if pos != len(stream):
        raise FormatError(f"{where}: PROFILE stream has {len(stream) - pos} bytes left over")
    return tree


class Thread:
    def __init__(self, tid):
        self.tid = tid
        self.profile = None  # its last PROFILE chunk (read_profile)
        self.records = []  # (time, kind, address)
        self.lost = 0
        self.lost_chunks = 0
        self.name = None
        self.sequence = None
        self.end = None  # tick of its END chunk: the thread ended on its own
        self.switches = []  # (out_ns, in_ns) of its SWITCH chunks, CLOCK_MONOTONIC
        self.switches_lost = 0
        self.samples = []  # (ns, ip) of its SAMPLE chunks, CLOCK_MONOTONIC
        self.samples_in_hooks = 0


class Trace:
    """Everything in one file, parsed."""

    def __init__(self, path):
        self.path = path
        with open(path, "rb") as f:
            data = f.read()
        self.size = len(data)
        if len(data) < HEADER_SIZE:
            raise FormatError(f"offset 0: file has {len(data)} bytes, less than a header")
        if data[0:8] != MAGIC:
            raise FormatError(f"offset 0: bad magic {data[0:8]!r}")
        endian = data[8]
        if endian not in (1, 2):
            raise FormatError(f"offset 8: endian byte {endian}, expected 1 or 2")
        self.endian = endian
        e = "<" if endian == 1 else ">"
        self.pointer_size = data[9]
        if self.pointer_size not in (4, 8):
            raise FormatError(f"offset 9: pointer size {self.pointer_size}")
        (self.version, self.header_size) = struct.unpack_from(e + "HI", data, 10)
        if self.version not in VERSIONS:
            raise FormatError(f"offset 10: version {self.version}, expected one of {VERSIONS}")
        if self.header_size != HEADER_SIZE:
            raise FormatError(f"offset 12: header_size {self.header_size}, expected 64")
        (self.ticks_per_second, self.pid, self.flags, self.start_realtime_ns, self.records,
         self.lost) = struct.unpack_from(e + "6Q", data, 16)
        self.complete = bool(self.flags & FLAG_COMPLETE)
        self.checked = bool(self.flags & FLAG_CHECKED)

        def checksum(begin, end):
            """The doc's checksum: the sum of the 64-bit words, modulo 2**64."""
            words = struct.unpack_from(e + f"{(end - begin) // 8}Q", data, begin)
            return sum(words) % (1 << 64)
        self.header_checksum = checksum(0, HEADER_SIZE)
        self.checks = 0  # CHECK chunks that matched
        self.overheads = []  # (self_ticks, child_ticks, pairs, before any EVENTS chunk)
        self.pauses = 0  # PAUSE chunks (a hook wrote its full buffer)
        self.writer = None  # the WRITER chunk: (cpu_ns, wait_ns, slices, wall_ns)
        self.folded = 0  # calls in FOLDED chunks (HOOKCC_MIN_DURATION)

        self.exe = None
        self.modules = []  # (bias, start, end, path)
        self.clocks = []  # (tps, first, last)
        self.threads = []  # every thread, in the order first seen
        current = {}  # tid -> its Thread until its THREAD chunk (Linux reuses tids)

        def thread(tid):
            if tid not in current:
                current[tid] = Thread(tid)
                self.threads.append(current[tid])
            return current[tid]
        self.chunk_types = []
        self.packed_bytes = 0  # payload bytes of PACKED chunks
        self.events_end = 0  # end offset of the last EVENTS chunk
        self.truncated = None  # offset of an incomplete final chunk
        self.holes = []  # offsets of zero words where a chunk should start
        off = self.header_size
        unchecked = None  # (offset, end) of the chunk before, until its CHECK chunk
        while off < len(data):
            if off % 8:
                raise FormatError(f"offset {off}: chunk not 8-byte aligned")
            if len(data) - off < 16:
                self.truncated = off
                break
            if data[off:off + 8] == bytes(8):
                # A hole: space a writer reserved and never wrote (killed in between). The
                # doc says a reader skips zero words 8 bytes at a time.
                self.holes.append(off)
                off += 8
                unchecked = None
                continue
            ctype, length, tid = struct.unpack_from(e + "IIQ", data, off)
            if length % 8:
                raise FormatError(f"offset {off}: chunk length {length} not a multiple of 8")
            if off + 16 + length > len(data):
                self.truncated = off
                break
            payload = data[off + 16: off + 16 + length]
            where = f"offset {off} (chunk type {ctype})"
            if ctype == CHUNK_CHECK:
                if length != 8:
                    raise FormatError(f"{where}: CHECK payload of {length} bytes")
                if unchecked is None:
                    raise FormatError(f"{where}: CHECK chunk after no chunk")
                (stored,) = struct.unpack_from(e + "Q", payload, 0)
                actual = checksum(*unchecked)
                if stored != actual:
                    raise FormatError(f"offset {unchecked[0]}: checksum {actual:#x}, its CHECK "
                                      f"chunk at {off} says {stored:#x}")
                (covered_tid,) = struct.unpack_from(e + "Q", data, unchecked[0] + 8)
                if tid != covered_tid:
                    raise FormatError(f"{where}: CHECK chunk of thread {tid} after a chunk of "
                                      f"thread {covered_tid}")
                self.checks += 1
                unchecked = None
                off += 16 + length
                continue
            if self.checked and unchecked is not None:
                raise FormatError(f"offset {unchecked[0]}: chunk without its CHECK chunk")
            unchecked = (off, off + 16 + length)
            self.chunk_types.append(ctype)
            if ctype == CHUNK_EXE:
                if tid != 0:
                    raise FormatError(f"{where}: EXE with thread {tid}")
                if self.exe is not None:
                    raise FormatError(f"{where}: second EXE chunk")
                self.exe = cstring(payload, 0, where)
            elif ctype == CHUNK_MODULE:
                if length < 32:
                    raise FormatError(f"{where}: MODULE payload of {length} bytes")
                bias, start, end = struct.unpack_from(e + "3Q", payload, 0)
                if start >= end:
                    raise FormatError(f"{where}: MODULE start {start:#x} >= end {end:#x}")
                self.modules.append((bias, start, end, cstring(payload, 24, where)))
            elif ctype == CHUNK_EVENTS:
                if length % 16:
                    raise FormatError(f"{where}: EVENTS length {length} not a multiple of 16")
                if tid == 0:
                    raise FormatError(f"{where}: EVENTS without a thread id")
                t = thread(tid)
                for i in range(length // 16):
                    tk, addr = struct.unpack_from(e + "QQ", payload, i * 16)
                    kind = KIND_EXIT if addr & EXIT_BIT else KIND_ENTRY
                    addr &= ~EXIT_BIT
                    if self.pointer_size == 4 and addr >> 32:
                        raise FormatError(
                            f"offset {off + 16 + i * 16 + 8}: address {addr:#x} wider "
                            "than the 4-byte pointers the header announces")
                    t.records.append((tk, kind, addr))
                self.events_end = off + 16 + length
            elif ctype == CHUNK_PACKED:
                if length < 16:
                    raise FormatError(f"{where}: PACKED payload of {length} bytes")
                if tid == 0:
                    raise FormatError(f"{where}: PACKED without a thread id")
                count, stream_bytes, first = struct.unpack_from(e + "IIQ", payload, 0)
                if 16 + stream_bytes > length or any(payload[16 + stream_bytes:]):
                    raise FormatError(f"{where}: PACKED stream of {stream_bytes} bytes in a "
                                      f"{length}-byte payload (or padding not zero)")
                t = thread(tid)
                for tk, kind, addr in unpack_records(payload[16:16 + stream_bytes], count,
                                                     first, where):
                    if self.pointer_size == 4 and addr >> 32:
                        raise FormatError(f"{where}: address {addr:#x} wider than the 4-byte "
                                          "pointers the header announces")
                    t.records.append((tk, kind, addr))
                self.packed_bytes += length
                self.events_end = off + 16 + length
            elif ctype == CHUNK_PROFILE:
                if self.version != 5 or tid == 0:
                    raise FormatError(f"{where}: PROFILE in a version {self.version} file, "
                                      f"thread {tid}")
                thread(tid).profile = read_profile(payload, e, where)
            elif ctype == CHUNK_FOLDED:
                if length != 16 or tid == 0 or self.version != 5:
                    raise FormatError(f"{where}: FOLDED payload of {length} bytes, thread {tid}")
                self.folded += struct.unpack_from(e + "2Q", payload, 0)[1]
            elif ctype == CHUNK_LOST:
                if length != 8:
                    raise FormatError(f"{where}: LOST payload of {length} bytes")
                t = thread(tid)
                t.lost += struct.unpack_from(e + "Q", payload, 0)[0]
                t.lost_chunks += 1
            elif ctype == CHUNK_THREAD:
                if length < 16:
                    raise FormatError(f"{where}: THREAD payload of {length} bytes")
                t = thread(tid)
                del current[tid]  # its last chunk: a later one with this tid is a new thread
                t.sequence = struct.unpack_from(e + "Q", payload, 0)[0]
                t.name = cstring(payload, 8, where)
            elif ctype == CHUNK_END:
                if length != 8:
                    raise FormatError(f"{where}: END payload of {length} bytes")
                if tid == 0:
                    raise FormatError(f"{where}: END without a thread id")
                t = thread(tid)
                if t.end is not None:
                    raise FormatError(f"{where}: second END chunk for thread {tid}")
                t.end = struct.unpack_from(e + "Q", payload, 0)[0]
            elif ctype == CHUNK_OVERHEAD:
                # 24 bytes; 40 with the count marks' cost (count_ticks, count_calls)
                if length not in (24, 40):
                    raise FormatError(f"{where}: OVERHEAD payload of {length} bytes")
                self.overheads.append(struct.unpack_from(e + "3Q", payload, 0) +
                                      (self.events_end == 0,))
            elif ctype == CHUNK_PAUSE:
                if length != 16 or tid == 0:
                    raise FormatError(f"{where}: PAUSE payload of {length} bytes, thread {tid}")
                start, stop = struct.unpack_from(e + "2Q", payload, 0)
                if start > stop:
                    raise FormatError(f"{where}: PAUSE from {start} after to {stop}")
                self.pauses += 1
            elif ctype == CHUNK_SWITCH:
                # Fixed part: anchor ticks, anchor ns, lost; then (out_ns, in_ns) pairs, in
                # time order within the thread.
                if length < 24 or (length - 24) % 16 or tid == 0:
                    raise FormatError(f"{where}: SWITCH payload of {length} bytes, thread {tid}")
                t = thread(tid)
                if t.sequence is not None:
                    raise FormatError(f"{where}: SWITCH chunk after thread {tid}'s THREAD chunk")
                anchor_ticks, anchor_ns, lost = struct.unpack_from(e + "3Q", payload, 0)
                if anchor_ns == 0:
                    raise FormatError(f"{where}: SWITCH chunk without an anchor")
                t.switches_lost += lost
                for i in range((length - 24) // 16):
                    out_ns, in_ns = struct.unpack_from(e + "2Q", payload, 24 + 16 * i)
                    if self.flags & FLAG_SWITCH_REASONS:
                        out_ns &= ~1  # bit 0: preempted (the time itself to 2 ns)
                    last = t.switches[-1][1] if t.switches else 0
                    if not last <= out_ns <= in_ns:
                        raise FormatError(f"{where}: switch {i} from {out_ns} to {in_ns} ns is "
                                          f"out of order (the thread's last ended at {last})")
                    t.switches.append((out_ns, in_ns))
            elif ctype == CHUNK_SAMPLE:
                # Fixed part: anchor ticks, anchor ns, period, samples in the hooks; then
                # (ns, ip) samples in time order within the thread.
                if length < 32 or (length - 32) % 16 or tid == 0:
                    raise FormatError(f"{where}: SAMPLE payload of {length} bytes, thread {tid}")
                t = thread(tid)
                if t.sequence is not None:
                    raise FormatError(f"{where}: SAMPLE chunk after thread {tid}'s THREAD chunk")
                anchor_ticks, anchor_ns, period, in_hooks = struct.unpack_from(e + "4Q", payload, 0)
                if anchor_ns == 0 or period == 0:
                    raise FormatError(f"{where}: SAMPLE chunk without an anchor or a period")
                t.samples_in_hooks += in_hooks
                for i in range((length - 32) // 16):
                    ns, ip = struct.unpack_from(e + "2Q", payload, 32 + 16 * i)
                    last = t.samples[-1][0] if t.samples else 0
                    if ns < last or ns > anchor_ns or ip == 0:
                        raise FormatError(f"{where}: sample {i} at {ns} ns (address {ip:#x}) is "
                                          f"out of order (the thread's last at {last}, the "
                                          f"chunk's anchor at {anchor_ns})")
                    t.samples.append((ns, ip))
            elif ctype == CHUNK_WRITER:
                # The writer thread's schedstat at the end: run, wait for a CPU, slices, life.
                if length != 32 or tid != 0:
                    raise FormatError(f"{where}: WRITER payload of {length} bytes, thread {tid}")
                cpu_ns, wait_ns, slices, wall_ns = struct.unpack_from(e + "4Q", payload, 0)
                if cpu_ns > wall_ns + 10**9:
                    raise FormatError(f"{where}: WRITER ran {cpu_ns} ns in a life of {wall_ns}")
                self.writer = (cpu_ns, wait_ns, slices, wall_ns)
            elif ctype == CHUNK_CLOCK:
                if length != (32 if self.checked else 24):
                    raise FormatError(f"{where}: CLOCK payload of {length} bytes")
                self.clocks.append(struct.unpack_from(e + "3Q", payload, 0))
                if self.checked and self.complete:
                    (header_check,) = struct.unpack_from(e + "Q", payload, 24)
                    if header_check != self.header_checksum:
                        raise FormatError(f"offset 0: header checksum {self.header_checksum:#x}, "
                                          f"the CLOCK chunk at {off} says {header_check:#x}")
            # unknown types are skipped, as the doc says a reader does
            off += 16 + length
        if self.checked and unchecked is not None and self.truncated is None:
            raise FormatError(f"offset {unchecked[0]}: the last chunk has no CHECK chunk")

    def pairing(self, thread):
        """The doc's pairing: returns (unmatched_entries, unmatched_exits, open_at_end).
        A resync pair (an exit of address 0, then an entry naming a function) closes the
        frames above that function's innermost frame; they count as unmatched entries here.
        A profile's tree has them counted."""
        if thread.profile is not None:
            tree = thread.profile
            return (sum(n[3] for n in tree["nodes"]), sum(c for _, c in tree["unmatched"]),
                    len(tree["open"]))
        stack, unmatched_entries, unmatched_exits = [], 0, 0
        resync = False
        for _, kind, addr in thread.records:
            if resync:
                resync = False
                if kind == KIND_ENTRY and addr in stack:
                    depth = len(stack) - 1 - stack[::-1].index(addr)
                    unmatched_entries += len(stack) - 1 - depth
                    del stack[depth + 1:]
                continue
            if kind == KIND_EXIT and addr == 0:
                resync = True
                continue
            if kind == KIND_EXIT and addr == COUNT_MARK:
                continue  # counted calls of throttled functions, not a call
            if kind == KIND_ENTRY:
                stack.append(addr)
                continue
            for depth in range(len(stack) - 1, -1, -1):
                if stack[depth] == addr:
                    unmatched_entries += len(stack) - 1 - depth
                    del stack[depth:]
                    break
            else:
                unmatched_exits += 1
        return unmatched_entries, unmatched_exits, len(stack)


def check(trace, args, variables):
    errors = []

    def expect(cond, message):
        if not cond:
            errors.append(message)

    def records_of(t):
        """What the header counts: the records written, else (a profile) those folded. Under
        HOOKCC_MIN_DURATION a thread has both: the records it kept, and a tree of every call."""
        if t.records or not t.profile:
            return len(t.records)
        return t.profile["records"]
    total_records = sum(records_of(t) for t in trace.threads)
    total_lost_chunks = sum(t.lost for t in trace.threads)
    expect(trace.chunk_types[:1] == [CHUNK_EXE], "the first chunk is not EXE")
    expect(trace.checked, "the header's CHECKED flag is clear")
    expect(len(trace.overheads) <= 1, f"{len(trace.overheads)} OVERHEAD chunks")
    for self_ticks, child_ticks, pairs, first in trace.overheads:
        expect(pairs == 255 and first,
               f"OVERHEAD chunk: self {self_ticks}, child {child_ticks}, pairs {pairs}, "
               f"before every EVENTS chunk: {first}")
    if args.overhead:
        expect(trace.overheads, "no OVERHEAD chunk")
    expect(trace.checks == len(trace.chunk_types),
           f"{trace.checks} CHECK chunks for {len(trace.chunk_types)} chunks")
    expect(any(m[3] == "" for m in trace.modules), "no MODULE chunk for the executable")
    expect(trace.pointer_size == args.pointer_size if args.pointer_size else True,
           f"pointer size {trace.pointer_size}, expected {args.pointer_size}")
    if args.endian:
        expect(trace.endian == {"little": 1, "big": 2}[args.endian],
               f"endian byte {trace.endian}, expected {args.endian}")

    if trace.complete:
        expect(trace.truncated is None, f"complete file with a cut chunk at {trace.truncated}")
        expect(not trace.holes, f"complete file with holes at {trace.holes[:5]}")
        expect(len(trace.clocks) == 1, f"{len(trace.clocks)} CLOCK chunks in a complete file")
        expect(trace.records == total_records,
               f"header records {trace.records} != {total_records} in EVENTS chunks")
        expect(trace.lost >= total_lost_chunks,
               f"header lost {trace.lost} < {total_lost_chunks} in LOST chunks")
        expect(trace.ticks_per_second > 0, "complete file with ticks_per_second 0")
        if trace.clocks:
            tps, first, last = trace.clocks[0]
            expect(tps == trace.ticks_per_second,
                   f"CLOCK ticks_per_second {tps} != header {trace.ticks_per_second}")
            expect(first <= last, f"CLOCK first_tick {first} > last_tick {last}")
            for t in trace.threads:
                if t.end is not None and not args.no_time_bounds:
                    expect(t.end <= last, f"thread {t.tid}: END at {t.end} after the CLOCK's "
                                          f"last tick {last}")
                if t.records and not args.no_time_bounds:
                    lo = min(r[0] for r in t.records)
                    hi = max(r[0] for r in t.records)
                    expect(first <= lo and hi <= last,
                           f"thread {t.tid}: times [{lo}, {hi}] outside the CLOCK's "
                           f"[{first}, {last}]")
        for t in trace.threads:
            expect(t.name is not None, f"thread {t.tid} has no THREAD chunk")
        seqs = [t.sequence for t in trace.threads if t.sequence is not None]
        expect(len(seqs) == len(set(seqs)), f"thread sequence numbers repeat: {sorted(seqs)}")
    for t in trace.threads:
        times = [r[0] for r in t.records]
        if not args.no_monotonic:
            bad = next((i for i in range(1, len(times)) if times[i] < times[i - 1]), None)
            expect(bad is None, f"thread {t.tid}: record {bad} goes back in time")
        expect(t.lost_chunks <= 1, f"thread {t.tid}: {t.lost_chunks} LOST chunks")
        if t.end is not None and times and not args.no_monotonic:
            expect(t.end >= max(times), f"thread {t.tid}: END at {t.end} before its last "
                                        f"record at {max(times)}")

    if args.complete:
        expect(trace.complete, "the complete flag is clear")
    if args.incomplete:
        expect(not trace.complete, "the complete flag is set")
    if args.records is not None:
        expect(total_records == args.records,
               f"{total_records} records in EVENTS chunks, expected {args.records}")
    if args.records_max is not None:
        expect(total_records <= args.records_max,
               f"{total_records} records in EVENTS chunks, expected at most {args.records_max}")
    if args.folded_min is not None:
        expect(trace.folded >= args.folded_min,
               f"{trace.folded} calls in FOLDED chunks, expected at least {args.folded_min}")
    if args.records_min is not None:
        expect(total_records >= args.records_min,
               f"{total_records} records in EVENTS chunks, expected at least {args.records_min}")
    if args.lost is not None:
        expect(trace.lost == args.lost, f"header lost {trace.lost}, expected {args.lost}")
    if args.lost_min is not None:
        expect(trace.lost >= args.lost_min, f"header lost {trace.lost} < {args.lost_min}")
    if args.generated is not None:
        expect(trace.records + trace.lost == args.generated,
               f"records {trace.records} + lost {trace.lost} != {args.generated} generated")
    if args.lost_chunks_equal_header:
        expect(total_lost_chunks == trace.lost,
               f"LOST chunks say {total_lost_chunks}, header lost {trace.lost}")
    if args.events_end_max is not None:
        expect(trace.events_end <= args.events_end_max,
               f"an EVENTS chunk ends at {trace.events_end} > {args.events_end_max}")
    if args.threads is not None:
        with_events = [t for t in trace.threads if t.records or t.name is not None]
        expect(len(with_events) == args.threads,
               f"{len(with_events)} threads, expected {args.threads}")
    by_name = {}
    for t in trace.threads:
        by_name.setdefault(t.name, []).append(t)
    for spec in args.thread_records:
        name, _, n = spec.partition("=")
        ts = by_name.get(name, [])
        expect(len(ts) == 1, f"{len(ts)} threads named {name!r}, expected 1 "
                             f"(names: {sorted(str(k) for k in by_name)})")
        if len(ts) == 1:
            if n.startswith(">="):
                expect(records_of(ts[0]) >= int(n[2:]),
                       f"thread {name!r}: {records_of(ts[0])} records, expected {n}")
            else:
                expect(records_of(ts[0]) == int(n),
                       f"thread {name!r}: {records_of(ts[0])} records, expected {n}")
    if args.ended_threads is not None:
        ended = sum(1 for t in trace.threads if t.end is not None)
        expect(ended == args.ended_threads,
               f"{ended} threads with an END chunk, expected {args.ended_threads}")
    if args.first_thread is not None:
        first = [t for t in trace.threads if t.sequence == 1]
        expect(len(first) == 1 and first[0].name == args.first_thread,
               f"thread 1 is {[t.name for t in first]}, expected {args.first_thread!r}")
    for spec in args.switched_out_ms:
        # NAME=MS: the thread named NAME was switched out at least MS ms in all.
        name, _, ms = spec.partition("=")
        ts = [t for t in trace.threads if t.name == name]
        out_ns = sum(b - a for t in ts for a, b in t.switches)
        expect(len(ts) == 1 and out_ns >= float(ms) * 1e6,
               f"thread {name!r}: switched out {out_ns / 1e6:.3f} ms, expected at least {ms}")
    if args.no_switches:
        n = sum(len(t.switches) for t in trace.threads)
        expect(n == 0, f"{n} context switches in SWITCH chunks, expected none")
    if args.exe_suffix is not None:
        expect(trace.exe is not None and trace.exe.endswith(args.exe_suffix),
               f"EXE path {trace.exe!r} does not end with {args.exe_suffix!r}")

    unmatched_entries = unmatched_exits = open_frames = 0
    for t in trace.threads:
        ue, ux, op = trace.pairing(t)
        unmatched_entries += ue
        unmatched_exits += ux
        open_frames += op
    if args.balanced:
        expect(unmatched_entries == 0 and unmatched_exits == 0 and open_frames == 0,
               f"not balanced: {unmatched_entries} unmatched entries, {unmatched_exits} "
               f"unmatched exits, {open_frames} frames open at the end")
    if args.open_frames is not None:
        expect(open_frames == args.open_frames,
               f"{open_frames} frames open at the end, expected {args.open_frames}")
    if args.max_open_frames is not None:
        expect(open_frames <= args.max_open_frames,
               f"{open_frames} frames open at the end, expected at most {args.max_open_frames}")
    if args.unmatched_exits is not None:
        expect(unmatched_exits == args.unmatched_exits,
               f"{unmatched_exits} unmatched exits, expected {args.unmatched_exits}")

    if "pid" in variables:
        expect(trace.pid == int(variables["pid"]),
               f"header pid {trace.pid}, program said {variables['pid']}")
    for spec in args.entries:
        name, _, n = spec.partition("=")
        key = "addr." + name
        if key not in variables:
            errors.append(f"--entries {name}: the program printed no {key}=")
            continue
        addr = int(variables[key], 16)
        count = sum(1 for t in trace.threads if not t.profile for r in t.records
                    if r[1] == KIND_ENTRY and r[2] == addr)
        for t in trace.threads:  # a tree's calls, closed and open: every call
            if t.profile:
                nodes = t.profile["nodes"]
                count += sum(n[2] for n in nodes if n[1] == addr)
                count += sum(1 for i in t.profile["open"] if nodes[i][1] == addr)
        expect(count == int(n), f"{count} entries of {name} ({addr:#x}), expected {n}")
        exe_modules = [m for m in trace.modules if m[3] == ""]
        expect(any(m[1] <= addr < m[2] for m in exe_modules),
               f"{name} ({addr:#x}) is not inside the executable's MODULE range")
    return errors, (total_records, unmatched_entries, unmatched_exits, open_frames)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("file")
    p.add_argument("--vars", help="key=value lines printed by the test program")
    p.add_argument("--complete", action="store_true")
    p.add_argument("--incomplete", action="store_true")
    p.add_argument("--records", type=int, help="records in EVENTS and PACKED chunks")
    p.add_argument("--records-min", type=int)
    p.add_argument("--records-max", type=int)
    p.add_argument("--folded-min", type=int, help="calls in FOLDED chunks (HOOKCC_MIN_DURATION)")
    p.add_argument("--lost", type=int, help="header lost")
    p.add_argument("--lost-min", type=int)
    p.add_argument("--generated", type=int, help="header records + lost")
    p.add_argument("--lost-chunks-equal-header", action="store_true")
    p.add_argument("--events-end-max", type=int)
    p.add_argument("--threads", type=int)
    p.add_argument("--thread-records", action="append", default=[], metavar="NAME=N|NAME=>=N")
    p.add_argument("--first-thread", metavar="NAME")
    p.add_argument("--ended-threads", type=int, help="threads with an END chunk")
    p.add_argument("--exe-suffix")
    p.add_argument("--switched-out-ms", action="append", default=[], metavar="NAME=MS",
                   help="thread NAME's SWITCH chunks add up to at least MS ms switched out")
    p.add_argument("--no-switches", action="store_true", help="no SWITCH chunk has a switch")
    p.add_argument("--entries", action="append", default=[], metavar="NAME=N")
    p.add_argument("--balanced", action="store_true")
    p.add_argument("--overhead", action="store_true",
                   help="require the OVERHEAD chunk (the runtime timed its hooks at start)")
    p.add_argument("--open-frames", type=int)
    p.add_argument("--max-open-frames", type=int)
    p.add_argument("--unmatched-exits", type=int)
    p.add_argument("--pointer-size", type=int)
    p.add_argument("--endian", choices=["little", "big"])
    p.add_argument("--no-monotonic", action="store_true",
                   help="do not require a thread's timestamps to be non-decreasing")
    p.add_argument("--no-time-bounds", action="store_true",
                   help="do not require timestamps inside the CLOCK chunk's range")
    args = p.parse_args()

    variables = {}
    if args.vars:
        with open(args.vars, encoding="utf-8", errors="replace") as f:
            for line in f:
                key, sep, value = line.strip().partition("=")
                if sep:
                    variables[key] = value
    try:
        trace = Trace(args.file)
    except (OSError, FormatError) as e:
        print(f"{args.file}: {e}")
        return 1
    errors, (records, ue, ux, op) = check(trace, args, variables)
    for e in errors:
        print(f"{args.file}: {e}")
    if errors:
        return 1
    print(f"{args.file}: ok: {'complete' if trace.complete else 'INCOMPLETE'}, "
          f"{records} records, {trace.lost} lost, {len(trace.threads)} threads, "
          f"{len(trace.modules)} modules, {trace.ticks_per_second} ticks/s, "
          f"unmatched {ue} entries / {ux} exits, {op} open")
    return 0


if __name__ == "__main__":
    sys.exit(main())
