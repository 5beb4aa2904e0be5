/* Function cost with OS threads (§4.3, §4.7): each thread measures into its own buffer; all
 * summarize into one statistics buffer, at the same moment; the counts add up exactly. */
#include <pthread.h>

#include "nitro_test.h"

#define THREADS 4

/* Each does some work of its own: a cost is the function's own time, checked to be > 0. */
void leaf(void) { volatile u32 sink = 0; for (int i = 0; i < 100; i++) sink += (u32)i; }
void worker_body(int n) { for (int i = 0; i < n; i++) leaf(); { volatile u32 s = 0; for (int i = 0; i < 100; i++) s += (u32)i; } }
void main_work(void) { leaf(); { volatile u32 s = 0; for (int i = 0; i < 100; i++) s += (u32)i; } }

static u32 stats[0x400 / sizeof(u32)];
static pthread_barrier_t barrier;

#pragma profile off
static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    static u32 buffers[THREADS][0x2000 / sizeof(u32)];
    OS_InitFunctionCost(buffers[id], sizeof buffers[id]);
    worker_body(id + 1);
    pthread_barrier_wait(&barrier);
    OS_CalcStatistics(stats); /* all threads at once */
    worker_body(1);
    OS_CalcStatistics(stats);
    return NULL;
}

/* "name: count N, cost C" lines; checks every cost is a number > 0 and blanks it. */
static char *blank_costs(char *text)
{
    for (char *p = strstr(text, ", cost "); p != NULL; p = strstr(p, ", cost ")) {
        p += 7;
        char *end = p;
        unsigned long long cost = strtoull(p, &end, 10);
        NT_CHECK(end > p && cost > 0, "bad cost in:\n%s", text);
        memmove(p + 1, end, strlen(end) + 1);
        *p = 'C';
    }
    return text;
}

int main(void)
{
    static u32 mine[0x400 / sizeof(u32)];
    nt_capture_start();
    OS_InitStatistics(stats, sizeof stats);
    pthread_t threads[THREADS];
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        NT_CHECK(pthread_create(&threads[i], NULL, worker, (void *)(intptr_t)i) == 0, "create");
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    OS_InitFunctionCost(mine, sizeof mine);
    main_work();
    OS_CalcStatistics(stats);
    OS_DumpStatistics(stats);
    /* leaf: 1+2+3+4 in the threads' first rounds, 4 in their second, 1 in main */
    /* In the order of first calls: worker_body, then the leaf it calls. */
    nt_expect_text(blank_costs((char *)nt_captured()), "worker_body: count 8, cost C\n"
                                                       "leaf: count 15, cost C\n"
                                                       "main_work: count 1, cost C\n");
    printf("ok\n");
    return 0;
}
