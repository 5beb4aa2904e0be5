/* Function cost on OS threads (seeds §2.2, §4.2: time a thread is switched out is not part of
 * the cost). `sleeper` blocks 300 ms in usleep; `spinner` burns 20 ms of its thread's CPU time.
 * Built as is (the OS tick: wall-clock cycles), sleeper costs more than spinner; built with
 * hookcc --nitro-clock=thread-cpu, a thread's CPU time in ns, sleeper costs next to nothing.
 * Usage: fc_clock tick|thread-cpu (which build this is). */
#include <time.h>
#include <unistd.h>

#include "nitro_test.h"

#pragma profile off
static u64 cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (u64)ts.tv_sec * 1000000000u + (u64)ts.tv_nsec;
}
#pragma profile reset

void sleeper(void) { usleep(300000); }
void spinner(void)
{
    static volatile u32 sink;
    u64 start = cpu_ns();
    while (cpu_ns() - start < 20000000u)
        sink++;
}

#pragma profile off
static u32 costs[0x1000 / sizeof(u32)];
static u32 stats[0x400 / sizeof(u32)];

static unsigned long long cost_of(const char *dump, const char *name)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s: count 1, cost ", name);
    const char *line = strstr(dump, prefix);
    NT_CHECK(line != NULL, "no line \"%s…\" in:\n%s", prefix, dump);
    return strtoull(line + strlen(prefix), NULL, 10);
}

int main(int argc, char **argv)
{
    NT_CHECK(argc == 2, "usage: fc_clock tick|thread-cpu");
    int thread_cpu = strcmp(argv[1], "thread-cpu") == 0;
    nt_capture_start();
    OS_InitTick();
    OS_InitFunctionCost(costs, sizeof costs);
    OS_InitStatistics(stats, sizeof stats);
    sleeper();
    spinner();
    OS_CalcStatistics(stats);
    OS_DumpStatistics(stats);
    const char *dump = nt_captured();
    unsigned long long slept = cost_of(dump, "sleeper"), spun = cost_of(dump, "spinner");
    if (thread_cpu) {
        /* Nanoseconds of CPU: the spin's 20 ms, the sleep's almost none. */
        NT_CHECK(spun >= 20000000u, "thread-cpu: spinner costs %llu ns < 20 ms:\n%s", spun, dump);
        NT_CHECK(slept * 10 < spun, "thread-cpu: sleeper costs %llu, spinner %llu: the sleep "
                 "was charged:\n%s", slept, spun, dump);
    } else {
        NT_CHECK(slept > spun, "tick: sleeper costs %llu, spinner %llu: the 300 ms sleep (wall "
                 "clock) should cost more than 20 ms of CPU:\n%s", slept, spun, dump);
    }
    printf("ok\n");
    return 0;
}
