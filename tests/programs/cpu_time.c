/* CPU time apart from waiting (`hookprof … --time=cpu`, issue 34 item 4).
 *
 * `cpu_time` (no argument): `blocks_then_spins` blocks 300 ms in nanosleep, then runs until its
 * thread has had 100 ms of CPU time (CLOCK_THREAD_CPUTIME_ID, so that a busy machine's
 * preemption stretches its wall time, not its CPU time): 400 ms or more on the wall clock, about
 * 100 ms on the CPU.
 *
 * `cpu_time gate`: the diff gate's work. `steady` and `doubled` each do a fixed amount of
 * arithmetic (no calls, no waiting), about 150 ms of CPU time on this project's machines; built
 * with -DREGRESSION, `doubled` does twice as much. Their CPU time does not depend on what else
 * runs on the machine, their wall time does. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#ifndef WORK
#define WORK 150000000UL
#endif
#ifdef REGRESSION
#define DOUBLED_WORK (2 * WORK)
#else
#define DOUBLED_WORK WORK
#endif

__attribute__((no_instrument_function)) static double clock_ms(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void blocks_then_spins(void)
{
    struct timespec ts = {0, 300 * 1000000L};
    nanosleep(&ts, NULL);
    double until = clock_ms(CLOCK_THREAD_CPUTIME_ID) + 100;
    while (clock_ms(CLOCK_THREAD_CPUTIME_ID) < until) {
    }
}

static volatile unsigned long sink;

/* `n` steps of a linear congruential generator: work the compiler cannot skip. */
#define ARITHMETIC(n)                                                                          \
    do {                                                                                       \
        unsigned long x = sink;                                                                \
        for (unsigned long i = 0; i < (n); i++)                                                \
            x = x * 6364136223846793005UL + 1442695040888963407UL;                             \
        sink = x;                                                                              \
    } while (0)

__attribute__((noinline)) static void steady(void) { ARITHMETIC(WORK); }

__attribute__((noinline)) static void doubled(void) { ARITHMETIC(DOUBLED_WORK); }

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "gate") == 0) {
        steady();
        doubled();
        return 0;
    }
    double wall = clock_ms(CLOCK_MONOTONIC), cpu = clock_ms(CLOCK_THREAD_CPUTIME_ID);
    blocks_then_spins();
    printf("blocks_then_spins: %.3f ms wall, %.3f ms CPU\n", clock_ms(CLOCK_MONOTONIC) - wall,
           clock_ms(CLOCK_THREAD_CPUTIME_ID) - cpu);
    return 0;
}
