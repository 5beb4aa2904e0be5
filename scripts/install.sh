#!/usr/bin/env bash
# Installs hookcc into a prefix:
#   PREFIX/bin/{hookcc,hookcc++,hookcc-ar,hookcc-ranlib,hookprof,cargo-hookcc}
#   PREFIX/bin/{llvm-ar,llvm-ranlib} -> hookcc, unless PREFIX/bin has other ones (/usr/bin):
#     CMake looks for these in the compiler's directory first (docs/build-systems.md)
#   PREFIX/lib/hookcc/{libhookcc_pass.so,libhookcc_clang.so,libhookcc_pass_llvm22.so}
#   PREFIX/lib/hookcc/runtime/{include,src}   (compiled per target on first use), make/nitro.mk
#   PREFIX/share/man/man1/{hookcc,hookprof*}.1, PREFIX/share/{bash-completion,zsh,fish}/…/hookprof
#   PREFIX/share/hookcc/{gprof.gdb,baremetal-dump.sh}   (taking data out of a board with gdb)
# Usage: scripts/install.sh PREFIX        (builds with cargo build --release first)
#        HOOKCC_BUILD_DIR=target/debug scripts/install.sh PREFIX   (an existing build, no cargo)
set -euo pipefail
if [ $# -ne 1 ] || [ "${1:0:1}" = "-" ]; then
    echo "usage: scripts/install.sh PREFIX" >&2
    exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="$1"
build="${HOOKCC_BUILD_DIR:-}"
if [ -z "$build" ]; then
    (cd "$root" && cargo build --release --workspace --quiet && scripts/build-plugins.sh --release)
    build="$root/target/release"
fi
for f in hookcc hookprof libhookcc_pass.so libhookcc_clang.so; do
    [ -f "$build/$f" ] || { echo "install: $build/$f is missing: build first" >&2; exit 1; }
done
mkdir -p "$prefix/bin" "$prefix/lib/hookcc/runtime"
install -m 755 "$build/hookcc" "$build/hookprof" "$prefix/bin/"
ln -sf hookcc "$prefix/bin/hookcc++"
ln -sf hookcc "$prefix/bin/hookcc-ar"
ln -sf hookcc "$prefix/bin/hookcc-ranlib"
# CC=hookcc cmake -DCMAKE_C_FLAGS=-flto: CMake takes llvm-ar and llvm-ranlib from hookcc's
# directory, else from PATH (Debian 12's are LLVM 14's, which cannot read clang-19's bitcode).
# Never over another LLVM's own (a PREFIX of /usr): a warning says what to do then.
for tool in llvm-ar llvm-ranlib; do
    if [ ! -e "$prefix/bin/$tool" ] || [ "$(readlink "$prefix/bin/$tool")" = hookcc ]; then
        ln -sf hookcc "$prefix/bin/$tool"
    else
        echo "install: $prefix/bin/$tool is another program's: left alone (CMake with -flto" \
            "static libraries there needs -DCMAKE_AR=$prefix/bin/hookcc-ar" \
            "-DCMAKE_RANLIB=$prefix/bin/hookcc-ranlib)" >&2
    fi
done
install -m 644 "$build/libhookcc_pass.so" "$build/libhookcc_clang.so" "$prefix/lib/hookcc/"
# Rust (docs/rust.md): cargo hookcc, and the plugin for rustc's LLVM when it was built.
[ -f "$build/cargo-hookcc" ] && install -m 755 "$build/cargo-hookcc" "$prefix/bin/"
for plugin in "$build"/libhookcc_pass_llvm*.so; do
    [ -f "$plugin" ] && install -m 644 "$plugin" "$prefix/lib/hookcc/"
done
rm -rf "$prefix/lib/hookcc/runtime/include" "$prefix/lib/hookcc/runtime/src" "$prefix/lib/hookcc/runtime/make"
cp -R "$root/runtime/include" "$root/runtime/src" "$root/runtime/make" "$prefix/lib/hookcc/runtime/"
"$root/scripts/hookprof-docs.sh" "$prefix/bin/hookprof" "$prefix/share"
# The debugger scripts (docs/gprof.md, docs/baremetal.md); gprof.gdb's gprof_dump calls this
# prefix's hookprof to write gmon.out.
mkdir -p "$prefix/share/hookcc"
hookprof_path="$(cd "$prefix/bin" && pwd)/hookprof"
sed "s|^hookcc_installed_hookprof = None\$|hookcc_installed_hookprof = \"$hookprof_path\"|" \
    "$root/scripts/gprof.gdb" >"$prefix/share/hookcc/gprof.gdb"
grep -q "^hookcc_installed_hookprof = \"" "$prefix/share/hookcc/gprof.gdb" ||
    { echo "install: scripts/gprof.gdb has no hookcc_installed_hookprof line to set" >&2; exit 1; }
chmod 644 "$prefix/share/hookcc/gprof.gdb"
install -m 755 "$root/scripts/baremetal-dump.sh" "$prefix/share/hookcc/"
echo "installed hookcc into $prefix (add $prefix/bin to PATH)"
