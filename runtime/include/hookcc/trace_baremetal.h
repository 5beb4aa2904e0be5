/* hookcc trace runtime on bare metal: the trace in a RAM buffer, taken out whole.
 *
 * `hookcc --trace` for a bare-metal target (docs/baremetal.md) links runtime/src/
 * trace_baremetal.c instead of the hosted runtime: every entry and exit is a 16-byte EVENTS
 * record (docs/trace-format.md, version 2) in one RAM buffer that already has room for the
 * file's header and chunk headers in front. hookcc_trace_finish() completes them, and the
 * buffer from its start is then a trace file: write it out (semihosting fwrite, a UART) or
 * dump it with a debugger, and read it with `hookprof report FILE --exe FIRMWARE.elf`.
 */
#ifndef HOOKCC_TRACE_BAREMETAL_H
#define HOOKCC_TRACE_BAREMETAL_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define HOOKCC_TRACE_API __attribute__((visibility("default")))
#define HOOKCC_TRACE_NOHOOKS __attribute__((no_instrument_function))
#else
#define HOOKCC_TRACE_API
#define HOOKCC_TRACE_NOHOOKS
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The bytes before the first record: the file header (64), the MODULE chunk of the firmware
 * (16 + 32: all of the address space, no bias, the executable), the CLOCK chunk (16 + 24), the
 * LOST chunk (16 + 8) and the EVENTS chunk's header (16); 12 records' worth. */
#define HOOKCC_TRACE_PREFIX_BYTES 192

/* The tasks of an RTOS (hookcc_trace_task_created, below) the trace names: the first
 * HOOKCC_TRACE_TASKS created, each a thread of its own; the tasks after them share one more
 * thread, unnamed. */
#define HOOKCC_TRACE_TASKS 16
/* Names are kept up to 15 bytes (FreeRTOS's configMAX_TASK_NAME_LEN is 16 with its NUL). */
#define HOOKCC_TRACE_TASK_NAME_BYTES 16

/* The bytes after the last record: the THREAD chunks (16 + 8 + 16) of the firmware before the
 * scheduler ran and of each task, written there by hookcc_trace_finish. */
#define HOOKCC_TRACE_SUFFIX_BYTES ((HOOKCC_TRACE_TASKS + 2) * 40)

/* The buffer, 8-byte aligned, and its capacity in records. The runtime has a weak 1024-record
 * default (16 KiB); HOOKCC_TRACE_BUFFER(n) in one file of the program replaces it, and may be
 * preceded by a section attribute to place it (external RAM). */
HOOKCC_TRACE_API extern uint64_t hookcc_trace_buffer[];
HOOKCC_TRACE_API extern const uint32_t hookcc_trace_capacity;

#define HOOKCC_TRACE_BUFFER(n)                                                                 \
    uint64_t hookcc_trace_buffer[HOOKCC_TRACE_PREFIX_BYTES / 8 + 2 * (n) +                     \
                                 HOOKCC_TRACE_SUFFIX_BYTES / 8] __attribute__((aligned(8)));   \
    const uint32_t hookcc_trace_capacity = (n)

/* A flight recorder (docs/recording.md): the buffer as a ring of n records (a power of two),
 * which starts over when full instead of stopping; hookcc_trace_finish() then gives the last n
 * records, oldest first, after a RING chunk that counts the ones written over. It moves the
 * records into that order: let no interrupt record meanwhile (the end of the program, or a
 * debugger calling it with the target halted). */
HOOKCC_TRACE_API extern const uint32_t hookcc_trace_ring;

/* A call-path profile (HOOKCC_MODE=profile's, docs/recording.md): exact counts and times per
 * call path in memory that does not grow. The buffer holds `records` records; the hook that
 * finds it full folds them into a tree of at most `paths` call paths (a power of two; 64 bytes
 * each, plus 4 for its hash), the records interrupts make meanwhile counted lost, and the fold's
 * time taken out of the later times. hookcc_trace_finish() folds the rest and puts the tree in
 * the buffer as a PROFILE chunk (format version 5): the buffer must hold it, about 90 bytes a
 * path and 30 an open frame (the assert below). Frames deeper than 256 are counted lost. */
HOOKCC_TRACE_API extern const uint32_t hookcc_trace_profile_paths;
HOOKCC_TRACE_API extern uint64_t hookcc_trace_profile_memory[];
#define HOOKCC_TRACE_PROFILE_WORDS(paths) ((paths)*8 + (paths) / 2 + 256 * 4 + 16 * 2 + 256 * 3)

/* The duration threshold (HOOKCC_MIN_DURATION's, docs/recording.md), with a profile's memory:
 * when set (in the board's counter ticks, by the program or a debugger), every call still goes
 * into the tree, and the records keep the calls at least this long, in time order, for a
 * timeline: the file has both. 0: a profile alone. */
HOOKCC_TRACE_API extern volatile uint64_t hookcc_trace_min_ticks;

/* Triggers (docs/recording.md): with a start function in the table, only the records from an
 * entry of one to its return (or, with stop functions, to the return of the first of them
 * called after it) are kept; the buffer is cut to them each time it fills and at the end. The
 * program or a debugger writes the table (gdb: `set var hookcc_trace_triggers.start[0] =
 * (unsigned long long)&parse`, then `set var hookcc_trace_triggers.n_start = 1`). */
#define HOOKCC_TRACE_MAX_TRIGGERS 32
struct hookcc_trace_triggers {
    unsigned int n_start;
    unsigned int n_stop;
    unsigned long long start[HOOKCC_TRACE_MAX_TRIGGERS];
    unsigned long long stop[HOOKCC_TRACE_MAX_TRIGGERS];
};
HOOKCC_TRACE_API extern struct hookcc_trace_triggers hookcc_trace_triggers;
#define HOOKCC_TRACE_PROFILE_BUFFER(records, paths)                                            \
    _Static_assert((paths) > 0 && ((paths) & ((paths)-1)) == 0, "a power of two paths");     \
    _Static_assert((records)*16 >= (paths)*90 + 256 * 30 + 16 * 20 + 64,                       \
                   "a buffer that holds the tree at the end");                                 \
    HOOKCC_TRACE_BUFFER(records);                                                              \
    uint64_t hookcc_trace_profile_memory[HOOKCC_TRACE_PROFILE_WORDS(paths)];                   \
    const uint32_t hookcc_trace_profile_paths = (paths)
#define HOOKCC_TRACE_RING_BUFFER(n)                                                            \
    _Static_assert((n) > 0 && ((n) & ((n)-1)) == 0, "a ring of a power of two records");       \
    HOOKCC_TRACE_BUFFER(n);                                                                    \
    const uint32_t hookcc_trace_ring = 1

/* Streaming while the firmware runs (docs/baremetal.md, "Streaming"): the hooks encode each
 * event into a few bytes (docs/trace-format.md, "The stream") and append them to the up-buffer
 * 0 of a SEGGER RTT control block, `_SEGGER_RTT`, that a host drains while the firmware runs:
 * `hookprof record --gdb HOST:PORT --exe firmware.elf` through any GDB server, or the RTT
 * servers of OpenOCD, J-Link, probe-rs and pyOCD with `hookprof record --tcp HOST:PORT`. When
 * the host falls behind, records are dropped and counted, and a LOST record says where.
 * HOOKCC_TRACE_STREAM_BUFFER(bytes) in one file of the program defines the control block, its
 * ring of `bytes` bytes, and a trace buffer of no records (the RAM buffer is not used). */
struct hookcc_rtt_up {
    const char *sName;
    char *pBuffer;
    unsigned SizeOfBuffer;
    unsigned WrOff; /* written by the target only */
    unsigned RdOff; /* written by the host only */
    unsigned Flags; /* 0: SEGGER_RTT_MODE_NO_BLOCK_SKIP (a record that does not fit is dropped) */
};
struct hookcc_rtt_control_block {
    char acID[16]; /* "SEGGER RTT", which the probes' RTT servers search RAM for: written by
                    * the runtime at the first record, after the rest is in place */
    int MaxNumUpBuffers;
    int MaxNumDownBuffers;
    struct hookcc_rtt_up up[1];
    struct hookcc_rtt_up down[1]; /* unused; the layout has one */
};
HOOKCC_TRACE_API extern struct hookcc_rtt_control_block _SEGGER_RTT;
/* The control block the hooks stream into: set by HOOKCC_TRACE_STREAM_BUFFER; none (NULL), the
 * runtime's weak default, without it. */
HOOKCC_TRACE_API extern struct hookcc_rtt_control_block *const hookcc_trace_stream;
/* Records made (function entries and exits, task switches and creations) and dropped. */
HOOKCC_TRACE_API extern volatile uint32_t hookcc_trace_stream_records;
HOOKCC_TRACE_API extern volatile uint32_t hookcc_trace_stream_lost;

#define HOOKCC_TRACE_STREAM_BUFFER(bytes)                                                      \
    _Static_assert((bytes) >= 128, "a stream ring of 128 bytes at least");                     \
    static char hookcc_trace_stream_ring_[bytes] __attribute__((aligned(8)));                 \
    struct hookcc_rtt_control_block _SEGGER_RTT __attribute__((aligned(8))) = {               \
        "", 1, 1, {{"hookcc", hookcc_trace_stream_ring_, (bytes), 0, 0, 0}},                  \
        {{"hookcc", 0, 0, 0, 0, 0}}};                                                          \
    struct hookcc_rtt_control_block *const hookcc_trace_stream = &_SEGGER_RTT;                 \
    HOOKCC_TRACE_BUFFER(0)

/* The packed RAM buffer (docs/baremetal.md, "The packed RAM buffer"): the stream's encoder (2
 * to 3 bytes a record, the records the stream carries) writing into a RAM buffer of `bytes`
 * bytes that no host drains while the firmware runs. When it is full, later records are
 * dropped and counted (stop when full); hookcc_trace_packed_finish() then writes the LOST and
 * END records into the HOOKCC_TRACE_PACKED_RESERVE bytes kept for them at the end and returns
 * the bytes to take out: write them out (semihosting fwrite, a UART) or dump them with a
 * debugger, and decode them with `hookprof record --serial DUMP --exe firmware.elf -o
 * TRACE.hktrace`. The layout is the stream's (an RTT control block `_SEGGER_RTT`), so a probe's
 * RTT server may drain it while it runs too. */
#define HOOKCC_TRACE_PACKED_RESERVE 96
HOOKCC_TRACE_API extern const uint32_t hookcc_trace_packed_bytes;
#define HOOKCC_TRACE_PACKED_BUFFER(bytes)                                                      \
    _Static_assert((bytes) >= 256, "a packed buffer of 256 bytes at least");                   \
    static char hookcc_trace_stream_ring_[bytes] __attribute__((aligned(8)));                 \
    struct hookcc_rtt_control_block _SEGGER_RTT __attribute__((aligned(8))) = {               \
        "", 1, 1,                                                                              \
        {{"hookcc", hookcc_trace_stream_ring_, (bytes)-HOOKCC_TRACE_PACKED_RESERVE, 0, 0, 0}},  \
        {{"hookcc", 0, 0, 0, 0, 0}}};                                                          \
    struct hookcc_rtt_control_block *const hookcc_trace_stream = &_SEGGER_RTT;                 \
    const uint32_t hookcc_trace_packed_bytes = (bytes);                                        \
    HOOKCC_TRACE_BUFFER(0)

/* The packed RAM buffer as a flight recorder: two halves of bytes / 2, the records going into
 * one until the next does not fit, then into the other over what it held; it keeps between
 * bytes / 2 - HOOKCC_TRACE_PACKED_RESERVE and bytes - 2 * HOOKCC_TRACE_PACKED_RESERVE bytes of
 * the newest records. hookcc_trace_packed_finish() puts the older half first and writes in it how
 * many records were written over (the stream's RING record), and stops the recording: let no
 * interrupt record meanwhile (the end of the program, or a debugger calling it with the target
 * halted). */
HOOKCC_TRACE_API extern const uint32_t hookcc_trace_packed_ring;
#define HOOKCC_TRACE_PACKED_RING_BUFFER(bytes)                                                 \
    _Static_assert((bytes) >= 512 && (bytes) % 16 == 0,                                        \
                   "a flight recorder of 512 bytes at least, a multiple of 16");               \
    static char hookcc_trace_stream_ring_[bytes] __attribute__((aligned(8)));                 \
    struct hookcc_rtt_control_block _SEGGER_RTT __attribute__((aligned(8))) = {               \
        "", 1, 1,                                                                              \
        {{"hookcc", hookcc_trace_stream_ring_, (bytes) / 2 - HOOKCC_TRACE_PACKED_RESERVE, 0, 0, \
          0}},                                                                                 \
        {{"hookcc", 0, 0, 0, 0, 0}}};                                                          \
    struct hookcc_rtt_control_block *const hookcc_trace_stream = &_SEGGER_RTT;                 \
    const uint32_t hookcc_trace_packed_bytes = (bytes);                                        \
    const uint32_t hookcc_trace_packed_ring = 1;                                               \
    HOOKCC_TRACE_BUFFER(0)

/* Ends the packed RAM buffer: the LOST record (if records were dropped) and the END record
 * (records made, records dropped) after the last record, then its start and size: [start,
 * start + size) is what `hookprof record --serial` decodes. Records made afterwards are not
 * in it. NULL and 0 without HOOKCC_TRACE_PACKED_BUFFER. */
HOOKCC_TRACE_API const void *hookcc_trace_packed_finish(size_t *size);

/* Ends the stream: an END record (the counts above), then waits up to `max_ticks` of the
 * board's counter for the host to read everything. Returns 0 once the host has read it all,
 * -1 on timeout. Call it before the firmware stops (examples/baremetal/stream_out.c does, at
 * exit). */
HOOKCC_TRACE_API int hookcc_trace_stream_end(uint64_t max_ticks);

/* For a firmware that sends the stream itself (a UART in its idle task): copies up to `n`
 * bytes from the ring to `out` and frees them, as a host reader would. Returns the bytes
 * copied. Call it from one place only (it is the reader's side). */
HOOKCC_TRACE_API size_t hookcc_trace_stream_read(void *out, size_t n);

/* Completes the file in front of the records made so far and returns its start (the buffer)
 * and size. Records made afterwards are not in it; calling it again includes them. Hooks that
 * found the buffer full are counted in the file's LOST chunk. */
HOOKCC_TRACE_API const void *hookcc_trace_finish(size_t *size);

/* Tasks: each task of an RTOS gets its own call stack, a thread of its own in the file
 * (docs/baremetal.md, "FreeRTOS"; <hookcc/freertos.h> maps FreeRTOS's trace macros to these;
 * a hand-written scheduler calls them itself).
 * - hookcc_trace_task_created(task, name): a task was created; `task` is anything that names
 *   it uniquely while it lives (its control block), `name` is copied (15 bytes at most). Its
 *   thread's number is the order of creation + 1 (1: the firmware before any task ran).
 * - hookcc_trace_task_switched_in(task): from here on the records are `task`'s, until the next
 *   switch. Call it where the scheduler has chosen the task, with interrupts that have hooks
 *   masked, and in a function without hooks (the function that switches: its entry would be
 *   the old task's, its exit the new one's).
 * The switch takes one record's slot, which hookcc_trace_finish turns into the header of the
 * task's next EVENTS chunk. */
HOOKCC_TRACE_API void hookcc_trace_task_created(const void *task, const char *name);
HOOKCC_TRACE_API void hookcc_trace_task_switched_in(const void *task);

#ifdef __cplusplus
}
#endif

#endif /* HOOKCC_TRACE_BAREMETAL_H */
