#!/usr/bin/env bash
# Tests of the gprof runtime (runtime/src/gprof.c, <hookcc/gprof.h>, docs/gprof.md).
#
#   - gprof.c compiled with -Wall -Wextra -Werror natively, for the Linux cross targets and
#     freestanding (bare metal);
#   - gprof_calls.c (call counts known by construction) built with hookcc --hook-runtime=gprof
#     at -O1 and -O2, PIE and not, run: GNU gprof reads its gmon.out and prints the known
#     counts in the flat profile and the call graph, and the spinning function's samples;
#   - spin.c: gprof's seconds match the CPU time the program used (the rate delivered);
#     `hookprof gprof` turns the program's own dump of its data into the same gmon.out, byte
#     for byte; with HOOKCC_GPROF_CALLGRAPH=0, `gprof --no-graph` works and no calls are counted;
#   - own_mcount.c: a firmware's own mcount calls __profile_mcount as <hookcc/gprof.h> declares
#     it (uintptr_t, uintptr_t) in a translation unit the gprof build instruments; gprof shows
#     the arcs it recorded;
#   - scripts/gprof.gdb's gprof_dump in gdb, as on a bare-metal target: gprof.dump, and gmon.out
#     written from it by hookprof gprof;
#   - under qemu-user for aarch64 and s390x (big endian): the dump converted by hookprof equals
#     the program's gmon.out (Debian's gprof reads only the host's architecture).
#
# Usage: runtime/test/gprof/run.sh [-v]
#   HOOKCC    the driver (default: target/debug/hookcc; hookprof is taken beside it)
# Prints "N passed, N failed" last; exits non-zero if anything failed.
set -u

verbose=0
[ "${1:-}" = "-v" ] && verbose=1

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
HOOKCC=${HOOKCC:-$root/target/debug/hookcc}
HOOKPROF=$(dirname "$HOOKCC")/hookprof
CLANG=${CLANG:-clang-19}
if [ ! -x "$HOOKCC" ] || [ ! -x "$HOOKPROF" ]; then
    echo "$HOOKCC or $HOOKPROF not found: build them first (cargo build --workspace)" >&2
    exit 2
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/hookcc-gprof-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
export HOOKCC_CACHE_DIR=$work/cache
unset HOOKCC_GMON_OUT HOOKCC_GPROF_AUTO HOOKCC_GPROF_CALLGRAPH
# shellcheck source=../harness.sh
. "$here/../harness.sh"

compile_everywhere gprof

# The calls column of gprof's flat profile for FUNCTION (empty if none).
calls_of() { # FUNCTION FLAT-PROFILE
    awk -v f="$1" '$NF == f && NF == 7 { print $4 } $NF == f && NF == 4 { print "" }' "$2"
}

expect_calls() { # FLAT-PROFILE FUNCTION=COUNT...
    local flat=$1
    shift
    local pair got
    for pair in "$@"; do
        got=$(calls_of "${pair%%=*}" "$flat")
        [ "$got" = "${pair#*=}" ] || { echo "${pair%%=*}: calls '$got', expected '${pair#*=}'"; cat "$flat"; return 1; }
    done
}

native_case() { # HOOKCC-ARGS...
    "$HOOKCC" --hook-runtime=gprof -g "$@" "$here/gprof_calls.c" -o prog || return 1
    ./prog data.bin >/dev/null || { echo "exit status $?"; return 1; }
    gprof -b -p prog gmon.out >flat.txt || return 1
    cat flat.txt
    expect_calls flat.txt spin=1 work=40 leaf=120 twice=20 || return 1
    # spin burns the program's time: most samples are its.
    awk '$NF == "spin" && $1 + 0 < 50 { bad = 1 } END { exit bad }' flat.txt ||
        { echo "spin has under half of the samples"; return 1; }
    gprof -b -q prog gmon.out >graph.txt || return 1
    grep -Eq '^ +[0-9.]+ +[0-9.]+ +120/120 +work \[[0-9]+\]$' graph.txt ||
        { echo "leaf's parent line (120/120 from work) is missing"; cat graph.txt; return 1; }
    "$HOOKPROF" gprof data.bin --exe prog -o converted.out || return 1
    cmp gmon.out converted.out || { echo "hookprof gprof's gmon.out differs from the program's"; return 1; }
}
check "gprof: -O1 (PIE)" native_case -O1
check "gprof: -O2 -no-pie" native_case -O2 -no-pie

no_graph_case() {
    "$HOOKCC" --hook-runtime=gprof -O1 "$here/gprof_calls.c" -o prog || return 1
    HOOKCC_GPROF_CALLGRAPH=0 ./prog >/dev/null || return 1
    gprof -b --no-graph prog gmon.out >flat.txt || return 1
    cat flat.txt
    expect_calls flat.txt spin= work= || return 1
    "$HOOKCC" --hook-runtime=gprof -O1 "$here/gprof_calls.c" -o prog2 || return 1
    HOOKCC_GPROF_CALLGRAPH=0 ./prog2 data.bin >/dev/null || return 1
    "$HOOKPROF" gprof data.bin --exe prog2 -o converted.out 2>warn.txt || return 1
    grep -q "no call graph" warn.txt || { echo "no warning about the missing call graph"; return 1; }
}
check "gprof: HOOKCC_GPROF_CALLGRAPH=0, gprof --no-graph" no_graph_case

# Issue 27 item 7: gprof's seconds are the program's CPU time, whatever interval the kernel
# delivers (one sample per 4 ms for the 1 ms asked with HZ=250: times were 4x too small).
rate_case() {
    "$HOOKCC" --hook-runtime=gprof -O1 -g "$here/spin.c" -o spin || return 1
    local cpu
    cpu=$(./spin) || return 1
    gprof -b -p spin gmon.out >flat.txt || return 1
    cat flat.txt
    local seconds
    seconds=$(awk '$NF == "spin" { print $2 }' flat.txt)
    echo "CPU time $cpu s, gprof $seconds s"
    # Within 15 %: the samples are counted, the CPU time is measured.
    awk -v c="$cpu" -v g="$seconds" 'BEGIN { exit !(g != "" && g > c * 0.85 && g < c * 1.15) }'
}
check "gprof: seconds in gmon.out are the CPU time used (delivered sampling rate)" rate_case

# Issue 27 item 8: the pass called for __profile_mcount(void *, void *) and rejected the
# header's (uintptr_t, uintptr_t) when a firmware's own mcount called it.
own_mcount_case() {
    "$HOOKCC" --hook-runtime=gprof -O1 -g "$here/own_mcount.c" -o prog || return 1
    ./prog >/dev/null || { echo "exit status $?"; return 1; }
    gprof -b -p prog gmon.out >flat.txt || return 1
    cat flat.txt
    expect_calls flat.txt handler=25 caller=1 || return 1
    gprof -b -q prog gmon.out >graph.txt || return 1
    grep -Eq '^ +[0-9.]+ +[0-9.]+ +25/25 +caller \[[0-9]+\]$' graph.txt ||
        { echo "handler's parent line (25/25 from caller) is missing"; cat graph.txt; return 1; }
}
check "gprof: a firmware's own mcount calls __profile_mcount(uintptr_t, uintptr_t)" own_mcount_case

# The bare-metal way, tried on the host: gdb, attached to qemu-user's gdb stub as a debugger
# reaches a board (not by ptrace, which strace holds in a --fresh run), stops the program,
# scripts/gprof.gdb's gprof_dump saves the data, writes gmon.out from it with hookprof gprof
# ($HOOKPROF) and resets the counts.
gdb_case() {
    "$HOOKCC" --hook-runtime=gprof -O1 -g -no-pie "$here/gprof_calls.c" -o prog || return 1
    local port=$((20000 + $$ % 20000)) qemu
    HOOKCC_GMON_OUT=at-exit.out "qemu-$(uname -m)" -g "$port" ./prog >/dev/null &
    qemu=$!
    for _ in $(seq 50); do
        ss -ltn | grep -q ":$port " && break
        sleep 0.1
    done
    HOOKPROF=$HOOKPROF timeout 120 gdb-multiarch -batch -nx -x "$root/scripts/gprof.gdb" \
        -ex "file prog" -ex "target remote localhost:$port" -ex 'break spin' -ex continue \
        -ex gprof_dump -ex continue || { kill "$qemu"; return 1; }
    wait "$qemu" || { echo "the program under qemu exited with $?"; return 1; }
    [ -s gprof.dump ] || { echo "gprof_dump did not keep gprof.dump"; return 1; }
    "$HOOKPROF" gprof gprof.dump --exe prog -o dumped.out || return 1
    cmp gmon.out dumped.out || { echo "gprof_dump's gmon.out is not hookprof gprof's of gprof.dump"; return 1; }
    gprof -b -p prog gmon.out >flat.txt || return 1
    cat flat.txt
    expect_calls flat.txt work=40 leaf=120 twice=20 || return 1
    # The counts were reset at the breakpoint: the program's own gmon.out at exit has none of
    # the calls made before it.
    gprof -b -p prog at-exit.out >after.txt || return 1
    cat after.txt
    expect_calls after.txt work= leaf= twice=
}
check "gprof: gdb's gprof_dump (scripts/gprof.gdb) writes gmon.out with hookprof gprof" gdb_case

qemu_case() { # ARCH
    local triple=$1-linux-gnu
    "$HOOKCC" --hook-runtime=gprof -O1 --target="$triple" -fuse-ld=lld "$here/gprof_calls.c" \
        -o prog || return 1
    "qemu-$1" -L "/usr/$triple" ./prog data.bin >/dev/null || { echo "exit status $?"; return 1; }
    [ -s gmon.out ] || { echo "no gmon.out"; return 1; }
    "$HOOKPROF" gprof data.bin --exe prog -o converted.out || return 1
    cmp gmon.out converted.out || { echo "hookprof gprof's gmon.out differs from the program's"; return 1; }
}
for arch in aarch64 s390x; do
    if command -v "qemu-$arch" >/dev/null && [ -d "/usr/$arch-linux-gnu/lib" ]; then
        check "gprof: $arch under qemu, dump == gmon.out" qemu_case "$arch"
    else
        cannot_run "gprof ($arch)" "qemu-$arch or /usr/$arch-linux-gnu missing"
    fi
done

report_results
