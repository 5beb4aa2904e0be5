/* The public API, started with HOOKCC_DISABLE=1: enable/disable/enabled, flush (the file grows
 * by exactly one EVENTS chunk), path, and flush from a thread that never recorded. */
#include "hk_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

HK_FUNCTION(ignored, 1)
HK_FUNCTION(kept, 2)

static int failures;

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "api.c:%d: %s\n", __LINE__, #cond);                                \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

static void pairs(void (*f)(void), int n)
{
    for (int i = 0; i < n; i++) {
        ENTER(f);
        EXIT(f);
    }
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void *quiet_thread(void *arg)
{
    (void)arg;
    hookcc_trace_flush(); /* never recorded anything: nothing to do, must not crash */
    return NULL;
}

int main(void)
{
    HK_VAR("pid", "%ld", (long)getpid());
    HK_VAR("addr.kept", "%p", (void *)kept);
    HK_VAR("addr.ignored", "%p", (void *)ignored);
    const char *path = hookcc_trace_path();
    CHECK(path != NULL);
    if (path == NULL)
        return 1;
    HK_VAR("path", "%s", path);
    CHECK(hookcc_trace_enabled() == 0); /* HOOKCC_DISABLE=1 */
    pairs(ignored, 10);

    hookcc_trace_enable();
    CHECK(hookcc_trace_enabled() == 1);
    ENTER(main);
    pairs(kept, 20);
    long before = file_size(path);
    hookcc_trace_flush();
    long after = file_size(path);
    /* main + 20 pairs as one PACKED chunk (header, fixed part, stream) and its CHECK chunk:
     * more than the empty chunk, less than the 16-byte records would take. */
    CHECK(after - before > 16 + 16 + 24);
    CHECK(after - before < 16 + 16 * 41 + 24);
    hookcc_trace_flush();
    CHECK(file_size(path) == after); /* nothing buffered: nothing written */

    hookcc_trace_disable();
    CHECK(hookcc_trace_enabled() == 0);
    pairs(ignored, 5);
    hookcc_trace_enable();
    pairs(kept, 7);
    EXIT(main);

    pthread_t th;
    CHECK(pthread_create(&th, NULL, quiet_thread, NULL) == 0);
    pthread_join(th, NULL);
    HK_VAR("failures", "%d", failures);
    return failures != 0;
}
