/* Threads come and go: 1000 short threads (their last chunks come from the key destructor, and
 * Linux reuses their ids), then exit() while a spawner is still starting more, so thread exit
 * and the finisher race. Usage: churn [THREADS] */
#include "hk_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

HK_FUNCTION(short_body, 1)
HK_FUNCTION(late_body, 2)

static void *short_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++) {
        ENTER(short_body);
        EXIT(short_body);
    }
    return NULL;
}

static void *late_thread(void *arg)
{
    (void)arg;
    ENTER(late_body);
    EXIT(late_body);
    return NULL;
}

static void *spawner(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_t th;
        if (pthread_create(&th, NULL, late_thread, NULL) == 0)
            pthread_detach(th);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    ENTER(main);
    HK_VAR("pid", "%ld", (long)getpid());
    HK_VAR("addr.short_body", "%p", (void *)short_body);
    for (int i = 0; i < n; i++) {
        pthread_t th;
        if (pthread_create(&th, NULL, short_thread, NULL) != 0)
            return 2;
        pthread_join(th, NULL);
    }
    pthread_t sp;
    if (pthread_create(&sp, NULL, spawner, NULL) != 0)
        return 2;
    usleep(20000);
    EXIT(main);
    exit(0);
}
