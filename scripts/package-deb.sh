#!/usr/bin/env bash
# Builds the Debian package of hookcc with cargo-deb (metadata: [package.metadata.deb] in
# wrapper/Cargo.toml): hookcc, hookcc++, cargo-hookcc, hookprof, the pass plugins, the runtime
# sources, the man pages (hookcc(1), hookprof's) and hookprof's shell completions, the debugger scripts (share/hookcc:
# gprof.gdb, whose gprof_dump finds /usr/bin/hookprof on PATH, and baremetal-dump.sh), in the
# layout of `scripts/install.sh /usr`.
#
# Usage: scripts/package-deb.sh [--profile PROFILE] [-o DIR]
#   --profile release (default) builds the workspace and the LLVM 22 plugin in release mode
#   first; --profile dev packs the existing debug build (what the test does).
#   Prints the path of the .deb. Needs cargo-deb (scripts/setup.sh installs it).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
profile=release
out="${CARGO_TARGET_DIR:-$root/target}/debian"
while [ $# -gt 0 ]; do
    case "$1" in
        --profile) profile="$2"; shift 2 ;;
        --profile=*) profile="${1#--profile=}"; shift ;;
        -o) out="$2"; shift 2 ;;
        *) echo "usage: scripts/package-deb.sh [--profile PROFILE] [-o DIR]" >&2; exit 2 ;;
    esac
done
command -v cargo-deb >/dev/null || { echo "package-deb: cargo-deb is missing: run scripts/setup.sh" >&2; exit 1; }
dir_name=$([ "$profile" = dev ] && echo debug || echo "$profile")
build="${CARGO_TARGET_DIR:-$root/target}/$dir_name"
if [ "$profile" = release ]; then
    cargo build --release --workspace --quiet
    scripts/build-plugins.sh --release
fi
for f in hookcc hookcc++ hookcc-ar hookcc-ranlib cargo-hookcc hookprof libhookcc_pass.so libhookcc_clang.so libhookcc_pass_llvm22.so; do
    [ -e "$build/$f" ] || { echo "package-deb: $build/$f is missing: build first" >&2; exit 1; }
done
scripts/hookprof-docs.sh "$build/hookprof" "$build/share"
mkdir -p "$out"
# Prints the path of the .deb it wrote.
cargo deb -p hookcc --no-build --profile "$profile" --output "$out" --quiet
