/* hookcc TI runtime: the hook functions and record buffer of TI's "Profiling on the C6000 using
 * Function Hooks" (seeds/ti-c6000-function-hooks.txt, its hook.c), as the library component
 * `hookcc --hook-runtime=ti` links. API in <hookcc/ti.h>; record layouts, dump formats and
 * the debugger and hosted flows in docs/ti-runtime.md.
 *
 * Compiled on its own as one translation unit by the hookcc driver, for whatever target the
 * user builds for, and linked into executables:
 *   clang-19 -std=gnu11 -O2 -fPIC -fno-stack-protector -fvisibility=hidden -w \
 *            -I runtime/include -I runtime/src [--target=...] -c runtime/src/ti.c
 * A bare-metal project may instead compile this file into its firmware, with
 * -DHOOKCC_BARE_METAL (implied where there is no Unix libc) and optionally
 * -DHOOKCC_TI_DEFAULT_RECORDS=N for a default buffer.
 *
 * How it works
 * - The seed's semantics and names: uiProfileDataCnt starts at 0xFFFFFFFF, which keeps every
 *   hook from recording until hook_init() fills ProfileData with 0xFF bytes and sets it to 0.
 *   entry_hook/exit_hook/task_switch_hook stop when the buffer is full; the _circular
 *   variants wrap (the capacity is a power of two, so the slot is count & mask).
 * - A record is atomic without disabling interrupts (the seed's _disable_interrupts): the
 *   hook reserves its slot with one atomic fetch-add on uiProfileDataCnt, so no two records
 *   share a slot whatever preempts the hook (a thread, a signal handler, an interrupt), then
 *   writes the timestamp words and, last and with release order, address_type. A reader that
 *   sees a valid address_type therefore sees that record's timestamp, except while a circular
 *   hook overwrites an old slot on a weakly ordered CPU (docs/ti-runtime.md, "Atomicity").
 * - The timestamp is read before the slot is reserved, so a hook that must not record (inside
 *   the program's own timestamp function) returns without leaving a hole.
 * - Hot path: a load and compare of the count, the counter (rdtsc on x86), the fetch-add, three
 *   stores. No lock, no malloc, no libc call (except clock_gettime on hosted targets without a
 *   counter, see clock.h), errno untouched; only the rare cases are out of line.
 * - The buffer and its capacity are weak definitions, so a program sets its own size with
 *   HOOKCC_TI_PROFILE_BUFFER(n) without rebuilding the runtime; hook_init reads the capacity
 *   once (rounding a bad value down to a power of two) into hkti, which the hooks use.
 * - Hosted (Unix libc): the first hook_init registers an atexit handler that writes the valid
 *   part of the buffer (all of it once it wrapped) as PREFIX.bin and PREFIX.dat, with open(2)
 *   and write(2) only; hookcc_ti_dump() does the same on demand.
 */

#if !defined(HOOKCC_BARE_METAL) && __STDC_HOSTED__ && (defined(__unix__) || defined(__APPLE__))
#define HKTI_HOSTED 1
#define _GNU_SOURCE 1           /* program_invocation_short_name, secure_getenv */
#define _FILE_OFFSET_BITS 64    /* large dumps on 32-bit targets */
#else
#define HKTI_HOSTED 0
#endif

#include <stddef.h>
#include <stdint.h>

#if HKTI_HOSTED
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "message.h"
#endif

#include "hookcc/ti.h"
#include "baremetal_atomic.h"

/* The default timestamp source is clock.h's hkrt_ticks() where clock.h has one without a
 * program-supplied function: x86 and AArch64 counters anywhere, CLOCK_MONOTONIC on hosted
 * targets. Elsewhere (bare-metal 32-bit Arm, RISC-V, ...) clock.h would stop with #error, so it
 * is not included and the program must define hookcc_ti_timestamp(). */
#if defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) ||                       \
    defined(HKRT_TICKS_EXTERN) || HKTI_HOSTED
#include "clock.h"
#define HKTI_BUILTIN_COUNTER 1
#else
#define HKTI_BUILTIN_COUNTER 0
#endif

#ifndef HKRT_NOINSTR
#define HKRT_NOINSTR __attribute__((no_instrument_function))
#endif

#if HKTI_HOSTED && !defined(PATH_MAX)
#define PATH_MAX 4096
#endif

/* Every function of the runtime: never instrumented (a hook must not call itself). */
#define HKTI_FN HKRT_NOINSTR
/* The hooks and the public API; HKTI_EXPORT_DATA for the variables a debugger reads. */
#define HKTI_EXPORT __attribute__((visibility("default"))) HKRT_NOINSTR
#define HKTI_EXPORT_DATA __attribute__((visibility("default")))
/* Rare paths: out of line and out of the hot code's cache lines. */
#define HKTI_COLD __attribute__((noinline, cold)) HKRT_NOINSTR
#define HKTI_LIKELY(x) __builtin_expect(!!(x), 1)
#define HKTI_UNLIKELY(x) __builtin_expect(!!(x), 0)

#define HKTI_INVALID_ADDRESS (~(uintptr_t)0) /* hook_init's 0xFF fill: "no record here" */

/* The record layouts docs/ti-runtime.md specifies: the seed's 3 words on 32-bit targets, a
 * 64-bit address and the same two timestamp words (4 words) on 64-bit ones. */
_Static_assert(sizeof(unsigned int) == 4, "uiProfileDataCnt is the seed's 32-bit counter");
_Static_assert(offsetof(Hook_Record, address_type) == 0 &&
                   offsetof(Hook_Record, TSCL) == sizeof(uintptr_t) &&
                   offsetof(Hook_Record, TSCH) == sizeof(uintptr_t) + 4,
               "Hook_Record: {address_type, TSCL, TSCH}, no padding");
_Static_assert(sizeof(Hook_Record) == (sizeof(uintptr_t) == 4 ? 12 : 16),
               "Hook_Record: 12 bytes on 32-bit targets, 16 on 64-bit ones");

/* ---------------------------------------------------------------------------------------- */
/* The symbols a debugger reads (names from the seed)                                       */

/* Hosted programs get a 1 Mi-record default; a bare-metal program defines its buffer (there is
 * no size that suits every memory map). Both weak: HOOKCC_TI_PROFILE_BUFFER replaces them. */
#ifndef HOOKCC_TI_DEFAULT_RECORDS
#if HKTI_HOSTED
#define HOOKCC_TI_DEFAULT_RECORDS (1u << 20)
#else
#define HOOKCC_TI_DEFAULT_RECORDS 0
#endif
#endif

#if HOOKCC_TI_DEFAULT_RECORDS > 0
_Static_assert((HOOKCC_TI_DEFAULT_RECORDS & (HOOKCC_TI_DEFAULT_RECORDS - 1)) == 0 &&
                   HOOKCC_TI_DEFAULT_RECORDS <= HOOKCC_TI_MAX_RECORDS,
               "HOOKCC_TI_DEFAULT_RECORDS must be a power of two, at most 2^30");
/* 64-byte aligned: 16-byte records never straddle a cache line. */
__attribute__((weak, aligned(64))) HKTI_EXPORT_DATA Hook_Record
    ProfileData[HOOKCC_TI_DEFAULT_RECORDS];
/* Weak, so the compiler cannot fold it into the code: the linked value is read at hook_init. */
__attribute__((weak)) HKTI_EXPORT_DATA const unsigned int uiMaxProfileRecordNum =
    HOOKCC_TI_DEFAULT_RECORDS;
#endif

/* 0xFFFFFFFF disables recording until hook_init, as in the seed. */
HKTI_EXPORT_DATA unsigned int uiProfileDataCnt = HOOKCC_TI_NOT_INITIALIZED;

HKTI_EXPORT_DATA unsigned long hookcc_ti_dropped;

#if HKTI_BUILTIN_COUNTER
/* A weak reference: non-NULL only if the program defines it. */
extern uint64_t hookcc_ti_timestamp(void) __attribute__((weak));
#endif

/* ---------------------------------------------------------------------------------------- */
/* Runtime state                                                                            */

/* Set by hook_init (and hookcc_ti_set_timestamp), read by every hook. */
static struct {
    uint32_t capacity;                 /* records: a power of two; 0 until hook_init */
    uint32_t mask;                     /* capacity - 1 */
    hookcc_ti_timestamp_fn timestamp;  /* what the hooks call; NULL: the built-in counter */
    hookcc_ti_timestamp_fn set_by_api; /* hookcc_ti_set_timestamp's, NULL if none */
    int initialized;                   /* hook_init has run with a usable buffer */
} hkti;

#if HKTI_HOSTED
/* Set while this thread runs the program's timestamp function: a hook called from inside it
 * (the function has hooks, against the rule) returns instead of recursing forever.
 * initial-exec: the runtime is linked into executables only; no destructor. */
static __thread unsigned char t_in_timestamp __attribute__((tls_model("initial-exec")));

static struct {
    int atexit_registered; /* atomic */
    pid_t pid;             /* at hook_init: a fork child writes files of its own */
} hkti_host;

static HKTI_FN void hkti_hosted_init(void);
#endif

/* ---------------------------------------------------------------------------------------- */
/* Hot path                                                                                 */

/* The seed's "address always has last 2 bits == 0": made true rather than assumed, so a Thumb
 * function pointer (bit 0 set) or an odd task handle cannot turn into another record type. */
static inline HKTI_FN uintptr_t hkti_tag(uintptr_t address, Hook_Record_Type type)
{
    return (address & ~HOOKCC_TI_TYPE_MASK) | (uintptr_t)type;
}

/* Fills a slot nobody else writes: timestamp words first, address_type last with release
 * order, so a reader that sees the address also sees the timestamp (slots hold 0xFF bytes
 * from hook_init until written). */
static inline HKTI_FN void hkti_write(Hook_Record *r, uintptr_t address_type, uint32_t lo,
                                      uint32_t hi)
{
    r->TSCL = lo;
    r->TSCH = hi;
    __atomic_store_n(&r->address_type, address_type, __ATOMIC_RELEASE);
}

/* Overwrites a slot of a circular buffer: marks it invalid first, so that a debugger halting
 * the writer half way sees an invalid record rather than an old address with a new time. */
static inline HKTI_FN void hkti_write_circular(Hook_Record *r, uintptr_t address_type,
                                               uint32_t lo, uint32_t hi)
{
    __atomic_store_n(&r->address_type, HKTI_INVALID_ADDRESS, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    hkti_write(r, address_type, lo, hi);
}

/* A stop-when-full hook found no room for n records. */
static HKTI_COLD void hkti_full(unsigned int count, unsigned int n)
{
    if (count != HOOKCC_TI_NOT_INITIALIZED) /* before hook_init nothing is "dropped" */
        __atomic_fetch_add(&hookcc_ti_dropped, (unsigned long)n, __ATOMIC_RELAXED);
}

/* Stop-when-full: true if there may be room (the count is below the capacity, which also
 * rules out 0xFFFFFFFF); otherwise counts the records as dropped. */
static inline HKTI_FN int hkti_room(unsigned int n)
{
    unsigned int count = __atomic_load_n(&uiProfileDataCnt, __ATOMIC_RELAXED);
    if (HKTI_LIKELY(count < __atomic_load_n(&hkti.capacity, __ATOMIC_RELAXED)))
        return 1;
    hkti_full(count, n);
    return 0;
}

/* Stop-when-full: reserves a slot and writes the record there if the slot is in the buffer
 * (another thread may have taken the last one since hkti_room). */
static inline HKTI_FN void hkti_put(uintptr_t address_type, uint32_t lo, uint32_t hi)
{
    unsigned int slot = __atomic_fetch_add(&uiProfileDataCnt, 1u, __ATOMIC_RELAXED);
    if (HKTI_LIKELY(slot < __atomic_load_n(&hkti.capacity, __ATOMIC_RELAXED)))
        hkti_write(&ProfileData[slot], address_type, lo, hi);
    else
        hkti_full(slot, 1);
}

/* Two records, one timestamp, two consecutive slots reserved at once: a hook preempting this
 * one cannot land between the TASK_EXIT and the TASK_ENTRY. If only one fits, the first. */
static inline HKTI_FN void hkti_put_task(uintptr_t prev, uintptr_t next, uint32_t lo,
                                         uint32_t hi)
{
    unsigned int slot = __atomic_fetch_add(&uiProfileDataCnt, 2u, __ATOMIC_RELAXED);
    uint32_t capacity = __atomic_load_n(&hkti.capacity, __ATOMIC_RELAXED);
    /* slot stays far below 2^32: the count only grows while it is below the capacity */
    if (HKTI_LIKELY(slot + 1 < capacity)) {
        hkti_write(&ProfileData[slot], hkti_tag(prev, HOOK_TYPE_TASK_EXIT), lo, hi);
        hkti_write(&ProfileData[slot + 1], hkti_tag(next, HOOK_TYPE_TASK_ENTRY), lo, hi);
    } else if (slot < capacity) {
        hkti_write(&ProfileData[slot], hkti_tag(prev, HOOK_TYPE_TASK_EXIT), lo, hi);
        hkti_full(slot, 1);
    } else {
        hkti_full(slot, 2);
    }
}

/* A circular hook's fetch-add made the count reach 0xFFFFFFFF or pass 2^32. Either would break
 * the seed's rules: at 0xFFFFFFFF every circular hook returns at once, for ever; below the
 * capacity a reader would dump only the first records of a full buffer. So the count is moved
 * on by the capacity (the slot order is unchanged), plus one slot, marked invalid, if it
 * stands on 0xFFFFFFFF. Hooks that read 0xFFFFFFFF in between skip their record: a few
 * records in 2^32. */
static HKTI_COLD void hkti_circular_passed_2_32(unsigned int new_count)
{
    uint32_t capacity = __atomic_load_n(&hkti.capacity, __ATOMIC_RELAXED);
    if (new_count == HOOKCC_TI_NOT_INITIALIZED) {
        unsigned int v = __atomic_fetch_add(&uiProfileDataCnt, capacity + 1u, __ATOMIC_RELAXED);
        Hook_Record *r = &ProfileData[v & hkti.mask];
        r->TSCL = 0xFFFFFFFFu;
        r->TSCH = 0xFFFFFFFFu;
        __atomic_store_n(&r->address_type, HKTI_INVALID_ADDRESS, __ATOMIC_RELEASE);
    } else {
        __atomic_fetch_add(&uiProfileDataCnt, capacity, __ATOMIC_RELAXED);
    }
}

/* Circular: the seed's "return before hook is initialized". */
static inline HKTI_FN int hkti_circular_on(void)
{
    return __atomic_load_n(&uiProfileDataCnt, __ATOMIC_RELAXED) != HOOKCC_TI_NOT_INITIALIZED;
}

/* Circular: true if a fetch-add of n that returned count made the count reach 0xFFFFFFFF or
 * pass 2^32 (rare: the record is then written by hkti_put_circular_rare). */
static inline HKTI_FN int hkti_passes_2_32(unsigned int count, unsigned int n)
{
    return count >= HOOKCC_TI_NOT_INITIALIZED - n;
}

/* The rest of a circular hook whose fetch-add of n (1: a function record `a`; 2: a task switch
 * from a to b) returned count and passed 2^32. Out of line, so the hot path saves no
 * registers for it. */
static HKTI_COLD void hkti_put_circular_rare(unsigned int count, unsigned int n, uintptr_t a,
                                             uintptr_t b, uint32_t lo, uint32_t hi)
{
    hkti_circular_passed_2_32(count + n);
    uint32_t mask = hkti.mask;
    if (n == 1) {
        hkti_write_circular(&ProfileData[count & mask], a, lo, hi);
    } else {
        hkti_write_circular(&ProfileData[count & mask], hkti_tag(a, HOOK_TYPE_TASK_EXIT), lo, hi);
        hkti_write_circular(&ProfileData[(count + 1) & mask], hkti_tag(b, HOOK_TYPE_TASK_ENTRY),
                            lo, hi);
    }
}

static inline HKTI_FN void hkti_put_circular(uintptr_t address_type, uint32_t lo, uint32_t hi)
{
    unsigned int count = __atomic_fetch_add(&uiProfileDataCnt, 1u, __ATOMIC_RELAXED);
    if (HKTI_UNLIKELY(hkti_passes_2_32(count, 1))) {
        hkti_put_circular_rare(count, 1, address_type, 0, lo, hi);
        return;
    }
    hkti_write_circular(&ProfileData[count & hkti.mask], address_type, lo, hi);
}

static inline HKTI_FN void hkti_put_task_circular(uintptr_t prev, uintptr_t next, uint32_t lo,
                                                  uint32_t hi)
{
    unsigned int count = __atomic_fetch_add(&uiProfileDataCnt, 2u, __ATOMIC_RELAXED);
    if (HKTI_UNLIKELY(hkti_passes_2_32(count, 2))) {
        hkti_put_circular_rare(count, 2, prev, next, lo, hi);
        return;
    }
    uint32_t mask = hkti.mask;
    hkti_write_circular(&ProfileData[count & mask], hkti_tag(prev, HOOK_TYPE_TASK_EXIT), lo, hi);
    hkti_write_circular(&ProfileData[(count + 1) & mask], hkti_tag(next, HOOK_TYPE_TASK_ENTRY),
                        lo, hi);
}

/* What a hook records, for the path that calls the program's timestamp function. */
enum hkti_put_kind { HKTI_PUT, HKTI_PUT_CIRCULAR, HKTI_PUT_TASK, HKTI_PUT_TASK_CIRCULAR };

/* The whole record with the program's timestamp function: out of line (it is a call anyway),
 * so the built-in counter's path keeps the timestamp in registers. */
static __attribute__((noinline)) HKTI_FN void
hkti_put_program_time(hookcc_ti_timestamp_fn fn, enum hkti_put_kind kind, uintptr_t a, uintptr_t b)
{
    uint64_t t;
#if HKTI_HOSTED
    if (t_in_timestamp)
        return; /* a hook inside the timestamp function itself: not recorded */
    t_in_timestamp = 1;
    int saved_errno = errno;
    t = fn();
    errno = saved_errno;
    t_in_timestamp = 0;
#else
    t = fn();
#endif
    uint32_t lo = (uint32_t)t, hi = (uint32_t)(t >> 32);
    switch (kind) {
    case HKTI_PUT: hkti_put(a, lo, hi); break;
    case HKTI_PUT_CIRCULAR: hkti_put_circular(a, lo, hi); break;
    case HKTI_PUT_TASK: hkti_put_task(a, b, lo, hi); break;
    case HKTI_PUT_TASK_CIRCULAR: hkti_put_task_circular(a, b, lo, hi); break;
    }
}

/* True if the record was made with the program's timestamp function; false if the hook is to
 * read the built-in counter (hkti_ticks) and put the record itself. */
static inline HKTI_FN int hkti_program_time(enum hkti_put_kind kind, uintptr_t a, uintptr_t b)
{
    hookcc_ti_timestamp_fn fn = __atomic_load_n(&hkti.timestamp, __ATOMIC_RELAXED);
#if HKTI_BUILTIN_COUNTER
    if (HKTI_LIKELY(fn == NULL))
        return 0;
#else
    if (fn == NULL)
        fn = hookcc_ti_timestamp; /* no counter known here: the program must define it */
#endif
    hkti_put_program_time(fn, kind, a, b);
    return 1;
}

/* The built-in counter as TSCL/TSCH. */
static inline HKTI_FN void hkti_ticks(uint32_t *lo, uint32_t *hi)
{
#if !HKTI_BUILTIN_COUNTER
    *lo = *hi = 0; /* not reached: hkti_program_time always records */
#elif defined(HKRT_TICKS_SPLIT)
    hkrt_ticks_split(lo, hi); /* rdtsc delivers the halves: no shift, no or */
#else
    uint64_t t = hkrt_ticks();
    *lo = (uint32_t)t;
    *hi = (uint32_t)(t >> 32);
#endif
}

/* ---------------------------------------------------------------------------------------- */
/* The hooks                                                                                */

HKTI_EXPORT void entry_hook(void (*func_addr)(void))
{
    if (HKTI_UNLIKELY(!hkti_room(1)))
        return;
    uintptr_t at = hkti_tag((uintptr_t)func_addr, HOOK_TYPE_FUNC_ENTRY);
    if (HKTI_UNLIKELY(hkti_program_time(HKTI_PUT, at, 0)))
        return;
    uint32_t lo, hi;
    hkti_ticks(&lo, &hi);
    hkti_put(at, lo, hi);
}

HKTI_EXPORT void exit_hook(void (*func_addr)(void))
{
    if (HKTI_UNLIKELY(!hkti_room(1)))
        return;
    uintptr_t at = hkti_tag((uintptr_t)func_addr, HOOK_TYPE_FUNC_EXIT);
    if (HKTI_UNLIKELY(hkti_program_time(HKTI_PUT, at, 0)))
        return;
    uint32_t lo, hi;
    hkti_ticks(&lo, &hi);
    hkti_put(at, lo, hi);
}

HKTI_EXPORT void entry_hook_circular(void (*func_addr)(void))
{
    if (HKTI_UNLIKELY(!hkti_circular_on()))
        return;
    uintptr_t at = hkti_tag((uintptr_t)func_addr, HOOK_TYPE_FUNC_ENTRY);
    if (HKTI_UNLIKELY(hkti_program_time(HKTI_PUT_CIRCULAR, at, 0)))
        return;
    uint32_t lo, hi;
    hkti_ticks(&lo, &hi);
    hkti_put_circular(at, lo, hi);
}

HKTI_EXPORT void exit_hook_circular(void (*func_addr)(void))
{
    if (HKTI_UNLIKELY(!hkti_circular_on()))
        return;
    uintptr_t at = hkti_tag((uintptr_t)func_addr, HOOK_TYPE_FUNC_EXIT);
    if (HKTI_UNLIKELY(hkti_program_time(HKTI_PUT_CIRCULAR, at, 0)))
        return;
    uint32_t lo, hi;
    hkti_ticks(&lo, &hi);
    hkti_put_circular(at, lo, hi);
}

HKTI_EXPORT void task_switch_hook(uintptr_t prevTask, uintptr_t nextTask)
{
    if (HKTI_UNLIKELY(!hkti_room(2)))
        return;
    if (HKTI_UNLIKELY(hkti_program_time(HKTI_PUT_TASK, prevTask, nextTask)))
        return;
    uint32_t lo, hi;
    hkti_ticks(&lo, &hi);
    hkti_put_task(prevTask, nextTask, lo, hi);
}

HKTI_EXPORT void task_switch_hook_circular(uintptr_t prevTask, uintptr_t nextTask)
{
    if (HKTI_UNLIKELY(!hkti_circular_on()))
        return;
    if (HKTI_UNLIKELY(hkti_program_time(HKTI_PUT_TASK_CIRCULAR, prevTask, nextTask)))
        return;
    uint32_t lo, hi;
    hkti_ticks(&lo, &hi);
    hkti_put_task_circular(prevTask, nextTask, lo, hi);
}

/* ---------------------------------------------------------------------------------------- */
/* Control                                                                                  */

/* What the hooks call: the function set at run time, else the one the program defines, else
 * NULL (the built-in counter). */
static HKTI_FN void hkti_choose_timestamp(void)
{
    hookcc_ti_timestamp_fn fn = __atomic_load_n(&hkti.set_by_api, __ATOMIC_RELAXED);
#if HKTI_BUILTIN_COUNTER
    if (fn == NULL && hookcc_ti_timestamp != NULL)
        fn = hookcc_ti_timestamp;
#endif
    __atomic_store_n(&hkti.timestamp, fn, __ATOMIC_RELAXED);
}

HKTI_EXPORT void hookcc_ti_set_timestamp(hookcc_ti_timestamp_fn fn)
{
    __atomic_store_n(&hkti.set_by_api, fn, __ATOMIC_RELAXED);
    hkti_choose_timestamp();
}

/* The linked capacity (uiMaxProfileRecordNum), as a power of two the hooks can mask with. */
static HKTI_FN uint32_t hkti_checked_capacity(void)
{
    /* volatile: read the linked value, never the runtime's own default */
    uint32_t want = *(const volatile unsigned int *)&uiMaxProfileRecordNum;
    uint32_t capacity = want > HOOKCC_TI_MAX_RECORDS ? HOOKCC_TI_MAX_RECORDS : want;
    while ((capacity & (capacity - 1)) != 0)
        capacity &= capacity - 1; /* round down to a power of two */
#if HKTI_HOSTED
    if (capacity != want)
        hkrt_warn(capacity == 0 ? "uiMaxProfileRecordNum is 0: TI records are not kept"
                                : "uiMaxProfileRecordNum is not a power of two at most 2^30; "
                                  "using the largest one below it (define the buffer with "
                                  "HOOKCC_TI_PROFILE_BUFFER)",
                  NULL, 0);
#endif
    return capacity;
}

HKTI_EXPORT void hook_init(void)
{
    /* Off while the buffer is reset (both kinds of hook skip 0xFFFFFFFF). */
    __atomic_store_n(&uiProfileDataCnt, HOOKCC_TI_NOT_INITIALIZED, __ATOMIC_RELAXED);
    uint32_t capacity = hkti_checked_capacity();
    __atomic_store_n(&hkti.capacity, capacity, __ATOMIC_RELAXED);
    hkti.mask = capacity - 1;
    hkti_choose_timestamp();
    __atomic_store_n(&hookcc_ti_dropped, 0ul, __ATOMIC_RELAXED);
    if (capacity == 0) {
        hkti.initialized = 0;
        return;
    }
#if HKTI_HOSTED
    hkti_hosted_init();
#endif
    /* 0xFFFFFFFF represents an invalid record (the seed's memset). */
    __builtin_memset(ProfileData, 0xFF, (size_t)capacity * sizeof(Hook_Record));
    hkti.initialized = 1;
    __atomic_store_n(&uiProfileDataCnt, 0u, __ATOMIC_RELEASE);
}

/* A breakpoint site for debuggers: noinline, and an asm the optimizer cannot remove, so that
 * the symbol is a real function whose body runs. */
HKTI_EXPORT __attribute__((noinline)) void hookcc_ti_done(void)
{
    __asm__ __volatile__("" ::: "memory");
}

/* ---------------------------------------------------------------------------------------- */
/* Hosted: the dump files                                                                   */

#if !HKTI_HOSTED

HKTI_EXPORT int hookcc_ti_dump(void)
{
    return -1; /* bare metal: a debugger dumps the buffer */
}

#else

/* hkrt_append, hkrt_write_stderr, hkrt_warn, hkrt_getenv: message.h */

/* Writes v in decimal or lowercase hex (no prefix) at out; returns the length (no NUL). */
static HKTI_FN size_t hkti_format_u64(uint64_t v, unsigned base, char *out)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v != 0);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}

static HKTI_FN void hkti_append_u64(char *dst, size_t cap, uint64_t v, unsigned base)
{
    char num[24];
    hkti_format_u64(v, base, num);
    hkrt_append(dst, cap, num);
}


static HKTI_FN const char *hkti_program_name(void)
{
    const char *name = NULL;
#if defined(__linux__)
    name = program_invocation_short_name; /* glibc and musl */
#elif defined(__APPLE__) || defined(__FreeBSD__) || defined(__NetBSD__) || defined(__OpenBSD__)
    name = getprogname();
#endif
    return (name != NULL && name[0] != '\0') ? name : "program";
}

/* PREFIX: $HOOKCC_TI_OUTPUT, or <program>.<pid>.ti. A forked child must not overwrite its
 * parent's files, so with HOOKCC_TI_OUTPUT it appends .<its pid>. */
static HKTI_FN void hkti_make_prefix(char *prefix, size_t cap)
{
    pid_t pid = getpid();
    const char *env = hkrt_getenv("HOOKCC_TI_OUTPUT");
    prefix[0] = '\0';
    if (env == NULL) {
        hkrt_append(prefix, cap, hkti_program_name());
        hkrt_append(prefix, cap, ".");
        hkti_append_u64(prefix, cap, (uint64_t)pid, 10);
        hkrt_append(prefix, cap, ".ti");
        return;
    }
    hkrt_append(prefix, cap, env);
    if (pid != hkti_host.pid) {
        hkrt_append(prefix, cap, ".");
        hkti_append_u64(prefix, cap, (uint64_t)pid, 10);
    }
}

/* Creates or truncates path for writing; never follows a symlink (so nothing but this file is
 * ever overwritten), and creates it 0600 (the program's call history): the policy of every
 * hookcc runtime, docs/reliability.md. Returns the fd, or -1 with errno set. */
static HKTI_FN int hkti_create(const char *path)
{
    int fd;
    do
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    while (fd < 0 && errno == EINTR);
    return fd;
}

/* Returns 0, or an errno value. */
static HKTI_FN int hkti_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        /* at most 1 GiB a call: some kernels cap a write there anyway */
        ssize_t n = write(fd, p, len > (1u << 30) ? (1u << 30) : len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : ENOSPC;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Closes fd; returns err, or close's errno if err is 0 and close failed. */
static HKTI_FN int hkti_close(int fd, int err)
{
    if (close(fd) != 0 && err == 0 && errno != EINTR)
        err = errno;
    return err;
}

/* PREFIX.bin: the records' memory exactly, as a debugger's binary save of 32-bit words. */
static HKTI_FN int hkti_write_bin(const char *path, const Hook_Record *records, size_t n)
{
    int fd = hkti_create(path);
    if (fd < 0)
        return errno;
    return hkti_close(fd, hkti_write_all(fd, records, n * sizeof(Hook_Record)));
}

/* PREFIX.dat: CCS "32-bit Hex - C Style": the header line
 *   1651 1 <start address> 0 <length>
 * (magic, format 1 = hexadecimal, the address the block was saved from, page 0, the number of
 * 32-bit words; the last three in hex without 0x, as CCS writes them), then one 0xXXXXXXXX word
 * per line, in memory order. */
static HKTI_FN int hkti_write_dat(const char *path, const Hook_Record *records, size_t n)
{
    int fd = hkti_create(path);
    if (fd < 0)
        return errno;
    char buf[8192];
    size_t used = 0;
    const size_t words = n * HOOKCC_TI_RECORD_WORDS;
    buf[0] = '\0';
    hkrt_append(buf, sizeof buf, "1651 1 ");
    hkti_append_u64(buf, sizeof buf, (uint64_t)(uintptr_t)records, 16);
    hkrt_append(buf, sizeof buf, " 0 ");
    hkti_append_u64(buf, sizeof buf, (uint64_t)words, 16);
    hkrt_append(buf, sizeof buf, "\n");
    used = strlen(buf);

    /* Word by word as memory holds them (a 64-bit address is two words, in memory order). */
    const volatile uint32_t *word = (const volatile uint32_t *)(const void *)records;
    int err = 0;
    for (size_t i = 0; i < words && err == 0; i++) {
        if (used + 12 > sizeof buf) {
            err = hkti_write_all(fd, buf, used);
            used = 0;
        }
        uint32_t w = word[i];
        char *out = buf + used;
        out[0] = '0';
        out[1] = 'x';
        for (int d = 0; d < 8; d++)
            out[2 + d] = "0123456789ABCDEF"[(w >> (28 - 4 * d)) & 0xF];
        out[10] = '\n';
        used += 11;
    }
    if (err == 0 && used > 0)
        err = hkti_write_all(fd, buf, used);
    return hkti_close(fd, err);
}

HKTI_EXPORT int hookcc_ti_dump(void)
{
    int saved_errno = errno;
    if (!hkti.initialized) {
        errno = EINVAL;
        return -1;
    }
    /* Whenever uiProfileDataCnt >= the capacity (wrapped, or full), the whole buffer; that
     * includes 0xFFFFFFFF, which after hook_init only a circular count passing 2^32 shows. */
    unsigned int count = __atomic_load_n(&uiProfileDataCnt, __ATOMIC_ACQUIRE);
    uint32_t capacity = hkti.capacity;
    size_t n = count >= capacity ? capacity : count;

    char prefix[PATH_MAX], bin[PATH_MAX + 8], dat[PATH_MAX + 8];
    hkti_make_prefix(prefix, sizeof prefix);
    bin[0] = dat[0] = '\0';
    hkrt_append(bin, sizeof bin, prefix);
    hkrt_append(bin, sizeof bin, ".bin");
    hkrt_append(dat, sizeof dat, prefix);
    hkrt_append(dat, sizeof dat, ".dat");

    int err = hkti_write_bin(bin, ProfileData, n);
    if (err != 0) {
        hkrt_warn("cannot write the TI records to", bin, err);
    } else if ((err = hkti_write_dat(dat, ProfileData, n)) != 0) {
        hkrt_warn("cannot write the TI records to", dat, err);
    }
    if (err != 0) {
        errno = err;
        return -1;
    }

    const char *verbose = hkrt_getenv("HOOKCC_TI_VERBOSE");
    if (verbose != NULL && strcmp(verbose, "0") != 0) {
        char line[3 * PATH_MAX + 256];
        line[0] = '\0';
        hkrt_append(line, sizeof line, "hookcc: TI records: ");
        hkrt_append(line, sizeof line, bin);
        hkrt_append(line, sizeof line, ", ");
        hkrt_append(line, sizeof line, dat);
        hkrt_append(line, sizeof line, " (");
        hkti_append_u64(line, sizeof line, n, 10);
        hkrt_append(line, sizeof line, " records of ");
        hkti_append_u64(line, sizeof line, sizeof(Hook_Record), 10);
        hkrt_append(line, sizeof line, " bytes; uiProfileDataCnt ");
        hkti_append_u64(line, sizeof line, count, 10);
        hkrt_append(line, sizeof line, ", buffer ");
        hkti_append_u64(line, sizeof line, capacity, 10);
        hkrt_append(line, sizeof line, " records at 0x");
        hkti_append_u64(line, sizeof line, (uint64_t)(uintptr_t)ProfileData, 16);
        hkrt_append(line, sizeof line, ", ");
        hkti_append_u64(line, sizeof line,
                        __atomic_load_n(&hookcc_ti_dropped, __ATOMIC_RELAXED), 10);
        hkrt_append(line, sizeof line, " dropped)\n");
        hkrt_write_stderr(line);
    }
    errno = saved_errno;
    return 0;
}

static HKTI_FN void hkti_at_exit(void)
{
    (void)hookcc_ti_dump();
}

static HKTI_FN void hkti_hosted_init(void)
{
    hkti_host.pid = getpid();
    if (__atomic_exchange_n(&hkti_host.atexit_registered, 1, __ATOMIC_RELAXED) == 0) {
        if (atexit(hkti_at_exit) != 0)
            hkrt_warn("cannot register the TI records' exit dump (atexit failed)", NULL, 0);
    }
}

#endif /* HKTI_HOSTED */
