/* hookcc hosted "trace" runtime: records every __hookcc_enter/__hookcc_exit into a trace file
 * (docs/trace-format.md, layout in trace_format.h) that hookprof decodes.
 *
 * Compiled on its own as one translation unit by the hookcc driver, for whatever target the
 * user builds for, and linked into executables:
 *   clang-19 -std=gnu11 -O2 -fPIC -fno-stack-protector -fvisibility=hidden \
 *            -I runtime/include -I runtime/src [--target=...] -c runtime/src/trace.c
 *
 * Layout: this file holds what every part shares (this description, the includes, the HKRT_*
 * macros and limits, the hooks' declarations); the code is in the runtime/src/trace/ parts, one
 * per concern, #included at the end of this file in an order where each part uses what the
 * ones before it define or declare (runtime/src/trace/README.md lists them; each part's header
 * says what it holds and relies on). They stay one translation unit,
 * not one object per part, because
 * - the hot path must keep its inlining (hkrt_record into __hookcc_enter/__hookcc_exit) and
 *   its direct reach to t_self and g_hot, and the slow path its calls to static functions;
 * - everything but the hooks and the public API stays static, so nothing else is exported;
 * - hookcc (wrapper/src/runtime.rs), runtime/test/run.sh and scripts/install.sh compile or
 *   ship runtime/src/<component>.c as one file per target.
 * The parts are named .h, and kept in a folder of their own, so that nothing that compiles
 * runtime/src/<component>.c files takes one for a runtime, and they are not mistaken for the
 * headers trace.c shares with trace_baremetal.c (trace_format.h, trace_pack.h, trace_cct.h).
 * A part is included once, only here: it has no include guard and no includes of its own.
 *
 * How it works
 * - Hot path (__hookcc_enter/__hookcc_exit): the thread's `pos` through local-exec TLS, one
 *   test for "full" that is also the enable switch (g_hot), a 16-byte record (timestamp, the
 *   hook's argument: the function's address, + 2 for an exit), pos += 1. No locks, atomics
 *   RMW, malloc, or libc calls (except clock_gettime on targets without a cheap counter, see
 *   clock.h); errno untouched.
 * - "Full" needs no per-thread limit: a buffer is aligned to its own size (a power of two), so
 *   pos & (size - 1) == 0 exactly at its start, at its end, and for NULL. The mask is one
 *   global (g_hot.full_mask), 0 while recording is off so that every hook then tests "full".
 *   The thread's own state is pos alone, so a signal handler that runs between two
 *   instructions of a hook can never make it use a pos and a limit from different moments
 *   (the interrupted hook's pos is stale, but in bounds).
 * - Everything else is in the slow path (hkrt_record_slow), reached when that test says so:
 *     first hook of a thread (pos == NULL): allocate its buffer with mmap, register it in the
 *       thread list, give it a pthread key whose destructor writes its last chunks;
 *     buffer full: hand it to the writer thread and go on in the spare buffer ("The
 *       writer"), or, without a writer, pack it (trace_pack.h) and write it;
 *     re-entered from inside the runtime (a hook in a signal handler or in an interposed libc
 *       function the runtime calls): pos was set to NULL on the way in (the real one is kept
 *       in held_pos), so the hook lands here again, sees `busy`, and counts its record as lost;
 *     recording off (full_mask 0: disabled, or finished): returns at once, nothing counted.
 *   The slow path saves and restores errno.
 * - Chunks: each writer reserves its byte range with one atomic add on the file end (a
 *   compare-and-swap loop when HOOKCC_MAX_BYTES is set) and pwrite()s the chunk there, so
 *   chunks of several threads never interleave and no lock is taken for writing. A full
 *   buffer is packed (about 3 bytes a call pair instead of 32) into the thread's packer area,
 *   mapped after its records, and goes out as one pwritev of chunk header, payload and CHECK;
 *   the writer thread does that for the buffers handed to it.
 * - Space: without HOOKCC_MAX_BYTES, records stop before the file system holding the trace
 *   has less than 10 % free (hkrt_space_allows).
 * - Finish (atexit handler registered first thing, fatal signals): write every registered
 *   thread's buffer and its LOST/THREAD chunks, MODULE chunks again, CLOCK, then the header's
 *   ticks_per_second, flags (complete), records and lost. After that hooks do nothing: they
 *   are ignored, not counted (recording is switched off, so they return from the slow path's
 *   first test).
 * - A failed write (disk full, RLIMIT_FSIZE): no more chunks; at finish the file is cut where
 *   the first failed chunk began and finished there (hkrt_salvage), so that the header's
 *   records are what the file holds and lost = made - kept. SIGXFSZ from our own writes is
 *   caught (hkrt_on_xfsz) so that they fail instead of killing the program.
 * - fork: the child gets its own file (opened when it first has a chunk to write, so a child
 *   that only execs leaves none) and fresh counters; the parent's file is untouched.
 * - exec: the old image's file is finished first (the exec functions are interposed,
 *   trace/fork.h; a failed exec goes on in a new file); the new image inherits HOOKCC_OUTPUT; it never truncates a file at open, but takes
 *   the next free name when the path is a trace a live process holds (flock) or its own
 *   earlier image wrote, and leaves a file that is not a trace alone (hkrt_claim_file).
 *
 * Concurrency: a thread's pos is written only by that thread. `busy` (per thread) is
 * taken by atomic exchange in the slow path, and by the finisher before it writes another
 * thread's buffer, so a buffer is never written twice. The thread list, process state and
 * enable/disable are under one lock (g.lock_owner), taken only on slow paths.
 *
 * Known limits (the price of a hot path without atomics):
 * - An instrumented signal handler that interrupts a hook between its load and its store of
 *   pos would have its records overwritten (or written twice): the program's handlers are
 *   wrapped (sigaction and signal interposed, "Signal handlers" below) so that such a
 *   handler's records are counted lost instead; handlers installed by libc internals or raw
 *   syscalls are not wrapped and keep that limit.
 * - At exit, hooks already past the "full" test in other threads may miss the file.
 * - Not finished (the file stays valid but incomplete): libc's internal _exit and exec (the
 *   program's _exit, exec functions, daemon and clone are the runtime's, trace/finish.h and
 *   trace/fork.h), syscall(SYS_exit_group/SYS_execve), SIGKILL, and signals
 *   other than SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT (SIGINT, SIGTERM: default action);
 *   also fatal signals whose handler the program replaces after start. A program that uses
 *   SIGSEGV for its own ends (a GC's guard pages) gets its file finished at the first one.
 * - Each thread gets a 64 KiB alternate signal stack if it has none (for the fatal-signal
 *   handler on stack overflow): a program's own SA_ONSTACK handlers then run on it too.
 * - Not recorded: hooks in atexit handlers and C++ static destructors registered before
 *   ours (shared libraries' constructors run before the executable's), in .fini_array
 *   destructors; hooks in thread-exit work after our pthread key's destructor are counted lost.
 */

#define _GNU_SOURCE 1
#define _FILE_OFFSET_BITS 64 /* 64-bit pwrite offsets on 32-bit targets */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <link.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/file.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "hookcc/trace.h"

/* Context switches ("Context switches" below) need Linux perf events. */
#if defined(__linux__) && __has_include(<linux/perf_event.h>) && defined(SYS_perf_event_open)
#include <linux/perf_event.h>
#define HKRT_HAVE_SWITCHES 1
#else
#define HKRT_HAVE_SWITCHES 0
#endif

#include "clock.h"
#include "trace_format.h"
#include "trace_pack.h"
#include "trace_cct.h"
#include "message.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* Every function of the runtime: never instrumented (a hook must not call itself). */
#define HKRT_FN __attribute__((no_instrument_function))
/* The hooks and the public API: the only symbols the runtime exports. */
#define HKRT_EXPORT __attribute__((visibility("default"), no_instrument_function))
/* Slow paths: out of line and out of the hot code's cache lines. */
#define HKRT_COLD __attribute__((noinline, cold, no_instrument_function))
#define HKRT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define HKRT_LIKELY(x) __builtin_expect(!!(x), 1)
/* Slots of a thread's cache of throttled functions' counts (state.h, counts): 512 of 16 bytes,
 * 8 KiB of each thread's TLS. With 64, SQLite -O0's throttled functions took each other's
 * slots so often that the slow path (an atomic add) cost three times the counts' fast path. */
#define HKRT_COUNT_SLOTS 512u
/* Slots of a thread's table of the counts that left its cache (state.h, spill): 64 KiB,
 * mapped when the thread attaches if the throttle may act. */
#define HKRT_SPILL_SLOTS 4096u

/* 64-bit counters touched by atomics. i386 aligns uint64_t to 4 in structs, which would make
 * clang call libatomic (and warn); 8-byte alignment keeps them inline (cmpxchg8b, ldrexd). */
typedef uint64_t hkrt_u64a __attribute__((aligned(8)));

#define HKRT_DEFAULT_BUFFER_RECORDS 65536u
#define HKRT_MAX_BUFFER_RECORDS (1u << 22) /* 64 MiB per thread */
#define HKRT_ALTSTACK_SIZE (64u * 1024u)   /* for the fatal-signal handler on stack overflow */
/* Shortest TSC calibration window (see hkrt_clock_point_after); none where the frequency is
 * architectural. */
#define HKRT_CALIBRATION_MIN_NS (HKRT_CLOCK_NEEDS_CALIBRATION ? 1000000u : 0u)
#define HKRT_THREAD_NAME_MAX 16            /* Linux comm, with the NUL */
/* Names tried when the output path is taken: an exec chain takes one per image (each image
 * finds its earlier images' files, of the same pid), so this is never the limit in practice. */
#define HKRT_MAX_NAME_TRIES 100000
/* Call paths a thread's tree holds under HOOKCC_MODE=profile (64 bytes each, mapped as used). */
#define HKRT_DEFAULT_PROFILE_NODES (1u << 22)
/* HOOKCC_SAMPLE_HZ's default: samples a second of a thread's CPU time (docs/trace-format.md,
 * "SAMPLE"; perf record's default rate: each sample costs the thread some µs of kernel time,
 * docs/recording.md), and its largest value (the kernel's default perf_event_max_sample_rate). */
#define HKRT_DEFAULT_SAMPLE_HZ 4000
#define HKRT_MAX_SAMPLE_HZ 100000
#define HKRT_MAX_TRIGGERS HOOKCC_TRACE_MAX_TRIGGERS /* functions HOOKCC_TRACE_START may name */
_Static_assert(sizeof(unsigned long long) == sizeof(uint64_t), "trigger addresses are 64-bit");

/* The trigger table (<hookcc/trace.h>), exported so that a debugger can write it. Read by
 * whoever writes a thread's records: n_start and n_stop atomically, the entries below them. */
__attribute__((visibility("default"))) struct hookcc_trace_triggers hookcc_trace_triggers;
#define HKRT_OVERHEAD_PAIRS 255            /* hook pairs timed at start (hkrt_measure_overhead) */

/* The hooks' calling convention where the pass calls them with LLVM's preserve_most (x86-64,
 * AArch64: pass/src/instrument.rs, hook_calling_convention): the hook keeps every register but
 * a scratch one, so the instrumented function saves nothing around its calls, and the switch it
 * tests stays in a register across them: a function switched off pays its tests alone. */
#if defined(__x86_64__) || defined(__aarch64__)
#define HKRT_HOOK_CC __attribute__((preserve_most))
#else
#define HKRT_HOOK_CC
#endif
/* `return f(x);` as a jump where the compiler can promise one (void functions of one calling
 * convention): clang's musttail. */
#if defined(__clang__)
#define HKRT_TAIL_CALL __attribute__((musttail)) return
#else
#define HKRT_TAIL_CALL return (void)
#endif

/* The hooks' ABI, called by compiler-inserted code: the entry hook gets the function's address,
 * the exit hook the same address + 2 (the pass aligns every instrumented function to 4 bytes, so
 * bit 1 is free). Both store their argument as it comes: the record's kind is in it. */
HKRT_EXPORT HKRT_HOOK_CC void __hookcc_enter(void *fn);
HKRT_EXPORT HKRT_HOOK_CC void __hookcc_exit(void *fn_exit);
/* Never inlined into hkrt_overhead_loop, which must time real calls of them. */
__attribute__((noinline)) HKRT_HOOK_CC void __hookcc_enter(void *fn);
__attribute__((noinline)) HKRT_HOOK_CC void __hookcc_exit(void *fn_exit);
/* After each return of setjmp in an instrumented function: that function's frame is the top
 * again (a resync pair, trace_format.h). */
HKRT_EXPORT HKRT_HOOK_CC void __hookcc_resync(void *fn);
HKRT_EXPORT HKRT_HOOK_CC void __hookcc_count(void *fn_record);
/* Never inlined into hkrt_count_loop either: inlined, a count cost a third of a real call's. */
__attribute__((noinline)) HKRT_HOOK_CC void __hookcc_count(void *fn_record);
/* A linked file's per-function switches (trace/functions.h), from its constructors. */
HKRT_EXPORT void __hookcc_register_functions(void *start, void *stop);

/* The runtime's code, in parts by concern (runtime/src/trace/README.md), included in this
 * order: each relies on the ones before it. */
#include "trace/functions.h"
#include "trace/state.h"
#include "trace/declarations.h"
#include "trace/helpers.h"
#include "trace/options.h"
#include "trace/chunks.h"
#include "trace/output.h"
#include "trace/switches.h"
#include "trace/writer.h"
#include "trace/modes.h"
#include "trace/buffers.h"
#include "trace/threads.h"
#include "trace/finish.h"
#include "trace/signals.h"
#include "trace/fork.h"
#include "trace/control.h"
#include "trace/start.h"
#include "trace/hooks.h"
#include "trace/api.h"
