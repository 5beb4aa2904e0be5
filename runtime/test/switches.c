/* Context switches (SWITCH chunks): thread "sleeper" blocks in sleep_body (nanosleep, 100 ms)
 * and thread "waiter" in wait_body (pthread_cond_wait until main signals, after 100 ms), so
 * each is switched out for at least 100 ms while a frame is open. Main starts its sleep only
 * once the waiter is inside its wait (main holds the mutex the wait released), otherwise a
 * slow thread start under qemu-user shortens the waiter's blocked time below 100 ms. */
#include "hk_test.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

HK_FUNCTION(sleep_body, 1)
HK_FUNCTION(wait_body, 2)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static int signalled, ready;

static void *waiter(void *arg)
{
    (void)arg;
    pthread_setname_np(pthread_self(), "waiter");
    ENTER(wait_body);
    pthread_mutex_lock(&lock);
    ready = 1;
    pthread_cond_signal(&ready_cond);
    while (!signalled)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    EXIT(wait_body);
    return NULL;
}

int main(void)
{
    pthread_setname_np(pthread_self(), "sleeper");
    pthread_t t;
    if (pthread_create(&t, NULL, waiter, NULL) != 0)
        return 1;
    pthread_mutex_lock(&lock);
    while (!ready)
        pthread_cond_wait(&ready_cond, &lock);
    pthread_mutex_unlock(&lock);
    ENTER(sleep_body);
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
    EXIT(sleep_body);
    pthread_mutex_lock(&lock);
    signalled = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    pthread_join(t, NULL);
    printf("pid=%d\n", (int)getpid());
    return 0;
}
