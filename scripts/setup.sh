#!/usr/bin/env bash
# Installs what hookcc, its tests and its demo need on Debian 12 (bookworm), if it is missing.
# This is the one list: a test may use a system package only if it is here (or something here
# depends on it); `scripts/test.sh --fresh` (what CI runs) checks that with strace.
#   clang-19 and LLVM 19: the compiler hookcc drives, headers for the plugins, FileCheck, lld
#   qemu-user and the cross libcs: the cross-target tests (aarch64, armhf, i386, riscv64, s390x)
#   gcc: cargo's linker; python3: the runtime tests' checkers; strace: the --fresh audit;
#   gdb-multiarch: the debugger dumps of bare-metal data (scripts/*.gdb, scripts/baremetal-*.sh)
#   qemu-system-arm, qemu-system-misc, gcc-arm-none-eabi (+ binutils), gcc-riscv64-unknown-elf,
#   picolibc-arm-none-eabi, picolibc-riscv64-unknown-elf: the bare-metal boards
#   (examples/baremetal, docs/baremetal.md): emulators, linkers with libgcc, C library
# Safe to run again: it installs only what is missing.
# Usage: scripts/setup.sh          install what is missing
#        scripts/setup.sh --list   print the package list, one a line
set -euo pipefail

packages=(clang-19 llvm-19-dev libclang-19-dev llvm-19-tools lld-19 qemu-user
          gcc-aarch64-linux-gnu libc6-dev-arm64-cross gcc python3 valgrind make strace
          gdb-multiarch qemu-system-arm qemu-system-misc gcc-arm-none-eabi binutils-arm-none-eabi
          picolibc-arm-none-eabi gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf)
for arch in armhf i386 riscv64 s390x; do
    packages+=("libc6-dev-$arch-cross" "libgcc-12-dev-$arch-cross")
done
if [ "${1:-}" = "--list" ]; then
    printf '%s\n' "${packages[@]}"
    exit 0
fi
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
