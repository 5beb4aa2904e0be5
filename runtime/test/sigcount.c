/* Every record of a signal handler is either in the file or counted lost: a signaller thread
 * sends SIGUSR1 to the main thread as fast as it can while the main thread runs hooks, so
 * handlers land inside hooks (between a hook's load and store of its position) and inside the
 * slow path. records + lost must equal what was made: main, N work pairs, a pair per handler.
 * Usage: sigcount [N] */
#include "hk_test.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

HK_FUNCTION(in_handler, 1)
HK_FUNCTION(work, 2)

static volatile sig_atomic_t handled; /* only the main thread takes the signal */
static volatile int done;
static pthread_t main_thread;

static void on_signal(int sig)
{
    (void)sig;
    ENTER(in_handler);
    handled++;
    EXIT(in_handler);
}

static void *signaller(void *arg)
{
    (void)arg;
    while (!done)
        pthread_kill(main_thread, SIGUSR1);
    return NULL;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000;
    ENTER(main);
    HK_VAR("pid", "%ld", (long)getpid());
    HK_VAR("addr.in_handler", "%p", (void *)in_handler);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGUSR1, &sa, NULL);
    main_thread = pthread_self();
    pthread_t sig;
    if (pthread_create(&sig, NULL, signaller, NULL) != 0)
        return 2;
    for (long i = 0; i < n; i++) {
        ENTER(work);
        EXIT(work);
    }
    done = 1;
    pthread_join(sig, NULL);
    /* No signal can come any more: the count is final. */
    HK_VAR("handled", "%ld", (long)handled);
    HK_VAR("generated", "%ld", 2 + 2 * n + 2 * (long)handled);
    EXIT(main);
    return 0;
}
