/* hookcc's gprof support: eCos's CYGPKG_PROFILE_GPROF (seeds/ecos-gprof.txt) for any target;
 * API in <hookcc/gprof.h>, docs/gprof.md.
 *
 * Compiled on its own by the hookcc driver for the user's target (--hook-runtime=gprof):
 *   clang-19 -std=gnu11 -O2 -fPIC -fno-stack-protector -fvisibility=hidden \
 *            -I runtime/include -I runtime/src [--target=...] -c runtime/src/gprof.c
 *
 * How it works
 * - profile_on(start, end, bucket, interval) lays out one block of memory (mapped on Linux, the
 *   arena on bare metal): a header (struct gprof_state, fixed-size fields: a debugger dump of
 *   the block is what `hookprof gprof` converts), the histogram of 16-bit counters (one per
 *   bucket, saturating at 0xFFFF as the seed's), the hash table (one list head per 2^shift
 *   bytes of code, shift 8) and the pool of arc records (5 % of the code size, at least 4096
 *   hosted and 128 on bare metal), as the seed's CYGNUM_PROFILE_CALLGRAPH_HASH_SHIFT and
 *   _ARC_PERCENTAGE describe.
 * - __profile_mcount(caller, callee), called by the entry hook of every instrumented function:
 *   the callee's hash slot, a walk of its list for the (caller, callee) arc, an atomic
 *   increment; a new arc takes a record with one atomic add and is linked in with a
 *   compare-and-swap, so threads need no lock. A full pool counts the arc as dropped.
 * - __profile_hit(pc): a bucket's counter (not atomic, as the seed's: concurrent samples of one
 *   bucket may lose one). On Linux a SIGPROF handler (setitimer(ITIMER_PROF)) passes the
 *   interrupted PC from the signal context.
 * - gmon.out (hosted, at exit, or gprof_dump/gprof_fetch): GNU gprof's format: the "gmon"
 *   header, one histogram record, one record per arc, addresses as the ELF file has them (the
 *   executable's load bias taken off), in the target's pointer size and byte order.
 * - Never instrumented; the hooks take no lock, call no malloc and keep errno.
 */

#define _GNU_SOURCE 1
#include <stddef.h>
#include <stdint.h>

#include <hookcc/gprof.h>

#include "baremetal_atomic.h" /* ARMv5TE's __atomic_*_4 (no ldrex/strex) */
#include "clock.h"

#if !defined(HOOKCC_BARE_METAL) && __STDC_HOSTED__ && defined(__linux__)
#define HKGP_HOSTED 1
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <link.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>
#include "message.h"
#else
#define HKGP_HOSTED 0
#endif

#define HKGP_FN static HKRT_NOINSTR
#define HKGP_EXPORT __attribute__((visibility("default"))) HKRT_NOINSTR

/* ---------------------------------------------------------------------------------------- */
/* Layout (docs/gprof.md)                                                                     */

struct gprof_state {
    char magic[8];         /* 0  "HOOKGPRF" */
    uint32_t version;      /* 8  1 */
    uint32_t state_size;   /* 12 96 */
    uint64_t low_pc;       /* 16 first address profiled (run time) */
    uint64_t high_pc;      /* 24 one past the last: low_pc + hist_count * bucket_size */
    uint64_t load_bias;    /* 32 run-time address - ELF address */
    uint32_t bucket_size;  /* 40 bytes per histogram bucket, a power of 2 */
    uint32_t bucket_shift; /* 44 log2(bucket_size) */
    uint32_t hist_count;   /* 48 16-bit counters */
    uint32_t interval_us;  /* 52 between samples */
    uint32_t hash_shift;   /* 56 code bytes per hash slot: 2^hash_shift */
    uint32_t hash_count;   /* 60 32-bit list heads (arc index + 1, 0: none) */
    uint32_t arc_capacity; /* 64 arc records */
    uint32_t arcs_used;    /* 68 */
    uint64_t arcs_dropped; /* 72 calls not recorded: the pool was full */
    uint64_t hits_outside; /* 80 samples outside [low_pc, high_pc) */
    uint32_t callgraph;    /* 88 1: arcs are recorded */
    uint32_t reserved;     /* 92 0 */
};
_Static_assert(sizeof(struct gprof_state) == 96, "docs/gprof.md: 96-byte header");

struct gprof_arc {
    uint64_t from_pc; /* 0  the call site (run time) */
    uint64_t self_pc; /* 8  the function called */
    uint32_t count;   /* 16 calls */
    uint32_t next;    /* 20 the next arc of the hash slot, index + 1 */
};
_Static_assert(sizeof(struct gprof_arc) == 24, "docs/gprof.md: 24-byte arcs");

#define HKGP_MAGIC "HOOKGPRF"
#define HKGP_HASH_SHIFT 8
#define HKGP_ARC_PERCENT 5
/* At least this many arc records: 5 % of a small program's code holds a few dozen, fewer than
 * the call sites of one unrolled loop. */
#if !defined(HOOKCC_BARE_METAL) && __STDC_HOSTED__ && defined(__linux__)
#define HKGP_MIN_ARCS 4096
#else
#define HKGP_MIN_ARCS 128
#endif

static inline HKRT_NOINSTR uint64_t hkgp_align8(uint64_t n) { return (n + 7) & ~(uint64_t)7; }

/* The profiling data now: a debugger dumps hookcc_gprof_data_size bytes from here. */
__attribute__((visibility("default"))) void *hookcc_gprof_data;
__attribute__((visibility("default"))) size_t hookcc_gprof_data_size;

static struct gprof_state *g_state;
static uint16_t *g_hist;
static uint32_t *g_hash;
static struct gprof_arc *g_arcs;

#if !HKGP_HOSTED
/* Bare metal: the memory profile_on uses, unless the program defines its own. */
__attribute__((weak, aligned(8))) unsigned char hookcc_gprof_arena[32768];
__attribute__((weak)) const size_t hookcc_gprof_arena_size = 32768;
#endif

/* ---------------------------------------------------------------------------------------- */
/* The hot paths                                                                              */

HKGP_EXPORT void __profile_mcount(uintptr_t caller_pc, uintptr_t callee_pc)
{
    struct gprof_state *s = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
    if (s == NULL || !s->callgraph)
        return;
    uint64_t offset = (uint64_t)callee_pc - s->low_pc;
    if ((uint64_t)callee_pc < s->low_pc || offset >= s->high_pc - s->low_pc)
        return; /* not in the profiled range (a shared library's function) */
    uint32_t *head = &g_hash[offset >> s->hash_shift];
    for (uint32_t link = __atomic_load_n(head, __ATOMIC_ACQUIRE); link != 0;
         link = g_arcs[link - 1].next) {
        struct gprof_arc *a = &g_arcs[link - 1];
        if (a->self_pc == callee_pc && a->from_pc == caller_pc) {
            __atomic_fetch_add(&a->count, 1, __ATOMIC_RELAXED);
            return;
        }
    }
    uint32_t index = __atomic_fetch_add(&s->arcs_used, 1, __ATOMIC_RELAXED);
    if (index >= s->arc_capacity) {
        __atomic_store_n(&s->arcs_used, s->arc_capacity, __ATOMIC_RELAXED);
        /* Rare (a full pool): the lock-free 64-bit add may be a libcall on 32-bit targets. */
        s->arcs_dropped++;
        return;
    }
    struct gprof_arc *a = &g_arcs[index];
    a->from_pc = caller_pc;
    a->self_pc = callee_pc;
    a->count = 1;
    uint32_t old = __atomic_load_n(head, __ATOMIC_RELAXED);
    do {
        a->next = old;
    } while (!__atomic_compare_exchange_n(head, &old, index + 1, 1, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
}

HKGP_EXPORT void __profile_hit(uintptr_t pc)
{
    struct gprof_state *s = __atomic_load_n(&g_state, __ATOMIC_ACQUIRE);
    if (s == NULL)
        return;
    uint64_t offset = (uint64_t)pc - s->low_pc;
    if ((uint64_t)pc < s->low_pc || offset >= s->high_pc - s->low_pc) {
        s->hits_outside++;
        return;
    }
    uint16_t *counter = &g_hist[offset >> s->bucket_shift];
    if (*counter != 0xFFFF)
        ++*counter;
}

/* ---------------------------------------------------------------------------------------- */
/* Memory and the timer                                                                       */

#if HKGP_HOSTED
static void *g_mapping;
static size_t g_mapping_size;
static struct sigaction g_previous_sigprof;
static int g_timer_on; /* our SIGPROF handler is installed (it stays, once it is) */
static pid_t g_pid;
/* The sampling rate actually delivered: the kernel may round ITIMER_PROF up to its tick (one
 * sample every 4 ms for 1000 us asked, with HZ=250), and gprof multiplies samples by the rate
 * in gmon.out. So the handler measures the interval delivered (CPU time while the timer ran,
 * over the samples) at the 16th, 32nd, 64th… sample and stores it in the state's interval_us,
 * which gmon.out's rate comes from, and a debugger's dump of the state carries too (powers of
 * two: a dump taken just before the exit's gmon.out almost always has the same value). */
static uint32_t g_samples;        /* samples taken since profile_on / gprof_reset */
static uint64_t g_timed_cpu_ns;   /* process CPU time with the timer on, before g_cpu_since */
static uint64_t g_cpu_since;      /* process CPU time when the timer was last started, 0 if off */

static HKRT_NOINSTR uint64_t hkgp_cpu_ns(void)
{
    struct timespec t;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t) != 0)
        return 0;
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

HKGP_FN void hkgp_sigprof(int sig, siginfo_t *info, void *context)
{
    int saved = errno;
    const ucontext_t *uc = context;
    uintptr_t pc = 0;
#if defined(__x86_64__)
    pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__i386__)
    pc = (uintptr_t)uc->uc_mcontext.gregs[REG_EIP];
#elif defined(__aarch64__)
    pc = (uintptr_t)uc->uc_mcontext.pc;
#elif defined(__arm__)
    pc = (uintptr_t)uc->uc_mcontext.arm_pc;
#elif defined(__riscv)
    pc = (uintptr_t)uc->uc_mcontext.__gregs[0];
#elif defined(__s390x__)
    pc = (uintptr_t)uc->uc_mcontext.psw.addr;
#else
    (void)uc;
#endif
    if (pc != 0) {
        uint32_t n = __atomic_add_fetch(&g_samples, 1, __ATOMIC_RELAXED);
        struct gprof_state *s = g_state;
        if (n >= 16 && (n & (n - 1)) == 0 && s != NULL && g_cpu_since != 0) {
            uint64_t cpu = g_timed_cpu_ns + (hkgp_cpu_ns() - g_cpu_since);
            uint64_t us = (cpu / n + 500) / 1000;
            /* Only ever longer than asked (a tick rounds up); a wild value is not taken. */
            if (us > s->interval_us && us < 1000000)
                s->interval_us = (uint32_t)us;
        }
        __profile_hit(pc);
    }
    /* A handler the program had before ours still gets its signal. */
    if (g_previous_sigprof.sa_flags & SA_SIGINFO) {
        if (g_previous_sigprof.sa_sigaction != NULL)
            g_previous_sigprof.sa_sigaction(sig, info, context);
    } else if (g_previous_sigprof.sa_handler != SIG_DFL &&
               g_previous_sigprof.sa_handler != SIG_IGN) {
        g_previous_sigprof.sa_handler(sig);
    }
    errno = saved;
}

HKGP_FN void hkgp_timer(int interval_us)
{
    struct itimerval t = {{0, 0}, {0, 0}};
    if (interval_us > 0) {
        t.it_interval.tv_sec = interval_us / 1000000;
        t.it_interval.tv_usec = interval_us % 1000000;
        t.it_value = t.it_interval;
        if (!g_timer_on) {
            struct sigaction sa;
            __builtin_memset(&sa, 0, sizeof sa);
            sa.sa_sigaction = hkgp_sigprof;
            sa.sa_flags = SA_SIGINFO | SA_RESTART;
            sigemptyset(&sa.sa_mask);
            sigaction(SIGPROF, &sa, &g_previous_sigprof);
            g_timer_on = 1;
        }
        if (g_cpu_since == 0)
            g_cpu_since = hkgp_cpu_ns();
        setitimer(ITIMER_PROF, &t, NULL);
    } else {
        if (g_cpu_since != 0)
            g_timed_cpu_ns += hkgp_cpu_ns() - g_cpu_since;
        g_cpu_since = 0;
        /* The handler stays: a sample already on its way would otherwise find the default
         * action, which ends the program (it does under valgrind, which delays signals). */
        setitimer(ITIMER_PROF, &t, NULL);
    }
}

static int hkgp_first_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(uint64_t *)data = (uint64_t)info->dlpi_addr; /* the executable comes first */
    return 1;
}
#endif

HKGP_FN void *hkgp_memory(size_t bytes)
{
#if HKGP_HOSTED
    if (g_mapping != NULL)
        munmap(g_mapping, g_mapping_size);
    g_mapping = NULL;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    g_mapping = p;
    g_mapping_size = bytes;
    return p;
#else
    if (bytes > hookcc_gprof_arena_size)
        return NULL;
    __builtin_memset(hookcc_gprof_arena, 0, bytes);
    return hookcc_gprof_arena;
#endif
}

HKGP_EXPORT void profile_off(void)
{
#if HKGP_HOSTED
    hkgp_timer(0);
#endif
    __atomic_store_n(&g_state, NULL, __ATOMIC_RELEASE);
    hookcc_gprof_data = NULL;
    hookcc_gprof_data_size = 0;
}

HKGP_EXPORT void profile_on(void *start, void *end, int bucket_size, int interval)
{
    profile_off();
    uintptr_t low = (uintptr_t)start, high = (uintptr_t)end;
    if (high <= low)
        return;
    uint32_t shift = 0;
    while (((uint32_t)1 << shift) < (uint32_t)(bucket_size > 1 ? bucket_size : 1) && shift < 20)
        shift++;
    uint64_t code = high - low;
    int callgraph = 1;
#if HKGP_HOSTED
    const char *cg = hkrt_getenv("HOOKCC_GPROF_CALLGRAPH");
    callgraph = cg == NULL || cg[0] != '0';
#endif
    /* On bare metal, coarser buckets and fewer arcs until the arena holds it all. */
    for (;; shift++) {
        uint64_t buckets = (code + ((uint64_t)1 << shift) - 1) >> shift;
        uint64_t hash = (code >> HKGP_HASH_SHIFT) + 1;
        uint64_t arcs = code * HKGP_ARC_PERCENT / 100 / sizeof(struct gprof_arc);
        if (arcs < HKGP_MIN_ARCS)
            arcs = HKGP_MIN_ARCS;
        uint64_t bytes = sizeof(struct gprof_state) + hkgp_align8(buckets * 2) +
                         hkgp_align8(hash * 4) + arcs * sizeof(struct gprof_arc);
        if (shift > 20)
            return; /* no memory for even 1 MiB buckets: profiling stays off */
        void *memory = hkgp_memory((size_t)bytes);
        if (memory == NULL)
            continue;
        struct gprof_state *s = memory;
        __builtin_memcpy(s->magic, HKGP_MAGIC, 8);
        s->version = 1;
        s->state_size = (uint32_t)sizeof *s;
        s->low_pc = low;
        s->high_pc = low + (buckets << shift);
        s->bucket_size = (uint32_t)1 << shift;
        s->bucket_shift = shift;
        s->hist_count = (uint32_t)buckets;
        s->interval_us = (uint32_t)(interval > 0 ? interval : 0);
        s->hash_shift = HKGP_HASH_SHIFT;
        s->hash_count = (uint32_t)hash;
        s->arc_capacity = (uint32_t)arcs;
        s->callgraph = (uint32_t)callgraph;
#if HKGP_HOSTED
        dl_iterate_phdr(hkgp_first_object, &s->load_bias);
#endif
        g_hist = (uint16_t *)((char *)s + sizeof *s);
        g_hash = (uint32_t *)((char *)g_hist + hkgp_align8(buckets * 2));
        g_arcs = (struct gprof_arc *)((char *)g_hash + hkgp_align8(hash * 4));
        hookcc_gprof_data = s;
        hookcc_gprof_data_size = (size_t)bytes;
        __atomic_store_n(&g_state, s, __ATOMIC_RELEASE);
#if HKGP_HOSTED
        hkgp_timer(interval);
#endif
        return;
    }
}

HKGP_EXPORT void gprof_reset(void)
{
    struct gprof_state *s = g_state;
    if (s == NULL)
        return;
    __builtin_memset(g_hist, 0, (size_t)s->hist_count * 2);
    for (uint32_t i = 0; i < s->arcs_used && i < s->arc_capacity; i++)
        __atomic_store_n(&g_arcs[i].count, 0, __ATOMIC_RELAXED);
    s->hits_outside = 0;
#if HKGP_HOSTED
    g_samples = 0;
    g_timed_cpu_ns = 0;
    if (g_cpu_since != 0)
        g_cpu_since = hkgp_cpu_ns();
#endif
}

/* ---------------------------------------------------------------------------------------- */
/* gmon.out (hosted)                                                                          */

#if HKGP_HOSTED
struct hkgp_file {
    int fd;
    int failed;
    unsigned char buffer[4096];
    size_t used;
};

HKGP_FN void hkgp_flush(struct hkgp_file *f)
{
    size_t done = 0;
    while (!f->failed && done < f->used) {
        ssize_t n = write(f->fd, f->buffer + done, f->used - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            f->failed = 1;
        else
            done += (size_t)n;
    }
    f->used = 0;
}

HKGP_FN void hkgp_put(struct hkgp_file *f, const void *data, size_t n)
{
    const unsigned char *p = data;
    while (n > 0) {
        if (f->used == sizeof f->buffer)
            hkgp_flush(f);
        size_t k = sizeof f->buffer - f->used;
        if (k > n)
            k = n;
        __builtin_memcpy(f->buffer + f->used, p, k);
        f->used += k;
        p += k;
        n -= k;
    }
}

/* A word of `size` bytes in the target's byte order: the host's, here. */
HKGP_FN void hkgp_word(struct hkgp_file *f, uint64_t value, size_t size)
{
    if (size == 4) {
        uint32_t v = (uint32_t)value;
        hkgp_put(f, &v, 4);
    } else {
        hkgp_put(f, &value, 8);
    }
}

HKGP_FN int hkgp_write_gmon(void)
{
    struct gprof_state *s = g_state;
    if (s == NULL)
        return -1;
    const char *path = hkrt_getenv("HOOKCC_GMON_OUT");
    char name[64];
    if (path == NULL) {
        /* A forked child writes its own file, as the parent keeps gmon.out. */
        path = "gmon.out";
        if (g_pid != 0 && getpid() != g_pid) {
            name[0] = '\0';
            hkrt_append(name, sizeof name, "gmon.out.");
            char digits[16];
            int n = 0;
            for (long pid = (long)getpid(); pid > 0 && n < 15; pid /= 10)
                digits[n++] = (char)('0' + pid % 10);
            size_t len = strlen(name);
            while (n > 0 && len + 1 < sizeof name)
                name[len++] = digits[--n];
            name[len] = '\0';
            path = name;
        }
    }
    struct hkgp_file f;
    f.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    f.failed = f.fd < 0;
    f.used = 0;
    if (f.failed) {
        hkrt_warn("cannot write the gprof data to", path, errno);
        return -1;
    }
    const size_t ptr = sizeof(void *);
    static const char header[16] = {'g', 'm', 'o', 'n'};
    hkgp_put(&f, header, 4);
    hkgp_word(&f, 1, 4); /* version */
    hkgp_put(&f, header + 4, 12);
    unsigned char tag = 0; /* GMON_TAG_TIME_HIST */
    hkgp_put(&f, &tag, 1);
    hkgp_word(&f, s->low_pc - s->load_bias, ptr);
    hkgp_word(&f, s->high_pc - s->load_bias, ptr);
    hkgp_word(&f, s->hist_count, 4);
    hkgp_word(&f, s->interval_us > 0 ? 1000000 / s->interval_us : 0, 4);
    static const char dimension[16] = "seconds\0\0\0\0\0\0\0\0s";
    hkgp_put(&f, dimension, 16);
    hkgp_put(&f, g_hist, (size_t)s->hist_count * 2);
    uint32_t used = s->arcs_used < s->arc_capacity ? s->arcs_used : s->arc_capacity;
    for (uint32_t i = 0; s->callgraph && i < used; i++) {
        const struct gprof_arc *a = &g_arcs[i];
        if (a->count == 0)
            continue;
        tag = 1; /* GMON_TAG_CG_ARC */
        hkgp_put(&f, &tag, 1);
        hkgp_word(&f, a->from_pc - s->load_bias, ptr);
        hkgp_word(&f, a->self_pc - s->load_bias, ptr);
        hkgp_word(&f, a->count, 4);
    }
    hkgp_flush(&f);
    int failed = f.failed;
    if (close(f.fd) != 0)
        failed = 1;
    if (failed) {
        hkrt_warn("cannot write the gprof data to", path, errno);
        return -1;
    }
    if (s->arcs_dropped != 0)
        hkrt_warn_hint("gprof: the arc pool was full: some calls are not in", path, 0,
                       " (more than 5 % of the code size in distinct arcs)");
    return 0;
}

HKGP_EXPORT int gprof_fetch(void)
{
    int saved = errno;
    int result = hkgp_write_gmon();
    errno = saved;
    return result;
}

HKGP_EXPORT int gprof_dump(void)
{
    int result = gprof_fetch();
    gprof_reset();
    return result;
}

extern char __executable_start[], etext[];

HKGP_FN void hkgp_at_exit(void)
{
    if (g_state == NULL)
        return;
    hkgp_timer(0);
    gprof_fetch();
}

__attribute__((constructor)) HKGP_FN void hkgp_start(void)
{
    g_pid = getpid();
    atexit(hkgp_at_exit);
    const char *automatic = hkrt_getenv("HOOKCC_GPROF_AUTO");
    if (automatic != NULL && automatic[0] == '0')
        return;
    profile_on(__executable_start, etext, 16, 1000);
}
#else
/* Bare metal: the data leaves by the debugger (scripts/gprof.gdb) and hookprof gprof. */
HKGP_EXPORT int gprof_fetch(void) { return -1; }
HKGP_EXPORT int gprof_dump(void)
{
    gprof_reset();
    return -1;
}
#endif
