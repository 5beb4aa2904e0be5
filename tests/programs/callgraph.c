/* The call structure of the seed's Dynamic Call Graph example (thread _TSK2): task calls p1
 * 1728 times and p2 1727 times, each calls child (3455 calls); prdfxn0 runs 4 times inside
 * child and 3 times directly under task (7 calls). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>

static volatile unsigned long sink;
static int child_count;

void prdfxn0(void) { sink += 3; }

void child(int n) {
    child_count++;
    for (int i = 0; i < n; i++)
        sink += (unsigned long)i;
    if (child_count == 1000 || child_count == 2000 || child_count == 3000 || child_count == 3400)
        prdfxn0();
}

void p1(void) { child(10); }
void p2(void) { child(20); }

void task(void) {
    for (int i = 0; i < 3455; i++) {
        if (i % 2 == 0)
            p1();
        else
            p2();
        if (i == 100 || i == 200 || i == 300)
            prdfxn0();
    }
}

/* The thread's start routine is not profiled, so task is the thread's root (<spontaneous>). */
__attribute__((no_instrument_function)) static void *run(void *arg) {
    (void)arg;
    pthread_setname_np(pthread_self(), "_TSK2");
    task();
    return NULL;
}

int main(void) {
    pthread_t t;
    pthread_create(&t, NULL, run, NULL);
    pthread_join(t, NULL);
    printf("%lu\n", sink);
    return 0;
}
