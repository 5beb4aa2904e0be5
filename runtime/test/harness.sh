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
