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
 * order, its own call stack. Tasks are kept apart in the plain buffer only: a ring, a profile,
 * a threshold or triggers (below) take the task switches as they come (all tasks one thread).
 *
 * The recording modes (docs/recording.md, "On bare metal"): HOOKCC_TRACE_RING_BUFFER makes the
 * buffer a ring; HOOKCC_TRACE_PROFILE_BUFFER folds it into a call-path tree each time it fills
 * (the hook that finds it full does), and with hookcc_trace_min_ticks keeps the long calls'
 * records beside the tree; hookcc_trace_triggers keeps the calls inside the windows.
 */
#include <stddef.h>
#include <stdint.h>

#include "hookcc/trace_baremetal.h"
#include "baremetal_atomic.h"
#include "clock.h"
#include "trace_format.h"
#include "trace_cct.h"
#include "trace_stream.h"

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
/* 1: the buffer is a ring (HOOKCC_TRACE_RING_BUFFER). */
__attribute__((weak, visibility("default"))) const uint32_t hookcc_trace_ring = 0;
/* A ring's slot s is record (s - hktb_base) mod capacity: hookcc_trace_finish() rotates the
 * records to put the oldest first, and moves the base with them. */
static uint32_t hktb_base;

static inline HKTB_FN struct hkt_record *hktb_records(void);

/* HOOKCC_TRACE_PROFILE_BUFFER: call paths (0: no profile), the tree's memory, the tree. */
__attribute__((weak, visibility("default"))) const uint32_t hookcc_trace_profile_paths = 0;
__attribute__((weak, visibility("default"))) uint64_t hookcc_trace_profile_memory[1];
static struct hkt_cct hktb_tree;
static struct hkt_keep hktb_keep;
static uint32_t hktb_tree_ready;
static uint32_t hktb_profile_lost; /* records reserved while a full buffer was processed */
#define HKTB_PROFILE_DEPTH 256

/* Triggers and the duration threshold (<hookcc/trace_baremetal.h>), set by the program or a
 * debugger. Records [0, hktb_done) are processed already: cut to the windows, and under a
 * threshold folded into the tree with the short calls taken out. */
__attribute__((visibility("default"))) struct hookcc_trace_triggers hookcc_trace_triggers;
__attribute__((visibility("default"))) volatile uint64_t hookcc_trace_min_ticks;
static struct hkt_window hktb_window;
static uint32_t hktb_done;

/* The tree's memory never grows: all of it is given at once. */
static HKTB_FN void *hktb_no_growth(void *old, size_t old_bytes, size_t new_bytes)
{
    (void)old;
    (void)old_bytes;
    (void)new_bytes;
    return NULL;
}

static HKTB_FN void hktb_tree_init(uint32_t paths)
{
    char *m = (char *)hookcc_trace_profile_memory;
    hkt_cct_init(&hktb_tree, hktb_no_growth, paths);
    hktb_tree.nodes = (struct hkt_cct_node *)(void *)m;
    hktb_tree.cap_nodes = paths;
    m += (size_t)paths * sizeof(struct hkt_cct_node);
    hktb_tree.buckets = (uint32_t *)(void *)m; /* zero: .bss */
    hktb_tree.n_buckets = paths;
    m += (size_t)paths * sizeof(uint32_t);
    hktb_tree.stack = (struct hkt_cct_frame *)(void *)m;
    hktb_tree.cap_depth = HKTB_PROFILE_DEPTH;
    m += HKTB_PROFILE_DEPTH * sizeof(struct hkt_cct_frame);
    m += 16 * sizeof(struct hkt_cct_unmatched);
    hktb_tree.unmatched = (struct hkt_cct_unmatched *)(void *)(m - 16 * sizeof(struct hkt_cct_unmatched));
    hktb_tree.cap_unmatched = 16;
    hkt_keep_init(&hktb_keep, hktb_no_growth, 0);
    hktb_keep.stack = (struct hkt_keep_frame *)(void *)m;
    hktb_keep.cap = HKTB_PROFILE_DEPTH;
    hktb_tree_ready = 1;
}

/* Records are processed (cut, folded, filtered) when the buffer fills and at the end: with
 * triggers, or a profile's memory. */
static HKTB_FN int hktb_processing(uint32_t paths)
{
    return paths != 0 || __atomic_load_n(&hookcc_trace_triggers.n_start, __ATOMIC_ACQUIRE) != 0;
}

/* Processes records [from, to) in place: the triggers' windows kept, then with a profile's
 * memory every one folded into the tree and, under a threshold, the calls at least that long
 * kept (without one: none). Returns the end of the records kept. */
static HKTB_FN uint32_t hktb_process(uint32_t from, uint32_t to, uint32_t paths)
{
    struct hkt_record *r = hktb_records() + from;
    size_t n = to - from;
    struct hookcc_trace_triggers *trig = &hookcc_trace_triggers;
    uint32_t starts = __atomic_load_n(&trig->n_start, __ATOMIC_ACQUIRE);
    if (starts != 0 && n != 0) {
        uint32_t stops = __atomic_load_n(&trig->n_stop, __ATOMIC_ACQUIRE);
        hktb_window.start = (const uint64_t *)trig->start;
        hktb_window.n_start = starts < HOOKCC_TRACE_MAX_TRIGGERS ? starts : HOOKCC_TRACE_MAX_TRIGGERS;
        hktb_window.stop = (const uint64_t *)trig->stop;
        hktb_window.n_stop = stops < HOOKCC_TRACE_MAX_TRIGGERS ? stops : HOOKCC_TRACE_MAX_TRIGGERS;
        hktb_window.records = 1; /* the hooks are passed the functions' records */
        n = hkt_window_filter(&hktb_window, r, n);
    }
    if (paths != 0 && n != 0) {
        if (!hktb_tree_ready)
            hktb_tree_init(paths);
        hkt_cct_fold(&hktb_tree, r, n);
        hktb_keep.min_ticks = hookcc_trace_min_ticks;
        n = hktb_keep.min_ticks != 0 ? hkt_keep_filter(&hktb_keep, r, n) : 0;
    }
    return from + (uint32_t)n;
}

/* The hook that took slot `capacity` (the first past the end) processes the full buffer and
 * its own record, and lets the next records follow the ones kept; the records reserved
 * meanwhile (an interrupt's) are counted lost. Others past the end return. A buffer full of
 * records kept stays full: later records are lost. */
static __attribute__((noinline)) HKTB_FN void hktb_full(uint64_t time, uintptr_t word,
                                                        uint32_t slot, uint32_t capacity,
                                                        uint32_t paths)
{
    if (slot != capacity || !hktb_processing(paths))
        return;
    uint64_t from = hkrt_ticks();
    uint32_t done = hktb_process(hktb_done, capacity, paths);
    if (done < capacity) {
        struct hkt_record *own = &hktb_records()[done];
        own->time = time;
        own->address_kind = (uint64_t)word;
        done = hktb_process(done, done + 1, paths);
    }
    hktb_done = done;
    if (hktb_tree_ready)
        hktb_tree.shift += hkrt_ticks() - from; /* the processing is the runtime's time */
    uint32_t next = done < capacity ? done : capacity + 1;
    uint32_t during = __atomic_exchange_n(&hktb_count, next, __ATOMIC_ACQ_REL) - capacity - 1;
    __atomic_fetch_add(&hktb_profile_lost, during, __ATOMIC_RELAXED);
}


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

/* The slots a finish keeps for its THREAD chunks, right after the records it took (issue 37:
 * a task that ended the run with exit() while interrupts were on had the tick's records and
 * switches land there while the file was finished and written out: task names gone, chunks
 * unreadable). hookcc_trace_finish takes them from the hooks with one compare-and-swap on the
 * record count, so that later hooks go past them (and past the file). A later finish finds them
 * among its records: each becomes an empty EVENTS chunk header of the thread that was running
 * (HKTB_GAP), the last one opening the chunk of the records after it. */
#define HKTB_GAP_SLOTS ((uint32_t)(HOOKCC_TRACE_SUFFIX_BYTES / sizeof(struct hkt_record)))
_Static_assert(HOOKCC_TRACE_SUFFIX_BYTES % sizeof(struct hkt_record) == 0, "whole slots");
static uint32_t hktb_gap = UINT32_MAX; /* the last finish's kept slots start here */
static uint32_t hktb_gap_slots;        /* slots of gaps below the capacity, taken as headers */
static uint32_t hktb_gap_beyond;       /* slots of gaps at or past the capacity */

static inline HKTB_FN struct hkt_record *hktb_records(void)
{
    return (struct hkt_record *)((char *)hookcc_trace_buffer + HOOKCC_TRACE_PREFIX_BYTES);
}

/* The RTT control block the hooks stream into (HOOKCC_TRACE_STREAM_BUFFER, trace_stream.h), or
 * none: a weak definition, not a weak reference to _SEGGER_RTT, so that the runtime needs no
 * symbol a firmware may not have. */
__attribute__((weak, visibility("default"))) struct hookcc_rtt_control_block
    *const hookcc_trace_stream = 0;

static inline __attribute__((always_inline)) HKTB_FN struct hookcc_rtt_control_block *
hktb_stream(void)
{
    /* volatile: the definition linked in, never the runtime's own default folded in */
    return *(struct hookcc_rtt_control_block *const volatile *)&hookcc_trace_stream;
}

/* A 16-byte record in a ring (HOOKCC_TRACE_RING_BUFFER), or past the buffer's end (lost, or
 * the full buffer processed): out of line, so that the plain buffer's path holds only what it
 * needs. */
static __attribute__((noinline)) HKTB_FN void hktb_put_ram_rare(uint64_t time,
                                                                uintptr_t address_kind,
                                                                uint32_t slot)
{
    /* volatile: the capacity linked in, never the runtime's own default folded in */
    uint32_t capacity = *(const volatile uint32_t *)&hookcc_trace_capacity;
    if (*(const volatile uint32_t *)&hookcc_trace_ring) {
        struct hkt_record *r = &hktb_records()[(slot - hktb_base) & (capacity - 1)];
        r->time = time;
        r->address_kind = (uint64_t)address_kind;
        return;
    }
    hktb_full(time, address_kind, slot, capacity,
              *(const volatile uint32_t *)&hookcc_trace_profile_paths);
}

/* The 16-byte buffer's record, out of line: a hook that streams (or packs) then tail-calls
 * hkts_entry or hkts_exit without first saving the registers this path needs. The plain buffer
 * first: a slot before the end (bench/stream.py, Cortex-M3: 3 instructions a record fewer than
 * with the ring's test and its base on the way). */
static __attribute__((noinline)) HKTB_FN void hktb_put_ram(uintptr_t address_kind)
{
    uint64_t time = hkrt_ticks();
    uint32_t slot = __atomic_fetch_add(&hktb_count, 1u, __ATOMIC_RELAXED);
    if (__builtin_expect(slot < *(const volatile uint32_t *)&hookcc_trace_capacity &&
                             *(const volatile uint32_t *)&hookcc_trace_ring == 0,
                         1)) {
        struct hkt_record *r = &hktb_records()[slot];
        r->time = time;
        r->address_kind = (uint64_t)address_kind;
        return;
    }
    hktb_put_ram_rare(time, address_kind, slot);
}

/* The hooks: __builtin_expect makes clang test with one cbz and two tail calls, where without
 * it a conditional tail call takes cmp, it and beq (Cortex-M3: 2 instructions a record fewer
 * streaming, 1 for the 16-byte buffer). */
HKTB_EXPORT void __hookcc_enter(void *fn)
{
    struct hookcc_rtt_control_block *stream = hktb_stream();
    if (__builtin_expect(stream != NULL, 1)) {
        hkts_entry((uintptr_t)fn, stream);
        return;
    }
    hktb_put_ram((uintptr_t)fn);
}

/* fn_exit is the function's address + HKT_EXIT_BIT (the compiler adds it). */
HKTB_EXPORT void __hookcc_exit(void *fn_exit)
{
    struct hookcc_rtt_control_block *stream = hktb_stream();
    if (__builtin_expect(stream != NULL, 1)) {
        hkts_exit((uintptr_t)fn_exit, stream);
        return;
    }
    hktb_put_ram((uintptr_t)fn_exit);
}

/* After each return of setjmp: a resync pair (trace_format.h), its two slots taken at once so
 * that an interrupt's records never come between them. */
HKTB_EXPORT void __hookcc_resync(void *fn)
{
    struct hookcc_rtt_control_block *stream = hktb_stream();
    if (stream != NULL) {
        hkts_other(stream, HKTS_S_ESCAPE, NULL, NULL, 0, 0);
        hkts_entry((uintptr_t)fn, stream);
        return;
    }
    if (hktb_processing(*(const volatile uint32_t *)&hookcc_trace_profile_paths)) {
        /* A buffer processed when full: two records, each where it lands. */
        hktb_put_ram(HKT_RESYNC_ESCAPE);
        hktb_put_ram((uintptr_t)fn);
        return;
    }
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

HKTB_EXPORT void hookcc_trace_task_created(const void *task, const char *name)
{
    struct hookcc_rtt_control_block *stream = hktb_stream();
    if (stream != NULL) {
        hkts_other(stream, HKTS_S_CREATED, task, name, 0, 0);
        if (!hkts_is_ring())
            return; /* a flight recorder keeps the table too: its finish names the tasks */
    }
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
    struct hookcc_rtt_control_block *stream = hktb_stream();
    if (stream != NULL) {
        hkts_other(stream, HKTS_S_SWITCH, task, NULL, 0, 0);
        return;
    }
    if (*(const volatile uint32_t *)&hookcc_trace_ring ||
        hktb_processing(*(const volatile uint32_t *)&hookcc_trace_profile_paths))
        return; /* tasks are kept apart in the plain buffer only */
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

/* Slot i of the records (a task switch, or a slot of a finish's gap) becomes the header of an
 * EVENTS chunk of `thread`; the chunk open before it ends there. */
static HKTB_FN void hktb_open_events(struct hkt_record *records, uint32_t i, uint64_t thread)
{
    if (hktb_open_chunk != NULL)
        hktb_open_chunk->length = (i - hktb_open_start) * (uint32_t)sizeof(struct hkt_record);
    else
        hktb_first_switch = i;
    hktb_open_chunk = (struct hkt_chunk_header *)&records[i];
    hktb_chunk(hktb_open_chunk, HKT_CHUNK_EVENTS, 0, thread);
    hktb_open_start = i + 1;
    hktb_threads_used |= 1u << (thread - 1);
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

/* Reverses records [from, to). */
static HKTB_FN void hktb_reverse(struct hkt_record *r, uint32_t from, uint32_t to)
{
    while (from + 1 < to) {
        struct hkt_record x = r[from];
        r[from++] = r[--to];
        r[to] = x;
    }
}

/* The file's header and chunks in front of the records (records, lost and the last chunk's
 * header are the caller's). `lost_type`: LOST, or RING for a ring (the same 8 bytes: how many
 * records came before the window). */
static HKTB_FN void hktb_prefix(struct hktb_prefix *p, uint64_t tps, uint64_t first,
                                uint64_t last, uint32_t lost_type, uint64_t lost)
{
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

    /* The firmware is the whole address space, linked where it runs. */
    hktb_chunk(&p->module_chunk, HKT_CHUNK_MODULE, sizeof p->module + sizeof p->module_path, 0);
    p->module.bias = 0;
    p->module.start = 0;
    p->module.end = (uint64_t)UINTPTR_MAX;
    for (unsigned i = 0; i < sizeof p->module_path; i++)
        p->module_path[i] = 0;
    hktb_chunk(&p->clock_chunk, HKT_CHUNK_CLOCK, sizeof p->clock, 0);
    p->clock.ticks_per_second = tps;
    p->clock.first_tick = first;
    p->clock.last_tick = last;
    hktb_chunk(&p->lost_chunk, lost_type, sizeof p->lost, 1);
    p->lost.records = lost;
}

/* hookcc_trace_finish() of a processed buffer (hktb_processing): the records since the last
 * processing processed too; the records kept (a threshold's long calls, a trigger's windows)
 * as the EVENTS chunk; then, with a profile's memory, the tree as a PROFILE chunk (version 5)
 * and the calls left out as a FOLDED chunk, after the records kept. Later records follow the
 * ones kept (a profile's: the buffer starts over). */
static HKTB_FN const void *hktb_finish_processed(size_t *size, uint32_t count, uint32_t capacity,
                                                 uint32_t paths)
{
    struct hktb_prefix *p = (struct hktb_prefix *)hookcc_trace_buffer;
    uint32_t n = count < capacity ? count : capacity;
    uint32_t done = n > hktb_done ? hktb_process(hktb_done, n, paths) : hktb_done;
    hktb_done = done;
    uint32_t after = __atomic_exchange_n(&hktb_count, done, __ATOMIC_ACQ_REL);
    uint64_t lost = __atomic_exchange_n(&hktb_profile_lost, 0u, __ATOMIC_RELAXED) +
                    (after > n ? after - n : 0) + hktb_tree.lost;
    hktb_tree.lost = 0;
    uint64_t now = hkrt_ticks();
    struct hkt_record *records = hktb_records();
    uint64_t first = hktb_tree.started ? hktb_tree.first_tick : done > 0 ? records[0].time : now;
    hktb_prefix(p, hkrt_ticks_per_second_fixed(), first, now, HKT_CHUNK_LOST, lost);
    p->header.records = done;
    p->header.lost = lost;
    hktb_chunk(&p->events_chunk, HKT_CHUNK_EVENTS, done * (uint32_t)sizeof(struct hkt_record), 1);
    size_t bytes = HOOKCC_TRACE_PREFIX_BYTES + (size_t)done * sizeof(struct hkt_record);
    if (paths != 0 && hktb_tree_ready) {
        /* The tree after the records kept, if it fits: a chunk header, its fixed part, its
         * stream; then FOLDED. */
        p->header.version = HKT_VERSION_PROFILE;
        if (hookcc_trace_min_ticks == 0)
            p->header.records = hktb_tree.records; /* a profile: the records folded */
        uint8_t *out = (uint8_t *)(records + done);
        size_t room = (size_t)(capacity - done) * sizeof(struct hkt_record);
        struct hkt_profile fixed = {0};
        size_t head = sizeof(struct hkt_chunk_header) + sizeof fixed;
        size_t tail = 2 * sizeof(struct hkt_chunk_header) + sizeof(struct hkt_folded);
        if (head + hkt_cct_bound(&hktb_tree) + tail <= room) {
            size_t stream = hkt_cct_encode(&hktb_tree, 1, &fixed, out + head);
            hktb_chunk((struct hkt_chunk_header *)(void *)out, HKT_CHUNK_PROFILE,
                       (uint32_t)(sizeof fixed + stream), 1);
            uint8_t *f = (uint8_t *)&fixed;
            for (size_t i = 0; i < sizeof fixed; i++)
                out[sizeof(struct hkt_chunk_header) + i] = f[i];
            out += head + stream;
            if (hookcc_trace_min_ticks != 0) {
                hktb_chunk((struct hkt_chunk_header *)(void *)out, HKT_CHUNK_FOLDED,
                           sizeof(struct hkt_folded), 1);
                struct hkt_folded *folded =
                    (struct hkt_folded *)(void *)(out + sizeof(struct hkt_chunk_header));
                folded->min_ticks = hookcc_trace_min_ticks;
                folded->calls = hktb_keep.folded;
                out += sizeof(struct hkt_chunk_header) + sizeof(struct hkt_folded);
            }
            bytes = (size_t)(out - (uint8_t *)hookcc_trace_buffer);
        }
    }
    if (size != NULL)
        *size = bytes;
    return hookcc_trace_buffer;
}

HKTB_EXPORT const void *hookcc_trace_finish(size_t *size)
{
    struct hktb_prefix *p = (struct hktb_prefix *)hookcc_trace_buffer;
    uint32_t capacity = *(const volatile uint32_t *)&hookcc_trace_capacity;
    uint32_t count = __atomic_load_n(&hktb_count, __ATOMIC_ACQUIRE);
    uint32_t kept = count < capacity ? count : capacity;
    int ring = *(const volatile uint32_t *)&hookcc_trace_ring != 0;
    uint32_t paths = *(const volatile uint32_t *)&hookcc_trace_profile_paths;
    if (!ring && hktb_processing(paths))
        return hktb_finish_processed(size, count, capacity, paths);
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
    /* The previous finish's gap, and its slots past the capacity (not in this count's lost). */
    uint32_t gap = hktb_gap, beyond = hktb_gap_beyond;
    if (!ring) {
        /* The slots for the THREAD chunks, taken from the hooks (see HKTB_GAP_SLOTS): the
         * records are those before them. Not needed once the buffer is full (the hooks write
         * no slot past it), nor in a ring (whose finish wants no interrupt anyway). */
        while (count < capacity &&
               !__atomic_compare_exchange_n(&hktb_count, &count, count + HKTB_GAP_SLOTS, 1,
                                            __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            ;
        kept = count < capacity ? count : capacity;
        if (count < capacity) {
            hktb_gap = count;
            if (count + HKTB_GAP_SLOTS > capacity)
                hktb_gap_beyond += count + HKTB_GAP_SLOTS - capacity;
        }
    }
    uint64_t now = hkrt_ticks();
    struct hkt_record *records = hktb_records();
    const uint32_t record_bytes = (uint32_t)sizeof(struct hkt_record);

    /* Task switches into chunk headers, from where the previous call stopped: each switch
     * closes the chunk before it and opens its task's. The previous finish's gap, if the
     * records go on after it, into empty EVENTS chunks of the thread that was running. */
    uint32_t gap_end = gap == UINT32_MAX ? 0 : gap + HKTB_GAP_SLOTS;
    for (uint32_t i = hktb_scanned; i < kept; i++) {
        if (gap <= i && i < gap_end) {
            hktb_open_events(records, i, hktb_open_chunk != NULL ? hktb_open_chunk->thread : 1);
            hktb_gap_slots++;
            continue;
        }
        if (records[i].address_kind != HKTB_SWITCH) {
            if (hktb_first_record == UINT32_MAX)
                hktb_first_record = i;
            continue;
        }
        hktb_open_events(records, i, hktb_task_thread((const void *)(uintptr_t)records[i].time));
        hktb_switches++;
    }
    hktb_scanned = kept;
    if (hktb_open_chunk != NULL)
        hktb_open_chunk->length = (kept - hktb_open_start) * record_bytes;

    /* A ring's records written over are not lost: a RING chunk (the same 8 bytes) says how
     * many came before the window. */
    uint32_t lost = count - kept - beyond;
    hktb_prefix(p, hkrt_ticks_per_second_fixed(),
                hktb_first_record < kept ? records[hktb_first_record].time : now, now,
                ring ? HKT_CHUNK_RING : HKT_CHUNK_LOST, ring ? count - kept : lost);
    p->header.records = kept - hktb_switches - hktb_gap_slots;
    p->header.lost = ring ? 0 : lost;
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

HKTB_EXPORT int hookcc_trace_stream_end(uint64_t max_ticks)
{
    struct hookcc_rtt_control_block *stream = hktb_stream();
    if (stream == NULL)
        return 0;
    struct hookcc_rtt_up *up = &stream->up[0];
    uint64_t start = hkrt_ticks();
    int ended = 0;
    for (;;) {
        uint32_t wr = __atomic_load_n(&up->WrOff, __ATOMIC_ACQUIRE);
        if (!ended) {
            hkts_other(stream, HKTS_S_END, NULL, NULL, hkts.records, hkts.lost);
            ended = __atomic_load_n(&up->WrOff, __ATOMIC_ACQUIRE) != wr;
        } else if (*(const volatile uint32_t *)&up->RdOff == wr) {
            return 0;
        }
        if (hkrt_ticks() - start >= max_ticks)
            return -1;
    }
}

/* HOOKCC_TRACE_PACKED_BUFFER's size with its reserve; none (0), the runtime's weak default,
 * without it. */
__attribute__((weak, visibility("default"))) const uint32_t hookcc_trace_packed_bytes = 0;

/* Bytes [0, n) of `b` reversed. */
static HKTB_FN void hktb_reverse_bytes(char *b, uint32_t n)
{
    for (uint32_t i = 0, j = n; i + 1 < j; i++, j--) {
        char t = b[i];
        b[i] = b[j - 1];
        b[j - 1] = t;
    }
}

/* A flight recorder's two halves made one stream, the older half first, its RING record
 * telling the records written over before it; no half is begun after it. Returns the stream's
 * bytes; *start its start. Interrupts masked. */
static HKTB_FN uint32_t hktb_packed_ring_finish(struct hookcc_rtt_up *up, uint32_t half,
                                                char **start)
{
    uint32_t c = hkts_ring.current;
    char *base = up->pBuffer - (c ? half : 0);
    uint32_t len_new = up->WrOff, total = len_new;
    if (hkts_ring.flips != 0) {
        uint32_t old = c ^ 1u, len_old = hkts_ring.length[old];
        uint32_t v = hkts_ring.overwritten;
        char *at = base + (old ? half : 0) + hkts_ring.ring_at[old];
        for (int i = 0; i < 5; i++, v >>= 7)
            at[i] = (char)((v & 0x7f) | (i < 4 ? 0x80 : 0));
        if (c == 1) { /* [old][new] with a gap: close it */
            for (uint32_t i = 0; i < len_new; i++)
                base[len_old + i] = base[half + i];
        } else { /* [new][old] with a gap: close it, then rotate the older half to the front */
            for (uint32_t i = 0; i < len_old; i++)
                base[len_new + i] = base[half + i];
            hktb_reverse_bytes(base, len_new);
            hktb_reverse_bytes(base + len_new, len_old);
            hktb_reverse_bytes(base, len_new + len_old);
        }
        total = len_old + len_new;
    }
    hkts_ring.finished = 1;
    up->pBuffer = base;
    __atomic_store_n(&up->WrOff, total, __ATOMIC_RELEASE);
    *start = base;
    return total;
}

HKTB_EXPORT const void *hookcc_trace_packed_finish(size_t *size)
{
    struct hookcc_rtt_control_block *stream = hktb_stream();
    /* volatile: the size linked in, never the runtime's own default folded in */
    uint32_t bytes = *(const volatile uint32_t *)&hookcc_trace_packed_bytes;
    if (stream == NULL || bytes == 0) {
        if (size != NULL)
            *size = 0;
        return NULL;
    }
    struct hookcc_rtt_up *up = &stream->up[0];
    if (hkts_is_ring() && hkts_ring.finished) {
        if (size != NULL)
            *size = up->WrOff;
        return up->pBuffer;
    }
    /* The reserve is the records' no more: the LOST and END records go there. No host has
     * read (RdOff 0), so the ring never wrapped and the records are [0, WrOff) (a flight
     * recorder's: of each half). */
    hkts_irq_t irq = hkts_irq_save();
    if (hkts_is_ring()) {
        /* One stream, older half first, in the whole buffer: the names of the tasks (whose
         * creations may have been written over) and the END record after it. */
        char *start;
        uint32_t n = hktb_packed_ring_finish(up, bytes / 2, &start);
        up->SizeOfBuffer = bytes;
        (void)n;
    } else if (up->SizeOfBuffer < bytes) {
        up->SizeOfBuffer = bytes;
    }
    hkts.limit = 0; /* the ring's geometry changed: the next record takes the slow path */
    hkts_irq_restore(irq);
    if (hkts_is_ring()) {
        uint32_t tasks = hktb_task_count < HOOKCC_TRACE_TASKS ? hktb_task_count : HOOKCC_TRACE_TASKS;
        for (uint32_t i = 0; i < tasks; i++)
            hkts_other(stream, HKTS_S_NAME, hktb_tasks[i].task, hktb_tasks[i].name, 0, 0);
    }
    irq = hkts_irq_save();
    hkts_other(stream, HKTS_S_END, NULL, NULL, hkts.records, hkts.lost);
    if (hkts_is_ring()) {
        up->SizeOfBuffer = 0; /* finished: later records are dropped and counted */
        hkts.limit = 0;
    }
    hkts_irq_restore(irq);
    if (size != NULL)
        *size = __atomic_load_n(&up->WrOff, __ATOMIC_ACQUIRE);
    return up->pBuffer;
}

HKTB_EXPORT size_t hookcc_trace_stream_read(void *out, size_t n)
{
    struct hookcc_rtt_control_block *stream = hktb_stream();
    if (stream == NULL)
        return 0;
    struct hookcc_rtt_up *up = &stream->up[0];
    uint32_t wr = __atomic_load_n(&up->WrOff, __ATOMIC_ACQUIRE);
    uint32_t rd = *(const volatile uint32_t *)&up->RdOff;
    uint32_t size = up->SizeOfBuffer;
    const uint8_t *buf = (const uint8_t *)up->pBuffer;
    uint8_t *o = (uint8_t *)out;
    size_t copied = 0;
    while (rd != wr && copied < n) {
        o[copied++] = buf[rd];
        if (++rd == size)
            rd = 0;
    }
    __atomic_store_n(&up->RdOff, rd, __ATOMIC_RELEASE);
    return copied;
}
