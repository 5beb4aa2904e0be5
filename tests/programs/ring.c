/* HOOKCC_MODE=ring: 1000 calls of work(), a snapshot by SIGUSR2, 1000 more, a snapshot by
 * hookcc_trace_snapshot(), 1000 more, then exit (the last snapshot). */
#include <hookcc/trace.h>
#include <signal.h>
#include <stdio.h>

static volatile long sink;

__attribute__((noinline)) void work(long i) { sink += i; }

__attribute__((noinline)) void round_of(long n)
{
    for (long i = 0; i < n; i++)
        work(i);
}

int main(void)
{
    round_of(1000);
    raise(SIGUSR2);
    round_of(1000);
    hookcc_trace_snapshot();
    round_of(1000);
    printf("%ld\n", sink);
    return 0;
}
