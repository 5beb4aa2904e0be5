/* One thread, known counts: main, then N x (outer (inner)). Checks errno across hooks.
 * Usage: basic [N]   (default 100000, more than one default buffer) */
#include "hk_test.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

HK_FUNCTION(outer, 1)
HK_FUNCTION(inner, 2)

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 100000;
    ENTER(main);
    HK_VAR("addr.main", "%p", (void *)main);
    HK_VAR("addr.outer", "%p", (void *)outer);
    HK_VAR("addr.inner", "%p", (void *)inner);
    HK_VAR("pid", "%ld", (long)getpid());
    const char *path = hookcc_trace_path();
    HK_VAR("path", "%s", path != NULL ? path : "(null)");
    HK_VAR("enabled", "%d", hookcc_trace_enabled());
    int errno_ok = 1;
    for (long i = 0; i < n; i++) {
        int want = 1000 + (int)(i & 7);
        errno = want;
        ENTER(outer);
        ENTER(inner);
        EXIT(inner);
        EXIT(outer);
        if (errno != want)
            errno_ok = 0;
    }
    HK_VAR("errno_ok", "%d", errno_ok);
    EXIT(main);
    return errno_ok ? 0 : 1;
}
