/* The CPU time of main itself, for bench/placement.py: with BENCH_MAIN_CPU set in the
 * environment, main_cpu_end() prints "main cpu ns: N" on stderr, N the thread's CPU time from
 * main_cpu_start() on. The untraced build's figure is what the trace's `main` is compared with:
 * the process's own CPU time also holds the dynamic loader's and the exit's work, which is not
 * in `main`'s records (about a millisecond, 5 % of SQLite at -O2). Never hooked. */
#ifndef BENCH_MAIN_CPU_H
#define BENCH_MAIN_CPU_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static struct timespec bench_main_cpu_t0;

static inline __attribute__((no_instrument_function)) void
main_cpu_start(void)
{
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &bench_main_cpu_t0);
}

static inline __attribute__((no_instrument_function)) void
main_cpu_end(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    if (getenv("BENCH_MAIN_CPU"))
        fprintf(stderr, "main cpu ns: %lld\n",
                (long long)(t.tv_sec - bench_main_cpu_t0.tv_sec) * 1000000000LL +
                    (t.tv_nsec - bench_main_cpu_t0.tv_nsec));
}

#endif
