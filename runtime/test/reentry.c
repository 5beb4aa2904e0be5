/* The program interposes pwrite (as an instrumented libc wrapper would), so every write the
 * runtime makes runs hooks from inside the runtime. They must be counted as lost, not recorded
 * into the buffer being written, not deadlock, and not disturb errno. */
#include "hk_test.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

HK_FUNCTION(work, 1)

/* The runtime calls pwrite64 where off_t is 32 bits and _FILE_OFFSET_BITS=64 (i386, arm), and
 * pwrite (or pwrite64, its alias) elsewhere: interpose both. */
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    ENTER(pwrite);
    ssize_t (*real)(int, const void *, size_t, off_t) =
        (ssize_t(*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
    ssize_t r = real(fd, buf, n, off);
    EXIT(pwrite);
    return r;
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    ENTER(pwrite64);
    ssize_t (*real)(int, const void *, size_t, off64_t) =
        (ssize_t(*)(int, const void *, size_t, off64_t))dlsym(RTLD_NEXT, "pwrite64");
    ssize_t r = real(fd, buf, n, off);
    EXIT(pwrite64);
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
