/* The program interposes pwritev (as an instrumented libc wrapper would), so every write the
 * runtime makes runs hooks from inside the runtime. They must be counted as lost, not recorded
 * into the buffer being written, not deadlock, and not disturb errno. */
#include "hk_test.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

HK_FUNCTION(work, 1)

/* The runtime writes with pwritev64 where off_t is 32 bits and _FILE_OFFSET_BITS=64 (i386,
 * arm), and pwritev (or pwritev64, its alias) elsewhere: interpose both. */
ssize_t pwritev(int fd, const struct iovec *iov, int parts, off_t off)
{
    ENTER(pwritev);
    ssize_t (*real)(int, const struct iovec *, int, off_t) =
        (ssize_t(*)(int, const struct iovec *, int, off_t))dlsym(RTLD_NEXT, "pwritev");
    ssize_t r = real(fd, iov, parts, off);
    EXIT(pwritev);
    return r;
}

ssize_t pwritev64(int fd, const struct iovec *iov, int parts, off64_t off)
{
    ENTER(pwritev64);
    ssize_t (*real)(int, const struct iovec *, int, off64_t) =
        (ssize_t(*)(int, const struct iovec *, int, off64_t))dlsym(RTLD_NEXT, "pwritev64");
    ssize_t r = real(fd, iov, parts, off);
    EXIT(pwritev64);
    return r;
}

int main(void)
{
    ENTER(main);
    HK_VAR("pid", "%ld", (long)getpid());
    HK_VAR("addr.work", "%p", (void *)work);
    int errno_ok = 1;
    for (int i = 0; i < 1000; i++) {
        errno = 42;
        ENTER(work);
        EXIT(work);
        if (errno != 42)
            errno_ok = 0;
    }
    HK_VAR("errno_ok", "%d", errno_ok);
    EXIT(main);
    return errno_ok ? 0 : 1;
}
