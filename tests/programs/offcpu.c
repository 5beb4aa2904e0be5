/* Off-CPU time (docs/recording.md, "Context switches"): `wait_for_signal` blocks in a futex
 * (pthread_cond_wait) until another thread signals after `sleep_ms`; `sleep_in_nanosleep`
 * sleeps `sleep_ms`; `spin` runs for `spin_ms`. A traced run shows the first two functions'
 * blocked time as off-CPU time, and `spin`'s on-CPU time as the CPU time the kernel counted
 * for it (printed, with the times measured here, for the test to compare). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int signalled;
static long sleep_ms = 200, spin_ms = 100;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *signaller(void *arg)
{
    (void)arg;
    struct timespec ts = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    pthread_mutex_lock(&lock);
    signalled = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    return NULL;
}

__attribute__((noinline)) static void wait_for_signal(void)
{
    pthread_mutex_lock(&lock);
    while (!signalled)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
}

__attribute__((noinline)) static void sleep_in_nanosleep(void)
{
    struct timespec ts = {sleep_ms / 1000, (sleep_ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Spins for spin_ms of wall-clock time; on a busy machine part of it may be preempted. */
__attribute__((noinline)) static unsigned long spin(void)
{
    volatile unsigned long n = 0;
    double until = now_ms() + spin_ms;
    while (now_ms() < until)
        n++;
    return n;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        sleep_ms = atol(argv[1]);
    if (argc > 2)
        spin_ms = atol(argv[2]);
    pthread_t t;
    double start = now_ms();
    if (pthread_create(&t, NULL, signaller, NULL) != 0)
        return 1;
    wait_for_signal();
    double waited = now_ms() - start;
    pthread_join(t, NULL);
    start = now_ms();
    sleep_in_nanosleep();
    double slept = now_ms() - start;
    double cpu = thread_cpu_ms();
    start = now_ms();
    spin();
    double spun = now_ms() - start;
    cpu = thread_cpu_ms() - cpu;
    printf("waited %.3f ms, slept %.3f ms, spun %.3f ms, on the CPU %.3f ms\n", waited, slept,
           spun, cpu);
    return 0;
}
