/* An exec chain: `exec_chain N` records main and 10 pairs, then (N > 0) execs itself with N - 1.
 * Every image has the same pid, so each finds its earlier images' files taken and needs a
 * name of its own; the last one returns from main and must finish its file, however long the
 * chain (16 names were once all there were). */
#include "hk_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

HK_FUNCTION(work, 1)

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 0;
    ENTER(main);
    for (int i = 0; i < 10; i++) {
        ENTER(work);
        EXIT(work);
    }
    if (n > 0) {
        char next[24];
        snprintf(next, sizeof next, "%ld", n - 1);
        char *args[] = {argv[0], next, NULL};
        execv("/proc/self/exe", args);
        return 2;
    }
    HK_VAR("pid", "%ld", (long)getpid());
    HK_VAR("addr.work", "%p", (void *)work);
    HK_VAR("path", "%s", hookcc_trace_path());
    EXIT(main);
    return 0;
}
