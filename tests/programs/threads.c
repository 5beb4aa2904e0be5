/* Four threads: thread k (k = 1..4) calls work() 100*k times and worker() once; main once.
 * Each thread names itself "worker-k" so reports can tell them apart. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

static long sink;

/* Atomic: four threads add at once (a plain += loses updates under load: the printed sum, which
 * the test checks, came out short once in CI). */
void work(long i) { __atomic_fetch_add(&sink, i, __ATOMIC_RELAXED); }

void *worker(void *arg) {
    long k = (long)arg;
    char name[16];
    snprintf(name, sizeof name, "worker-%ld", k);
    pthread_setname_np(pthread_self(), name);
    for (long i = 0; i < 100 * k; i++)
        work(i);
    return NULL;
}

int main(void) {
    pthread_t t[4];
    for (long k = 1; k <= 4; k++)
        pthread_create(&t[k - 1], NULL, worker, (void *)k);
    for (int k = 0; k < 4; k++)
        pthread_join(t[k], NULL);
    printf("%ld\n", __atomic_load_n(&sink, __ATOMIC_RELAXED));
    return 0;
}
