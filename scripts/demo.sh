#!/usr/bin/env bash
# The quick start: install what using hookcc needs (scripts/setup.sh --use), build hookcc,
# instrument the bundled example (examples/calc.c, a small expression interpreter), run it,
# print its flat profile, and end with the line that puts hookcc, hookcc++, hookprof and
# cargo hookcc on PATH (to paste into the shell, as the README's quick start then assumes).
#
# Usage: scripts/demo.sh                 build in release mode; the PATH line names the build
#        scripts/demo.sh --install DIR   then install into DIR (scripts/install.sh DIR: bin/,
#                                        lib/hookcc/, man pages); the PATH line names DIR/bin
#        HOOKCC_BUILD_DIR=target/debug scripts/demo.sh   an existing build, no cargo build
#                                        (scripts/quickstart.sh, which the tests run)
set -euo pipefail
cd "$(dirname "$0")/.."
usage() {
    echo "usage: scripts/demo.sh [--install DIR]" >&2
    exit 2
}
install_dir=
case $# in
    0) ;;
    2) [ "$1" = --install ] || usage; install_dir=$2 ;;
    *) usage ;;
esac
scripts/setup.sh --use
bin="${HOOKCC_BUILD_DIR:-}"
if [ -z "$bin" ]; then
    echo "demo: building hookcc (cargo build --release)…" >&2
    cargo build --release --workspace --quiet
    bin="${CARGO_TARGET_DIR:-target}/release"
fi
bin="$(cd "$bin" && pwd)"
out=examples/build
mkdir -p "$out"
echo "demo: $bin/hookcc --trace -O2 examples/calc.c -o $out/calc" >&2
"$bin/hookcc" --trace -O2 examples/calc.c -o "$out/calc"
echo "demo: running $out/calc" >&2
# Its trace is calc.<its pid>.hktrace: this run's, whatever earlier runs (or another demo at
# the same time) left there.
(cd "$out" && exec ./calc) &
pid=$!
wait "$pid"
trace="$out/calc.$pid.hktrace"
echo "demo: $bin/hookprof report $trace" >&2
"$bin/hookprof" report "$trace"
if [ -n "$install_dir" ]; then
    # With HOOKCC_BUILD_DIR the build it names; else install.sh's own release build (with the
    # plugin for rustc's LLVM, which cargo hookcc otherwise builds on first use).
    echo "demo: scripts/install.sh $install_dir" >&2
    HOOKCC_BUILD_DIR="${HOOKCC_BUILD_DIR:+$bin}" scripts/install.sh "$install_dir" >&2
    bin="$(cd "$install_dir/bin" && pwd)"
fi
echo "demo: to use hookcc, hookcc++, hookprof and cargo hookcc in this shell, run the line" \
     "below (add it to ~/.profile to keep it); then the README's quick start works as written:" >&2
# The last line of the output, as it is to be pasted: $PATH stays for the shell to expand.
printf 'export PATH=%q:"$PATH"\n' "$bin"
