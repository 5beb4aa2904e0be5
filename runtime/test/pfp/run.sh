#!/usr/bin/env bash
# Tests of the profile point runtime (runtime/src/pfp.c, <hookcc/pfp.h>, docs/pfp.md).
#
#   - pfp.c compiled with -Wall -Wextra -Werror natively, freestanding (bare metal) and for every
#     cross target whose headers are installed; the header as C99 and C++11;
#   - pfp_test.c (the seed's measurement example rebuilt: calibration, nested regions, tasks
#     switched by a user-level scheduler, OS threads, latch, reset, alpha, misuse) built with
#     hookcc --hook-runtime=pfp and run natively and under qemu-user for aarch64 and s390x (big
#     endian); its dump of pfpInst decoded by `hookprof pfp` must print exactly what the
#     program's pfpPrintStats printed.
#
# Usage: runtime/test/pfp/run.sh [-v]
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
work=$(mktemp -d "${TMPDIR:-/tmp}/hookcc-pfp-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
export HOOKCC_CACHE_DIR=$work/cache
# shellcheck source=../harness.sh
. "$here/../harness.sh"

passed=0 failed=0
failures=()

check() { # NAME COMMAND...: runs the command in a fresh directory, its output as the log
    local name=$1
    shift
    local dir=$work/$(echo "$name" | tr -c 'A-Za-z0-9_.-' '_')
    mkdir -p "$dir"
    if (cd "$dir" && "$@") >"$dir.log" 2>&1; then
        passed=$((passed + 1))
        echo "ok      $name"
        [ "$verbose" -eq 1 ] && sed 's/^/        /' "$dir.log"
    else
        failed=$((failed + 1))
        failures+=("$name")
        echo "FAILED  $name"
        sed 's/^/        /' "$dir.log"
    fi
}

strict=(-std=gnu11 -O2 -fPIC -fno-stack-protector -fvisibility=hidden -Wall -Wextra -Werror
    -I "$root/runtime/include" -I "$root/runtime/src")
compile_strict() { "$CLANG" "${strict[@]}" "$@" -c "$root/runtime/src/pfp.c" -o pfp.o; }
check "pfp.c: -Wall -Wextra -Werror (host)" compile_strict
for target in aarch64-none-elf thumbv7m-none-eabi riscv32-none-elf; do
    # No counter is built in for these: a firmware brings its own (HKRT_TICKS_EXTERN).
    check "pfp.c: -Wall -Wextra -Werror, bare metal $target" \
        compile_strict --target=$target -ffreestanding -DHOOKCC_BARE_METAL -DHKRT_TICKS_EXTERN
done
for triple in aarch64-linux-gnu arm-linux-gnueabihf i686-linux-gnu riscv64-linux-gnu \
    s390x-linux-gnu; do
    [ -d "/usr/$triple/include" ] || continue
    check "pfp.c: -Wall -Wextra -Werror --target=$triple" compile_strict "--target=$triple"
done
check "pfp.h: C99 -pedantic and C++11" bash -c "
    printf '#include <hookcc/pfp.h>\nint main(void){pfpCreate();return 0;}\n' |
        '$CLANG' -x c -std=c99 -pedantic -Wall -Wextra -Werror -I '$root/runtime/include' -fsyntax-only - &&
    printf '#include <hookcc/pfp.h>\nint main(){pfpStats_t s; pfpGetStats(0, &s); return 0;}\n' |
        '$CLANG' -x c++ -std=c++11 -Wall -Wextra -Werror -I '$root/runtime/include' -fsyntax-only -"

# pfp_test.c built with hookcc for TARGET-FLAGS, run with RUNNER, its dump decoded.
seed_case() { # RUNNER-or-"" HOOKCC-ARGS...
    local runner=$1
    shift
    "$HOOKCC" --hook-runtime=pfp -O2 -g -Wall -Wextra -Werror "$@" "$here/pfp_test.c" \
        -o prog -pthread || return 1
    ${runner:+$runner} ./prog >printed.txt || { echo "exit status $?"; return 1; }
    cat printed.txt
    grep -q '^ID: 00, n=1000, C=' printed.txt || { echo "no calibration line"; return 1; }
    "$HOOKPROF" pfp pfp.bin --exe prog >decoded.txt || return 1
    diff -u printed.txt decoded.txt || { echo "hookprof pfp differs from pfpPrintStats"; return 1; }
}
check "pfp_test (native)" seed_case ""
for arch in aarch64 s390x; do
    triple=$arch-linux-gnu
    if command -v "qemu-$arch" >/dev/null && [ -d "/usr/$triple/lib" ]; then
        check "pfp_test ($arch under qemu)" seed_case "qemu-$arch -L /usr/$triple" \
            "--target=$triple" -fuse-ld=lld
    elif skips_fail; then
        failed=$((failed + 1))
        failures+=("pfp_test ($arch)")
        echo "FAILED  pfp_test ($arch): cannot run in CI: qemu-$arch or /usr/$triple missing"
    else
        echo "skipped pfp_test ($arch): qemu-$arch or /usr/$triple missing"
    fi
done

if [ "${#failures[@]}" -gt 0 ]; then
    echo "failed:"
    printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
