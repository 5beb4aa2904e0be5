/* Thread exit: a pthread key made after the runtime's (so its destructor runs after the
 * runtime's in every round) whose destructor calls instrumented functions. Its calls must be
 * recorded, not lost: googletest's own keys lost 2 216 records every run. */
#include "hk_test.h"

#include <pthread.h>

HK_FUNCTION(cleanup, 1)
HK_FUNCTION(work, 2)

static pthread_key_t key;

static void destructor(void *value)
{
    (void)value;
    for (int i = 0; i < 100; i++) {
        ENTER(cleanup);
        EXIT(cleanup);
    }
}

static void *thread_main(void *arg)
{
    (void)arg;
    pthread_setspecific(key, (void *)1);
    for (int i = 0; i < 10; i++) {
        ENTER(work);
        EXIT(work);
    }
    return NULL;
}

int main(void)
{
    ENTER(main);
    HK_VAR("addr.cleanup", "%p", (void *)cleanup);
    HK_VAR("addr.work", "%p", (void *)work);
    if (pthread_key_create(&key, destructor) != 0)
        return 2;
    pthread_t t;
    if (pthread_create(&t, NULL, thread_main, NULL) != 0)
        return 2;
    pthread_join(t, NULL);
    EXIT(main);
    return 0;
}
