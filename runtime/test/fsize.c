/* A file size limit (RLIMIT_FSIZE) that the trace outgrows: as a full disk does, it makes the
 * runtime's writes fail. The file must still be finished (complete, rate, records = what it
 * holds, lost = made - kept), and the runtime's writes must not kill the program with SIGXFSZ.
 * Usage: fsize LIMIT N [self]: main, N x (outer (inner)); with "self", the program then writes
 * past the limit itself, and SIGXFSZ's default action (kill) must still be the program's. */
#include "hk_test.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

HK_FUNCTION(outer, 1)
HK_FUNCTION(inner, 2)

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    struct rlimit limit = {(rlim_t)atol(argv[1]), (rlim_t)atol(argv[1])};
    if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
        return 2;
    long n = atol(argv[2]);
    ENTER(main);
    HK_VAR("addr.outer", "%p", (void *)outer);
    HK_VAR("addr.inner", "%p", (void *)inner);
    HK_VAR("pid", "%ld", (long)getpid());
    for (long i = 0; i < n; i++) {
        ENTER(outer);
        ENTER(inner);
        EXIT(inner);
        EXIT(outer);
    }
    HK_VAR("survived", "%d", 1);
    if (argc > 3 && strcmp(argv[3], "self") == 0) {
        static char block[4096];
        int fd = open("own.dat", O_CREAT | O_WRONLY | O_TRUNC, 0600);
        for (rlim_t done = 0; fd >= 0 && done <= 2 * limit.rlim_cur; done += sizeof block)
            if (write(fd, block, sizeof block) < 0)
                break;
        HK_VAR("own_write_survived", "%d", 1);
    }
    EXIT(main);
    return 0;
}
