/* HOOKCC_MODE=ring, a program that hangs: 1000 calls of work() and 7 of outer() in each of
 * two threads, then it prints "ready" and waits for ever (to be caught by gcore, then killed:
 * no snapshot is ever written). It lets any process attach to it (Yama's ptrace_scope). */
#include <pthread.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) void work(long i) { sink += i; }

__attribute__((noinline)) void outer(long n)
{
    for (long i = 0; i < n; i++)
        work(i);
}

static void *worker(void *arg)
{
    (void)arg;
    for (int k = 0; k < 7; k++)
        outer(1000 / 7 + (k < 1000 % 7));
    return NULL;
}

__attribute__((noinline)) void hang(void)
{
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}

int main(void)
{
#ifdef PR_SET_PTRACER
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
#endif
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    worker(NULL);
    pthread_join(t, NULL);
    hang();
    return 0;
}
