#!/usr/bin/env bash
# Takes a buffer out of a bare-metal program running under qemu-system with a debugger:
# gdb-multiarch, attached to qemu's gdb stub, stops the program at a function, saves one
# variable's memory (an array such as the buffer given to OS_InitCallTrace, which the program
# must be compiled with -g to describe), and lets the program run to its end. Decode the dump
# with `hookprof nitro DUMP --exe FIRMWARE` (NITRO buffers); TI's ProfileData has its own
# script, scripts/baremetal-ti-dump.sh, which saves only the recorded part.
#
# Usage: scripts/baremetal-dump.sh FIRMWARE.elf FUNCTION VARIABLE DUMP.bin -- QEMU-COMMAND…
#   FUNCTION is where to stop (the first time it is called), VARIABLE what to save;
#   QEMU-COMMAND is how the firmware boots; -S and a gdb stub on a free port are added.
#   What the firmware prints goes to stdout; the exit status is the firmware's (qemu's).
# Environment: GDB (default gdb-multiarch), HOOKCC_DUMP_TIMEOUT (seconds, default 60).
set -euo pipefail

if [ $# -lt 6 ] || [ "$5" != "--" ]; then
    echo "usage: $0 FIRMWARE.elf FUNCTION VARIABLE DUMP.bin -- QEMU-COMMAND..." >&2
    exit 2
fi
firmware=$1 function=$2 variable=$3 dump=$4
shift 5
gdb=${GDB:-gdb-multiarch}
timeout=${HOOKCC_DUMP_TIMEOUT:-60}
for tool in "$gdb" python3 "$1"; do
    command -v "$tool" >/dev/null || { echo "$0: $tool not found (scripts/setup.sh installs it)" >&2; exit 2; }
done
[ -f "$firmware" ] || { echo "$0: $firmware: no such file" >&2; exit 2; }
rm -f "$dump"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
timeout "$timeout" "$@" -S -gdb "tcp:127.0.0.1:$port" &
qemu=$!

"$gdb" -nx -batch -q "$firmware" \
    -ex "set confirm off" \
    -ex "set pagination off" \
    -ex "target remote 127.0.0.1:$port" \
    -ex "break $function" \
    -ex "continue" \
    -ex "dump binary value $dump $variable" \
    -ex "printf \"hookcc: dumped %u bytes of $variable at %p\\n\", sizeof($variable), &$variable" \
    -ex "delete" \
    -ex "detach" >&2 || { kill "$qemu" 2>/dev/null; wait "$qemu" 2>/dev/null; echo "$0: $gdb failed" >&2; exit 1; }
status=0
wait "$qemu" || status=$?
if [ ! -s "$dump" ]; then
    echo "$0: no dump written: did the firmware reach $function, and is $variable described (-g)?" >&2
    exit 1
fi
exit "$status"
