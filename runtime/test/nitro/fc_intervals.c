/* Function cost: the hooks do not write a record's interval field, they rely on every slot from
 * `current` to the limit holding 0 (runtime/src/functioncost.c). Starting from a buffer full of
 * junk, this checks that the records the hooks write have interval 0, except the one a switch
 * back in adds to (and an entry a summary keeps, which carries the costs of the calls that
 * returned after it: they are not its own time), and that the slots a summary, a full buffer's summary and a clear give back
 * hold 0 again; and that the costs are those of the calls, not of junk intervals. */
#include "nitro_test.h"

void f(void) {}
void g(int n)
{
    for (int i = 0; i < n; i++)
        f();
}

#pragma profile off
static u64 costs[(96 + 24 * 64) / sizeof(u64)]; /* 64 records */
static u64 stats[0x400 / sizeof(u64)];

/* The records in use, how many of them have an interval that is not 0, and how many free slots
 * do. Layout: docs/nitro.md (header_size at 16, current and limit after the 56-byte header,
 * records of 24 bytes with the interval at 16). */
static void count(int *used, int *nonzero_used, int *nonzero_free)
{
    const char *base = (const char *)costs;
    uintptr_t first = (uintptr_t)base + *(const u32 *)(base + 16);
    uintptr_t current = *(const uintptr_t *)(base + 56);
    uintptr_t limit = *(const uintptr_t *)(base + 56 + sizeof(void *));
    *used = *nonzero_used = *nonzero_free = 0;
    for (uintptr_t p = first; p < limit; p += 24) {
        u64 interval = ((const u64 *)p)[2];
        if (p < current) {
            ++*used;
            *nonzero_used += interval != 0;
        } else {
            *nonzero_free += interval != 0;
        }
    }
}

static void expect(const char *when, int want_used, int want_nonzero_used)
{
    int used, nonzero_used, nonzero_free;
    count(&used, &nonzero_used, &nonzero_free);
    NT_CHECK(used == want_used && nonzero_used == want_nonzero_used && nonzero_free == 0,
             "%s: %d records (want %d), %d with an interval (want %d), %d free slots with one "
             "(want 0)",
             when, used, want_used, nonzero_used, want_nonzero_used, nonzero_free);
}

#pragma profile reset

/* Profiled: its entry stays open across the summary it makes. */
void summarize_inside(void)
{
    g(2);
    OS_CalcStatistics(stats);
    expect("a summary with a call in progress", 1, 1); /* g(2)'s cost, taken out later */
    g(1);
}

int main(void)
{
    nt_capture_start();
    memset(costs, 0xa5, sizeof costs);
    OS_InitFunctionCost(costs, sizeof costs);
    OS_InitStatistics(stats, sizeof stats);
    expect("after OS_InitFunctionCost", 0, 0);

    g(3); /* g and 3 f: 8 records */
    expect("after calls", 8, 0);
    OS_CalcStatistics(stats);
    expect("after a summary", 0, 0);

    g(1);
    void *me = OS_SwitchProfilerThread(NULL);
    for (volatile int i = 0; i < 1000; i++) {
    }
    OS_SwitchProfilerThread(me);
    g(1);
    expect("after a switch out and back in", 8, 1);
    summarize_inside(); /* kept: its entry; then g(1) and its exit */
    expect("after summarize_inside", 6, 1);
    OS_CalcStatistics(stats);
    expect("after its summary", 0, 0);

    g(100); /* 202 records for 64 slots: full */
    expect("with the buffer full", 64, 0);
    OS_CalcStatistics(stats);
    expect("after the full buffer's summary", 0, 0);

    g(2);
    /* A switch out and back in first: the interval it adds must not survive the clear. */
    me = OS_SwitchProfilerThread(NULL);
    for (volatile int i = 0; i < 1000; i++) {
    }
    OS_SwitchProfilerThread(me);
    OS_ClearFunctionCostBuffer();
    expect("after a clear", 0, 0);
    g(2);
    expect("after the clear and calls", 6, 0);
    OS_CalcStatistics(stats);

    nt_capture_reset();
    OS_DumpStatistics(stats);
    /* f: 3, 4, 1, the 31 calls complete before the buffer filled, 2; g: 1, 3, 1, 1. */
    nt_expect_text(nt_blank_costs((char *)nt_captured()), "g: count 6, cost C\n"
                                                      "f: count 41, cost C\n"
                                                      "summarize_inside: count 1, cost C\n");
    printf("ok\n");
    return 0;
}
