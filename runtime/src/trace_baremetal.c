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
_Static_assert(sizeof(struct hktb_prefix) == HOOKCC_TRACE_PREFIX_BYTES,
               "<hookcc/trace_baremetal.h>: HOOKCC_TRACE_PREFIX_BYTES");

#ifndef HOOKCC_TRACE_DEFAULT_RECORDS
#define HOOKCC_TRACE_DEFAULT_RECORDS 1024
#endif
__attribute__((weak, aligned(8), visibility("default"))) uint64_t
    hookcc_trace_buffer[HOOKCC_TRACE_PREFIX_BYTES / 8 + 2 * HOOKCC_TRACE_DEFAULT_RECORDS];
__attribute__((weak, visibility("default"))) const uint32_t hookcc_trace_capacity =
    HOOKCC_TRACE_DEFAULT_RECORDS;
/* 1: the buffer is a ring (HOOKCC_TRACE_RING_BUFFER). */
__attribute__((weak, visibility("default"))) const uint32_t hookcc_trace_ring = 0;

/* Records reserved since start (kept or not). */
static uint32_t hktb_count;
/* A ring's slot s is record (s - hktb_base) mod capacity: hookcc_trace_finish() rotates the
 * records to put the oldest first, and moves the base with them. */
static uint32_t hktb_base;

static inline HKTB_FN struct hkt_record *hktb_records(void)
{
    return (struct hkt_record *)((char *)hookcc_trace_buffer + HOOKCC_TRACE_PREFIX_BYTES);
}

static inline __attribute__((always_inline)) HKTB_FN void hktb_put(uintptr_t address_kind)
{
    uint64_t time = hkrt_ticks();
    uint32_t slot = __atomic_fetch_add(&hktb_count, 1u, __ATOMIC_RELAXED);
    /* volatile: the capacity linked in, never the runtime's own default folded in */
    uint32_t capacity = *(const volatile uint32_t *)&hookcc_trace_capacity;
    if (*(const volatile uint32_t *)&hookcc_trace_ring)
        slot = (slot - hktb_base) & (capacity - 1);
    if (__builtin_expect(slot < capacity, 1)) {
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
    if (*(const volatile uint32_t *)&hookcc_trace_ring) {
        uint32_t mask = capacity - 1;
        struct hkt_record *r = hktb_records();
        r[(slot - hktb_base) & mask].time = time;
        r[(slot - hktb_base) & mask].address_kind = HKT_RESYNC_ESCAPE;
        r[(slot + 1 - hktb_base) & mask].time = time;
        r[(slot + 1 - hktb_base) & mask].address_kind = (uint64_t)(uintptr_t)fn;
        return;
    }
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

/* Reverses records [from, to). */
static HKTB_FN void hktb_reverse(struct hkt_record *r, uint32_t from, uint32_t to)
{
    while (from + 1 < to) {
        struct hkt_record x = r[from];
        r[from++] = r[--to];
        r[to] = x;
    }
}

static HKTB_FN void hktb_chunk(struct hkt_chunk_header *c, uint32_t type, uint32_t length,
                               uint64_t thread)
{
    c->type = type;
    c->length = length;
    c->thread = thread;
}

HKTB_EXPORT const void *hookcc_trace_finish(size_t *size)
{
    struct hktb_prefix *p = (struct hktb_prefix *)hookcc_trace_buffer;
    uint32_t capacity = *(const volatile uint32_t *)&hookcc_trace_capacity;
    uint32_t count = __atomic_load_n(&hktb_count, __ATOMIC_ACQUIRE);
    uint32_t kept = count < capacity ? count : capacity;
    int ring = *(const volatile uint32_t *)&hookcc_trace_ring != 0;
    if (ring && count > capacity) {
        /* The oldest record is at the next slot: rotate it to the front (three reversals,
         * no memory needed), and move the base so that later records land after it. */
        uint32_t first = (count - hktb_base) & (capacity - 1);
        if (first != 0) {
            struct hkt_record *r = hktb_records();
            hktb_reverse(r, 0, first);
            hktb_reverse(r, first, capacity);
            hktb_reverse(r, 0, capacity);
            hktb_base += first;
        }
    }
    uint64_t now = hkrt_ticks();
    uint64_t tps = hkrt_ticks_per_second_fixed();

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
    p->header.records = kept;
    p->header.lost = ring ? 0 : count - kept;

    /* The firmware is the whole address space, linked where it runs. */
    hktb_chunk(&p->module_chunk, HKT_CHUNK_MODULE, sizeof p->module + sizeof p->module_path, 0);
    p->module.bias = 0;
    p->module.start = 0;
    p->module.end = (uint64_t)UINTPTR_MAX;
    for (unsigned i = 0; i < sizeof p->module_path; i++)
        p->module_path[i] = 0;
    hktb_chunk(&p->clock_chunk, HKT_CHUNK_CLOCK, sizeof p->clock, 0);
    p->clock.ticks_per_second = tps;
    p->clock.first_tick = kept > 0 ? hktb_records()[0].time : now;
    p->clock.last_tick = now;
    /* A ring's records written over are not lost: a RING chunk (the same 8 bytes) says how
     * many came before the window. */
    hktb_chunk(&p->lost_chunk, ring ? HKT_CHUNK_RING : HKT_CHUNK_LOST, sizeof p->lost, 1);
    p->lost.records = count - kept;
    /* One thread: the firmware (interrupt handlers' calls nest inside it). */
    hktb_chunk(&p->events_chunk, HKT_CHUNK_EVENTS, kept * (uint32_t)sizeof(struct hkt_record), 1);

    if (size != NULL)
        *size = HOOKCC_TRACE_PREFIX_BYTES + (size_t)kept * sizeof(struct hkt_record);
    return hookcc_trace_buffer;
}
