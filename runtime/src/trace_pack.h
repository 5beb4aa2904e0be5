/* The PACKED encoding of a thread's records (docs/trace-format.md, "PACKED"): what the hosted
 * trace runtime writes instead of 16-byte EVENTS records, about 3 to 5 bytes per call pair.
 *
 * The hooks still store plain 16-byte records (time, address | exit bit) in the thread's
 * buffer: the hot path does not change. When a buffer is written, hkt_pack() turns its records
 * into one or more PACKED chunks, each decodable on its own (its table and its predicted stack
 * start empty), so a damaged or missing chunk never spoils another.
 *
 * The stream is a sequence of LEB128 varints (7 bits a byte, low bits first, high bit set on
 * every byte but the last). Each record starts with v = delta << 2 | k, delta being the ticks
 * since the chunk's previous record (the first record's delta is from the chunk's first_time):
 *   k = 0  exit of the predicted top frame (nothing follows)
 *   k = 1  entry of table[i]; varint i follows
 *   k = 2  entry of a new address; varint zigzag(address - last new address) follows, and the
 *          address is appended to the table (while it holds fewer than HKT_PACK_TABLE_MAX)
 *   k = 3  anything else; varint s follows:
 *            s = 0      exit of a new address (zigzag delta follows, appended as for k = 2)
 *            s = 1      not a record: the chunk's clock is set to the varint that follows
 *                       (v's delta is 0); used when a delta is >= 2^58 (a clock that went
 *                       backwards, or jumped)
 *            s = 2 + i  exit of table[i]
 * The predicted stack: an entry pushes its address (a ring of HKT_PACK_STACK frames: deeper
 * frames overwrite shallower ones, which then mispredict, costing bytes, never correctness);
 * an exit of the top pops it; any other exit pops down to the innermost frame of its address
 * in the ring, if any. An exit of address 0 (a resync escape) makes the next entry, if its
 * address is in the ring, pop down to its innermost frame instead of pushing. The reader
 * (hookprof/src/input/format.rs, runtime/test/check_trace.py) mirrors every step.
 *
 * Freestanding: needs only <stdint.h> and <stddef.h> (plus trace_format.h).
 */
#ifndef HOOKCC_RUNTIME_TRACE_PACK_H
#define HOOKCC_RUNTIME_TRACE_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "trace_format.h"

#define HKT_PACK_TABLE_MAX 4096u  /* addresses one chunk's table holds */
#define HKT_PACK_HASH_SLOTS 8192u /* the encoder's hash of the table: load <= 1/2 */
#define HKT_PACK_STACK 256u       /* frames of the predicted stack (a ring) */
/* The most bytes one record takes: a clock escape (v, s, a 64-bit varint: 12), then the
 * record (v of a delta < 2^58: 9; s < 2^14: 2; a zigzag address: 10). */
#define HKT_PACK_RECORD_MAX 40u
/* What the encoder reserves for a record: a power of two (a shift, not a division). */
#define HKT_PACK_RECORD_ROOM 64u
_Static_assert(HKT_PACK_RECORD_ROOM >= HKT_PACK_RECORD_MAX, "a record fits in its room");
#define HKT_PACK_DELTA_LIMIT (UINT64_C(1) << 58)

#define HKT_PACK_EXIT_TOP 0u
#define HKT_PACK_ENTRY_INDEX 1u
#define HKT_PACK_ENTRY_NEW 2u
#define HKT_PACK_OTHER 3u
#define HKT_PACK_OTHER_EXIT_NEW 0u
#define HKT_PACK_OTHER_CLOCK 1u
#define HKT_PACK_OTHER_EXIT_INDEX 2u /* + i */

/* The encoder's state: the table of one chunk, its hash, the predicted stack. About 190 KiB;
 * only what a chunk uses is touched (the hash is cleared entry by entry). Zeroed (as mmap
 * gives it) it is an empty table.
 * On the way, what the throttle (runtime/src/trace/functions.h, "Throttling") needs: each table
 * address's calls whose entry and exit are both in the chunk (an exit of the predicted top
 * frame), and their ticks from entry record to exit record.
 * The ring holds each frame's key (hkt_pack_key), not its address: the top frame's key is the
 * exit record that pops it, so an exit of the top is one compare. The frame at depth d (d
 * frames under it) is in slot (d + 1) mod 256, and slot 0 holds 0 while the stack is empty
 * (no exit record is 0): the compare needs no test of the depth. */
struct hkt_packer {
    uint64_t ring[HKT_PACK_STACK];       /* each frame's key (hkt_pack_key) */
    uint64_t ring_time[HKT_PACK_STACK];  /* the entry's time of each frame */
    uint32_t ring_index[HKT_PACK_STACK]; /* its table index, from bit 8 (an entry's code is
                                          * pushed as it is); HKT_PACK_TABLE_MAX: not in the
                                          * table (its calls and ticks go to the spare slot) */
    uint64_t table[HKT_PACK_TABLE_MAX];
    uint32_t calls[HKT_PACK_TABLE_MAX + 1]; /* calls of table[i] timed in this chunk; the last
                                             * slot takes those of frames not in the table, and
                                             * is never read */
    uint64_t ticks[HKT_PACK_TABLE_MAX + 1]; /* and their ticks */
    uint16_t slot_of[HKT_PACK_TABLE_MAX];   /* hash slot of table[i] */
    /* The hash: each slot's address, as address | HKT_EXIT_BIT (0: empty; slot 0 always is),
     * its table index, and an entry record's bytes after the delta, if the index is under 0x80
     * (index << 8 | HKT_PACK_ENTRY_INDEX; else 0). */
    uint64_t slot_key[HKT_PACK_HASH_SLOTS];
    uint16_t slot_index[HKT_PACK_HASH_SLOTS];
    uint16_t slot_code[HKT_PACK_HASH_SLOTS];
    uint32_t table_len;
};

#define HKT_PACK_FN static inline __attribute__((no_instrument_function))

HKT_PACK_FN __attribute__((noinline)) uint8_t *hkt_pack_varint_long(uint8_t *o, uint64_t v)
{
    while (v >= 0x80) {
        *o++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *o++ = (uint8_t)v;
    return o;
}

/* One or two bytes inline (deltas under 4096 ticks, indices under 16384), the rest out of
 * line. */
HKT_PACK_FN __attribute__((always_inline)) uint8_t *hkt_pack_varint(uint8_t *o, uint64_t v)
{
    if (v < 0x80) {
        o[0] = (uint8_t)v;
        return o + 1;
    }
    if (v < 0x4000) {
        o[0] = (uint8_t)(v | 0x80);
        o[1] = (uint8_t)(v >> 7);
        return o + 2;
    }
    return hkt_pack_varint_long(o, v);
}

/* A record's first varint, delta << 2 | k, of a delta of 2^12 ticks or more: preceded by a
 * clock escape (the chunk's clock set to `time`, the record's delta then 0) when the delta
 * reaches HKT_PACK_DELTA_LIMIT (a clock that went back, or jumped). */
HKT_PACK_FN __attribute__((noinline)) uint8_t *hkt_pack_head_long(uint8_t *o, uint64_t delta,
                                                                 unsigned k, uint64_t time)
{
    if (delta >= HKT_PACK_DELTA_LIMIT) {
        o = hkt_pack_varint(o, HKT_PACK_OTHER);
        o = hkt_pack_varint(o, HKT_PACK_OTHER_CLOCK);
        o = hkt_pack_varint(o, time);
        delta = 0;
    }
    return hkt_pack_varint(o, delta << 2 | k);
}

/* A record's first varint: one or two bytes inline (a delta under 4096 ticks: nearly all),
 * which cannot need the clock escape; the rest, which may, out of line. */
HKT_PACK_FN __attribute__((always_inline)) uint8_t *hkt_pack_head(uint8_t *o, uint64_t delta,
                                                                 unsigned k, uint64_t time)
{
    uint64_t v = delta << 2 | k;
    if (delta < 0x20) {
        o[0] = (uint8_t)v;
        return o + 1;
    }
    if (delta < 0x1000) {
        o[0] = (uint8_t)(v | 0x80);
        o[1] = (uint8_t)(v >> 7);
        return o + 2;
    }
    return hkt_pack_head_long(o, delta, k, time);
}

HKT_PACK_FN uint64_t hkt_pack_zigzag(uint64_t d)
{
    return (d << 1) ^ (uint64_t)-(int64_t)(d >> 63);
}

/* Of the address's low 32 bits (a multiply by an immediate; where functions are 4 GiB apart,
 * linear probing still finds them). 0 for address 0. */
HKT_PACK_FN uint32_t hkt_pack_hash(uint64_t address)
{
    return (uint32_t)address * UINT32_C(0x61C88647) >> (32 - 13);
}
_Static_assert(HKT_PACK_HASH_SLOTS == 1u << 13, "hkt_pack_hash gives 13 bits");

/* The table index of `address`, or -1; `*slot` is where to insert it if absent. Slot 0 is
 * never used (it stays empty), so that the fast path's one probe (hkt_pack_body) misses
 * address 0, whose hash is 0. */
HKT_PACK_FN int32_t hkt_pack_find(const struct hkt_packer *p, uint64_t address, uint32_t *slot)
{
    uint32_t h = hkt_pack_hash(address);
    h += h == 0;
    for (;;) {
        uint64_t key = p->slot_key[h];
        if (key == 0) {
            *slot = h;
            return -1;
        }
        if (key == (address | HKT_EXIT_BIT))
            return (int32_t)p->slot_index[h];
        h = (h + 1) & (HKT_PACK_HASH_SLOTS - 1);
        h += h == 0;
    }
}

/* A new address: written as a zigzag delta from the previous new one, and added to the table
 * while there is room (the reader adds it under the same rule). */
HKT_PACK_FN uint8_t *hkt_pack_new_address(struct hkt_packer *p, uint8_t *o, uint64_t address,
                                          uint32_t slot, uint64_t *last_new)
{
    o = hkt_pack_varint(o, hkt_pack_zigzag(address - *last_new));
    *last_new = address;
    if (p->table_len < HKT_PACK_TABLE_MAX) {
        uint32_t index = p->table_len;
        p->table[index] = address;
        p->slot_of[index] = (uint16_t)slot;
        p->slot_key[slot] = address | HKT_EXIT_BIT;
        p->slot_index[slot] = (uint16_t)index;
        p->slot_code[slot] = (uint16_t)(index < 0x80 ? index << 8 | HKT_PACK_ENTRY_INDEX : 0);
        p->table_len++;
    }
    return o;
}

/* A frame's key in the ring: the exit record of its address (address | HKT_EXIT_BIT), but 0
 * for address 0, whose exit (the resync record) the general path takes, never the exit of the
 * top (hkt_pack_body). One key per address (an address never has HKT_EXIT_BIT set), so frames
 * compare as their addresses do. */
HKT_PACK_FN uint64_t hkt_pack_key(uint64_t address)
{
    return address != 0 ? address | HKT_EXIT_BIT : 0;
}

/* The innermost frame of `key` in the ring's window, as a depth (its frame's index), or
 * `depth` itself if none. */
HKT_PACK_FN uint64_t hkt_pack_search(const struct hkt_packer *p, uint64_t depth, uint64_t key)
{
    uint64_t lowest = depth > HKT_PACK_STACK ? depth - HKT_PACK_STACK : 0;
    for (uint64_t d = depth; d > lowest; d--)
        if (p->ring[d & (HKT_PACK_STACK - 1)] == key)
            return d - 1;
    return depth;
}

/* The encoder's running state, as the general path (hkt_pack_general) reads and changes it;
 * the fast path (hkt_pack_body) keeps the first four in registers. */
struct hkt_pack_run {
    uint8_t *o;          /* where the stream goes on */
    uint64_t depth;      /* frames on the predicted stack (the ring holds the last 256) */
    /* The last entry found in the table at an index under 0x80 (HKT_EXIT_BIT, which no entry
     * is: none), and its record's bytes after the delta: index << 8 | HKT_PACK_ENTRY_INDEX. */
    uint64_t last_entry;
    uint32_t last_code;
    int after_escape;    /* the last record was an exit of address 0 (a resync record) */
    uint64_t last_new;   /* the last new address */
    /* The records' end, and the last place a record may start: the fast path reads them per
     * batch, from memory (registers are few). */
    const struct hkt_record *end;
    uint8_t *stop;
};

/* One record, *rec (`delta`: its time less the clock's), in the format's steps one by one: any
 * record, the fast path's included; what the fast path leaves (hkt_pack_body) comes here. */
HKT_PACK_FN __attribute__((always_inline)) void
hkt_pack_general(struct hkt_packer *p, struct hkt_pack_run *s, const struct hkt_record *rec,
                 uint64_t delta, const int timed)
{
    uint64_t time = rec->time, word = rec->address_kind;
    uint64_t address = word & ~HKT_EXIT_BIT, key = hkt_pack_key(address), depth = s->depth;
    uint8_t *o = s->o;
    uint32_t slot = 0;
    if (word & HKT_EXIT_BIT) {
        if (depth > 0 && p->ring[depth & (HKT_PACK_STACK - 1)] == key) {
            o = hkt_pack_head(o, delta, HKT_PACK_EXIT_TOP, time);
            if (timed) {
                uint32_t t = p->ring_index[depth & (HKT_PACK_STACK - 1)] >> 8;
                p->calls[t]++;
                p->ticks[t] += time - p->ring_time[depth & (HKT_PACK_STACK - 1)];
            }
            depth--;
        } else {
            o = hkt_pack_head(o, delta, HKT_PACK_OTHER, time);
            int32_t index = hkt_pack_find(p, address, &slot);
            if (index >= 0) {
                o = hkt_pack_varint(o, HKT_PACK_OTHER_EXIT_INDEX + (uint64_t)index);
            } else {
                o = hkt_pack_varint(o, HKT_PACK_OTHER_EXIT_NEW);
                o = hkt_pack_new_address(p, o, address, slot, &s->last_new);
            }
            depth = hkt_pack_search(p, depth, key);
        }
        s->after_escape = address == 0;
    } else {
        int32_t index = hkt_pack_find(p, address, &slot);
        if (index >= 0) {
            o = hkt_pack_head(o, delta, HKT_PACK_ENTRY_INDEX, time);
            o = hkt_pack_varint(o, (uint64_t)index);
        } else {
            o = hkt_pack_head(o, delta, HKT_PACK_ENTRY_NEW, time);
            o = hkt_pack_new_address(p, o, address, slot, &s->last_new);
            index = p->table_len > 0 && p->table[p->table_len - 1] == address
                        ? (int32_t)(p->table_len - 1)
                        : -1;
        }
        if (index >= 0 && index < 0x80 && address != 0) {
            s->last_entry = word;
            s->last_code = (uint32_t)index << 8 | HKT_PACK_ENTRY_INDEX;
        }
        uint64_t found = s->after_escape ? hkt_pack_search(p, depth, key) : depth;
        if (found < depth) {
            depth = found + 1; /* a longjmp came back to this frame */
        } else {
            depth++;
            p->ring[depth & (HKT_PACK_STACK - 1)] = key;
            if (timed) {
                p->ring_time[depth & (HKT_PACK_STACK - 1)] = time;
                p->ring_index[depth & (HKT_PACK_STACK - 1)] =
                    (index >= 0 ? (uint32_t)index : HKT_PACK_TABLE_MAX) << 8;
            }
        }
        s->after_escape = 0;
    }
    if (depth == 0)
        p->ring[0] = 0; /* (hkt_pack_body) */
    s->depth = depth;
    s->o = o;
}

/* Out of line, so that the fast path keeps its state in registers. */
HKT_PACK_FN __attribute__((noinline)) void
hkt_pack_general_plain(struct hkt_packer *p, struct hkt_pack_run *s, const struct hkt_record *rec,
                       uint64_t delta)
{
    hkt_pack_general(p, s, rec, delta, 0);
}

HKT_PACK_FN __attribute__((noinline)) void
hkt_pack_general_timed(struct hkt_packer *p, struct hkt_pack_run *s, const struct hkt_record *rec,
                       uint64_t delta)
{
    hkt_pack_general(p, s, rec, delta, 1);
}

/* The fast path's entry of an address at table index code >> 8 (under 0x80; `code`: the
 * record's bytes after the delta, index << 8 | HKT_PACK_ENTRY_INDEX), if its delta is under
 * 2^12 ticks (else 0, nothing done). Written twice in hkt_pack_body, so that the last entry's
 * registers need no copies. */
HKT_PACK_FN __attribute__((always_inline)) int
hkt_pack_fast_entry(struct hkt_packer *p, uint8_t **out, uint64_t *depth,
                    const struct hkt_record *rec, uint64_t word, uint64_t delta, uint32_t code,
                    const int timed)
{
    uint8_t *o = *out;
    if (__builtin_expect(delta < 0x20, 1)) {
        uint16_t bytes = (uint16_t)((uint32_t)delta << 2 | code);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        __builtin_memcpy(o, &bytes, 2);
#else
        o[0] = (uint8_t)bytes;
        o[1] = (uint8_t)(bytes >> 8);
#endif
    } else if (delta < 0x1000) {
        o[0] = (uint8_t)(delta << 2 | HKT_PACK_ENTRY_INDEX | 0x80);
        o[1] = (uint8_t)(delta >> 5);
        o[2] = (uint8_t)(code >> 8);
        o++; /* (an add apart: the common case's stays a constant) */
    } else {
        return 0;
    }
    *out = o + 2;
    uint64_t d = *depth + 1;
    *depth = d;
    p->ring[d & (HKT_PACK_STACK - 1)] = word | HKT_EXIT_BIT; /* its key (not address 0) */
    if (timed) {
        p->ring_time[d & (HKT_PACK_STACK - 1)] = rec->time;
        p->ring_index[d & (HKT_PACK_STACK - 1)] = code;
    }
    return 1;
}

/* Encodes records r[0..n) into `out` (8-byte aligned) as one PACKED chunk's payload: the fixed
 * part (struct hkt_packed), then the stream, zero-padded to 8 bytes. Stops before a record that
 * might not fit in `cap` bytes. Returns the records encoded (at least one if n > 0 and cap >=
 * sizeof(struct hkt_packed) + HKT_PACK_RECORD_MAX + 8); *payload_len is the payload's length, a
 * multiple of 8. With `timed` (a constant: hkt_pack and hkt_pack_timed below are each their
 * own loop), it also gathers each table address's calls and ticks for the throttle.
 *
 * Two paths. The fast one, here, takes nearly every record: an exit of the top frame (its key
 * in the ring is the record itself), and an entry of an address already in the table (the last
 * entry's, or found at its hash slot's first probe; the last entry's only at an index under
 * 0x80), each with a delta under 2^12 ticks. The general one (hkt_pack_general) takes the rest: other exits, new
 * addresses, address 0, larger deltas, the chunk's first record and the record after a resync
 * record. The output is the same whichever path a record takes. Records come in batches that
 * surely fit (HKT_PACK_RECORD_ROOM bytes each), so the fast path tests no room. A record's
 * delta is from the record before (the clock is always the last record's time). About 22
 * instructions a record on x86-64 (clang 19, bench/pack_check.py), 37 before the fast path. */
HKT_PACK_FN __attribute__((always_inline)) size_t
hkt_pack_body(struct hkt_packer *p, const struct hkt_record *r, size_t n, uint8_t *out,
              size_t cap, size_t *payload_len, const int timed)
{
    for (uint32_t i = 0; i < p->table_len; i++) {
        p->slot_key[p->slot_of[i]] = 0;
        if (timed) {
            p->calls[i] = 0;
            p->ticks[i] = 0;
        }
    }
    p->table_len = 0;

    struct hkt_packed *head = (struct hkt_packed *)(void *)out;
    uint8_t *stop = out;
    if (cap >= sizeof *head + HKT_PACK_RECORD_MAX + HKT_CHUNK_ALIGN)
        stop = out + cap - HKT_PACK_RECORD_MAX - HKT_CHUNK_ALIGN;
    struct hkt_pack_run s = {out + sizeof *head, 0, HKT_EXIT_BIT, 0, 0, 0, r + n, stop};
    p->ring[0] = 0;
    const struct hkt_record *rec = r;
    if (n > 0 && s.o <= stop) {
        /* the first record: its delta is 0 (from first_time, its own time) */
        if (timed)
            hkt_pack_general_timed(p, &s, r, 0);
        else
            hkt_pack_general_plain(p, &s, r, 0);
        rec++;
    }
    uint8_t *o = s.o;
    uint64_t depth = s.depth, last_entry = s.last_entry;
    uint32_t last_code = s.last_code;
    while (rec < s.end && o <= s.stop) {
        /* Records that surely fit; after a resync record, one (the general path's). */
        size_t fit = s.after_escape ? 1 : (size_t)(s.stop - o) / HKT_PACK_RECORD_ROOM + 1;
        const struct hkt_record *batch = (size_t)(s.end - rec) > fit ? rec + fit : s.end;
        if (s.after_escape)
            goto general;
        do {
            uint64_t word = rec->address_kind, delta = rec->time - rec[-1].time;
            if (word & HKT_EXIT_BIT) {
                /* An exit of the top frame: its key (never the resync record: address 0's key
                 * is 0, as is slot 0's while no frame is on the stack). */
                if (__builtin_expect(word != p->ring[depth & (HKT_PACK_STACK - 1)], 0))
                    goto general;
                if (__builtin_expect(delta < 0x20, 1)) {
                    *o++ = (uint8_t)(delta << 2 | HKT_PACK_EXIT_TOP);
                } else if (delta < 0x1000) {
                    o[0] = (uint8_t)(delta << 2 | HKT_PACK_EXIT_TOP | 0x80);
                    o[1] = (uint8_t)(delta >> 5);
                    o += 2;
                } else {
                    goto general;
                }
                if (timed) {
                    uint32_t t = p->ring_index[depth & (HKT_PACK_STACK - 1)] >> 8;
                    p->calls[t]++;
                    p->ticks[t] += rec->time - p->ring_time[depth & (HKT_PACK_STACK - 1)];
                }
                if (__builtin_expect(--depth == 0, 0))
                    p->ring[0] = 0;
                continue;
            }
            if (word == last_entry) {
                if (__builtin_expect(!hkt_pack_fast_entry(p, &o, &depth, rec, word,
                                                          delta, last_code, timed),
                                     0))
                    goto general;
                continue;
            }
            /* Address 0 (hash 0: slot 0 is always empty) takes the general path, which gives
             * it key 0. */
            uint32_t h = hkt_pack_hash(word);
            if (__builtin_expect(p->slot_key[h] != (word | HKT_EXIT_BIT), 0))
                goto general;
            uint32_t code = p->slot_code[h];
            if (__builtin_expect(code == 0, 0)) {
                /* An index from 0x80 on (two bytes; not cached in last_entry). */
                uint32_t index = p->slot_index[h];
                if (__builtin_expect(delta >= 0x1000, 0))
                    goto general;
                o = hkt_pack_head(o, delta, HKT_PACK_ENTRY_INDEX, rec->time);
                o[0] = (uint8_t)(index | 0x80);
                o[1] = (uint8_t)(index >> 7); /* index < 2^12 */
                o += 2;
                depth++;
                p->ring[depth & (HKT_PACK_STACK - 1)] = word | HKT_EXIT_BIT;
                if (timed) {
                    p->ring_time[depth & (HKT_PACK_STACK - 1)] = rec->time;
                    p->ring_index[depth & (HKT_PACK_STACK - 1)] = index << 8;
                }
                continue;
            }
            last_entry = word;
            last_code = code;
            if (__builtin_expect(!hkt_pack_fast_entry(p, &o, &depth, rec, word, delta,
                                                      code, timed),
                                 0))
                goto general;
            continue;
        general:
            s.o = o;
            s.depth = depth;
            s.last_entry = last_entry;
            s.last_code = last_code;
            if (timed)
                hkt_pack_general_timed(p, &s, rec, rec->time - rec[-1].time);
            else
                hkt_pack_general_plain(p, &s, rec, rec->time - rec[-1].time);
            o = s.o;
            depth = s.depth;
            last_entry = s.last_entry;
            last_code = s.last_code;
            if (s.after_escape) {
                rec++;
                break; /* the next record takes the general path, in a batch of its own */
            }
        } while (++rec < batch);
    }
    size_t i = (size_t)(rec - r);
    size_t stream = (size_t)(o - (out + sizeof *head));
    while (((size_t)(o - out)) % HKT_CHUNK_ALIGN != 0)
        *o++ = 0;
    head->records = (uint32_t)i;
    head->stream_bytes = (uint32_t)stream;
    head->first_time = n > 0 ? r[0].time : 0;
    *payload_len = (size_t)(o - out);
    return i;
}

/* The payload alone (see hkt_pack_body). */
HKT_PACK_FN size_t hkt_pack(struct hkt_packer *p, const struct hkt_record *r, size_t n,
                            uint8_t *out, size_t cap, size_t *payload_len)
{
    return hkt_pack_body(p, r, n, out, cap, payload_len, 0);
}

/* The payload and the throttle's per-address calls and ticks (p->calls, p->ticks). */
HKT_PACK_FN size_t hkt_pack_timed(struct hkt_packer *p, const struct hkt_record *r, size_t n,
                                  uint8_t *out, size_t cap, size_t *payload_len)
{
    return hkt_pack_body(p, r, n, out, cap, payload_len, 1);
}

#endif /* HOOKCC_RUNTIME_TRACE_PACK_H */
