/* The bare-metal trace streamed while the firmware runs (docs/baremetal.md, "Streaming"; the
 * encoding: docs/trace-format.md, "The stream"). Included by trace_baremetal.c: with
 * HOOKCC_TRACE_STREAM_BUFFER in the program, the hooks encode each event into a few bytes and
 * append them to the up-buffer of a SEGGER RTT control block (`_SEGGER_RTT`), which a host
 * drains while the firmware runs: hookprof record --gdb (memory reads through any GDB server),
 * or the RTT servers of OpenOCD, J-Link, probe-rs, pyOCD (hookprof record --tcp).
 *
 * The ring is RTT's: the target only advances WrOff, the host only RdOff; one byte stays free
 * so that WrOff == RdOff means empty. A record that does not fit is dropped and counted; the
 * first record that fits again is preceded by a LOST record (the count, and the time of the
 * first drop), so no loss is silent. Deltas are taken from the last record *written*, so the
 * stream stays decodable across a loss.
 *
 * Concurrency: records are variable-length and must be published in order (WrOff covers only
 * whole records), so a record is encoded and copied with interrupts masked (PRIMASK on
 * ARMv6/7/8-M, IRQ and FIQ in the CPSR on ARM, MIE in mstatus on RISC-V): about as long as the
 * board's counter read already masks them on Cortex-M. Single core only.
 */
#ifndef HOOKCC_RUNTIME_TRACE_STREAM_H
#define HOOKCC_RUNTIME_TRACE_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "hookcc/trace_baremetal.h"
#include "clock.h"
#include "trace_format.h"

#define HKTS_FN HKRT_NOINSTR

/* Record kinds: the low two bits of a record's first varint (delta << 2 | k). */
#define HKTS_EXIT_SAME 0u  /* exit of the last record's address: nothing follows */
#define HKTS_ENTRY 1u      /* entry: zigzag((address - last) / 4) follows */
#define HKTS_EXIT 2u       /* exit: zigzag((address - last) / 4) follows */
#define HKTS_OTHER 3u      /* a varint sub-kind follows */
#define HKTS_S_START 0u    /* version, pointer size, ticks per second, absolute time */
#define HKTS_S_CLOCK 1u    /* absolute time (a delta that does not fit) */
/* LOST: records dropped since the last one written (its time: the first dropped one's),
 * whether task switches were among them, and then the task running now. */
#define HKTS_S_LOST 2u
#define HKTS_S_SWITCH 3u   /* task switched in: its handle */
#define HKTS_S_CREATED 4u  /* task created: handle, name length, name bytes */
#define HKTS_S_ENTRY_RAW 5u /* entry: zigzag(address - last) (not a multiple of 4 apart) */
#define HKTS_S_EXIT_RAW 6u  /* exit: the same */
/* A resync escape (a longjmp landed): the next record, an entry, is its target. */
#define HKTS_S_ESCAPE 7u
#define HKTS_S_END 8u       /* the firmware ended the stream: records made, records lost */
/* The packed RAM buffer's flight recorder: records written over before the records that follow
 * (a 5-byte varint, patched when the buffer is finished). */
#define HKTS_S_RING 9u
/* A task's name, written by a flight recorder's finish (its creation may have been written
 * over): handle, name length, name bytes. Names the task's thread; not a record made. */
#define HKTS_S_NAME 10u
#define HKTS_VERSION 1u
/* A delta from the last record of 2^29 ticks or more is written as a CLOCK record. */
#define HKTS_DELTA_LIMIT (UINT32_C(1) << 29)
/* The most bytes one record with its LOST (and SWITCH) in front takes. */
#define HKTS_RECORD_MAX 128u

struct hkts_state {
    /* hookcc_trace_stream_records and hookcc_trace_stream_lost (<hookcc/trace_baremetal.h>):
     * records made (function entries and exits, task switches and creations) and dropped; the
     * firmware may print them, the END record carries them. */
    volatile uint32_t records;
    volatile uint32_t lost;
    uint64_t last_time;     /* of the last record written */
    uintptr_t last_address; /* of the last entry or exit written */
    /* The hooks' fast path writes while WrOff < limit: room for HKTS_FAST_ROOM bytes before
     * the ring's end and before RdOff as it was when a record was last committed (the host only
     * ever frees more). 0: every record the slow way (not started, a loss pending, a flight
     * recorder's half or a finish to come). */
    uint32_t limit;
    uint64_t lost_since;    /* time of the first record dropped since the last written */
    const void *task_now;   /* the task switched in last (written or not) */
    uint32_t pending_lost;  /* records dropped since the last written */
    uint32_t started;       /* the START record is written */
    uint32_t switch_dropped; /* a task switch is among the pending_lost */
};

/* Not static: a static struct is split into one global a field (LLVM's GlobalOpt), each
 * reached by its own address (two instructions on ARMv7-M); one base serves all fields here. */
__attribute__((visibility("hidden"), used)) struct hkts_state hookcc_trace_stream_state;
#define hkts hookcc_trace_stream_state

/* The two counters' public names are symbols at their fields (an assembler `.set`), so that the
 * hooks count a record from the state's base address: two instructions a record fewer on the
 * Cortex-M3 than a global of its own. */
_Static_assert(offsetof(struct hkts_state, records) == 0 && offsetof(struct hkts_state, lost) == 4,
               "the counters' symbols below");
__asm__(".globl hookcc_trace_stream_records\n\t"
        ".type hookcc_trace_stream_records, STT_OBJECT\n\t"
        ".size hookcc_trace_stream_records, 4\n\t"
        ".set hookcc_trace_stream_records, hookcc_trace_stream_state\n\t"
        ".globl hookcc_trace_stream_lost\n\t"
        ".type hookcc_trace_stream_lost, STT_OBJECT\n\t"
        ".size hookcc_trace_stream_lost, 4\n\t"
        ".set hookcc_trace_stream_lost, hookcc_trace_stream_state + 4\n");

/* The packed RAM buffer as a flight recorder (HOOKCC_TRACE_PACKED_RING_BUFFER): two halves; the
 * records go into one until the next does not fit, then into the other from its start, over
 * what it held, after a START record (absolute time; addresses from 0 again), a RING record
 * (how many records were written over before it: 0 until the buffer is finished) and, if a task
 * runs, its SWITCH. A half keeps the last HOOKCC_TRACE_PACKED_RESERVE bytes for the END record. */
__attribute__((weak, visibility("default"))) const uint32_t hookcc_trace_packed_ring = 0;
struct hkts_ring {
    uint32_t current;     /* the half written now */
    uint32_t flips;       /* halves begun after the first */
    uint32_t length[2];   /* a half's bytes when it was left */
    uint32_t ring_at[2];  /* where the RING record's count is in each half */
    uint32_t first[2];    /* records made before each half's first */
    uint32_t overwritten; /* records of the halves written over */
    uint32_t finished;    /* hookcc_trace_packed_finish ran: no more flips */
};
static struct hkts_ring hkts_ring;

static inline __attribute__((always_inline)) HKTS_FN int hkts_is_ring(void)
{
    /* volatile: the definition linked in, never the runtime's own default folded in */
    return *(const volatile uint32_t *)&hookcc_trace_packed_ring != 0;
}

/* Interrupts masked around a record. */
#if defined(__ARM_ARCH_PROFILE) && __ARM_ARCH_PROFILE == 'M'
typedef uint32_t hkts_irq_t;
static inline __attribute__((always_inline)) HKTS_FN hkts_irq_t hkts_irq_save(void)
{
    uint32_t primask;
    __asm__ __volatile__("mrs %0, primask\n\tcpsid i" : "=r"(primask) : : "memory");
    return primask;
}
static inline __attribute__((always_inline)) HKTS_FN void hkts_irq_restore(hkts_irq_t primask)
{
    __asm__ __volatile__("msr primask, %0" : : "r"(primask) : "memory");
}
#elif defined(__arm__) && defined(__ARM_ARCH_ISA_ARM)
/* ARMv4/5 (the ARM926): MRS/MSR exist only in ARM code, so out of line in ARM state, which
 * Thumb code calls by interworking. */
typedef uint32_t hkts_irq_t;
static __attribute__((noinline, target("arm"))) HKTS_FN hkts_irq_t hkts_irq_save(void)
{
    uint32_t cpsr, masked;
    __asm__ __volatile__("mrs %0, cpsr\n\torr %1, %0, #0xc0\n\tmsr cpsr_c, %1"
                         : "=r"(cpsr), "=r"(masked)
                         :
                         : "memory");
    return cpsr;
}
static __attribute__((noinline, target("arm"))) HKTS_FN void hkts_irq_restore(hkts_irq_t cpsr)
{
    __asm__ __volatile__("msr cpsr_c, %0" : : "r"(cpsr) : "memory");
}
#elif defined(__riscv)
typedef unsigned long hkts_irq_t;
static inline __attribute__((always_inline)) HKTS_FN hkts_irq_t hkts_irq_save(void)
{
    unsigned long mstatus;
    __asm__ __volatile__("csrrci %0, mstatus, 8" : "=r"(mstatus) : : "memory");
    return mstatus;
}
static inline __attribute__((always_inline)) HKTS_FN void hkts_irq_restore(hkts_irq_t mstatus)
{
    __asm__ __volatile__("csrs mstatus, %0" : : "r"(mstatus & 8) : "memory");
}
#else
/* No interrupt mask known: correct only where no hooked code interrupts a hook. */
typedef int hkts_irq_t;
static inline HKTS_FN hkts_irq_t hkts_irq_save(void)
{
    __asm__ __volatile__("" ::: "memory");
    return 0;
}
static inline HKTS_FN void hkts_irq_restore(hkts_irq_t x)
{
    (void)x;
    __asm__ __volatile__("" ::: "memory");
}
#endif

static inline __attribute__((always_inline)) HKTS_FN uint8_t *hkts_varint32(uint8_t *o, uint32_t v)
{
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    return o;
}

static HKTS_FN uint8_t *hkts_varint64(uint8_t *o, uint64_t v)
{
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    return o;
}

static inline __attribute__((always_inline)) HKTS_FN uint8_t *hkts_varintptr(uint8_t *o,
                                                                              uintptr_t v)
{
    if (sizeof v == 4)
        return hkts_varint32(o, (uint32_t)v);
    return hkts_varint64(o, (uint64_t)v);
}

static inline __attribute__((always_inline)) HKTS_FN uintptr_t hkts_zigzag(uintptr_t d)
{
    return (d << 1) ^ (uintptr_t)-(intptr_t)(d >> (sizeof d * 8 - 1));
}

/* The first varint of a record of kind k at `time`: a CLOCK record first if the delta from the
 * last record does not fit. */
static inline __attribute__((always_inline)) HKTS_FN uint8_t *hkts_head(uint8_t *o, uint64_t time,
                                                                         uint32_t k)
{
    uint64_t delta = time - hkts.last_time;
    if (__builtin_expect(delta >= HKTS_DELTA_LIMIT, 0)) {
        o = hkts_varint32(o, HKTS_OTHER);
        o = hkts_varint32(o, HKTS_S_CLOCK);
        o = hkts_varint64(o, time);
        delta = 0;
    }
    hkts.last_time = time;
    return hkts_varint32(o, (uint32_t)delta << 2 | k);
}

/* Bytes free in the up-buffer: one stays empty. */
static inline __attribute__((always_inline)) HKTS_FN uint32_t
hkts_free(const struct hookcc_rtt_up *up, uint32_t wr)
{
    uint32_t rd = *(const volatile uint32_t *)&up->RdOff;
    uint32_t size = up->SizeOfBuffer;
    if (rd >= size || wr >= size)
        return 0; /* offsets out of the ring (a host wrote nonsense): write nothing, count it */
    return rd > wr ? rd - wr - 1 : size - 1 - (wr - rd);
}

/* Copies n bytes at WrOff, wrapping, then publishes them (WrOff after the bytes). */
static inline __attribute__((always_inline)) HKTS_FN void
hkts_copy(struct hookcc_rtt_up *up, uint32_t wr, const uint8_t *from, uint32_t n)
{
    uint32_t size = up->SizeOfBuffer;
    uint8_t *buf = (uint8_t *)up->pBuffer;
    for (uint32_t i = 0; i < n; i++) {
        buf[wr] = from[i];
        if (++wr == size)
            wr = 0;
    }
    __atomic_store_n(&up->WrOff, wr, __ATOMIC_RELEASE);
}

/* The most bytes the hooks' fast path writes at WrOff: a record of up to 4 bytes. */
#define HKTS_FAST_ROOM 4u

/* The fast path's limit (see struct hkts_state) for the ring as it is now. */
static inline __attribute__((always_inline)) HKTS_FN uint32_t hkts_limit(struct hookcc_rtt_up *up)
{
    uint32_t wr = up->WrOff, rd = *(const volatile uint32_t *)&up->RdOff;
    uint32_t size = up->SizeOfBuffer;
    if (rd >= size || wr >= size || size <= HKTS_FAST_ROOM)
        return 0;
    /* RdOff after WrOff: the record's last byte before it (one byte stays free); at or before
     * it, before the ring's end (the fast path never wraps). */
    uint32_t end = rd > wr ? rd : size;
    return end > HKTS_FAST_ROOM ? end - HKTS_FAST_ROOM : 0;
}

/* What goes in front of a record, with interrupts masked: the START record once, then after
 * a loss the LOST record (with the task now running if switches were dropped). */
static HKTS_FN __attribute__((noinline)) uint8_t *
hkts_prologue(struct hookcc_rtt_control_block *cb, uint8_t *o, uint64_t now)
{
    const uint8_t *rec = o; /* the record's start: the prologue comes first */
    if (!hkts.started) {
        /* The id, which the probes' RTT servers search RAM for, is written here, last, its
         * first byte after the rest (SEGGER's own code does the same): a probe that scans
         * while start-up copies .data never finds a block whose descriptors are not there
         * yet. The id is not in .data, so no copy of it is in RAM before. */
        static const char id[sizeof cb->acID] = "SEGGER RTT";
        if (cb->acID[0] != id[0]) {
            for (unsigned i = 1; i < sizeof cb->acID; i++)
                ((volatile char *)cb->acID)[i] = id[i];
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            __atomic_thread_fence(__ATOMIC_RELEASE);
            ((volatile char *)cb->acID)[0] = id[0];
        }
        o = hkts_varint32(o, HKTS_OTHER);
        o = hkts_varint32(o, HKTS_S_START);
        o = hkts_varint32(o, HKTS_VERSION);
        o = hkts_varint32(o, (uint32_t)sizeof(void *));
        o = hkts_varint64(o, hkrt_ticks_per_second_fixed());
        o = hkts_varint64(o, now);
        hkts.last_time = now;
        if (hkts_is_ring()) {
            o = hkts_varint32(o, HKTS_OTHER);
            o = hkts_varint32(o, HKTS_S_RING);
            /* where the count is in the record; hkts_commit adds where the record goes */
            hkts_ring.ring_at[hkts_ring.current] = (uint32_t)(o - rec);
            for (int i = 0; i < 4; i++)
                *o++ = 0x80; /* 0 in five bytes, patched at the finish */
            *o++ = 0;
            if (hkts.task_now != NULL) {
                o = hkts_varint32(o, HKTS_OTHER);
                o = hkts_varint32(o, HKTS_S_SWITCH);
                o = hkts_varintptr(o, (uintptr_t)hkts.task_now);
                hkts.records++;
            }
        }
    }
    if (hkts.pending_lost != 0) {
        uint64_t at = hkts.started ? hkts.lost_since : now;
        o = hkts_head(o, at, HKTS_OTHER);
        o = hkts_varint32(o, HKTS_S_LOST);
        o = hkts_varint32(o, hkts.pending_lost);
        /* Whether task switches were among the records dropped, and then the task running
         * now: every task's records may be missing, not only the one's that ran before. */
        o = hkts_varint32(o, hkts.switch_dropped);
        if (hkts.switch_dropped)
            o = hkts_varintptr(o, (uintptr_t)hkts.task_now);
    }
    return o;
}

/* The record at rec[0..n) (after its prologue) goes in, or is dropped and counted. On a drop
 * the encoder's state is put back as it was (`time`, `address`: the next record's deltas are
 * from the last record written) and the loss noted: its first time, whether a task switch
 * was among it (`task_before`: the task before this record). */
static HKTS_FN __attribute__((noinline)) int
hkts_commit(struct hookcc_rtt_up *up, const uint8_t *rec, uint32_t n, uint64_t time,
            uintptr_t address, const void *task_before, uint64_t now)
{
    uint32_t wr = up->WrOff;
    if (hkts_free(up, wr) >= n) {
        if (!hkts.started && hkts_is_ring()) /* the RING record's count: its offset in the half */
            hkts_ring.ring_at[hkts_ring.current] += wr;
        hkts_copy(up, wr, rec, n);
        hkts.started = 1;
        hkts.pending_lost = 0;
        hkts.switch_dropped = 0;
        hkts.limit = hkts_limit(up);
        return 1;
    }
    hkts.last_time = time;
    hkts.last_address = address;
    if (hkts_is_ring() && !hkts_ring.finished && hkts.started) {
        /* The other half, over what it held: the caller encodes the record again there. */
        uint32_t c = hkts_ring.current, half = up->SizeOfBuffer + HOOKCC_TRACE_PACKED_RESERVE;
        uint32_t made = hkts.records - 1; /* this record is the half's first */
        hkts_ring.length[c] = wr;
        if (hkts_ring.flips != 0)
            hkts_ring.overwritten += hkts_ring.first[c] - hkts_ring.first[c ^ 1u];
        hkts_ring.flips++;
        c ^= 1u;
        hkts_ring.current = c;
        hkts_ring.first[c] = made;
        up->pBuffer = (char *)up->pBuffer + (c ? (ptrdiff_t)half : -(ptrdiff_t)half);
        __atomic_store_n(&up->WrOff, 0, __ATOMIC_RELEASE);
        hkts.started = 0;
        hkts.limit = 0;
        hkts.last_address = 0;
        return 0;
    }
    if (hkts.pending_lost == 0)
        hkts.lost_since = now;
    hkts.pending_lost++;
    hkts.limit = 0;
    hkts.switch_dropped |= hkts.task_now != task_before;
    hkts.lost++;
    return 1;
}

/* An entry or an exit, encoded at `o`: the encoder's state moves on. */
static inline __attribute__((always_inline)) HKTS_FN uint8_t *
hkts_call(uint8_t *o, uint64_t now, uintptr_t address_kind)
{
    uintptr_t exit = address_kind & (uintptr_t)HKT_EXIT_BIT;
    uintptr_t address = address_kind & ~(uintptr_t)HKT_EXIT_BIT;
    uintptr_t d = address - hkts.last_address;
    hkts.last_address = address;
    if (exit && d == 0)
        return hkts_head(o, now, HKTS_EXIT_SAME);
    if (__builtin_expect((d & 3) == 0, 1)) {
        o = hkts_head(o, now, exit ? HKTS_EXIT : HKTS_ENTRY);
        return hkts_varintptr(o, hkts_zigzag((uintptr_t)((intptr_t)d >> 2)));
    }
    o = hkts_head(o, now, HKTS_OTHER);
    o = hkts_varint32(o, exit ? HKTS_S_EXIT_RAW : HKTS_S_ENTRY_RAW);
    return hkts_varintptr(o, hkts_zigzag(d));
}

/* An entry or an exit the slow way: the START or a LOST record first, or a ring that is
 * nearly full or about to wrap. */
static HKTS_FN __attribute__((noinline)) void hkts_call_slow(uint64_t now, uintptr_t address_kind,
                                                              struct hookcc_rtt_control_block *cb)
{
    struct hookcc_rtt_up *up = &cb->up[0];
    uint8_t rec[HKTS_RECORD_MAX];
    do {
        uint64_t time = hkts.last_time;
        uintptr_t address = hkts.last_address;
        uint8_t *o = rec;
        if (!hkts.started || hkts.pending_lost != 0)
            o = hkts_prologue(cb, o, now);
        o = hkts_call(o, now, address_kind);
        /* 0: a flight recorder's other half begun, where the record goes instead */
        if (hkts_commit(up, rec, (uint32_t)(o - rec), time, address, hkts.task_now, now))
            return;
    } while (1);
}

/* A varint of fewer than 14 bits (the fast path's) as the low bytes of a word; *n its bytes. */
static inline __attribute__((always_inline)) HKTS_FN uint32_t hkts_varint14_word(uint32_t v,
                                                                                 uint32_t *n)
{
    if (v < 0x80) {
        *n = 1;
        return v;
    }
    *n = 2;
    return (v & 0x7f) | 0x80 | (v >> 7) << 8;
}

/* The fast path's record, n (1 to 4) bytes of `word` (its first byte lowest), at `at`, where
 * there is room for HKTS_FAST_ROOM: one store where the target allows an unaligned one (the
 * bytes after the record are no one's: a reader stops at WrOff). A firmware that traps unaligned
 * accesses (the Cortex-M's CCR.UNALIGN_TRP) compiles with -mno-unaligned-access, which hookcc
 * passes to the runtime too: __ARM_FEATURE_UNALIGNED is then undefined, and the bytes go one by
 * one. */
static inline __attribute__((always_inline)) HKTS_FN void hkts_store_word(uint8_t *at,
                                                                         uint32_t word, uint32_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ &&                                              \
    (defined(__ARM_FEATURE_UNALIGNED) || defined(__x86_64__) || defined(__aarch64__))
    (void)n;
    __builtin_memcpy(at, &word, sizeof word);
#else
    at[0] = (uint8_t)word;
    if (n > 1) {
        at[1] = (uint8_t)(word >> 8);
        if (n > 2) {
            at[2] = (uint8_t)(word >> 16);
            if (n > 3)
                at[3] = (uint8_t)(word >> 24);
        }
    }
#endif
}

/* An entry or an exit with interrupts masked from the timestamp to the publication, for one
 * kind at a time (`exit` a constant: 0 or HKT_EXIT_BIT, the bit `address_kind` has). What
 * counts on a microcontroller is the instructions run, so the common cases are tested first,
 * each with the fewest steps: a delta under 32 ticks with an exit of the last address (1 byte)
 * or an address 4-byte aligned within 256 bytes of the last (2 bytes); then deltas under 4096
 * ticks and addresses within 2^15 bytes (2 to 4 bytes). The record is encoded into a word
 * before the ring's offsets are loaded (fewer registers live at once: no spill on the
 * Cortex-M3), and stored if WrOff is below the limit. The rest, the START and LOST records, the
 * ring's wrap, losses, go through hkts_call_slow, which encodes the same bytes
 * (docs/trace-format.md, "The stream"). */
static inline __attribute__((always_inline)) HKTS_FN void
hkts_event(uintptr_t address_kind, const uintptr_t exit, struct hookcc_rtt_control_block *cb)
{
    struct hookcc_rtt_up *up = &cb->up[0];
    struct hkts_state *s = &hkts;
    hkts_irq_t irq = hkts_irq_save();
    uint64_t now = hkrt_ticks();
    s->records++;
    uint64_t delta64 = now - s->last_time;
    uint32_t delta = (uint32_t)delta64, high = (uint32_t)(delta64 >> 32);
    /* The exit bit added to the last address, not taken from this one: the address itself is
     * then needed only where it is stored, and clang keeps no register for it (Cortex-M3:
     * hkts_exit without r11 and its stack alignment, 0.8 instructions a record fewer). */
    uintptr_t d = address_kind - (s->last_address + exit);
    /* zigzag(d / 4) where d is a multiple of 4, which both cases below require */
    uintptr_t zz = (uintptr_t)(((intptr_t)d >> 1) ^ ((intptr_t)d >> (sizeof d * 8 - 1)));
    uint32_t word, n; /* the record's bytes, the first lowest */
    if (exit != 0 && d == 0) {
        if (__builtin_expect((high | delta >> 5) == 0, 1)) {
            word = delta << 2 | HKTS_EXIT_SAME;
            n = 1;
        } else if ((high | delta >> 12) == 0) {
            word = hkts_varint14_word(delta << 2 | HKTS_EXIT_SAME, &n);
        } else {
            goto slow;
        }
    } else {
        const uint32_t k = exit != 0 ? HKTS_EXIT : HKTS_ENTRY;
        if (__builtin_expect(((d & 3) | zz >> 7 | (high | delta >> 5)) == 0, 1)) {
            word = (delta << 2 | k) | (uint32_t)zz << 8;
            n = 2;
        } else if (((d & 3) | zz >> 14 | (high | delta >> 12)) == 0) {
            uint32_t n2;
            word = hkts_varint14_word(delta << 2 | k, &n);
            word |= hkts_varint14_word((uint32_t)zz, &n2) << (8 * n);
            n += n2;
        } else {
            goto slow;
        }
    }
    uint32_t wr = up->WrOff;
    if (__builtin_expect(wr < s->limit, 1)) {
        hkts_store_word((uint8_t *)up->pBuffer + wr, word, n);
        if (!(exit != 0 && d == 0))
            s->last_address = address_kind - exit;
        s->last_time = now;
        __atomic_store_n(&up->WrOff, wr + n, __ATOMIC_RELEASE);
        hkts_irq_restore(irq);
        return;
    }
slow:
    hkts_call_slow(now, address_kind, cb);
    hkts_irq_restore(irq);
}

/* The hooks' records, one function each kind (the hooks tail-call them). */
static HKTS_FN __attribute__((noinline)) void hkts_entry(uintptr_t fn,
                                                          struct hookcc_rtt_control_block *cb)
{
    hkts_event(fn, 0, cb);
}

static HKTS_FN __attribute__((noinline)) void hkts_exit(uintptr_t fn_exit,
                                                         struct hookcc_rtt_control_block *cb)
{
    hkts_event(fn_exit, HKT_EXIT_BIT, cb);
}

/* A record of sub-kind s with an optional handle and name (switch, creation, escape, end). */
static HKTS_FN __attribute__((noinline)) void hkts_other(struct hookcc_rtt_control_block *cb,
                                                          uint32_t s, const void *task,
                                                          const char *name, uint32_t a, uint32_t b)
{
    struct hookcc_rtt_up *up = &cb->up[0];
    uint8_t rec[HKTS_RECORD_MAX];
    hkts_irq_t irq = hkts_irq_save();
    uint64_t now = hkrt_ticks();
    if (s != HKTS_S_END && s != HKTS_S_NAME)
        hkts.records++;
    const void *task_before = hkts.task_now;
    /* Again in a flight recorder's other half when hkts_commit began one (returned 0). */
    for (;;) {
        uint64_t time = hkts.last_time;
        uintptr_t address = hkts.last_address;
        if (s == HKTS_S_SWITCH)
            hkts.task_now = task;
        uint8_t *o = rec;
        if (!hkts.started || hkts.pending_lost != 0)
            o = hkts_prologue(cb, o, now);
        o = hkts_head(o, now, HKTS_OTHER);
        o = hkts_varint32(o, s);
        if (s == HKTS_S_SWITCH || s == HKTS_S_CREATED || s == HKTS_S_NAME)
            o = hkts_varintptr(o, (uintptr_t)task);
        if (s == HKTS_S_CREATED || s == HKTS_S_NAME) {
            uint32_t n = 0;
            while (name != NULL && n + 1 < HOOKCC_TRACE_TASK_NAME_BYTES && name[n] != 0)
                n++;
            o = hkts_varint32(o, n);
            for (uint32_t i = 0; i < n; i++)
                *o++ = (uint8_t)name[i];
        }
        if (s == HKTS_S_END)
            o = hkts_varint32(hkts_varint32(o, a), b);
        if (s == HKTS_S_END || s == HKTS_S_NAME) {
            /* A name keeps room for the LOST and END records after it. */
            uint32_t after = s == HKTS_S_NAME ? HOOKCC_TRACE_PACKED_RESERVE : 0;
            if (hkts_free(up, up->WrOff) < (uint32_t)(o - rec) + after) {
                /* The end (a name) is written when there is room: not a record, never lost. */
                hkts.last_time = time;
                hkts.last_address = address;
                hkts_irq_restore(irq);
                return;
            }
        }
        if (hkts_commit(up, rec, (uint32_t)(o - rec), time, address, task_before, now))
            break;
    }
    hkts_irq_restore(irq);
}

#endif /* HOOKCC_RUNTIME_TRACE_STREAM_H */
