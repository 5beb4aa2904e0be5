#!/usr/bin/env bash
# Installs what hookcc needs on Debian 12 (bookworm), if it is missing:
# clang-19 and LLVM 19 (headers, FileCheck, lld), qemu-user and the cross libcs the
# cross-target tests link against (aarch64, armhf, i386, riscv64, s390x), and a Rust toolchain
# check. Safe to run again: it installs only what is
# missing.
set -euo pipefail

packages=(clang-19 llvm-19-dev libclang-19-dev llvm-19-tools lld-19 qemu-user
          gcc-aarch64-linux-gnu libc6-dev-arm64-cross python3 valgrind binutils make)
for arch in armhf i386 riscv64 s390x; do
    packages+=("libc6-dev-$arch-cross" "libgcc-12-dev-$arch-cross")
done
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if ! command -v cargo >/dev/null; then
    echo "setup: cargo not found: install a Rust toolchain (https://rustup.rs), then run this again" >&2
    exit 1
fi
