/* What the two NITRO-SDK profiler runtimes share (calltrace.c, functioncost.c): the buffer
 * header, output through the replaceable print function, the per-thread state and the list of
 * threads that own buffers.
 *
 * Each runtime is compiled on its own as one translation unit and a program links at most one,
 * so everything here is static except the few exported functions both of them define
 * (OS_SetProfilePrintFunction, OS_GetTick, OS_GetTickLo). Buffer layouts: docs/nitro.md.
 *
 * Hosted builds (__STDC_HOSTED__) keep the per-thread state in local-exec TLS and a list of
 * the threads that own a buffer, so that a buffer another thread records into is refused.
 * Freestanding builds (no OS threads; a user-level scheduler moves the state with
 * OS_SwitchProfilerThread) keep one state in a plain static and print nothing until the
 * program sets a print function.
 */
#ifndef HOOKCC_RUNTIME_NITRO_COMMON_H
#define HOOKCC_RUNTIME_NITRO_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "hookcc/nitro.h"

#include "clock.h"
#include "baremetal_atomic.h"

#if __STDC_HOSTED__ && !defined(HKN_FREESTANDING)
#define HKN_HOSTED 1
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#define HKN_HOSTED 0
#endif

/* Every function of the runtime: never instrumented (a hook must not call itself). */
#define HKN_FN HKRT_NOINSTR
/* The hooks and the public API: the only symbols the runtime exports. */
#define HKN_EXPORT __attribute__((visibility("default"))) HKRT_NOINSTR
/* The helpers below: each component uses most of them, not all. */
#define HKN_SHARED __attribute__((unused)) HKRT_NOINSTR
/* Slow paths: out of line, away from the hot code. */
#define HKN_COLD __attribute__((noinline, cold)) HKRT_NOINSTR
#define HKN_UNLIKELY(x) __builtin_expect(!!(x), 0)

#if HKN_HOSTED
/* local-exec: the hooks reach their state at a link-time constant %fs offset (x86-64), with no
 * __tls_get_addr call and no GOT load. Valid because hookcc links the runtime into
 * executables only, never into shared libraries. */
#define HKN_THREAD_LOCAL __thread __attribute__((tls_model("local-exec")))
#else
#define HKN_THREAD_LOCAL
#endif

/* The hooks, defined by the component. Declared here: the header records the address of
 * __PROFILE_ENTRY as the anchor a decoder computes the load bias of a PIE from. */
HKN_EXPORT void __PROFILE_ENTRY(const char *name, void *lr, uintptr_t r0, uintptr_t r1,
                                uintptr_t r2, uintptr_t r3);
HKN_EXPORT void __PROFILE_EXIT(void);

/* ---------------------------------------------------------------------------------------- */
/* The header at the start of every buffer (docs/nitro.md, "Buffer header")                  */

#define HKN_MAGIC "HKNITRO" /* 8 bytes with the NUL */
#define HKN_MAGIC_SIZE 8
#define HKN_VERSION 1
#define HKN_ALIGN 8 /* the header starts at the buffer's first 8-byte aligned address */

enum hkn_kind {
    HKN_KIND_CALLTRACE = 1,    /* OS_InitCallTrace */
    HKN_KIND_FUNCTIONCOST = 2, /* OS_InitFunctionCost: the measurement buffer */
    HKN_KIND_STATISTICS = 3,   /* OS_InitStatistics */
};

enum hkn_endian { HKN_LITTLE_ENDIAN = 1, HKN_BIG_ENDIAN = 2 };

/* Every field has a fixed size and offset on every target; what follows it (the kind's
 * control fields, then the records) is described by header_size, record_size and capacity. */
struct hkn_header {
    char magic[HKN_MAGIC_SIZE]; /*  0 "HKNITRO\0" */
    uint16_t version;           /*  8 HKN_VERSION */
    uint8_t pointer_size;       /* 10 4 or 8: the size of the W fields that follow */
    uint8_t endian;             /* 11 enum hkn_endian: of every field */
    uint8_t kind;               /* 12 enum hkn_kind */
    uint8_t mode;               /* 13 call trace: OSCallTraceMode; else 0 */
    uint16_t flags;             /* 14 call trace: HKN_CT_REGISTERS; else 0 */
    uint32_t header_size;       /* 16 bytes from the header to the first record */
    uint32_t record_size;       /* 20 bytes per record */
    uint32_t capacity;          /* 24 records the buffer holds */
    uint32_t thread;            /* 28 OS thread id of the thread that initialised it, or 0 */
    uint32_t enabled;           /* 32 OS_Enable* / OS_Disable* state (statistics: 1) */
    uint32_t busy;              /* 36 1 while its thread is switched out from inside a runtime
                                 *    function (OS_SwitchProfilerThread keeps it); else 0 */
    uint64_t self;              /* 40 the header's address in the program */
    uint64_t anchor;            /* 48 the address of __PROFILE_ENTRY in the program */
};                              /* 56 */

_Static_assert(sizeof(struct hkn_header) == 56, "docs/nitro.md: the header is 56 bytes");
_Static_assert(offsetof(struct hkn_header, self) == 40, "docs/nitro.md: self at 40");

static HKN_SHARED void hkn_header_init(struct hkn_header *h, enum hkn_kind kind, uint8_t mode,
                                   uint16_t flags, uint32_t header_size, uint32_t record_size,
                                   uint32_t capacity, uint32_t thread)
{
    for (int i = 0; i < HKN_MAGIC_SIZE; i++)
        h->magic[i] = HKN_MAGIC[i];
    h->version = HKN_VERSION;
    h->pointer_size = (uint8_t)sizeof(void *);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    h->endian = HKN_BIG_ENDIAN;
#else
    h->endian = HKN_LITTLE_ENDIAN;
#endif
    h->kind = (uint8_t)kind;
    h->mode = mode;
    h->flags = flags;
    h->header_size = header_size;
    h->record_size = record_size;
    h->capacity = capacity;
    h->thread = thread;
    h->enabled = 1;
    h->busy = 0;
    h->self = (uint64_t)(uintptr_t)h;
    h->anchor = (uint64_t)(uintptr_t)&__PROFILE_ENTRY;
}

/* 1 if p holds a header of `kind` written by this program at this address. */
static HKN_SHARED int hkn_header_valid(const void *p, enum hkn_kind kind)
{
    const struct hkn_header *h = p;
    if (p == NULL || ((uintptr_t)p & (HKN_ALIGN - 1)) != 0)
        return 0;
    for (int i = 0; i < HKN_MAGIC_SIZE; i++)
        if (h->magic[i] != HKN_MAGIC[i])
            return 0;
    return h->version == HKN_VERSION && h->kind == kind &&
           h->pointer_size == sizeof(void *) && h->self == (uint64_t)(uintptr_t)h;
}

/* The first HKN_ALIGN-aligned address in [buf, buf + size), and how many bytes are left from
 * there (0 if none). Buffers are often u32 arrays, 4-byte aligned on 64-bit targets. */
static HKN_SHARED void *hkn_align_buffer(void *buf, uint32_t size, uint32_t *usable)
{
    uintptr_t start = (uintptr_t)buf;
    uintptr_t pad = (HKN_ALIGN - (start & (HKN_ALIGN - 1))) & (HKN_ALIGN - 1);
    *usable = size > pad ? (uint32_t)(size - pad) : 0;
    return (void *)(start + pad);
}

/* ---------------------------------------------------------------------------------------- */
/* Output                                                                                   */

static struct {
    OSProfilePrintFunction print; /* NULL: the default */
    void *context;
} g_hkn_print;

static HKN_SHARED void hkn_emit(const char *text)
{
    OSProfilePrintFunction print = __atomic_load_n(&g_hkn_print.print, __ATOMIC_ACQUIRE);
    if (print != NULL) {
        print(text, __atomic_load_n(&g_hkn_print.context, __ATOMIC_RELAXED));
        return;
    }
#if HKN_HOSTED
    int saved_errno = errno;
    size_t len = 0;
    while (text[len] != '\0')
        len++;
    while (len > 0) {
        ssize_t n = write(STDERR_FILENO, text, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        text += n;
        len -= (size_t)n;
    }
    errno = saved_errno;
#endif
}

HKN_EXPORT void OS_SetProfilePrintFunction(OSProfilePrintFunction print, void *context)
{
    /* Set it before starting threads: a thread printing meanwhile may pair the old function
     * with the new context. */
    __atomic_store_n(&g_hkn_print.context, context, __ATOMIC_RELAXED);
    __atomic_store_n(&g_hkn_print.print, print, __ATOMIC_RELEASE);
}

/* A line under construction; flushed to the print function in pieces if it grows long. */
#define HKN_LINE_MAX 256
struct hkn_out {
    unsigned len;
    char text[HKN_LINE_MAX];
};

static HKN_SHARED void hkn_out_flush(struct hkn_out *o)
{
    if (o->len == 0)
        return;
    o->text[o->len] = '\0';
    hkn_emit(o->text);
    o->len = 0;
}

static HKN_SHARED void hkn_out_char(struct hkn_out *o, char c)
{
    if (o->len + 1 >= HKN_LINE_MAX)
        hkn_out_flush(o);
    o->text[o->len++] = c;
}

static HKN_SHARED void hkn_out_str(struct hkn_out *o, const char *s)
{
    if (s == NULL)
        s = "(null)";
    while (*s != '\0')
        hkn_out_char(o, *s++);
}

/* As NITRO-SDK's "%08x": 8 digits, or 16 for a value that does not fit in 32 bits (64-bit
 * addresses, sign-extended arguments). */
static HKN_SHARED void hkn_out_hex(struct hkn_out *o, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    int n = v > UINT32_MAX ? 16 : 8;
    for (int i = n - 1; i >= 0; i--)
        hkn_out_char(o, digits[(v >> (4 * i)) & 0xf]);
}

static HKN_SHARED void hkn_out_dec(struct hkn_out *o, uint64_t v)
{
    char tmp[20];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0)
        hkn_out_char(o, tmp[--n]);
}

static HKN_SHARED void hkn_out_end(struct hkn_out *o)
{
    hkn_out_char(o, '\n');
    hkn_out_flush(o);
}

/* ---------------------------------------------------------------------------------------- */
/* Per-thread state                                                                         */

/* The hooks' own state (where they record, in thread-local storage) is each component's: the
 * code here tells it what to record into through hkn_activate. */
struct hkn_thread {
    /* The buffer the thread records into (also while disabled), and its byte range. */
    struct hkn_header *installed;
    uintptr_t begin, end;
    int busy;   /* in a runtime function that may print: hooks and nested calls do nothing */
    int listed; /* in g_hkn.threads (hosted) */
    uint32_t tid;
    struct hkn_thread *prev, *next;
};

static HKN_THREAD_LOCAL struct hkn_thread t_hkn;

/* Defined by the component: from now on the calling thread's hooks record into the buffer h,
 * or nothing (NULL: no buffer, recording disabled, or inside the runtime). A hook run by a
 * signal handler in the middle of it sees the old state or the new one, never a mix. */
static HKN_FN void hkn_activate(struct hkn_header *h);

static HKN_SHARED void hkn_update_active(struct hkn_thread *t)
{
    struct hkn_header *h = t->installed;
    hkn_activate((h != NULL && h->enabled && !t->busy) ? h : NULL);
}

/* OS_Enable…, OS_Disable…, OS_Restore… of both components: sets the calling thread's buffer's
 * enabled flag and returns the previous one (FALSE when the thread has no buffer). */
static HKN_SHARED BOOL hkn_set_enabled(int enable)
{
    struct hkn_thread *t = &t_hkn;
    struct hkn_header *h = t->installed;
    if (h == NULL)
        return FALSE;
    BOOL previous = h->enabled ? TRUE : FALSE;
    h->enabled = enable ? 1 : 0;
    if (!t->busy)
        hkn_update_active(t);
    return previous;
}

/* Entering a runtime function that may print (or call the print function): hooks run by the
 * print function, and runtime calls it makes, do nothing. Returns 0 if already inside. */
static HKN_SHARED int hkn_enter(struct hkn_thread *t)
{
    if (t->busy)
        return 0;
    t->busy = 1;
    hkn_activate(NULL);
    /* A signal-handler hook between these two still records: fine, the hot path is
     * consistent on its own (docs/nitro.md, "Signals"). */
    return 1;
}

static HKN_SHARED void hkn_leave(struct hkn_thread *t)
{
    t->busy = 0;
    hkn_update_active(t);
}

static HKN_SHARED uint32_t hkn_gettid(void)
{
#if HKN_HOSTED && defined(SYS_gettid)
    return (uint32_t)syscall(SYS_gettid);
#else
    return 0;
#endif
}

/* ---------------------------------------------------------------------------------------- */
/* The threads that own a buffer (hosted): a buffer another thread records into is refused.   */

#if HKN_HOSTED
static struct {
    int lock;  /* atomic: 1 while held; slow paths only */
    int ready; /* under the lock: key created, fork handler registered */
    int key_ok;
    pthread_key_t key;
    struct hkn_thread *threads;
} g_hkn;

static HKN_SHARED void hkn_lock(void)
{
    while (__atomic_exchange_n(&g_hkn.lock, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

static HKN_SHARED void hkn_unlock(void)
{
    __atomic_store_n(&g_hkn.lock, 0, __ATOMIC_RELEASE);
}

static HKN_SHARED void hkn_unlink(struct hkn_thread *t)
{
    if (!t->listed)
        return;
    if (t->prev != NULL)
        t->prev->next = t->next;
    else
        g_hkn.threads = t->next;
    if (t->next != NULL)
        t->next->prev = t->prev;
    t->prev = t->next = NULL;
    t->listed = 0;
}

/* Thread exit: the thread's buffer is free for others. */
static HKN_SHARED void hkn_thread_exit(void *arg)
{
    struct hkn_thread *t = arg;
    if (t != &t_hkn)
        return;
    hkn_activate(NULL);
    hkn_lock();
    t->installed = NULL;
    t->begin = t->end = 0;
    hkn_unlink(t);
    hkn_unlock();
}

static HKN_SHARED void hkn_fork_prepare(void)
{
    hkn_lock();
}

static HKN_SHARED void hkn_fork_parent(void)
{
    hkn_unlock();
}

/* The child has one thread: the others' entries are copies of memory no thread owns. */
static HKN_SHARED void hkn_fork_child(void)
{
    struct hkn_thread *me = &t_hkn;
    g_hkn.threads = NULL;
    if (me->listed) {
        me->prev = me->next = NULL;
        g_hkn.threads = me;
        me->tid = hkn_gettid();
    }
    hkn_unlock();
}
#endif

/* Makes the calling thread the owner of [begin, end) with header h (not yet written), unless
 * another thread records into any of those bytes: then reports it (as `api`) and returns 0.
 * The thread's previous buffer is released either way. */
static HKN_SHARED int hkn_claim(struct hkn_thread *t, struct hkn_header *h, uintptr_t begin,
                            uintptr_t end, const char *api)
{
#if HKN_HOSTED
    uint32_t other_tid = 0;
    int conflict = 0;
    if (t->tid == 0)
        t->tid = hkn_gettid();
    hkn_lock();
    if (!g_hkn.ready) {
        g_hkn.ready = 1;
        g_hkn.key_ok = pthread_key_create(&g_hkn.key, hkn_thread_exit) == 0;
        pthread_atfork(hkn_fork_prepare, hkn_fork_parent, hkn_fork_child);
    }
    if (!t->listed && (!g_hkn.key_ok || pthread_setspecific(g_hkn.key, t) != 0)) {
        /* Without the key the entry could outlive the thread: refuse rather than risk it. */
        t->installed = NULL;
        hkn_unlock();
        struct hkn_out o = {0};
        hkn_out_str(&o, api);
        hkn_out_str(&o, ": cannot register the thread (pthread key); nothing is recorded");
        hkn_out_end(&o);
        return 0;
    }
    if (!t->listed) {
        t->listed = 1;
        t->prev = NULL;
        t->next = g_hkn.threads;
        if (g_hkn.threads != NULL)
            g_hkn.threads->prev = t;
        g_hkn.threads = t;
    }
    for (struct hkn_thread *o = g_hkn.threads; o != NULL; o = o->next) {
        if (o != t && o->installed != NULL && o->begin < end && begin < o->end) {
            conflict = 1;
            other_tid = o->tid;
            break;
        }
    }
    t->installed = conflict ? NULL : h;
    t->begin = conflict ? 0 : begin;
    t->end = conflict ? 0 : end;
    hkn_unlock();
    if (conflict) {
        struct hkn_out o = {0};
        hkn_out_str(&o, api);
        hkn_out_str(&o, ": the buffer at ");
        hkn_out_hex(&o, (uint64_t)begin);
        hkn_out_str(&o, " is in use by thread ");
        hkn_out_dec(&o, other_tid);
        hkn_out_str(&o, "; each thread needs a buffer of its own. Nothing is recorded");
        hkn_out_end(&o);
        return 0;
    }
    return 1;
#else
    (void)api;
    t->installed = h;
    t->begin = begin;
    t->end = end;
    return 1;
#endif
}

static HKN_SHARED void hkn_release(struct hkn_thread *t)
{
#if HKN_HOSTED
    hkn_lock();
#endif
    t->installed = NULL;
    t->begin = t->end = 0;
#if HKN_HOSTED
    hkn_unlock();
#endif
}

/* 1 if some OS thread other than t records into [begin, end). */
static HKN_SHARED int hkn_in_use_elsewhere(struct hkn_thread *t, uintptr_t begin, uintptr_t end)
{
#if HKN_HOSTED
    int used = 0;
    hkn_lock();
    for (struct hkn_thread *o = g_hkn.threads; o != NULL; o = o->next)
        if (o != t && o->installed != NULL && o->begin < end && begin < o->end)
            used = 1;
    hkn_unlock();
    return used;
#else
    (void)t, (void)begin, (void)end;
    return 0;
#endif
}

/* The byte range of a buffer whose header is valid. */
static HKN_SHARED uintptr_t hkn_buffer_end(const struct hkn_header *h)
{
    return (uintptr_t)h + h->header_size + (uintptr_t)h->record_size * h->capacity;
}

/* "API: WHAT" on a line of its own. */
static HKN_SHARED void hkn_report(const char *api, const char *what)
{
    struct hkn_out o = {0};
    hkn_out_str(&o, api);
    hkn_out_str(&o, ": ");
    hkn_out_str(&o, what);
    hkn_out_end(&o);
}

/* OS_SwitchProfilerThread of both components, around what each does with the time: */

/* The calling thread stops recording; returns its buffer (NULL if none), which keeps whether
 * the outgoing thread was inside a dump. */
static HKN_SHARED struct hkn_header *hkn_switch_out(struct hkn_thread *t)
{
    struct hkn_header *out = t->installed;
    hkn_activate(NULL);
    if (out != NULL)
        out->busy = (uint32_t)t->busy; /* the outgoing thread may be inside a dump */
    return out;
}

/* The buffer `incoming` names, claimed for the calling thread, or NULL: none given, not a
 * buffer of `kind` (reported as `not_ours`) or in use by another thread (reported by
 * hkn_claim). Without one the thread records nothing until it is given one. */
static HKN_SHARED struct hkn_header *hkn_switch_in(struct hkn_thread *t, struct hkn_header *out,
                                                   void *incoming, enum hkn_kind kind,
                                                   const char *not_ours)
{
    if (incoming == NULL) {
        hkn_release(t);
        return NULL;
    }
    uint32_t ignored;
    struct hkn_header *in = hkn_align_buffer(incoming, HKN_ALIGN, &ignored);
    if (!hkn_header_valid(in, kind)) {
        hkn_release(t);
        t->busy = 0;
        hkn_report("OS_SwitchProfilerThread", not_ours);
        return NULL;
    }
    if (in != out &&
        !hkn_claim(t, in, (uintptr_t)in, hkn_buffer_end(in), "OS_SwitchProfilerThread"))
        return NULL;
    return in;
}

/* The calling thread records into `in` (switched in) from now on, inside a dump if the thread
 * that switched it out was. */
static HKN_SHARED void hkn_switch_done(struct hkn_thread *t, struct hkn_header *in)
{
    t->busy = in != NULL ? (int)in->busy : 0;
    if (in != NULL)
        in->busy = 0;
    hkn_update_active(t);
}

/* ---------------------------------------------------------------------------------------- */
/* Tasks of an RTOS (<hookcc/freertos.h>)                                                   */

/* What an RTOS's switch hook calls instead of keeping each task's profiler state itself: the
 * runtime keeps it, in a table of HKN_TASKS (task, buffer) pairs per OS thread (one on bare
 * metal), and moves it with OS_SwitchProfilerThread. A task's state is the buffer it
 * initialised (OS_InitCallTrace / OS_InitFunctionCost, called from the task); a task that did
 * not records nothing. Called with the scheduler's interrupts masked, as FreeRTOS's
 * traceTASK_SWITCHED_IN is; never from a hook. */
#ifndef HKN_TASKS
#define HKN_TASKS 16
#endif
HKN_EXPORT void *OS_SwitchProfilerThread(void *incoming);

static HKN_THREAD_LOCAL struct {
    const void *task[HKN_TASKS];
    void *state[HKN_TASKS];
    const void *deleted; /* the running task deleted itself: its state goes with it */
    uint32_t full;       /* switched-out states there was no room for */
} hkn_tasks;

/* Takes `task`'s state out of the table (NULL if it has none). */
static HKN_SHARED void *hkn_task_take(const void *task)
{
    for (int i = 0; i < HKN_TASKS; i++)
        if (hkn_tasks.state[i] != NULL && hkn_tasks.task[i] == task) {
            void *state = hkn_tasks.state[i];
            hkn_tasks.state[i] = NULL;
            return state;
        }
    return NULL;
}

HKN_EXPORT void hookcc_nitro_task_switch(const void *prev, const void *next)
{
    if (prev == next)
        return;
    void *out = OS_SwitchProfilerThread(hkn_task_take(next));
    if (hkn_tasks.deleted != NULL && hkn_tasks.deleted == prev)
        out = NULL;
    hkn_tasks.deleted = NULL;
    if (out == NULL)
        return;
    for (int i = 0; i < HKN_TASKS; i++)
        if (hkn_tasks.state[i] == NULL) {
            hkn_tasks.task[i] = prev;
            hkn_tasks.state[i] = out;
            return;
        }
    if (hkn_tasks.full++ == 0)
        hkn_report("hookcc_nitro_task_switch",
                   "more tasks with a profiler buffer than HKN_TASKS; the others record nothing "
                   "after their first switch");
}

/* A deleted task's buffer stays the program's (to summarize with OS_CalcThreadStatistics), but
 * no longer the task's: a new task at the same address starts without one. */
HKN_EXPORT void hookcc_nitro_task_deleted(const void *task, const void *running)
{
    if (task == running)
        hkn_tasks.deleted = task;
    else
        (void)hkn_task_take(task);
}

/* ---------------------------------------------------------------------------------------- */
/* Ticks                                                                                    */

HKN_EXPORT OSTick OS_GetTick(void)
{
    return hkrt_ticks();
}

HKN_EXPORT u32 OS_GetTickLo(void)
{
    return (u32)hkrt_ticks();
}

#endif /* HOOKCC_RUNTIME_NITRO_COMMON_H */
