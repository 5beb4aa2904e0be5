#!/usr/bin/env bash
# The whole test suite: Rust unit tests, IR tests, end-to-end tests (native and cross targets
# under qemu-user), the runtime's own tests.
#
# Usage: scripts/test.sh           on this machine as it is
#        scripts/test.sh --fresh   as on a new machine (what CI runs): an empty HOME, runtime
#                                  cache and cargo target directory, skips count as failures
#                                  (CI=true), and every file the suite opens or runs is checked
#                                  to come from a package scripts/setup.sh installs, or from
#                                  Debian's required/important base (scripts/audit_packages.py);
#                                  first the build and the quick start (scripts/quickstart.sh:
#                                  the demo, its PATH line, the README's C and Rust commands as
#                                  written), checked against what setup.sh --use installs
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

if [ "${1:-}" = "--fresh" ]; then
    scripts/setup.sh --test
    fresh=$(mktemp -d "${TMPDIR:-/tmp}/hookcc-fresh.XXXXXX")
    trap 'rm -rf "$fresh"' EXIT
    # Others may enter it (not list it): the distcc test's server runs hookcc as nobody.
    chmod 711 "$fresh"
    mkdir "$fresh/home"
    # The Rust toolchain stays where it is (a new machine has one); everything else starts
    # empty. The cargo target directory is new, so the tests' runtime cache is too.
    env_args=(
        -u XDG_CACHE_HOME -u HOOKCC_CACHE_DIR -u HOOKCC_CLANG -u HOOKCC_PLUGIN
        -u HOOKCC_RUNTIME_DIR -u HOOKCC_TRACE -u HOOKCC_OUTPUT -u NITRO_PROFILE
        -u NITRO_PROFILE_TYPE -u CC -u CXX
        CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
        HOME="$fresh/home" CARGO_TARGET_DIR="$fresh/target" CI=true
    )
    echo "test: --fresh: HOME=$fresh/home CARGO_TARGET_DIR=$fresh/target CI=true, under strace" >&2
    # Only the file and exec system calls are stopped (seccomp-bpf), and only successful ones
    # are logged: what the run really used.
    strace_args=(strace --seccomp-bpf -f -qq -z
                 -e trace=execve,execveat,open,openat,openat2,clone,clone3,fork,vfork -e signal=none)
    audit_args=(--ignore "$root" --ignore "$fresh" --ignore "${CARGO_HOME:-$HOME/.cargo}"
                --ignore "${RUSTUP_HOME:-$HOME/.rustup}" --ignore "${TMPDIR:-/tmp}")
    # First what using hookcc takes (scripts/demo.sh with this build, the PATH line it prints,
    # the README's C and Rust quick starts as written), audited against setup.sh's --use list
    # alone: the demo installs only that. The build is the one the suite then uses.
    echo "test: --fresh: the quick start, audited against scripts/setup.sh --use" >&2
    env "${env_args[@]}" "${strace_args[@]}" -o "$fresh/use-strace.log" bash -c \
        'scripts/setup.sh --use && cargo build --workspace --quiet && scripts/build-plugins.sh &&
         scripts/quickstart.sh "$CARGO_TARGET_DIR/debug" "$0"' "$fresh/quickstart" >/dev/null ||
        { echo "test: --fresh: the quick start failed" >&2; exit 1; }
    if ! python3 scripts/audit_packages.py "$fresh/use-strace.log" --use "${audit_args[@]}"; then
        mkdir -p target
        mv "$fresh/use-strace.log" target/fresh-use-strace.log
        echo "test: --fresh: the strace log is kept in target/fresh-use-strace.log" >&2
        exit 1
    fi
    status=0
    env "${env_args[@]}" "${strace_args[@]}" -o "$fresh/strace.log" scripts/test.sh || status=$?
    if [ "$status" -ne 0 ]; then
        echo "test: --fresh: the suite failed (exit status $status)" >&2
        exit "$status"
    fi
    if ! python3 scripts/audit_packages.py "$fresh/strace.log" "${audit_args[@]}"; then
        mkdir -p target
        mv "$fresh/strace.log" target/fresh-strace.log
        echo "test: --fresh: the strace log is kept in target/fresh-strace.log" >&2
        exit 1
    fi
    exit 0
elif [ $# -gt 0 ]; then
    echo "usage: scripts/test.sh [--fresh]" >&2
    exit 2
fi

scripts/setup.sh --test
cargo build --workspace --quiet
# The pass plugin for rustc's LLVM (the Rust tests load it).
scripts/build-plugins.sh
cargo test --workspace
# The runtime's own tests: the trace component, then each dialect's components, with the
# hookcc just built.
export HOOKCC="${CARGO_TARGET_DIR:-$root/target}/debug/hookcc"
for suite in runtime/test/run.sh runtime/test/*/run.sh; do
    echo "== $suite"
    bash "$suite"
done
