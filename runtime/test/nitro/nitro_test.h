/* Helpers for the NITRO runtime tests (runtime/test/nitro/run.sh). None of them gets hooks:
 * the tests are compiled with -profile, and only the functions under test should be recorded.
 *
 *   nt_capture_start()          send the profiler's output to a buffer (per thread)
 *   nt_capture_reset()          empty the calling thread's buffer
 *   nt_captured()               what it printed since, NUL-terminated
 *   nt_guarded(size)            a buffer of `size` bytes that ends at an inaccessible page, so
 *                               that writing one byte past it crashes the test
 *   NT_CHECK(cond, fmt, ...)    on failure: print "file:line: message" and exit 1
 *   nt_expect_text(got, want)   compare two texts; on a mismatch print both and exit 1
 *   nt_run_thread(fn, arg)      run fn(arg) on a new thread and wait for it
 *   nt_blank_costs(text)        replace every number after ", cost " by "C" (in place), so a
 *                               function-cost dump compares without its timings
 */
#ifndef NITRO_TEST_H
#define NITRO_TEST_H

#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <hookcc/nitro.h>

#define NT_FN __attribute__((no_instrument_function, unused))

#define NT_CAPTURE_SIZE 65536
static __thread char nt_capture_buffer[NT_CAPTURE_SIZE];
static __thread size_t nt_capture_len;

static NT_FN void nt_capture(const char *text, void *context)
{
    (void)context;
    size_t n = strlen(text);
    if (nt_capture_len + n >= NT_CAPTURE_SIZE)
        n = NT_CAPTURE_SIZE - 1 - nt_capture_len;
    memcpy(nt_capture_buffer + nt_capture_len, text, n);
    nt_capture_len += n;
    nt_capture_buffer[nt_capture_len] = '\0';
}

/* Empties the calling thread's capture buffer. */
static NT_FN void nt_capture_reset(void)
{
    nt_capture_len = 0;
    nt_capture_buffer[0] = '\0';
}

/* The print function is process-wide (set it before starting threads); what it captures goes
 * to the printing thread's buffer. */
static NT_FN void nt_capture_start(void)
{
    nt_capture_reset();
    OS_SetProfilePrintFunction(nt_capture, NULL);
}

static NT_FN const char *nt_captured(void)
{
    return nt_capture_buffer;
}

static NT_FN void nt_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s:%d: ", file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    exit(1);
}

#define NT_CHECK(cond, ...)                                                                    \
    do {                                                                                       \
        if (!(cond))                                                                           \
            nt_fail(__FILE__, __LINE__, __VA_ARGS__);                                          \
    } while (0)

/* Replaces every "lr=<hex>" by "lr=ADDR" (in place), as the run.sh comparisons do. */
static NT_FN char *nt_normalize(char *text)
{
    char *out = text;
    for (const char *in = text; *in != '\0';) {
        if (strncmp(in, "lr=", 3) == 0) {
            in += 3; /* past the digits before writing: "lr=ADDR" may be longer than "lr=0" */
            while ((*in >= '0' && *in <= '9') || (*in >= 'a' && *in <= 'f'))
                in++;
            memcpy(out, "lr=ADDR", 7);
            out += 7;
        } else {
            *out++ = *in++;
        }
    }
    *out = '\0';
    return text;
}

#define nt_expect_text(got, want) nt_expect_text_at(__FILE__, __LINE__, got, want)
static NT_FN void nt_expect_text_at(const char *file, int line, const char *got, const char *want)
{
    if (strcmp(got, want) == 0)
        return;
    fprintf(stderr, "%s:%d: output differs\n--- expected\n%s--- got\n%s---\n", file, line, want,
            got);
    exit(1);
}

/* The captured output, normalized, compared with `want`; then capturing starts afresh. */
#define nt_expect_captured(want) nt_expect_captured_at(__FILE__, __LINE__, want)
static NT_FN void nt_expect_captured_at(const char *file, int line, const char *want)
{
    nt_expect_text_at(file, line, nt_normalize(nt_capture_buffer), want);
    nt_capture_len = 0;
    nt_capture_buffer[0] = '\0';
}

static NT_FN void nt_run_thread(void *(*fn)(void *), void *arg)
{
    pthread_t thread;
    NT_CHECK(pthread_create(&thread, NULL, fn, arg) == 0, "pthread_create");
    NT_CHECK(pthread_join(thread, NULL) == 0, "pthread_join");
}

static NT_FN char *nt_blank_costs(char *text)
{
    for (char *p = strstr(text, ", cost "); p != NULL; p = strstr(p, ", cost ")) {
        p += 7;
        char *end = p;
        (void)strtoull(p, &end, 10);
        NT_CHECK(end > p, "bad cost in:\n%s", text);
        memmove(p + 1, end, strlen(end) + 1);
        *p = 'C';
    }
    return text;
}

/* `size` bytes (a multiple of 8) right before a PROT_NONE page. */
static NT_FN void *nt_guarded(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t span = (size + page - 1) / page * page;
    char *base = mmap(NULL, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                      -1, 0);
    NT_CHECK(base != MAP_FAILED, "mmap failed");
    NT_CHECK(mprotect(base + span, page, PROT_NONE) == 0, "mprotect failed");
    return base + span - size;
}

#endif /* NITRO_TEST_H */
