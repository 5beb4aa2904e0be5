/* hookcc's native trace on bare metal: `hookcc --trace` for a freestanding target links this
 * instead of trace.c (which needs an OS for threads and files). API and buffer:
 * <hookcc/trace_baremetal.h>; the flow: docs/baremetal.md; the file format it produces:
 * docs/trace-format.md (version 2).
 *
 * The buffer is a trace file under construction: room for the header and chunk headers, then
 * EVENTS records. The hooks only append records:
 * - the timestamp (hkrt_ticks(): the board's counter, hkrt_ticks_extern()), then one atomic
 *   fetch-add on the record count reserves a slot (an interrupt handler's hooks take other
 *   slots: no record is torn, none shared), then two stores. No lock, no malloc, no libc, errno
 *   untouched, never instrumented. No recursion guard is needed: nothing a hook calls has
 *   hooks (the board's counter must not have them either), and a guard would drop an
 *   interrupt's records while the main line is inside a hook.
 * - a full buffer: the record is not kept; the count goes on, and the difference is the LOST
 *   chunk of the finished file.
 * hookcc_trace_finish() writes the header and chunk headers in front of the records.
 *
 * Tasks (an RTOS's, <hookcc/freertos.h>): a switch takes one slot like a record, marked
 * HKTB_SWITCH with the task in its time field, so the hooks stay as they are and the switch
 * costs what a hook costs. hookcc_trace_finish() turns each such slot into the header of an
 * EVENTS chunk of the task's thread (the slot is 16 bytes, as a chunk header is), covering the
 * records up to the next switch, and writes a THREAD chunk per task after the last record.
 * The reader then sees what a hosted runtime writes for threads: each task's chunks in its
 * order, its own call stack.
 */
#include <stddef.h>
#include <stdint.h>

#include "hookcc/trace_baremetal.h"
#include "baremetal_atomic.h"
#include "clock.h"
#include "trace_format.h"

#define HKTB_FN HKRT_NOINSTR
#define HKTB_EXPORT __attribute__((visibility("default"))) HKRT_NOINSTR

/* The layout in front of the records. */
struct hktb_prefix {
    struct hkt_header header;
    struct hkt_chunk_header module_chunk;
    struct hkt_module module;
    char module_path[8]; /* "": the executable, which the reader is given with --exe */
    struct hkt_chunk_header clock_chunk;
    struct hkt_clock clock;
    struct hkt_chunk_header lost_chunk;
    struct hkt_lost lost;
    struct hkt_chunk_header events_chunk;
};
_Static_assert(HOOKCC_TRACE_TASKS + 2 <= 32, "hktb_threads_used: one bit a thread");
_Static_assert(sizeof(struct hkt_chunk_header) == sizeof(struct hkt_record),
               "a task switch's slot becomes a chunk header");
_Static_assert(sizeof(struct hktb_prefix) == HOOKCC_TRACE_PREFIX_BYTES,
               "<hookcc/trace_baremetal.h>: HOOKCC_TRACE_PREFIX_BYTES");

#ifndef HOOKCC_TRACE_DEFAULT_RECORDS
#define HOOKCC_TRACE_DEFAULT_RECORDS 1024
#endif
__attribute__((weak, aligned(8), visibility("default"))) uint64_t
    hookcc_trace_buffer[HOOKCC_TRACE_PREFIX_BYTES / 8 + 2 * HOOKCC_TRACE_DEFAULT_RECORDS +
                        HOOKCC_TRACE_SUFFIX_BYTES / 8];
__attribute__((weak, visibility("default"))) const uint32_t hookcc_trace_capacity =
    HOOKCC_TRACE_DEFAULT_RECORDS;

/* Records reserved since start (kept or not). */
static uint32_t hktb_count;

/* A task switch's slot until hookcc_trace_finish converts it: no function's address with
 * HKT_EXIT_BIT is all ones in 64 bits. */
#define HKTB_SWITCH UINT64_MAX

/* The tasks created, in order: task i is thread i + 2 (thread 1 is the firmware before the
 * first switch; thread HOOKCC_TRACE_TASKS + 2 the tasks the table has no room for). */
static struct {
    const void *task;
    char name[HOOKCC_TRACE_TASK_NAME_BYTES];
} hktb_tasks[HOOKCC_TRACE_TASKS];
static uint32_t hktb_task_count;

/* What hookcc_trace_finish has converted so far (it may run again, and continues from there):
 * the slots before hktb_scanned, and the chunk header whose records end the scan (NULL: the
 * prefix's EVENTS chunk) with the slot its records start at. */
static uint32_t hktb_scanned;
static struct hkt_chunk_header *hktb_open_chunk;
static uint32_t hktb_open_start;
static uint32_t hktb_switches;
static uint32_t hktb_first_switch;
static uint32_t hktb_first_record = UINT32_MAX; /* the first slot that is not a switch */
static uint32_t hktb_threads_used;              /* bit i: thread i + 1 has a chunk */

static inline HKTB_FN struct hkt_record *hktb_records(void)
{
    return (struct hkt_record *)((char *)hookcc_trace_buffer + HOOKCC_TRACE_PREFIX_BYTES);
}

static inline __attribute__((always_inline)) HKTB_FN void hktb_put(uintptr_t address_kind)
{
    uint64_t time = hkrt_ticks();
    uint32_t slot = __atomic_fetch_add(&hktb_count, 1u, __ATOMIC_RELAXED);
    /* volatile: the capacity linked in, never the runtime's own default folded in */
    if (__builtin_expect(slot < *(const volatile uint32_t *)&hookcc_trace_capacity, 1)) {
        struct hkt_record *r = &hktb_records()[slot];
        r->time = time;
        r->address_kind = (uint64_t)address_kind;
    }
}

HKTB_EXPORT void __hookcc_enter(void *fn)
{
    hktb_put((uintptr_t)fn);
}

/* fn_exit is the function's address + HKT_EXIT_BIT (the compiler adds it). */
HKTB_EXPORT void __hookcc_exit(void *fn_exit)
{
    hktb_put((uintptr_t)fn_exit);
}

/* After each return of setjmp: a resync pair (trace_format.h), its two slots taken at once so
 * that an interrupt's records never come between them. */
HKTB_EXPORT void __hookcc_resync(void *fn)
{
    uint64_t time = hkrt_ticks();
    uint32_t slot = __atomic_fetch_add(&hktb_count, 2u, __ATOMIC_RELAXED);
    uint32_t capacity = *(const volatile uint32_t *)&hookcc_trace_capacity;
    if (slot < capacity) {
        /* With one slot left, the escape alone: a reader ignores an escape nothing follows,
         * and the slot must hold a record (the kept count includes it). */
        struct hkt_record *r = &hktb_records()[slot];
        r[0].time = time;
        r[0].address_kind = HKT_RESYNC_ESCAPE;
        if (capacity - slot >= 2) {
            r[1].time = time;
            r[1].address_kind = (uint64_t)(uintptr_t)fn;
        }
    }
}

HKTB_EXPORT void hookcc_trace_task_created(const void *task, const char *name)
{
    uint32_t index = __atomic_fetch_add(&hktb_task_count, 1u, __ATOMIC_RELAXED);
    if (index >= HOOKCC_TRACE_TASKS)
        return;
    hktb_tasks[index].task = task;
    unsigned i = 0;
    if (name != NULL)
        for (; i + 1 < HOOKCC_TRACE_TASK_NAME_BYTES && name[i] != 0; i++)
            hktb_tasks[index].name[i] = name[i];
    hktb_tasks[index].name[i] = 0;
}

HKTB_EXPORT void hookcc_trace_task_switched_in(const void *task)
{
    uint32_t slot = __atomic_fetch_add(&hktb_count, 1u, __ATOMIC_RELAXED);
    if (slot < *(const volatile uint32_t *)&hookcc_trace_capacity) {
        struct hkt_record *r = &hktb_records()[slot];
        r->time = (uint64_t)(uintptr_t)task;
        r->address_kind = HKTB_SWITCH;
    }
}

/* The thread of a task: its place in the table + 2, or the shared thread past the table. */
static HKTB_FN uint64_t hktb_task_thread(const void *task)
{
    uint32_t n = hktb_task_count < HOOKCC_TRACE_TASKS ? hktb_task_count : HOOKCC_TRACE_TASKS;
    for (uint32_t i = 0; i < n; i++)
        if (hktb_tasks[i].task == task)
            return i + 2;
    return HOOKCC_TRACE_TASKS + 2;
}

static HKTB_FN void hktb_chunk(struct hkt_chunk_header *c, uint32_t type, uint32_t length,
                               uint64_t thread)
{
    c->type = type;
    c->length = length;
    c->thread = thread;
}

/* A THREAD chunk at `out`: its size. */
static HKTB_FN size_t hktb_thread_chunk(char *out, uint64_t thread, const char *name)
{
    struct hkt_chunk_header *c = (struct hkt_chunk_header *)out;
    uint64_t *sequence = (uint64_t *)(c + 1);
    char *text = (char *)(sequence + 1);
    unsigned n = 0;
    while (n + 1 < HOOKCC_TRACE_TASK_NAME_BYTES && name[n] != 0) {
        text[n] = name[n];
        n++;
    }
    unsigned padded = (n + 1 + 7) & ~7u;
    while (n < padded)
        text[n++] = 0;
    hktb_chunk(c, HKT_CHUNK_THREAD, 8 + padded, thread);
    *sequence = thread;
    return sizeof *c + 8 + padded;
}

/* The THREAD chunks of the threads that have records, at `out` (the suffix's room): their size. */
static HKTB_FN size_t hktb_thread_chunks(char *out)
{
    size_t bytes = 0;
    uint32_t tasks = hktb_task_count < HOOKCC_TRACE_TASKS ? hktb_task_count : HOOKCC_TRACE_TASKS;
    for (uint32_t thread = 1; thread <= HOOKCC_TRACE_TASKS + 2; thread++) {
        if (!(hktb_threads_used & (1u << (thread - 1))))
            continue;
        const char *name = thread == 1                ? "main"
                           : thread - 2 < tasks       ? hktb_tasks[thread - 2].name
                                                      : "other tasks";
        bytes += hktb_thread_chunk(out + bytes, thread, name);
    }
    return bytes;
}

HKTB_EXPORT const void *hookcc_trace_finish(size_t *size)
{
    struct hktb_prefix *p = (struct hktb_prefix *)hookcc_trace_buffer;
    uint32_t capacity = *(const volatile uint32_t *)&hookcc_trace_capacity;
    uint32_t count = __atomic_load_n(&hktb_count, __ATOMIC_ACQUIRE);
    uint32_t kept = count < capacity ? count : capacity;
    uint64_t now = hkrt_ticks();
    uint64_t tps = hkrt_ticks_per_second_fixed();
    struct hkt_record *records = hktb_records();
    const uint32_t record_bytes = (uint32_t)sizeof(struct hkt_record);

    /* Task switches into chunk headers, from where the previous call stopped: each switch
     * closes the chunk before it and opens its task's. */
    for (uint32_t i = hktb_scanned; i < kept; i++) {
        if (records[i].address_kind != HKTB_SWITCH) {
            if (hktb_first_record == UINT32_MAX)
                hktb_first_record = i;
            continue;
        }
        uint64_t thread = hktb_task_thread((const void *)(uintptr_t)records[i].time);
        if (hktb_open_chunk != NULL)
            hktb_open_chunk->length = (i - hktb_open_start) * record_bytes;
        else
            hktb_first_switch = i;
        hktb_open_chunk = (struct hkt_chunk_header *)&records[i];
        hktb_chunk(hktb_open_chunk, HKT_CHUNK_EVENTS, 0, thread);
        hktb_open_start = i + 1;
        hktb_switches++;
        hktb_threads_used |= 1u << (thread - 1);
    }
    hktb_scanned = kept;
    if (hktb_open_chunk != NULL)
        hktb_open_chunk->length = (kept - hktb_open_start) * record_bytes;

    for (int i = 0; i < HKT_MAGIC_SIZE; i++)
        p->header.magic[i] = HKT_MAGIC[i];
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    p->header.endian = HKT_ENDIAN_BIG;
#else
    p->header.endian = HKT_ENDIAN_LITTLE;
#endif
    p->header.pointer_size = (uint8_t)sizeof(void *);
    p->header.version = HKT_VERSION;
    p->header.header_size = HKT_HEADER_SIZE;
    p->header.ticks_per_second = tps;
    p->header.pid = 0;
    p->header.flags = HKT_FLAG_COMPLETE;
    p->header.start_realtime_ns = 0; /* no calendar clock on the target */
    p->header.records = kept - hktb_switches;
    p->header.lost = count - kept;

    /* The firmware is the whole address space, linked where it runs. */
    hktb_chunk(&p->module_chunk, HKT_CHUNK_MODULE, sizeof p->module + sizeof p->module_path, 0);
    p->module.bias = 0;
    p->module.start = 0;
    p->module.end = (uint64_t)UINTPTR_MAX;
    for (unsigned i = 0; i < sizeof p->module_path; i++)
        p->module_path[i] = 0;
    hktb_chunk(&p->clock_chunk, HKT_CHUNK_CLOCK, sizeof p->clock, 0);
    p->clock.ticks_per_second = tps;
    p->clock.first_tick = hktb_first_record < kept ? records[hktb_first_record].time : now;
    p->clock.last_tick = now;
    hktb_chunk(&p->lost_chunk, HKT_CHUNK_LOST, sizeof p->lost, 1);
    p->lost.records = count - kept;
    /* Thread 1: the firmware until the first task switch (all of it without tasks); interrupt
     * handlers' calls nest inside the thread they interrupted. */
    uint32_t first_end = hktb_open_chunk != NULL ? hktb_first_switch : kept;
    hktb_chunk(&p->events_chunk, HKT_CHUNK_EVENTS, first_end * record_bytes, 1);
    if (first_end > 0 || hktb_open_chunk == NULL)
        hktb_threads_used |= 1u;

    size_t bytes = HOOKCC_TRACE_PREFIX_BYTES + (size_t)kept * record_bytes;
    if (hktb_open_chunk != NULL)
        bytes += hktb_thread_chunks((char *)hookcc_trace_buffer + bytes);
    if (size != NULL)
        *size = bytes;
    return hookcc_trace_buffer;
}
