#!/usr/bin/env bash
# The whole test suite: Rust unit tests, IR tests, end-to-end tests (native and aarch64 under
# qemu), the runtime's own tests.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --workspace --quiet
# The pass plugin for rustc's LLVM (the Rust tests load it).
scripts/build-plugins.sh
cargo test --workspace
# The runtime's own tests: the trace component, then each dialect's components.
for suite in runtime/test/run.sh runtime/test/*/run.sh; do
    echo "== $suite"
    bash "$suite"
done
