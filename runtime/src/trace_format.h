/* The on-disk layout of a hookcc trace file (`.hktrace`).
 *
 * docs/trace-format.md is the contract; this header and hookprof/src/input/format.rs each define
 * every field once, from that page. Change a layout and you change HKT_VERSION here, in the
 * doc and in the reader.
 *
 * Format versions:
 *   1  64-byte header; chunks EXE, MODULE, EVENTS (16-byte records: time_kind, address),
 *      LOST, THREAD, CLOCK. All fields in the writer's native byte order (header byte 8).
 *   2  the same, but an EVENTS record is (time, address_kind): the full 64-bit timestamp,
 *      and the function's address with bit 1 set for an exit. What this runtime writes;
 *      hookprof reads both. Chunk type END (7) was added later without a new version: a
 *      reader that does not know it skips it, as the format says unknown chunks are.
 *   3  resync records (longjmp). Checksums were added later without a new version: header
 *      flag CHECKED, chunk type CHECK (8) after every chunk, and the CLOCK chunk's
 *      header_check; a reader that does not know them skips the chunks and reads the first
 *      24 bytes of CLOCK, as before. Chunk types OVERHEAD (9) and PAUSE
 *      (10) were added the same way.
 *   4  PACKED chunks (11): a thread's records as deltas and table indices, about 3 to 5 bytes
 *      per call pair instead of 32 (trace_pack.h). What this runtime writes; an EVENTS chunk
 *      (16-byte records) may still appear (a thread whose packer could not be mapped).
 *      A new version because a reader that skipped PACKED chunks as unknown would show a
 *      trace without calls.
 *   5  PROFILE chunks (13): HOOKCC_MODE=profile, a thread's calling-context tree
 *      (trace_cct.h) instead of its records. Written only in that mode (a trace is still
 *      version 4), for the same reason as 4: an older reader would show a profile without
 *      calls.
 *   Chunk type SWITCH (15), a thread's context switches (Linux perf), was added to version 4
 *   without a new version: a reader that skips it shows every time as before, only without
 *   the split into on-CPU and off-CPU time. Chunk type SAMPLE (16), a thread's CPU time
 *   sampled (Linux perf), likewise: a reader that skips it shows no sampled times.
 *
 * Every struct below has explicit fixed-width fields, no bitfields and no implicit padding:
 * each field sits at an offset that is a multiple of its size, so the layout is the same on
 * every ABI (i386's 4-byte alignment of uint64_t included); the asserts check it.
 * This header needs only <stdint.h> and <stddef.h>, so the freestanding core can use it.
 */
#ifndef HOOKCC_RUNTIME_TRACE_FORMAT_H
#define HOOKCC_RUNTIME_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define HKT_MAGIC "HKTRACE" /* 8 bytes with its NUL */
#define HKT_MAGIC_SIZE 8
#define HKT_VERSION 4
#define HKT_VERSION_PROFILE 5 /* a file of HOOKCC_MODE=profile */
#define HKT_HEADER_SIZE 64

/* header.endian */
#define HKT_ENDIAN_LITTLE 1
#define HKT_ENDIAN_BIG 2

/* header.flags */
#define HKT_FLAG_COMPLETE UINT64_C(1) /* the runtime finished the file (exit, signal) */
#define HKT_FLAG_CHECKED UINT64_C(2)  /* every chunk is followed by its CHECK chunk, and a
                                       * CLOCK chunk carries the header's checksum */
#define HKT_FLAG_STREAM UINT64_C(8) /* written in order to a pipe or another stream: the
                                     * header is never rewritten; the CLOCK chunk ends the trace */
#define HKT_FLAG_SWITCH_REASONS UINT64_C(4) /* bit 0 of each SWITCH pair's out_ns says the
                                             * thread was preempted (still ready to run); 0:
                                             * it blocked or yielded (docs: "SWITCH") */

/* Byte offsets of the header fields rewritten in place when the file is finished. */
#define HKT_OFF_TICKS_PER_SECOND 16
#define HKT_OFF_FLAGS 32
#define HKT_OFF_RECORDS 48
#define HKT_OFF_LOST 56

/* Chunk types. A reader skips types it does not know. */
#define HKT_CHUNK_EXE 1
#define HKT_CHUNK_MODULE 2
#define HKT_CHUNK_EVENTS 3
#define HKT_CHUNK_LOST 4
#define HKT_CHUNK_THREAD 5
#define HKT_CHUNK_CLOCK 6
#define HKT_CHUNK_END 7 /* the thread ended on its own; optional, readers may skip it */
#define HKT_CHUNK_CHECK 8 /* the checksum of the chunk just before it (flag CHECKED) */
#define HKT_CHUNK_OVERHEAD 9 /* what the hooks cost, measured at start (compensation) */
#define HKT_CHUNK_PAUSE 10   /* a thread's time inside the runtime writing its buffer */
#define HKT_CHUNK_PACKED 11  /* version 4: records of one thread, packed (trace_pack.h) */
#define HKT_CHUNK_RING 12    /* HOOKCC_MODE=ring: a window of a thread's ring starts here */
#define HKT_CHUNK_PROFILE 13 /* version 5, HOOKCC_MODE=profile: a thread's call-path tree */
#define HKT_CHUNK_FOLDED 14  /* version 5, HOOKCC_MIN_DURATION: calls the records leave out */
#define HKT_CHUNK_SWITCH 15  /* a thread's times switched out (Linux perf); optional */
#define HKT_CHUNK_SAMPLE 16  /* where a thread's CPU time went, sampled (Linux perf); optional */
#define HKT_CHUNK_WRITER 17  /* the writer thread's time on and waiting for a CPU; optional */
#define HKT_CHUNK_THROTTLE 18 /* functions throttled: recorded for their first calls, counted after */
#define HKT_CHUNK_COUNTED 20  /* a thread's counted calls of throttled functions, by function */
#define HKT_CHUNK_UNLOAD 19  /* a module dlclose unloaded, and when; optional */

#define HKT_CHUNK_ALIGN 8 /* chunks start on, and payloads are padded to, 8 bytes */

/* Record kind (version 2): bit 1 of hkt_record.address_kind is set in an exit record. The
 * instrumented functions are aligned to 4 bytes, so an address never has it set; bit 0 belongs
 * to the address (Thumb). The compiler passes `fn + HKT_EXIT_BIT` to the exit hook. */
#define HKT_EXIT_BIT UINT64_C(2)

/* Resync (version 3): a record whose address_kind is exactly HKT_RESYNC_ESCAPE (an "exit" of
 * address 0, which no function has) says that the thread's NEXT record, an entry record, names
 * a function whose frame is the top of the stack again: a longjmp came back to it, and the
 * frames above it are gone. __hookcc_resync(fn) writes the two, after each return of setjmp. */
#define HKT_RESYNC_ESCAPE HKT_EXIT_BIT

/* Count mark (version 5): a record whose address_kind is exactly HKT_COUNT_MARK (an "exit" of
 * address 4, which no function has) is not a call: the thread has made HKT_COUNT_MARK_CALLS
 * more calls of throttled functions, counted but not recorded, since its previous mark. A
 * reader takes their cost (the OVERHEAD chunk's count_ticks) out of the time before it, as it
 * takes out the hooks' (docs/trace-format.md, "Count marks"). */
#define HKT_COUNT_MARK (UINT64_C(4) | HKT_EXIT_BIT)
#define HKT_COUNT_MARK_CALLS 64u

struct hkt_header {
    char magic[HKT_MAGIC_SIZE]; /*  0: "HKTRACE\0" */
    uint8_t endian;             /*  8: HKT_ENDIAN_* */
    uint8_t pointer_size;       /*  9: 4 or 8 */
    uint16_t version;           /* 10: HKT_VERSION */
    uint32_t header_size;       /* 12: HKT_HEADER_SIZE */
    uint64_t ticks_per_second;  /* 16: 0 while running */
    uint64_t pid;               /* 24 */
    uint64_t flags;             /* 32: HKT_FLAG_* */
    uint64_t start_realtime_ns; /* 40: ns since the Unix epoch */
    uint64_t records;           /* 48: set when complete */
    uint64_t lost;              /* 56: set when complete */
};

struct hkt_chunk_header {
    uint32_t type;   /* 0: HKT_CHUNK_* */
    uint32_t length; /* 4: payload bytes after this header, a multiple of 8 */
    uint64_t thread; /* 8: Linux TID, 0 for process-wide chunks */
};

/* One EVENTS record (version 2). */
struct hkt_record {
    uint64_t time;         /* 0: timestamp in ticks */
    uint64_t address_kind; /* 8: instrumented function | HKT_EXIT_BIT for an exit,
                            *    zero-extended on 32-bit targets */
};

/* Fixed part of a MODULE payload; the NUL-terminated path follows, padded to 8 bytes. */
struct hkt_module {
    uint64_t bias;  /*  0: run-time address = ELF vaddr + bias */
    uint64_t start; /*  8: lowest PT_LOAD run-time address */
    uint64_t end;   /* 16: one past the highest */
};

/* UNLOAD payload: the module (as in MODULE), then the tick when dlclose had unloaded it, then
 * its path (NUL-terminated, padded to 8). */
struct hkt_unload {
    struct hkt_module module; /*  0 */
    uint64_t tick;            /* 24 */
};

/* CLOCK payload. */
struct hkt_clock {
    uint64_t ticks_per_second; /*  0 */
    uint64_t first_tick;       /*  8: counter when the runtime started */
    uint64_t last_tick;        /* 16: counter when the file was finished */
};

/* CLOCK payload in a CHECKED file: the clock, then the checksum of the 64-byte header as the
 * runtime rewrites it when it finishes the file (which it does right after this chunk). */
struct hkt_clock_checked {
    struct hkt_clock clock;
    uint64_t header_check; /* 24: hkt_checksum of the finished header */
};

/* CHECK payload: hkt_checksum of the chunk just before it, chunk header included. */
struct hkt_check {
    uint64_t sum; /* 0 */
};

/* The checksum of a chunk (its 16-byte header, then its payload) or of the header: the sum,
 * modulo 2^64, of its 64-bit words in the writer's byte order. Every single-bit error, and
 * any error within one word, changes it; it costs one vector add per record where the target
 * has 64-bit vector adds (x86-64 SSE2, AArch64 NEON), which clang's loop vectorizer uses. */
typedef uint64_t hkt_word __attribute__((may_alias, aligned(4)));
static inline __attribute__((no_instrument_function)) uint64_t hkt_checksum(const void *data,
                                                                           size_t bytes)
{
    const hkt_word *w = (const hkt_word *)data;
    uint64_t sum = 0;
    for (size_t i = 0; i < bytes / 8; i++)
        sum += w[i];
    return sum;
}

/* OVERHEAD payload: the hooks' own time, measured by the runtime at start on pairs of real
 * hook calls around an empty body (docs/trace-format.md, "OVERHEAD"). Means of the fastest
 * 90 %, in ticks. */
struct hkt_overhead {
    uint64_t self_ticks;  /*  0: from an entry record's time to its exit record's */
    uint64_t child_ticks; /*  8: from an exit record's time to the next entry record's */
    uint64_t pairs;       /* 16: pairs measured */
    uint64_t count_ticks; /* 24: what count_calls calls of a throttled function cost, in all */
    uint64_t count_calls; /* 32: the calls timed for count_ticks, and the calls a count mark
                             stands for (HKT_COUNT_MARK_CALLS); 0: not measured */
};

/* COUNTED entry (after a u64 count of them): a throttled function's address, as in its
 * records, and its calls this thread counted. */
struct hkt_counted {
    uint64_t address;
    uint64_t calls;
};

/* PAUSE payload: the thread was inside the runtime (writing its full buffer, from a hook)
 * from `from` to `to`, which is just before the time of its next record, the first of its
 * next EVENTS chunk. */
struct hkt_pause {
    uint64_t from; /* 0 */
    uint64_t to;   /* 8 */
};

/* Fixed part of a THREAD payload; the NUL-terminated name follows, padded to 8 bytes. */
struct hkt_thread_name {
    uint64_t sequence; /* 0: 1 = first thread seen */
};

/* END payload: when a thread ended (pthread_exit, or return from its start routine). */
struct hkt_end {
    uint64_t tick; /* 0: the counter when the thread's last chunks were written */
};

/* Fixed part of a PACKED payload (version 4); the stream of stream_bytes bytes follows,
 * zero-padded to 8 (trace_pack.h). */
struct hkt_packed {
    uint32_t records;      /* 0: records the stream holds */
    uint32_t stream_bytes; /* 4: bytes of the stream */
    uint64_t first_time;   /* 8: the clock before the first record (its time, as written) */
};

/* RING payload: written before each window of a thread's ring that a snapshot writes. */
struct hkt_ring {
    uint64_t dropped; /* records the thread made before this window (since the previous one)
                       * that the ring no longer held */
};

/* Fixed part of a PROFILE payload (version 5): a thread's calling-context tree as it was when
 * written, everything since the thread began (a later PROFILE chunk of the same thread
 * replaces it). The stream of stream_bytes bytes follows, zero-padded to 8 (trace_cct.h,
 * docs/trace-format.md "PROFILE"). */
struct hkt_profile {
    uint64_t sequence;     /*  0: the thread's sequence number (its THREAD chunk's) */
    uint64_t first_tick;   /*  8: time of the thread's first record */
    uint64_t last_tick;    /* 16: time of its last record so far */
    uint64_t records;      /* 24: records folded into the tree */
    uint32_t nodes;        /* 32: call paths */
    uint32_t open;         /* 36: frames open when written, outermost first */
    uint32_t unmatched;    /* 40: addresses of exits that matched no frame */
    uint32_t stream_bytes; /* 44 */
};

/* FOLDED payload (version 5, HOOKCC_MIN_DURATION): the thread's calls shorter than the
 * threshold, left out of its records (its PROFILE chunk has every call). */
struct hkt_folded {
    uint64_t min_ticks; /* 0: the threshold in ticks; 0 if the clock was never known */
    uint64_t calls;     /* 8: calls left out */
};

/* THROTTLE payload: the throttle's settings, then `functions` entries (a file may have several
 * THROTTLE chunks; their entries add up). */
struct hkt_throttle {
    uint64_t min_calls;  /*  0: timed calls before a function may be throttled */
    uint64_t factor;     /*  8: throttled when its mean is below factor x pair_ticks */
    uint64_t pair_ticks; /* 16: a hook pair's cost in ticks (the OVERHEAD chunk's two parts) */
    uint64_t functions;  /* 24: entries that follow */
};
struct hkt_throttled {
    uint64_t address; /*  0: the function's address, as in its records */
    uint64_t timed;   /*  8: its calls timed before it was throttled (as the writer saw them) */
    uint64_t counted; /* 16: its calls after, counted and not recorded */
    uint64_t at;      /* 24: the tick it was throttled at */
};

/* Not in a file: the runtime's state as a reader of a core file finds it (`hookprof core`,
 * docs/recording.md), the exported variable `hookcc_trace_state`. It says where the list of
 * threads is and where each thread's fields are, so that the reader needs no copy of the
 * runtime's private structures. Written once at start (`ticks_per_second` when known). */
#define HKT_STATE_MAGIC "HKSTATE" /* 8 bytes with its NUL */
#define HKT_STATE_VERSION 1
struct hkt_state {
    char magic[8];              /*  0: HKT_STATE_MAGIC: 0 until the runtime started */
    uint32_t version;           /*  8 */
    uint32_t ring;              /* 12: HOOKCC_MODE=ring */
    uint64_t threads;           /* 16: address of the pointer to the first thread */
    uint64_t start_ticks;       /* 24: the clock when the runtime started */
    uint64_t ticks_per_second;  /* 32: the clock's rate where the target fixes it, else 0 */
    uint64_t pid;               /* 40 */
    uint64_t start_realtime_ns; /* 48 */
    uint32_t buffer_records;    /* 56: records of a thread's buffer (its ring) */
    uint16_t off_next, off_buf, off_buf_end, off_pos, off_held_pos, off_busy, off_tid,
        off_sequence, off_ring_laps, off_ring_mark, off_life, off_final_written; /* 60.. */
    uint16_t live;               /* 84: the value of `life` of a thread recording */
    uint16_t pad;
};

/* Fixed part of a SWITCH payload: the thread was switched out (off CPU) from each pair's
 * out_ns to its in_ns. Those are CLOCK_MONOTONIC ns (the kernel's perf timestamps); the anchor
 * is one instant read on both clocks when the chunk was written, so a reader maps a time to
 * ticks as anchor_ticks + (ns - anchor_ns) * ticks_per_second / 1e9 (docs/trace-format.md,
 * "SWITCH"). (length - 24) / 16 pairs follow, in time order. */
struct hkt_switch {
    uint64_t anchor_ticks; /*  0: the trace's counter at the anchor */
    uint64_t anchor_ns;    /*  8: CLOCK_MONOTONIC at the same instant */
    uint64_t lost;         /* 16: switch records the kernel dropped (its ring was full) since
                            *     the thread's previous SWITCH chunk */
};

struct hkt_switch_pair {
    uint64_t out_ns; /* 0: switched out */
    uint64_t in_ns;  /* 8: running again */
};

/* Fixed part of a SAMPLE payload: the thread's CPU time sampled every period_ns of it (a
 * perf task-clock event, user mode only), each sample the instant (CLOCK_MONOTONIC ns, mapped
 * to ticks through the anchor as for SWITCH) and the address the thread was at. (length - 32)
 * / 16 samples follow, in time order (docs/trace-format.md, "SAMPLE"). */
struct hkt_sample {
    uint64_t anchor_ticks; /*  0: the trace's counter at the anchor */
    uint64_t anchor_ns;    /*  8: CLOCK_MONOTONIC at the same instant */
    uint64_t period_ns;    /* 16: the thread's CPU time between two samples */
    uint64_t in_hooks;     /* 24: samples in the hooks (their own time, left out of the list)
                            *     since the thread's previous SAMPLE chunk */
};

struct hkt_sample_point {
    uint64_t ns; /* 0: CLOCK_MONOTONIC */
    uint64_t ip; /* 8: the address the thread was at (user mode) */
};

/* WRITER payload: what the runtime's writer thread (which packs and writes the threads' full
 * buffers) got of the CPUs, from the kernel's schedstat of that thread at the end (Linux): the
 * time it ran, the time it was ready to run and waited for a CPU (none free), the times it was
 * given one, and how long it lived. A wait that is a large part of its run says the machine had
 * no core free for it: the traced threads then competed with it for theirs. */
struct hkt_writer {
    uint64_t cpu_ns;  /*  0 */
    uint64_t wait_ns; /*  8: ready to run, waiting for a CPU */
    uint64_t slices;  /* 16: times it got a CPU */
    uint64_t wall_ns; /* 24: from its start to the end of the trace */
};

/* LOST payload. */
struct hkt_lost {
    uint64_t records; /* 0 */
};

_Static_assert(sizeof(struct hkt_header) == HKT_HEADER_SIZE, "hkt_header is 64 bytes");
_Static_assert(offsetof(struct hkt_header, endian) == 8, "hkt_header.endian");
_Static_assert(offsetof(struct hkt_header, pointer_size) == 9, "hkt_header.pointer_size");
_Static_assert(offsetof(struct hkt_header, version) == 10, "hkt_header.version");
_Static_assert(offsetof(struct hkt_header, header_size) == 12, "hkt_header.header_size");
_Static_assert(offsetof(struct hkt_header, ticks_per_second) == HKT_OFF_TICKS_PER_SECOND,
               "hkt_header.ticks_per_second");
_Static_assert(offsetof(struct hkt_header, pid) == 24, "hkt_header.pid");
_Static_assert(offsetof(struct hkt_header, flags) == HKT_OFF_FLAGS, "hkt_header.flags");
_Static_assert(offsetof(struct hkt_header, start_realtime_ns) == 40,
               "hkt_header.start_realtime_ns");
_Static_assert(offsetof(struct hkt_header, records) == HKT_OFF_RECORDS, "hkt_header.records");
_Static_assert(offsetof(struct hkt_header, lost) == HKT_OFF_LOST, "hkt_header.lost");
_Static_assert(sizeof(struct hkt_chunk_header) == 16, "hkt_chunk_header is 16 bytes");
_Static_assert(offsetof(struct hkt_chunk_header, thread) == 8, "hkt_chunk_header.thread");
_Static_assert(sizeof(struct hkt_record) == 16, "hkt_record is 16 bytes");
_Static_assert(sizeof(struct hkt_module) == 24, "hkt_module is 24 bytes");
_Static_assert(sizeof(struct hkt_unload) == 32, "hkt_unload is 32 bytes");
_Static_assert(sizeof(struct hkt_clock) == 24, "hkt_clock is 24 bytes");
_Static_assert(sizeof(struct hkt_thread_name) == 8, "hkt_thread_name is 8 bytes");
_Static_assert(sizeof(struct hkt_lost) == 8, "hkt_lost is 8 bytes");
_Static_assert(sizeof(struct hkt_packed) == 16, "hkt_packed is 16 bytes");
_Static_assert(sizeof(struct hkt_ring) == 8, "hkt_ring is 8 bytes");
_Static_assert(sizeof(struct hkt_profile) == 48, "hkt_profile is 48 bytes");
_Static_assert(sizeof(struct hkt_folded) == 16, "hkt_folded is 16 bytes");
_Static_assert(sizeof(struct hkt_throttle) == 32, "hkt_throttle is 32 bytes");
_Static_assert(sizeof(struct hkt_throttled) == 32, "hkt_throttled is 32 bytes");
_Static_assert(sizeof(struct hkt_state) == 88, "hkt_state is 88 bytes");
_Static_assert(offsetof(struct hkt_state, off_next) == 60, "hkt_state.off_next");
_Static_assert(offsetof(struct hkt_profile, nodes) == 32, "hkt_profile.nodes");
_Static_assert(offsetof(struct hkt_packed, first_time) == 8, "hkt_packed.first_time");
_Static_assert(sizeof(struct hkt_end) == 8, "hkt_end is 8 bytes");
_Static_assert(sizeof(struct hkt_switch) == 24, "hkt_switch is 24 bytes");
_Static_assert(sizeof(struct hkt_switch_pair) == 16, "hkt_switch_pair is 16 bytes");
_Static_assert(sizeof(struct hkt_sample) == 32, "hkt_sample is 32 bytes");
_Static_assert(sizeof(struct hkt_sample_point) == 16, "hkt_sample_point is 16 bytes");
_Static_assert(sizeof(struct hkt_writer) == 32, "hkt_writer is 32 bytes");
_Static_assert(sizeof(struct hkt_check) == 8, "hkt_check is 8 bytes");
_Static_assert(sizeof(struct hkt_overhead) == 40, "hkt_overhead is 40 bytes");
_Static_assert(sizeof(struct hkt_pause) == 16, "hkt_pause is 16 bytes");
_Static_assert(sizeof(struct hkt_clock_checked) == 32, "hkt_clock_checked is 32 bytes");

#endif /* HOOKCC_RUNTIME_TRACE_FORMAT_H */
