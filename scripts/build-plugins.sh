#!/usr/bin/env bash
# Builds the pass plugin for every LLVM major besides clang-19's (which `cargo build` builds as
# target/PROFILE/libhookcc_pass.so) and puts each beside hookcc as libhookcc_pass_llvmN.so,
# where hookcc --rustflags / cargo hookcc look for the one matching rustc's LLVM.
# Each major is its own cargo build with its own target directory: inkwell cannot have two LLVM
# features in one build, and a separate directory keeps the default build's artifacts intact.
# Usage: scripts/build-plugins.sh [--release]    (honours CARGO_TARGET_DIR, as cargo does)
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
profile=debug
flags=()
if [ "${1:-}" = "--release" ]; then profile=release; flags=(--release); fi
for major in 22; do
    cargo build --quiet -p hookcc-pass --no-default-features --features "llvm$major" \
        --target-dir "$target/llvm$major" "${flags[@]}"
    mkdir -p "$target/$profile"
    cp "$target/llvm$major/$profile/libhookcc_pass.so" "$target/$profile/libhookcc_pass_llvm$major.so"
done
