/* Call trace with OS threads (§3.7): each thread records only into the buffer it initialised,
 * with its own enable state; threads without a buffer record nothing. */
#include <pthread.h>

#include "nitro_test.h"

#define THREADS 4

int inner(int id, int step) { return id + step; }
int outer(int id) { return inner(id, 1) + inner(id, 2); }
void show(void) { OS_DumpCallTrace(); }

static pthread_barrier_t barrier;

#pragma profile off
static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    static u32 buffers[THREADS][0x400 / sizeof(u32)];
    nt_capture_reset();
    if (id != 0) /* thread 0 records nothing */
        OS_InitCallTrace(buffers[id], sizeof buffers[id], id % 2 ? OS_CALLTRACE_LOG : OS_CALLTRACE_STACK);
    if (id == 3)
        NT_CHECK(OS_DisableCallTrace() == TRUE, "enabled at init");
    /* Everybody calls at the same time. */
    pthread_barrier_wait(&barrier);
    for (int i = 0; i < 1000; i++)
        (void)outer(id);
    pthread_barrier_wait(&barrier);
    if (id == 3)
        NT_CHECK(OS_EnableCallTrace() == FALSE, "thread 3 disabled");
    (void)outer(id);
    if (id == 2) {
        show(); /* stack mode: only show itself is in progress */
        nt_expect_captured("OS_DumpCallTrace: lr=ADDR\n"
                           "show: lr=ADDR, r0=00000000, r1=00000000, r2=00000000, r3=00000000\n");
    } else if (id == 0) {
        OS_DumpCallTrace();
        nt_expect_captured("OS_DumpCallTrace: this thread has no call trace buffer (call "
                           "OS_InitCallTrace first)\n");
    } else {
        char want[1024];
        OS_DumpCallTrace();
        snprintf(want, sizeof want,
                 "OS_DumpCallTrace: lr=ADDR\n"
                 " inner: lr=ADDR, r0=%08x, r1=00000002, r2=00000000, r3=00000000\n"
                 " inner: lr=ADDR, r0=%08x, r1=00000001, r2=00000000, r3=00000000\n"
                 "outer: lr=ADDR, r0=%08x, r1=00000000, r2=00000000, r3=00000000\n%s",
                 id, id, id,
                 id == 1 ? " inner: lr=ADDR, r0=00000001, r1=00000002, r2=00000000, r3=00000000\n"
                         : "");
        /* thread 1 (log) has its 1000 earlier rounds too: compare the newest lines only */
        char *got = nt_normalize((char *)nt_captured());
        NT_CHECK(strncmp(got, want, strlen(want)) == 0, "thread %d dump:\n%s", id, got);
        if (id == 3)
            NT_CHECK(strlen(got) == strlen(want), "thread 3 recorded while disabled:\n%s", got);
        NT_CHECK(strstr(got, id == 1 ? "r0=00000003" : "r0=00000001") == NULL,
                 "thread %d has another thread's records:\n%s", id, got);
    }
    return NULL;
}

int main(void)
{
    pthread_t threads[THREADS];
    nt_capture_start();
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        NT_CHECK(pthread_create(&threads[i], NULL, worker, (void *)(intptr_t)i) == 0, "create");
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    printf("ok\n");
    return 0;
}
