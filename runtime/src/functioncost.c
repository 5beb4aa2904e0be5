/* hookcc's NITRO-SDK function cost measurement (seeds/nitro-sdk-profiler.txt §4;
 * docs/nitro.md).
 *
 * Compiled on its own as one translation unit by the hookcc driver for whatever target the
 * user builds for (NITRO_PROFILE_TYPE=FUNCTIONCOST or --hook-runtime=functioncost), and linked
 * into executables:
 *   clang-19 -std=gnu11 -O2 -fPIC -fno-stack-protector -fvisibility=hidden \
 *            -I runtime/include -I runtime/src [--target=...] -c runtime/src/functioncost.c
 *
 * How it works
 * - Two kinds of buffer (§4.1). A thread's measurement buffer (OS_InitFunctionCost) gets a
 *   24-byte record per hook: __PROFILE_ENTRY writes {name, time, 0}, __PROFILE_EXIT writes
 *   {EXIT tag, time, 0}; the third field is the interval the thread then spent switched out
 *   (§4.2), added to the thread's last record when a user-level scheduler switches it back in
 *   (OS_SwitchProfilerThread). Times are hkrt_ticks(), 64 bits: a 32-bit tick at x86's
 *   rate wraps in about a second, far shorter than a call may take.
 * - The hooks: the thread's control area through local-exec TLS, one compare against the
 *   limit, the name (or tag) and the time stores, the current pointer. A thread that records
 *   nothing (no buffer, disabled, or inside the runtime) points at hkn_fc_off, whose limit of 0
 *   fails that same compare, so there is no other test. A full buffer goes to the out-of-line
 *   slow path, which counts the record as lost (and ignores hkn_fc_off).
 * - The hooks do not write the interval field: every record slot from `current` to the limit
 *   holds interval 0 already (the buffer's set-up zeroes them, and so does whatever moves
 *   `current` back: a summary, a clear), so every record a hook writes has interval 0.
 * - OS_CalcStatistics pairs each exit with its entry in one forward pass, keeping the entries
 *   still open compacted at the front of the buffer (they are never more than the records
 *   read), so no other memory is needed. A call's cost is its own time, as the seed's §4.1
 *   figure counts it (function() twice, 15 and 50 ticks, the second calling a 10-tick test():
 *   55): exit time - entry time - the intervals recorded between them - the cost of the calls
 *   it made. One running total, `excluded`, grows by every interval and by every summarized
 *   call's cost, so a call's cost is its elapsed time less what `excluded` grew by meanwhile.
 *   (A statistics buffer set up with OS_InitStatisticsEx(…, TRUE) gets inclusive costs
 *   instead: the calls' costs are not excluded.) Each cost is added to the statistics buffer
 *   (§4.3), under that buffer's lock, so several threads may summarize into one. The entries
 *   of calls still in progress stay in the measurement buffer, so that their exits still find
 *   them. Functions are listed in the order of their first call (an entry reserves the line),
 *   as the seed's §4.5 dump lists test1, test2, test3.
 * - No locks, atomics, malloc, libc calls or errno changes in the hooks.
 */

#include "nitro_common.h"

/* The clock of the measurements. By default the OS tick (hkrt_ticks(): cycles), so a call's
 * cost includes the time its OS thread was pre-empted or blocked. Built with
 * -DHKN_FC_THREAD_CPU_CLOCK (hookcc --nitro-clock=thread-cpu), the calling thread's CPU time
 * in nanoseconds (CLOCK_THREAD_CPUTIME_ID), as the seed subtracts the time a thread is switched
 * out (§2.2, §4.2) for OS threads too: at the price of a system call per hook (docs/nitro.md,
 * "Function cost on OS threads"). */
#ifdef HKN_FC_THREAD_CPU_CLOCK
#if !HKN_HOSTED
#error "hookcc --nitro-clock=thread-cpu needs a hosted target (clock_gettime(CLOCK_THREAD_CPUTIME_ID))"
#endif
#include <time.h>
static inline __attribute__((always_inline)) HKN_FN uint64_t hkn_fc_ticks(void)
{
    struct timespec ts;
    /* Sets errno only on failure, which a valid clock id on Linux does not have. */
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#else
#define hkn_fc_ticks hkrt_ticks
#endif

/* ---------------------------------------------------------------------------------------- */
/* Layout (docs/nitro.md)                                                                   */

/* The name field of an exit record: no name pointer has this value (NITRO-SDK: 0xffffffff). */
#define HKN_FC_EXIT_TAG UINT64_MAX

struct hkn_fc_record {
    uint64_t name;     /* the function's name string, or HKN_FC_EXIT_TAG */
    uint64_t time;     /* hkrt_ticks() */
    uint64_t interval; /* ticks the thread spent switched out after this record (in an entry
                          kept by a summary: also the cost of the calls that returned after
                          it, before the next record kept) */
};
_Static_assert(sizeof(struct hkn_fc_record) == 24, "docs/nitro.md: 24-byte records");

/* The measurement buffer's control area. */
struct hkn_fc {
    struct hkn_header h;      /* 0 */
    uintptr_t current;        /* 56       the record the next hook writes */
    uintptr_t limit;          /* 56 + 1W  one past the last record */
    uint64_t switched_out_at; /* 56 + 2W  tick the thread was switched out at; 0 running */
    uint64_t lost;            /*   + 8    records not kept since the last summary: full */
    uint64_t unmatched_exits; /*   + 16   exits summarized without an entry (frames open when
                                          the buffer was initialised or cleared) */
};
#define HKN_FC_HEADER_SIZE ((uint32_t)sizeof(struct hkn_fc))
_Static_assert(sizeof(struct hkn_fc) == 56 + 2 * sizeof(void *) + 24,
               "docs/nitro.md: function cost control area");
_Static_assert(sizeof(struct hkn_fc) % HKN_ALIGN == 0, "records start 8-byte aligned");

/* One function in the statistics buffer. */
struct hkn_stat_entry {
    uint64_t name;  /* the function's name string */
    uint64_t count; /* calls summarized */
    uint64_t cost;  /* their total cost, in ticks */
};
_Static_assert(sizeof(struct hkn_stat_entry) == 24, "docs/nitro.md: 24-byte entries");

/* The statistics buffer's control area. */
struct hkn_stat {
    struct hkn_header h;    /* 0 */
    uint64_t used;          /* 56 entries in use, in the order first summarized */
    uint64_t dropped_calls; /* 64 calls not counted: no entry left for their function */
    uint32_t lock;          /* 72 1 while a thread summarizes or dumps */
    uint32_t flags;         /* 76 HKN_STAT_INCLUSIVE, or 0 */
};
/* flags: costs include the calls a call made (OS_InitStatisticsEx); without it they do not. */
#define HKN_STAT_INCLUSIVE 1u
#define HKN_STAT_HEADER_SIZE ((uint32_t)sizeof(struct hkn_stat))
_Static_assert(sizeof(struct hkn_stat) == 80, "docs/nitro.md: statistics control area");

static HKN_FN struct hkn_fc_record *hkn_fc_first(const struct hkn_fc *c)
{
    return (struct hkn_fc_record *)((uintptr_t)c + HKN_FC_HEADER_SIZE);
}

/* Interval 0 in the record slots [from, to), which hooks may write next: they leave the
 * interval as they find it. */
static HKN_FN void hkn_fc_zero_intervals(struct hkn_fc_record *from, struct hkn_fc_record *to)
{
    for (struct hkn_fc_record *r = from; r < to; r++)
        r->interval = 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Per-thread hook state                                                                    */

/* What the hooks read while the thread records nothing: a limit of 0 sends them to
 * hkn_fc_full, which leaves it alone. Never written. */
static const struct hkn_fc hkn_fc_off;

/* The control area the thread's hooks record into, or hkn_fc_off: never NULL, so the bounds
 * check is the hooks' only test. */
static HKN_THREAD_LOCAL struct hkn_fc *t_fc = (struct hkn_fc *)&hkn_fc_off;

static HKN_FN void hkn_activate(struct hkn_header *h)
{
    __atomic_store_n(&t_fc, h != NULL ? (struct hkn_fc *)h : (struct hkn_fc *)&hkn_fc_off,
                     __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------------------------- */
/* Hooks                                                                                    */

static inline __attribute__((always_inline)) HKN_FN void
hkn_fc_write(struct hkn_fc_record *r, uint64_t name)
{
    r->name = name;
#if defined(HKRT_TICKS_SPLIT) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ &&                  \
    !defined(HKN_FC_THREAD_CPU_CLOCK)
    /* rdtsc gives edx:eax: two 32-bit stores save the shift and the or. */
    uint32_t lo, hi;
    hkrt_ticks_split(&lo, &hi);
    __builtin_memcpy((char *)&r->time, &lo, sizeof lo);
    __builtin_memcpy((char *)&r->time + sizeof lo, &hi, sizeof hi);
#else
    r->time = hkn_fc_ticks();
#endif
    /* r->interval is 0 already (hkn_fc_zero_intervals). */
}

/* The buffer is full: the record is lost, and counted. Or the thread records nothing. */
static HKN_COLD void hkn_fc_full(void)
{
    struct hkn_fc *c = t_fc;
    if (c != &hkn_fc_off)
        c->lost++;
}

HKN_EXPORT void __PROFILE_ENTRY(const char *name, void *lr, uintptr_t r0, uintptr_t r1,
                                uintptr_t r2, uintptr_t r3)
{
    (void)lr, (void)r0, (void)r1, (void)r2, (void)r3;
    struct hkn_fc *c = t_fc;
    uintptr_t p = c->current;
    if (HKN_UNLIKELY(p >= c->limit)) {
        hkn_fc_full();
        return;
    }
    hkn_fc_write((struct hkn_fc_record *)p, (uint64_t)(uintptr_t)name);
    c->current = p + sizeof(struct hkn_fc_record);
}

HKN_EXPORT void __PROFILE_EXIT(void)
{
    struct hkn_fc *c = t_fc;
    uintptr_t p = c->current;
    if (HKN_UNLIKELY(p >= c->limit)) {
        hkn_fc_full();
        return;
    }
    hkn_fc_write((struct hkn_fc_record *)p, HKN_FC_EXIT_TAG);
    c->current = p + sizeof(struct hkn_fc_record);
}

/* ---------------------------------------------------------------------------------------- */
/* Measurement buffer                                                                       */

HKN_EXPORT int OS_CalcFunctionCostLines(u32 size)
{
    if (size < HKN_FC_HEADER_SIZE)
        return 0;
    return (int)((size - HKN_FC_HEADER_SIZE) / sizeof(struct hkn_fc_record));
}

HKN_EXPORT u32 OS_CalcFunctionCostBufferSize(int lines)
{
    if (lines < 0)
        lines = 0;
    uint64_t size = HKN_FC_HEADER_SIZE + (uint64_t)lines * sizeof(struct hkn_fc_record);
    return size > UINT32_MAX ? UINT32_MAX : (u32)size;
}

/* The records written so far: first to current, or to the limit if current is out of place
 * (cannot happen unless the program wrote over the control area). */
static HKN_FN struct hkn_fc_record *hkn_fc_written_end(const struct hkn_fc *c)
{
    struct hkn_fc_record *end = (struct hkn_fc_record *)c->current;
    if (end < hkn_fc_first(c) || end > (struct hkn_fc_record *)c->limit)
        end = (struct hkn_fc_record *)c->limit;
    return end;
}

static HKN_FN void hkn_fc_clear(struct hkn_fc *c)
{
    hkn_fc_zero_intervals(hkn_fc_first(c), hkn_fc_written_end(c));
    c->current = (uintptr_t)hkn_fc_first(c);
    c->lost = 0;
    c->unmatched_exits = 0;
}

HKN_EXPORT void OS_InitFunctionCost(void *buf, u32 size)
{
    static const char api[] = "OS_InitFunctionCost";
    struct hkn_thread *t = &t_hkn;
    if (!hkn_enter(t))
        return;
    uint32_t usable;
    struct hkn_fc *c = hkn_align_buffer(buf, size, &usable);
    if (buf == NULL) {
        hkn_report(api, "the buffer is NULL; nothing is measured");
        hkn_release(t);
    } else if (usable < HKN_FC_HEADER_SIZE + sizeof(struct hkn_fc_record)) {
        struct hkn_out o = {0};
        hkn_out_str(&o, api);
        hkn_out_str(&o, ": a buffer of ");
        hkn_out_dec(&o, size);
        hkn_out_str(&o, " bytes is too small: one record needs ");
        hkn_out_dec(&o, OS_CalcFunctionCostBufferSize(1));
        hkn_out_str(&o, (uintptr_t)c != (uintptr_t)buf
                            ? " from an 8-byte aligned address (OS_CalcFunctionCostBufferSize)"
                            : " (OS_CalcFunctionCostBufferSize)");
        hkn_out_str(&o, "; nothing is measured");
        hkn_out_end(&o);
        hkn_release(t);
    } else {
        uint32_t capacity = (usable - HKN_FC_HEADER_SIZE) / (uint32_t)sizeof(struct hkn_fc_record);
        uintptr_t limit = (uintptr_t)(hkn_fc_first(c) + capacity);
        if (hkn_claim(t, &c->h, (uintptr_t)c, limit, api)) {
            if (t->tid == 0)
                t->tid = hkn_gettid();
            hkn_header_init(&c->h, HKN_KIND_FUNCTIONCOST, 0, 0, HKN_FC_HEADER_SIZE,
                            (uint32_t)sizeof(struct hkn_fc_record), capacity, t->tid);
            c->limit = limit;
            c->switched_out_at = 0;
            c->current = limit; /* every slot's interval is zeroed by the clear */
            hkn_fc_clear(c);
        }
    }
    hkn_leave(t);
}

HKN_EXPORT BOOL OS_EnableFunctionCost(void)
{
    return hkn_set_enabled(1);
}

HKN_EXPORT BOOL OS_DisableFunctionCost(void)
{
    return hkn_set_enabled(0);
}

HKN_EXPORT BOOL OS_RestoreFunctionCost(BOOL enable)
{
    return hkn_set_enabled(enable != FALSE);
}

HKN_EXPORT void OS_ClearFunctionCostBuffer(void)
{
    struct hkn_thread *t = &t_hkn;
    if (!hkn_enter(t))
        return;
    if (t->installed == NULL)
        hkn_report("OS_ClearFunctionCostBuffer",
                   "this thread has no function cost buffer (call OS_InitFunctionCost first)");
    else
        hkn_fc_clear((struct hkn_fc *)t->installed);
    hkn_leave(t);
}

/* Switch out: note the time. Switch in: the time away goes to the thread's last record, so
 * that every call in progress across the switch has it subtracted (§4.2, §4.3). */
HKN_EXPORT void *OS_SwitchProfilerThread(void *incoming)
{
    struct hkn_thread *t = &t_hkn;
    struct hkn_header *out = hkn_switch_out(t);
    uint64_t now = hkn_fc_ticks();
    if (out != NULL)
        ((struct hkn_fc *)out)->switched_out_at = now != 0 ? now : 1;
    struct hkn_header *in =
        hkn_switch_in(t, out, incoming, HKN_KIND_FUNCTIONCOST,
                      "not a function cost buffer (pass what OS_SwitchProfilerThread returned, "
                      "or NULL); the incoming thread measures nothing");
    if (in != NULL) {
        struct hkn_fc *c = (struct hkn_fc *)in;
        if (c->switched_out_at != 0) {
            uint64_t away = now - c->switched_out_at;
            if (c->current > (uintptr_t)hkn_fc_first(c) && c->current <= c->limit)
                ((struct hkn_fc_record *)c->current - 1)->interval += away;
            c->switched_out_at = 0;
        }
    }
    hkn_switch_done(t, in);
    return out;
}

/* ---------------------------------------------------------------------------------------- */
/* Statistics                                                                               */

HKN_EXPORT void OS_InitStatisticsEx(void *statBuf, u32 size, BOOL inclusive)
{
    const char *api = inclusive ? "OS_InitStatisticsEx" : "OS_InitStatistics";
    struct hkn_thread *t = &t_hkn;
    if (!hkn_enter(t))
        return;
    uint32_t usable;
    struct hkn_stat *s = hkn_align_buffer(statBuf, size, &usable);
    if (statBuf == NULL) {
        hkn_report(api, "the buffer is NULL");
    } else if (usable < HKN_STAT_HEADER_SIZE + sizeof(struct hkn_stat_entry)) {
        struct hkn_out o = {0};
        hkn_out_str(&o, api);
        hkn_out_str(&o, ": a buffer of ");
        hkn_out_dec(&o, size);
        hkn_out_str(&o, " bytes is too small: one function needs ");
        hkn_out_dec(&o, HKN_STAT_HEADER_SIZE + sizeof(struct hkn_stat_entry));
        hkn_out_str(&o, (uintptr_t)s != (uintptr_t)statBuf ? " from an 8-byte aligned address"
                                                          : "");
        hkn_out_end(&o);
    } else {
        uint32_t capacity =
            (usable - HKN_STAT_HEADER_SIZE) / (uint32_t)sizeof(struct hkn_stat_entry);
        if (t->tid == 0)
            t->tid = hkn_gettid();
        hkn_header_init(&s->h, HKN_KIND_STATISTICS, 0, 0, HKN_STAT_HEADER_SIZE,
                        (uint32_t)sizeof(struct hkn_stat_entry), capacity, t->tid);
        s->used = 0;
        s->dropped_calls = 0;
        s->flags = inclusive ? HKN_STAT_INCLUSIVE : 0;
        __atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
    }
    hkn_leave(t);
}

HKN_EXPORT void OS_InitStatistics(void *statBuf, u32 size)
{
    OS_InitStatisticsEx(statBuf, size, FALSE);
}

static HKN_FN void hkn_stat_lock(struct hkn_stat *s)
{
    while (__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE)) {
#if HKN_HOSTED
        sched_yield();
#endif
    }
}

static HKN_FN void hkn_stat_unlock(struct hkn_stat *s)
{
    __atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
}

static HKN_FN struct hkn_stat_entry *hkn_stat_entries(struct hkn_stat *s)
{
    return (struct hkn_stat_entry *)((uintptr_t)s + HKN_STAT_HEADER_SIZE);
}

/* One call of `name` that cost `cost`. A linear search, as NITRO-SDK's: entries stay in the
 * order functions were first summarized, which is the dump's order. */
/* The line of `name`, added (count 0) if it has none yet; NULL if the buffer is full. */
static HKN_FN struct hkn_stat_entry *hkn_stat_line(struct hkn_stat *s, uint64_t name)
{
    struct hkn_stat_entry *e = hkn_stat_entries(s);
    uint64_t used = s->used;
    for (uint64_t i = 0; i < used; i++) {
        if (e[i].name == name)
            return &e[i];
    }
    if (used >= s->h.capacity)
        return NULL;
    e[used].name = name;
    e[used].count = 0;
    e[used].cost = 0;
    s->used = used + 1;
    return &e[used];
}

static HKN_FN void hkn_stat_add(struct hkn_stat *s, uint64_t name, uint64_t cost)
{
    struct hkn_stat_entry *e = hkn_stat_line(s, name);
    if (e == NULL) {
        s->dropped_calls++;
        return;
    }
    e->count++;
    e->cost += cost;
}

/* Adds c's completed calls to s and clears c, keeping the entries of calls in progress. */
static HKN_FN void hkn_fc_summarize(struct hkn_stat *s, struct hkn_fc *c, const char *api)
{
    struct hkn_fc_record *first = hkn_fc_first(c);
    struct hkn_fc_record *written = hkn_fc_written_end(c);
    struct hkn_fc_record *end = written;
    if (end != (struct hkn_fc_record *)c->current)
        end = first; /* cannot happen unless the program wrote over the control area */
    const int exclusive = !(s->flags & HKN_STAT_INCLUSIVE);
    uint64_t open = 0;     /* entries not yet matched: first[0 .. open) */
    uint64_t excluded = 0; /* the intervals of the records before r, and (exclusive costs)
                              the costs of the calls summarized before r */
    for (struct hkn_fc_record *r = first; r < end; r++) {
        uint64_t name = r->name, time = r->time, interval = r->interval;
        if (name == HKN_FC_EXIT_TAG) {
            if (open == 0) {
                c->unmatched_exits++;
            } else {
                /* An open entry keeps in `interval` the excluded total before it. */
                struct hkn_fc_record *e = &first[--open];
                uint64_t elapsed = time - e->time, away = excluded - e->interval;
                uint64_t cost = elapsed > away ? elapsed - away : 0;
                hkn_stat_add(s, e->name, cost);
                if (exclusive)
                    excluded += cost;
            }
        } else {
            (void)hkn_stat_line(s, name); /* functions listed in the order of first calls */
            /* open <= r - first: this overwrites at most r itself, already read. */
            struct hkn_fc_record *e = &first[open++];
            e->name = name;
            e->time = time;
            e->interval = excluded;
        }
        excluded += interval;
    }
    if (c->lost != 0) {
        /* Records were lost from some point on, exits included: the entries open then would
         * pair with the wrong exits later. Drop them; say what happened. */
        struct hkn_out o = {0};
        hkn_out_str(&o, api);
        hkn_out_str(&o, ": the function cost buffer was full: ");
        hkn_out_dec(&o, c->lost);
        hkn_out_str(&o, " records were not kept, so ");
        hkn_out_dec(&o, open);
        hkn_out_str(&o, " calls in progress then are not counted; summarize more often or "
                        "use a larger buffer (OS_CalcFunctionCostBufferSize)");
        hkn_out_end(&o);
        open = 0;
    }
    /* Kept entries get back per-record intervals (the total from each to the next). */
    for (uint64_t j = 0; j < open; j++) {
        uint64_t next = j + 1 < open ? first[j + 1].interval : excluded;
        first[j].interval = next - first[j].interval;
    }
    hkn_fc_zero_intervals(first + open, written);
    c->current = (uintptr_t)(first + open);
    c->lost = 0;
}

/* The statistics buffer statBuf, or NULL after reporting why not. */
static HKN_FN struct hkn_stat *hkn_stat_get(void *statBuf, const char *api)
{
    uint32_t ignored;
    struct hkn_stat *s = hkn_align_buffer(statBuf, HKN_ALIGN, &ignored);
    if (statBuf == NULL || !hkn_header_valid(s, HKN_KIND_STATISTICS)) {
        hkn_report(api, "not a statistics buffer (call OS_InitStatistics first)");
        return NULL;
    }
    return s;
}

HKN_EXPORT void OS_CalcThreadStatistics(void *statBuf, void *costBuf)
{
    const char *api = costBuf == NULL ? "OS_CalcStatistics" : "OS_CalcThreadStatistics";
    struct hkn_thread *t = &t_hkn;
    if (!hkn_enter(t))
        return;
    struct hkn_stat *s = hkn_stat_get(statBuf, api);
    struct hkn_fc *c = NULL;
    if (costBuf == NULL) {
        c = (struct hkn_fc *)t->installed;
        if (c == NULL)
            hkn_report(api, "this thread has no function cost buffer (call OS_InitFunctionCost "
                            "first)");
    } else {
        uint32_t ignored;
        c = hkn_align_buffer(costBuf, HKN_ALIGN, &ignored);
        if (!hkn_header_valid(c, HKN_KIND_FUNCTIONCOST)) {
            hkn_report(api, "not a function cost buffer (OS_InitFunctionCost)");
            c = NULL;
        } else if (&c->h != t->installed &&
                   hkn_in_use_elsewhere(t, (uintptr_t)c, hkn_buffer_end(&c->h))) {
            hkn_report(api, "a running thread measures into this buffer; it must summarize "
                            "it itself (OS_CalcStatistics)");
            c = NULL;
        }
    }
    if (s != NULL && c != NULL) {
        hkn_stat_lock(s);
        hkn_fc_summarize(s, c, api);
        hkn_stat_unlock(s);
    }
    hkn_leave(t);
}

HKN_EXPORT void OS_CalcStatistics(void *statBuf)
{
    OS_CalcThreadStatistics(statBuf, NULL);
}

HKN_EXPORT void OS_DumpStatistics(void *statBuf)
{
    struct hkn_thread *t = &t_hkn;
    if (!hkn_enter(t))
        return;
    struct hkn_stat *s = hkn_stat_get(statBuf, "OS_DumpStatistics");
    if (s != NULL) {
        hkn_stat_lock(s);
        struct hkn_stat_entry *e = hkn_stat_entries(s);
        for (uint64_t i = 0; i < s->used; i++) {
            if (e[i].count == 0)
                continue; /* a line reserved by a call still in progress */
            struct hkn_out o = {0};
            hkn_out_str(&o, (const char *)(uintptr_t)e[i].name);
            hkn_out_str(&o, ": count ");
            hkn_out_dec(&o, e[i].count);
            hkn_out_str(&o, ", cost ");
            hkn_out_dec(&o, e[i].cost);
            hkn_out_end(&o);
        }
        if (s->dropped_calls != 0) {
            struct hkn_out o = {0};
            hkn_out_str(&o, "OS_DumpStatistics: ");
            hkn_out_dec(&o, s->dropped_calls);
            hkn_out_str(&o, " calls of other functions are not counted: the statistics buffer "
                            "holds ");
            hkn_out_dec(&o, s->h.capacity);
            hkn_out_str(&o, " functions");
            hkn_out_end(&o);
        }
        hkn_stat_unlock(s);
    }
    hkn_leave(t);
}

HKN_EXPORT void OS_DispStatistics(void *statBuf)
{
    OS_DumpStatistics(statBuf);
}
