/* A hand-written thread-local logger: the time reference for hookcc's native trace.
 *
 * -finstrument-functions hooks that append a 16-byte record (rdtsc with the kind in bit 63, the
 * function's address) to a per-thread buffer reached through initial-exec TLS, and write the
 * buffer to a file with one write(2) when it is full. That is the least a streaming timed
 * tracer does: two timestamps per call, fixed-size records, no lock, no atomics, the slow path
 * out of line. It is deliberately minimal: single-file output shared by threads through
 * O_APPEND, no header, no symbol information, and a thread's last partial buffer is written at
 * exit only for the main thread (the workloads are single-threaded).
 *
 * HOOKLOG_OUTPUT names the output file (default rdtsc.hklog in the working directory).
 */
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define LOGGER_TICKS() __rdtsc()
#else
#include <time.h>
static inline __attribute__((no_instrument_function)) uint64_t logger_ticks(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#define LOGGER_TICKS() logger_ticks()
#endif

#define LOGGER_FN __attribute__((no_instrument_function))
#define LOGGER_RECORDS 65536u /* 1 MiB per thread, as the trace runtime's default */
#define LOGGER_EXIT_BIT (1ull << 63)

struct logger_record {
    uint64_t ticks_kind;
    uint64_t address;
};

static __thread struct logger_record *t_pos __attribute__((tls_model("initial-exec")));
static __thread struct logger_record *t_end __attribute__((tls_model("initial-exec")));
static __thread struct logger_record *t_buf __attribute__((tls_model("initial-exec")));
static int g_fd = -1;

void __cyg_profile_func_enter(void *fn, void *call_site) LOGGER_FN;
void __cyg_profile_func_exit(void *fn, void *call_site) LOGGER_FN;

static LOGGER_FN void logger_write(struct logger_record *upto)
{
    if (g_fd >= 0 && upto > t_buf) {
        const char *p = (const char *)t_buf;
        size_t left = (size_t)((const char *)upto - p);
        while (left > 0) {
            ssize_t n = write(g_fd, p, left);
            if (n <= 0)
                break;
            p += n;
            left -= (size_t)n;
        }
    }
}

/* First hook of a thread (pos == end == NULL) or a full buffer. */
static __attribute__((noinline, cold)) LOGGER_FN struct logger_record *logger_slow(void)
{
    if (!t_buf) {
        void *m = mmap(NULL, LOGGER_RECORDS * sizeof(struct logger_record), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            abort();
        t_buf = m;
    } else {
        logger_write(t_pos);
    }
    t_end = t_buf + LOGGER_RECORDS;
    return t_buf;
}

static inline __attribute__((always_inline)) LOGGER_FN void logger_record(void *fn, uint64_t kind)
{
    struct logger_record *p = t_pos;
    if (__builtin_expect(p == t_end, 0))
        p = logger_slow();
    p->ticks_kind = LOGGER_TICKS() | kind;
    p->address = (uint64_t)(uintptr_t)fn;
    t_pos = p + 1;
}

void __cyg_profile_func_enter(void *fn, void *call_site)
{
    (void)call_site;
    logger_record(fn, 0);
}

void __cyg_profile_func_exit(void *fn, void *call_site)
{
    (void)call_site;
    logger_record(fn, LOGGER_EXIT_BIT);
}

static __attribute__((constructor)) LOGGER_FN void logger_open(void)
{
    const char *path = getenv("HOOKLOG_OUTPUT");
    g_fd = open(path && *path ? path : "rdtsc.hklog", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC,
                0644);
}

static __attribute__((destructor)) LOGGER_FN void logger_close(void)
{
    logger_write(t_pos);
    t_pos = t_end = t_buf;
    if (g_fd >= 0)
        close(g_fd);
    g_fd = -1;
}
