#!/usr/bin/env bash
# The quick start: install what using hookcc needs (scripts/setup.sh --use), build hookcc,
# instrument the bundled example (examples/calc.c, a small expression interpreter), run it, and
# print its flat profile.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --use
echo "demo: building hookcc (cargo build --release)…" >&2
cargo build --release --workspace --quiet
bin=target/release
out=examples/build
mkdir -p "$out"
echo "demo: $bin/hookcc --trace -O2 examples/calc.c -o $out/calc" >&2
"$bin/hookcc" --trace -O2 examples/calc.c -o "$out/calc"
rm -f "$out"/calc.*.hktrace
echo "demo: running $out/calc" >&2
(cd "$out" && ./calc)
trace=$(ls "$out"/calc.*.hktrace)
echo "demo: $bin/hookprof report $trace" >&2
"$bin/hookprof" report "$trace"
