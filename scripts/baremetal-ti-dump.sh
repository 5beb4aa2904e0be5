#!/usr/bin/env bash
# Takes hookcc's TI record buffer out of a bare-metal program running under qemu-system, the
# way a CCS user takes it out of a board: a debugger (gdb-multiarch, attached to qemu's gdb
# stub) stops the program at hookcc_ti_done(), dumps ProfileData as raw memory, and lets the
# program run to its end. Decode the dump with `hookprof ti DUMP --exe FIRMWARE`.
#
# Usage: scripts/baremetal-ti-dump.sh FIRMWARE.elf DUMP.bin -- QEMU-COMMAND…
#   QEMU-COMMAND is how the firmware boots (qemu-system-arm -M versatilepb … -kernel
#   FIRMWARE.elf); this script adds -S (wait for the debugger) and a gdb stub on a free port.
#   What the firmware prints goes to stdout; the exit status is the firmware's (qemu's).
#   Only as much of the buffer as holds records is dumped: uiProfileDataCnt records, or all
#   uiMaxProfileRecordNum once the count reached it (a full or wrapped buffer), as
#   <hookcc/ti.h> says.
# Environment: GDB (default gdb-multiarch), HOOKCC_DUMP_TIMEOUT (seconds, default 60).
set -euo pipefail

if [ $# -lt 4 ] || [ "$3" != "--" ]; then
    echo "usage: $0 FIRMWARE.elf DUMP.bin -- QEMU-COMMAND..." >&2
    exit 2
fi
firmware=$1 dump=$2
shift 3
gdb=${GDB:-gdb-multiarch}
timeout=${HOOKCC_DUMP_TIMEOUT:-60}
for tool in "$gdb" python3 "$1"; do
    command -v "$tool" >/dev/null || { echo "$0: $tool not found (scripts/setup.sh installs it)" >&2; exit 2; }
done
[ -f "$firmware" ] || { echo "$0: $firmware: no such file" >&2; exit 2; }
rm -f "$dump"

# A free TCP port for the stub (another process could take it before qemu does: unlikely).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
timeout "$timeout" "$@" -S -gdb "tcp:127.0.0.1:$port" &
qemu=$!

# Record size: 12 bytes with 32-bit pointers, 16 with 64-bit ones (docs/ti-runtime.md).
"$gdb" -nx -batch -q "$firmware" \
    -ex "set confirm off" \
    -ex "set pagination off" \
    -ex "target remote 127.0.0.1:$port" \
    -ex "break hookcc_ti_done" \
    -ex "continue" \
    -ex 'set $cap = *(unsigned int *)&uiMaxProfileRecordNum' \
    -ex 'set $cnt = *(unsigned int *)&uiProfileDataCnt' \
    -ex 'set $n = $cnt < $cap ? $cnt : $cap' \
    -ex 'set $size = sizeof(void *) == 4 ? 12 : 16' \
    -ex 'set $start = (char *)&ProfileData' \
    -ex 'set $end = $start + $n * $size' \
    -ex "dump binary memory $dump \$start \$end" \
    -ex 'printf "hookcc: dumped %u TI records (uiProfileDataCnt %u, capacity %u)\n", $n, $cnt, $cap' \
    -ex "delete" \
    -ex "detach" >&2 || { kill "$qemu" 2>/dev/null; wait "$qemu" 2>/dev/null; echo "$0: $gdb failed" >&2; exit 1; }
status=0
wait "$qemu" || status=$?
if [ ! -f "$dump" ]; then
    echo "$0: no dump written: did the firmware reach hookcc_ti_done()?" >&2
    exit 1
fi
exit "$status"
