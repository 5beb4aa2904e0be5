/* 1,000,000 calls of one profiled function, for counting the hooks' instructions:
 *   valgrind --tool=callgrind ./bench [stack|log|noregs|cost]
 * then the Ir of __PROFILE_ENTRY and __PROFILE_EXIT divided by 1e6 (run.sh --bench). */
#include "nitro_test.h"

#define CALLS 1000000

__attribute__((noinline)) int work(int a) { __asm__ volatile("" ::: "memory"); return a + 1; }

#pragma profile off
int main(int argc, char **argv)
{
    static u64 buffer[0x10000 / sizeof(u64)];
    static u64 stats[0x1000 / sizeof(u64)];
    const char *mode = argc > 1 ? argv[1] : "stack";
    volatile int sum = 0;
#ifdef BENCH_FUNCTIONCOST
    (void)mode;
    /* Room for every record: the numbers are for the path that records. */
    static u64 big[(CALLS * 2 * 24 + 4096) / sizeof(u64)];
    OS_InitFunctionCost(big, sizeof big);
    OS_InitStatistics(stats, sizeof stats);
#else
    (void)stats;
    if (strcmp(mode, "log") == 0)
        OS_InitCallTrace(buffer, sizeof buffer, OS_CALLTRACE_LOG);
    else if (strcmp(mode, "noregs") == 0)
        OS_InitCallTraceEx(buffer, sizeof buffer, OS_CALLTRACE_STACK, FALSE);
    else
        OS_InitCallTrace(buffer, sizeof buffer, OS_CALLTRACE_STACK);
#endif
    for (int i = 0; i < CALLS; i++)
        sum += work(i);
#ifdef BENCH_FUNCTIONCOST
    OS_CalcStatistics(stats);
    OS_DumpStatistics(stats);
#endif
    printf("%d\n", sum);
    return 0;
}
