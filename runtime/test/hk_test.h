/* Shared by the trace runtime's unit tests: they call the hooks by hand, with known counts,
 * as compiler-inserted code would, and print `key=value` lines that check_trace.py reads. */
#ifndef HK_TEST_H
#define HK_TEST_H

/* Included first by every test, before any system header. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <stdio.h>

#include <hookcc/trace.h>

void __hookcc_enter(void *fn, void *call_site);
void __hookcc_exit(void *fn, void *call_site);

#define ENTER(f) __hookcc_enter((void *)(f), __builtin_return_address(0))
#define EXIT(f) __hookcc_exit((void *)(f), __builtin_return_address(0))

/* Functions whose addresses the records carry: distinct bodies, so no two are folded. */
#define HK_FUNCTION(name, k)                                                                   \
    __attribute__((noinline)) void name(void);                                                 \
    __attribute__((noinline)) void name(void)                                                  \
    {                                                                                          \
        __asm__ __volatile__("" : : "r"(k));                                                   \
    }

/* Prints key=value for check_trace.py --vars, unbuffered so a crash loses nothing. */
#define HK_VAR(key, fmt, ...)                                                                  \
    do {                                                                                       \
        printf(key "=" fmt "\n", __VA_ARGS__);                                                 \
        fflush(stdout);                                                                        \
    } while (0)

#endif
