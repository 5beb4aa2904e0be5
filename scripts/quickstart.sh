#!/usr/bin/env bash
# The first hour as the README tells it, with an existing build, in a scratch directory:
# scripts/demo.sh (with the build in BIN instead of its own), then the PATH line it ends with,
# as a user pastes it, then the README's C and Rust quick starts exactly as the README writes
# them: the lines of the ```sh block after each `<!-- quickstart: C` and `<!-- quickstart: Rust`
# marker, run one by one in one shell (a `cd` holds for the lines after it), so that the README
# cannot drift from what works. `scripts/test.sh --fresh` runs it under strace and audits it
# against `scripts/setup.sh --list --use` (scripts/audit_packages.py --use);
# tests/tests/quickstart.rs runs it too.
#
# The C block's prog.c is examples/calc.c; the Rust block runs in a copy of examples/ (as a
# clone has it), without the caller's CARGO_TARGET_DIR (the README's paths are a plain
# checkout's). Each block's output must name what the README says it shows.
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

# The demo, and its last line: the PATH line.
HOOKCC_BUILD_DIR="$bin" "$root/scripts/demo.sh" >"$work/demo.out"
path_line=$(tail -n 1 "$work/demo.out")
case "$path_line" in
    "export PATH="*) ;;
    *) echo "quickstart: the demo's last line is not a PATH line: $path_line" >&2; exit 1 ;;
esac
grep -q parse_primary "$work/demo.out" ||
    { echo "quickstart: the demo printed no profile of calc" >&2; exit 1; }

# The lines of the README's ```sh block after the marker `<!-- quickstart: NAME`.
readme_block() {
    awk -v marker="<!-- quickstart: $1" '
        index($0, marker) == 1 { found = 1; next }
        found && /^```sh$/ { inside = 1; next }
        inside && /^```$/ { exit }
        inside { print }
    ' "$root/README.md"
}

# Runs the README's block NAME in DIR, in a shell that has run the PATH line (and nothing of
# this script's), line by line; its output goes to DIR/NAME.out and must contain EXPECTED.
run_block() {
    local name=$1 dir=$2 expected=$3
    local block
    block=$(readme_block "$name")
    [ -n "$block" ] || { echo "quickstart: README.md has no \`quickstart: $name\` block" >&2; exit 1; }
    if grep -q '\\$' <<<"$block"; then
        echo "quickstart: the README's $name block continues a line with \\: one command a line" >&2
        exit 1
    fi
    local script="set -euo pipefail
$path_line
"
    while IFS= read -r line; do
        # Each line as the README writes it, said on stderr first.
        script+="printf 'quickstart: \$ %s\\n' $(printf %q "$line") >&2
$line
"
    done <<<"$block"
    (cd "$dir" && env -u CARGO_TARGET_DIR -u HOOKCC_OUTPUT -u HOOKCC_TRACE bash -c "$script") \
        >"$dir/$name.out" ||
        { echo "quickstart: the README's $name quick start failed (above)" >&2; exit 1; }
    for word in $expected; do
        grep -qF -- "$word" "$dir/$name.out" ||
            { echo "quickstart: the README's $name quick start printed no $word:" >&2;
              cat "$dir/$name.out" >&2; exit 1; }
    done
}

# C: prog.c is the example.
mkdir -p "$work/c"
cp "$root/examples/calc.c" "$work/c/prog.c"
rm -f "$work/c"/prog*.hktrace
run_block C "$work/c" "parse_primary records:"

# Rust: in a copy of examples/rust, where a clone has it (its own target directory).
rm -rf "$work/rust"
mkdir -p "$work/rust/examples"
cp -R "$root/examples/rust" "$work/rust/examples/rust"
rm -rf "$work/rust/examples/rust/target"
run_block Rust "$work/rust" "mixed::checksum crc32"
echo "quickstart: the demo, its PATH line and the README's C and Rust quick starts work as written" >&2
