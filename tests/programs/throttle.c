/* Issue 35 item 4, the throttle: `tiny` lasts a few nanoseconds (it is throttled: timed for its
 * first calls, then counted), `slow` some microseconds (never throttled). The main thread makes
 * ROUNDS rounds of TINY_PER_ROUND tiny calls and one slow call; with a thread count as its
 * argument, each of that many threads does the same at once, after a barrier, so that the
 * switch changes while every thread is inside `round` and the counts are added from all of
 * them together. Known calls: main 1, worker N, round (N + 1) * ROUNDS, slow the same,
 * tiny (N + 1) * ROUNDS * TINY_PER_ROUND. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 200
#define TINY_PER_ROUND 100

static volatile unsigned sink;
static pthread_barrier_t start;

__attribute__((noinline)) static unsigned tiny(unsigned x) { return x * 3 + 1; }

__attribute__((noinline)) static unsigned slow(unsigned x)
{
    unsigned s = 0;
    for (unsigned i = 0; i < 20000; i++)
        s += (i ^ x) * sink;
    return s;
}

__attribute__((noinline)) static void round_of(unsigned r)
{
    for (unsigned i = 0; i < TINY_PER_ROUND; i++)
        sink += tiny(r + i);
    sink += slow(r);
}

static void *worker(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&start);
    for (unsigned r = 0; r < ROUNDS; r++)
        round_of(r);
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 0;
    pthread_t t[64];
    if (threads > 64)
        threads = 64;
    pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    pthread_barrier_wait(&start);
    for (unsigned r = 0; r < ROUNDS; r++)
        round_of(r);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    printf("%u\n", sink);
    return 0;
}
