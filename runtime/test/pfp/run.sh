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

compile_everywhere pfp
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
    else
        cannot_run "pfp_test ($arch)" "qemu-$arch or /usr/$triple missing"
    fi
done

report_results
