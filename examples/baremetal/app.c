/* The example's program: the seed's §3.5.1 call chain (seeds/nitro-sdk-profiler.txt). With
 * NITRO_PROFILE_TYPE=CALLTRACE it dumps the call trace from test3; with FUNCTIONCOST it
 * prints the statistics; without profiling it only prints the result. */
#include <stdio.h>

#if defined(PROFILE_TYPE_CALLTRACE) || defined(PROFILE_TYPE_FUNCTIONCOST)
#include <hookcc/nitro.h>
static u32 buffer[0x3000 / sizeof(u32)];
static u32 statistics[0x300 / sizeof(u32)];
#endif

int test1(int a);
int test2(int a);
int test3(int a);

int test1(int a) { return test2(a + 1); }
int test2(int a) { return test3(a + 2); }
int test3(int a)
{
#ifdef PROFILE_TYPE_CALLTRACE
    OS_DumpCallTrace();
#endif
    return a + 4;
}

int main(void)
{
#ifdef PROFILE_TYPE_CALLTRACE
    OS_InitCallTrace(buffer, sizeof buffer, OS_CALLTRACE_STACK);
#elif defined(PROFILE_TYPE_FUNCTIONCOST)
    OS_InitFunctionCost(buffer, sizeof buffer);
    OS_InitStatistics(statistics, sizeof statistics);
#endif
    int result = test1(0x100);
#ifdef PROFILE_TYPE_FUNCTIONCOST
    OS_CalcStatistics(statistics);
    OS_DumpStatistics(statistics);
#endif
    printf("test1(0x100) = 0x%x\n", result);
    return result == 0x107 ? 0 : 1;
}
