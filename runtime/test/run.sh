#!/usr/bin/env bash
# Unit tests of the hosted trace runtime (runtime/src/trace.c).
#
# Builds trace.o the way the hookcc driver does (plus -Wall -Wextra -Werror) and the test
# programs in this directory with clang-19, runs them natively and under qemu-user for each
# cross target whose libc is installed (Debian: libc6-dev-<arch>-cross, libgcc-12-dev-<arch>-cross,
# qemu-user; linked with lld), and checks every trace file with check_trace.py.
#
# Usage: runtime/test/run.sh [-v]
#   -v                    print every check's output, not only failures'
#   CC=...                compiler (default clang-19)
#   HOOKCC_TEST_TARGETS   cross targets to try (default: aarch64 i686 arm riscv64 s390x;
#                         empty: native only)
# Prints "N passed, N failed, N skipped" last; exits non-zero if anything failed.
set -u

verbose=0
[ "${1:-}" = "-v" ] && verbose=1

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
CC=${CC:-clang-19}
checker=("python3" "$here/check_trace.py")
work=$(mktemp -d "${TMPDIR:-/tmp}/hookcc-runtime-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
ulimit -c 0 # the crash tests must not leave core files
case_timeout=${HOOKCC_TEST_TIMEOUT:-120}
# shellcheck source=harness.sh
. "$here/harness.sh"

# The driver's flags for the runtime (keep in step with wrapper/), plus warnings as errors.
runtime_cflags=(-std=gnu11 -O2 -fPIC -fno-stack-protector -fvisibility=hidden
    -Wall -Wextra -Werror -I "$root/runtime/include" -I "$root/runtime/src")
# The tests call the hooks by hand with their own functions' addresses, and the exit hook gets
# the address + 2: like the pass, they keep every function 4-byte aligned so that bit is free.
test_cflags=(-std=gnu11 -O1 -g -falign-functions=4 -Wall -Wextra -Werror -I "$root/runtime/include")

passed=0 failed=0 skipped=0
failures=()

result() { # NAME STATUS [DETAIL-FILE]
    if [ "$2" -eq 0 ]; then
        passed=$((passed + 1))
        echo "ok      $1"
        [ "$verbose" -eq 1 ] && [ -f "${3:-}" ] && sed 's/^/        /' "$3"
    else
        failed=$((failed + 1))
        failures+=("$1")
        echo "FAILED  $1"
        [ -f "${3:-}" ] && sed 's/^/        /' "$3"
    fi
    return 0
}

skip() { # NAME WHY
    if skips_fail; then
        failed=$((failed + 1))
        failures+=("$1")
        echo "FAILED  $1: cannot run in CI: $2"
        return 0
    fi
    skipped=$((skipped + 1))
    echo "skipped $1: $2"
}

# ------------------------------------------------------------------------------------------
# Per-target state, set by setup_target: $target, $tag, $bin, $runner (array), $ptr, $endian,
# $real_comm (1 if thread names are the program's: not under qemu-user, whose comm is its own)

# run STATUS [VAR=VALUE ...] -- PROGRAM [ARGS...]
# Runs a test program in the case's fresh directory $dir (also the caller's working directory
# from then on), stdout in $dir/out, stderr in $dir/err, and checks its exit status.
run() {
    local want=$1
    shift
    local envs=()
    while [ "$1" != "--" ]; do envs+=("$1"); shift; done
    shift
    local prog=$1
    shift
    cd "$dir" || return 1
    local status
    # In braces with stderr closed: bash's own "Segmentation fault" notice is noise here.
    {
        timeout -k 5 "$case_timeout" env -u HOOKCC_OUTPUT -u HOOKCC_MAX_BYTES -u HOOKCC_BUFFER_RECORDS -u HOOKCC_DISABLE \
            "${envs[@]}" ${runner[@]+"${runner[@]}"} "$bin/$prog" "$@" >out 2>err
        status=$?
    } 2>/dev/null
    # The runtime's one notice where the kernel refuses perf events (a container's seccomp
    # profile, qemu-user): not what the cases check, so moved from err to the log, where
    # case_switches looks for it.
    if grep -q "^$switches_refused" err; then
        grep "^$switches_refused" err >>switches_refused
        grep -v "^$switches_refused" err >err.rest
        mv err.rest err
    fi
    if [ "$status" -eq 124 ]; then
        echo "$prog $*: timed out after ${case_timeout}s" >>log
        return 1
    fi
    if [ "$status" -ne "$want" ]; then
        echo "$prog $*: exit status $status, expected $want" >>log
        sed 's/^/stderr: /' err >>log
        return 1
    fi
    return 0
}

# The one .hktrace file in $dir (fails if there is not exactly one).
only_trace() {
    local files=("$dir"/*.hktrace)
    if [ "${#files[@]}" -ne 1 ] || [ ! -f "${files[0]}" ]; then
        echo "expected one .hktrace file in $dir, found: $(cd "$dir" && ls)" >>"$dir/log"
        return 1
    fi
    trace=${files[0]}
}

check() { # FILE VARS check_trace.py-options...
    local file=$1 vars=$2
    shift 2
    "${checker[@]}" "$file" --vars "$vars" --pointer-size "$ptr" --endian "$endian" "$@" \
        >>"$dir/log" 2>&1
}

# ------------------------------------------------------------------------------------------
# The cases. Each returns 0 on success and leaves its evidence in $dir/log.

switches_refused="hookcc: context switches and samples are not recorded:"

# Context switches (SWITCH chunks): both threads were switched out for their 100 ms of
# nanosleep and pthread_cond_wait. Where the kernel refuses perf events, the runtime said so
# once and wrote none.
case_switches() {
    run 0 -- switches || return 1
    only_trace || return 1
    if [ -s switches_refused ]; then
        cat switches_refused >>log
        [ "$(wc -l <switches_refused)" -eq 1 ] || { echo "the refusal was not said once" >>log; return 1; }
        check "$trace" out --complete --balanced --no-switches
        return
    fi
    local name=()
    [ "$real_comm" = 1 ] && name=(--switched-out-ms sleeper=99 --switched-out-ms waiter=99)
    check "$trace" out --complete --balanced --threads 2 ${name[@]+"${name[@]}"}
}

case_basic() {
    run 0 -- basic || return 1
    only_trace || return 1
    grep -qx errno_ok=1 out || { echo "errno changed across a hook" >>log; return 1; }
    grep -qx enabled=1 out || { echo "hookcc_trace_enabled() != 1" >>log; return 1; }
    grep -qx "path=$(basename "$trace")" out || { echo "hookcc_trace_path() is wrong" >>log; return 1; }
    case $(basename "$trace") in basic.[0-9]*.hktrace) ;; *) echo "bad default name" >>log; return 1 ;; esac
    # Thread names come from the kernel's comm, which under qemu-user is qemu's own.
    local name=()
    [ "$real_comm" = 1 ] && name=(--first-thread basic)
    check "$trace" out --complete --records 400002 --lost 0 --threads 1 --balanced \
        --entries main=1 --entries outer=100000 --entries inner=100000 --exe-suffix /basic \
        --overhead ${name[@]+"${name[@]}"}
}

case_buffer_of_one() { # every record goes through the slow path
    run 0 HOOKCC_BUFFER_RECORDS=1 -- basic 1000 || return 1
    only_trace || return 1
    check "$trace" out --complete --records 4002 --lost 0 --balanced --entries outer=1000
}

case_threads() {
    run 0 HOOKCC_BUFFER_RECORDS=100 -- threads 20000 || return 1
    only_trace || return 1
    local names=()
    [ "$real_comm" = 1 ] && names=(--first-thread threads --thread-records threads=2
        --thread-records worker-0=40002 --thread-records worker-1=40002
        --thread-records worker-2=40002 --thread-records worker-3=40002)
    # worker-3 left by pthread_exit() with two frames open.
    # Every worker ended on its own (END chunk), main did not (exit finished it).
    check "$trace" out --complete --records $((4 * 40002 + 2)) --lost 0 --threads 5 \
        --open-frames 2 --unmatched-exits 0 --entries leaf=80000 --ended-threads 4 \
        ${names[@]+"${names[@]}"}
}

# HOOKCC_MODE=ring: each of the five threads' last 1024 records (16 KiB rings), written when
# the thread ends or at exit; and the last records before a crash.
case_ring() {
    run 0 HOOKCC_MODE=ring HOOKCC_RING_BYTES=16K -- threads 20000 || return 1
    only_trace || return 1
    local names=()
    [ "$real_comm" = 1 ] && names=(--thread-records worker-0=1024 --thread-records worker-3=1024)
    check "$trace" out --complete --records $((4 * 1024 + 2)) --lost 0 --threads 5 \
        ${names[@]+"${names[@]}"} || return 1
    rm -f -- *.hktrace
    run 139 HOOKCC_MODE=ring HOOKCC_RING_BYTES=1K -- crash segv 10000 || return 1
    only_trace || return 1
    check "$trace" out --complete --records 64 --lost 0
}

# HOOKCC_MODE=profile: the same threads as case_threads, their records folded into trees (by
# the writer, 100-record buffers: 800 hand-overs a worker), the same counts; and a crash's tree.
case_profile() {
    run 0 HOOKCC_MODE=profile HOOKCC_BUFFER_RECORDS=100 -- threads 20000 || return 1
    only_trace || return 1
    local names=()
    [ "$real_comm" = 1 ] && names=(--first-thread threads --thread-records threads=2
        --thread-records worker-0=40002 --thread-records worker-3=40002)
    check "$trace" out --complete --records $((4 * 40002 + 2)) --lost 0 --threads 5 \
        --open-frames 2 --unmatched-exits 0 --entries leaf=80000 --ended-threads 4 \
        ${names[@]+"${names[@]}"} || return 1
    rm -f -- *.hktrace
    run 139 HOOKCC_MODE=profile HOOKCC_BUFFER_RECORDS=64 -- crash segv || return 1
    only_trace || return 1
    check "$trace" out --complete --records 2002 --lost 0 --open-frames 2
}

# HOOKCC_MIN_DURATION: every call in the trees (the same counts as case_threads), the records
# only of calls of 1 ms or more: none here but the frames a buffer's end cuts (they stay) and
# those open at the end.
case_min_duration() {
    run 0 HOOKCC_MIN_DURATION=1ms HOOKCC_BUFFER_RECORDS=1024 -- threads 20000 || return 1
    only_trace || return 1
    check "$trace" out --complete --lost 0 --threads 5 --unmatched-exits 0 \
        --entries leaf=80000 --ended-threads 4 --records-max 2000 --folded-min 78000
}

# HOOKCC_TRACE_START / HOOKCC_TRACE_STOP, names looked up in the executable's symbol table (ELF32
# and ELF64, either byte order, on every target): leaf's windows only; from worker_body's entry
# to the first leaf's return (worker_body stays open); a name that is no function: a warning,
# and everything recorded.
case_triggers() {
    run 0 HOOKCC_TRACE_START=leaf -- threads 20000 || return 1
    only_trace || return 1
    check "$trace" out --complete --records 160000 --lost 0 --balanced --entries leaf=80000 ||
        return 1
    rm -f -- *.hktrace
    run 0 HOOKCC_TRACE_START=worker_body HOOKCC_TRACE_STOP=leaf -- threads 20000 || return 1
    only_trace || return 1
    check "$trace" out --complete --records 12 --lost 0 --open-frames 4 --entries leaf=4 ||
        return 1
    rm -f -- *.hktrace
    run 0 HOOKCC_TRACE_START=no_such_function -- threads 100 || return 1
    only_trace || return 1
    grep -q "HOOKCC_TRACE_START 'no_such_function': no such function" err ||
        { echo "no warning for an unknown function" >>log; return 1; }
    check "$trace" out --complete --records $((4 * 202 + 2)) --lost 0
}

case_exit_running() {
    run 0 -- exit_running || return 1
    only_trace || return 1
    local names=()
    [ "$real_comm" = 1 ] && names=(--thread-records "spinner=>=400000")
    # The spinner is cut wherever exit() found it: one frame may be open, plus main's.
    check "$trace" out --complete --threads 2 --max-open-frames 2 --unmatched-exits 0 \
        ${names[@]+"${names[@]}"}
}

case_churn() {
    run 0 -- churn 1000 || return 1
    only_trace || return 1
    # 1000 joined threads of 100 records each; late threads may be cut by exit() anywhere.
    check "$trace" out --complete --entries short_body=50000 --unmatched-exits 0 \
        --max-open-frames 1000
}

case_sigprof() { # hooks in a signal handler that interrupts hooks: no crash, a valid file
    run 0 HOOKCC_BUFFER_RECORDS=64 -- sigprof || return 1
    only_trace || return 1
    grep -q '^handled=[1-9]' out || { echo "no SIGPROF was handled" >>log; return 1; }
    check "$trace" out --complete --no-monotonic
}

case_signal_records_accounted() { # every handler record is in the file or counted lost
    run 0 HOOKCC_BUFFER_RECORDS=64 -- sigcount 300000 || return 1
    only_trace || return 1
    grep -q '^handled=[1-9]' out || { echo "no signal was handled" >>log; return 1; }
    # --no-monotonic: under qemu-user on riscv64 and s390x (clock_gettime targets) a record now
    # and then carries a time taken before a handler's records that precede it (not
    # understood yet); the count, which this case is about, holds.
    check "$trace" out --complete --generated "$(sed -n 's/^generated=//p' out)" --no-monotonic
}

case_fork() {
    run 0 -- fork || return 1
    local parent child
    parent=$(sed -n 's/^path=//p' out)
    child=$(sed -n 's/^child_path=//p' out)
    [ "$child" = "fork.$(sed -n 's/^child_pid=//p' out).hktrace" ] ||
        { echo "child file '$child' is not fork.<child pid>.hktrace" >>log; return 1; }
    grep -v '^child_' out >parent.vars
    sed -n 's/^child_//p' out >child.vars
    check "$parent" parent.vars --complete --records 2402 --lost 0 --threads 1 --balanced \
        --entries before=1000 --entries after=200 --entries in_child=0 &&
        check "$child" child.vars --complete --records 1000 --lost 0 --threads 1 --balanced \
            --overhead # the parent's, measured before the fork
}

# Calls in a pthread key destructor that runs after the runtime's, at thread exit: recorded.
case_key_destructor() {
    run 0 -- key_dtor || return 1
    only_trace || return 1
    check "$trace" out --complete --records 222 --lost 0 --threads 2 --balanced \
        --entries cleanup=100 --entries work=10
}

# A fork child that changes directory still writes its trace where the program started.
case_fork_chdir() {
    mkdir -p "$dir/away" || return 1
    run 0 -- fork chdir || return 1
    local child
    child=$(sed -n 's/^child_path=//p' out)
    [ -f "$dir/$child" ] || { echo "no $child in the start directory: $(ls "$dir" "$dir/away")" >>log; return 1; }
    [ -z "$(ls "$dir/away")" ] || { echo "a trace in the child's new directory: $(ls "$dir/away")" >>log; return 1; }
    sed -n 's/^child_//p' out >child.vars
    check "$dir/$child" child.vars --complete --records 1000 --lost 0 --threads 1 --balanced
}

# 24 images of one pid, each exec'ing the next: every image gets a file of its own (names never
# run out), the last, which returns from main, finishes its file, and every earlier one its
# own before its exec.
case_exec_chain() {
    cd "$dir" || return 1
    run 0 HOOKCC_OUTPUT=chain.hktrace -- exec_chain 23 || return 1
    local files complete=0 f last=
    files=$(ls chain*.hktrace | wc -l)
    [ "$files" -eq 24 ] || { echo "$files trace files for 24 images: $(ls)" >>log; return 1; }
    last=$(sed -n 's/^path=//p' out)
    check "$last" out --complete --records 22 --lost 0 --balanced --entries work=10 || return 1
    # Every earlier image's file is finished before its exec (main and 10 pairs of work; main
    # still open). Before issue 37 only the last image's was: the others had 0 records.
    for f in chain*.hktrace; do
        [ "$f" = "$last" ] && continue
        "${checker[@]}" "$f" --complete --records 21 --lost 0 >/dev/null 2>&1 && complete=$((complete + 1))
    done
    [ "$complete" -eq 23 ] || { echo "$complete of the 23 earlier images' files complete with 21 records" >>log; return 1; }
}

# A file at the trace's name that is not ours (another user's, or readable by others) is never
# written into: it is replaced by a new file of ours, mode 0600.
case_output_not_ours() {
    cd "$dir" || return 1
    # A hard link to the planted file shows whether anything was written into it.
    : >planted.hktrace
    chmod 666 planted.hktrace
    ln planted.hktrace witness
    run 0 HOOKCC_OUTPUT=planted.hktrace -- basic 10 || return 1
    [ "$(stat -c '%a %u' planted.hktrace)" = "600 $(id -u)" ] ||
        { echo "planted.hktrace: $(stat -c '%a %u' planted.hktrace)" >>log; return 1; }
    [ ! -s witness ] || { echo "the planted file was written into" >>log; return 1; }
    check planted.hktrace out --complete --records 42 --lost 0 || return 1
    if [ "$(id -u)" -eq 0 ]; then
        # A previous trace that another user owns (as root: chown): replaced, not emptied.
        cp planted.hktrace theirs.hktrace
        # perl's chown takes the number as it is (chown(1) would look the user up by name).
        perl -e 'chown(65534, -1, $ARGV[0]) or die "chown: $!\n"' theirs.hktrace || return 1
        ln theirs.hktrace witness2
        run 0 HOOKCC_OUTPUT=theirs.hktrace -- basic 10 || return 1
        cmp -s witness2 planted.hktrace || { echo "another user's file was written into" >>log; return 1; }
        [ "$(stat -c '%a %u' theirs.hktrace)" = "600 0" ] || { echo "theirs.hktrace: $(stat -c '%a %u' theirs.hktrace)" >>log; return 1; }
        check theirs.hktrace out --complete --records 42 --lost 0 || return 1
    fi
}

case_fork_output() { # HOOKCC_OUTPUT: the child must not truncate the parent's file
    run 0 HOOKCC_OUTPUT=out.hktrace -- fork || return 1
    local cpid
    cpid=$(sed -n 's/^child_pid=//p' out)
    grep -qx path=out.hktrace out && grep -qx "child_path=out.$cpid.hktrace" out ||
        { echo "paths: $(grep path out | tr '\n' ' ')" >>log; return 1; }
    grep -v '^child_' out >parent.vars
    sed -n 's/^child_//p' out >child.vars
    check out.hktrace parent.vars --complete --records 2402 --balanced &&
        check "out.$cpid.hktrace" child.vars --complete --records 1000 --balanced
}

# fork + exec (HOOKCC_OUTPUT set or not): the exec'd image writes a file of its own, the parent's
# stays whole, and the fork child, which ran no hook before exec, leaves no file behind.
case_fork_exec() { # [HOOKCC_OUTPUT]
    local envs=()
    [ -n "${1:-}" ] && envs=(HOOKCC_OUTPUT="$1")
    run 0 ${envs[@]+"${envs[@]}"} -- fork_exec || return 1
    local parent child cpid
    parent=$(sed -n 's/^path=//p' out)
    child=$(sed -n 's/^child_path=//p' out)
    cpid=$(sed -n 's/^child_pid=//p' out)
    if [ -n "${1:-}" ]; then
        [ "$parent" = "$1" ] && [ "$child" = "${1%.hktrace}.$cpid.hktrace" ] ||
            { echo "paths: parent '$parent', exec'd child '$child'" >>log; return 1; }
    fi
    local files
    files=$(cd "$dir" && ls -- *.hktrace | sort | tr '\n' ' ')
    [ "$files" = "$(printf '%s\n' "$parent" "$child" | sort | tr '\n' ' ')" ] ||
        { echo "trace files: $files (expected only '$parent' and '$child')" >>log; return 1; }
    grep -v '^child_' out >parent.vars
    sed -n 's/^child_//p' out >child.vars
    check "$parent" parent.vars --complete --records 2402 --lost 0 --threads 1 --balanced \
        --entries before=1000 --entries after=200 --entries in_child=0 &&
        check "$child" child.vars --complete --records 1002 --lost 0 --threads 1 --balanced \
            --entries in_child=500
}

# HOOKCC_OUTPUT naming an existing file: a previous trace is replaced, anything else is left
# alone (one warning, records counted lost).
case_output_existing() {
    run 0 HOOKCC_OUTPUT=out.hktrace -- basic 100 && run 0 HOOKCC_OUTPUT=out.hktrace -- basic 1000 ||
        return 1
    [ "$(ls -- *.hktrace)" = out.hktrace ] || { echo "files: $(ls)" >>log; return 1; }
    check out.hktrace out --complete --records 4002 --lost 0 --balanced || return 1
    printf 'not a trace\n' >notes.txt
    run 0 HOOKCC_OUTPUT=notes.txt -- basic 100 || return 1
    [ "$(cat notes.txt)" = "not a trace" ] || { echo "notes.txt was overwritten" >>log; return 1; }
    [ "$(wc -l <err)" -eq 1 ] && grep -q "not overwriting 'notes.txt'" err ||
        { echo "expected one warning naming notes.txt:" >>log; cat err >>log; return 1; }
    # Not a regular file: written by any number of programs at once, never "taken" (which
    # would create /dev/null.<pid>). The two runs overlap (the one in the background uses a
    # directory of its own for its out and err).
    mkdir -p bg
    ( dir=$dir/bg; run 0 HOOKCC_OUTPUT=/dev/null -- basic 100000 ) &
    local bg=$!
    run 0 HOOKCC_OUTPUT=/dev/null -- basic 100000 || return 1
    wait "$bg" || { echo "the background run failed" >>log; return 1; }
    [ -z "$(ls /dev/null.* 2>/dev/null)" ] || { echo "a /dev/null.<pid> was created" >>log; return 1; }
}

# Files are created 0600 whatever the umask allows; a symlink is never followed.
case_file_mode_and_symlink() {
    umask 022
    run 0 -- basic 10 || return 1
    only_trace || return 1
    [ "$(stat -c %a "$trace")" = 600 ] || { echo "mode $(stat -c %a "$trace"), expected 600" >>log; return 1; }
    rm -f -- *.hktrace
    echo precious >victim
    ln -s victim link.hktrace
    run 0 HOOKCC_OUTPUT=link.hktrace -- basic 10 || return 1
    [ "$(cat victim)" = precious ] || { echo "the symlink's target was overwritten" >>log; return 1; }
    [ "$(wc -l <err)" -eq 1 ] && grep -q "symbolic link 'link.hktrace'" err ||
        { echo "expected one warning about link.hktrace:" >>log; cat err >>log; return 1; }
}

case_exit_nested() {
    run 3 -- exit_nested || return 1
    only_trace || return 1
    # main, a, b, c entries; the program's atexit handler's pair is in (runs before ours).
    check "$trace" out --complete --records 6 --lost 0 --open-frames 4 --entries handler_body=1 ||
        return 1
    # quick_exit: no atexit handler runs, at_quick_exit's do.
    rm -f -- *.hktrace
    run 3 -- exit_nested quick || return 1
    only_trace || return 1
    check "$trace" out --complete --records 4 --lost 0 --open-frames 4 --entries handler_body=0
}

# A fork child that ends with _exit (no atexit handlers) still finishes its file; a vfork child
# that calls _exit leaves the parent's trace alone.
case_fork_exit() {
    run 0 -- fork _exit || return 1
    local child
    child=$(sed -n 's/^child_path=//p' out)
    [ -f "$child" ] || { echo "the _exit child left no trace: $(ls)" >>log; return 1; }
    sed -n 's/^child_//p' out >child.vars
    check "$child" child.vars --complete --records 1000 --lost 0 --threads 1 --balanced || return 1
    rm -f -- *.hktrace
    run 0 -- fork vfork || return 1
    [ "$(ls -- *.hktrace | wc -l)" -eq 2 ] || { echo "files: $(ls)" >>log; return 1; }
    local parent
    parent=$(sed -n 's/^path=//p' out)
    grep -v '^child_' out >parent.vars
    check "$parent" parent.vars --complete --records 2402 --lost 0 --threads 1 --balanced
}

case_max_bytes() {
    run 0 HOOKCC_MAX_BYTES=8192 HOOKCC_BUFFER_RECORDS=64 -- basic 10000 || return 1
    only_trace || return 1
    check "$trace" out --complete --generated 40002 --lost-min 30000 \
        --lost-chunks-equal-header --events-end-max 8192 || return 1
    # The small chunks may end the file a little past the limit, never in proportion to the
    # records made (a PAUSE chunk per buffer, written once even when no record was: 24 KB here).
    local size
    size=$(stat -c %s "$trace")
    [ "$size" -le 12288 ] || { echo "$size bytes: the file grew past HOOKCC_MAX_BYTES" >>log; return 1; }
    # The same limit with a unit; a value that is not a size is ignored with a warning.
    rm -f -- *.hktrace
    run 0 HOOKCC_MAX_BYTES=8KiB HOOKCC_BUFFER_RECORDS=64 -- basic 10000 || return 1
    only_trace || return 1
    check "$trace" out --complete --generated 40002 --lost-min 30000 --events-end-max 8192 || return 1
    rm -f -- *.hktrace
    run 0 HOOKCC_MAX_BYTES=8X -- basic 10000 || return 1
    grep -q "ignoring HOOKCC_MAX_BYTES" err || { echo "no warning for HOOKCC_MAX_BYTES=8X" >>log; return 1; }
    only_trace || return 1
    check "$trace" out --complete --records 40002 --lost 0
}

# Without HOOKCC_MAX_BYTES, records stop before the file system holding the trace has less
# than 10 % free: on a 64 MiB tmpfs, a program that would write 1 GB of 16-byte records
# (HOOKCC_PACK=0); on an 8 MiB one (so that check_trace.py decodes it in seconds), one that
# would write 24 MB packed. The file must decode, records + lost = made, and one warning names
# the variable. Needs root (mount); native only.
case_disk_reserve() { # PACK
    mkdir -p "$dir/fs" || return 1
    local calls=16000000 size=64m status=0
    [ "$1" = 1 ] && calls=5000000 size=8m
    mount -t tmpfs -o size=$size hookcc-test "$dir/fs" || { echo "cannot mount a tmpfs" >>log; return 1; }
    run 0 HOOKCC_PACK="$1" HOOKCC_OUTPUT="$dir/fs/t.hktrace" -- basic "$calls" || status=1
    if [ "$status" -eq 0 ]; then
        local avail blocks
        read -r avail blocks < <(stat -f -c '%a %b' "$dir/fs")
        echo "free after the run: $avail of $blocks blocks" >>log
        [ $((avail * 10)) -ge "$blocks" ] || { echo "less than 10 % free" >>log; status=1; }
        [ "$(grep -c "trace stopped: the file system would have less than 10% free" err)" -eq 1 ] ||
            { echo "expected one warning on stderr:" >>log; cat err >>log; status=1; }
        grep -q "HOOKCC_MAX_BYTES" err || { echo "the warning does not name HOOKCC_MAX_BYTES" >>log; status=1; }
        check "$dir/fs/t.hktrace" out --complete --generated $((4 * calls + 2)) --lost-min 1 || status=1
    fi
    umount "$dir/fs" || status=1
    return "$status"
}

# A disk with less than a block free: the header cannot be written; no empty file is left
# behind (it once was, unreadable), and stderr says why.
case_disk_full_at_start() {
    mkdir -p "$dir/fs" || return 1
    mount -t tmpfs -o size=64k hookcc-test "$dir/fs" || { echo "cannot mount a tmpfs" >>log; return 1; }
    local status=0
    dd if=/dev/zero of="$dir/fs/fill" bs=1k count=1000 >/dev/null 2>&1 # until ENOSPC
    run 0 HOOKCC_OUTPUT="$dir/fs/t.hktrace" -- basic 100 || status=1
    if [ -e "$dir/fs/t.hktrace" ]; then
        echo "a trace file was left: $(stat -c %s "$dir/fs/t.hktrace") bytes" >>log
        status=1
    fi
    grep -q "no trace: not even its header could be written" err || { echo "no warning:" >>log; cat err >>log; status=1; }
    umount "$dir/fs" || status=1
    return "$status"
}

# A write that fails part way (RLIMIT_FSIZE here; a full disk fails the same way, with ENOSPC):
# the file is still finished, cut where the first write failed, and records + lost = made.
case_file_size_limit() {
    local limit=200000
    # 800 002 records: PACKED, about 2 bytes each, so at most 100 000 or so fit.
    run 0 HOOKCC_BUFFER_RECORDS=1000 -- fsize "$limit" 200000 || return 1
    grep -qx survived=1 out || { echo "the program did not survive the trace's writes" >>log; return 1; }
    only_trace || return 1
    [ "$(stat -c %s "$trace")" -le "$limit" ] || { echo "file larger than the limit" >>log; return 1; }
    check "$trace" out --complete --generated 800002 --lost-min 600000 || return 1
    # The program's own write past the limit: SIGXFSZ still kills it (153), the file finished.
    rm -f -- *.hktrace
    run 153 HOOKCC_BUFFER_RECORDS=1000 -- fsize "$limit" 200000 self || return 1
    grep -qx own_write_survived=1 out && { echo "SIGXFSZ did not kill the program" >>log; return 1; }
    only_trace || return 1
    check "$trace" out --complete --generated 800001 --lost-min 600000
}

case_unwritable() {
    local path=/nonexistent-hookcc-test-dir/x.hktrace
    run 0 HOOKCC_OUTPUT=$path -- basic 1000 || return 1
    grep -qx 'path=(null)' out || { echo "hookcc_trace_path() is not NULL" >>log; return 1; }
    [ "$(wc -l <err)" -eq 1 ] && grep -q "$path" err && grep -q "No such file or directory" err ||
        { echo "expected one warning naming $path:" >>log; cat err >>log; return 1; }
}

case_crash() { # MODE STATUS
    run "$2" -- crash "$1" || return 1
    only_trace || return 1
    if [ "$1" = overflow ]; then
        check "$trace" out --complete --lost 0 --unmatched-exits 0
    else
        check "$trace" out --complete --records 2002 --lost 0 --open-frames 2
    fi
}

case_crash_chained() { # MODE: a handler installed before the runtime's still gets the signal
    run 42 CRASH_CHAIN=1 -- crash "$1" || return 1
    only_trace || return 1
    grep -q "previous handler ran" err || { echo "the previous handler did not run" >>log; return 1; }
    check "$trace" out --complete --records 2002 --lost 0 --open-frames 2
}

case_killed() { # SIGKILL: no finish; the chunks written so far must still be readable
    run 137 HOOKCC_BUFFER_RECORDS=64 -- crash kill || return 1
    only_trace || return 1
    # 2002 records made, 31 full buffers of 64; the last 18 die with the process, and so may
    # the last full buffer if the writer thread had not written it yet (raise() follows its
    # hand-over at once). With HOOKCC_WRITER=0 the hook writes it itself: all 31 are there.
    check "$trace" out --incomplete --records-min 1920 || return 1
    rm -f -- *.hktrace
    run 137 HOOKCC_BUFFER_RECORDS=64 HOOKCC_WRITER=0 -- crash kill || return 1
    only_trace || return 1
    check "$trace" out --incomplete --records 1984
}

case_api() {
    run 0 HOOKCC_DISABLE=1 -- api || return 1
    grep -qx failures=0 out || { cat err >>log; return 1; }
    local path
    path=$(sed -n 's/^path=//p' out)
    check "$path" out --complete --records 56 --lost 0 --threads 1 --balanced \
        --entries kept=27 --entries ignored=0
}

# The control channel: the program talks to its own socket (control.c); the window file it
# started and stopped holds its 100 pairs; the socket is gone after exit; HOOKCC_CONTROL=0:
# none.
case_control() {
    mkdir -m 700 "$dir/xdg" || return 1
    run 0 HOOKCC_DISABLE=1 XDG_RUNTIME_DIR="$dir/xdg" -- control || { cat err >>log; return 1; }
    grep -qx failures=0 out || { cat err >>log; return 1; }
    local window socket
    window=$(sed -n 's/^window=//p' out)
    socket=$(sed -n 's/^socket=//p' out)
    [ ! -e "$socket" ] || { echo "$socket left after exit" >>log; return 1; }
    check "$window" out --complete --records 200 --lost 0 --balanced --entries work=100 || return 1
    run 0 HOOKCC_DISABLE=1 HOOKCC_CONTROL=0 XDG_RUNTIME_DIR="$dir/xdg" -- control off ||
        { cat err >>log; return 1; }
    grep -qx failures=0 out || { cat err >>log; return 1; }
}

case_reentry() {
    run 0 HOOKCC_BUFFER_RECORDS=16 -- reentry || return 1
    only_trace || return 1
    grep -qx errno_ok=1 out || { echo "errno changed across a hook" >>log; return 1; }
    # Each of the ~125 flushes calls the interposed pwritev, whose 2 hooks are lost.
    check "$trace" out --complete --records 2002 --lost-min 250 --balanced --entries work=1000
}

# ------------------------------------------------------------------------------------------

debian_arch() { # TRIPLE: the suffix of Debian's libc6-dev-*-cross packages
    case $1 in
    aarch64-*) echo arm64 ;;
    i686-*) echo i386 ;;
    arm-*hf) echo armhf ;;
    *) echo "${1%%-*}" ;;
    esac
}

# Builds trace.o and the test programs for TRIPLE. Returns 0 if they can run, 1 on a failure
# (reported), 2 if this machine cannot link or run them (reported as skipped).
setup_target() { # TRIPLE TAG
    target=$1 tag=$2
    bin="$work/$tag/bin"
    mkdir -p "$bin"
    local tflags=() lflags=()
    runner=()
    real_comm=1
    if [ "$tag" != native ]; then
        tflags=(--target="$target")
        target_link_and_runner "$target"
        lflags=("${target_lflags[@]}")
    fi
    # trace.o exactly as the driver builds it, warnings as errors.
    if ! "$CC" "${tflags[@]+"${tflags[@]}"}" "${runtime_cflags[@]}" \
        -c "$root/runtime/src/trace.c" -o "$bin/trace.o" >"$bin/build.log" 2>&1; then
        result "$tag: build trace.o" 1 "$bin/build.log"
        return 1
    fi
    result "$tag: build trace.o" 0
    if [ "${#runner[@]}" -gt 0 ] && ! command -v "${runner[0]}" >/dev/null; then
        skip "$tag: run" "${runner[0]} not installed (package qemu-user)"
        return 2
    fi
    if ! "$CC" "${tflags[@]+"${tflags[@]}"}" "${lflags[@]+"${lflags[@]}"}" -pthread -x c - \
        -o "$bin/probe" <<<'int main(void) { return 0; }' >/dev/null 2>&1; then
        skip "$tag: run" "cannot link for $target (apt-get install libgcc-12-dev-$(debian_arch "$target")-cross lld-19)"
        return 2
    fi
    local prog
    for prog in basic threads exit_running churn sigprof fork fork_exec exec_chain key_dtor fsize sigcount exit_nested crash api reentry switches control; do
        if ! "$CC" "${tflags[@]+"${tflags[@]}"}" "${lflags[@]+"${lflags[@]}"}" \
            "${test_cflags[@]}" "$here/$prog.c" "$bin/trace.o" -pthread -ldl \
            -o "$bin/$prog" >>"$bin/build.log" 2>&1; then
            result "$tag: build test programs" 1 "$bin/build.log"
            return 1
        fi
    done
    local macros
    macros=$("$CC" "${tflags[@]+"${tflags[@]}"}" -dM -E -x c /dev/null)
    ptr=$(sed -n 's/^#define __SIZEOF_POINTER__ //p' <<<"$macros")
    endian=little
    grep -q '__BYTE_ORDER__ __ORDER_BIG_ENDIAN__' <<<"$macros" && endian=big
    return 0
}

run_cases() {
    local c
    for c in "$@"; do
        # shellcheck disable=SC2086
        set -- $c
        dir="$work/$tag/${1#case_}${2:+_$2}"
        mkdir -p "$dir"
        ( "$@" )
        local status=$?
        result "$tag: ${1#case_}${2:+ $2}" "$status" "$dir/log"
    done
}

all_cases=(case_basic case_buffer_of_one case_threads case_ring case_profile case_min_duration case_triggers case_exit_running case_churn
    case_sigprof case_signal_records_accounted case_fork
    case_fork_output case_exit_nested case_fork_exit case_key_destructor case_max_bytes case_file_size_limit case_unwritable "case_crash segv 139"
    "case_crash abort 134" "case_crash overflow 139" "case_crash_chained segv"
    "case_crash_chained abort" case_killed case_api case_reentry case_switches case_control)
cross_cases=("${all_cases[@]}")
# Native only: under qemu-user, exec of the target's binary needs binfmt_misc.
all_cases+=(case_fork_exec "case_fork_exec out.hktrace")
all_cases+=(case_output_existing case_output_not_ours case_fork_chdir case_exec_chain)
all_cases+=(case_file_mode_and_symlink)
if [ "$(id -u)" -eq 0 ]; then
    all_cases+=("case_disk_reserve 0" "case_disk_reserve 1" case_disk_full_at_start)
else
    skip "native: disk_reserve" "mounting a tmpfs needs root"
fi

# The public header from C and C++.
hdr_log="$work/header.log"
printf '#include <hookcc/trace.h>\nint main(void){hookcc_trace_enable();return !hookcc_trace_path();}\n' |
    "$CC" -x c -std=c99 -pedantic -Wall -Wextra -Werror -I "$root/runtime/include" \
        -fsyntax-only - >"$hdr_log" 2>&1 &&
    printf '#include <hookcc/trace.h>\nint main(){hookcc_trace_flush();return hookcc_trace_enabled();}\n' |
    "$CC" -x c++ -std=c++11 -Wall -Wextra -Werror -I "$root/runtime/include" \
            -fsyntax-only - >>"$hdr_log" 2>&1
result "public header compiles as C99 and C++11" $? "$hdr_log"

if setup_target "$(uname -m)-linux-gnu" native; then
    run_cases "${all_cases[@]}"
fi

for arch in ${HOOKCC_TEST_TARGETS-aarch64 i686 arm riscv64 s390x}; do
    case $arch in
    arm) triple=arm-linux-gnueabihf ;;
    *) triple=$arch-linux-gnu ;;
    esac
    [ "$(uname -m)" = "$arch" ] && continue
    if [ ! -f "/usr/$triple/include/stdio.h" ]; then
        # No libc for it: at least the compiler must accept the layout header for the target.
        slog="$work/syntax-$arch.log"
        if "$CC" --target="$triple" -ffreestanding -fsyntax-only -std=gnu11 -Wall -Wextra -Werror \
            -I "$root/runtime/src" -x c - <<<'#include "trace_format.h"' >"$slog" 2>&1; then
            skip "$arch" "no /usr/$triple libc headers, only trace_format.h checked (apt-get install libc6-dev-$(debian_arch "$triple")-cross)"
        else
            result "$arch: trace_format.h" 1 "$slog"
        fi
        continue
    fi
    setup_target "$triple" "$arch" && run_cases "${cross_cases[@]}"
done

if [ "${#failures[@]}" -gt 0 ]; then
    echo "failed:"
    printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
