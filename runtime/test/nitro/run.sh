#!/usr/bin/env bash
# Tests of the NITRO-SDK profiler runtimes (runtime/src/calltrace.c, runtime/src/functioncost.c)
# and of the NITRO dialect end to end: real programs built with hookcc, run, output compared.
#
#   - each runtime compiled with -Wall -Wextra -Werror, natively and for every cross target
#     whose headers are installed (and freestanding);
#   - the seed's programs (seeds/nitro-sdk-profiler.txt §3.5.1, §3.5.2, §4.4) print the seed's
#     dumps (expected/*.txt; "lr=<hex>" becomes "lr=ADDR" and "cost <n>" becomes "cost C" before
#     comparing, everything else exact); in a -no-pie build every lr is checked to lie in the
#     function the seed says;
#   - every #pragma profile case of §1.3 and §1.3.1, run with the program's own hooks;
#   - the Makefile project tests/programs/nitro_make with NITRO_PROFILE_TYPE=CALLTRACE,
#     FUNCTIONCOST, none (own hooks, §5), and without profiling;
#   - the runtime tests in this directory (ct_*.c, fc_*.c): misuse, overflow, threads,
#     user-level threads with switches reported, …;
#   - the seed's programs and one runtime test for aarch64 under qemu-aarch64.
#
# Usage: runtime/test/nitro/run.sh [-v] [--bench]
#   -v        print every check's output, not only failures'
#   --bench   also count the hooks' instructions per entry+exit pair with callgrind
#   HOOKCC    the driver (default: target/debug/hookcc; build it with `cargo build --workspace`)
# Prints "N passed, N failed" last; exits non-zero if anything failed.
set -u

verbose=0 bench=0
for arg in "$@"; do
    case $arg in
    -v) verbose=1 ;;
    --bench) bench=1 ;;
    *) echo "usage: $0 [-v] [--bench]" >&2; exit 2 ;;
    esac
done

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
programs=$root/tests/programs
expected=$here/expected
HOOKCC=${HOOKCC:-$root/target/debug/hookcc}
CLANG=${CLANG:-clang-19}
CXX=${CXX:-clang++-19}
if [ ! -x "$HOOKCC" ]; then
    echo "$HOOKCC not found: build it first (cargo build --workspace)" >&2
    exit 2
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/hookcc-nitro-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
# shellcheck source=../harness.sh
. "$here/../harness.sh"
export HOOKCC_CACHE_DIR=$work/cache
unset NITRO_PROFILE NITRO_PROFILE_TYPE HOOKCC_TRACE

passed=0 failed=0
failures=()

result() { # NAME STATUS LOG
    if [ "$2" -eq 0 ]; then
        passed=$((passed + 1))
        echo "ok      $1"
        [ "$verbose" -eq 1 ] && [ -s "$3" ] && sed 's/^/        /' "$3"
    else
        failed=$((failed + 1))
        failures+=("$1")
        echo "FAILED  $1"
        sed 's/^/        /' "$3"
    fi
    return 0
}

# check NAME COMMAND...: runs the command in a fresh directory, its output as the log.
check() {
    local name=$1
    shift
    local dir=$work/$(echo "$name" | tr -c 'A-Za-z0-9_.-' '_')
    mkdir -p "$dir"
    (cd "$dir" && "$@") >"$dir.log" 2>&1
    result "$name" $? "$dir.log"
}

normalize() { # stdin -> stdout: the comparisons' view of a dump
    sed -E -e 's/lr=[0-9a-f]{8}([0-9a-f]{8})?/lr=ADDR/g' -e 's/, cost [0-9]+$/, cost C/'
}

# compare EXPECTED-FILE ACTUAL-FILE
compare() {
    if ! normalize <"$2" | diff -u "$1" - >diff.txt; then
        echo "output differs from $(basename "$1"):"
        cat diff.txt
        return 1
    fi
}

# Every line "name: count N, cost C" has C > 0.
costs_positive() {
    awk -F', cost ' '/, cost / { if ($2 + 0 <= 0) { print "cost not positive: " $0; bad = 1 } }
                     END { exit bad }' "$1"
}

# build_run EXPECTED OUT-STREAM(1|2) HOOKCC-ARGS...: builds ./prog, runs it, compares one stream.
build_run() {
    local want=$1 stream=$2
    shift 2
    "$HOOKCC" "$@" -o prog || return 1
    ./prog >out.1 2>out.2 || { echo "exit status $?"; cat out.2; return 1; }
    compare "$want" "out.$stream"
}

# ------------------------------------------------------------------------------------------
# The runtimes compile cleanly everywhere.

strict=(-std=gnu11 -O2 -fPIC -fno-stack-protector -fvisibility=hidden -Wall -Wextra -Werror
    -I "$root/runtime/include" -I "$root/runtime/src")
compile_strict() { # COMPONENT TARGET-FLAGS...
    local component=$1
    shift
    "$CLANG" "${strict[@]}" "$@" -c "$root/runtime/src/$component.c" -o "$component.o"
}
check "functioncost -DHKN_FC_THREAD_CPU_CLOCK (--nitro-clock=thread-cpu): -Wall -Wextra -Werror" \
    compile_strict functioncost -DHKN_FC_THREAD_CPU_CLOCK
for component in calltrace functioncost; do
    check "$component: -Wall -Wextra -Werror (host)" compile_strict "$component"
    check "$component: -Wall -Wextra -Werror, freestanding" \
        compile_strict "$component" -ffreestanding
    for triple in aarch64-linux-gnu arm-linux-gnueabihf i686-linux-gnu riscv64-linux-gnu \
        s390x-linux-gnu; do
        [ -d "/usr/$triple/include" ] || continue
        check "$component: -Wall -Wextra -Werror --target=$triple" \
            compile_strict "$component" "--target=$triple"
    done
done
check "nitro.h: C++ and -Wall -Wextra -Werror" \
    bash -c "echo '#include <hookcc/nitro.h>
int main() { return OS_CalcCallTraceLines(0); }' >t.cpp &&
             $CXX -fsyntax-only -Wall -Wextra -Werror -I '$root/runtime/include' t.cpp"

# ------------------------------------------------------------------------------------------
# The seed's programs.

ct=(-profile --hook-runtime=calltrace)
fc=(-profile --hook-runtime=functioncost)
statistics_case() { # HOOKCC-ARGS...
    build_run "$expected/functioncost.txt" 2 "$@" "$programs/nitro_functioncost.c" || return 1
    costs_positive out.2 || return 1
    awk '/^test1:/ { t1 = $NF } /^test2:/ { t2 = $NF }
         END { if (t2 <= t1) { print "test2 (24 units of work) cost " t2 " <= test1 (1): " t1; exit 1 } }' out.2
}
for opt in -O0 -O2; do
    check "§3.5.1 stack mode dump ($opt)" \
        build_run "$expected/calltrace_stack.txt" 2 "${ct[@]}" $opt "$programs/nitro_calltrace_stack.c"
    check "§3.5.2 log mode dump ($opt)" \
        build_run "$expected/calltrace_log.txt" 2 "${ct[@]}" $opt "$programs/nitro_calltrace_log.c"
    check "§4.5 statistics dump ($opt)" statistics_case "${fc[@]}" $opt
done
# The same through make's variables, as a NITRO build passes them.
with_env() { # VAR=VALUE... -- COMMAND...
    while [ "$1" != "--" ]; do export "$1"; shift; done
    shift
    "$@"
}
check "§3.5.1 with NITRO_PROFILE=TRUE NITRO_PROFILE_TYPE=CALLTRACE" \
    with_env NITRO_PROFILE=TRUE NITRO_PROFILE_TYPE=CALLTRACE -- \
    build_run "$expected/calltrace_stack.txt" 2 -O1 "$programs/nitro_calltrace_stack.c"
check "§4.5 with NITRO_PROFILE=TRUE NITRO_PROFILE_TYPE=FUNCTIONCOST" \
    with_env NITRO_PROFILE=TRUE NITRO_PROFILE_TYPE=FUNCTIONCOST -- statistics_case -O1

# Every lr points into the function the seed says (§3.5.1): OS_DumpCallTrace was called from
# test3, test3 from test2, test2 from test1, test1 from NitroMain.
lr_in_callers() {
    "$HOOKCC" "${ct[@]}" -O0 -no-pie "$programs/nitro_calltrace_stack.c" -o prog || return 1
    ./prog 2>dump.txt || return 1
    nm -n prog >symbols.txt
    python3 - dump.txt symbols.txt <<'EOF'
import re, sys
dump, symbols = open(sys.argv[1]).read(), open(sys.argv[2]).read().split("\n")
text = sorted((int(a, 16), n) for a, t, n in (l.split() for l in symbols if len(l.split()) == 3)
              if t in "Tt")
def function_of(addr):
    best = None
    for start, name in text:
        if start <= addr:
            best = name
    return best
want = {"OS_DumpCallTrace": "test3", "test3": "test2", "test2": "test1", "test1": "NitroMain"}
seen = 0
for line in dump.splitlines():
    m = re.match(r"\s*(\w+): lr=([0-9a-f]+)", line)
    if not m:
        continue
    name, lr = m.group(1), int(m.group(2), 16)
    # lr is the return address: the call instruction ends just before it
    got = function_of(lr - 1)
    if got != want.get(name):
        print(f"{name}: lr={lr:x} is in {got}, expected {want.get(name)}")
        sys.exit(1)
    seen += 1
if seen != 4:
    print(f"{seen} lr values in:\n{dump}")
    sys.exit(1)
EOF
}
check "§3.5.1 every lr is in the caller (-O0 -no-pie)" lr_in_callers

# At -O2 test1..test3 are inlined: each frame's lr is still its own, an address in the
# function their code was inlined into, at the place of its call (later frames later), not
# that function's return address for all three.
lr_of_inlined_frames() {
    "$HOOKCC" "${ct[@]}" -O2 -no-pie "$programs/nitro_calltrace_stack.c" -o prog || return 1
    ./prog 2>dump.txt || return 1
    nm -n prog >symbols.txt
    cat dump.txt
    python3 - dump.txt symbols.txt <<'EOF2'
import re, sys
dump, symbols = open(sys.argv[1]).read(), open(sys.argv[2]).read().split("\n")
text = sorted((int(a, 16), n) for a, t, n in (l.split() for l in symbols if len(l.split()) == 3)
              if t in "Tt")
def function_of(addr):
    best = None
    for start, name in text:
        if start <= addr:
            best = name
    return best
lr = {m.group(1): int(m.group(2), 16)
      for m in re.finditer(r"^(\w+): lr=([0-9a-f]+)", dump, re.M)}
order = ["test1", "test2", "test3", "OS_DumpCallTrace"]
if sorted(lr) != sorted(order):
    sys.exit(f"frames: {sorted(lr)}")
home = {name: function_of(lr[name] - 1) for name in order}
if len(set(home.values())) != 1:
    sys.exit(f"the frames' lr are in different functions ({home}): not all inlined?")
values = [lr[name] for name in order]
if values != sorted(values) or len(set(values)) != 4:
    sys.exit(f"lr not distinct and in call order: {[hex(v) for v in values]}")
EOF2
}
check "§3.5.1 inlined frames get their own lr (-O2 -no-pie)" lr_of_inlined_frames

# ------------------------------------------------------------------------------------------
# #pragma profile (§1.3, §1.3.1), run with the program's own hooks (§5) built as a separate
# library, the way the seed's CodeWarrior profiler comes.

pragma_case() { # EXPECTED SOURCE HOOKCC-ARGS...
    local want=$1 source=$2
    shift 2
    "$CLANG" -O1 -c "$programs/nitro_user_hooks.c" -o hooks.o || return 1
    "$HOOKCC" "$@" -O1 "$programs/$source" hooks.o -o prog || return 1
    ./prog >out.1 2>out.2 || { echo "exit status $?"; cat out.2; return 1; }
    compare "$expected/$want" out.1
}
check "§1.3 -profile: test1, test2, test4 (and main)" pragma_case pragma_profile.txt nitro_pragma.c -profile
check "§1.3 NITRO_PROFILE=TRUE: the same" \
    with_env NITRO_PROFILE=TRUE -- pragma_case pragma_profile.txt nitro_pragma.c
check "§1.3 without -profile (--dialect=nitro): none" pragma_case pragma_off.txt nitro_pragma.c --dialect=nitro
check "§1.3 plain hookcc: none" pragma_case pragma_off.txt nitro_pragma.c
check "§1.3.1 pragma inside the body, -profile: test1 only" \
    pragma_case pragma_inside.txt nitro_pragma_inside.c -profile
check "§1.3.1 pragma inside the body, --dialect=nitro: test1 only" \
    pragma_case pragma_inside.txt nitro_pragma_inside.c --dialect=nitro

# ------------------------------------------------------------------------------------------
# The Makefile project.

make_case() { # EXPECTED MAKE-VARIABLES...
    local want=$1
    shift
    cp -r "$programs/nitro_make" project && cd project || return 1
    if [ "$*" = plain ]; then
        make -s || return 1
    else
        CC=$HOOKCC make -s "$@" || return 1
    fi
    ./game >out.1 2>out.2 || { echo "exit status $?"; cat out.2; return 1; }
    compare "$expected/$want" out.1 || return 1
    case $want in *functioncost*) costs_positive out.1 ;; esac
}
check "nitro_make: CC=hookcc make NITRO_PROFILE=TRUE NITRO_PROFILE_TYPE=CALLTRACE" \
    make_case make_calltrace.txt NITRO_PROFILE=TRUE NITRO_PROFILE_TYPE=CALLTRACE
check "nitro_make: CC=hookcc make NITRO_PROFILE=TRUE NITRO_PROFILE_TYPE=FUNCTIONCOST" \
    make_case make_functioncost.txt NITRO_PROFILE=TRUE NITRO_PROFILE_TYPE=FUNCTIONCOST
check "nitro_make: CC=hookcc make NITRO_PROFILE=TRUE (own __PROFILE_ENTRY(const char *))" \
    make_case make_user_hooks.txt NITRO_PROFILE=TRUE
check "nitro_make: make (no profiling)" make_case make_plain.txt plain
# §1.2: the variables written in the Makefile, not on make's command line.
make_in_makefile() { # EXPECTED TYPE
    cp -r "$programs/nitro_make" project && cd project || return 1
    printf 'NITRO_PROFILE = TRUE\nNITRO_PROFILE_TYPE = %s\ninclude Makefile\n' "$2" >Makefile.set
    CC=$HOOKCC make -s -f Makefile.set || return 1
    ./game >out.1 2>out.2 || { echo "exit status $?"; cat out.2; return 1; }
    compare "$expected/$1" out.1
}
check "nitro_make: NITRO_PROFILE = TRUE, NITRO_PROFILE_TYPE = CALLTRACE in the Makefile" \
    make_in_makefile make_calltrace.txt CALLTRACE
check "nitro_make: NITRO_PROFILE = TRUE, NITRO_PROFILE_TYPE = FUNCTIONCOST in the Makefile" \
    make_in_makefile make_functioncost.txt FUNCTIONCOST

# ------------------------------------------------------------------------------------------
# Runtime tests: each prints "ok" and exits 0, or says what was wrong and exits 1.

runtime_test() { # SOURCE HOOKCC-ARGS...
    local source=$1
    shift
    "$HOOKCC" "$@" -g -Wall -Wextra -Werror -I "$here" "$here/$source" -o prog -pthread || return 1
    ./prog
}
for t in ct_basic ct_overflow ct_misuse ct_threads ct_green; do
    check "$t (-O1)" runtime_test "$t.c" "${ct[@]}" -O1
done
check "ct_basic -DOS_CALLTRACE_NO_REGISTERS" runtime_test ct_basic.c "${ct[@]}" -O1 -DOS_CALLTRACE_NO_REGISTERS
check "ct_green (-O2)" runtime_test ct_green.c "${ct[@]}" -O2
for t in fc_misuse fc_threads fc_green fc_intervals fc_exclusive; do
    check "$t (-O1)" runtime_test "$t.c" "${fc[@]}" -O1
done
check "fc_threads (-O2)" runtime_test fc_threads.c "${fc[@]}" -O2
clock_test() { # CLOCK: fc_clock.c built with --nitro-clock=CLOCK, told which it is
    "$HOOKCC" "${fc[@]}" "--nitro-clock=$1" -O1 -g -Wall -Wextra -Werror -I "$here" \
        "$here/fc_clock.c" -o prog -pthread || return 1
    ./prog "$1"
}
check "fc_clock: the OS tick charges a sleep" clock_test tick
check "fc_clock: --nitro-clock=thread-cpu does not" clock_test thread-cpu

# ------------------------------------------------------------------------------------------
# aarch64 under qemu-user.

qemu_case() { # EXPECTED STREAM SOURCE HOOKCC-ARGS...
    local want=$1 stream=$2 source=$3
    shift 3
    "$HOOKCC" --target=aarch64-linux-gnu "$@" "$source" -o prog -pthread || return 1
    qemu-aarch64 -L /usr/aarch64-linux-gnu ./prog >out.1 2>out.2 ||
        { echo "exit status $?"; cat out.2; return 1; }
    [ -z "$want" ] || compare "$want" "out.$stream"
}
if command -v qemu-aarch64 >/dev/null && [ -d /usr/aarch64-linux-gnu/lib ]; then
    check "aarch64 (qemu): §3.5.1 stack mode dump" \
        qemu_case "$expected/calltrace_stack.txt" 2 "$programs/nitro_calltrace_stack.c" "${ct[@]}" -O1
    check "aarch64 (qemu): §3.5.2 log mode dump" \
        qemu_case "$expected/calltrace_log.txt" 2 "$programs/nitro_calltrace_log.c" "${ct[@]}" -O1
    check "aarch64 (qemu): §4.5 statistics dump" \
        qemu_case "$expected/functioncost.txt" 2 "$programs/nitro_functioncost.c" "${fc[@]}" -O1
    check "aarch64 (qemu): ct_misuse" qemu_case "" 1 "$here/ct_misuse.c" "${ct[@]}" -O1 -I "$here"
    check "aarch64 (qemu): fc_threads" qemu_case "" 1 "$here/fc_threads.c" "${fc[@]}" -O1 -I "$here"
elif skips_fail; then
    failed=$((failed + 1))
    failures+=("aarch64 under qemu")
    echo "FAILED  aarch64 under qemu: cannot run in CI: qemu-aarch64 or /usr/aarch64-linux-gnu missing"
else
    echo "skipped aarch64 under qemu: qemu-aarch64 or /usr/aarch64-linux-gnu missing"
fi

# ------------------------------------------------------------------------------------------
# Instructions per entry+exit pair (callgrind, 1,000,000 calls of one function).

if [ "$bench" -eq 1 ]; then
    mkdir -p "$work/bench" && cd "$work/bench" || exit 1
    "$HOOKCC" "${ct[@]}" -O2 -I "$here" "$here/bench.c" -o bench_ct &&
        "$HOOKCC" "${fc[@]}" -O2 -DBENCH_FUNCTIONCOST -I "$here" "$here/bench.c" -o bench_fc || exit 1
    per_pair() { # PROGRAM ARG
        valgrind --tool=callgrind --callgrind-out-file=cg.out "./$1" "$2" >/dev/null 2>&1
        callgrind_annotate cg.out 2>/dev/null |
            awk '/__PROFILE_(ENTRY|EXIT)/ { gsub(",", "", $1); n += $1 } END { printf "%.1f", n / 1e6 }'
    }
    echo "instructions per entry+exit pair (x86-64 callgrind):"
    echo "  call trace, stack mode:          $(per_pair bench_ct stack)"
    echo "  call trace, log mode:            $(per_pair bench_ct log)"
    echo "  call trace, without r0-r3:       $(per_pair bench_ct noregs)"
    echo "  function cost:                   $(per_pair bench_fc cost)"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
