#!/usr/bin/env bash
# Takes profiling data out of a bare-metal program running under qemu-system with a debugger,
# the way a CCS or eCos user takes it out of a board: gdb-multiarch, attached to qemu's gdb
# stub, stops the program at a function, saves memory to a file, and lets the program run to
# its end. docs/baremetal.md.
#
# Usage: scripts/baremetal-dump.sh FIRMWARE.elf FUNCTION WHAT DUMP.bin -- QEMU-COMMAND…
#   FUNCTION is where to stop (the first time it is called). WHAT is what to save:
#     VARIABLE  one variable's memory (its size from the ELF symbol table, else from the debug
#               information), e.g. the buffer given to OS_InitCallTrace: decode with
#               `hookprof nitro`; or pfpInst: `hookprof pfp`
#     @ti       TI's ProfileData, only as much as holds records: uiProfileDataCnt records, or
#               all uiMaxProfileRecordNum once the count reached it (a full or wrapped buffer),
#               as <hookcc/ti.h> says: `hookprof ti`
#     @gprof    the gprof data profile_on set up (hookcc_gprof_data_size bytes from
#               hookcc_gprof_data, as scripts/gprof.gdb's gprof_fetch): `hookprof gprof`
#     @trace    the native trace (hookcc --trace): gdb calls hookcc_trace_finish() in the
#               halted target and saves the file it completes (a ring's last records, oldest
#               first): `hookprof report DUMP --exe FIRMWARE.elf`
#     @packed   the packed RAM buffer (HOOKCC_TRACE_PACKED_BUFFER, or its flight recorder): gdb
#               calls hookcc_trace_packed_finish() in the halted target and saves the stream it
#               ends, up to _SEGGER_RTT's WrOff: `hookprof record --serial DUMP --exe FIRMWARE.elf`
#   QEMU-COMMAND is how the firmware boots (qemu-system-arm -M versatilepb … -kernel
#   FIRMWARE.elf); -S (wait for the debugger) and a gdb stub on a free port are added.
#   What the firmware prints goes to stdout; the exit status is the firmware's (qemu's).
# Environment: GDB (default gdb-multiarch), HOOKCC_DUMP_TIMEOUT (seconds, default 60).
set -euo pipefail

if [ $# -lt 6 ] || [ "$5" != "--" ]; then
    echo "usage: $0 FIRMWARE.elf FUNCTION WHAT DUMP.bin -- QEMU-COMMAND..." >&2
    exit 2
fi
firmware=$1 function=$2 what=$3 dump=$4
shift 5
gdb=${GDB:-gdb-multiarch}
timeout=${HOOKCC_DUMP_TIMEOUT:-60}
for tool in "$gdb" python3 "$1"; do
    command -v "$tool" >/dev/null || { echo "$0: $tool not found (scripts/setup.sh installs it)" >&2; exit 2; }
done
[ -f "$firmware" ] || { echo "$0: $firmware: no such file" >&2; exit 2; }
rm -f "$dump"

# The gdb commands that save WHAT into $dump (the runtimes have no debug information: their
# variables are cast).
case "$what" in
    @ti)
        # Record size: 12 bytes with 32-bit pointers, 16 with 64-bit ones (docs/ti-runtime.md).
        save=(
            -ex 'set $cap = *(unsigned int *)&uiMaxProfileRecordNum'
            -ex 'set $cnt = *(unsigned int *)&uiProfileDataCnt'
            -ex 'set $n = $cnt < $cap ? $cnt : $cap'
            -ex 'set $size = sizeof(void *) == 4 ? 12 : 16'
            -ex 'set $start = (char *)&ProfileData'
            -ex "dump binary memory $dump \$start \$start + \$n * \$size"
            -ex 'printf "hookcc: dumped %u TI records (uiProfileDataCnt %u, capacity %u)\n", $n, $cnt, $cap'
        ) ;;
    @gprof)
        save=(
            -ex 'set $start = *(char **)&hookcc_gprof_data'
            -ex 'set $size = *(unsigned long *)&hookcc_gprof_data_size'
            -ex "dump binary memory $dump \$start \$start + \$size"
            -ex 'printf "hookcc: dumped %lu bytes of gprof data at %p\n", $size, $start'
        ) ;;
    @trace)
        # The file is HOOKCC_TRACE_PREFIX_BYTES (192) then the header's `records` (offset 48)
        # 16-byte records (<hookcc/trace_baremetal.h>).
        save=(
            -ex 'set $t = (char *)((void *(*)(void *))hookcc_trace_finish)(0)'
            -ex 'set $n = *(unsigned long long *)($t + 48)'
            -ex "dump binary memory $dump \$t \$t + 192 + \$n * 16"
            -ex 'printf "hookcc: dumped the native trace: %llu records\n", $n'
        ) ;;
    @packed)
        # The stream's bytes end at up[0].WrOff of the RTT control block: after its id (16),
        # two ints, and up[0]'s name and buffer pointers and its size (<hookcc/trace_baremetal.h>).
        save=(
            -ex 'set $t = (char *)((void *(*)(void *))hookcc_trace_packed_finish)(0)'
            -ex 'set $n = *(unsigned int *)((char *)&_SEGGER_RTT + 24 + 2 * sizeof(void *) + 4)'
            -ex "dump binary memory $dump \$t \$t + \$n"
            -ex 'printf "hookcc: dumped the packed RAM buffer: %u bytes\n", $n'
        ) ;;
    @*)
        echo "$0: unknown WHAT $what (a variable, @ti, @gprof, @trace or @packed)" >&2
        exit 2 ;;
    *)
        # The symbol's size from the ELF symbol table: a runtime's variables (pfpInst) have no
        # debug information; the program's own arrays may have.
        # (Only a name the table has once: static variables of several files may share one.)
        size=$(nm -S "$firmware" 2>/dev/null | awk -v v="$what" '$4 == v { n++; s = $2 } END { if (n == 1) print s }')
        if [ -n "$size" ]; then
            save=(
                -ex "dump binary memory $dump (char*)&$what (char*)&$what+0x$size"
                -ex "printf \"hookcc: dumped %u bytes of $what at %p\\n\", 0x$size, &$what"
            )
        else
            save=(
                -ex "dump binary value $dump $what"
                -ex "printf \"hookcc: dumped %u bytes of $what at %p\\n\", sizeof($what), &$what"
            )
        fi ;;
esac

# A free TCP port for the stub (another process could take it before qemu does: unlikely).
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
timeout "$timeout" "$@" -S -gdb "tcp:127.0.0.1:$port" &
qemu=$!

"$gdb" -nx -batch -q "$firmware" \
    -ex "set confirm off" \
    -ex "set pagination off" \
    -ex "target remote 127.0.0.1:$port" \
    -ex "break $function" \
    -ex "continue" \
    "${save[@]}" \
    -ex "delete" \
    -ex "detach" >&2 || { kill "$qemu" 2>/dev/null; wait "$qemu" 2>/dev/null; echo "$0: $gdb failed" >&2; exit 1; }
status=0
wait "$qemu" || status=$?
if [ ! -s "$dump" ]; then
    echo "$0: no dump written: did the firmware reach $function?" >&2
    case "$what" in
        @gprof) echo "$0: (hookcc_gprof_data is null until profile_on() is called)" >&2 ;;
        @*) ;;
        *) echo "$0: (is $what described: compiled with -g?)" >&2 ;;
    esac
    exit 1
fi
exit "$status"
