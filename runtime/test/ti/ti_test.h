/* Shared by the TI runtime's tests: they call the hooks by hand, as compiler-inserted code
 * would, check what the runtime did in-process (CHECK), and print `key=value` lines that
 * check_ti.py reads (--vars). */
#ifndef TI_TEST_H
#define TI_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hookcc/ti.h>

/* Functions whose addresses the records carry: distinct bodies, so no two are folded; aligned
 * so their addresses have the low 2 bits free, as the seed assumes (Thumb keeps bit 0 set in
 * the pointer, which the runtime clears). */
#define TI_FUNCTION(name, k)                                                                   \
    __attribute__((noinline, aligned(16))) void name(void);                                    \
    __attribute__((noinline, aligned(16))) void name(void)                                     \
    {                                                                                          \
        __asm__ __volatile__("" : : "r"(k));                                                   \
    }

static int ti_failures;

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            ti_failures++;                                                                     \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);           \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fputc('\n', stderr);                                                               \
        }                                                                                      \
    } while (0)

/* Prints key=value for check_ti.py --vars, unbuffered so nothing is lost. */
#define TI_VAR(key, fmt, ...)                                                                  \
    do {                                                                                       \
        printf(key "=" fmt "\n", __VA_ARGS__);                                                 \
        fflush(stdout);                                                                        \
    } while (0)

#define TI_ADDR(name) TI_VAR("addr." #name, "0x%llx", (unsigned long long)(uintptr_t)(name))

static inline uintptr_t ti_at(void (*f)(void), Hook_Record_Type type)
{
    return ((uintptr_t)f & ~HOOKCC_TI_TYPE_MASK) | (uintptr_t)type;
}

static inline uint64_t ti_time(const Hook_Record *r)
{
    return ((uint64_t)r->TSCH << 32) | r->TSCL;
}

static inline int ti_invalid(const Hook_Record *r)
{
    return r->address_type == ~(uintptr_t)0;
}

/* The common vars and the failure count; returns the exit status. */
static inline int ti_finish(void)
{
    TI_VAR("profiledata", "0x%llx", (unsigned long long)(uintptr_t)ProfileData);
    TI_VAR("count", "%u", uiProfileDataCnt);
    TI_VAR("capacity", "%u", uiMaxProfileRecordNum);
    TI_VAR("dropped", "%lu", hookcc_ti_dropped);
    TI_VAR("failures", "%d", ti_failures);
    return ti_failures == 0 ? 0 : 1;
}

#define ENTRY(f) entry_hook((void (*)(void))(f))
#define EXIT(f) exit_hook((void (*)(void))(f))
#define ENTRY_C(f) entry_hook_circular((void (*)(void))(f))
#define EXIT_C(f) exit_hook_circular((void (*)(void))(f))

#endif
