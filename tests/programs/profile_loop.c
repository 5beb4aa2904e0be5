/* HOOKCC_MODE=profile: ROUNDS rounds of the same call paths on the main thread and on three
 * others; with "snap", a snapshot (SIGUSR2) halfway, whose PROFILE chunks the ones written at
 * exit replace. Prints the sum it made. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile long sink;
static long rounds;

__attribute__((noinline)) void leaf(long i) { sink += i; }
__attribute__((noinline)) void middle(long i) { leaf(i); leaf(i + 1); }
__attribute__((noinline)) long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__attribute__((noinline)) void round_of(long i)
{
    middle(i);
    if (i % 10 == 0)
        sink += fib(10);
}

static void *worker(void *arg)
{
    for (long i = 0; i < rounds; i++)
        round_of(i);
    return arg;
}

int main(int argc, char **argv)
{
    rounds = argc > 1 ? atol(argv[1]) : 1000;
    int snap = argc > 2 && strcmp(argv[2], "snap") == 0;
    pthread_t threads[3];
    for (int k = 0; k < 3; k++)
        pthread_create(&threads[k], NULL, worker, NULL);
    for (long i = 0; i < rounds; i++) {
        round_of(i);
        if (snap && i == rounds / 2)
            raise(SIGUSR2);
    }
    for (int k = 0; k < 3; k++)
        pthread_join(threads[k], NULL);
    printf("%ld\n", sink);
    return 0;
}
