/* exit() while another thread is still recording: the finisher writes that thread's buffer
 * from the outside. */
#include "hk_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

HK_FUNCTION(spin, 1)

static volatile long pairs;

static void *spinner(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "spinner");
    for (;;) {
        ENTER(spin);
        EXIT(spin);
        pairs++;
    }
    return NULL;
}

int main(void)
{
    ENTER(main);
    HK_VAR("pid", "%ld", (long)getpid());
    pthread_t th;
    if (pthread_create(&th, NULL, spinner, NULL) != 0)
        return 2;
    while (pairs < 200000)
        usleep(1000);
    exit(0); /* main stays open */
}
