/* TI's profile points on bare metal (seeds/ti-pfp-profile-points.txt, docs/pfp.md), on every
 * board: make run APP=../pfp_points.c HOOKS=pfp.
 *
 * Nested regions with known loops, and a region pre-empted by the board's tick interrupt,
 * whose handler tells PFP with pfpHwiBegin/pfpHwiEnd as a SYS/BIOS Hwi hook does, so that the
 * region it interrupts does not count its cycles. Under qemu's -icount every count is the same
 * from run to run; main checks the exclusive nesting and the pre-emption against reference
 * regions that measure the same loops alone, through each point's Cmin and Cmax.
 *
 * Prints pfpPrintStats' lines, then "pfp: ok" (exit 0) or the first failed check (exit 1).
 * A debugger can save pfpInst at pfp_done() for `hookprof pfp` (make gdb-dump BREAK=pfp_done
 * BUFFER=pfpInst; tests/tests/baremetal.rs). */
#include <stdint.h>
#include <stdio.h>

#include <hookcc/pfp.h>

void board_start_tick(unsigned period_us, void (*tick)(void));
void board_stop_tick(void);

enum {
    ID_OVERHEAD = 0, /* pfpCalibrate's */
    ID_REF_SMALL,    /* the small loop alone */
    ID_REF_LARGE,    /* the large loop alone */
    ID_INNER,        /* nested: the large loop */
    ID_OUTER,        /* nested: the small loop, in two halves around ID_INNER */
    ID_PREEMPTED,    /* the large loop, with the tick interrupt coming */
    ID_HANDLER,      /* the interrupt handler's own work */
    ID_LAST = ID_HANDLER
};

#define SMALL 2000
#define LARGE 10000
#define HANDLER_WORK 2000
#define REPEAT 10
#define TICK_US 100

static volatile unsigned sink;
static void loop(int n)
{
    for (int i = 0; i < n; i++)
        sink += (unsigned)i;
}

static int hwi;                 /* the tick interrupt's handle */
static volatile int in_region;  /* main is inside ID_PREEMPTED */
static volatile int preemptions; /* ticks that came while it was */

static void on_tick(void)
{
    pfpHwiBegin(&hwi);
    if (in_region)
        preemptions++;
    pfpBegin(ID_HANDLER, &hwi);
    loop(HANDLER_WORK);
    pfpEnd(ID_HANDLER, 0);
    pfpHwiEnd(&hwi);
}

static void print(const char *text, void *context)
{
    (void)context;
    fputs(text, stdout);
}

/* A debugger stops here to save pfpInst, complete. */
__attribute__((noinline)) void pfp_done(void)
{
    __asm__ __volatile__("" : : : "memory");
}

static pfpStats_t stats(int id)
{
    pfpStats_t s;
    pfpGetStats(id, &s);
    return s;
}

/* |a - b| within pct percent of b. */
static int near(uint64_t a, uint64_t b, unsigned pct)
{
    uint64_t d = a > b ? a - b : b - a;
    return d * 100 <= b * pct;
}

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            printf("pfp: check failed: %s (line %d)\n", #cond, __LINE__);                          \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

int main(void)
{
    pfpCreate();
    pfpSetPrintFunction(print, NULL);
    for (int id = 0; id <= ID_LAST; id++)
        pfpEnable(id);
    pfpCalibrate(1000, 0);
    for (int r = 0; r < REPEAT; r++) {
        pfpBegin(ID_REF_SMALL, NULL);
        loop(SMALL);
        pfpEnd(ID_REF_SMALL, 0);
        pfpBegin(ID_REF_LARGE, NULL);
        loop(LARGE);
        pfpEnd(ID_REF_LARGE, 0);
        pfpBegin(ID_OUTER, NULL);
        loop(SMALL / 2);
        pfpBegin(ID_INNER, NULL);
        loop(LARGE);
        pfpEnd(ID_INNER, 0);
        loop(SMALL / 2);
        pfpEnd(ID_OUTER, 0);
    }
    board_start_tick(TICK_US, on_tick);
    for (int r = 0; r < REPEAT; r++) {
        in_region = 1;
        pfpBegin(ID_PREEMPTED, NULL);
        loop(LARGE);
        pfpEnd(ID_PREEMPTED, 0);
        in_region = 0;
        loop(SMALL);
    }
    board_stop_tick();
    pfpPrintStats();
    pfp_done();

    pfpStats_t small = stats(ID_REF_SMALL), large = stats(ID_REF_LARGE);
    pfpStats_t inner = stats(ID_INNER), outer = stats(ID_OUTER);
    pfpStats_t preempted = stats(ID_PREEMPTED), handler = stats(ID_HANDLER);
    CHECK(small.n_count == REPEAT && large.n_count == REPEAT && outer.n_count == REPEAT);
    /* Exclusive nesting: the inner region is the large loop, the outer only its own halves. */
    CHECK(near(inner.c_min, large.c_min, 2));
    CHECK(near(outer.c_min, small.c_min, 5));
    /* Pre-emption: ticks came inside the region, and their handler's cycles are not in it. */
    CHECK(preemptions > 0 && handler.n_count > 0);
    CHECK(preempted.c_max < large.c_max + handler.c_min / 4);
    printf("pfp: ok (%d ticks pre-empted the region)\n", preemptions);
    return 0;
}
