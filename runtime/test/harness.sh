# Shared by the runtime test suites (run.sh, ti/run.sh, nitro/run.sh), sourced.

# In CI (the CI variable set, not 0/false) a skip is a failure: scripts/setup.sh installs
# everything the suites use, so a case that cannot run there means a missing dependency, and a
# suite must never pass by skipping it. Elsewhere a skip only says what to install.
skips_fail() {
    case ${CI:-} in "" | 0 | false) return 1 ;; *) return 0 ;; esac
}

# How the suites link and run programs for a cross target. target_link_and_runner TRIPLE sets:
#   target_lflags  link flags (lld; for i686 the cross libc's dynamic linker and rpath)
#   runner         the command prefix that runs a program (qemu-user, or nothing)
#   real_comm      1 if thread names are the program's own (not under qemu-user, whose comm
#                  is its own)
# Everything a program loads comes from the cross libc packages scripts/setup.sh installs
# (libc6-dev-<arch>-cross, libgcc-12-dev-<arch>-cross), never from whatever else the machine
# has.
target_link_and_runner() { # TRIPLE
    target_lflags=(-fuse-ld=lld)
    runner=()
    real_comm=1
    if [ "${1%%-*}" = i686 ] && [ "$(uname -m)" = x86_64 ]; then
        # An x86-64 kernel runs i386 code itself (qemu-i386 7.2, Debian 12's, hangs in
        # pthread_create and fork with glibc 2.36), so the program uses the cross libc's
        # dynamic linker and libraries. The rpath must be DT_RPATH, not lld's default
        # DT_RUNPATH: glibc dlopen()s libgcc_s.so.1 for pthread_exit and thread cancellation,
        # and a dlopen from libc.so.6 searches the executable's DT_RPATH but not its
        # DT_RUNPATH, so with RUNPATH it finds a 32-bit libgcc_s only if the machine happens
        # to have one in the system paths (Debian's lib32gcc-s1, which setup.sh does not
        # install and a new machine lacks).
        target_lflags+=(-Wl,--dynamic-linker="/usr/$1/lib/ld-linux.so.2"
            -Wl,-rpath,"/usr/$1/lib" -Wl,--disable-new-dtags)
    else
        local qarch=${1%%-*}
        [ "$qarch" = i686 ] && qarch=i386
        runner=("qemu-$qarch" -L "/usr/$1")
        real_comm=0
    fi
}

# ---- For the suites of one runtime component (pfp/run.sh, gprof/run.sh) ----
# They set $work (a scratch directory), $verbose, $root and $CLANG, then call these; the counts
# are in $passed, $failed and $failures.
passed=0 failed=0
failures=()

# check NAME COMMAND...: runs the command in a fresh directory, its output as the log.
check() {
    local name=$1
    shift
    local dir
    dir=$work/$(echo "$name" | tr -c 'A-Za-z0-9_.-' '_')
    mkdir -p "$dir"
    if (cd "$dir" && "$@") >"$dir.log" 2>&1; then
        passed=$((passed + 1))
        echo "ok      $name"
        [ "$verbose" -eq 1 ] && sed 's/^/        /' "$dir.log"
    else
        failed=$((failed + 1))
        failures+=("$name")
        echo "FAILED  $name"
        sed 's/^/        /' "$dir.log"
    fi
    return 0
}

# A case that cannot run here: a failure in CI (see skips_fail), a skip with a message otherwise.
cannot_run() { # NAME WHY
    if skips_fail; then
        failed=$((failed + 1))
        failures+=("$1")
        echo "FAILED  $1: cannot run in CI: $2"
    else
        echo "skipped $1: $2"
    fi
}

# runtime/src/COMPONENT.c with -Wall -Wextra -Werror for the host, three bare-metal CPUs (whose
# counter a firmware brings: HKRT_TICKS_EXTERN) and each Linux cross target with headers here.
compile_everywhere() { # COMPONENT
    local strict=(-std=gnu11 -O2 -fPIC -fno-stack-protector -fvisibility=hidden -Wall -Wextra
        -Werror -I "$root/runtime/include" -I "$root/runtime/src" -c "$root/runtime/src/$1.c"
        -o "$1.o")
    check "$1.c: -Wall -Wextra -Werror (host)" "$CLANG" "${strict[@]}"
    local target triple
    for target in aarch64-none-elf thumbv7m-none-eabi riscv32-none-elf; do
        check "$1.c: -Wall -Wextra -Werror, bare metal $target" "$CLANG" "${strict[@]}" \
            --target=$target -ffreestanding -DHOOKCC_BARE_METAL -DHKRT_TICKS_EXTERN
    done
    for triple in aarch64-linux-gnu arm-linux-gnueabihf i686-linux-gnu riscv64-linux-gnu \
        s390x-linux-gnu; do
        [ -d "/usr/$triple/include" ] || continue
        check "$1.c: -Wall -Wextra -Werror --target=$triple" "$CLANG" "${strict[@]}" \
            "--target=$triple"
    done
}

# The closing lines; the exit status to end with.
report_results() {
    if [ "${#failures[@]}" -gt 0 ]; then
        echo "failed:"
        printf '  %s\n' "${failures[@]}"
    fi
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}
