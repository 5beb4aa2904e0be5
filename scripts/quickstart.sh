#!/usr/bin/env bash
# The README's quick start for C and Rust with an existing build, in a scratch directory: what
# using hookcc takes, which `scripts/test.sh --fresh` runs under strace and audits against
# `scripts/setup.sh --list --use` (scripts/audit_packages.py --use).
# Usage: scripts/quickstart.sh BIN WORKDIR   (BIN: the directory with hookcc and hookprof)
set -euo pipefail
if [ $# -ne 2 ]; then
    echo "usage: scripts/quickstart.sh BIN WORKDIR" >&2
    exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
bin="$(cd "$1" && pwd)"
work=$2
mkdir -p "$work"
work="$(cd "$work" && pwd)"
# C: instrument, run, report (scripts/demo.sh's commands).
"$bin/hookcc" --trace -O2 "$root/examples/calc.c" -o "$work/calc"
(cd "$work" && HOOKCC_OUTPUT="$work/calc.hktrace" ./calc >/dev/null)
"$bin/hookprof" report "$work/calc.hktrace" --top=3
# Rust: cargo hookcc on examples/rust (its C through the cc crate too).
rm -rf "$work/rust"
cp -R "$root/examples/rust" "$work/rust"
rm -rf "$work/rust/target"
# Its own target directory (a CARGO_TARGET_DIR of the caller's would hold the traces otherwise).
(cd "$work/rust" && PATH="$bin:$PATH" CARGO_TARGET_DIR="$work/rust/target" \
    cargo hookcc run --trace --quiet)
"$bin/hookprof" report "$work/rust"/target/hookcc/traces/mixed.*.hktrace --top=3
