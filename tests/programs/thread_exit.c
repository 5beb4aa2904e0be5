/* A thread that ends with pthread_exit inside two calls (outer -> inner), joined by main,
 * which then works in after_join(). The thread's open frames must close when it ended, not
 * when the process did: outer's inclusive time then fits before after_join in main's. */
#include <pthread.h>
#include <stdio.h>

static volatile long sink;

__attribute__((noinline)) void work(long i) { sink += i; }

__attribute__((noinline)) void inner(void) { pthread_exit(NULL); }

__attribute__((noinline)) void outer(void) {
    sink += 1;
    inner();
}

static void *start(void *arg) {
    (void)arg;
    outer();
    return NULL;
}

__attribute__((noinline)) void after_join(void) {
    for (long i = 0; i < 200000; i++)
        work(i);
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, start, NULL);
    pthread_join(t, NULL);
    after_join();
    printf("%ld\n", sink);
    return 0;
}
