/* Four named threads, K pairs each, with small buffers so their chunks interleave; worker-3
 * leaves with pthread_exit() from inside a frame. Usage: threads [K] */
#include "hk_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

HK_FUNCTION(worker_body, 1)
HK_FUNCTION(leaf, 2)
HK_FUNCTION(nested, 3)

static long k = 50000;

static void *worker(void *arg)
{
    long idx = (long)arg;
    char name[16];
    snprintf(name, sizeof name, "worker-%ld", idx);
    pthread_setname_np(pthread_self(), name);
    ENTER(worker_body);
    for (long i = 0; i < k; i++) {
        ENTER(leaf);
        EXIT(leaf);
    }
    if (idx == 3) {
        ENTER(nested);
        pthread_exit(NULL); /* two frames open: worker_body, nested */
    }
    EXIT(worker_body);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        k = atol(argv[1]);
    ENTER(main);
    HK_VAR("pid", "%ld", (long)getpid());
    HK_VAR("addr.leaf", "%p", (void *)leaf);
    pthread_t th[4];
    for (long i = 0; i < 4; i++)
        if (pthread_create(&th[i], NULL, worker, (void *)i) != 0)
            return 2;
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    EXIT(main);
    return 0;
}
