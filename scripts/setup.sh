#!/usr/bin/env bash
# Installs what hookcc, its demo and its tests need on Debian 12 (bookworm), if it is missing.
# This is the one list, in two parts:
#
# --use: what *using* hookcc needs (scripts/demo.sh, the README's quick start for C, C++ and
# Rust):
#   clang-19, LLVM 19 and libclang headers: the compiler hookcc drives, headers for the plugins;
#   lld-19: the linker for cross targets; gcc: cargo's linker; make, binutils;
#   python3, python3-pip: fetch the LLVM 22 headers for rustc's plugin (below, docs/rust.md);
#   pip runs lsb_release (lsb-release) to describe the machine
#
# --test: the above and what *testing* hookcc needs (scripts/test.sh, CI):
#   llvm-19-tools: FileCheck for the IR tests; valgrind: callgrind's counts to compare with
#   qemu-user and the cross libcs: the cross-target tests (aarch64, armhf, i386, riscv64, s390x)
#   strace: the --fresh audit
#   gdb-multiarch: the debugger dumps of bare-metal data (scripts/*.gdb, scripts/baremetal-*.sh)
#   qemu-system-arm, qemu-system-misc, gcc-arm-none-eabi (+ binutils), gcc-riscv64-unknown-elf,
#   picolibc-arm-none-eabi, picolibc-riscv64-unknown-elf: the bare-metal boards
#   (examples/baremetal, docs/baremetal.md): emulators, linkers with libgcc, C library
#   cmake, meson, ninja-build, ccache, sccache, distcc: the build-system tests
#   (tests/tests/buildsystems.rs);
#   file (libtool runs it in libffi's configure) and dpkg-dev (Debian's meson asks
#   dpkg-architecture for the multiarch libdir)
#   chromium, fonts-liberation, nodejs (npm where nodejs does not bring it): the browser test
#   (tests/tests/browser.rs) opens hookprof's speedscope files in speedscope's web app
#   golang-go: `go tool pprof` reads `hookprof export --format=pprof`'s profiles
#   (tests/tests/pprof.rs)
#   openjdk-17-jre-headless: the Java runtime PySpark's local[2] runs on (tests/tests/export.rs)
#   tmux: drives `hookprof top` in a terminal (tests/tests/attach.rs: send-keys, capture-pane)
# and, from crates.io: cargo-deb (pinned), which builds the .deb (scripts/package-deb.sh);
# freertos-next (pinned, fetched into cargo's registry, not installed), whose FreeRTOS-Kernel
# sources examples/baremetal/freertos builds (scripts/freertos-kernel.sh);
# from the npm registry (pinned by tests/browser/package-lock.json): speedscope and
# playwright-core, into tests/browser/node_modules; from PyPI (pinned by checksum): Perfetto's
# trace classes and protobuf, into tests/perfetto/python; DuckDB's Python package, into
# tests/duckdb/python; PySpark and its py4j, into tests/spark/python
#
# A test may use a system package only if it is in one of the lists (or something there
# depends on it); `scripts/test.sh --fresh` (what CI runs) checks that with strace.
# Safe to run again: it installs only what is missing.
# Usage: scripts/setup.sh --use          install what using hookcc needs (scripts/demo.sh runs it)
#        scripts/setup.sh --test         install that and what the tests need (scripts/test.sh,
#                                        .ci/run); without an argument, the same
#        scripts/setup.sh --list [--use] print the package list (all, or --use's), one a line
set -euo pipefail

use_packages=(clang-19 llvm-19-dev libclang-19-dev lld-19 gcc python3 python3-pip lsb-release
              make binutils)
test_packages=(llvm-19-tools valgrind qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross strace
               gdb-multiarch qemu-system-arm qemu-system-misc gcc-arm-none-eabi
               binutils-arm-none-eabi picolibc-arm-none-eabi gcc-riscv64-unknown-elf
               picolibc-riscv64-unknown-elf cmake meson ninja-build ccache sccache distcc file dpkg-dev
               chromium fonts-liberation nodejs golang-go
               openjdk-17-jre-headless tmux)
for arch in armhf i386 riscv64 s390x; do
    test_packages+=("libc6-dev-$arch-cross" "libgcc-12-dev-$arch-cross")
done
usage() {
    echo "usage: scripts/setup.sh [--use | --test | --list [--use]]" >&2
    exit 2
}
mode=test
case "${1:-}" in
    --use) mode=use ;;
    --test | "") mode=test ;;
    --list)
        case "${2:-}" in
            --use) printf '%s\n' "${use_packages[@]}" ;;
            # npm: Debian's package, installed below only where the nodejs package has no npm.
            "" | --test) printf '%s\n' "${use_packages[@]}" "${test_packages[@]}" npm ;;
            *) usage ;;
        esac
        exit 0 ;;
    *) usage ;;
esac
[ $# -le 1 ] || usage
packages=("${use_packages[@]}")
[ "$mode" = test ] && packages+=("${test_packages[@]}")
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
if [ "$mode" = test ] && ! command -v npm >/dev/null; then
    # Debian's nodejs leaves npm to its own package; NodeSource's includes it.
    echo "setup: installing npm" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends npm
fi
if ! command -v cargo >/dev/null; then
    echo "setup: cargo not found: install a Rust toolchain (https://rustup.rs), then run this again" >&2
    exit 1
fi

# cargo-deb builds the Debian package (scripts/package-deb.sh; tests/tests/packaging.rs).
cargo_deb_version=3.8.0
if [ "$mode" = test ] && [ "$(cargo deb --version 2>/dev/null)" != "cargo-deb $cargo_deb_version" ]; then
    echo "setup: installing cargo-deb $cargo_deb_version (cargo install, about a minute)" >&2
    cargo install cargo-deb --version "$cargo_deb_version" --locked --quiet
fi

# LLVM 22's headers, for the pass plugin rustc loads (rustc 1.95 is LLVM 22.1): from the PyPI
# wheel xtc-llvm-dev, pinned and checksum-checked, unpacked into the cache pass/build.rs reads
# ($HOOKCC_LLVM_HEADERS_DIR, default ~/.cache/hookcc). Nothing is committed.
llvm22_version=22.1.8.2
llvm22_wheel=xtc_llvm_dev-22.1.8.2-py3-none-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl
llvm22_sha256=72d4272b711c2358f0941080915dc45f2ba30c73564cc43d11c7cefd32e1e523
headers_base="${HOOKCC_LLVM_HEADERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hookcc}"
if [ ! -f "$headers_base/llvm-$llvm22_version/include/llvm/Config/llvm-config.h" ]; then
    echo "setup: fetching the LLVM $llvm22_version headers (PyPI xtc-llvm-dev, 87 MB)" >&2
    download="$headers_base/download"
    mkdir -p "$download"
    if [ ! -f "$download/$llvm22_wheel" ]; then
        # The headers are the same on every host; the x86_64 wheel is the pinned one.
        python3 -m pip download --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
            --python-version 3.11 --dest "$download" "xtc-llvm-dev==$llvm22_version"
    fi
    echo "$llvm22_sha256  $download/$llvm22_wheel" | sha256sum -c --quiet - || {
        echo "setup: $download/$llvm22_wheel: checksum mismatch (expected $llvm22_sha256)" >&2
        rm -f "$download/$llvm22_wheel"
        exit 1
    }
    python3 - "$download/$llvm22_wheel" "$headers_base/llvm-$llvm22_version" <<'PY'
import os, shutil, sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
tmp = dest + ".partial"
shutil.rmtree(tmp, ignore_errors=True)
with zipfile.ZipFile(wheel) as z:
    for name in z.namelist():
        if name.startswith("llvm/include/") and not name.endswith("/"):
            target = os.path.join(tmp, "include", name[len("llvm/include/"):])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with z.open(name) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
shutil.rmtree(dest, ignore_errors=True)
os.rename(tmp, dest)
PY
    rm -f "$download/$llvm22_wheel"
fi

# The rest is what only the tests need.
[ "$mode" = test ] || exit 0

# Perfetto's Python classes for its trace format (perfetto_trace_pb2, generated from the published
# perfetto_trace.proto) and Google's protobuf runtime, which tests/perfetto/check_perfetto.py
# reads `hookprof timeline --format=perfetto` files with: two pinned, checksum-checked
# pure-Python wheels from PyPI, unpacked (not pip-installed) into tests/perfetto/python.
perfetto_py="$(cd "$(dirname "$0")/.." && pwd)/tests/perfetto/python"
perfetto_wheels="perfetto-0.59.1-py3-none-any.whl fde529ecdf28042112d452ed431d51b797b4eea1378c10d7d25af5d36db719a3
protobuf-6.33.6-py3-none-any.whl 77179e006c476e69bf8e8ce866640091ec42e1beb80b213c3900006ecfba6901"
if [ "$(cat "$perfetto_py/.hookcc-wheels" 2>/dev/null)" != "$perfetto_wheels" ]; then
    echo "setup: fetching Perfetto's Python trace classes and protobuf (PyPI, 0.5 MB)" >&2
    download=$(mktemp -d)
    while read -r wheel sum; do
        name=${wheel%%-*}
        version=${wheel#*-}
        version=${version%%-*}
        python3 -m pip download --quiet --no-deps --only-binary=:all: --implementation py \
            --abi none --platform any --python-version 3.11 --dest "$download" "$name==$version"
        echo "$sum  $download/$wheel" | sha256sum -c --quiet - || {
            echo "setup: $wheel: checksum mismatch (expected $sum)" >&2
            exit 1
        }
    done <<<"$perfetto_wheels"
    rm -rf "$perfetto_py.partial"
    mkdir -p "$perfetto_py.partial"
    python3 - "$perfetto_py.partial" "$download"/*.whl <<'PY'
import sys, zipfile
dest = sys.argv[1]
for wheel in sys.argv[2:]:
    with zipfile.ZipFile(wheel) as z:
        z.extractall(dest, [n for n in z.namelist()
                            if n.startswith("google/") or n.startswith("perfetto/protos/")])
PY
    echo "$perfetto_wheels" >"$perfetto_py.partial/.hookcc-wheels"
    rm -rf "$perfetto_py" "$download"
    mv "$perfetto_py.partial" "$perfetto_py"
fi

# DuckDB's Python package, which tests/tests/export.rs queries `hookprof export`'s Parquet
# dataset with (docs/export.md): one pinned, checksum-checked wheel from PyPI for CPython 3.11 on
# x86_64 (Debian 12's), unpacked (not pip-installed) into tests/duckdb/python.
duckdb_py="$(cd "$(dirname "$0")/.." && pwd)/tests/duckdb/python"
duckdb_wheel="duckdb-1.4.2-cp311-cp311-manylinux_2_26_x86_64.manylinux_2_28_x86_64.whl"
duckdb_sha256=0c2315b693f201787c9892f31eb9a0484d3c648edb3578a86dc8c1284dd2873a
if [ "$(uname -m)" = x86_64 ] && [ "$(cat "$duckdb_py/.hookcc-wheel" 2>/dev/null)" != "$duckdb_wheel" ]; then
    echo "setup: fetching DuckDB's Python package (PyPI, 20 MB)" >&2
    download=$(mktemp -d)
    python3 -m pip download --quiet --no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 \
        --python-version 3.11 --implementation cp --abi cp311 --dest "$download" duckdb==1.4.2
    echo "$duckdb_sha256  $download/$duckdb_wheel" | sha256sum -c --quiet - || {
        echo "setup: $duckdb_wheel: checksum mismatch (expected $duckdb_sha256)" >&2
        exit 1
    }
    rm -rf "$duckdb_py.partial"
    mkdir -p "$duckdb_py.partial"
    python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
        "$download/$duckdb_wheel" "$duckdb_py.partial"
    echo "$duckdb_wheel" >"$duckdb_py.partial/.hookcc-wheel"
    rm -rf "$duckdb_py" "$download"
    mv "$duckdb_py.partial" "$duckdb_py"
fi

# PySpark, which tests/tests/export.rs runs docs/export.md's Spark SQL with on local[2]: the
# pinned, checksum-checked source distribution of pyspark 3.5.7 (300 MB: Spark's jars) and the
# py4j wheel it requires, from PyPI, pip-installed with --target into tests/spark/python (not
# into the system's Python). Building the source distribution takes about half a minute.
spark_py="$(cd "$(dirname "$0")/.." && pwd)/tests/spark/python"
spark_files=("pyspark-3.5.7.tar.gz 80e36514e0c5c126d35a26adf4f405cd4a69de96a8ea8a3c1e9a65fce2fb4eaa"
             "py4j-0.10.9.7-py2.py3-none-any.whl 85defdfd2b2376eb3abf5ca6474b51ab7e0de341c75a02f46dc9b5976f5a5c1b")
if [ "$(cat "$spark_py/.hookcc-pyspark" 2>/dev/null)" != "pyspark-3.5.7" ]; then
    echo "setup: fetching PySpark (PyPI, 300 MB)" >&2
    download=$(mktemp -d)
    python3 -m pip download --quiet --no-deps --no-binary pyspark --dest "$download" \
        pyspark==3.5.7 py4j==0.10.9.7
    for f in "${spark_files[@]}"; do
        echo "${f#* }  $download/${f%% *}" | sha256sum -c --quiet - || {
            echo "setup: ${f%% *}: checksum mismatch (expected ${f#* })" >&2
            exit 1
        }
    done
    rm -rf "$spark_py.partial"
    python3 -m pip install --quiet --no-deps --target "$spark_py.partial" \
        "$download/pyspark-3.5.7.tar.gz" "$download/py4j-0.10.9.7-py2.py3-none-any.whl"
    echo "pyspark-3.5.7" >"$spark_py.partial/.hookcc-pyspark"
    rm -rf "$spark_py" "$download"
    mv "$spark_py.partial" "$spark_py"
fi

# speedscope's web app and playwright-core for the browser test, as pinned in the lockfile;
# again only when the lockfile changed since the last install.
browser="$(cd "$(dirname "$0")/.." && pwd)/tests/browser"
lock_sum=$(sha256sum "$browser/package-lock.json" | cut -d' ' -f1)
if [ "$(cat "$browser/node_modules/.hookcc-lock-sha256" 2>/dev/null)" != "$lock_sum" ]; then
    echo "setup: installing speedscope and playwright-core (npm ci in tests/browser)" >&2
    (cd "$browser" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$lock_sum" >"$browser/node_modules/.hookcc-lock-sha256"
fi

# FreeRTOS-Kernel V11.2.0 for examples/baremetal/freertos (tests/tests/baremetal.rs): the sources
# the crates.io package freertos-next 0.12.0 bundles, fetched by cargo into its registry.
"$(dirname "$0")/freertos-kernel.sh" >/dev/null
