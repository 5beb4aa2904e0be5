/* Robustness: an instrumented signal handler (SIGPROF, as a sampling profiler's) is sent as
 * fast as a signaller thread can to short threads making their first hooks and to long ones
 * filling and flushing small buffers, so handlers land inside hooks and inside the slow path. The hooks must not crash, deadlock or break the file;
 * the handler's records may be counted lost (re-entered) or, when it interrupts a hook between
 * its load and store of pos, overwrite a record (see trace.c, "Known limits"). */
#include "hk_test.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

HK_FUNCTION(in_handler, 1)
HK_FUNCTION(work, 2)

static volatile long handled;

static void on_sigprof(int sig)
{
    (void)sig;
    ENTER(in_handler);
    handled++;
    EXIT(in_handler);
}

static pthread_t short_target;
static volatile int have_short_target, done;
static pthread_t long_threads[2];

static void *short_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 20; i++) {
        ENTER(work);
        EXIT(work);
    }
    return NULL;
}

static void *long_thread(void *arg)
{
    (void)arg;
    for (int i = 0; i < 300000; i++) {
        ENTER(work);
        EXIT(work);
    }
    return NULL;
}

static void *signaller(void *arg)
{
    (void)arg;
    while (!done) {
        if (have_short_target)
            pthread_kill(short_target, SIGPROF);
        for (int i = 0; i < 2; i++)
            pthread_kill(long_threads[i], SIGPROF);
        kill(getpid(), SIGPROF);
    }
    return NULL;
}

int main(void)
{
    ENTER(main);
    HK_VAR("pid", "%ld", (long)getpid());
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigprof;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGPROF, &sa, NULL);

    for (int i = 0; i < 2; i++)
        if (pthread_create(&long_threads[i], NULL, long_thread, NULL) != 0)
            return 2;
    pthread_t sig;
    if (pthread_create(&sig, NULL, signaller, NULL) != 0)
        return 2;
    for (int i = 0; i < 300; i++) {
        pthread_t th;
        /* The signaller may signal a thread that has just exited: a short thread is only
         * joined after have_short_target is cleared, and pthread_kill of a finished but
         * unjoined thread is harmless. */
        if (pthread_create(&th, NULL, short_thread, NULL) != 0)
            return 2;
        short_target = th;
        have_short_target = 1;
        usleep(100);
        have_short_target = 0;
        pthread_join(th, NULL);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(long_threads[i], NULL);
    done = 1;
    pthread_join(sig, NULL);
    HK_VAR("handled", "%ld", handled);
    EXIT(main);
    return 0;
}
