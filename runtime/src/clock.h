/* The runtime's timestamp source, shared by every runtime component (trace, TI, NITRO).
 *
 *   uint64_t hkrt_ticks(void)                  the counter, as cheap as the target allows
 *   HKRT_CLOCK_SOURCE                          its name, for messages
 *   HKRT_CLOCK_NEEDS_CALIBRATION               1 where the frequency must be measured (x86 TSC)
 *   uint64_t hkrt_ticks_per_second_fixed(void) the frequency where the target tells it, else 0
 *   HKRT_TICKS_SPLIT, hkrt_ticks_split(&lo, &hi) where the counter comes as two 32-bit halves
 *
 * and, in a hosted build (__STDC_HOSTED__), calibration against CLOCK_MONOTONIC:
 *
 *   struct hkrt_clock_point hkrt_clock_point_now(void)
 *   struct hkrt_clock_point hkrt_clock_point_after(const struct hkrt_clock_point *start,
 *                                                  uint64_t min_ns)
 *   uint64_t hkrt_ticks_per_second(const struct hkrt_clock_point *start,
 *                                  const struct hkrt_clock_point *end)
 *
 * Sources, as the trace format (docs/trace-format.md, EVENTS) specifies:
 *   x86, x86-64  rdtsc: ~11 ns here (DESIGN.md); frequency measured between two points
 *   AArch64      mrs cntvct_el0: frequency in cntfrq_el0
 *   others       clock_gettime(CLOCK_MONOTONIC) in ns (a vDSO call on Linux): 1e9 ticks/s.
 *                A freestanding build of such a target (or any build defining
 *                HKRT_TICKS_EXTERN) calls the program's hkrt_ticks_extern() and
 *                hkrt_ticks_per_second_extern().
 *
 * Timestamps are used as 62-bit values (the trace keeps a kind in the top two bits); none of
 * these counters reaches 2^62 in practice (146 years of ns, 36 years of a 4 GHz TSC).
 */
#ifndef HOOKCC_RUNTIME_CLOCK_H
#define HOOKCC_RUNTIME_CLOCK_H

#include <stdint.h>

#ifndef HKRT_NOINSTR
/* Every runtime function is marked never-instrument, so building the runtime with hookcc (or
 * -finstrument-functions) cannot make a hook call itself. */
#define HKRT_NOINSTR __attribute__((no_instrument_function))
#endif

#if defined(__x86_64__) || defined(__i386__)

#define HKRT_CLOCK_SOURCE "rdtsc"
#define HKRT_CLOCK_NEEDS_CALIBRATION 1

/* HKRT_CLOCK_SERIALIZED (hookcc --trace-clock=serialized): lfence first, so that the read
 * waits for the instructions before it. Without it an out-of-order core runs the function's
 * own work while a read is pending, and what a hook pair costs ranges from a few ns beside a
 * long body to the reads' whole latency beside an empty one (docs/performance.md, "Times you
 * can trust"): a cost compensation cannot know. With it every pair costs about the same. */
#if defined(HKRT_CLOCK_SERIALIZED)
#define HKRT_RDTSC "lfence\n\trdtsc"
#else
#define HKRT_RDTSC "rdtsc"
#endif

/* Inline asm rather than __rdtsc() from <x86intrin.h>: same instruction, no large header.
 * volatile, so two reads are never merged. */
static inline HKRT_NOINSTR uint64_t hkrt_ticks(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__(HKRT_RDTSC : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

static inline HKRT_NOINSTR uint64_t hkrt_ticks_per_second_fixed(void)
{
    return 0; /* the TSC rate is not architecturally visible: calibrate */
}

/* The counter as its two 32-bit halves, as rdtsc delivers them: a writer on this
 * little-endian target stores them with two 32-bit moves and saves the shift and or. */
#define HKRT_TICKS_SPLIT 1
static inline HKRT_NOINSTR void hkrt_ticks_split(uint32_t *lo, uint32_t *hi)
{
    __asm__ __volatile__(HKRT_RDTSC : "=a"(*lo), "=d"(*hi));
}

#elif defined(__aarch64__)

#define HKRT_CLOCK_SOURCE "cntvct_el0"
#define HKRT_CLOCK_NEEDS_CALIBRATION 0

/* No isb before the read: a timestamp that may be taken a few instructions early is the price
 * of not draining the pipeline on every hook; HKRT_CLOCK_SERIALIZED (hookcc
 * --trace-clock=serialized) pays it, as lfence does on x86-64 above. */
static inline HKRT_NOINSTR uint64_t hkrt_ticks(void)
{
    uint64_t v;
#if defined(HKRT_CLOCK_SERIALIZED)
    __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v)::"memory");
#else
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
#endif
    return v;
}

static inline HKRT_NOINSTR uint64_t hkrt_ticks_per_second_fixed(void)
{
    uint64_t f;
    __asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(f));
    return f;
}

#elif defined(HKRT_TICKS_EXTERN) || !__STDC_HOSTED__

/* Bare metal (hookcc compiles the runtime -ffreestanding for *-none-* targets): the counter
 * is the board's (a timer, SysTick, DWT CYCCNT, mcycle), so the firmware provides it; see
 * docs/baremetal.md. Only the timed components reference it: with --gc-sections a call-trace
 * firmware that never calls OS_GetTick needs neither function. */

#define HKRT_CLOCK_SOURCE "hkrt_ticks_extern"
#define HKRT_CLOCK_NEEDS_CALIBRATION 0

uint64_t hkrt_ticks_extern(void);
uint64_t hkrt_ticks_per_second_extern(void);

static inline HKRT_NOINSTR uint64_t hkrt_ticks(void)
{
    return hkrt_ticks_extern();
}

static inline HKRT_NOINSTR uint64_t hkrt_ticks_per_second_fixed(void)
{
    return hkrt_ticks_per_second_extern();
}

#elif __STDC_HOSTED__

#include <time.h>

#define HKRT_CLOCK_SOURCE "CLOCK_MONOTONIC"
#define HKRT_CLOCK_NEEDS_CALIBRATION 0
#define HKRT_CLOCK_IS_MONOTONIC_NS 1

/* CLOCK_MONOTONIC cannot fail, so errno is left alone. */
static inline HKRT_NOINSTR uint64_t hkrt_ticks(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

static inline HKRT_NOINSTR uint64_t hkrt_ticks_per_second_fixed(void)
{
    return UINT64_C(1000000000);
}

#else
#error "hookcc runtime: no clock known for this hosted target; define HKRT_TICKS_EXTERN and provide hkrt_ticks_extern() and hkrt_ticks_per_second_extern()"
#endif

#if __STDC_HOSTED__

#include <time.h>

/* A counter value and the CLOCK_MONOTONIC time (ns) taken together. */
struct hkrt_clock_point {
    uint64_t ticks;
    uint64_t ns;
};

static inline HKRT_NOINSTR uint64_t hkrt_monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}

/* The counter is read before and after the clock and the mean taken, so the pair is skewed by
 * at most half the time between the two reads: ~15 ns, unless the thread was preempted or
 * interrupted in between, which on a busy machine happens often enough to put a short run's
 * calibration off by tens of percent. So the pair is taken a few times and the tightest kept. */
static inline HKRT_NOINSTR struct hkrt_clock_point hkrt_clock_point_now(void)
{
    struct hkrt_clock_point best = {0, 0};
    uint64_t best_spread = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t before = hkrt_ticks();
        uint64_t ns = hkrt_monotonic_ns();
        uint64_t after = hkrt_ticks();
        if (after - before < best_spread) {
            best_spread = after - before;
            best.ticks = before + (after - before) / 2;
            best.ns = ns;
        }
    }
    return best;
}

/* A point at least min_ns after start; spins if the program ran shorter than that, so the
 * calibration window is never so short that the pairing skew dominates (1 ms gives ~3e-5). */
static inline HKRT_NOINSTR struct hkrt_clock_point
hkrt_clock_point_after(const struct hkrt_clock_point *start, uint64_t min_ns)
{
    struct hkrt_clock_point p = hkrt_clock_point_now();
    while (p.ns - start->ns < min_ns)
        p = hkrt_clock_point_now();
    return p;
}

/* Ticks per second: the architectural frequency where there is one, else measured between the
 * two points (0 if they are not in order). */
static inline HKRT_NOINSTR uint64_t hkrt_ticks_per_second(const struct hkrt_clock_point *start,
                                                          const struct hkrt_clock_point *end)
{
    uint64_t fixed = hkrt_ticks_per_second_fixed();
    if (fixed != 0)
        return fixed;
    if (end->ns <= start->ns || end->ticks <= start->ticks)
        return 0;
    /* double: (ticks * 1e9) overflows 64 bits after a few seconds, and 32-bit targets have no
     * 128-bit integers. 53 bits of mantissa are far finer than the measurement. */
    double tps = (double)(end->ticks - start->ticks) * 1e9 / (double)(end->ns - start->ns);
    return (uint64_t)(tps + 0.5);
}

#endif /* __STDC_HOSTED__ */

#endif /* HOOKCC_RUNTIME_CLOCK_H */
