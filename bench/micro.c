/* Micro-benchmark with a known number of instrumented calls.
 *
 *   micro N        calls leaf() N times from run(), prints the checksum on stdout and, on
 *                  stderr, one line "hookbench: loop_ns=T loop_cpu_ns=U calls=C": T is the
 *                  time run() took (CLOCK_MONOTONIC around it, so process start-up and
 *                  exit-time trace dumps are not in it), U the process CPU time it took (the
 *                  same, less the time other programs had the CPU: steadier on a shared
 *                  machine), C the instrumented calls the program made: main, run and N leafs.
 *
 * Every variant of bench/bench.py builds this same file; only the compiler flags differ (hooks,
 * sleds, mcount). The per-call cost of a variant is its difference from the baseline of the
 * same compiler, divided by the calls, taken between two values of N so that start-up and
 * exit costs cancel (bench.py does that arithmetic).
 *
 * Why the baseline's work is not optimized away: leaf() is noinline (and noclone for GCC, whose
 * IPA would otherwise clone or split it), and the sum of its results is printed. bench.py
 * checks the call count in callgrind's output. The calls are independent of each other (the
 * argument is the loop counter): a loop whose every call waits for the previous result is
 * latency-bound, and an out-of-order core hides a cheap hook in that wait (empty hooks then
 * measure as free); here the loop is throughput-bound and every added instruction shows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "variant_init.h"

#if defined(__clang__)
#define BENCH_NOINLINE __attribute__((noinline))
#else
#define BENCH_NOINLINE __attribute__((noinline, noclone))
#endif

BENCH_NOINLINE unsigned long leaf(unsigned long x)
{
    return (x * 2654435761u) ^ (x >> 7);
}

BENCH_NOINLINE unsigned long run(unsigned long n)
{
    unsigned long acc = 0;
    for (unsigned long i = 0; i < n; i++) {
#if defined(BENCH_PFP)
        /* A profile point around each call: the Begin+End pair is the cost per call. */
        pfpBegin(1, NULL);
        acc += leaf(i);
        pfpEnd(1, 0);
#else
        acc += leaf(i);
#endif
    }
    return acc;
}

/* Inlined into main and never hooked: it must add no instrumented call of its own. */
BENCH_HELPER unsigned long long now_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CALLS\n", argv[0]);
        return 2;
    }
    unsigned long n = strtoul(argv[1], NULL, 10);
    /* main, run and n leafs */
    unsigned long long calls = (unsigned long long)n + 2;
    bench_variant_init(calls);
    unsigned long long c0 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    unsigned long long t0 = now_ns(CLOCK_MONOTONIC);
    unsigned long r = run(n);
    unsigned long long t1 = now_ns(CLOCK_MONOTONIC);
    unsigned long long c1 = now_ns(CLOCK_PROCESS_CPUTIME_ID);
    printf("%lu\n", r);
    fprintf(stderr, "hookbench: loop_ns=%llu loop_cpu_ns=%llu calls=%llu\n", t1 - t0, c1 - c0, calls);
    bench_variant_finish();
    return 0;
}
