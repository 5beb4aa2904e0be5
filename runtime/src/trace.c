/* hookcc hosted "trace" runtime: records every __hookcc_enter/__hookcc_exit into a trace file
 * (docs/trace-format.md, layout in trace_format.h) that hookprof decodes.
 *
 * Compiled on its own as one translation unit by the hookcc driver, for whatever target the
 * user builds for, and linked into executables:
 *   clang-19 -std=gnu11 -O2 -fPIC -fno-stack-protector -fvisibility=hidden \
 *            -I runtime/include -I runtime/src [--target=...] -c runtime/src/trace.c
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
 * - exec: the new image inherits HOOKCC_OUTPUT; it never truncates a file at open, but takes
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
 * - Not finished (the file stays valid but incomplete): _exit, exec, SIGKILL, and signals
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

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/file.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
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
#define HKRT_MAX_TRIGGERS HOOKCC_TRACE_MAX_TRIGGERS /* functions HOOKCC_TRACE_START may name */
_Static_assert(sizeof(unsigned long long) == sizeof(uint64_t), "trigger addresses are 64-bit");

/* The trigger table (<hookcc/trace.h>), exported so that a debugger can write it. Read by
 * whoever writes a thread's records: n_start and n_stop atomically, the entries below them. */
__attribute__((visibility("default"))) struct hookcc_trace_triggers hookcc_trace_triggers;
#define HKRT_OVERHEAD_PAIRS 255            /* hook pairs timed at start (hkrt_measure_overhead) */

/* The hooks' ABI, called by compiler-inserted code: the entry hook gets the function's address,
 * the exit hook the same address + 2 (the pass aligns every instrumented function to 4 bytes, so
 * bit 1 is free). Both store their argument as it comes: the record's kind is in it. */
HKRT_EXPORT void __hookcc_enter(void *fn);
HKRT_EXPORT void __hookcc_exit(void *fn_exit);
/* Never inlined into hkrt_overhead_loop, which must time real calls of them. */
__attribute__((noinline)) void __hookcc_enter(void *fn);
__attribute__((noinline)) void __hookcc_exit(void *fn_exit);
/* After each return of setjmp in an instrumented function: that function's frame is the top
 * again (a resync pair, trace_format.h). */
HKRT_EXPORT void __hookcc_resync(void *fn);

/* ---------------------------------------------------------------------------------------- */
/* State                                                                                    */

enum hkrt_life {
    HKRT_THREAD_NEW = 0, /* no hook seen yet: pos == end == NULL */
    HKRT_THREAD_LIVE,    /* has a buffer and is in the thread list */
    HKRT_THREAD_DEAD,    /* its last chunks are written and its buffer unmapped */
};

struct hkrt_thread {
    /* Hot: the only field the hooks touch. The next free record; at a buffer boundary
     * (g_hot.full_mask) or NULL, the next hook goes to the slow path. */
    struct hkt_record *pos;

    /* Cold: slow path, finisher. */
    struct hkt_record *held_pos; /* the real pos while busy is held (pos is NULL then) */
    struct hkt_record *buf;      /* first record, aligned to the buffer's size in bytes; the
                                  * EVENTS chunk header sits just before */
    struct hkt_record *buf_end;  /* one past the last record */
    void *map;                  /* the buffer mapping (chunk header + records, then packer) */
    size_t map_size;
    struct hkt_packer *packer;  /* in the first mapping, after its records (trace_pack.h) */
    uint8_t *packed;            /* a PACKED payload is made here: pack_cap bytes */
    size_t pack_cap;
    /* The writer thread ("The writer" below): a full buffer is handed to it and the thread
     * goes on in its spare. While `handed` is 1 the writer owns handed_buf and the packer. */
    struct hkt_record *spare;        /* a second buffer, aligned as buf; NULL until needed */
    void *spare_map;
    size_t spare_map_size;
    struct hkt_record *handed_buf;   /* the buffer the writer writes */
    uint64_t handed_n;               /* its records */
    struct hkt_pause handed_pause;   /* the thread's time handing it over (a PAUSE chunk) */
    int handed;                      /* atomic (a futex word): the writer has work of ours */
    struct hkrt_thread *queue_next;  /* in g.queue */
    void *altstack; /* our sigaltstack, or NULL if the thread had one already */
    struct hkrt_thread *prev, *next; /* thread list, under the lock */
    hkrt_u64a lost;                  /* atomic: records this thread could not keep */
    uint64_t tid;
    uint64_t sequence; /* 1 = first thread seen */
    int busy;          /* atomic: in the slow path, flushing, or taken by the finisher */
    int life;          /* enum hkrt_life */
    int final_written; /* its LOST/THREAD chunks are in the file */
    int exit_rounds;   /* rounds of key destructors seen at thread exit */
    /* HOOKCC_MODE=ring: a full buffer starts over instead of being written ("The ring"). */
    uint64_t ring_laps;      /* times the buffer started over since the last snapshot */
    struct hkt_record *ring_mark; /* where the last snapshot ended (NULL: none yet) */
    /* HOOKCC_MODE=profile: the thread's calling-context tree ("The profile"), and how far the
     * current buffer is folded into it (NULL: not at all). */
    struct hkt_cct cct;
    int tree_busy; /* atomic: the tree is being folded into or written (never by a hook) */
    struct hkt_record *fold_mark;
    uint64_t handed_skip; /* records at the start of handed_buf folded already */
    /* HOOKCC_MIN_DURATION: which records the trace keeps (trace_cct.h, "The duration
     * threshold"); the tree above gets every record. */
    struct hkt_keep keep;
    /* HOOKCC_TRACE_START / HOOKCC_TRACE_STOP: which records are kept at all. */
    struct hkt_window window;
    /* A signal handler that interrupted one of this thread's hooks is running (see "Signal
     * handlers"): pos is NULL meanwhile, and the hook's pos is kept here. */
    int sig_redirect;
    struct hkt_record *sig_saved_pos;
    /* Context switches ("Context switches"): the thread's perf ring (NULL: none), its fd, a
     * switch-out read whose switch-in is not read yet (0: none), and the kernel's drops. */
    void *sw_ring;
    size_t sw_ring_size;
    int sw_fd;
    uint64_t sw_out_ns;
    uint64_t sw_lost;
    struct hkrt_thread *sw_next; /* in g.sw_threads, under g.sw_lock */
};

/* local-exec: the hook reaches its state at a link-time constant %fs offset (x86-64), with no
 * __tls_get_addr call and no GOT load (initial-exec cost one more instruction per hook:
 * docs/performance.md). Valid because hookcc links trace.o into executables only, never into
 * shared libraries. No destructor (the pthread key does the thread-exit work). */
static __thread struct hkrt_thread t_self __attribute__((tls_model("local-exec")));

enum hkrt_state {
    HKRT_UNINIT = 0,
    HKRT_RUNNING,  /* file open (or failed to open: then records are counted lost) */
    HKRT_FINISHED, /* header complete; hooks do nothing */
};

/* Read by every hook, written rarely: alone on its cache line, away from the counters that
 * every flush writes. The hooks read only full_mask: it is the buffer size in bytes - 1 while
 * recording, and 0 before the start, while disabled and once finished, so that every hook then
 * finds its pos "at a boundary" and goes to the slow path, which sees `enabled` and does
 * nothing. That makes the enable switch free in the hot path. `enabled` starts at 1 so that
 * the first hook anywhere starts the runtime (a hook may run before our constructor, e.g. in a
 * shared library's constructor), which then clears it if HOOKCC_DISABLE says so. */
static struct __attribute__((aligned(64))) { /* aligned type: sizeof is a whole line */
    uintptr_t full_mask; /* see above; written only through hkrt_set_enabled */
    int enabled;         /* exactly 0 or 1 */
} g_hot = {0, 1};
_Static_assert(sizeof g_hot == 64, "g_hot has its cache line to itself");

static struct {
    /* Written by every flush. */
    hkrt_u64a file_end;          /* atomic: next free byte of the file */
    hkrt_u64a records;           /* atomic: records written in EVENTS chunks */
    hkrt_u64a lost_reported;     /* atomic: sum of the threads' final lost counts */
    hkrt_u64a lost_unattributed; /* atomic: lost records that belong to no live thread */
    int write_failed;            /* atomic: a write failed; no more chunks */
    hkrt_u64a failed_off;        /* atomic: lowest chunk offset whose write failed */
    int writes_in_flight;        /* atomic: pwrites of ours under way (hkrt_on_xfsz) */
    int write_warned;            /* atomic: the write failure was reported */
    int finishing;               /* atomic: hkrt_finish has begun */
    int finisher_tid;            /* atomic: the thread running hkrt_finish */

    /* Under the lock. */
    int lock_owner; /* atomic: TID of the holder, 0 if free */
    int state;      /* enum hkrt_state; read atomically outside the lock */
    int user_enabled;
    int once_done; /* atexit, pthread_atfork, signal handlers: once per process image */
    int overhead_taken;            /* atomic: a thread has started measuring the hooks */
    struct hkt_overhead overhead;  /* what they cost; pairs 0 if not measured */
    int open_deferred; /* atomic: a fork child's file, opened when it first has something */
    int key_ok;
    int is_fork_child;
    int image_pid; /* atomic: getpid() of this image's process (start, fork child): a vfork
                    * child, which shares our memory, has another (see _exit) */
    pthread_key_t key;
    struct hkrt_thread *threads;
    uint64_t thread_seq;

    /* Set at start (and in a fork child), then read-only. */
    int fd;
    int fd_regular;     /* the file is a regular file (the free-space reserve applies) */
    uint64_t max_bytes; /* UINT64_MAX: no limit */
    int raw_records;    /* HOOKCC_PACK=0: 16-byte EVENTS records instead of PACKED chunks */
    int ring;           /* HOOKCC_MODE=ring: nothing is written until a snapshot */
    int profile;        /* HOOKCC_MODE=profile: records are folded into call-path trees */
    uint32_t profile_nodes; /* HOOKCC_PROFILE_NODES: call paths a thread's tree holds */
    uint64_t min_duration_ns; /* HOOKCC_MIN_DURATION (trace mode): shorter calls are folded */
    hkrt_u64a min_ticks;      /* atomic: min_duration_ns in ticks, once the clock is known */
    int writer_wanted;  /* HOOKCC_WRITER is not 0: pack and write full buffers in a thread */
    int writer_running; /* atomic: the writer thread runs (this process image, not a fork) */
    int writer_tid;     /* atomic */
    int writer_wake;    /* atomic (a futex word): bumped for every buffer handed over */
    struct hkrt_thread *queue; /* atomic: threads that handed a buffer over (a stack) */
    int space_stopped;  /* atomic: the free-space reserve was reached; no more records */
    /* Context switches: HOOKCC_SWITCHES is not 0 (trace mode only); the threads with a perf
     * ring, under sw_lock (the TID of its holder, 0 if free: the writer takes it, never the
     * main lock); the refusal was reported. */
    int sw_wanted;
    int sw_lock;
    struct hkrt_thread *sw_threads;
    int sw_warned;
    uint32_t buffer_records;
    struct hkt_header header;
    struct hkrt_clock_point clock_start;
    char output_env[PATH_MAX]; /* HOOKCC_OUTPUT, "" if unset */
    char path[PATH_MAX];
    /* The working directory when this image started: a relative trace path is opened there,
     * also by a fork child that has changed directory since (a daemon in /). "" if unknown. */
    char start_dir[PATH_MAX];
    char opened_path[PATH_MAX]; /* the trace as it was opened (start_dir/path if relative) */
} g = {.fd = -1, .max_bytes = UINT64_MAX, .failed_off = UINT64_MAX};

/* For a reader of a core file (trace_format.h, struct hkt_state). */
__attribute__((visibility("default"))) struct hkt_state hookcc_trace_state;

static HKRT_FN void hkrt_describe_state(void)
{
    struct hkt_state *s = &hookcc_trace_state;
    s->version = HKT_STATE_VERSION;
    s->ring = (uint32_t)g.ring;
    s->threads = (uint64_t)(uintptr_t)&g.threads;
    s->start_ticks = g.clock_start.ticks;
    s->ticks_per_second = hkrt_ticks_per_second_fixed();
    s->pid = (uint64_t)getpid();
    s->start_realtime_ns = g.header.start_realtime_ns;
    s->buffer_records = g.buffer_records;
    s->off_next = offsetof(struct hkrt_thread, next);
    s->off_buf = offsetof(struct hkrt_thread, buf);
    s->off_buf_end = offsetof(struct hkrt_thread, buf_end);
    s->off_pos = offsetof(struct hkrt_thread, pos);
    s->off_held_pos = offsetof(struct hkrt_thread, held_pos);
    s->off_busy = offsetof(struct hkrt_thread, busy);
    s->off_tid = offsetof(struct hkrt_thread, tid);
    s->off_sequence = offsetof(struct hkrt_thread, sequence);
    s->off_ring_laps = offsetof(struct hkrt_thread, ring_laps);
    s->off_ring_mark = offsetof(struct hkrt_thread, ring_mark);
    s->off_life = offsetof(struct hkrt_thread, life);
    s->off_final_written = offsetof(struct hkrt_thread, final_written);
    s->live = HKRT_THREAD_LIVE;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    memcpy(s->magic, HKT_STATE_MAGIC, sizeof s->magic);
}

static const int hkrt_fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define HKRT_NFATAL ((int)(sizeof hkrt_fatal_signals / sizeof hkrt_fatal_signals[0]))
static struct sigaction g_old_actions[HKRT_NFATAL];
static int g_handler_installed[HKRT_NFATAL];

static HKRT_FN void hkrt_finish(int from_signal);

/* Bytes of one thread buffer's records: a power of two, the buffer aligned to it. */
static HKRT_FN size_t hkrt_buffer_bytes(void)
{
    return (size_t)g.buffer_records * sizeof(struct hkt_record);
}

/* Switches recording on or off for every thread: `enabled` for the slow path, and full_mask,
 * which sends every hook there while off (see g_hot). */
static HKRT_FN void hkrt_set_enabled(int on)
{
    __atomic_store_n(&g_hot.enabled, on ? 1 : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_hot.full_mask, on ? (uintptr_t)hkrt_buffer_bytes() - 1 : 0,
                     __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------------------------- */
/* Small helpers (no stdio: usable after fork and in signal handlers)                        */

static HKRT_FN uint64_t hkrt_gettid(void)
{
    return (uint64_t)syscall(SYS_gettid);
}

static HKRT_FN size_t hkrt_u64_to_dec(uint64_t v, char *out)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}

/* hkrt_append, hkrt_warn, hkrt_warn_hint, hkrt_getenv: message.h */


/* Parses a decimal u64; 0 on garbage or overflow. */
static HKRT_FN int hkrt_parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (*s == '\0')
        return 0;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

/* The decimal number s starts with, in *v; returns what follows it, or NULL if there is none
 * or it overflows. */
static HKRT_FN const char *hkrt_parse_leading_u64(const char *s, uint64_t *v)
{
    char digits[32];
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9' && n < sizeof digits - 1) {
        digits[n] = s[n];
        n++;
    }
    digits[n] = '\0';
    return hkrt_parse_u64(digits, v) ? s + n : NULL;
}

/* Parses a duration: a decimal number followed by ns, us, ms or s ("5us"); 0 on garbage. */
static HKRT_FN int hkrt_parse_duration(const char *s, uint64_t *ns)
{
    uint64_t v, unit;
    const char *u = hkrt_parse_leading_u64(s, &v);
    if (u == NULL)
        return 0;
    if (strcmp(u, "ns") == 0)
        unit = 1;
    else if (strcmp(u, "us") == 0)
        unit = 1000;
    else if (strcmp(u, "ms") == 0)
        unit = 1000000;
    else if (strcmp(u, "s") == 0)
        unit = 1000000000;
    else
        return 0;
    if (v > UINT64_MAX / unit)
        return 0;
    *ns = v * unit;
    return 1;
}

/* Parses a size: a decimal number of bytes, optionally followed by K, M, G or T (powers of
 * 1024, either case, then an optional "B" or "iB": 2G, 512MiB, 64kb); 0 on garbage or
 * overflow. */
static HKRT_FN int hkrt_parse_size(const char *s, uint64_t *out)
{
    uint64_t v, unit = 1;
    const char *suffix = hkrt_parse_leading_u64(s, &v);
    if (suffix == NULL)
        return 0;
    static const char units[] = "kmgt";
    for (int i = 0; units[i] != '\0'; i++)
        if (suffix[0] == units[i] || suffix[0] == units[i] - ('a' - 'A')) {
            unit = UINT64_C(1) << (10 * (i + 1));
            suffix++;
            if (suffix[0] == 'i')
                suffix++;
            break;
        }
    if (suffix[0] == 'b' || suffix[0] == 'B')
        suffix++;
    if (suffix[0] != '\0' || v > UINT64_MAX / unit)
        return 0;
    *out = v * unit;
    return 1;
}

static HKRT_FN void hkrt_count_lost(struct hkrt_thread *t, uint64_t n)
{
    if (n == 0)
        return;
    /* Once a thread's LOST chunk is out, more losses go to the process-wide count, which the
     * header's `lost` includes. */
    if (t != NULL && t->life == HKRT_THREAD_LIVE && !t->final_written)
        __atomic_fetch_add(&t->lost, n, __ATOMIC_RELAXED);
    else
        __atomic_fetch_add(&g.lost_unattributed, n, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------------------------- */
/* The lock (slow paths only). A spinlock that knows its owner, so that the fatal-signal
 * handler can tell "I interrupted myself holding it" from "another thread holds it".         */

static HKRT_FN int hkrt_my_tid_for_lock(void)
{
    return t_self.tid != 0 ? (int)t_self.tid : (int)hkrt_gettid();
}

static HKRT_FN void hkrt_lock(void)
{
    int me = hkrt_my_tid_for_lock();
    for (;;) {
        int expected = 0;
        if (__atomic_compare_exchange_n(&g.lock_owner, &expected, me, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return;
        sched_yield();
    }
}

static HKRT_FN void hkrt_unlock(void)
{
    __atomic_store_n(&g.lock_owner, 0, __ATOMIC_RELEASE);
}

/* In a signal handler: returns 1 with the lock taken, or 0 if it could not be taken (this
 * thread already holds it, or the holder did not let go within ~1 s); the caller then goes on
 * without it, since dying with the trace unfinished is worse. */
static HKRT_FN int hkrt_lock_from_signal(void)
{
    int me = hkrt_my_tid_for_lock();
    for (int i = 0; i < 1000; i++) {
        int expected = 0;
        if (__atomic_compare_exchange_n(&g.lock_owner, &expected, me, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return 1;
        if (expected == me)
            return 0;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Writing chunks                                                                           */

static HKRT_FN int hkrt_file_ok(void)
{
    return g.fd >= 0 && !__atomic_load_n(&g.write_failed, __ATOMIC_RELAXED);
}

static HKRT_FN void hkrt_open_file(void);

/* hkrt_file_ok, after opening a fork child's file if that is still to do. A child made by
 * fork() opens its file when it first has a chunk to write (or its path is asked for), not at
 * the fork: a child that only calls exec (or _exit) then leaves no empty file behind. Takes
 * the lock unless this thread holds it or is the finisher (which may run without it). */
static HKRT_FN int hkrt_file_ready(void)
{
    if (HKRT_UNLIKELY(__atomic_load_n(&g.open_deferred, __ATOMIC_ACQUIRE))) {
        int me = hkrt_my_tid_for_lock();
        int lock = __atomic_load_n(&g.lock_owner, __ATOMIC_RELAXED) != me &&
                   __atomic_load_n(&g.finisher_tid, __ATOMIC_ACQUIRE) != me;
        if (lock)
            hkrt_lock();
        if (__atomic_load_n(&g.open_deferred, __ATOMIC_ACQUIRE)) {
            hkrt_open_file();
            __atomic_store_n(&g.open_deferred, 0, __ATOMIC_RELEASE);
        }
        if (lock)
            hkrt_unlock();
    }
    return hkrt_file_ok();
}

/* A write failed (disk full, file size limit, I/O error) for the chunk at `chunk_off` (0: the
 * header): no more chunks are started; hkrt_finish cuts the file where the first failed chunk
 * began and finishes what is before it (hkrt_salvage). */
static HKRT_FN void hkrt_write_failed(int err, uint64_t chunk_off)
{
    if (chunk_off >= HKT_HEADER_SIZE) {
        uint64_t cur = __atomic_load_n(&g.failed_off, __ATOMIC_RELAXED);
        while (chunk_off < cur &&
               !__atomic_compare_exchange_n(&g.failed_off, &cur, chunk_off, 1, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED))
            ;
    }
    __atomic_store_n(&g.write_failed, 1, __ATOMIC_RELEASE);
    if (__atomic_exchange_n(&g.write_warned, 1, __ATOMIC_RELAXED) == 0)
        hkrt_warn_hint("cannot write trace file", g.path, err,
                       "; later records are counted as lost");
}

/* Writes the parts in order at `off`, as one pwritev where it can. Returns 0 after a failure
 * (then counted: hkrt_write_failed). */
static HKRT_FN int hkrt_pwritev_all(struct iovec *iov, int parts, uint64_t off)
{
    uint64_t chunk_off = off;
    int ok = 1;
    __atomic_fetch_add(&g.writes_in_flight, 1, __ATOMIC_ACQ_REL);
    while (parts > 0) {
        ssize_t n = pwritev(g.fd, iov, parts, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            hkrt_write_failed(n < 0 ? errno : ENOSPC, chunk_off);
            ok = 0;
            break;
        }
        off += (uint64_t)n;
        while (parts > 0 && (size_t)n >= iov->iov_len) { /* skip the parts written whole */
            n -= (ssize_t)iov->iov_len;
            iov++;
            parts--;
        }
        if (parts > 0) {
            iov->iov_base = (char *)iov->iov_base + n;
            iov->iov_len -= (size_t)n;
        }
    }
    __atomic_fetch_sub(&g.writes_in_flight, 1, __ATOMIC_ACQ_REL);
    return ok;
}

static HKRT_FN int hkrt_pwrite_all(const void *data, size_t len, uint64_t off)
{
    struct iovec iov = {(void *)(uintptr_t)data, len};
    return hkrt_pwritev_all(&iov, 1, off);
}

/* The CHECK chunk that follows a chunk (docs/trace-format.md, "Checksums"). */
struct hkrt_check_chunk {
    struct hkt_chunk_header header;
    struct hkt_check check;
};

static HKRT_FN void hkrt_check_chunk(struct hkrt_check_chunk *c, uint64_t thread, uint64_t sum)
{
    c->header.type = HKT_CHUNK_CHECK;
    c->header.length = sizeof c->check;
    c->header.thread = thread;
    c->check.sum = sum;
}

/* Writes one small process or thread chunk: the fixed part of its payload, then an optional
 * NUL-terminated string padded to 8 bytes. Not limited by HOOKCC_MAX_BYTES. */
static HKRT_FN void hkrt_write_chunk(uint32_t type, uint64_t thread, const void *fixed,
                                     size_t fixed_len, const char *str)
{
    if (!hkrt_file_ok())
        return;
    union {
        struct hkt_chunk_header header;
        unsigned char bytes[sizeof(struct hkt_chunk_header) + 32 + PATH_MAX + HKT_CHUNK_ALIGN +
                            sizeof(struct hkrt_check_chunk)];
    } chunk;
    size_t len = fixed_len;
    if (fixed_len != 0)
        memcpy(chunk.bytes + sizeof chunk.header, fixed, fixed_len);
    if (str != NULL) {
        size_t slen = strnlen(str, PATH_MAX - 1);
        memcpy(chunk.bytes + sizeof chunk.header + len, str, slen);
        len += slen;
        do /* at least one NUL, then up to the next multiple of 8 */
            chunk.bytes[sizeof chunk.header + len++] = 0;
        while (len % HKT_CHUNK_ALIGN != 0);
    }
    chunk.header.type = type;
    chunk.header.length = (uint32_t)len;
    chunk.header.thread = thread;
    uint64_t total = sizeof chunk.header + len;
    struct hkrt_check_chunk check;
    hkrt_check_chunk(&check, thread, hkt_checksum(chunk.bytes, (size_t)total));
    memcpy(chunk.bytes + total, &check, sizeof check);
    total += sizeof check;
    uint64_t off = __atomic_fetch_add(&g.file_end, total, __ATOMIC_RELAXED);
    hkrt_pwrite_all(chunk.bytes, (size_t)total, off);
}

/* The free-space reserve (docs/trace-format.md, "Environment"): without HOOKCC_MAX_BYTES, a
 * chunk of `bytes` more is written to a regular file only while its file system keeps a tenth
 * of its size (and HKRT_SPACE_SLACK for the chunks that finish the file) free after it. The
 * first time it would not, records stop for good (a trace with a gap would mislead more than
 * one that ends early), with one warning; the later ones are counted as lost. */
#define HKRT_SPACE_SLACK (UINT64_C(1) << 20)
static HKRT_FN int hkrt_space_allows(uint64_t bytes)
{
    if (g.max_bytes != UINT64_MAX || !g.fd_regular)
        return 1;
    if (__atomic_load_n(&g.space_stopped, __ATOMIC_RELAXED))
        return 0;
    struct statvfs fs;
    if (fstatvfs(g.fd, &fs) != 0 || fs.f_blocks == 0)
        return 1;
    uint64_t unit = fs.f_frsize != 0 ? (uint64_t)fs.f_frsize : (uint64_t)fs.f_bsize;
    uint64_t avail = (uint64_t)fs.f_bavail * unit;
    uint64_t reserve = (uint64_t)fs.f_blocks * unit / 10 + HKRT_SPACE_SLACK;
    if (avail >= reserve && avail - reserve >= bytes)
        return 1;
    if (__atomic_exchange_n(&g.space_stopped, 1, __ATOMIC_RELAXED) == 0)
        hkrt_warn_hint("trace stopped: the file system would have less than 10% free:", g.path, 0,
                       "; later records are counted as lost (HOOKCC_MAX_BYTES=SIZE, e.g. 2G, "
                       "sets the limit instead)");
    return 0;
}

/* Reserves `total` bytes of the file for one chunk; returns its offset, or UINT64_MAX if it
 * does not fit under HOOKCC_MAX_BYTES (then nothing is reserved). With a limit, a plain
 * fetch_add could move the end past it and leave a hole that later (unlimited) metadata chunks
 * would sit behind, so the reservation is a CAS. */
static HKRT_FN uint64_t hkrt_reserve(uint64_t total)
{
    if (g.max_bytes == UINT64_MAX)
        return __atomic_fetch_add(&g.file_end, total, __ATOMIC_RELAXED);
    uint64_t off = __atomic_load_n(&g.file_end, __ATOMIC_RELAXED);
    do {
        if (off > g.max_bytes || g.max_bytes - off < total)
            return UINT64_MAX;
    } while (!__atomic_compare_exchange_n(&g.file_end, &off, off + total, 1, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    return off;
}

/* The bytes of HOOKCC_MAX_BYTES still free (UINT64_MAX without a limit). */
static HKRT_FN uint64_t hkrt_room(void)
{
    if (g.max_bytes == UINT64_MAX)
        return UINT64_MAX;
    uint64_t off = __atomic_load_n(&g.file_end, __ATOMIC_RELAXED);
    return g.max_bytes > off ? g.max_bytes - off : 0;
}

/* Writes t's records [buf, upto) as one EVENTS chunk of 16-byte records (HOOKCC_PACK=0), as
 * many as fit under HOOKCC_MAX_BYTES, with its CHECK chunk. The chunk header goes in the 16
 * bytes the mapping keeps in front of buf. Returns the records written; counts the rest lost. */
static HKRT_FN uint64_t hkrt_write_raw_events(struct hkrt_thread *t, uint64_t n)
{
    const uint64_t record = sizeof(struct hkt_record);
    const uint64_t fixed = sizeof(struct hkt_chunk_header) + sizeof(struct hkrt_check_chunk);
    uint64_t room = hkrt_room(), keep = n, off = UINT64_MAX;
    while (keep > 0) {
        if (room < fixed + record)
            break;
        if ((room - fixed) / record < keep)
            keep = (room - fixed) / record;
        if (!hkrt_space_allows(fixed + keep * record))
            break;
        off = hkrt_reserve(fixed + keep * record);
        if (off != UINT64_MAX)
            break;
        room = hkrt_room();
    }
    if (off == UINT64_MAX) {
        hkrt_count_lost(t, n);
        return 0;
    }
    struct hkt_chunk_header *header = (struct hkt_chunk_header *)(void *)t->buf - 1;
    header->type = HKT_CHUNK_EVENTS;
    header->length = (uint32_t)(keep * record);
    header->thread = t->tid;
    struct hkrt_check_chunk trailer;
    hkrt_check_chunk(&trailer, t->tid, hkt_checksum(header, sizeof *header + keep * record));
    struct iovec iov[2] = {{header, (size_t)(sizeof *header + keep * record)},
                           {&trailer, sizeof trailer}};
    if (!hkrt_pwritev_all(iov, 2, off)) {
        hkrt_count_lost(t, n);
        return 0;
    }
    __atomic_fetch_add(&g.records, keep, __ATOMIC_RELAXED);
    hkrt_count_lost(t, n - keep);
    return keep;
}

/* Writes t's records [buf, upto) as PACKED chunks, each with its CHECK chunk, and counts them
 * (written or lost). One chunk holds what fits in the thread's pack_cap bytes (all of a full
 * buffer, on the benchmark's workloads); under HOOKCC_MAX_BYTES a last chunk holds what fits
 * below the limit. The CHECK chunk is written from here, not from the buffer past upto, where
 * a late hook of another thread (at exit) may still store a record. Returns the records
 * written. */
static HKRT_FN uint64_t hkrt_write_packed(struct hkrt_thread *t, const struct hkt_record *r,
                                         uint64_t n);

static HKRT_FN int hkrt_wait_handed(struct hkrt_thread *t);

static HKRT_FN uint64_t hkrt_ring_window(struct hkrt_thread *t, struct hkt_record *upto);

static HKRT_FN uint64_t hkrt_fold_upto(struct hkrt_thread *t, struct hkt_record *upto);
static HKRT_FN uint64_t hkrt_fold(struct hkrt_thread *t, const struct hkt_record *r, uint64_t n);
static HKRT_FN void hkrt_profile_pause(struct hkrt_thread *t, const struct hkt_pause *pause);
static HKRT_FN void hkrt_cct_free(struct hkrt_thread *t);
static HKRT_FN uint64_t hkrt_window_cut(struct hkrt_thread *t, const struct hkt_record *r,
                                        uint64_t n);
static HKRT_FN uint64_t hkrt_fold_and_keep(struct hkrt_thread *t, struct hkt_record *r,
                                           uint64_t n);

static HKRT_FN uint64_t hkrt_write_events(struct hkrt_thread *t, struct hkt_record *upto)
{
    if (g.ring)
        return hkrt_ring_window(t, upto);
    if (g.profile)
        return hkrt_fold_upto(t, upto);
    uint64_t n = (uint64_t)(upto - t->buf);
    if (n == 0)
        return 0;
    /* The buffer handed to the writer before this one goes first: a thread's chunks are in
     * the file in the order of its records. */
    if (!hkrt_wait_handed(t) || !hkrt_file_ready()) {
        hkrt_count_lost(t, n);
        return 0;
    }
    if (g.raw_records)
        return hkrt_write_raw_events(t, n);
    return hkrt_write_packed(t, t->buf, n);
}

/* The packing part of hkrt_write_events, for records anywhere (the writer thread writes a
 * buffer the thread has handed over). The file must be ready (hkrt_file_ready). */
static HKRT_FN uint64_t hkrt_write_packed(struct hkrt_thread *t, const struct hkt_record *r,
                                         uint64_t n)
{
    const uint64_t fixed = sizeof(struct hkt_chunk_header) + sizeof(struct hkrt_check_chunk);
    uint64_t written = 0;
    if (g.profile)
        return hkrt_fold(t, r, n);
    n = hkrt_window_cut(t, r, n);
    if (g.min_duration_ns != 0 && n != 0)
        n = hkrt_fold_and_keep(t, (struct hkt_record *)(uintptr_t)r, n);
    if (!hkrt_file_ok()) {
        hkrt_count_lost(t, n);
        return 0;
    }
    while (n > 0) {
        size_t cap = t->pack_cap, payload = 0, keep = 0;
        uint64_t off = UINT64_MAX;
        for (;;) {
            uint64_t room = hkrt_room();
            if (room <= fixed)
                break;
            if (room - fixed < cap)
                cap = (size_t)(room - fixed);
            keep = hkt_pack(t->packer, r, (size_t)n, t->packed, cap, &payload);
            if (keep == 0 || !hkrt_space_allows(payload + fixed))
                break;
            off = hkrt_reserve(payload + fixed);
            if (off != UINT64_MAX)
                break;
            /* Another thread took the room: pack again for what is left. */
        }
        if (off == UINT64_MAX)
            break;
        struct hkt_chunk_header header = {HKT_CHUNK_PACKED, (uint32_t)payload, t->tid};
        struct hkrt_check_chunk trailer;
        hkrt_check_chunk(&trailer, t->tid,
                         hkt_checksum(&header, sizeof header) + hkt_checksum(t->packed, payload));
        struct iovec iov[3] = {
            {&header, sizeof header}, {t->packed, payload}, {&trailer, sizeof trailer}};
        if (!hkrt_pwritev_all(iov, 3, off))
            break;
        __atomic_fetch_add(&g.records, keep, __ATOMIC_RELAXED);
        written += keep;
        r += keep;
        n -= keep;
    }
    hkrt_count_lost(t, n);
    return written;
}

/* The name of a registered thread: prctl for the caller, /proc for another thread (what
 * pthread_getname_np does, without needing the thread's pthread_t). */
static HKRT_FN void hkrt_thread_name(const struct hkrt_thread *t, char name[HKRT_THREAD_NAME_MAX])
{
    memset(name, 0, HKRT_THREAD_NAME_MAX);
    if (t == &t_self) {
        if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0)
            name[0] = '\0';
        name[HKRT_THREAD_NAME_MAX - 1] = '\0';
        return;
    }
    char path[64] = "/proc/self/task/";
    hkrt_u64_to_dec(t->tid, path + strlen(path));
    hkrt_append(path, sizeof path, "/comm");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, name, HKRT_THREAD_NAME_MAX - 1);
    close(fd);
    if (n <= 0) {
        name[0] = '\0';
        return;
    }
    name[n] = '\0';
    if (name[n - 1] == '\n')
        name[n - 1] = '\0';
}

/* Last flush of a thread: its records up to `upto`, then LOST (if any), END if the thread is
 * ending (`ended`: at thread exit, not when the process finishes), and THREAD. The caller
 * holds t->busy. */
static HKRT_FN void hkrt_write_profile(struct hkrt_thread *t);

static HKRT_FN void hkrt_switches_close(struct hkrt_thread *t);
static HKRT_FN void hkrt_switches_open(struct hkrt_thread *t);

static HKRT_FN void hkrt_thread_final_chunks(struct hkrt_thread *t, struct hkt_record *upto,
                                             int ended)
{
    hkrt_write_events(t, upto);
    if ((g.profile || g.min_duration_ns != 0) && hkrt_wait_handed(t)) {
        hkrt_write_profile(t);
        if (g.min_duration_ns != 0) {
            struct hkt_folded folded = {__atomic_load_n(&g.min_ticks, __ATOMIC_RELAXED),
                                        t->keep.folded};
            hkrt_write_chunk(HKT_CHUNK_FOLDED, t->tid, &folded, sizeof folded, NULL);
        }
    }
    hkrt_switches_close(t); /* its SWITCH chunks, before its THREAD chunk */
    struct hkt_lost lost = {__atomic_exchange_n(&t->lost, 0, __ATOMIC_RELAXED)};
    t->final_written = 1;
    __atomic_fetch_add(&g.lost_reported, lost.records, __ATOMIC_RELAXED);
    if (lost.records != 0 && hkrt_file_ready())
        hkrt_write_chunk(HKT_CHUNK_LOST, t->tid, &lost, sizeof lost, NULL);
    if (ended) {
        /* Taken after the last record was written, so never earlier than it: a reader closes
         * the frames the thread left open (pthread_exit inside calls) here, not when the
         * process finished. */
        struct hkt_end end = {hkrt_ticks()};
        hkrt_write_chunk(HKT_CHUNK_END, t->tid, &end, sizeof end, NULL);
    }
    char name[HKRT_THREAD_NAME_MAX];
    hkrt_thread_name(t, name);
    struct hkt_thread_name seq = {t->sequence};
    hkrt_write_chunk(HKT_CHUNK_THREAD, t->tid, &seq, sizeof seq, name);
}

struct hkrt_module_walk {
    unsigned index;
    uintptr_t vdso;
};

static HKRT_FN int hkrt_module_callback(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct hkrt_module_walk *walk = data;
    const char *name = info->dlpi_name != NULL ? info->dlpi_name : "";
    int is_executable = walk->index++ == 0; /* the executable always comes first */
    if (!is_executable && name[0] == '\0')
        return 0; /* an unnamed object that is not the executable: some libcs' vDSO */
    uint64_t start = UINT64_MAX, end = 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t lo = (uint64_t)(uintptr_t)(info->dlpi_addr + ph->p_vaddr);
        uint64_t hi = lo + (uint64_t)ph->p_memsz;
        if (lo < start)
            start = lo;
        if (hi > end)
            end = hi;
    }
    if (start >= end)
        return 0;
    if (walk->vdso != 0 && start <= (uint64_t)walk->vdso && (uint64_t)walk->vdso < end)
        return 0; /* linux-vdso: no file to read symbols from */
    struct hkt_module module = {(uint64_t)(uintptr_t)info->dlpi_addr, start, end};
    hkrt_write_chunk(HKT_CHUNK_MODULE, 0, &module, sizeof module, is_executable ? "" : name);
    return 0;
}

static HKRT_FN void hkrt_write_modules(void)
{
    if (!hkrt_file_ok())
        return;
    struct hkrt_module_walk walk = {0, (uintptr_t)getauxval(AT_SYSINFO_EHDR)};
    dl_iterate_phdr(hkrt_module_callback, &walk);
}

/* ---------------------------------------------------------------------------------------- */
/* Starting: options, file                                                                   */

static HKRT_FN int hkrt_executable_bias(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(uintptr_t *)data = (uintptr_t)info->dlpi_addr;
    return 1; /* the executable comes first */
}

/* Triggers: the run-time addresses of the functions named in `list` (comma-separated, as `nm`
 * prints them: mangled for C++ and Rust), from the executable's symbol table (.symtab, else
 * .dynsym), up to HKRT_MAX_TRIGGERS; every symbol of a name counts (static functions of the
 * same name in two files). A name not found is warned about. Returns how many were found. */
static HKRT_FN uint32_t hkrt_resolve_functions(const char *list, uint64_t *out, const char *var)
{
    uint32_t found = 0;
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(ElfW(Ehdr))) {
        if (fd >= 0)
            close(fd);
        hkrt_warn("cannot read the executable's symbols (/proc/self/exe), ignoring", var, 0);
        return 0;
    }
    size_t size = (size_t)st.st_size;
    const unsigned char *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return 0;
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)(const void *)map;
    const ElfW(Shdr) *symtab = NULL, *strtab = NULL;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_shoff != 0 &&
        eh->e_shentsize == sizeof(ElfW(Shdr)) &&
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(ElfW(Shdr)) <= size) {
        const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(const void *)(map + eh->e_shoff);
        for (unsigned pass = 0; pass < 2 && symtab == NULL; pass++)
            for (unsigned i = 0; i < eh->e_shnum; i++)
                if (sh[i].sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM) &&
                    sh[i].sh_link < eh->e_shnum && sh[i].sh_entsize == sizeof(ElfW(Sym)) &&
                    sh[i].sh_offset + sh[i].sh_size <= size &&
                    sh[sh[i].sh_link].sh_offset + sh[sh[i].sh_link].sh_size <= size) {
                    symtab = &sh[i];
                    strtab = &sh[sh[i].sh_link];
                    break;
                }
    }
    uintptr_t bias = 0;
    dl_iterate_phdr(hkrt_executable_bias, &bias);
    const char *name = list;
    while (*name != '\0') {
        size_t len = strcspn(name, ",");
        int any = 0;
        if (symtab != NULL && len != 0) {
            const ElfW(Sym) *sym = (const ElfW(Sym) *)(const void *)(map + symtab->sh_offset);
            const char *names = (const char *)map + strtab->sh_offset;
            size_t count = symtab->sh_size / sizeof *sym;
            for (size_t i = 0; i < count; i++) {
                if ((sym[i].st_info & 0xf) != STT_FUNC || sym[i].st_value == 0 ||
                    sym[i].st_name >= strtab->sh_size)
                    continue;
                const char *s = names + sym[i].st_name;
                if (strncmp(s, name, len) != 0 || s[len] != '\0')
                    continue;
                any = 1;
                if (found < HKRT_MAX_TRIGGERS)
                    out[found++] = (uint64_t)(sym[i].st_value + bias);
            }
        }
        if (!any && len != 0) {
            char one[256];
            size_t n = len < sizeof one - 1 ? len : sizeof one - 1;
            memcpy(one, name, n);
            one[n] = '\0';
            hkrt_warn_hint(var, one, 0,
                           ": no such function in the executable's symbol table (give its name "
                           "as nm prints it; a stripped program has only its exported ones)");
        }
        name += len;
        if (*name == ',')
            name++;
    }
    munmap((void *)(uintptr_t)map, size);
    return found;
}

static HKRT_FN void hkrt_read_options(void)
{
    const char *v = hkrt_getenv("HOOKCC_DISABLE");
    g.user_enabled = v == NULL || strcmp(v, "0") == 0;

    g.buffer_records = HKRT_DEFAULT_BUFFER_RECORDS;
    v = hkrt_getenv("HOOKCC_BUFFER_RECORDS");
    if (v != NULL) {
        uint64_t n;
        if (!hkrt_parse_u64(v, &n) || n == 0) {
            hkrt_warn("ignoring HOOKCC_BUFFER_RECORDS, not a positive number:", v, 0);
        } else {
            if (n > HKRT_MAX_BUFFER_RECORDS) {
                hkrt_warn("HOOKCC_BUFFER_RECORDS too large, using 4194304; was", v, 0);
                n = HKRT_MAX_BUFFER_RECORDS;
            }
            uint32_t p = 1;
            while (p < n)
                p <<= 1;
            g.buffer_records = p;
        }
    }

    g.max_bytes = UINT64_MAX;
    v = hkrt_getenv("HOOKCC_MAX_BYTES");
    if (v != NULL) {
        uint64_t n;
        if (hkrt_parse_size(v, &n))
            g.max_bytes = n;
        else
            hkrt_warn("ignoring HOOKCC_MAX_BYTES, not a size (bytes, or with K, M, G or T):", v,
                      0);
    }

    v = hkrt_getenv("HOOKCC_PACK");
    g.raw_records = v != NULL && strcmp(v, "0") == 0;
    v = hkrt_getenv("HOOKCC_MODE");
    g.ring = 0;
    if (v != NULL && strcmp(v, "ring") == 0) {
        g.ring = 1;
        g.raw_records = 0;
        /* The ring of each thread is its buffer: HOOKCC_RING_BYTES (default 1 MiB, 65 536
         * records), rounded up to a power of two. */
        const char *bytes = hkrt_getenv("HOOKCC_RING_BYTES");
        uint64_t n = 0;
        if (bytes != NULL && (!hkrt_parse_size(bytes, &n) || n < 64 * sizeof(struct hkt_record))) {
            hkrt_warn("ignoring HOOKCC_RING_BYTES, not a size of at least 1K:", bytes, 0);
            n = 0;
        }
        if (n != 0) {
            uint64_t records = n / sizeof(struct hkt_record), p2 = 64;
            while (p2 < records && p2 < HKRT_MAX_BUFFER_RECORDS)
                p2 <<= 1;
            g.buffer_records = (uint32_t)p2;
        }
    } else if (v != NULL && strcmp(v, "profile") == 0) {
        /* Each thread's records are folded into its calling-context tree (by the writer, as
         * it would pack them), which is written instead of them ("The profile"). */
        g.profile = 1;
        g.raw_records = 0;
    } else if (v != NULL && strcmp(v, "trace") != 0) {
        hkrt_warn("ignoring HOOKCC_MODE, not trace, ring or profile:", v, 0);
    }
    g.min_duration_ns = 0;
    v = hkrt_getenv("HOOKCC_MIN_DURATION");
    if (v != NULL) {
        if (!hkrt_parse_duration(v, &g.min_duration_ns))
            hkrt_warn("ignoring HOOKCC_MIN_DURATION, not a duration (e.g. 5us, 200ns, 1ms):", v,
                      0);
        else if (g.ring || g.profile)
            g.min_duration_ns = 0; /* a ring keeps its last records; a profile has no records */
        else
            g.raw_records = 0;
    }
    /* Triggers: the environment's, else the ones hookcc --trace-start/--trace-stop built in. */
    struct hookcc_trace_triggers *trig = &hookcc_trace_triggers;
    v = hkrt_getenv("HOOKCC_TRACE_START");
    const char *stop = hkrt_getenv("HOOKCC_TRACE_STOP");
#ifdef HKRT_TRACE_START
    if (v == NULL) {
        v = HKRT_TRACE_START;
#ifdef HKRT_TRACE_STOP
        if (stop == NULL)
            stop = HKRT_TRACE_STOP;
#endif
    }
#endif
    /* HOOKCC_TRACE_START=none: everything, whatever was built in (an empty value is unset). */
    if (v != NULL && strcmp(v, "none") != 0) {
        uint64_t found[HKRT_MAX_TRIGGERS];
        uint32_t n = hkrt_resolve_functions(v, found, "HOOKCC_TRACE_START");
        for (uint32_t i = 0; i < n; i++)
            trig->start[i] = found[i];
        if (stop != NULL && stop[0] != '\0') {
            uint32_t m = hkrt_resolve_functions(stop, found, "HOOKCC_TRACE_STOP");
            for (uint32_t i = 0; i < m; i++)
                trig->stop[i] = found[i];
            __atomic_store_n(&trig->n_stop, m, __ATOMIC_RELEASE);
        }
        __atomic_store_n(&trig->n_start, n, __ATOMIC_RELEASE);
        if (n == 0) {
            /* Nothing could ever open a window: nothing would be recorded. */
            hkrt_warn("HOOKCC_TRACE_START names no function of the program: recording "
                      "everything, as without it:", v, 0);
        } else {
            g.raw_records = 0; /* the windows are cut where records are packed */
        }
    }
    g.profile_nodes = HKRT_DEFAULT_PROFILE_NODES;
    v = hkrt_getenv("HOOKCC_PROFILE_NODES");
    if (v != NULL && (g.profile || g.min_duration_ns != 0)) {
        uint64_t n;
        if (!hkrt_parse_u64(v, &n) || n == 0 || n > HKT_CCT_NONE - 1)
            hkrt_warn("ignoring HOOKCC_PROFILE_NODES, not a number of call paths:", v, 0);
        else
            g.profile_nodes = (uint32_t)n;
    }
    v = hkrt_getenv("HOOKCC_WRITER");
    g.writer_wanted = !g.raw_records && !g.ring && (v == NULL || strcmp(v, "0") != 0);
    /* Off-CPU time is a property of calls in a trace: a ring's windows and a profile's trees
     * have no use for it. */
    v = hkrt_getenv("HOOKCC_SWITCHES");
    g.sw_wanted = HKRT_HAVE_SWITCHES && !g.ring && !g.profile && (v == NULL || strcmp(v, "0") != 0);

    if (getcwd(g.start_dir, sizeof g.start_dir) == NULL || g.start_dir[0] != '/')
        g.start_dir[0] = '\0';

    v = hkrt_getenv("HOOKCC_OUTPUT");
    g.output_env[0] = '\0';
    if (v != NULL)
        hkrt_append(g.output_env, sizeof g.output_env, v);
}

/* The file name for attempt `attempt` (0, 1, ...): HOOKCC_OUTPUT, or <program>.<pid>.hktrace.
 * A name already taken (hkrt_claim_file) moves to the next attempt, which inserts ".<pid>",
 * then ".<pid>-2", ".<pid>-3", ... before a final ".hktrace" (appended if there is none); the
 * default name, which has the pid already, gets "-2", "-3", .... A forked child starts at
 * ".<pid>": it must not truncate its parent's HOOKCC_OUTPUT. */
static HKRT_FN void hkrt_make_path(uint64_t pid, int attempt)
{
    static const char ext[] = ".hktrace";
    char dec[24];
    hkrt_u64_to_dec(pid, dec);
    g.path[0] = '\0';
    int with_pid;
    if (g.output_env[0] == '\0') {
        const char *name = program_invocation_short_name;
        hkrt_append(g.path, sizeof g.path, name != NULL && name[0] != '\0' ? name : "hookcc");
        hkrt_append(g.path, sizeof g.path, ".");
        hkrt_append(g.path, sizeof g.path, dec);
        hkrt_append(g.path, sizeof g.path, ext);
        with_pid = 0; /* the name has it */
    } else {
        hkrt_append(g.path, sizeof g.path, g.output_env);
        if (g.is_fork_child)
            attempt++;
        with_pid = attempt > 0;
        attempt--;
    }
    if (!with_pid && attempt <= 0)
        return;
    size_t len = strlen(g.path), elen = sizeof ext - 1;
    int has_ext = len > elen && strcmp(g.path + len - elen, ext) == 0;
    if (has_ext)
        g.path[len - elen] = '\0';
    if (with_pid) {
        hkrt_append(g.path, sizeof g.path, ".");
        hkrt_append(g.path, sizeof g.path, dec);
    }
    if (attempt > 0) {
        hkrt_u64_to_dec((uint64_t)attempt + 1, dec);
        hkrt_append(g.path, sizeof g.path, "-");
        hkrt_append(g.path, sizeof g.path, dec);
    }
    if (has_ext || g.output_env[0] == '\0')
        hkrt_append(g.path, sizeof g.path, ext);
}

enum hkrt_claim { HKRT_CLAIMED, HKRT_TAKEN, HKRT_REFUSED, HKRT_NOT_OURS };

/* Decides whether the file just opened as fd may become this process's trace, and empties it
 * if so. Nothing is truncated at open: an exec'd image inherits HOOKCC_OUTPUT and would
 * otherwise destroy the trace its parent is still writing (or its own previous image's).
 * - taken: another live process writes it (it holds the flock every writer keeps for as long
 *   as it runs), or it is a trace this process's earlier image (same pid, before an exec)
 *   left: the caller tries the next name;
 * - refused: a non-empty regular file that is not a hookcc trace: left alone;
 * - not ours: an empty file or a stale trace that another user owns, or that others may read
 *   (a file planted where a setuid program's trace would go): never written into; the caller
 *   replaces it with a new file, or takes the next name;
 * - claimed: empty, or a stale trace (a previous run's), of ours and 0600, or not a regular
 *   file (/dev/null, a pipe): locked and, if a regular file, emptied. */
static HKRT_FN enum hkrt_claim hkrt_claim_file(int fd, uint64_t pid)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return HKRT_CLAIMED; /* /dev/null, a pipe: shared by any number of writers */
    int ours = st.st_uid == geteuid() && (st.st_mode & 077) == 0;
    int r;
    do
        r = flock(fd, LOCK_EX | LOCK_NB);
    while (r != 0 && errno == EINTR);
    if (r != 0 && errno == EWOULDBLOCK)
        return HKRT_TAKEN;
    /* Other flock errors (a file system without locks): go on with the header check. */
    if (st.st_size == 0)
        return ours ? HKRT_CLAIMED : HKRT_NOT_OURS;
    struct hkt_header old;
    ssize_t n = pread(fd, &old, sizeof old, 0);
    if (n < (ssize_t)HKT_MAGIC_SIZE || memcmp(old.magic, HKT_MAGIC, HKT_MAGIC_SIZE) != 0)
        return HKRT_REFUSED;
    if (n == (ssize_t)sizeof old && old.pid == pid)
        return HKRT_TAKEN;
    if (!ours)
        return HKRT_NOT_OURS;
    if (ftruncate(fd, 0) != 0)
        return HKRT_REFUSED;
    return HKRT_CLAIMED;
}

/* Opens the first free name (hkrt_make_path, hkrt_claim_file) as g.fd, -1 on failure
 * (warned). */
static HKRT_FN int hkrt_open_output(uint64_t pid)
{
    /* The policy of every hookcc runtime (docs/reliability.md): a symlink is never followed
     * (a name with a guessable pid could be one planted to make us write another file; and a
     * symlink's target is no previous trace of ours to replace), and the file is created
     * 0600: a trace is the program's call history. O_RDWR: the header of an existing file is
     * read before it is reused. */
    int flags = O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW;
    int replaced = 0; /* the name's file was not ours and was removed: create it anew */
    for (int attempt = 0; attempt < HKRT_MAX_NAME_TRIES; attempt++) {
        hkrt_make_path(pid, attempt);
        /* A relative name is the start directory's (a fork child may have moved). */
        char where[PATH_MAX];
        where[0] = '\0';
        if (g.path[0] != '/' && g.start_dir[0] != '\0') {
            hkrt_append(where, sizeof where, g.start_dir);
            hkrt_append(where, sizeof where, "/");
        }
        hkrt_append(where, sizeof where, g.path);
        int fd;
        do
            fd = open(where, flags | (replaced ? O_EXCL : 0), 0600);
        while (fd < 0 && errno == EINTR);
        if (fd < 0 && replaced && errno == EEXIST) { /* someone else made it meanwhile */
            replaced = 0;
            continue;
        }
        if (fd < 0 && errno == ELOOP) {
            hkrt_warn_hint("not writing the trace through the symbolic link", g.path, 0,
                           " (hookcc never follows one; give the path it points to); records "
                           "are counted as lost");
            return -1;
        }
        if (fd < 0) {
            hkrt_warn_hint("cannot open trace file", g.path, errno,
                           "; records are counted as lost (set HOOKCC_OUTPUT to a writable path)");
            return -1;
        }
        switch (hkrt_claim_file(fd, pid)) {
        case HKRT_CLAIMED:
            g.opened_path[0] = '\0';
            hkrt_append(g.opened_path, sizeof g.opened_path, where);
            return fd;
        case HKRT_NOT_OURS:
            /* Not written into: replaced by a file of our own, 0600, if the directory lets us
             * remove it (same name, O_EXCL); else the next name. */
            close(fd);
            if (!replaced && unlink(where) == 0) {
                replaced = 1;
                attempt--;
            } else {
                replaced = 0;
            }
            break;
        case HKRT_REFUSED:
            close(fd);
            hkrt_warn_hint("not overwriting", g.path, 0,
                           ": it exists and is not a hookcc trace; records are counted as lost");
            return -1;
        case HKRT_TAKEN:
            close(fd);
            replaced = 0;
            break;
        }
    }
    hkrt_warn_hint("every trace file name is in use, up to", g.path, 0,
                   "; records are counted as lost");
    return -1;
}

/* Opens the file and writes the header, EXE and MODULE chunks. On failure, warns once; hooks
 * still run and count their records as lost. */
static HKRT_FN void hkrt_open_file(void)
{
    uint64_t pid = (uint64_t)getpid();
    int fd = hkrt_open_output(pid);
    __atomic_store_n(&g.write_failed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.write_warned, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.failed_off, UINT64_MAX, __ATOMIC_RELAXED);
    __atomic_store_n(&g.space_stopped, 0, __ATOMIC_RELAXED);
    g.fd = fd;
    if (fd < 0)
        return;
    struct stat st;
    g.fd_regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);

    struct hkt_header *h = &g.header;
    memset(h, 0, sizeof *h);
    memcpy(h->magic, HKT_MAGIC, HKT_MAGIC_SIZE);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    h->endian = HKT_ENDIAN_BIG;
#else
    h->endian = HKT_ENDIAN_LITTLE;
#endif
    h->pointer_size = (uint8_t)sizeof(void *);
    h->version = g.profile || g.min_duration_ns != 0 ? HKT_VERSION_PROFILE : HKT_VERSION;
    h->header_size = HKT_HEADER_SIZE;
    h->ticks_per_second = 0; /* set when the file is finished */
    h->pid = pid;
    h->flags = HKT_FLAG_CHECKED;
    /* The wall clock at the CLOCK chunk's first_tick (g.clock_start, taken earlier: a fork
     * child opens its file at its first record), so that traces of several processes line up
     * on it (hookprof timeline A B …). */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t wall = (uint64_t)now.tv_sec * UINT64_C(1000000000) + (uint64_t)now.tv_nsec;
    uint64_t mono = hkrt_monotonic_ns();
    if (g.clock_start.ns != 0 && g.clock_start.ns <= mono && mono - g.clock_start.ns < wall)
        wall -= mono - g.clock_start.ns;
    h->start_realtime_ns = wall;
    __atomic_store_n(&g.file_end, (uint64_t)HKT_HEADER_SIZE, __ATOMIC_RELAXED);
    if (!hkrt_pwrite_all(h, sizeof *h, 0))
        return;

    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    hkrt_write_chunk(HKT_CHUNK_EXE, 0, NULL, 0, exe);
    hkrt_write_modules();
    if (g.overhead.pairs != 0) /* a fork child's file: measured by the parent */
        hkrt_write_chunk(HKT_CHUNK_OVERHEAD, 0, &g.overhead, sizeof g.overhead, NULL);
}

static HKRT_FN void hkrt_thread_key_destructor(void *arg);
static HKRT_FN void hkrt_at_exit(void);
static HKRT_FN void hkrt_atfork_prepare(void);
static HKRT_FN void hkrt_atfork_parent(void);
static HKRT_FN void hkrt_atfork_child(void);
static HKRT_FN void hkrt_on_fatal_signal(int sig, siginfo_t *info, void *context);
static HKRT_FN void hkrt_on_snapshot_signal(int sig);

/* The real sigaction, for the runtime's own handlers: glibc's __sigaction, which its own
 * sigaction aliases (the program's calls go through ours, "Signal handlers"). */
#if defined(__GLIBC__)
extern int __sigaction(int, const struct sigaction *, struct sigaction *);
#define hkrt_real_sigaction __sigaction
#define HKRT_WRAP_HANDLERS 1
#else
/* Another libc: no known name for the real one, so the program's handlers are not wrapped
 * (the limit described in "Signal handlers" then stays). */
#define hkrt_real_sigaction sigaction
#define HKRT_WRAP_HANDLERS 0
#endif

static struct sigaction g_old_xfsz;

/* SIGXFSZ, whose default action kills the process, is sent with the EFBIG of a write past
 * RLIMIT_FSIZE. Our own writes must not kill the program: then the write just fails (and the
 * file is finished as after a full disk). Any other write past the limit is the program's: the
 * file is finished and the signal gets its default action, as without the runtime. */
static HKRT_FN void hkrt_on_xfsz(int sig, siginfo_t *info, void *context)
{
    (void)info;
    (void)context;
    if (__atomic_load_n(&g.writes_in_flight, __ATOMIC_ACQUIRE) > 0)
        return;
    int saved_errno = errno;
    hkrt_finish(1);
    hkrt_real_sigaction(sig, &g_old_xfsz, NULL);
    raise(sig);
    errno = saved_errno;
}

static HKRT_FN void hkrt_install_fatal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = hkrt_on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    /* SA_ONSTACK: on stack overflow the handler runs on the thread's alternate stack. Not
     * SA_NODEFER: a fault inside the handler then kills the process instead of recursing. */
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    for (int i = 0; i < HKRT_NFATAL; i++) {
        if (hkrt_real_sigaction(hkrt_fatal_signals[i], NULL, &g_old_actions[i]) != 0)
            continue;
        if (!(g_old_actions[i].sa_flags & SA_SIGINFO) && g_old_actions[i].sa_handler == SIG_IGN)
            continue; /* the program ignores it: leave that alone */
        if (hkrt_real_sigaction(hkrt_fatal_signals[i], &sa, NULL) == 0)
            g_handler_installed[i] = 1;
    }
    /* SIGXFSZ only where it has its default action: ignored or handled, writes just fail. */
    if (hkrt_real_sigaction(SIGXFSZ, NULL, &g_old_xfsz) == 0 && !(g_old_xfsz.sa_flags & SA_SIGINFO) &&
        g_old_xfsz.sa_handler == SIG_DFL) {
        sa.sa_sigaction = hkrt_on_xfsz;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        hkrt_real_sigaction(SIGXFSZ, &sa, NULL);
    }
}

/* Starts the runtime, under the lock. */
static HKRT_FN void hkrt_start_locked(void)
{
    __atomic_store_n(&g.image_pid, (int)getpid(), __ATOMIC_RELAXED);
    hkrt_read_options();
    g.clock_start = hkrt_clock_point_now();
    if (!g.once_done) {
        g.once_done = 1;
        /* Registered as early as possible: atexit handlers run in reverse order, so the file
         * is finished after the program's own handlers and its C++ static destructors. */
        atexit(hkrt_at_exit);
        at_quick_exit(hkrt_at_exit); /* quick_exit skips atexit handlers, not these */
        pthread_atfork(hkrt_atfork_prepare, hkrt_atfork_parent, hkrt_atfork_child);
        g.key_ok = pthread_key_create(&g.key, hkrt_thread_key_destructor) == 0;
        if (!g.key_ok)
            hkrt_warn("cannot create a pthread key; records will be counted as lost", NULL, 0);
        hkrt_install_fatal_handlers();
    }
    hkrt_open_file();
    hkrt_describe_state();
    if (g.ring || g.profile) {
        /* SIGUSR2 takes a snapshot, where the program leaves it at its default action. */
        struct sigaction old, sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = hkrt_on_snapshot_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        if (hkrt_real_sigaction(SIGUSR2, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
            old.sa_handler == SIG_DFL)
            hkrt_real_sigaction(SIGUSR2, &sa, NULL);
    }
    /* The flag first: a hook in another thread that sees RUNNING also sees HOOKCC_DISABLE. */
    hkrt_set_enabled(g.user_enabled);
    __atomic_store_n(&g.state, HKRT_RUNNING, __ATOMIC_RELEASE);
}

/* Starts the runtime if nobody has. Called with the calling thread's busy flag held (see
 * hkrt_guard_enter), so that a hook run by a libc function it calls (interposed by the program
 * and instrumented) is counted as lost instead of coming back here. */
static HKRT_FN void hkrt_ensure_started(void)
{
    if (__atomic_load_n(&g.state, __ATOMIC_ACQUIRE) != HKRT_UNINIT)
        return;
    if (__atomic_load_n(&g.lock_owner, __ATOMIC_RELAXED) == hkrt_my_tid_for_lock())
        return; /* re-entered while this thread starts the runtime: spinning would deadlock */
    hkrt_lock();
    if (g.state == HKRT_UNINIT)
        hkrt_start_locked();
    hkrt_unlock();
}

/* The per-thread recursion guard. Taking `busy` and moving pos to held_pos (pos = NULL)
 * sends every hook this thread runs meanwhile (from a signal handler, or from a libc function
 * the runtime calls that the program interposed and instrumented) to the slow path, which sees
 * `busy` and counts the record as lost. Between enter and leave, held_pos is the thread's pos.
 * Returns 0 if busy was already taken (by this thread further up, or by the finisher). */
static HKRT_FN int hkrt_guard_enter(struct hkrt_thread *t)
{
    if (__atomic_exchange_n(&t->busy, 1, __ATOMIC_ACQUIRE))
        return 0;
    t->held_pos = t->pos;
    t->pos = NULL;
    return 1;
}

static HKRT_FN void hkrt_guard_leave(struct hkrt_thread *t)
{
    t->pos = t->life == HKRT_THREAD_LIVE ? t->held_pos : NULL;
    __atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
}

/* Starts the runtime from outside a hook (constructor, public API). */
static HKRT_FN void hkrt_ensure_started_guarded(void)
{
    struct hkrt_thread *t = &t_self;
    if (__atomic_load_n(&g.state, __ATOMIC_ACQUIRE) != HKRT_UNINIT || !hkrt_guard_enter(t))
        return;
    hkrt_ensure_started();
    hkrt_guard_leave(t);
}

/* ---------------------------------------------------------------------------------------- */
/* Threads                                                                                  */

/* Gives the thread an alternate signal stack if it has none, so that the fatal-signal handler
 * can still finish the file after a stack overflow. */
static HKRT_FN void hkrt_thread_altstack_on(struct hkrt_thread *t)
{
    stack_t current;
    if (sigaltstack(NULL, &current) != 0 || !(current.ss_flags & SS_DISABLE))
        return;
    void *mem = mmap(NULL, HKRT_ALTSTACK_SIZE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return;
    stack_t ss = {.ss_sp = mem, .ss_flags = 0, .ss_size = HKRT_ALTSTACK_SIZE};
    if (sigaltstack(&ss, NULL) == 0)
        t->altstack = mem;
    else
        munmap(mem, HKRT_ALTSTACK_SIZE);
}

static HKRT_FN void hkrt_thread_altstack_off(struct hkrt_thread *t)
{
    if (t->altstack == NULL)
        return;
    stack_t current;
    if (sigaltstack(NULL, &current) != 0)
        return; /* cannot tell whether it is still installed: leak it rather than risk it */
    if (current.ss_sp == t->altstack && !(current.ss_flags & SS_DISABLE)) {
        if (current.ss_flags & SS_ONSTACK)
            return; /* running on it (cannot happen at thread exit) */
        stack_t off = {.ss_sp = NULL, .ss_flags = SS_DISABLE, .ss_size = 0};
        if (sigaltstack(&off, NULL) != 0)
            return;
    }
    munmap(t->altstack, HKRT_ALTSTACK_SIZE);
    t->altstack = NULL;
}

static HKRT_FN void hkrt_list_remove(struct hkrt_thread *t)
{
    if (t->prev != NULL)
        t->prev->next = t->next;
    else if (g.threads == t)
        g.threads = t->next;
    if (t->next != NULL)
        t->next->prev = t->prev;
    t->prev = t->next = NULL;
}

/* Bytes a thread's PACKED payloads are made in: a quarter of its records' bytes (a chunk
 * holds about 2.5 bytes a record, so one chunk per buffer), and never less than 4 KiB. */
static HKRT_FN size_t hkrt_pack_cap(size_t bytes)
{
    return bytes / 4 + 4096;
}

/* Maps a buffer of `bytes` (a power of two) whose start is aligned to `bytes`, with room for
 * the EVENTS chunk header just before it and `after` bytes after it: maps enough to align,
 * then unmaps the slack. Returns the buffer, 0 on failure. The thread's first buffer has its
 * packer after it (its state, then the room where PACKED payloads are made), whose pages are
 * touched only when a buffer is written. */
static HKRT_FN uintptr_t hkrt_map_aligned(size_t bytes, size_t after, void **map, size_t *map_size)
{
    const size_t header = sizeof(struct hkt_chunk_header);
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (page == 0 || (page & (page - 1)) != 0)
        page = 4096;
    size_t len = 2 * bytes + header + after + (size_t)page;
    char *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return 0;
    uintptr_t start = (uintptr_t)base, end = start + len;
    uintptr_t buf = (start + header + bytes - 1) & ~(uintptr_t)(bytes - 1);
    uintptr_t keep_lo = (buf - header) & ~(page - 1);
    uintptr_t keep_hi = (buf + bytes + after + page - 1) & ~(page - 1);
    if (keep_lo > start)
        munmap(base, keep_lo - start);
    if (end > keep_hi)
        munmap((void *)keep_hi, end - keep_hi);
    *map = (void *)keep_lo;
    *map_size = keep_hi - keep_lo;
    return buf;
}

static HKRT_FN int hkrt_thread_map_buffer(struct hkrt_thread *t, size_t bytes)
{
    const size_t packer = (sizeof(struct hkt_packer) + 63) & ~(size_t)63;
    uintptr_t buf = hkrt_map_aligned(bytes, packer + hkrt_pack_cap(bytes), &t->map, &t->map_size);
    if (buf == 0)
        return 0;
    t->buf = (struct hkt_record *)buf;
    t->buf_end = (struct hkt_record *)(buf + bytes);
    t->packer = (struct hkt_packer *)(buf + bytes); /* zeroed by mmap: an empty table */
    t->packed = (uint8_t *)(buf + bytes + packer);
    t->pack_cap = hkrt_pack_cap(bytes);
    t->spare = NULL;
    t->spare_map = NULL;
    __atomic_store_n(&t->handed, 0, __ATOMIC_RELAXED);
    return 1;
}

/* Gives the calling thread a buffer and registers it. The caller holds the guard: on success
 * held_pos is the buffer's start. Returns 0 if that failed (no memory, no pthread key). */
static HKRT_FN int hkrt_thread_attach(struct hkrt_thread *t)
{
    if (!g.key_ok || !hkrt_thread_map_buffer(t, hkrt_buffer_bytes()))
        return 0;
    t->held_pos = t->buf;
    t->tid = hkrt_gettid();
    __atomic_store_n(&t->lost, 0, __ATOMIC_RELAXED);
    t->final_written = 0;
    /* The key's destructor runs at thread exit only for a non-NULL value. */
    if (pthread_setspecific(g.key, t) != 0) {
        munmap(t->map, t->map_size);
        t->map = NULL;
        t->buf = t->buf_end = t->held_pos = NULL;
        return 0;
    }
    hkrt_thread_altstack_on(t);
    hkrt_lock();
    t->sequence = ++g.thread_seq;
    t->prev = NULL;
    t->next = g.threads;
    if (g.threads != NULL)
        g.threads->prev = t;
    g.threads = t;
    t->life = HKRT_THREAD_LIVE;
    hkrt_unlock();
    hkrt_switches_open(t);
    return 1;
}

/* Thread exit (pthread key destructor): last chunks, leave the list, free the buffer. Runs
 * after the thread's C++ thread_local destructors (glibc runs those first). Key destructors
 * run in rounds, each key's once a round, while some destructor leaves a value set, up to
 * PTHREAD_DESTRUCTOR_ITERATIONS rounds: ours is called first (its key is among the oldest), so
 * it sets its value again and comes back, and writes the last chunks only in the last round,
 * after the other keys' destructors have run (and their hooks were recorded: googletest's
 * lost 2 216 records every run). Hooks in destructors that run after that are counted lost. */
static HKRT_FN void hkrt_thread_key_destructor(void *arg)
{
    struct hkrt_thread *t = &t_self;
    if (arg != t || t->life != HKRT_THREAD_LIVE)
        return;
    if (++t->exit_rounds < PTHREAD_DESTRUCTOR_ITERATIONS && pthread_setspecific(g.key, t) == 0)
        return;
    int saved_errno = errno;
    /* The finisher holds the lock for all its work, so once we have it, the finisher is
     * either done with this thread (final_written) or has not started. */
    hkrt_lock();
    int was_busy = __atomic_exchange_n(&t->busy, 1, __ATOMIC_ACQUIRE);
    struct hkt_record *upto = t->pos;
    t->pos = NULL; /* later hooks of this thread: slow path, counted lost */
    if (!was_busy && !t->final_written &&
        __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == HKRT_RUNNING)
        hkrt_thread_final_chunks(t, upto, 1);
    hkrt_list_remove(t);
    t->life = HKRT_THREAD_DEAD;
    hkrt_unlock();
    hkrt_thread_altstack_off(t);
    /* The writer may still read a buffer of ours (when the final chunks were not ours to
     * write): the mappings go only once it is done; if it is stuck, they stay. */
    if (hkrt_wait_handed(t)) {
        munmap(t->map, t->map_size);
        if (t->spare_map != NULL)
            munmap(t->spare_map, t->spare_map_size);
        hkrt_cct_free(t);
    }
    t->map = t->spare_map = NULL;
    t->buf = t->buf_end = t->spare = NULL;
    __atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
    errno = saved_errno;
}

/* ---------------------------------------------------------------------------------------- */
/* Context switches                                                                         */
/*
 * Where the kernel allows it, each traced thread gets a perf event of its own (opened when the
 * thread attaches, in the slow path) that records nothing but the thread's context switches
 * (PERF_RECORD_SWITCH: `context_switch` on a dummy software event) into a small ring the
 * kernel writes and we read. A thread's own switches need no privilege at the default
 * perf_event_paranoid of 2 (checked: this machine is at 2); at 3 (Debian's old kernels), or
 * where a container's seccomp profile refuses the call, the runtime says so once on stderr and
 * goes on without them. The hooks never see any of it.
 *
 * The writer thread reads every ring every HKRT_SW_PERIOD_NS, pairs each switch-out with the
 * next switch-in, and writes the pairs as SWITCH chunks of the thread; the thread's last
 * chunks (exit, or the finish) read its ring a last time and close it, before its THREAD
 * chunk. Without a writer (HOOKCC_WRITER=0, a fork child) a thread reads its own ring when its
 * buffer is full. The kernel stamps the records with CLOCK_MONOTONIC (use_clockid): each chunk
 * carries one instant read on both clocks, from which a reader converts them to ticks.
 *
 * The ring holds HKRT_SW_PAGES pages: 24 bytes a record, two records a switch, so 4 KiB pages
 * hold 680 switches, 68 000 a second at the writer's pace; beyond that the kernel drops
 * records and says how many (counted in the chunk's `lost`).
 */

#define HKRT_SW_PAGES 8                         /* data pages of a thread's ring (a power of 2) */
#define HKRT_SW_PERIOD_NS (10 * 1000 * 1000)    /* the writer reads the rings this often */
#define HKRT_SW_BATCH 200                       /* pairs per SWITCH chunk, at most */

/* Takes g.sw_lock. `bounded` (the finisher, which may be a signal handler that interrupted
 * the holder): gives up after about a second, or at once if this thread holds it. */
static HKRT_FN int hkrt_sw_lock(int bounded)
{
    int me = (int)hkrt_gettid();
    if (__atomic_load_n(&g.sw_lock, __ATOMIC_RELAXED) == me)
        return 0;
    for (unsigned i = 0;; i++) {
        int free = 0;
        if (__atomic_compare_exchange_n(&g.sw_lock, &free, me, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return 1;
        if (bounded && i > 1000000)
            return 0;
        sched_yield();
    }
}

static HKRT_FN void hkrt_sw_unlock(void)
{
    __atomic_store_n(&g.sw_lock, 0, __ATOMIC_RELEASE);
}

#if HKRT_HAVE_SWITCHES

/* Once per process: why there will be no off-CPU time. */
static HKRT_FN void hkrt_switches_refused(const char *call, int err)
{
    if (__atomic_exchange_n(&g.sw_warned, 1, __ATOMIC_RELAXED))
        return;
    char hint[320] = "; /proc/sys/kernel/perf_event_paranoid is ";
    char level[16] = "unreadable";
    int fd = open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, level, sizeof level - 1);
        level[n > 0 ? n : 0] = '\0';
        char *nl = strchr(level, '\n');
        if (nl != NULL)
            *nl = '\0';
        close(fd);
    }
    hkrt_append(hint, sizeof hint, level);
    hkrt_append(hint, sizeof hint, " (at most 2 allows it, unless a container's seccomp profile "
                                   "refuses the call). Off-CPU time will not be shown; "
                                   "HOOKCC_SWITCHES=0 silences this");
    hkrt_warn_hint("context switches are not recorded:", call, err, hint);
}

/* Opens the calling thread's switch ring (its attach, slow path). */
static HKRT_FN void hkrt_switches_open(struct hkrt_thread *t)
{
    t->sw_ring = NULL;
    if (!__atomic_load_n(&g.sw_wanted, __ATOMIC_RELAXED))
        return;
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_DUMMY; /* counts nothing: only the side-band records */
    attr.context_switch = 1;
    attr.sample_id_all = 1;
    attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    int fd = (int)syscall(SYS_perf_event_open, &attr, 0 /* this thread */, -1 /* any CPU */,
                          -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        /* The next thread would be refused too (same process, same credentials). */
        __atomic_store_n(&g.sw_wanted, 0, __ATOMIC_RELAXED);
        hkrt_switches_refused("perf_event_open", errno);
        return;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t size = page * (1 + HKRT_SW_PAGES);
    void *ring = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ring == MAP_FAILED) {
        int err = errno; /* EPERM past perf_event_mlock_kb and RLIMIT_MEMLOCK */
        close(fd);
        hkrt_switches_refused("mmap of the perf ring", err);
        return;
    }
    t->sw_fd = fd;
    t->sw_ring_size = size;
    t->sw_out_ns = 0;
    t->sw_lost = 0;
    t->sw_ring = ring;
    if (!hkrt_sw_lock(1)) {
        munmap(ring, size);
        close(fd);
        t->sw_ring = NULL;
        return;
    }
    t->sw_next = g.sw_threads;
    g.sw_threads = t;
    hkrt_sw_unlock();
}

/* Under sw_lock: the pairs read and not written yet (one thread's at a time). */
static struct {
    struct hkt_switch head;
    struct hkt_switch_pair pairs[HKRT_SW_BATCH];
} g_sw_chunk;
static unsigned g_sw_pairs;

/* Writes the pairs read as a SWITCH chunk of t. Like the records, only while HOOKCC_MAX_BYTES
 * and the free-space reserve let records be written: switches without them are no use (and a
 * thread that hands tiny buffers over switches at every one). */
static HKRT_FN void hkrt_switches_write(struct hkrt_thread *t)
{
    size_t bytes = sizeof(struct hkt_chunk_header) + sizeof g_sw_chunk.head +
                   g_sw_pairs * sizeof g_sw_chunk.pairs[0] + sizeof(struct hkrt_check_chunk);
    if ((g_sw_pairs == 0 && t->sw_lost == 0) || !hkrt_file_ok() ||
        __atomic_load_n(&g.space_stopped, __ATOMIC_RELAXED) || hkrt_room() < bytes) {
        g_sw_pairs = 0;
        return;
    }
    struct hkrt_clock_point now = hkrt_clock_point_now();
    g_sw_chunk.head.anchor_ticks = now.ticks;
    g_sw_chunk.head.anchor_ns = now.ns;
    g_sw_chunk.head.lost = t->sw_lost;
    hkrt_write_chunk(HKT_CHUNK_SWITCH, t->tid, &g_sw_chunk,
                     sizeof g_sw_chunk.head + g_sw_pairs * sizeof g_sw_chunk.pairs[0], NULL);
    t->sw_lost = 0;
    g_sw_pairs = 0;
}

/* Under sw_lock: reads t's ring and writes what it holds. `closing`: the thread's last read; a
 * switch-out without its switch-in yet (another thread, finished by the process's end while
 * switched out) ends now. */
static HKRT_FN void hkrt_switches_read(struct hkrt_thread *t, int closing)
{
    struct perf_event_mmap_page *meta = t->sw_ring;
    size_t page = t->sw_ring_size / (1 + HKRT_SW_PAGES);
    uint64_t data_size = meta->data_size != 0 ? meta->data_size : page * HKRT_SW_PAGES;
    const unsigned char *data =
        (const unsigned char *)t->sw_ring + (meta->data_offset != 0 ? meta->data_offset : page);
    /* The kernel keeps these 8-aligned (offsets 1024 and 1032 of a page), which i386's
     * 4-byte alignment of uint64_t in the struct does not know. */
    hkrt_u64a *head_at =
        (hkrt_u64a *)((char *)t->sw_ring + offsetof(struct perf_event_mmap_page, data_head));
    hkrt_u64a *tail_at =
        (hkrt_u64a *)((char *)t->sw_ring + offsetof(struct perf_event_mmap_page, data_tail));
    uint64_t head = __atomic_load_n(head_at, __ATOMIC_ACQUIRE);
    uint64_t tail = *tail_at;
    g_sw_pairs = 0;
    while (tail + sizeof(struct perf_event_header) <= head) {
        /* A record may wrap around the ring's end: copied out a byte at a time. */
        union {
            struct perf_event_header h;
            uint64_t words[8];
        } rec;
        for (size_t i = 0; i < sizeof rec.h; i++)
            ((unsigned char *)&rec)[i] = data[(tail + i) % data_size];
        size_t size = rec.h.size;
        if (size < sizeof rec.h || tail + size > head)
            break; /* cannot happen: the kernel writes whole records */
        if (size <= sizeof rec)
            for (size_t i = sizeof rec.h; i < size; i++)
                ((unsigned char *)&rec)[i] = data[(tail + i) % data_size];
        tail += size;
        if (rec.h.type == PERF_RECORD_SWITCH && size >= 24) {
            uint64_t time = rec.words[2]; /* after the header: pid/tid, then time */
            if (rec.h.misc & PERF_RECORD_MISC_SWITCH_OUT) {
                t->sw_out_ns = time;
            } else if (t->sw_out_ns != 0) {
                g_sw_chunk.pairs[g_sw_pairs].out_ns = t->sw_out_ns;
                g_sw_chunk.pairs[g_sw_pairs].in_ns = time;
                t->sw_out_ns = 0;
                if (++g_sw_pairs == HKRT_SW_BATCH)
                    hkrt_switches_write(t);
            }
        } else if (rec.h.type == PERF_RECORD_LOST && size >= 24) {
            t->sw_lost += rec.words[2]; /* id, then lost */
            t->sw_out_ns = 0;           /* its switch-in may be among them */
        }
    }
    __atomic_store_n(tail_at, tail, __ATOMIC_RELEASE);
    if (closing && t->sw_out_ns != 0) {
        g_sw_chunk.pairs[g_sw_pairs].out_ns = t->sw_out_ns;
        g_sw_chunk.pairs[g_sw_pairs].in_ns = hkrt_monotonic_ns();
        t->sw_out_ns = 0;
        if (++g_sw_pairs == HKRT_SW_BATCH)
            hkrt_switches_write(t);
    }
    hkrt_switches_write(t);
}

/* The thread's last read of its ring (its last chunks, before THREAD), and the ring's end. */
static HKRT_FN void hkrt_switches_close(struct hkrt_thread *t)
{
    if (t->sw_ring == NULL || !hkrt_sw_lock(1))
        return;
    if (hkrt_file_ok())
        hkrt_switches_read(t, 1);
    for (struct hkrt_thread **p = &g.sw_threads; *p != NULL; p = &(*p)->sw_next)
        if (*p == t) {
            *p = t->sw_next;
            break;
        }
    munmap(t->sw_ring, t->sw_ring_size);
    close(t->sw_fd);
    t->sw_ring = NULL;
    hkrt_sw_unlock();
}

/* The writer's round: every ring, unless the file is being finished (then the finisher reads
 * them, each thread before its THREAD chunk, and nothing may follow the CLOCK chunk). */
static HKRT_FN void hkrt_switches_read_all(void)
{
    if (__atomic_load_n(&g.sw_threads, __ATOMIC_RELAXED) == NULL || !hkrt_sw_lock(0))
        return;
    for (struct hkrt_thread *t = g.sw_threads; t != NULL; t = t->sw_next) {
        if (__atomic_load_n(&g.finishing, __ATOMIC_ACQUIRE) || !hkrt_file_ok())
            break;
        hkrt_switches_read(t, 0);
    }
    hkrt_sw_unlock();
}

/* A thread without a writer reads its own ring (from the slow path, its buffer just written). */
static HKRT_FN void hkrt_switches_read_own(struct hkrt_thread *t)
{
    if (t->sw_ring == NULL || __atomic_load_n(&g.writer_running, __ATOMIC_RELAXED) ||
        !hkrt_sw_lock(1))
        return;
    if (!__atomic_load_n(&g.finishing, __ATOMIC_ACQUIRE) && hkrt_file_ok())
        hkrt_switches_read(t, 0);
    hkrt_sw_unlock();
}

/* A fork child: the rings it inherited watch the parent's threads. The forking thread, the
 * child's only one, opens its own. */
static HKRT_FN void hkrt_switches_after_fork(struct hkrt_thread *me)
{
    for (struct hkrt_thread *t = g.sw_threads; t != NULL; t = t->sw_next) {
        munmap(t->sw_ring, t->sw_ring_size);
        close(t->sw_fd);
        t->sw_ring = NULL;
    }
    g.sw_threads = NULL;
    __atomic_store_n(&g.sw_lock, 0, __ATOMIC_RELAXED);
    g_sw_pairs = 0;
    if (me->life == HKRT_THREAD_LIVE)
        hkrt_switches_open(me);
}

#else /* no perf_event_open: no off-CPU time */

static HKRT_FN void hkrt_switches_open(struct hkrt_thread *t) { t->sw_ring = NULL; }
static HKRT_FN void hkrt_switches_close(struct hkrt_thread *t) { (void)t; }
static HKRT_FN void hkrt_switches_read_all(void) {}
static HKRT_FN void hkrt_switches_read_own(struct hkrt_thread *t) { (void)t; }
static HKRT_FN void hkrt_switches_after_fork(struct hkrt_thread *me) { (void)me; }

#endif

/* ---------------------------------------------------------------------------------------- */
/* The writer                                                                               */
/*
 * Packing a full buffer costs about 45 instructions a record (trace_pack.h); done by the
 * thread whose hook found the buffer full, that would be three times what its hooks cost. So
 * the process gets one writer thread (started by the runtime's constructor, all signals
 * blocked, named "hookcc-writer"): a hook that finds its buffer full hands the buffer over and
 * goes on in the thread's spare buffer, and the writer packs and writes it, then its PAUSE
 * chunk (the thread's time handing over: usually well under a microsecond). A thread hands over
 * one buffer at a time: if the writer still has its previous one, the thread waits (inside the
 * PAUSE), so the writer never falls behind by more than a buffer per thread and the chunks of a
 * thread stay in the order of its records. Every other write of a thread's records (its last
 * chunks, hookcc_trace_flush, the finisher) first waits for the writer to be done with it.
 *
 * The writer never takes the lock (the thread handing over has opened the file), so a thread
 * that holds the lock may wait for it. A fork child has no writer (creating a thread there is
 * not safe before exec): it packs in its own hooks, as does every process under
 * HOOKCC_WRITER=0 or HOOKCC_PACK=0, or when the thread could not be created.
 */

static HKRT_FN void hkrt_futex_wait(int *word, int value, const struct timespec *timeout)
{
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, timeout, NULL, 0);
}

static HKRT_FN void hkrt_futex_wake(int *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Waits until the writer is done with what t handed over: returns 1 then, or 0 if it was not
 * within ~2 s (a write stuck on a slow file system) or if the caller is the writer itself (a
 * fatal signal in it). */
static HKRT_FN int hkrt_wait_handed(struct hkrt_thread *t)
{
    if (!__atomic_load_n(&t->handed, __ATOMIC_ACQUIRE))
        return 1;
    if (__atomic_load_n(&g.writer_tid, __ATOMIC_RELAXED) == (int)hkrt_gettid())
        return 0;
    for (int i = 0; i < 2000 && __atomic_load_n(&t->handed, __ATOMIC_ACQUIRE); i++) {
        struct timespec ms = {0, 1000000};
        hkrt_futex_wait(&t->handed, 1, &ms);
    }
    return !__atomic_load_n(&t->handed, __ATOMIC_ACQUIRE);
}

/* Writes what t handed over, then tells t. */
static HKRT_FN void hkrt_write_handed(struct hkrt_thread *t)
{
    uint64_t wrote = hkrt_write_packed(t, t->handed_buf + t->handed_skip,
                                       t->handed_n - t->handed_skip);
    if (g.profile || g.min_duration_ns != 0)
        hkrt_profile_pause(t, &t->handed_pause);
    /* Under HOOKCC_MIN_DURATION a buffer may keep no record; its pause is still the next
     * record's to lose. */
    if (!g.profile && (wrote != 0 || g.min_duration_ns != 0) && hkrt_file_ok())
        hkrt_write_chunk(HKT_CHUNK_PAUSE, t->tid, &t->handed_pause, sizeof t->handed_pause, NULL);
    __atomic_store_n(&t->handed, 0, __ATOMIC_RELEASE);
    /* t may be gone from here on (its thread exited): a wake on its old address is harmless. */
    hkrt_futex_wake(&t->handed);
}

static HKRT_FN void *hkrt_writer_main(void *arg)
{
    (void)arg;
    /* Hooks this thread runs (an instrumented function the program interposed on pwritev, say)
     * are the runtime's own: counted as lost, never recorded. */
    t_self.life = HKRT_THREAD_DEAD;
    prctl(PR_SET_NAME, "hookcc-writer", 0, 0, 0);
    __atomic_store_n(&g.writer_tid, (int)hkrt_gettid(), __ATOMIC_RELEASE);
    uint64_t rings_read = 0; /* when the switch rings were last read (CLOCK_MONOTONIC ns) */
    for (;;) {
        /* With switch rings to read (or to come: a thread may open one at any time), every
         * HKRT_SW_PERIOD_NS, busy with buffers or not. */
        int rings = __atomic_load_n(&g.sw_wanted, __ATOMIC_RELAXED);
        if (rings && hkrt_monotonic_ns() - rings_read >= HKRT_SW_PERIOD_NS) {
            hkrt_switches_read_all();
            rings_read = hkrt_monotonic_ns();
        }
        int seen = __atomic_load_n(&g.writer_wake, __ATOMIC_ACQUIRE);
        struct hkrt_thread *t = __atomic_exchange_n(&g.queue, NULL, __ATOMIC_ACQUIRE);
        if (t == NULL) {
            struct timespec period = {0, HKRT_SW_PERIOD_NS};
            hkrt_futex_wait(&g.writer_wake, seen, rings ? &period : NULL);
            continue;
        }
        while (t != NULL) {
            struct hkrt_thread *next = t->queue_next;
            hkrt_write_handed(t);
            t = next;
        }
    }
    return NULL;
}

/* Starts the writer, from the runtime's constructor (a normal context: never from a hook, which
 * may run in a signal handler, nor in a fork child). */
static HKRT_FN void hkrt_start_writer(void)
{
    if (!g.writer_wanted || g.is_fork_child || __atomic_load_n(&g.writer_running, __ATOMIC_RELAXED))
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    int ok = pthread_attr_init(&attr) == 0;
    if (ok) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        pthread_t thread;
        ok = pthread_create(&thread, &attr, hkrt_writer_main, NULL) == 0;
        pthread_attr_destroy(&attr);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    __atomic_store_n(&g.writer_running, ok, __ATOMIC_RELEASE);
}

/* t's spare buffer (a second buffer aligned as its first), mapped when first needed. Returns 0
 * if it cannot be mapped. */
static HKRT_FN int hkrt_spare(struct hkrt_thread *t)
{
    if (t->spare == NULL)
        t->spare = (struct hkt_record *)hkrt_map_aligned(hkrt_buffer_bytes(), 0, &t->spare_map,
                                                         &t->spare_map_size);
    return t->spare != NULL;
}

/* From the slow path of a hook that found t's buffer full (t's guard held): hands the buffer
 * [buf, held_pos) to the writer and gives the thread its spare. `from` is when the hook began
 * this work. Returns 0 if the writer cannot take it (then the hook writes the buffer itself). */
static HKRT_FN int hkrt_hand_over(struct hkrt_thread *t, uint64_t from)
{
    if (!__atomic_load_n(&g.writer_running, __ATOMIC_ACQUIRE) || t->held_pos == t->buf ||
        !hkrt_spare(t) || !hkrt_wait_handed(t) || !hkrt_file_ready())
        return 0;
    struct hkt_record *full = t->buf;
    void *full_map = t->map;
    size_t full_map_size = t->map_size;
    t->handed_buf = full;
    t->handed_n = (uint64_t)(t->held_pos - full);
    /* Under HOOKCC_MODE=profile a snapshot may have folded the buffer's first records. */
    t->handed_skip = t->fold_mark != NULL && t->fold_mark >= full && t->fold_mark <= t->held_pos
                         ? (uint64_t)(t->fold_mark - full)
                         : 0;
    t->fold_mark = NULL;
    t->buf = t->spare;
    t->buf_end = t->buf + g.buffer_records;
    t->map = t->spare_map;
    t->map_size = t->spare_map_size;
    t->spare = full;
    t->spare_map = full_map;
    t->spare_map_size = full_map_size;
    t->held_pos = t->buf;
    t->handed_pause.from = from;
    t->handed_pause.to = hkrt_ticks();
    __atomic_store_n(&t->handed, 1, __ATOMIC_RELEASE);
    struct hkrt_thread *head = __atomic_load_n(&g.queue, __ATOMIC_RELAXED);
    do
        t->queue_next = head;
    while (!__atomic_compare_exchange_n(&g.queue, &head, t, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
    __atomic_fetch_add(&g.writer_wake, 1, __ATOMIC_RELEASE);
    hkrt_futex_wake(&g.writer_wake);
    return 1;
}

/* ---------------------------------------------------------------------------------------- */
/* The ring (HOOKCC_MODE=ring)                                                              */
/*
 * A flight recorder: each thread's buffer is a ring that starts over when full, and nothing is
 * written until a snapshot: at exit or a fatal signal (the finish), on SIGUSR2 (when the
 * program leaves it at its default action), on hookcc_trace_snapshot(), and when a thread ends
 * (its ring goes with it otherwise). A snapshot writes, for every thread, the window of its
 * ring made since its last snapshot: a RING chunk saying how many records before the window
 * the ring no longer held, then the window's records, oldest first, as PACKED chunks. Another
 * thread's hooks go on during a snapshot (they take no lock): its ring is copied first, and the
 * records it overwrote meanwhile are left out (and counted in the RING chunk). While the
 * snapshot holds the thread's busy flag the thread cannot start its ring over: a hook that
 * fills it then counts its record lost.
 */

static HKRT_FN int hkrt_take_busy(struct hkrt_thread *t);

/* Writes t's window (see above); `upto` is t's position, read by the caller, who holds t's busy
 * flag. Returns the records written. */
static HKRT_FN uint64_t hkrt_ring_window(struct hkrt_thread *t, struct hkt_record *upto)
{
    struct hkt_record *buf = t->buf, *end = t->buf_end;
    const uint64_t n = (uint64_t)(end - buf);
    if (upto < buf || upto > end || !hkrt_wait_handed(t) || !hkrt_file_ready())
        return 0;
    struct hkt_record *mark = t->ring_mark != NULL ? t->ring_mark : buf;
    uint64_t laps = t->ring_laps;
    if (laps == 0 && upto < mark)
        mark = buf; /* cannot be: taken as a fresh ring */
    uint64_t since = laps * n + (uint64_t)(upto - buf) - (uint64_t)(mark - buf);
    if (since == 0)
        return 0;
    /* The older part [from, end) exists once the ring has gone round since the mark. */
    const struct hkt_record *older = NULL;
    uint64_t older_n = 0;
    if (laps > 0) {
        struct hkt_record *from = laps == 1 && mark > upto ? mark : upto;
        older = from;
        if (t != &t_self) {
            /* Copy it, then see how far the thread got meanwhile: what it wrote over is gone. */
            if (hkrt_spare(t)) {
                memcpy(t->spare + (from - buf), from, (size_t)(end - from) * sizeof *from);
                struct hkt_record *now = __atomic_load_n(&t->pos, __ATOMIC_ACQUIRE);
                if (now > from && now <= end)
                    from = now;
                else if (now < upto || now > end)
                    from = end; /* it went round, or is elsewhere: keep none of it */
                older = t->spare + (from - buf);
            } else {
                from = end;
            }
        }
        older_n = (uint64_t)(end - from);
    }
    uint64_t newer_n = (uint64_t)(upto - (laps > 0 ? buf : mark));
    const struct hkt_record *newer = laps > 0 ? buf : mark;
    struct hkt_ring ring = {since - older_n - newer_n};
    hkrt_write_chunk(HKT_CHUNK_RING, t->tid, &ring, sizeof ring, NULL);
    uint64_t written = 0;
    if (older_n != 0)
        written += hkrt_write_packed(t, older, older_n);
    if (newer_n != 0)
        written += hkrt_write_packed(t, newer, newer_n);
    t->ring_laps = 0;
    t->ring_mark = upto;
    return written;
}

/* ---------------------------------------------------------------------------------------- */
/* The profile (HOOKCC_MODE=profile)                                                        */
/*
 * Each thread's records are folded into its calling-context tree (trace_cct.h) where they
 * would be packed: by the writer, from the buffer a hook handed over, or by the hook itself
 * where there is no writer. Nothing is written until a snapshot (as for the ring: exit, a
 * fatal signal, SIGUSR2, hookcc_trace_snapshot(), hookcc_trace_flush() for the calling thread,
 * a thread's end), which folds the records since the last fold and writes the whole tree as a
 * PROFILE chunk; a later one of the same thread replaces it. The time a thread spends handing
 * its buffer over (the PAUSE of a trace) is taken out of its later records, as a reader takes
 * a PAUSE out. The tree grows by mremap, up to HOOKCC_PROFILE_NODES call paths; records of
 * paths beyond that are counted lost.
 */

static HKRT_FN void *hkrt_cct_grow(void *old, size_t old_bytes, size_t new_bytes)
{
    void *p = old == NULL ? mmap(NULL, new_bytes, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                          : mremap(old, old_bytes, new_bytes, MREMAP_MAYMOVE);
    return p == MAP_FAILED ? NULL : p;
}

/* The tree is changed by whoever folds t's records (the writer, or t itself where there is no
 * writer) and read by a snapshot from any thread: never by a hook, so a short spin is fine. */
static HKRT_FN void hkrt_tree_lock(struct hkrt_thread *t)
{
    while (__atomic_exchange_n(&t->tree_busy, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

static HKRT_FN void hkrt_tree_unlock(struct hkrt_thread *t)
{
    __atomic_store_n(&t->tree_busy, 0, __ATOMIC_RELEASE);
}

/* Unmaps t's tree and makes it empty. */
static HKRT_FN void hkrt_cct_free(struct hkrt_thread *t)
{
    struct hkt_cct *c = &t->cct;
    if (c->nodes != NULL)
        munmap(c->nodes, (size_t)c->cap_nodes * sizeof *c->nodes);
    if (c->buckets != NULL)
        munmap(c->buckets, (size_t)c->n_buckets * sizeof *c->buckets);
    if (c->stack != NULL)
        munmap(c->stack, (size_t)c->cap_depth * sizeof *c->stack);
    if (c->unmatched != NULL)
        munmap(c->unmatched, (size_t)c->cap_unmatched * sizeof *c->unmatched);
    hkt_cct_init(c, hkrt_cct_grow, g.profile_nodes);
    if (t->keep.stack != NULL)
        munmap(t->keep.stack, (size_t)t->keep.cap * sizeof *t->keep.stack);
    hkt_keep_init(&t->keep, hkrt_cct_grow, 0);
    t->fold_mark = NULL;
}

/* Folds n of t's records into its tree (hkrt_write_packed's place in this mode). */
/* Folds n of t's records into its tree, under its tree lock; counts and returns the records
 * the tree had no room for. */
static HKRT_FN uint64_t hkrt_fold_into_tree(struct hkrt_thread *t, const struct hkt_record *r,
                                            uint64_t n)
{
    struct hkt_cct *c = &t->cct;
    if (c->grow == NULL)
        hkt_cct_init(c, hkrt_cct_grow, g.profile_nodes);
    hkrt_tree_lock(t);
    uint64_t lost = c->lost;
    hkt_cct_fold(c, r, (size_t)n);
    lost = c->lost - lost;
    hkrt_tree_unlock(t);
    hkrt_count_lost(t, lost);
    return lost;
}

static HKRT_FN uint64_t hkrt_fold(struct hkrt_thread *t, const struct hkt_record *r, uint64_t n)
{
    n = hkrt_window_cut(t, r, n);
    uint64_t lost = hkrt_fold_into_tree(t, r, n);
    __atomic_fetch_add(&g.records, n > lost ? n - lost : 0, __ATOMIC_RELAXED);
    return n;
}

/* HOOKCC_TRACE_START / HOOKCC_TRACE_STOP: keeps, at the start of r, the records of n that are
 * inside the thread's windows (trace_cct.h, "Triggers"), the others dropped; returns how many.
 * Every way records take to the file comes through here once (the records are cut in place:
 * the buffer is the caller's to reuse). */
static HKRT_FN uint64_t hkrt_window_cut(struct hkrt_thread *t, const struct hkt_record *r,
                                        uint64_t n)
{
    struct hookcc_trace_triggers *trig = &hookcc_trace_triggers;
    uint32_t starts = __atomic_load_n(&trig->n_start, __ATOMIC_ACQUIRE);
    uint32_t stops = __atomic_load_n(&trig->n_stop, __ATOMIC_ACQUIRE);
    if (starts == 0 || n == 0)
        return n;
    t->window.start = (const uint64_t *)trig->start;
    t->window.n_start = starts < HKRT_MAX_TRIGGERS ? starts : HKRT_MAX_TRIGGERS;
    t->window.stop = (const uint64_t *)trig->stop;
    t->window.n_stop = stops < HKRT_MAX_TRIGGERS ? stops : HKRT_MAX_TRIGGERS;
    return hkt_window_filter(&t->window, (struct hkt_record *)(uintptr_t)r, (size_t)n);
}

HKRT_EXPORT int hookcc_trace_trigger(void (*start)(void), void (*stop)(void))
{
    int saved_errno = errno;
    struct hookcc_trace_triggers *trig = &hookcc_trace_triggers;
    hookcc_trace_flush(); /* the calling thread's records so far, by the table as it was */
    hkrt_lock();
    uint32_t starts = trig->n_start, stops = trig->n_stop;
    int ok = start != NULL && starts < HKRT_MAX_TRIGGERS && (stop == NULL || stops < HKRT_MAX_TRIGGERS);
    if (ok) {
        if (stop != NULL) {
            trig->stop[stops] = (uint64_t)(uintptr_t)stop;
            __atomic_store_n(&trig->n_stop, stops + 1, __ATOMIC_RELEASE);
        }
        trig->start[starts] = (uint64_t)(uintptr_t)start;
        __atomic_store_n(&trig->n_start, starts + 1, __ATOMIC_RELEASE);
    }
    hkrt_unlock();
    errno = saved_errno;
    return ok ? 0 : -1;
}

HKRT_EXPORT void hookcc_trace_triggers_clear(void)
{
    int saved_errno = errno;
    hookcc_trace_flush();
    __atomic_store_n(&hookcc_trace_triggers.n_start, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&hookcc_trace_triggers.n_stop, 0, __ATOMIC_RELEASE);
    errno = saved_errno;
}

/* HOOKCC_MIN_DURATION in ticks: from the target's fixed rate, else measured against the
 * monotonic clock from the start (the first buffer written within 1 ms of it waits for the
 * rest of that millisecond, once: 1 ms gives the rate to well under 1 %). */
static HKRT_FN uint64_t hkrt_min_ticks(void)
{
    uint64_t ticks = __atomic_load_n(&g.min_ticks, __ATOMIC_RELAXED);
    if (ticks != 0)
        return ticks;
    uint64_t rate = hkrt_ticks_per_second_fixed();
    if (rate == 0) {
        struct hkrt_clock_point now = hkrt_clock_point_after(&g.clock_start, 1000000);
        rate = hkrt_ticks_per_second(&g.clock_start, &now);
    }
    ticks = (uint64_t)((double)g.min_duration_ns * (double)rate / 1e9 + 0.5);
    if (ticks == 0)
        ticks = 1;
    __atomic_store_n(&g.min_ticks, ticks, __ATOMIC_RELAXED);
    return ticks;
}

/* HOOKCC_MIN_DURATION: folds n of t's records into its tree (every call, for the report), then
 * leaves out of them the calls shorter than the threshold (for the trace); returns the records
 * kept, now at the start of r. */
static HKRT_FN uint64_t hkrt_fold_and_keep(struct hkrt_thread *t, struct hkt_record *r,
                                           uint64_t n)
{
    hkrt_fold_into_tree(t, r, n);
    if (t->keep.grow == NULL)
        hkt_keep_init(&t->keep, hkrt_cct_grow, 0);
    t->keep.min_ticks = hkrt_min_ticks();
    return t->keep.min_ticks != 0 ? hkt_keep_filter(&t->keep, r, (size_t)n) : n;
}

/* The thread's time handing its buffer over, taken out of its later records. */
static HKRT_FN void hkrt_profile_pause(struct hkrt_thread *t, const struct hkt_pause *pause)
{
    if (pause->to > pause->from) {
        hkrt_tree_lock(t);
        t->cct.shift += pause->to - pause->from;
        hkrt_tree_unlock(t);
    }
}

/* Folds t's records from where the last fold of this buffer ended up to `upto` (the caller
 * holds t's busy flag or is t); the next fold of this buffer starts at `upto`. */
static HKRT_FN uint64_t hkrt_fold_upto(struct hkrt_thread *t, struct hkt_record *upto)
{
    struct hkt_record *from = t->fold_mark;
    if (from == NULL || from < t->buf || from > upto)
        from = t->buf;
    if (upto < t->buf || upto > t->buf_end)
        return 0;
    if (!hkrt_wait_handed(t)) {
        hkrt_count_lost(t, (uint64_t)(upto - from));
        return 0;
    }
    t->fold_mark = upto;
    return hkrt_fold(t, from, (uint64_t)(upto - from));
}

/* Writes t's tree as a PROFILE chunk (with its CHECK chunk), if it has anything. */
static HKRT_FN void hkrt_write_profile(struct hkrt_thread *t)
{
    struct hkt_cct *c = &t->cct;
    if (!hkrt_file_ready() || !hkrt_file_ok())
        return;
    hkrt_tree_lock(t);
    const size_t head = sizeof(struct hkt_chunk_header) + sizeof(struct hkt_profile);
    size_t cap = head + hkt_cct_bound(c);
    void *map = c->started ? mmap(NULL, cap, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                           : MAP_FAILED;
    if (map == MAP_FAILED) {
        hkrt_tree_unlock(t);
        return;
    }
    struct hkt_profile fixed;
    size_t stream = hkt_cct_encode(c, t->sequence, &fixed, (uint8_t *)map + head);
    hkrt_tree_unlock(t);
    struct hkt_chunk_header header = {HKT_CHUNK_PROFILE,
                                      (uint32_t)(sizeof fixed + stream), t->tid};
    memcpy(map, &header, sizeof header);
    memcpy((char *)map + sizeof header, &fixed, sizeof fixed);
    struct hkrt_check_chunk trailer;
    hkrt_check_chunk(&trailer, t->tid, hkt_checksum(map, head + stream));
    struct iovec iov[2] = {{map, head + stream}, {&trailer, sizeof trailer}};
    if (hkrt_space_allows(head + stream + sizeof trailer)) {
        uint64_t off = __atomic_fetch_add(&g.file_end, head + stream + sizeof trailer,
                                          __ATOMIC_RELAXED);
        hkrt_pwritev_all(iov, 2, off);
    }
    munmap(map, cap);
}

/* The calling thread's part of a snapshot: its ring's window, or its tree with its records up
 * to now. (Another thread's tree is written as its last hand-over left it: folding that
 * thread's buffer would need its busy flag, and its hooks would lose every record that came to
 * a full buffer meanwhile.) */
static HKRT_FN void hkrt_snapshot_thread(struct hkrt_thread *t, struct hkt_record *upto)
{
    if (g.ring) {
        hkrt_ring_window(t, upto);
    } else if (hkrt_file_ready()) {
        hkrt_fold_upto(t, upto);
        hkrt_write_profile(t);
    }
}

/* A snapshot of every thread's ring, the process going on. From a signal handler (`in_signal`:
 * SIGUSR2) the lock is taken with a bounded wait, and the snapshot is skipped if it cannot be. */
static HKRT_FN void hkrt_ring_snapshot(int in_signal)
{
    if (!(g.ring || g.profile) || __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) != HKRT_RUNNING)
        return;
    struct hkrt_thread *self = &t_self;
    int mine = self->life == HKRT_THREAD_LIVE && hkrt_guard_enter(self);
    uint64_t from = hkrt_ticks();
    int locked;
    if (in_signal)
        locked = hkrt_lock_from_signal();
    else
        locked = (hkrt_lock(), 1);
    if (locked) {
        for (struct hkrt_thread *t = g.threads; t != NULL; t = t->next) {
            if (t->final_written || t->life != HKRT_THREAD_LIVE)
                continue;
            if (t == self) {
                if (mine)
                    hkrt_snapshot_thread(t, t->held_pos);
                continue;
            }
            if (g.profile) {
                /* Its tree as its last hand-over left it, t going on (its busy flag is not
                 * taken: a hook of t that found its buffer full meanwhile would lose its
                 * record). */
                if (hkrt_file_ready())
                    hkrt_write_profile(t);
                continue;
            }
            if (!hkrt_take_busy(t))
                continue;
            struct hkt_record *upto = t->sig_redirect ? t->sig_saved_pos
                                                      : __atomic_load_n(&t->pos, __ATOMIC_ACQUIRE);
            hkrt_snapshot_thread(t, upto);
            __atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
        }
        hkrt_unlock();
    }
    if (mine && g.profile && self->final_written == 0) {
        /* The snapshot's time is the runtime's: taken out of the calling thread's later
         * records, as a PAUSE is (its tree took in its records up to the snapshot). */
        struct hkt_pause pause = {from, hkrt_ticks()};
        hkrt_profile_pause(self, &pause);
    }
    if (mine)
        hkrt_guard_leave(self);
}

static HKRT_FN void hkrt_on_snapshot_signal(int sig)
{
    (void)sig;
    int saved_errno = errno;
    hkrt_ring_snapshot(1);
    errno = saved_errno;
}

HKRT_EXPORT void hookcc_trace_snapshot(void)
{
    int saved_errno = errno;
    hkrt_ring_snapshot(0);
    errno = saved_errno;
}

/* ---------------------------------------------------------------------------------------- */
/* Hooks                                                                                    */

static HKRT_FN int hkrt_recording(void)
{
    return __atomic_load_n(&g_hot.enabled, __ATOMIC_RELAXED) &&
           __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == HKRT_RUNNING;
}

/* Hook pairs around an empty body, as the compiler inserts them into a function. */
static HKRT_FN __attribute__((noinline)) void hkrt_overhead_loop(unsigned pairs)
{
    for (unsigned i = 0; i < pairs; i++) {
        __hookcc_enter((void *)hkrt_overhead_loop);
        __asm__ volatile("" ::: "memory");
        __hookcc_exit((void *)((uintptr_t)hkrt_overhead_loop + HKT_EXIT_BIT));
    }
}

/* The mean of the fastest 90 % of v (sorted in place), rounded: the slowest are interrupts and
 * cache misses; a mean rather than a median, because a coarse counter (some VMs' TSC moves in
 * steps of 20) gives a median of one step or two where the mean gets between them. */
static HKRT_FN uint64_t hkrt_trimmed_mean(uint64_t *v, unsigned n)
{
    for (unsigned i = 1; i < n; i++) /* insertion sort: n is small */
        for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    unsigned kept = n - n / 10;
    uint64_t sum = 0;
    for (unsigned i = 0; i < kept; i++)
        sum += v[i];
    return (sum + kept / 2) / kept;
}

/* Measures what the hooks cost (hook-overhead compensation: docs/trace-format.md, "OVERHEAD"),
 * once per process, on the first thread with an empty buffer while recording is on (the main
 * thread in the runtime's constructor, unless tracing starts disabled), the guard held: the
 * real hooks run HKRT_OVERHEAD_PAIRS times into the buffer, after the slot the first record
 * will take, with signals blocked so that no handler's record lands among them; the records
 * are then dropped (pos goes back to the guard's NULL). From their times: the
 * mean time from an entry to its exit (the part of the two hooks inside the function's window)
 * and from an exit to the next entry (the part outside), written as an OVERHEAD chunk. Not
 * measured if the buffer is too small to hold the pairs (HOOKCC_BUFFER_RECORDS). */
static HKRT_FN void hkrt_measure_overhead(struct hkrt_thread *t)
{
    const unsigned pairs = HKRT_OVERHEAD_PAIRS;
    if (__atomic_exchange_n(&g.overhead_taken, 1, __ATOMIC_ACQ_REL) ||
        (size_t)(t->buf_end - t->buf) < 2u * pairs + 2u)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    struct hkt_record *start = t->buf + 1;
    __atomic_store_n(&t->pos, start, __ATOMIC_RELAXED);
    hkrt_overhead_loop(pairs);
    struct hkt_record *end = __atomic_load_n(&t->pos, __ATOMIC_RELAXED);
    __atomic_store_n(&t->pos, (struct hkt_record *)NULL, __ATOMIC_RELAXED);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (end != start + 2u * pairs)
        return; /* recording was switched off meanwhile, or a buffer boundary came */
    uint64_t inside[HKRT_OVERHEAD_PAIRS], outside[HKRT_OVERHEAD_PAIRS - 1];
    for (unsigned i = 0; i < pairs; i++) {
        inside[i] = start[2 * i + 1].time - start[2 * i].time;
        if (i + 1 < pairs)
            outside[i] = start[2 * i + 2].time - start[2 * i + 1].time;
    }
    g.overhead.self_ticks = hkrt_trimmed_mean(inside, pairs);
    g.overhead.child_ticks = hkrt_trimmed_mean(outside, pairs - 1);
    g.overhead.pairs = pairs;
    hkrt_write_chunk(HKT_CHUNK_OVERHEAD, 0, &g.overhead, sizeof g.overhead, NULL);
}

/* Reached when pos is at a buffer boundary: the thread's first hook (NULL), a full buffer (its
 * end), a fresh one (its start), a hook re-entered from inside the runtime (NULL while the
 * guard is held), or any hook while recording is off (full_mask 0). Records `word` (the
 * function's address, + 2 for an exit) unless tracing is off. */
static HKRT_COLD void hkrt_record_slow(void *word)
{
    if (HKRT_UNLIKELY(t_self.sig_redirect)) {
        /* In a signal handler that interrupted a hook: this record cannot be kept in order
         * (see "Signal handlers"), so it is counted. */
        if (hkrt_recording())
            hkrt_count_lost(&t_self, 1);
        return;
    }
    /* Off (HOOKCC_DISABLE, hookcc_trace_disable, finished): back at once, touching nothing. Not
     * before the start: `enabled` is 1 until then, so the first hook starts the runtime. */
    if (!__atomic_load_n(&g_hot.enabled, __ATOMIC_RELAXED) &&
        __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) != HKRT_UNINIT)
        return;
    struct hkrt_thread *t = &t_self;
    int saved_errno = errno;
    if (!hkrt_guard_enter(t)) {
        /* Re-entered (the guard's NULL pos sent us here), or the finisher took this thread. */
        hkrt_count_lost(t, 1);
        errno = saved_errno;
        return;
    }
    hkrt_ensure_started();
    if (!hkrt_recording())
        goto out; /* disabled or finished: not recorded, not counted */
    if (t->life == HKRT_THREAD_LIVE) {
        /* At the buffer's end (full) or at its start (nothing to write: after a flush, a fork,
         * or a hook that found it full raced with a signal handler that flushed it). The time
         * the write takes is the runtime's, not the program's: a PAUSE chunk says how long it
         * was, so that the reader can take it out (its own small write is not in it). */
        if (g.ring) {
            /* The ring starts over: nothing is written until a snapshot. */
            if (t->held_pos == t->buf_end)
                t->ring_laps++;
            t->held_pos = t->buf;
        } else {
            uint64_t from = hkrt_ticks();
            if (!hkrt_hand_over(t, from)) {
                /* Only after records were written: past HOOKCC_MAX_BYTES, where none are, the
                 * file must not keep growing by a PAUSE chunk per buffer. */
                uint64_t wrote = hkrt_write_events(t, t->held_pos);
                t->held_pos = t->buf;
                t->fold_mark = NULL;
                struct hkt_pause pause = {from, hkrt_ticks()};
                if (g.profile || g.min_duration_ns != 0)
                    hkrt_profile_pause(t, &pause);
                if (!g.profile && (wrote != 0 || g.min_duration_ns != 0) && hkrt_file_ok())
                    hkrt_write_chunk(HKT_CHUNK_PAUSE, t->tid, &pause, sizeof pause, NULL);
                hkrt_switches_read_own(t);
            }
        }
    } else if (t->life == HKRT_THREAD_DEAD || !hkrt_thread_attach(t)) {
        hkrt_count_lost(t, 1);
        goto out;
    }
    if (!__atomic_load_n(&g.overhead_taken, __ATOMIC_RELAXED))
        hkrt_measure_overhead(t); /* the buffer is empty: just attached, or just written */
    /* The timestamp is taken after the work above, so every record of a thread is later than
     * the one before and than the CLOCK chunk's first_tick. */
    t->held_pos->time = hkrt_ticks();
    t->held_pos->address_kind = (uint64_t)(uintptr_t)word;
    t->held_pos++;
out:
    hkrt_guard_leave(t);
    errno = saved_errno;
}

/* The whole hot path: with local-exec TLS and the kind already in `word`, ten instructions on
 * x86-64 with the ret, the slow path reached by a conditional tail jump (docs/performance.md). */
static inline __attribute__((always_inline, no_instrument_function)) void
hkrt_record(void *word)
{
    struct hkt_record *p = t_self.pos;
    /* A plain load of full_mask: clang does not fold an __atomic load into the test, which
     * costs an instruction. Each hook is its own call, so it is read afresh every time. */
    if (HKRT_UNLIKELY(((uintptr_t)p & g_hot.full_mask) == 0)) {
        hkrt_record_slow(word);
        return;
    }
#if defined(HKRT_CLOCK_IS_MONOTONIC_NS)
    /* The clock is a call out of this function (clock_gettime): a signal handler that runs
     * during it is not seen "inside a hook" by hkrt_signal_wrapper, and its records would land
     * at p. So the position is read again after the clock: if a handler moved it, start over
     * (with a new time, which keeps the thread's records in time order). From the second
     * read to the store, the code is this function's own. */
    for (;;) {
        uint64_t now = hkrt_ticks();
        struct hkt_record *again = __atomic_load_n(&t_self.pos, __ATOMIC_RELAXED);
        if (HKRT_UNLIKELY(again != p)) {
            p = again;
            if (((uintptr_t)p & g_hot.full_mask) == 0) {
                hkrt_record_slow(word);
                return;
            }
            continue;
        }
        p->time = now;
        break;
    }
#elif defined(HKRT_TICKS_SPLIT) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* rdtsc gives edx:eax; storing the halves as they come costs 2 instructions instead of 4
     * (shift, or, store). memcpy: no aliasing question. */
    uint32_t lo, hi;
    hkrt_ticks_split(&lo, &hi);
    memcpy((char *)&p->time, &lo, sizeof lo);
    memcpy((char *)&p->time + sizeof lo, &hi, sizeof hi);
#else
    p->time = hkrt_ticks();
#endif
    p->address_kind = (uint64_t)(uintptr_t)word;
    /* Release: the finisher, on another thread at exit, reads pos and then the records below
     * it. A plain mov on x86 (TSO); stlr on AArch64. */
    __atomic_store_n(&t_self.pos, p + 1, __ATOMIC_RELEASE);
}

/* The two hooks, alone in their section: a signal handler's wrapper tells from the interrupted
 * program counter whether a hook was interrupted (see "Signal handlers"). */
#define HKRT_HOOK_SECTION __attribute__((section("hkrt_hooks"), aligned(16)))
extern const char __start_hkrt_hooks[] __attribute__((visibility("hidden")));
extern const char __stop_hkrt_hooks[] __attribute__((visibility("hidden")));

HKRT_EXPORT HKRT_HOOK_SECTION void __hookcc_enter(void *fn)
{
    hkrt_record(fn);
}

HKRT_EXPORT HKRT_HOOK_SECTION void __hookcc_exit(void *fn_exit)
{
    hkrt_record(fn_exit);
}

/* The two records of a resync, next to each other in the thread's stream: a signal handler
 * that comes between them runs "inside a hook" (this section), so its records are counted
 * lost rather than put between them (see "Signal handlers"). */
HKRT_EXPORT HKRT_HOOK_SECTION void __hookcc_resync(void *fn)
{
    hkrt_record((void *)(uintptr_t)HKT_RESYNC_ESCAPE);
    hkrt_record(fn);
}

/* ---------------------------------------------------------------------------------------- */
/* Finishing: exit, fatal signals                                                           */

/* Takes another thread's busy flag, waiting up to ~1 s for it to finish a flush. */
static HKRT_FN int hkrt_take_busy(struct hkrt_thread *t)
{
    for (int i = 0; i < 1000; i++) {
        int expected = 0;
        if (__atomic_compare_exchange_n(&t->busy, &expected, 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return 1;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return 0;
}

#define HKRT_SALVAGE_THREADS 64 /* threads whose THREAD chunk a salvage can write again */

/* What hkrt_scan_chunks finds before a cut. */
struct hkrt_scan {
    uint64_t kept;        /* records of the EVENTS and PACKED chunks */
    uint64_t last_events; /* start of the last EVENTS or PACKED chunk, 0 if none */
    unsigned unnamed;     /* threads with EVENTS and no THREAD chunk after them (at most
                           * HKRT_SALVAGE_THREADS are kept in tids) */
    uint64_t tids[HKRT_SALVAGE_THREADS];
};

/* Reads the chunk headers from the first chunk up to `*cut` at most, into *scan, and sets *cut
 * to the end of the last whole chunk. Zero words (holes) are skipped, as a reader does. */
static HKRT_FN void hkrt_scan_chunks(uint64_t *cut, struct hkrt_scan *scan)
{
    uint64_t off = HKT_HEADER_SIZE, end_of_whole = HKT_HEADER_SIZE;
    scan->kept = scan->last_events = 0;
    scan->unnamed = 0;
    while (off + sizeof(struct hkt_chunk_header) <= *cut) {
        struct hkt_chunk_header h;
        if (pread(g.fd, &h, sizeof h, (off_t)off) != (ssize_t)sizeof h)
            break;
        if (h.type == 0 && h.length == 0) {
            off += HKT_CHUNK_ALIGN;
            continue;
        }
        uint64_t end = off + sizeof h + h.length;
        if (end > *cut || h.length % HKT_CHUNK_ALIGN != 0)
            break;
        int events = h.type == HKT_CHUNK_EVENTS || h.type == HKT_CHUNK_PACKED;
        if (events || h.type == HKT_CHUNK_THREAD) {
            unsigned i = 0;
            while (i < scan->unnamed && scan->tids[i] != h.thread)
                i++;
            if (events) {
                struct hkt_packed packed = {0, 0, 0};
                if (h.type == HKT_CHUNK_EVENTS)
                    scan->kept += h.length / sizeof(struct hkt_record);
                else if (h.length >= sizeof packed &&
                         pread(g.fd, &packed, sizeof packed, (off_t)(off + sizeof h)) ==
                             (ssize_t)sizeof packed)
                    scan->kept += packed.records;
                scan->last_events = off;
                if (i == scan->unnamed && i < HKRT_SALVAGE_THREADS)
                    scan->tids[scan->unnamed++] = h.thread;
            } else if (i < scan->unnamed) {
                scan->tids[i] = scan->tids[--scan->unnamed];
            }
        }
        off = end_of_whole = end;
    }
    *cut = end_of_whole;
}

/* The THREAD chunk of a thread whose own was not written (the write failure came first): its
 * name and sequence number if it is still registered, else no name and a fresh number. */
static HKRT_FN void hkrt_salvage_thread_chunk(uint64_t tid, uint64_t *fresh_seq)
{
    char name[HKRT_THREAD_NAME_MAX] = "";
    struct hkt_thread_name seq = {0};
    for (struct hkrt_thread *t = g.threads; t != NULL; t = t->next) {
        if (t->tid == tid) {
            hkrt_thread_name(t, name);
            seq.sequence = t->sequence;
        }
    }
    if (seq.sequence == 0)
        seq.sequence = ++*fresh_seq;
    hkrt_write_chunk(HKT_CHUNK_THREAD, tid, &seq, sizeof seq, name);
}

/* The header as the finish rewrites it, for a file that holds `kept` of the `made` records. */
static HKRT_FN struct hkt_header hkrt_final_header(const struct hkt_clock *clock, uint64_t kept,
                                                  uint64_t made)
{
    struct hkt_header h = g.header;
    h.ticks_per_second = clock->ticks_per_second;
    h.flags = HKT_FLAG_COMPLETE | HKT_FLAG_CHECKED;
    h.records = kept;
    h.lost = made - kept;
    return h;
}

/* The CLOCK chunk, with the checksum of the header `h` that the finish writes after it. */
static HKRT_FN void hkrt_write_clock(const struct hkt_clock *clock, const struct hkt_header *h)
{
    struct hkt_clock_checked c = {*clock, hkt_checksum(h, sizeof *h)};
    hkrt_write_chunk(HKT_CHUNK_CLOCK, 0, &c, sizeof c, NULL);
}

/* After a failed write (disk full, RLIMIT_FSIZE): cuts the file where the first failed chunk
 * began (later chunks, even whole ones, go: they could sit behind a hole), then writes there
 * the THREAD chunks that were not written and the CLOCK chunk; if they do not fit, drops the
 * last EVENTS chunk and tries again, so the file ends as a finished one does. Sets *h to the
 * header to write (a rewrite in place, which needs no new space), for the records the file
 * then holds of the `made`. Returns 0 if nothing can be salvaged (the header was never
 * written, or the file cannot be cut). */
static HKRT_FN int hkrt_salvage(const struct hkt_clock *clock, uint64_t made,
                                struct hkt_header *h)
{
    uint64_t cut = __atomic_load_n(&g.failed_off, __ATOMIC_RELAXED);
    if (g.fd < 0 || cut == UINT64_MAX)
        return 0;
    for (;;) {
        struct hkrt_scan scan;
        hkrt_scan_chunks(&cut, &scan);
        *h = hkrt_final_header(clock, scan.kept, made);
        if (ftruncate(g.fd, (off_t)cut) != 0)
            return 0;
        __atomic_store_n(&g.file_end, cut, __ATOMIC_RELAXED);
        __atomic_store_n(&g.write_failed, 0, __ATOMIC_RELEASE);
        uint64_t fresh_seq = g.thread_seq;
        for (unsigned i = 0; i < scan.unnamed; i++)
            hkrt_salvage_thread_chunk(scan.tids[i], &fresh_seq);
        hkrt_write_clock(clock, h);
        if (hkrt_file_ok())
            return 1;
        if (scan.last_events == 0)
            return ftruncate(g.fd, (off_t)cut) == 0; /* no CLOCK; the header has the rate */
        cut = scan.last_events;
    }
}

/* Finishes the file: every thread's records and last chunks, MODULE, CLOCK, then the header.
 * Runs once; later calls return at once. Other threads may still be running hooks (exit() does
 * not stop them): hooks that passed their "full" test before recording was switched off may
 * land after this thread read their pos, and are not in the file. */
static HKRT_FN void hkrt_finish(int from_signal)
{
    if (__atomic_exchange_n(&g.finishing, 1, __ATOMIC_ACQ_REL))
        return;
    __atomic_store_n(&g.finisher_tid, (int)hkrt_gettid(), __ATOMIC_RELEASE);
    hkrt_set_enabled(0);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int locked = 1;
    if (from_signal)
        locked = hkrt_lock_from_signal();
    else if (__atomic_load_n(&g.lock_owner, __ATOMIC_RELAXED) == hkrt_my_tid_for_lock())
        locked = 0; /* exit() from a signal handler that interrupted us holding it */
    else
        hkrt_lock();
    if (g.state != HKRT_RUNNING)
        goto out;

    for (struct hkrt_thread *t = g.threads; t != NULL; t = t->next) {
        if (t->final_written)
            continue;
        struct hkt_record *upto;
        if (t == &t_self) {
            /* Busy already only if we got here from inside our own slow path (a fault in it,
             * or exit() from an interposed function it called): then held_pos is the pos. */
            int was_busy = __atomic_exchange_n(&t->busy, 1, __ATOMIC_ACQUIRE);
            upto = was_busy ? t->held_pos : t->sig_redirect ? t->sig_saved_pos : t->pos;
        } else {
            if (!hkrt_take_busy(t))
                continue; /* stuck in a write for a second: leave it rather than write twice */
            /* Kept busy from here on: the thread can no longer write its own buffer. Not in its
             * slow path, so its pos is the real one. */
            upto = t->sig_redirect ? t->sig_saved_pos : __atomic_load_n(&t->pos, __ATOMIC_ACQUIRE);
        }
        if (upto < t->buf || upto > t->buf_end)
            upto = t->buf;
        hkrt_thread_final_chunks(t, upto, 0);
    }

    /* A SWITCH chunk the writer is writing lands before the CLOCK chunk: it checks `finishing`
     * under sw_lock before each. */
    if (hkrt_sw_lock(1))
        hkrt_sw_unlock();
    if (__atomic_load_n(&g.lost_unattributed, __ATOMIC_RELAXED) != 0)
        hkrt_file_ready(); /* a fork child with only losses still says so */
    hkrt_write_modules(); /* again, for libraries dlopen'ed since the start */
    struct hkrt_clock_point end = hkrt_clock_point_after(&g.clock_start, HKRT_CALIBRATION_MIN_NS);
    struct hkt_clock clock = {hkrt_ticks_per_second(&g.clock_start, &end),
                              g.clock_start.ticks, end.ticks};
    uint64_t written = __atomic_load_n(&g.records, __ATOMIC_RELAXED);
    uint64_t made = written + __atomic_load_n(&g.lost_reported, __ATOMIC_RELAXED) +
                    __atomic_load_n(&g.lost_unattributed, __ATOMIC_RELAXED);
    struct hkt_header h = hkrt_final_header(&clock, written, made);
    int finished = 0;
    if (hkrt_file_ok()) {
        hkrt_write_clock(&clock, &h);
        finished = hkrt_file_ok();
    }
    if (!finished)
        finished = hkrt_salvage(&clock, made, &h);
    if (finished) {
        /* Rewrite the whole header in one pwrite: the in-place fields are then consistent with
         * each other, and the fields around them are unchanged. */
        hkrt_pwrite_all(&h, sizeof h, 0);
    } else {
        /* Not even the header could be written (a disk with less than a block free): an empty
         * or cut header is no trace, only a file to wonder about. It is ours: removed. */
        struct stat st;
        if (g.fd >= 0 && g.fd_regular && fstat(g.fd, &st) == 0 && st.st_size < HKT_HEADER_SIZE &&
            g.opened_path[0] != '\0' && unlink(g.opened_path) == 0)
            hkrt_warn_hint("no trace: not even its header could be written to", g.opened_path, 0,
                           " (is the disk full?); the empty file was removed");
    }
    /* The fd stays open: a late hook in another thread must never write to a reused fd. */
    __atomic_store_n(&g.state, HKRT_FINISHED, __ATOMIC_RELEASE);
out:
    if (locked)
        hkrt_unlock();
}

static HKRT_FN void hkrt_at_exit(void)
{
    int saved_errno = errno;
    hkrt_finish(0);
    errno = saved_errno;
}

/* _exit and _Exit end the process without atexit handlers: a forked child that ends with
 * _exit (as most do) lost every record it had buffered, uncounted. The program's calls to them
 * come here (the executable's definition interposes libc's; libc's own calls do not), the file
 * is finished as for a fatal signal (bounded waits: _exit is also called from signal
 * handlers), and the process exits. Not in a vfork or posix_spawn child, which shares the
 * parent's memory, and so its runtime: its pid is not this image's, and it exits at once.
 * Weak: a program that defines its own _exit keeps it. */
HKRT_EXPORT __attribute__((noreturn, weak)) void _exit(int status)
{
    if (__atomic_load_n(&g.image_pid, __ATOMIC_RELAXED) == (int)syscall(SYS_getpid) &&
        __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == HKRT_RUNNING)
        hkrt_finish(1);
    for (;;)
        syscall(SYS_exit_group, status);
}

HKRT_EXPORT __attribute__((noreturn, weak)) void _Exit(int status)
{
    _exit(status);
}

/* Finishes the file, then gives the signal to whoever had it before: the previous action is
 * restored, and a signal that was sent (kill, raise, abort: si_code <= 0) is raised again, to
 * be delivered when this handler returns. A fault (si_code > 0) needs nothing: returning
 * re-executes the faulting instruction, which now meets the previous action. */
static HKRT_FN void hkrt_on_fatal_signal(int sig, siginfo_t *info, void *context)
{
    (void)context;
    int saved_errno = errno;
    hkrt_finish(1);
    /* If another thread is finishing (exit() racing a crash), give it time to complete the
     * file before the signal kills the process. */
    for (int i = 0; i < 1000 && __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == HKRT_RUNNING &&
                    __atomic_load_n(&g.finisher_tid, __ATOMIC_ACQUIRE) != (int)hkrt_gettid();
         i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    for (int i = 0; i < HKRT_NFATAL; i++) {
        if (hkrt_fatal_signals[i] == sig && g_handler_installed[i]) {
            hkrt_real_sigaction(sig, &g_old_actions[i], NULL);
            g_handler_installed[i] = 0;
        }
    }
    if (info == NULL || info->si_code <= 0)
        raise(sig);
    errno = saved_errno;
}

/* ---------------------------------------------------------------------------------------- */
/* Signal handlers                                                                          */
/*
 * A hook keeps its position in a register between its load of pos and its store of pos + 1.
 * A signal handler that runs in between and calls instrumented functions writes its records
 * from that same pos on; the interrupted hook then overwrites the first and moves pos back
 * (the rest are overwritten later, or, if the handler flushed the buffer, written twice). The
 * hot path cannot see that without costing every call, so the runtime wraps the program's
 * handlers instead: sigaction and signal are interposed (the executable's definitions come
 * first), every handler the program installs runs through hkrt_signal_wrapper, which looks at
 * the interrupted program counter. Inside a hook (the hkrt_hooks section) it sets the thread's
 * pos to NULL for the handler's duration, so the handler's hooks go to the slow path and are
 * counted lost; anywhere else the handler's records nest into the thread's stream where it
 * was interrupted, which is what the TI Dynamic Call Graph shows for an interrupt.
 * Not covered: handlers installed by libc-internal calls and by raw syscalls; a handler that
 * leaves by longjmp after interrupting a hook (the thread's later records are then counted
 * lost). */

#if HKRT_WRAP_HANDLERS
static struct sigaction g_user_actions[NSIG]; /* the program's handlers, as it gave them */

typedef int (*hkrt_sigaction_fn)(int, const struct sigaction *, struct sigaction *);


static HKRT_FN uintptr_t hkrt_context_pc(const void *context)
{
    const ucontext_t *uc = context;
    if (uc == NULL)
        return 0;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__i386__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_EIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#elif defined(__arm__)
    return (uintptr_t)uc->uc_mcontext.arm_pc;
#elif defined(__riscv)
    return (uintptr_t)uc->uc_mcontext.__gregs[REG_PC];
#elif defined(__s390x__)
    return (uintptr_t)uc->uc_mcontext.psw.addr;
#else
    return 0; /* unknown: taken as "in a hook", the safe side */
#endif
}

static HKRT_FN void hkrt_signal_wrapper(int sig, siginfo_t *info, void *context)
{
    struct sigaction user = g_user_actions[sig];
    struct hkrt_thread *t = &t_self;
    uintptr_t pc = hkrt_context_pc(context);
    int in_hook = pc == 0 || (pc >= (uintptr_t)__start_hkrt_hooks &&
                              pc < (uintptr_t)__stop_hkrt_hooks);
    int redirect = in_hook && t->life == HKRT_THREAD_LIVE && !t->sig_redirect;
    if (redirect) {
        t->sig_saved_pos = t->pos; /* what the interrupted hook loaded, or already stored */
        t->sig_redirect = 1;
        t->pos = NULL;
    }
    if (user.sa_flags & SA_SIGINFO)
        user.sa_sigaction(sig, info, context);
    else if (user.sa_handler != SIG_DFL && user.sa_handler != SIG_IGN)
        user.sa_handler(sig);
    if (redirect) {
        t->pos = t->sig_saved_pos;
        t->sig_redirect = 0;
    }
}

/* Weak: a runtime that interposes them too (a sanitizer's) wins, and handlers are then not
 * wrapped, as before, instead of the link failing on a duplicate symbol. */
HKRT_EXPORT __attribute__((weak)) int sigaction(int sig, const struct sigaction *act,
                                                struct sigaction *old)
{
    if (sig <= 0 || sig >= NSIG || act == NULL ||
        (!(act->sa_flags & SA_SIGINFO) &&
         (act->sa_handler == SIG_DFL || act->sa_handler == SIG_IGN))) {
        /* A query, a default or an ignore: nothing to wrap. */
        struct sigaction prev;
        int r = __sigaction(sig, act, &prev);
        if (r == 0 && old != NULL) {
            if (prev.sa_sigaction == hkrt_signal_wrapper && sig > 0 && sig < NSIG)
                *old = g_user_actions[sig];
            else
                *old = prev;
        }
        return r;
    }
    struct sigaction wrapped = *act;
    wrapped.sa_sigaction = hkrt_signal_wrapper;
    wrapped.sa_flags |= SA_SIGINFO;
    struct sigaction before = g_user_actions[sig];
    g_user_actions[sig] = *act; /* before the wrapper can run with it */
    struct sigaction prev;
    int r = __sigaction(sig, &wrapped, &prev);
    if (r != 0) {
        g_user_actions[sig] = before;
        return r;
    }
    if (old != NULL)
        *old = prev.sa_sigaction == hkrt_signal_wrapper ? before : prev;
    return 0;
}

/* signal() in glibc calls the internal sigaction, not ours: interposed too, with its BSD
 * semantics (handler stays installed, interrupted calls restart). */
HKRT_EXPORT __attribute__((weak)) sighandler_t signal(int sig, sighandler_t handler)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sig > 0 && sig < NSIG)
        sigaddset(&sa.sa_mask, sig);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}
#endif /* HKRT_WRAP_HANDLERS */

/* ---------------------------------------------------------------------------------------- */
/* fork                                                                                     */

static HKRT_FN void hkrt_atfork_prepare(void)
{
    hkrt_lock(); /* no thread is halfway through changing the list when the copy is taken */
}

static HKRT_FN void hkrt_atfork_parent(void)
{
    hkrt_unlock();
}

/* The child has one thread, this one. It forgets the parent's threads and file, and starts a
 * file of its own: records this thread buffered before the fork are the parent's (the parent
 * writes them), so they are dropped here. The frames open at the fork close in the child as
 * unmatched exits. */
static HKRT_FN void hkrt_atfork_child(void)
{
    struct hkrt_thread *me = &t_self;
    int saved_errno = errno;
    __atomic_store_n(&g.lock_owner, 0, __ATOMIC_RELAXED);
    if (me->life == HKRT_THREAD_LIVE)
        me->tid = hkrt_gettid();
    hkrt_lock();
    for (struct hkrt_thread *t = g.threads, *next; t != NULL; t = next) {
        next = t->next;
        if (t == me)
            continue;
        /* Copies of other threads' memory, which no thread here will use. */
        if (t->map != NULL)
            munmap(t->map, t->map_size);
        if (t->spare_map != NULL)
            munmap(t->spare_map, t->spare_map_size);
        if (t->altstack != NULL)
            munmap(t->altstack, HKRT_ALTSTACK_SIZE);
        hkrt_cct_free(t);
    }
    g.threads = NULL;
    g.thread_seq = 0;
    /* No writer here: the parent's writes what the parent handed over (a buffer of ours that
     * it has is the parent's records: dropped, as the rest of them). */
    __atomic_store_n(&g.writer_running, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.writer_tid, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.queue, NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&me->handed, 0, __ATOMIC_RELAXED);
    if (me->life == HKRT_THREAD_LIVE) {
        me->prev = me->next = NULL;
        g.threads = me;
        me->sequence = ++g.thread_seq;
        me->pos = me->buf;
        hkrt_cct_free(me); /* the parent's calls: the parent writes them */
        __atomic_store_n(&me->lost, 0, __ATOMIC_RELAXED);
        me->final_written = 0;
    }
    if (g.fd >= 0)
        close(g.fd); /* the parent's file (its flock stays the parent's): never written here */
    g.fd = -1;
    hkrt_switches_after_fork(me);
    __atomic_store_n(&g.open_deferred, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.records, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.lost_reported, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.lost_unattributed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.finishing, 0, __ATOMIC_RELAXED);
    g.is_fork_child = 1;
    __atomic_store_n(&g.image_pid, (int)getpid(), __ATOMIC_RELAXED);
    if (g.state == HKRT_RUNNING) {
        int guarded = hkrt_guard_enter(me);
        g.clock_start = hkrt_clock_point_now();
        __atomic_store_n(&g.open_deferred, 1, __ATOMIC_RELEASE); /* see hkrt_file_ready */
        hkrt_set_enabled(g.user_enabled);
        if (guarded)
            hkrt_guard_leave(me);
    }
    hkrt_unlock();
    errno = saved_errno;
}

/* ---------------------------------------------------------------------------------------- */
/* Start, public API                                                                        */

/* Registers the calling thread now (the main thread, from the constructor), so that it is
 * thread 1 and its buffer exists before the first hook. */
static HKRT_FN void hkrt_start_and_attach_current_thread(void)
{
    struct hkrt_thread *t = &t_self;
    if (!hkrt_guard_enter(t))
        return;
    hkrt_ensure_started();
    if (t->life == HKRT_THREAD_NEW && __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == HKRT_RUNNING &&
        hkrt_thread_attach(t) && hkrt_recording())
        hkrt_measure_overhead(t);
    if (__atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == HKRT_RUNNING)
        hkrt_start_writer();
    hkrt_guard_leave(t);
}

/* Priority 101, the earliest a program may use: the atexit handler is registered before any
 * of the program's C++ static constructors register their destructors. */
__attribute__((constructor(101), no_instrument_function)) static void hkrt_constructor(void)
{
    int saved_errno = errno;
    hkrt_start_and_attach_current_thread();
    errno = saved_errno;
}

HKRT_EXPORT void hookcc_trace_flush(void)
{
    struct hkrt_thread *t = &t_self;
    int saved_errno = errno;
    if (t->life != HKRT_THREAD_LIVE || !hkrt_guard_enter(t)) {
        errno = saved_errno;
        return;
    }
    /* In ring mode nothing is written until a snapshot (hookcc_trace_snapshot). */
    if (__atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == HKRT_RUNNING && !t->final_written &&
        !g.ring) {
        hkrt_write_events(t, t->held_pos);
        t->held_pos = t->buf;
        t->fold_mark = NULL;
        if (g.profile || g.min_duration_ns != 0) {
            uint64_t from = hkrt_ticks();
            hkrt_write_profile(t); /* the calling thread's tree as it is now */
            struct hkt_pause pause = {from, hkrt_ticks()};
            hkrt_profile_pause(t, &pause);
        }
    }
    hkrt_guard_leave(t);
    errno = saved_errno;
}

HKRT_EXPORT void hookcc_trace_enable(void)
{
    int saved_errno = errno;
    hkrt_ensure_started_guarded();
    hkrt_lock();
    g.user_enabled = 1;
    if (g.state == HKRT_RUNNING && !__atomic_load_n(&g.finishing, __ATOMIC_ACQUIRE)) {
        hkrt_set_enabled(1);
        /* hkrt_finish switches recording off without the lock: if it began meanwhile, its
         * switch may have landed between our two stores. Switch off again, as it would. */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (__atomic_load_n(&g.finishing, __ATOMIC_ACQUIRE))
            hkrt_set_enabled(0);
    }
    hkrt_unlock();
    errno = saved_errno;
}

HKRT_EXPORT void hookcc_trace_disable(void)
{
    int saved_errno = errno;
    hkrt_ensure_started_guarded();
    hkrt_lock();
    g.user_enabled = 0;
    hkrt_set_enabled(0);
    hkrt_unlock();
    errno = saved_errno;
}

HKRT_EXPORT int hookcc_trace_enabled(void)
{
    int saved_errno = errno;
    hkrt_ensure_started_guarded();
    errno = saved_errno;
    return hkrt_recording();
}

HKRT_EXPORT const char *hookcc_trace_path(void)
{
    int saved_errno = errno;
    hkrt_ensure_started_guarded();
    struct hkrt_thread *t = &t_self;
    if (__atomic_load_n(&g.open_deferred, __ATOMIC_ACQUIRE) && hkrt_guard_enter(t)) {
        hkrt_file_ready();
        hkrt_guard_leave(t);
    }
    errno = saved_errno;
    return g.fd >= 0 ? g.path : NULL;
}
