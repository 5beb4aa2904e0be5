#!/usr/bin/env python3
"""write_core.py PID OUT: an ELF core file of a live process, from /proc/PID/maps and
/proc/PID/mem, without attaching to it: a PT_LOAD segment per readable mapping and the NT_FILE
note of its mapped files (what `hookprof core` reads; no registers). For the tests, where gdb's
gcore cannot attach because the suite itself runs under strace (scripts/test.sh --fresh).
64-bit little-endian Linux processes only."""

import struct
import sys


def main():
    pid, out = sys.argv[1], sys.argv[2]
    with open(f"/proc/{pid}/exe", "rb") as exe:
        head = exe.read(20)
    if head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
        sys.exit(f"write_core.py: process {pid} is not a 64-bit little-endian ELF program")
    machine = struct.unpack_from("<H", head, 18)[0]
    maps = []
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            parts = line.split(maxsplit=5)
            start, end = (int(x, 16) for x in parts[0].split("-"))
            path = parts[5].strip() if len(parts) > 5 else ""
            maps.append((start, end, parts[1], int(parts[2], 16), path))
    segments = []
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for start, end, perms, _, path in maps:
            if "r" not in perms or path in ("[vvar]", "[vsyscall]"):
                continue
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except OSError:
                continue
            segments.append((start, data))
    page = 4096
    files = [(s, e, o, p) for s, e, _, o, p in maps if p.startswith("/")]
    desc = struct.pack("<QQ", len(files), page)
    desc += b"".join(struct.pack("<QQQ", s, e, o // page) for s, e, o, _ in files)
    desc += b"".join(p.encode() + b"\0" for *_, p in files)

    def pad4(b):
        return b + b"\0" * (-len(b) % 4)

    notes = struct.pack("<III", 5, len(desc), 0x46494C45) + pad4(b"CORE\0") + pad4(desc)
    phnum = 1 + len(segments)
    offset = 64 + 56 * phnum
    phdrs = struct.pack("<IIQQQQQQ", 4, 0, offset, 0, 0, len(notes), 0, 4)  # PT_NOTE
    offset += len(notes)
    offset += -offset % page
    body = []
    for start, data in segments:  # PT_LOAD, readable
        phdrs += struct.pack("<IIQQQQQQ", 1, 4, offset, start, 0, len(data), len(data), page)
        body.append((offset, data))
        offset += len(data) + (-len(data) % page)
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    header = struct.pack("<16sHHIQQQIHHHHHH", ident, 4, machine, 1, 0, 64, 0, 0, 64, 56, phnum,
                         0, 0, 0)
    with open(out, "wb") as f:
        f.write(header + phdrs + notes)
        for at, data in body:
            f.seek(at)
            f.write(data)


if __name__ == "__main__":
    main()
