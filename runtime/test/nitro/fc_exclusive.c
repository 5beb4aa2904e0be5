/* What a function's cost is (seeds/nitro-sdk-profiler.txt §4.1: function() twice, 15 and 50
 * ticks, the second calling a 10-tick test(), costs 55): its own time, not that of the calls
 * it makes; OS_InitStatisticsEx(…, TRUE) gives inclusive costs instead. And the dump lists
 * functions in the order of their first calls (§4.5: test1, test2, test3), so `outer`, which
 * is called first and returns last, comes before `inner`. */
#include "nitro_test.h"

static volatile u32 sink;

#pragma profile off
static void spin(int n)
{
    for (int i = 0; i < n; i++)
        sink += (u32)i;
}
#pragma profile reset

void inner(void) { spin(200000); }
void outer(void) { spin(1000); inner(); inner(); }

#pragma profile off
static u32 costs[0x2000 / sizeof(u32)];
static u32 exclusive[0x400 / sizeof(u32)];
static u32 inclusive[0x400 / sizeof(u32)];

/* The cost of `name` in a dump of "name: count N, cost C" lines; checks the count. */
static unsigned long long cost_of(const char *dump, const char *name, int count)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s: count %d, cost ", name, count);
    const char *line = strstr(dump, prefix);
    NT_CHECK(line != NULL, "no line \"%s…\" in:\n%s", prefix, dump);
    return strtoull(line + strlen(prefix), NULL, 10);
}

int main(void)
{
    nt_capture_start();
    OS_InitTick();
    OS_InitFunctionCost(costs, sizeof costs);
    OS_InitStatistics(exclusive, sizeof exclusive);
    OS_InitStatisticsEx(inclusive, sizeof inclusive, TRUE);

    outer();
    OS_CalcStatistics(exclusive);
    nt_capture_reset();
    OS_DumpStatistics(exclusive);
    const char *dump = nt_captured();
    NT_CHECK(strstr(dump, "outer:") != NULL && strstr(dump, "outer:") < strstr(dump, "inner:"),
             "outer (called first) must come before inner (returned first):\n%s", dump);
    unsigned long long outer_own = cost_of(dump, "outer", 1);
    unsigned long long inner_total = cost_of(dump, "inner", 2);
    /* outer spins 1000 times itself, inner 2 x 200000: its own cost is a small share. */
    NT_CHECK(outer_own * 20 < inner_total,
             "exclusive: outer costs %llu, inner %llu: outer still holds inner's time:\n%s",
             outer_own, inner_total, dump);

    outer();
    OS_CalcStatistics(inclusive);
    nt_capture_reset();
    OS_DumpStatistics(inclusive);
    dump = nt_captured();
    unsigned long long outer_all = cost_of(dump, "outer", 1);
    inner_total = cost_of(dump, "inner", 2);
    NT_CHECK(outer_all > inner_total,
             "inclusive: outer costs %llu, less than the inner calls it made (%llu):\n%s",
             outer_all, inner_total, dump);
    printf("ok\n");
    return 0;
}
