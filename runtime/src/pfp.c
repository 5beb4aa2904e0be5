/* hookcc's profile points (PFP): TI's "Profile Point Component"
 * (seeds/ti-pfp-profile-points.txt) for any target; API in <hookcc/pfp.h>, docs/pfp.md.
 *
 * Compiled on its own by the hookcc driver for the user's target (--hook-runtime=pfp):
 *   clang-19 -std=gnu11 -O2 -fPIC -fno-stack-protector -fvisibility=hidden \
 *            -I runtime/include -I runtime/src [--target=...] -c runtime/src/pfp.c
 *
 * How it works
 * - One instance, `pfpInst`, holds the 32 profile point descriptors and the calibrated
 *   overhead; a debugger can dump it (`hookprof pfp DUMP --exe ELF` prints what pfpPrintStats
 *   prints). Its layout (docs/pfp.md) has fixed-size fields only, so the post tool reads it
 *   for any target given its byte order.
 * - The seed's "active list" (the regions with a measurement in progress, innermost last) is
 *   kept per execution context: per OS thread in a hosted build (thread-local), one for the
 *   program on bare metal. List links are descriptor indexes + 1 (0: none).
 * - At most one region of a context has its clock running: the innermost region of the task
 *   running now (`current`). pfpBegin pauses it and starts the new one; pfpEnd stops its
 *   region and restarts the innermost region left of the same task; a task switch, a Swi or
 *   an Hwi pauses it and restarts the innermost region of the task switched to. So an outer
 *   region counts only its own cycles, and a pre-empted one nothing while it is out.
 * - Each call reads the counter first thing and restarts a clock last thing, so the calls' own
 *   cost lands in no region but what lies between those two reads; pfpCalibrate measures that
 *   rest on point 0 (empty regions) and every measurement has it subtracted.
 * - Statistics are updated under a small lock (the seed's GateAll), which pfpGetStats and
 *   pfpResetStats take too. The regions' own state is only touched by their context.
 * - Never instrumented; no malloc; errno kept.
 */

#define _GNU_SOURCE 1 /* secure_getenv, for message.h */
#include <stddef.h>
#include <stdint.h>

#include <hookcc/pfp.h>

#include "baremetal_atomic.h" /* ARMv5TE's __atomic_*_4 (no ldrex/strex) */
#include "clock.h"

#if !defined(HOOKCC_BARE_METAL) && __STDC_HOSTED__ && (defined(__unix__) || defined(__APPLE__))
#define HKPFP_HOSTED 1
#include <errno.h>
#include <stdlib.h> /* atexit */
#include "message.h"
#else
#define HKPFP_HOSTED 0
#endif

#define HKPFP_FN static HKRT_NOINSTR
#define HKPFP_EXPORT __attribute__((visibility("default"))) HKRT_NOINSTR

/* ---------------------------------------------------------------------------------------- */
/* Layout (docs/pfp.md): fixed-size fields, the same on every target but for byte order.    */

struct pfp_descriptor {
    uint64_t exhandle;  /* 0  the task (or Swi, Hwi) the region runs in */
    int32_t id;         /* 8  its index in pfpVector */
    int32_t scope;      /* 12 HKPFP_SCOPE_*: what kind of context began it */
    int32_t enable;     /* 16 1 enabled, 0 disabled */
    int32_t inside;     /* 20 1 inside the Begin/End bracket */
    int32_t active;     /* 24 1 clock running, 0 paused */
    int32_t latch;      /* 28 1 the partial count carries over to the next Begin/End pair */
    int32_t reset;      /* 32 1 reset the statistics at the next pfpBegin */
    uint32_t n_count;   /* 36 completed measurements */
    int64_t c_total;    /* 40 their total cycles */
    uint64_t c_partial; /* 48 the measurement in progress */
    uint64_t c_0;       /* 56 the counter when the clock last started */
    uint64_t c_min;     /* 64 */
    uint64_t c_max;     /* 72 */
    float alpha;        /* 80 exponential averaging constant, 0: not configured */
    float c_average;    /* 84 exponentially averaged cycles */
    int32_t next;       /* 88 the next region of the active list, index + 1 (0: none) */
    int32_t prev;       /* 92 the previous one */
};
_Static_assert(sizeof(struct pfp_descriptor) == 96, "docs/pfp.md: 96-byte descriptors");

#define HKPFP_MAGIC "HOOKPFP"
#define HKPFP_VERSION 1

struct pfp_inst {
    char magic[8];             /* 0  "HOOKPFP\0" once created */
    uint32_t version;          /* 8  1 */
    uint32_t count;            /* 12 PFP_PPCNT_MAX */
    uint32_t descriptor_size;  /* 16 96 */
    uint32_t lock;             /* 20 1 while statistics are updated or read */
    uint64_t ticks_per_second; /* 24 the counter's rate, 0 if not known yet */
    uint64_t overhead;         /* 32 cycles subtracted from each measurement (pfpCalibrate) */
    uint64_t bad_id;           /* 40 calls with an id out of range, ignored */
    uint64_t begin_twice;      /* 48 pfpBegin of a point already begun: point disabled */
    uint64_t end_without_begin; /* 56 pfpEnd of a point not begun: ignored */
    uint64_t bad_nesting;      /* 64 pfpEnd out of nesting order, or of another thread's
                                     region: point disabled, or the call ignored */
    uint64_t reserved;         /* 72 0 */
    struct pfp_descriptor pfpVector[PFP_PPCNT_MAX]; /* 80 */
};
_Static_assert(offsetof(struct pfp_inst, pfpVector) == 80, "docs/pfp.md: 80-byte header");

/* The instance a debugger dumps. */
__attribute__((visibility("default"), aligned(8))) struct pfp_inst pfpInst;

enum { HKPFP_SCOPE_TASK = 0, HKPFP_SCOPE_SWI = 1, HKPFP_SCOPE_HWI = 2 };

/* Swi and Hwi handlers nesting on one context. */
#define HKPFP_NEST_MAX 16

/* One execution context: an OS thread (hosted) or the program (bare metal). */
struct pfp_ctx {
    int32_t head, tail;  /* the active list, index + 1 */
    int32_t active;      /* the region whose clock runs, index + 1 */
    int32_t scope;       /* HKPFP_SCOPE_* of `current` */
    uint64_t current;    /* the task, Swi or Hwi running */
    int32_t nest;        /* Swi/Hwi levels entered */
    int32_t overflow;    /* levels beyond HKPFP_NEST_MAX, not tracked */
    uint64_t saved[HKPFP_NEST_MAX];
    int32_t saved_scope[HKPFP_NEST_MAX];
};

#if HKPFP_HOSTED
static __thread struct pfp_ctx t_pfp __attribute__((tls_model("initial-exec")));
#define HKPFP_CTX (&t_pfp)
#else
static struct pfp_ctx g_pfp;
#define HKPFP_CTX (&g_pfp)
#endif

static pfpPrintFunction hkpfp_print;
static void *hkpfp_print_context;
#if HKPFP_HOSTED
static struct hkrt_clock_point hkpfp_created;
#endif

static inline HKRT_NOINSTR struct pfp_descriptor *hkpfp_at(int32_t link)
{
    return &pfpInst.pfpVector[link - 1];
}

static inline HKRT_NOINSTR void hkpfp_lock(void)
{
    while (__atomic_exchange_n(&pfpInst.lock, 1, __ATOMIC_ACQUIRE) != 0)
        while (__atomic_load_n(&pfpInst.lock, __ATOMIC_RELAXED) != 0)
            ;
}

static inline HKRT_NOINSTR void hkpfp_unlock(void)
{
    __atomic_store_n(&pfpInst.lock, 0, __ATOMIC_RELEASE);
}

/* Counts a misuse (rare: under the lock, since 64-bit atomics are not lock-free everywhere). */
HKPFP_FN void hkpfp_count(uint64_t *counter)
{
    hkpfp_lock();
    (*counter)++;
    hkpfp_unlock();
}

static inline HKRT_NOINSTR int hkpfp_valid(int id)
{
    if ((unsigned)id < PFP_PPCNT_MAX)
        return 1;
    hkpfp_count(&pfpInst.bad_id);
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* The active list and its one running clock                                                 */

HKPFP_FN void hkpfp_pause(struct pfp_ctx *c, uint64_t now)
{
    if (c->active == 0)
        return;
    struct pfp_descriptor *d = hkpfp_at(c->active);
    d->c_partial += now - d->c_0;
    d->active = 0;
    c->active = 0;
}

/* Starts the clock of the innermost region of the task running now, if it has one. The
 * counter is read last. */
HKPFP_FN void hkpfp_resume(struct pfp_ctx *c)
{
    for (int32_t link = c->tail; link != 0; link = hkpfp_at(link)->prev) {
        struct pfp_descriptor *d = hkpfp_at(link);
        if (d->exhandle == c->current) {
            d->active = 1;
            c->active = link;
            d->c_0 = hkrt_ticks();
            return;
        }
    }
}

HKPFP_FN void hkpfp_append(struct pfp_ctx *c, struct pfp_descriptor *d)
{
    int32_t link = d->id + 1;
    d->prev = c->tail;
    d->next = 0;
    if (c->tail != 0)
        hkpfp_at(c->tail)->next = link;
    else
        c->head = link;
    c->tail = link;
}

HKPFP_FN void hkpfp_remove(struct pfp_ctx *c, struct pfp_descriptor *d)
{
    if (d->prev != 0)
        hkpfp_at(d->prev)->next = d->next;
    else
        c->head = d->next;
    if (d->next != 0)
        hkpfp_at(d->next)->prev = d->prev;
    else
        c->tail = d->prev;
    d->next = d->prev = 0;
    if (c->active == d->id + 1)
        c->active = 0;
    d->active = 0;
    d->inside = 0;
}

/* Is `d` in this context's list? (A region another thread began is not ours to end.) */
HKPFP_FN int hkpfp_owns(const struct pfp_ctx *c, const struct pfp_descriptor *d)
{
    for (int32_t link = c->tail; link != 0; link = hkpfp_at(link)->prev)
        if (hkpfp_at(link) == d)
            return 1;
    return 0;
}

HKPFP_FN void hkpfp_clear_stats(struct pfp_descriptor *d)
{
    d->n_count = 0;
    d->c_total = 0;
    d->c_min = 0;
    d->c_max = 0;
    d->c_average = 0;
    d->reset = 0;
}

HKPFP_FN void hkpfp_record(struct pfp_descriptor *d, uint64_t cycles)
{
    hkpfp_lock();
    if (d->n_count == 0 || cycles < d->c_min)
        d->c_min = cycles;
    if (d->n_count == 0 || cycles > d->c_max)
        d->c_max = cycles;
    d->n_count++;
    d->c_total += (int64_t)cycles;
    if (d->alpha > 0) {
        /* The seed's exponential average: the first measurement starts it. */
        float c = (float)cycles;
        d->c_average = d->n_count == 1 ? c : d->c_average + d->alpha * (c - d->c_average);
    }
    hkpfp_unlock();
}

/* ---------------------------------------------------------------------------------------- */
/* The API                                                                                   */

HKPFP_FN void hkpfp_bridge_enable(void);

HKPFP_EXPORT void pfpCreate(void)
{
    __builtin_memset(&pfpInst, 0, sizeof pfpInst);
    __builtin_memcpy(pfpInst.magic, HKPFP_MAGIC, sizeof HKPFP_MAGIC);
    pfpInst.version = HKPFP_VERSION;
    pfpInst.count = PFP_PPCNT_MAX;
    pfpInst.descriptor_size = (uint32_t)sizeof(struct pfp_descriptor);
    for (int i = 0; i < PFP_PPCNT_MAX; i++)
        pfpInst.pfpVector[i].id = i;
    __builtin_memset(HKPFP_CTX, 0, sizeof *HKPFP_CTX);
#if HKPFP_HOSTED
    hkpfp_created = hkrt_clock_point_now();
#endif
    pfpInst.ticks_per_second = hkrt_ticks_per_second_fixed();
    hkpfp_bridge_enable();
}

/* The counter's rate: the target's, or measured since pfpCreate (over at least 1 ms). */
HKPFP_FN void hkpfp_measure_rate(void)
{
#if HKPFP_HOSTED
    if (hkrt_ticks_per_second_fixed() == 0 && hkpfp_created.ns != 0) {
        int saved = errno;
        struct hkrt_clock_point now = hkrt_clock_point_after(&hkpfp_created, 1000000);
        pfpInst.ticks_per_second = hkrt_ticks_per_second(&hkpfp_created, &now);
        errno = saved;
    }
#endif
}

HKPFP_EXPORT void pfpEnable(int id)
{
    if (hkpfp_valid(id))
        pfpInst.pfpVector[id].enable = 1;
}

HKPFP_EXPORT void pfpDisable(int id)
{
    if (!hkpfp_valid(id))
        return;
    struct pfp_descriptor *d = &pfpInst.pfpVector[id];
    struct pfp_ctx *c = HKPFP_CTX;
    if (d->inside && hkpfp_owns(c, d)) {
        int was_running = c->active == id + 1;
        hkpfp_remove(c, d);
        if (was_running)
            hkpfp_resume(c);
    }
    d->enable = 0;
}

HKPFP_EXPORT void pfpBegin(int id, void *exhandle)
{
    uint64_t now = hkrt_ticks();
    if (!hkpfp_valid(id))
        return;
    struct pfp_descriptor *d = &pfpInst.pfpVector[id];
    if (!d->enable)
        return;
    struct pfp_ctx *c = HKPFP_CTX;
    if (d->inside) {
        /* Begin-Begin: the seed disables the point. */
        hkpfp_count(&pfpInst.begin_twice);
        if (hkpfp_owns(c, d)) {
            int was_running = c->active == id + 1;
            hkpfp_remove(c, d);
            d->enable = 0;
            if (was_running)
                hkpfp_resume(c);
        } else {
            d->enable = 0;
        }
        return;
    }
    if (d->reset) {
        hkpfp_lock();
        hkpfp_clear_stats(d);
        hkpfp_unlock();
    }
    hkpfp_pause(c, now);
    if (!d->latch)
        d->c_partial = 0;
    d->exhandle = (uint64_t)(uintptr_t)exhandle;
    d->scope = c->scope;
    d->inside = 1;
    hkpfp_append(c, d);
    c->current = d->exhandle;
    d->active = 1;
    c->active = id + 1;
    d->c_0 = hkrt_ticks();
}

HKPFP_EXPORT void pfpEnd(int id, int latch)
{
    uint64_t now = hkrt_ticks();
    if (!hkpfp_valid(id))
        return;
    struct pfp_descriptor *d = &pfpInst.pfpVector[id];
    if (!d->enable)
        return;
    if (!d->inside) {
        /* Allowed (a loop that ends before it begins), and counted. */
        hkpfp_count(&pfpInst.end_without_begin);
        return;
    }
    struct pfp_ctx *c = HKPFP_CTX;
    if (!hkpfp_owns(c, d)) {
        hkpfp_count(&pfpInst.bad_nesting);
        return;
    }
    /* It must be its task's innermost region. */
    for (int32_t link = c->tail; hkpfp_at(link) != d; link = hkpfp_at(link)->prev) {
        if (hkpfp_at(link)->exhandle == d->exhandle) {
            hkpfp_count(&pfpInst.bad_nesting);
            hkpfp_pause(c, now);
            hkpfp_remove(c, d);
            d->enable = 0;
            hkpfp_resume(c);
            return;
        }
    }
    if (d->active) {
        d->c_partial += now - d->c_0;
        c->active = 0;
    }
    hkpfp_remove(c, d);
    uint64_t overhead = pfpInst.overhead;
    d->c_partial = d->c_partial > overhead ? d->c_partial - overhead : 0;
    if (latch) {
        d->latch = 1;
    } else {
        hkpfp_record(d, d->c_partial);
        d->latch = 0;
        d->c_partial = 0;
    }
    c->current = d->exhandle;
    hkpfp_resume(c);
}

HKPFP_EXPORT void pfpCalibrate(int loopcnt, int reset)
{
    struct pfp_descriptor *d = &pfpInst.pfpVector[0];
    void *self = (void *)(uintptr_t)HKPFP_CTX->current;
    pfpInst.overhead = 0;
    d->enable = 1;
    for (int i = 0; i < loopcnt; i++) {
        pfpBegin(0, self);
        pfpEnd(0, 0);
    }
    /* The least an empty region measured: what every region measures on top of its work. */
    if (d->n_count > 0)
        pfpInst.overhead = d->c_min;
    if (reset) {
        hkpfp_lock();
        hkpfp_clear_stats(d);
        hkpfp_unlock();
    }
    hkpfp_measure_rate();
}

HKPFP_EXPORT void pfpGetStats(int id, pfpStats_t *pStats)
{
    if (!hkpfp_valid(id) || pStats == NULL)
        return;
    const struct pfp_descriptor *d = &pfpInst.pfpVector[id];
    hkpfp_lock();
    pStats->c_total = d->c_total;
    pStats->n_count = d->n_count;
    pStats->c_min = d->c_min;
    pStats->c_max = d->c_max;
    pStats->alpha = d->alpha;
    pStats->c_average = d->c_average;
    hkpfp_unlock();
}

HKPFP_EXPORT void pfpResetStats(int id)
{
    if (!hkpfp_valid(id))
        return;
    struct pfp_descriptor *d = &pfpInst.pfpVector[id];
    hkpfp_lock();
    if (d->inside)
        d->reset = 1; /* a measurement is in progress: at its point's next pfpBegin */
    else
        hkpfp_clear_stats(d);
    hkpfp_unlock();
}

HKPFP_EXPORT void pfpSetAlpha(int id, float alpha)
{
    if (hkpfp_valid(id))
        pfpInst.pfpVector[id].alpha = alpha;
}

/* ---- The scheduler's hooks ---- */

HKPFP_EXPORT void pfpTaskSwitch(void *prev, void *next)
{
    uint64_t now = hkrt_ticks();
    (void)prev;
    struct pfp_ctx *c = HKPFP_CTX;
    hkpfp_pause(c, now);
    c->current = (uint64_t)(uintptr_t)next;
    c->scope = HKPFP_SCOPE_TASK;
    hkpfp_resume(c);
}

HKPFP_FN void hkpfp_interrupt_begin(void *handle, int32_t scope)
{
    uint64_t now = hkrt_ticks();
    struct pfp_ctx *c = HKPFP_CTX;
    hkpfp_pause(c, now);
    if (c->nest < HKPFP_NEST_MAX) {
        c->saved[c->nest] = c->current;
        c->saved_scope[c->nest] = c->scope;
        c->nest++;
    } else {
        c->overflow++;
    }
    c->current = (uint64_t)(uintptr_t)handle;
    c->scope = scope;
    hkpfp_resume(c);
}

HKPFP_FN void hkpfp_interrupt_end(void)
{
    uint64_t now = hkrt_ticks();
    struct pfp_ctx *c = HKPFP_CTX;
    hkpfp_pause(c, now);
    if (c->overflow > 0) {
        c->overflow--;
        return; /* an untracked level: the one below it stays current */
    }
    if (c->nest > 0) {
        c->nest--;
        c->current = c->saved[c->nest];
        c->scope = c->saved_scope[c->nest];
    }
    hkpfp_resume(c);
}

HKPFP_EXPORT void pfpSwiBegin(void *swi) { hkpfp_interrupt_begin(swi, HKPFP_SCOPE_SWI); }
HKPFP_EXPORT void pfpSwiEnd(void *swi) { (void)swi; hkpfp_interrupt_end(); }
HKPFP_EXPORT void pfpHwiBegin(void *hwi) { hkpfp_interrupt_begin(hwi, HKPFP_SCOPE_HWI); }
HKPFP_EXPORT void pfpHwiEnd(void *hwi) { (void)hwi; hkpfp_interrupt_end(); }

/* Register, Create and Ready: SYS/BIOS calls them; nothing to do here. */
HKPFP_EXPORT void pfpTaskRegister(int hookSetId) { (void)hookSetId; }
HKPFP_EXPORT void pfpTaskCreate(void *task, void *eb) { (void)task, (void)eb; }
HKPFP_EXPORT void pfpTaskReady(void *task) { (void)task; }
HKPFP_EXPORT void pfpSwiRegister(int hookSetId) { (void)hookSetId; }
HKPFP_EXPORT void pfpSwiCreate(void *swi, void *eb) { (void)swi, (void)eb; }
HKPFP_EXPORT void pfpSwiReady(void *swi) { (void)swi; }
HKPFP_EXPORT void pfpHwiRegister(int hookSetId) { (void)hookSetId; }
HKPFP_EXPORT void pfpHwiCreate(void *hwi, void *eb) { (void)hwi, (void)eb; }
HKPFP_EXPORT void pfpHwiReady(void *hwi) { (void)hwi; }

/* ---------------------------------------------------------------------------------------- */
/* Printing. No stdio: the same text on bare metal, and hookprof pfp formats numbers with the
 * same arithmetic, so a dump decodes to exactly what the program prints.                    */

struct hkpfp_out {
    char text[512]; /* a line, with a --pfp-functions name (C++ names run long) */
    size_t len;
};

HKPFP_FN void hkpfp_str(struct hkpfp_out *o, const char *s)
{
    while (*s != '\0' && o->len + 1 < sizeof o->text)
        o->text[o->len++] = *s++;
    o->text[o->len] = '\0';
}

HKPFP_FN void hkpfp_dec(struct hkpfp_out *o, uint64_t v, int min_digits)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n < min_digits)
        digits[n++] = '0';
    char s[24];
    for (int i = 0; i < n; i++)
        s[i] = digits[n - 1 - i];
    s[n] = '\0';
    hkpfp_str(o, s);
}

static inline HKRT_NOINSTR double hkpfp_pow10(int k)
{
    double p = 1;
    while (k-- > 0)
        p *= 10;
    return p;
}

/* printf's %g: 6 significant digits, trailing zeros dropped, an exponent (e+XX) when it is
 * below -4 or at least 6. The decimal exponent comes from scaling by 10, the digits from the
 * value times a power of ten rounded to 6 digits, half to even: hookprof does exactly the same
 * steps in f64, so both print the same text (docs/pfp.md). */
HKPFP_FN void hkpfp_g(struct hkpfp_out *o, double v)
{
    if (v != v) {
        hkpfp_str(o, "nan");
        return;
    }
    if (v < 0) {
        hkpfp_str(o, "-");
        v = -v;
    }
    if (v == 0) {
        hkpfp_str(o, "0");
        return;
    }
    if (v > 1.7e308) {
        hkpfp_str(o, "inf");
        return;
    }
    int e = 0;
    for (double m = v; m >= 10; m /= 10)
        e++;
    for (double m = v; m < 1; m *= 10)
        e--;
    /* v scaled to six digits before the point with one rounding: powers of ten up to 1e22 are
     * exact doubles, so 999999.5 stays a tie (printf rounds it to 1e+06). */
    int k = 5 - e;
    double scaled = v;
    for (; k > 300; k -= 300)
        scaled *= hkpfp_pow10(300);
    for (; k < -300; k += 300)
        scaled /= hkpfp_pow10(300);
    scaled = k >= 0 ? scaled * hkpfp_pow10(k) : scaled / hkpfp_pow10(-k);
    if (scaled < 99999.5 && k < 300) {
        /* the exponent came out one too large (a value just under a power of ten) */
        e--;
        scaled *= 10;
    }
    uint64_t n = (uint64_t)scaled;
    double rest = scaled - (double)n;
    if (rest > 0.5 || (rest == 0.5 && (n & 1)))
        n++;
    if (n >= 1000000) {
        n /= 10;
        e++;
    }
    char digits[7];
    for (int i = 5; i >= 0; i--) {
        digits[i] = (char)('0' + n % 10);
        n /= 10;
    }
    int last = 5; /* the last digit kept: trailing zeros go */
    while (last > 0 && digits[last] == '0')
        last--;
    char s[32];
    int at = 0;
    if (e < -4 || e >= 6) {
        s[at++] = digits[0];
        if (last > 0) {
            s[at++] = '.';
            for (int i = 1; i <= last; i++)
                s[at++] = digits[i];
        }
        s[at++] = 'e';
        s[at++] = e < 0 ? '-' : '+';
        int a = e < 0 ? -e : e;
        if (a >= 100)
            s[at++] = (char)('0' + a / 100);
        s[at++] = (char)('0' + a / 10 % 10);
        s[at++] = (char)('0' + a % 10);
    } else if (e >= 0) {
        for (int i = 0; i <= e; i++)
            s[at++] = digits[i];
        if (last > e) {
            s[at++] = '.';
            for (int i = e + 1; i <= last; i++)
                s[at++] = digits[i];
        }
    } else {
        s[at++] = '0';
        s[at++] = '.';
        for (int i = 0; i < -e - 1; i++)
            s[at++] = '0';
        for (int i = 0; i <= last; i++)
            s[at++] = digits[i];
    }
    s[at] = '\0';
    hkpfp_str(o, s);
}

HKPFP_FN void hkpfp_emit(const char *text)
{
    if (hkpfp_print != NULL) {
        hkpfp_print(text, hkpfp_print_context);
        return;
    }
#if HKPFP_HOSTED
    int saved = errno;
    hkrt_write_stderr(text);
    errno = saved;
#endif
}

HKPFP_EXPORT void pfpSetPrintFunction(pfpPrintFunction print, void *context)
{
    hkpfp_print = print;
    hkpfp_print_context = context;
}


/* ---------------------------------------------------------------------------------------- */
/* The compiler bridge: hookcc --pfp-functions=GLOB (docs/pfp.md)                            */

/* One per wrapped function, emitted by the pass into section hookcc_pfp: one per function in
 * the whole program (a COMDAT, for an inline function compiled in several translation units).
 * `name` is the offset of the function's name from the point itself (no pointer: nothing for
 * the dynamic linker to relocate, and hookprof reads it from the ELF file as it is). */
struct hookcc_pfp_point {
    int32_t id;   /* -1 until given; HKPFP_NO_ID if none was left */
    int32_t name; /* offset of the NUL-terminated name from this struct */
};
#define HKPFP_NO_ID (-2)
extern struct hookcc_pfp_point __start_hookcc_pfp[] __attribute__((weak, visibility("hidden")));
extern struct hookcc_pfp_point __stop_hookcc_pfp[] __attribute__((weak, visibility("hidden")));

/* The function each id was given to (NULL: an id of the program's own). */
static const char *hkpfp_fn_names[PFP_PPCNT_MAX];
static int hkpfp_bridge_ready;
#if HKPFP_HOSTED
static __thread uint16_t t_fn_depth[PFP_PPCNT_MAX] __attribute__((tls_model("initial-exec")));
#define HKPFP_FN_DEPTH t_fn_depth
#else
static uint16_t g_fn_depth[PFP_PPCNT_MAX];
#define HKPFP_FN_DEPTH g_fn_depth
#endif

HKPFP_FN const char *hkpfp_point_name(const struct hookcc_pfp_point *p)
{
    return (const char *)p + p->name;
}

/* Enables the points given to functions (again after a pfpCreate). */
HKPFP_FN void hkpfp_bridge_enable(void)
{
    for (int id = 0; id < PFP_PPCNT_MAX; id++)
        if (hkpfp_fn_names[id] != NULL)
            pfpInst.pfpVector[id].enable = 1;
}

static int hkpfp_printed; /* pfpPrintStats was called */

#if HKPFP_HOSTED
/* A program that prints nothing itself (it was not written for PFP): the lines at exit. */
HKPFP_FN void hkpfp_bridge_at_exit(void)
{
    if (!hkpfp_printed)
        pfpPrintStats();
}
#endif

/* Gives the points of the section ids, in the section's (link) order, from PFP_PPCNT_MAX - 1
 * down: the program's own pfpBegin ids are expected low (docs/pfp.md). Once. */
HKPFP_FN void hkpfp_bridge_init(void)
{
    hkpfp_lock();
    if (!__atomic_load_n(&hkpfp_bridge_ready, __ATOMIC_ACQUIRE)) {
        if (__builtin_memcmp(pfpInst.magic, HKPFP_MAGIC, sizeof HKPFP_MAGIC) != 0) {
            hkpfp_unlock();
            pfpCreate();
            hkpfp_lock();
        }
        int next = PFP_PPCNT_MAX - 1;
        for (struct hookcc_pfp_point *p = __start_hookcc_pfp; p != NULL && p < __stop_hookcc_pfp;
             p++) {
            int id = next >= 1 ? next-- : HKPFP_NO_ID; /* id 0 is pfpCalibrate's */
            if (id >= 0)
                hkpfp_fn_names[id] = hkpfp_point_name(p);
            __atomic_store_n(&p->id, id, __ATOMIC_RELEASE);
        }
        hkpfp_bridge_enable();
#if HKPFP_HOSTED
        atexit(hkpfp_bridge_at_exit);
#endif
        __atomic_store_n(&hkpfp_bridge_ready, 1, __ATOMIC_RELEASE);
    }
    hkpfp_unlock();
}

/* The pass calls these at the entry and at every exit (unwinding included) of a function
 * named by --pfp-functions. A recursive call is part of its outermost one's region. */
HKPFP_EXPORT void __hookcc_pfp_begin(struct hookcc_pfp_point *p)
{
    int32_t id = __atomic_load_n(&p->id, __ATOMIC_ACQUIRE);
    if (__builtin_expect(id == -1, 0)) {
        hkpfp_bridge_init();
        id = __atomic_load_n(&p->id, __ATOMIC_ACQUIRE);
    }
    if (id < 0)
        return;
    if (HKPFP_FN_DEPTH[id]++ == 0)
        pfpBegin(id, NULL);
}

HKPFP_EXPORT void __hookcc_pfp_end(struct hookcc_pfp_point *p)
{
    int32_t id = __atomic_load_n(&p->id, __ATOMIC_ACQUIRE);
    if (id < 0 || HKPFP_FN_DEPTH[id] == 0)
        return;
    if (--HKPFP_FN_DEPTH[id] == 0)
        pfpEnd(id, 0);
}

HKPFP_EXPORT void pfpPrintStats(void)
{
    hkpfp_printed = 1;
    hkpfp_measure_rate();
    uint64_t rate = pfpInst.ticks_per_second;
    for (int id = 0; id < PFP_PPCNT_MAX; id++) {
        pfpStats_t s;
        pfpGetStats(id, &s);
        if (s.n_count == 0)
            continue;
        struct hkpfp_out o = {{0}, 0};
        double average = (double)s.c_total / (double)s.n_count;
        hkpfp_str(&o, "ID: ");
        hkpfp_dec(&o, (uint64_t)id, 2);
        hkpfp_str(&o, ", n=");
        hkpfp_dec(&o, s.n_count, 1);
        hkpfp_str(&o, ", C=");
        hkpfp_dec(&o, (uint64_t)s.c_total, 1);
        hkpfp_str(&o, ", Cmin=");
        hkpfp_dec(&o, s.c_min, 1);
        hkpfp_str(&o, ", Cmax=");
        hkpfp_dec(&o, s.c_max, 1);
        hkpfp_str(&o, ", C-avg=");
        hkpfp_g(&o, average);
        hkpfp_str(&o, ", Avg-T=");
        if (rate != 0) {
            hkpfp_g(&o, average / (double)rate * 1000.0);
            hkpfp_str(&o, "ms");
        } else {
            hkpfp_str(&o, "?ms (the counter's rate is not known)");
        }
        if (hkpfp_fn_names[id] != NULL) {
            hkpfp_str(&o, ", fn=");
            hkpfp_str(&o, hkpfp_fn_names[id]);
        }
        hkpfp_str(&o, "\n");
        hkpfp_emit(o.text);
    }
    uint64_t misuse[4] = {pfpInst.bad_id, pfpInst.begin_twice, pfpInst.end_without_begin,
                          pfpInst.bad_nesting};
    static const char *const what[4][2] = {
        {"PFP: ", " calls with an id out of range were ignored\n"},
        {"PFP: ", " pfpBegin calls on a point already begun: the point was disabled\n"},
        {"PFP: ", " pfpEnd calls without pfpBegin were ignored\n"},
        {"PFP: ", " pfpEnd calls out of nesting order or on another thread's region: the point "
                  "was disabled, or the call ignored\n"}};
    for (int i = 0; i < 4; i++) {
        if (misuse[i] == 0)
            continue;
        struct hkpfp_out o = {{0}, 0};
        hkpfp_str(&o, what[i][0]);
        hkpfp_dec(&o, misuse[i], 1);
        hkpfp_str(&o, what[i][1]);
        hkpfp_emit(o.text);
    }
}
