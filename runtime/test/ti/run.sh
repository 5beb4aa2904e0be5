#!/usr/bin/env bash
# Tests of the TI runtime (runtime/src/ti.c, <hookcc/ti.h>, docs/ti-runtime.md).
#
# Builds ti.o the way the hookcc driver does (plus -Wall -Wextra -Werror) and the test programs
# in this directory with clang-19, runs them natively and under qemu-user for each cross target
# whose libc is installed (Debian: libc6-dev-<arch>-cross, qemu-user; linked with lld), and
# checks every dump (PREFIX.bin, PREFIX.dat) with check_ti.py. Also: the public header as C99,
# C11, C++98 and C++11; bare-metal builds (syntax for several targets, a Cortex-M link with
# ld.lld, a native run of the bare-metal variant); and tests/programs/ti_tasks.c built with
# target/debug/hookcc --hook-runtime=ti, natively and for aarch64.
#
# Usage: runtime/test/ti/run.sh [-v]
#   -v                    print every check's output, not only failures'
#   CC=...                compiler (default clang-19)
#   HOOKCC=...            the driver for the ti_tasks cases (default target/debug/hookcc)
#   HOOKCC_TEST_TARGETS   cross targets to try (default: aarch64 i686 arm s390x riscv64)
# Prints "N passed, N failed" last (and skips, if any); exits non-zero if anything failed.
set -u

verbose=0
[ "${1:-}" = "-v" ] && verbose=1

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
CC=${CC:-clang-19}
HOOKCC=${HOOKCC:-$root/target/debug/hookcc}
checker=("python3" "$here/check_ti.py")
work=$(mktemp -d "${TMPDIR:-/tmp}/hookcc-ti-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
# shellcheck source=../harness.sh
. "$here/../harness.sh"

# The driver's flags for the runtime (wrapper/src/runtime.rs), plus warnings as errors.
runtime_cflags=(-std=gnu11 -O2 -fPIC -fno-stack-protector -fvisibility=hidden
    -Wall -Wextra -Werror -I "$root/runtime/include" -I "$root/runtime/src")
test_cflags=(-std=gnu11 -O1 -g -Wall -Wextra -Werror -I "$root/runtime/include")

passed=0 failed=0 skipped=0
failures=()

result() { # NAME STATUS [DETAIL-FILE]
    if [ "$2" -eq 0 ]; then
        passed=$((passed + 1))
        echo "ok      $1"
        [ "$verbose" -eq 1 ] && [ -n "${3:-}" ] && [ -s "$3" ] && sed 's/^/        /' "$3"
    else
        failed=$((failed + 1))
        failures+=("$1")
        echo "FAILED  $1"
        [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/        /' "$3"
    fi
    return 0
}

skip() { # NAME WHY
    if skips_fail; then
        failed=$((failed + 1))
        failures+=("$1")
        echo "FAILED  $1: cannot run in CI: $2"
        return 0
    fi
    skipped=$((skipped + 1))
    echo "skipped $1: $2"
}

# ------------------------------------------------------------------------------------------
# Per-target state, set by setup_target: $target, $tag, $bin, $runner (array), $ptr, $endian

# run STATUS [VAR=VALUE ...] -- PROGRAM [ARGS...]
# Runs a test program in the case's fresh directory $dir (also the caller's working directory
# from then on), stdout in $dir/out, stderr in $dir/err, and checks its exit status.
run() {
    local want=$1
    shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    local prog=$1
    shift
    cd "$dir" || return 1
    local status
    env -u HOOKCC_TI_OUTPUT -u HOOKCC_TI_VERBOSE ${envs[@]+"${envs[@]}"} \
        timeout 300 ${runner[@]+"${runner[@]}"} "$prog" "$@" >out 2>err
    status=$?
    [ "$status" -eq 124 ] && echo "$prog $*: timed out after 300 s" >>log
    if [ "$status" -ne "$want" ]; then
        echo "$prog $*: exit status $status, expected $want" >>log
        sed 's/^/stdout: /' out >>log
        sed 's/^/stderr: /' err >>log
        return 1
    fi
    grep -q '^failures=0$' out || { sed 's/^/stderr: /' err >>log; return 1; }
    return 0
}

var() { sed -n "s/^$1=//p" "$dir/out" | head -n 1; }

# The one dump in $dir named NAME.<pid>.ti.{bin,dat}: sets $prefix.
only_dump() { # NAME
    local bins=("$dir"/*.bin) dats=("$dir"/*.dat)
    if [ "${#bins[@]}" -ne 1 ] || [ "${#dats[@]}" -ne 1 ] || [ ! -f "${bins[0]}" ]; then
        echo "expected one .bin and one .dat in $dir, found: $(cd "$dir" && ls)" >>"$dir/log"
        return 1
    fi
    prefix=${bins[0]%.bin}
    [ "${dats[0]}" = "$prefix.dat" ] || { echo "${dats[0]} does not go with $prefix.bin" >>"$dir/log"; return 1; }
    case $(basename "$prefix") in
    "$1".[0-9]*.ti) ;;
    *) echo "dump $(basename "$prefix") is not $1.<pid>.ti" >>"$dir/log"; return 1 ;;
    esac
}

quiet() { # the runtime says nothing on stderr unless asked
    [ ! -s "$dir/err" ] || { echo "unexpected stderr:" >>"$dir/log"; cat "$dir/err" >>"$dir/log"; return 1; }
}

check() { # PREFIX check_ti.py-options...
    local p=$1
    shift
    "${checker[@]}" "$p" --vars "$dir/out" --pointer-size "$ptr" --endian "$endian" "$@" \
        >>"$dir/log" 2>&1
}

# ------------------------------------------------------------------------------------------
# The cases. Each returns 0 on success and leaves its evidence in $dir/log.

case_basic() {
    run 0 -- "$bin/basic" 1000 || return 1
    quiet || return 1
    only_dump basic || return 1
    # n=1000: 10 iterations switch a -> b -> a inside outer
    check "$prefix" --records-var records --replay --tasks 2 --switches 20 \
        --entries outer=1000 --entries inner=1000 --monotonic
}

case_noinit() { # hooks without hook_init: nothing recorded, no files
    run 0 -- "$bin/basic" 10 noinit || return 1
    quiet || return 1
    local files
    files=$(cd "$dir" && ls -- *.bin *.dat 2>/dev/null)
    [ -z "$files" ] || { echo "files without hook_init: $files" >>log; return 1; }
}

case_dump_midway() { # hookcc_ti_dump() while running; the exit dump has everything
    run 0 HOOKCC_TI_OUTPUT=mid -- "$bin/basic" 1000 dump || return 1
    quiet || return 1
    [ -n "$(var dumped_records)" ] || { echo "no midway dump" >>log; return 1; }
    check mid --records-var records --replay --switches 20 --entries outer=1000
}

case_verbose() { # HOOKCC_TI_OUTPUT prefix, HOOKCC_TI_VERBOSE's one line
    mkdir -p "$dir/sub"
    run 0 HOOKCC_TI_OUTPUT=sub/x HOOKCC_TI_VERBOSE=1 -- "$bin/basic" 100 || return 1
    [ "$(wc -l <err)" -eq 1 ] && grep -q "sub/x.bin, sub/x.dat (404 records of $((ptr + 8)) bytes" err ||
        { echo "expected one line naming sub/x.bin and sub/x.dat:" >>log; cat err >>log; return 1; }
    [ "$(cd "$dir" && ls | grep -c -e '\.bin$' -e '\.dat$')" -eq 0 ] ||
        { echo "files outside sub/" >>log; return 1; }
    check sub/x --records 404 --replay
}

case_unwritable() {
    run 0 HOOKCC_TI_OUTPUT=/nonexistent-hookcc-dir/x -- "$bin/basic" 10 || return 1
    [ "$(wc -l <err)" -eq 1 ] && grep -q "/nonexistent-hookcc-dir/x.bin" err &&
        grep -q "No such file or directory" err ||
        { echo "expected one warning naming the .bin:" >>log; cat err >>log; return 1; }
}

case_symlink() { # a symlink where a dump goes is never followed
    cd "$dir" || return 1
    echo precious >victim
    ln -s victim x.bin
    run 0 HOOKCC_TI_OUTPUT=x -- "$bin/basic" 10 || return 1
    [ "$(cat victim)" = precious ] || { echo "the symlink's target was overwritten" >>log; return 1; }
    grep -q "x.bin" err || { echo "no warning about x.bin:" >>log; cat err >>log; return 1; }
}

case_full() {
    run 0 -- "$bin/full" || return 1
    quiet || return 1
    only_dump full || return 1
    check "$prefix" --records 64 --full --replay --entries f=32
}

case_badcap() {
    run 0 -- "$bin/badcap" || return 1
    grep -q "uiMaxProfileRecordNum is not a power of two" err ||
        { echo "no warning about the capacity:" >>log; cat err >>log; return 1; }
    only_dump badcap || return 1
    check "$prefix" --records 64 --replay --entries f=32
}

case_circular_wrap() {
    run 0 -- "$bin/circular" wrap || return 1
    quiet || return 1
    only_dump circular || return 1
    # the whole buffer, oldest record at 100 & 15; records 84..99 pair up
    check "$prefix" --full --oldest-var oldest --replay --monotonic
}

case_circular_pass() {
    run 0 -- "$bin/circular" pass || return 1
    quiet || return 1
    only_dump circular || return 1
    # slots: 0 f0's entry, 1..12 never written, 13..15 the switches' records, where the
    # second switch overwrote the first one's TASK_ENTRY; read from 14, they pair up
    check "$prefix" --full --invalid 12 --oldest 14
}

case_timestamp() {
    run 0 -- "$bin/timestamp" || return 1
    quiet || return 1
    only_dump timestamp || return 1
    check "$prefix" --records 1
}

case_threads() { # MODE PAIRS
    run 0 -- "$bin/threads" "$1" "$2" || return 1
    quiet || return 1
    only_dump threads || return 1
    if [ "$1" = stop ]; then
        check "$prefix" --records $((8 * $2))
    else
        check "$prefix" --full
    fi
}

case_fork() {
    run 0 HOOKCC_TI_OUTPUT=fk -- "$bin/fork" || return 1
    quiet || return 1
    local child
    child=$(var child_pid)
    check fk --records 26 --replay --entries before=10 --entries after=3 --entries in_child=0 &&
        check "fk.$child" --records 30 --replay --entries before=10 --entries in_child=5 \
            --entries after=0
}

case_fork_default() {
    run 0 -- "$bin/fork" || return 1
    check "fork.$(var pid).ti" --records 26 && check "fork.$(var child_pid).ti" --records 30
}

case_bare() { # the bare-metal variant, run natively: records, but no files
    run 0 -- "$bin/bare" || return 1
    quiet || return 1
    local files
    files=$(cd "$dir" && ls -- *.bin *.dat 2>/dev/null)
    [ -z "$files" ] || { echo "a bare-metal build wrote $files" >>log; return 1; }
}

# ------------------------------------------------------------------------------------------

setup_target() { # TRIPLE TAG
    target=$1 tag=$2
    bin="$work/$tag/bin"
    mkdir -p "$bin"
    local tflags=() lflags=()
    runner=()
    if [ "$tag" != native ]; then
        tflags=(--target="$target")
        target_link_and_runner "$target"
        lflags=("${target_lflags[@]}")
    fi
    local log="$bin/build.log"
    if ! "$CC" ${tflags[@]+"${tflags[@]}"} "${runtime_cflags[@]}" \
        -c "$root/runtime/src/ti.c" -o "$bin/ti.o" >"$log" 2>&1; then
        result "$tag: build ti.o (-Wall -Wextra -Werror)" 1 "$log"
        return 1
    fi
    result "$tag: build ti.o (-Wall -Wextra -Werror)" 0
    if ! "$CC" ${tflags[@]+"${tflags[@]}"} "${runtime_cflags[@]}" -DHOOKCC_BARE_METAL \
        -c "$root/runtime/src/ti.c" -o "$bin/ti-bare.o" >>"$log" 2>&1; then
        result "$tag: build ti.o -DHOOKCC_BARE_METAL" 1 "$log"
        return 1
    fi
    local prog
    for prog in basic full badcap circular timestamp threads fork; do
        if ! "$CC" ${tflags[@]+"${tflags[@]}"} ${lflags[@]+"${lflags[@]}"} \
            "${test_cflags[@]}" "$here/$prog.c" "$bin/ti.o" -pthread -o "$bin/$prog" \
            >>"$log" 2>&1; then
            result "$tag: build test programs" 1 "$log"
            return 1
        fi
    done
    if ! "$CC" ${tflags[@]+"${tflags[@]}"} ${lflags[@]+"${lflags[@]}"} "${test_cflags[@]}" \
        "$here/bare.c" "$bin/ti-bare.o" -o "$bin/bare" >>"$log" 2>&1; then
        result "$tag: build test programs" 1 "$log"
        return 1
    fi
    # Some qemu-user builds hang in clone() (qemu-i386 7.2 here: fork and pthread_create
    # alike): probe once, and skip the cases that need it rather than hang.
    can_clone=1
    if [ "$tag" != native ]; then
        printf '%s\n' '#include <pthread.h>' '#include <sys/wait.h>' '#include <unistd.h>' \
            'static void *w(void *a) { return a; }' \
            'int main(void) { pthread_t t; pthread_create(&t, 0, w, 0); pthread_join(t, 0);' \
            '    pid_t p = fork(); if (p == 0) _exit(0); int s; waitpid(p, &s, 0); return 0; }' \
            >"$bin/clone.c"
        "$CC" ${tflags[@]+"${tflags[@]}"} ${lflags[@]+"${lflags[@]}"} "$bin/clone.c" -pthread \
            -o "$bin/clone" >>"$log" 2>&1 &&
            timeout 20 "${runner[@]}" "$bin/clone" >/dev/null 2>&1 || can_clone=0
    fi
    local macros
    macros=$("$CC" ${tflags[@]+"${tflags[@]}"} -dM -E -x c /dev/null)
    ptr=$(sed -n 's/^#define __SIZEOF_POINTER__ //p' <<<"$macros")
    endian=little
    grep -q '__BYTE_ORDER__ __ORDER_BIG_ENDIAN__' <<<"$macros" && endian=big
    return 0
}

run_cases() {
    local c
    for c in "$@"; do
        # shellcheck disable=SC2086
        set -- $c
        case $1 in case_threads | case_fork | case_fork_default)
            if [ "$can_clone" -eq 0 ]; then
                skip "$tag: ${1#case_}${2:+ $2}" "fork/pthread_create hang under ${runner[0]} on this machine"
                continue
            fi
            ;;
        esac
        dir="$work/$tag/${1#case_}${2:+_$2}"
        mkdir -p "$dir"
        ( "$@" )
        local status=$?
        result "$tag: ${1#case_}${2:+ $2}${3:+ $3}" "$status" "$dir/log"
    done
}

all_cases=(case_basic case_noinit case_dump_midway case_verbose case_unwritable case_symlink
    case_full case_badcap case_circular_wrap case_circular_pass case_timestamp
    "case_threads stop 50000" "case_threads circular 200000" case_fork case_fork_default
    case_bare)

# ------------------------------------------------------------------------------------------
# The public header: C99 (pedantic), C11, C++98, C++11; HOOKCC_TI_PROFILE_BUFFER in each.

hdr_dir="$work/header"
mkdir -p "$hdr_dir"
cat >"$hdr_dir/h.c" <<'EOF'
#include <hookcc/ti.h>
__attribute__((section(".ti"))) HOOKCC_TI_PROFILE_BUFFER(1024);
void f(void);
int main(void)
{
    hook_init();
    entry_hook((void (*)(void))f);
    exit_hook_circular((void (*)(void))f);
    task_switch_hook(0, 4);
    hookcc_ti_set_timestamp(0);
    return (int)(uiProfileDataCnt + ProfileData[0].TSCL + uiMaxProfileRecordNum +
                 hookcc_ti_dropped + (unsigned)HOOKCC_TI_RECORD_WORDS + hookcc_ti_dump());
}
EOF
hdr_ok=0
for std in "c -std=c99 -pedantic" "c -std=c11 -pedantic" "c++ -std=c++98" "c++ -std=c++11"; do
    # shellcheck disable=SC2086
    set -- $std
    lang=$1
    shift
    if ! "$CC" -x "$lang" "$@" -Wall -Wextra -Werror \
        -I "$root/runtime/include" -fsyntax-only "$hdr_dir/h.c" >>"$hdr_dir/log" 2>&1; then
        echo "as $lang $*" >>"$hdr_dir/log"
        hdr_ok=1
    fi
done
result "public header compiles as C99, C11 (pedantic), C++98, C++11" $hdr_ok "$hdr_dir/log"

# The static assertion rejects a capacity that is not a power of two.
printf '#include <hookcc/ti.h>\nHOOKCC_TI_PROFILE_BUFFER(100);\n' >"$hdr_dir/bad.c"
if "$CC" -std=c11 -I "$root/runtime/include" -fsyntax-only "$hdr_dir/bad.c" >"$hdr_dir/bad.log" 2>&1; then
    result "HOOKCC_TI_PROFILE_BUFFER(100) is rejected" 1 "$hdr_dir/bad.log"
else
    grep -q "power of two" "$hdr_dir/bad.log"
    result "HOOKCC_TI_PROFILE_BUFFER(100) is rejected" $? "$hdr_dir/bad.log"
fi

# ------------------------------------------------------------------------------------------
# Bare metal: the runtime compiles for targets without a Unix libc (as hookcc compiles it, and
# with -ffreestanding); a Cortex-M firmware links with ld.lld, and fails to link, naming the
# symbol, without the timestamp function or the buffer.

bm_dir="$work/baremetal"
mkdir -p "$bm_dir/stub"
# Where ti.c uses clock.h's counter (x86, AArch64), clock.h includes <time.h> whenever
# __STDC_HOSTED__ is 1, which it is without -ffreestanding even for a bare-metal triple. A
# bare-metal libc (newlib, picolibc) has one; this machine has none, so a stand-in declares
# what clock.h uses.
cat >"$bm_dir/stub/time.h" <<'EOF'
typedef int clockid_t;
struct timespec { long long tv_sec; long tv_nsec; };
#define CLOCK_MONOTONIC 1
int clock_gettime(clockid_t id, struct timespec *ts);
EOF
for t in armv7m-none-eabi thumbv6m-none-eabi armv7a-none-eabi riscv32-unknown-elf \
    riscv64-unknown-elf aarch64-none-elf x86_64-unknown-none; do
    log="$bm_dir/$t.log"
    ok=0
    "$CC" --target="$t" -ffreestanding "${runtime_cflags[@]}" -fsyntax-only \
        "$root/runtime/src/ti.c" >"$log" 2>&1 || ok=1
    # hookcc passes only target flags: no -ffreestanding, __STDC_HOSTED__ is 1
    # (-nostdlibinc: a bare-metal sysroot's headers, not this machine's /usr/include)
    "$CC" --target="$t" -nostdlibinc -isystem "$bm_dir/stub" "${runtime_cflags[@]}" -fsyntax-only \
        "$root/runtime/src/ti.c" >>"$log" 2>&1 || { ok=1; echo "(without -ffreestanding)" >>"$log"; }
    result "bare metal $t: ti.c compiles (-fsyntax-only)" $ok "$log"
done

fw=(--target=armv7m-none-eabi -ffreestanding -nostdlib -fuse-ld=lld -Wl,-e,_start -O2
    -Wall -Wextra -Werror -I "$root/runtime/include")
log="$bm_dir/fw.log"
if "$CC" --target=armv7m-none-eabi -ffreestanding "${runtime_cflags[@]}" \
    -c "$root/runtime/src/ti.c" -o "$bm_dir/ti-m.o" >"$log" 2>&1 &&
    "$CC" "${fw[@]}" "$here/firmware.c" "$bm_dir/ti-m.o" -o "$bm_dir/fw.elf" >>"$log" 2>&1; then
    syms=$(llvm-nm-19 "$bm_dir/fw.elf" 2>>"$log" || nm "$bm_dir/fw.elf" 2>>"$log")
    ok=0
    for s in ProfileData uiProfileDataCnt uiMaxProfileRecordNum hookcc_ti_dropped hook_init \
        entry_hook exit_hook entry_hook_circular exit_hook_circular task_switch_hook \
        task_switch_hook_circular; do
        grep -qw "$s" <<<"$syms" || { echo "no symbol $s" >>"$log"; ok=1; }
    done
    grep -q "__atomic\|__sync" <<<"$syms" && { echo "atomics became library calls" >>"$log"; ok=1; }
    result "bare metal armv7m: firmware links with ld.lld, every symbol present" $ok "$log"
else
    result "bare metal armv7m: firmware links with ld.lld, every symbol present" 1 "$log"
fi
for missing in TIMESTAMP:hookcc_ti_timestamp BUFFER:ProfileData; do
    log="$bm_dir/fw-no-${missing%%:*}.log"
    if "$CC" "${fw[@]}" -DNO_"${missing%%:*}" "$here/firmware.c" "$bm_dir/ti-m.o" \
        -o "$bm_dir/fw-bad.elf" >"$log" 2>&1; then
        result "bare metal armv7m: link fails without ${missing#*:}" 1 "$log"
    else
        grep -q "undefined symbol: ${missing#*:}" "$log"
        result "bare metal armv7m: link fails without ${missing#*:}" $? "$log"
    fi
done

# ------------------------------------------------------------------------------------------
# ti_tasks (tests/programs): built by the hookcc driver with the TI options and runtime.

tasks_case() { # TAG OPT [hookcc target flags...]
    local tag=$1 opt=$2
    shift 2
    dir="$work/tasks-$tag$opt"
    mkdir -p "$dir"
    local log="$dir/log"
    cd "$dir" || return 1
    if ! HOOKCC_CACHE_DIR="$work/hookcc-cache" "$HOOKCC" "$@" "$opt" \
        --entry_hook=entry_hook --entry_parm=address --exit_hook=exit_hook --exit_parm=address \
        --hook-runtime=ti "$root/tests/programs/ti_tasks.c" -o ti_tasks >>"$log" 2>&1; then
        echo "hookcc failed" >>"$log"
        return 1
    fi
    timeout 300 ${runner[@]+"${runner[@]}"} ./ti_tasks >out 2>err || { echo "exit status $?" >>"$log"; cat err >>"$log"; return 1; }
    quiet || return 1
    local records switches
    records=$(var records)
    switches=$(var expect.switches)
    [ "$(var dropped)" = 0 ] || { echo "dropped $(var dropped)" >>"$log"; return 1; }
    # main's own exit comes after the print (its entry before hook_init: unmatched)
    only_dump ti_tasks || return 1
    check "$prefix" --records $((records + 1)) --replay --unmatched-exits 1 --tasks 4 \
        --switches "$switches" --entries delay=12 --entries run_scheduler=1 \
        --task-entries "t0:delay=$(var expect.delay.t0)" \
        --task-entries "t1:delay=$(var expect.delay.t1)" \
        --task-entries "t2:delay=$(var expect.delay.t2)" \
        --task-entries main:run_scheduler=1 --task-entries t0:task_function=1 \
        --task-entries t1:task_function=1 --task-entries t2:task_function=1 --monotonic
}

if [ ! -x "$HOOKCC" ]; then
    skip "ti_tasks" "$HOOKCC not built (cargo build --workspace)"
else
    for opt in -O0 -O2; do
        runner=() ptr=$("$CC" -dM -E -x c /dev/null | sed -n 's/^#define __SIZEOF_POINTER__ //p')
        endian=little
        ( tasks_case native "$opt" )
        result "native: ti_tasks via hookcc $opt" $? "$work/tasks-native$opt/log"
    done
    if [ -f /usr/aarch64-linux-gnu/include/stdio.h ] && command -v qemu-aarch64 >/dev/null; then
        runner=(qemu-aarch64 -L /usr/aarch64-linux-gnu) ptr=8 endian=little
        ( tasks_case aarch64 -O2 --target=aarch64-linux-gnu -fuse-ld=lld )
        result "aarch64: ti_tasks via hookcc -O2" $? "$work/tasks-aarch64-O2/log"
    fi
fi

# ------------------------------------------------------------------------------------------

if setup_target "$(uname -m)-linux-gnu" native; then
    run_cases "${all_cases[@]}"
fi

for arch in ${HOOKCC_TEST_TARGETS:-aarch64 i686 arm s390x riscv64}; do
    case $arch in
    arm) triple=arm-linux-gnueabihf ;;
    *) triple=$arch-linux-gnu ;;
    esac
    [ "$(uname -m)" = "$arch" ] && continue
    if [ ! -f "/usr/$triple/include/stdio.h" ]; then
        # No libc for it: at least the compiler must accept the runtime for the target.
        slog="$work/syntax-$arch.log"
        if "$CC" --target="$triple" -ffreestanding -DHOOKCC_BARE_METAL "${runtime_cflags[@]}" \
            -fsyntax-only "$root/runtime/src/ti.c" >"$slog" 2>&1; then
            skip "$arch" "no /usr/$triple libc headers: only a bare-metal syntax check (apt-get install libc6-dev-$arch-cross)"
        else
            result "$arch: ti.c (bare-metal syntax)" 1 "$slog"
        fi
        continue
    fi
    setup_target "$triple" "$arch" || continue
    if [ "${#runner[@]}" -gt 0 ] && ! command -v "${runner[0]}" >/dev/null; then
        skip "$arch run" "${runner[0]} not installed (package qemu-user)"
        continue
    fi
    run_cases "${all_cases[@]}"
done

if [ "${#failures[@]}" -gt 0 ]; then
    echo "failed:"
    printf '  %s\n' "${failures[@]}"
fi
if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed ($skipped skipped)"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
