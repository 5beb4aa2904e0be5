#!/usr/bin/env bash
# Prints the directory of the FreeRTOS-Kernel sources (V11.2.0) that the crates.io package
# freertos-next 0.12.0 bundles, fetching the package with cargo first if this machine's cargo
# registry does not have it yet: a throwaway project depending on it, `cargo fetch`, then
# `cargo metadata` says where cargo unpacked it (as bench/bench.py fetches lua-src).
# Nothing is committed: examples/baremetal/freertos/Makefile and scripts/setup.sh run this.
# Usage: scripts/freertos-kernel.sh     (the directory on stdout, progress and errors on stderr)
set -euo pipefail

version=0.12.0
kernel_version=V11.2.0
project="${XDG_CACHE_HOME:-$HOME/.cache}/hookcc/freertos-next-$version"
mkdir -p "$project/src"
[ -f "$project/src/lib.rs" ] || : >"$project/src/lib.rs"
# A name of this run's own: two builds may run this at once (the tests do).
cat >"$project/Cargo.toml.new.$$" <<TOML
[package]
name = "hookcc-freertos-sources"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
freertos-next = "=$version"

[workspace]
TOML
mv "$project/Cargo.toml.new.$$" "$project/Cargo.toml"
cd "$project"
# Offline first: a machine that fetched it once needs no network.
if ! cargo fetch --offline --quiet 2>/dev/null; then
    echo "freertos-kernel: fetching freertos-next $version (crates.io) with cargo" >&2
    cargo fetch --quiet || {
        echo "freertos-kernel: cargo fetch of freertos-next $version failed (in $project)" >&2
        exit 1
    }
fi
manifest=$(cargo metadata --offline --format-version 1 | python3 -c '
import json, sys
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == "freertos-next":
        print(p["manifest_path"])')
kernel="$(dirname "$manifest")/FreeRTOS-Kernel"
if ! grep -q "tskKERNEL_VERSION_NUMBER *\"$kernel_version\"" "$kernel/include/task.h" 2>/dev/null; then
    echo "freertos-kernel: $kernel/include/task.h is not FreeRTOS-Kernel $kernel_version" >&2
    exit 1
fi
echo "$kernel"
