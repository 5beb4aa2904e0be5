/* hookcc's NITRO-SDK function call trace (seeds/nitro-sdk-profiler.txt §3; docs/nitro.md).
 *
 * Compiled on its own as one translation unit by the hookcc driver for whatever target the
 * user builds for (NITRO_PROFILE_TYPE=CALLTRACE or --hook-runtime=calltrace), and linked into
 * executables:
 *   clang-19 -std=gnu11 -O2 -fPIC -fno-stack-protector -fvisibility=hidden \
 *            -I runtime/include -I runtime/src [--target=...] -c runtime/src/calltrace.c
 *
 * How it works
 * - OS_InitCallTrace(buf, size, mode) writes a header and control area at the start of buf
 *   (the layout is in docs/nitro.md, for `hookprof nitro` to decode raw memory dumps) and makes
 *   buf the calling thread's buffer. Records follow: name, lr, call level and, unless turned
 *   off, r0–r3, one pointer-sized word each.
 * - __PROFILE_ENTRY: the thread's control area through local-exec TLS, one compare against
 *   the limit, the record, the level and the current pointer. A thread that records nothing
 *   (no buffer, disabled, or inside the runtime) points at hkn_ct_off, whose limit of 0 fails
 *   that same compare, so there is no NULL test. Stack and log mode share that path: a full
 *   stack, the end of the ring and hkn_ct_off all go to the out-of-line slow path, which wraps
 *   the ring, counts the call as not recorded, or does nothing.
 * - __PROFILE_EXIT, on the buffer's mode byte: log mode only takes 1 from the level (never
 *   below 0) and leaves current alone; stack mode pops, current -= pop (the record size), and
 *   takes 1 from the level. Popping below `floor` goes to the slow path: an exit with nothing
 *   to pop (a frame that was open when the buffer was initialised or cleared) is counted;
 *   while calls beyond a full stack are in progress, floor is set above every record so that
 *   their exits come here and pop nothing; hkn_ct_off's floor sends every exit there.
 * - No locks, atomics, malloc, libc calls or errno changes in the hooks. The functions that
 *   print mark the thread busy (its hooks point at hkn_ct_off), so hooks run by an
 *   instrumented print function record nothing.
 */

#include "nitro_common.h"

#define HKN_CT_REGISTERS 1u     /* header flags: r0–r3 are recorded */
#define HKN_CT_MAX_INDENT 10    /* log-mode indentation stops growing here, as NITRO-SDK's */
#define HKN_CT_WORDS_BASE 3     /* name, lr, level */
#define HKN_CT_WORDS_REGISTERS 7 /* and r0, r1, r2, r3 */

/* The control area: the common header, then the fields the hooks use, all pointer-sized (W). */
struct hkn_ct {
    struct hkn_header h;      /* 0 */
    uintptr_t current;        /* 56       the record the next entry writes */
    uintptr_t limit;          /* 56 + 1W  one past the last record */
    uintptr_t floor;          /* 56 + 2W  exits pop only while current - pop >= floor */
    uintptr_t pop;            /* 56 + 3W  bytes an exit pops: record_size (stack), 0 (log) */
    uintptr_t step;           /* 56 + 4W  record_size */
    uintptr_t level;          /* 56 + 5W  the call level of the next entry */
    uint32_t unmatched_exits; /* 56 + 6W  stack mode: exits that had no record to pop */
    uint32_t overflow_depth;  /*   + 4    stack mode: calls beyond the capacity in progress */
    uint32_t overflow_calls;  /*   + 8    stack mode: calls not recorded, buffer full */
    uint32_t reported;        /*   + 12   1 once the overflow was reported */
};

#define HKN_CT_HEADER_SIZE ((uint32_t)sizeof(struct hkn_ct))
_Static_assert(sizeof(struct hkn_ct) == 56 + 6 * sizeof(void *) + 16,
               "docs/nitro.md: call trace control area");
_Static_assert(sizeof(struct hkn_ct) % HKN_ALIGN == 0, "records start 8-byte aligned");

/* A record: W-sized words. */
enum { HKN_CT_NAME = 0, HKN_CT_LR = 1, HKN_CT_LEVEL = 2, HKN_CT_R0 = 3 };

static HKN_FN uint32_t hkn_ct_record_size(int registers)
{
    return (uint32_t)((registers ? HKN_CT_WORDS_REGISTERS : HKN_CT_WORDS_BASE) * sizeof(uintptr_t));
}

static HKN_FN uintptr_t hkn_ct_first(const struct hkn_ct *c)
{
    return (uintptr_t)c + HKN_CT_HEADER_SIZE;
}

/* ---------------------------------------------------------------------------------------- */
/* Hooks                                                                                    */

/* What the hooks read while the thread records nothing (no buffer, disabled, or inside the
 * runtime): a limit of 0 and a floor of all ones fail their bounds checks, and their slow paths
 * leave it alone. Stack mode (0), level 0. Never written. */
static const struct hkn_ct hkn_ct_off = {.limit = 0, .floor = UINTPTR_MAX};

/* The control area the thread's hooks record into, or hkn_ct_off: never NULL, so the bounds
 * checks are the hooks' only tests of it. Turning recording on or off is this one store. */
static HKN_THREAD_LOCAL struct hkn_ct *t_ct = (struct hkn_ct *)&hkn_ct_off;

static HKN_FN void hkn_activate(struct hkn_header *h)
{
    __atomic_store_n(&t_ct, h != NULL ? (struct hkn_ct *)h : (struct hkn_ct *)&hkn_ct_off,
                     __ATOMIC_RELAXED);
}

/* The record at p, and the level. The caller moves current. */
static inline __attribute__((always_inline)) HKN_FN void
hkn_ct_write(struct hkn_ct *c, uintptr_t p, const char *name, void *lr, uintptr_t r0,
             uintptr_t r1, uintptr_t r2, uintptr_t r3)
{
    uintptr_t *w = (uintptr_t *)p;
    uintptr_t level = c->level;
    w[HKN_CT_NAME] = (uintptr_t)name;
    w[HKN_CT_LR] = (uintptr_t)lr;
    w[HKN_CT_LEVEL] = level;
    if (c->h.flags & HKN_CT_REGISTERS) {
        w[HKN_CT_R0 + 0] = r0;
        w[HKN_CT_R0 + 1] = r1;
        w[HKN_CT_R0 + 2] = r2;
        w[HKN_CT_R0 + 3] = r3;
    }
    /* Only a compiler barrier: level is read again, so the increment is one instruction on
     * memory rather than an increment and a store of the register loaded above. */
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    c->level++;
}

/* The stack overflows: say so once, with what the seed's NITRO-SDK printed before stopping. */
static HKN_COLD void hkn_ct_report_overflow(struct hkn_ct *c, const char *name, void *lr,
                                            const uintptr_t regs[4])
{
    struct hkn_thread *t = &t_hkn;
    if (!hkn_enter(t))
        return;
    struct hkn_out o = {0};
    hkn_out_str(&o, "OS_CallTrace: stack overflow in ");
    hkn_out_str(&o, name);
    hkn_out_str(&o, ": lr=");
    hkn_out_hex(&o, (uintptr_t)lr);
    if (c->h.flags & HKN_CT_REGISTERS) {
        static const char *const labels[4] = {", r0=", ", r1=", ", r2=", ", r3="};
        for (int i = 0; i < 4; i++) {
            hkn_out_str(&o, labels[i]);
            hkn_out_hex(&o, regs[i]);
        }
    }
    hkn_out_str(&o, "; the buffer holds ");
    hkn_out_dec(&o, c->h.capacity);
    hkn_out_str(&o, " calls, deeper calls are not recorded (size it with "
                    "OS_CalcCallTraceBufferSize)");
    hkn_out_end(&o);
    hkn_leave(t);
}

/* current reached limit: the end of the ring (log mode) or a full stack; or the thread records
 * nothing (hkn_ct_off). The hook's own arguments in the hook's order, so that the hook reaches
 * it with a plain jump. */
static HKN_COLD void hkn_ct_entry_full(const char *name, void *lr, uintptr_t r0, uintptr_t r1,
                                       uintptr_t r2, uintptr_t r3)
{
    struct hkn_ct *c = t_ct;
    if (c == &hkn_ct_off)
        return;
    if (c->h.mode == OS_CALLTRACE_LOG) {
        uintptr_t p = hkn_ct_first(c);
        hkn_ct_write(c, p, name, lr, r0, r1, r2, r3);
        c->current = p + c->step;
        return;
    }
    /* The call is not recorded; its exit must pop nothing: floor above every record sends
     * exits to hkn_ct_exit_slow until the calls beyond the capacity have returned. */
    c->overflow_calls++;
    c->overflow_depth++;
    c->level++;
    c->floor = UINTPTR_MAX;
    if (!c->reported) {
        c->reported = 1;
        const uintptr_t regs[4] = {r0, r1, r2, r3};
        hkn_ct_report_overflow(c, name, lr, regs);
    }
}

HKN_EXPORT void __PROFILE_ENTRY(const char *name, void *lr, uintptr_t r0, uintptr_t r1,
                                uintptr_t r2, uintptr_t r3)
{
    struct hkn_ct *c = t_ct;
    uintptr_t p = c->current;
    if (HKN_UNLIKELY(p >= c->limit)) {
        hkn_ct_entry_full(name, lr, r0, r1, r2, r3);
        return;
    }
    hkn_ct_write(c, p, name, lr, r0, r1, r2, r3);
    c->current = p + c->step;
}

/* A stack-mode exit that would pop below floor; or the thread records nothing (hkn_ct_off). */
static HKN_COLD void hkn_ct_exit_slow(struct hkn_ct *c)
{
    if (c == &hkn_ct_off)
        return;
    c->level -= c->level != 0;
    if (c->overflow_depth > 0) {
        if (--c->overflow_depth == 0)
            c->floor = hkn_ct_first(c);
        return;
    }
    c->unmatched_exits++; /* nothing to pop: a frame older than the buffer's contents */
}

HKN_EXPORT void __PROFILE_EXIT(void)
{
    struct hkn_ct *c = t_ct;
    if (HKN_UNLIKELY(c->h.mode == OS_CALLTRACE_LOG)) {
        /* The level - 1, never below 0 (frames open when the buffer was initialised);
         * current stays. */
        if (c->level != 0) {
            /* Only a compiler barrier: level is read again, so the decrement is one
             * instruction on memory rather than a load, a decrement and a store. */
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            c->level--;
        }
        return;
    }
    /* Stack mode: current -= pop (the record size). Popping below `floor` goes to the slow
     * path: an exit with nothing to pop (a frame that was open when the buffer was initialised
     * or cleared) is counted there; while calls beyond a full stack are in progress, floor is
     * above every record so that their exits go there and pop nothing. */
    uintptr_t p = c->current - c->pop;
    if (HKN_UNLIKELY(p < c->floor)) {
        hkn_ct_exit_slow(c);
        return;
    }
    /* Not below 0: level counts the calls in progress since the buffer's records began (more
     * after a clear, or after the exit of a call entered while disabled), so it is at least
     * the number of records on the stack, here 1 or more. */
    c->level--;
    c->current = p;
}

/* ---------------------------------------------------------------------------------------- */
/* Setting up                                                                               */

HKN_EXPORT int OS_CalcCallTraceLinesEx(u32 size, BOOL registers)
{
    if (size < HKN_CT_HEADER_SIZE)
        return 0;
    return (int)((size - HKN_CT_HEADER_SIZE) / hkn_ct_record_size(registers));
}

HKN_EXPORT u32 OS_CalcCallTraceBufferSizeEx(int lines, BOOL registers)
{
    if (lines < 0)
        lines = 0;
    uint64_t size = HKN_CT_HEADER_SIZE + (uint64_t)lines * hkn_ct_record_size(registers);
    return size > UINT32_MAX ? UINT32_MAX : (u32)size;
}

/* The names the header exports, in the default layout (r0–r3 recorded). nitro.h turns them
 * into the *Ex calls when the program is built with -DOS_CALLTRACE_NO_REGISTERS. */
#undef OS_CalcCallTraceLines
#undef OS_CalcCallTraceBufferSize
#undef OS_InitCallTrace

HKN_EXPORT int OS_CalcCallTraceLines(u32 size)
{
    return OS_CalcCallTraceLinesEx(size, TRUE);
}

HKN_EXPORT u32 OS_CalcCallTraceBufferSize(int lines)
{
    return OS_CalcCallTraceBufferSizeEx(lines, TRUE);
}

/* Clears the records and counters (the level is kept: the frames open now still are). */
static HKN_FN void hkn_ct_clear(struct hkn_ct *c)
{
    uintptr_t first = hkn_ct_first(c);
    /* Names of 0 end the log-mode ring for the dump (and for a decoder). */
    for (uintptr_t p = first; p < c->limit; p += c->step)
        ((uintptr_t *)p)[HKN_CT_NAME] = 0;
    c->current = first;
    c->floor = first;
    c->unmatched_exits = 0;
    c->overflow_depth = 0;
    c->overflow_calls = 0;
    c->reported = 0;
}

HKN_EXPORT void OS_InitCallTraceEx(void *buf, u32 size, OSCallTraceMode mode, BOOL registers)
{
    static const char api[] = "OS_InitCallTrace";
    struct hkn_thread *t = &t_hkn;
    if (!hkn_enter(t))
        return;
    uint32_t record_size = hkn_ct_record_size(registers);
    uint32_t usable;
    struct hkn_ct *c = hkn_align_buffer(buf, size, &usable);
    if (mode != OS_CALLTRACE_STACK && mode != OS_CALLTRACE_LOG) {
        struct hkn_out o = {0};
        hkn_out_str(&o, api);
        hkn_out_str(&o, ": mode ");
        hkn_out_dec(&o, (uint32_t)mode);
        hkn_out_str(&o, " is neither OS_CALLTRACE_STACK nor OS_CALLTRACE_LOG; nothing is recorded");
        hkn_out_end(&o);
        hkn_release(t);
    } else if (buf == NULL) {
        hkn_report(api, "the buffer is NULL; nothing is recorded");
        hkn_release(t);
    } else if (usable < HKN_CT_HEADER_SIZE + record_size) {
        struct hkn_out o = {0};
        hkn_out_str(&o, api);
        hkn_out_str(&o, ": a buffer of ");
        hkn_out_dec(&o, size);
        hkn_out_str(&o, " bytes is too small: one call needs ");
        hkn_out_dec(&o, OS_CalcCallTraceBufferSizeEx(1, registers));
        hkn_out_str(&o, (uintptr_t)c != (uintptr_t)buf
                            ? " from an 8-byte aligned address (OS_CalcCallTraceBufferSize)"
                            : " (OS_CalcCallTraceBufferSize)");
        hkn_out_str(&o, "; nothing is recorded");
        hkn_out_end(&o);
        hkn_release(t);
    } else {
        uint32_t capacity = (usable - HKN_CT_HEADER_SIZE) / record_size;
        uintptr_t first = (uintptr_t)c + HKN_CT_HEADER_SIZE;
        uintptr_t limit = first + (uintptr_t)capacity * record_size;
        if (hkn_claim(t, &c->h, (uintptr_t)c, limit, api)) {
            if (t->tid == 0)
                t->tid = hkn_gettid();
            hkn_header_init(&c->h, HKN_KIND_CALLTRACE, (uint8_t)mode,
                            registers ? HKN_CT_REGISTERS : 0, HKN_CT_HEADER_SIZE, record_size,
                            capacity, t->tid);
            c->limit = limit;
            c->pop = mode == OS_CALLTRACE_STACK ? record_size : 0;
            c->step = record_size;
            c->level = 0;
            hkn_ct_clear(c);
        }
    }
    hkn_leave(t);
}

HKN_EXPORT void OS_InitCallTrace(void *buf, u32 size, OSCallTraceMode mode)
{
    OS_InitCallTraceEx(buf, size, mode, TRUE);
}

/* ---------------------------------------------------------------------------------------- */
/* Enable, disable, clear, switch                                                            */

HKN_EXPORT BOOL OS_EnableCallTrace(void)
{
    return hkn_set_enabled(1);
}

HKN_EXPORT BOOL OS_DisableCallTrace(void)
{
    return hkn_set_enabled(0);
}

HKN_EXPORT BOOL OS_RestoreCallTrace(BOOL enable)
{
    return hkn_set_enabled(enable != FALSE);
}

HKN_EXPORT void OS_ClearCallTraceBuffer(void)
{
    struct hkn_thread *t = &t_hkn;
    if (!hkn_enter(t))
        return;
    if (t->installed == NULL)
        hkn_report("OS_ClearCallTraceBuffer",
                   "this thread has no call trace buffer (call OS_InitCallTrace first)");
    else
        hkn_ct_clear((struct hkn_ct *)t->installed);
    hkn_leave(t);
}

HKN_EXPORT void *OS_SwitchProfilerThread(void *incoming)
{
    struct hkn_thread *t = &t_hkn;
    struct hkn_header *out = hkn_switch_out(t);
    struct hkn_header *in =
        hkn_switch_in(t, out, incoming, HKN_KIND_CALLTRACE,
                      "not a call trace buffer (pass what OS_SwitchProfilerThread returned, "
                      "or NULL); the incoming thread records nothing");
    hkn_switch_done(t, in);
    return out;
}

/* ---------------------------------------------------------------------------------------- */
/* Dump                                                                                     */

static HKN_FN void hkn_ct_dump_record(const struct hkn_ct *c, uintptr_t p, uintptr_t indent)
{
    const uintptr_t *w = (const uintptr_t *)p;
    struct hkn_out o = {0};
    if (indent > HKN_CT_MAX_INDENT)
        indent = HKN_CT_MAX_INDENT;
    for (uintptr_t i = 0; i < indent; i++)
        hkn_out_char(&o, ' ');
    hkn_out_str(&o, (const char *)w[HKN_CT_NAME]);
    hkn_out_str(&o, ": lr=");
    hkn_out_hex(&o, w[HKN_CT_LR]);
    if (c->h.flags & HKN_CT_REGISTERS) {
        static const char *const labels[4] = {", r0=", ", r1=", ", r2=", ", r3="};
        for (int i = 0; i < 4; i++) {
            hkn_out_str(&o, labels[i]);
            hkn_out_hex(&o, w[HKN_CT_R0 + i]);
        }
    }
    hkn_out_end(&o);
}

static HKN_FN void hkn_ct_dump(const struct hkn_ct *c, uintptr_t lr)
{
    struct hkn_out o = {0};
    hkn_out_str(&o, "OS_DumpCallTrace: lr=");
    hkn_out_hex(&o, lr);
    hkn_out_end(&o);

    uintptr_t first = hkn_ct_first(c);
    if (c->h.mode == OS_CALLTRACE_STACK) {
        for (uintptr_t p = c->current; p > first;) {
            p -= c->step;
            hkn_ct_dump_record(c, p, 0);
        }
    } else {
        /* The ring, newest first, until a slot never written or once round. */
        uintptr_t p = c->current;
        for (uint32_t n = 0; n < c->h.capacity; n++) {
            if (p == first)
                p = c->limit;
            p -= c->step;
            if (((const uintptr_t *)p)[HKN_CT_NAME] == 0)
                break;
            hkn_ct_dump_record(c, p, ((const uintptr_t *)p)[HKN_CT_LEVEL]);
        }
    }

    if (c->overflow_calls != 0) {
        o.len = 0;
        hkn_out_str(&o, "OS_DumpCallTrace: ");
        hkn_out_dec(&o, c->overflow_calls);
        hkn_out_str(&o, " calls were not recorded: the buffer holds ");
        hkn_out_dec(&o, c->h.capacity);
        if (c->overflow_depth != 0) {
            hkn_out_str(&o, "; the ");
            hkn_out_dec(&o, c->overflow_depth);
            hkn_out_str(&o, " innermost calls in progress are missing above");
        }
        hkn_out_end(&o);
    }
    if (c->unmatched_exits != 0) {
        o.len = 0;
        hkn_out_str(&o, "OS_DumpCallTrace: ");
        hkn_out_dec(&o, c->unmatched_exits);
        hkn_out_str(&o, " returns had no record to remove: their functions were called before "
                        "OS_InitCallTrace or OS_ClearCallTraceBuffer (§3.4: initialise from "
                        "the outermost function)");
        hkn_out_end(&o);
    }
}

/* noinline: the "lr=" line shows where the program called it from, as NITRO-SDK's does. */
HKN_EXPORT __attribute__((noinline)) void OS_DumpCallTrace(void)
{
    uintptr_t lr = (uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0));
    struct hkn_thread *t = &t_hkn;
    if (!hkn_enter(t))
        return;
    if (t->installed == NULL)
        hkn_report("OS_DumpCallTrace",
                   "this thread has no call trace buffer (call OS_InitCallTrace first)");
    else
        hkn_ct_dump((const struct hkn_ct *)t->installed, lr);
    hkn_leave(t);
}
