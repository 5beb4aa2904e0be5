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

void __hookcc_enter(void *fn);
void __hookcc_exit(void *fn_exit);

/* As the pass calls them: the exit hook gets the address + 2 (bit 1 marks an exit). */
#define ENTER(f) __hookcc_enter((void *)(f))
#define EXIT(f) __hookcc_exit((char *)(f) + 2)

/* Functions whose addresses the records carry: distinct bodies, so no two are folded. Like
 * every function of the tests (run.sh: -falign-functions=4), 4-byte aligned, as the pass aligns
 * the functions it instruments. */
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
