/* The calling-context tree of HOOKCC_MODE=profile (docs/recording.md; the PROFILE chunk in
 * docs/trace-format.md): a thread's records folded into one node per call path, with exact
 * counts and raw (uncompensated) times, constant in size however long the program runs.
 *
 * The hooks do not change: they still store 16-byte records in the thread's buffer, and a full
 * buffer is handed to the writer thread, which folds it here instead of packing it (the hot
 * path stays at its 28 instructions a call pair; folding costs the writer, on another core).
 * A snapshot, a thread's end and the process's end write the tree as it is then: every node,
 * the frames still open, and the exits that matched no frame. hookprof closes the open frames
 * as it closes them in a trace (at the thread's end), and reads the tree with the same rules as
 * a trace's records: an exit below the top closes the frames above it (unmatched entries), a
 * resync (longjmp) closes them too, an exit with no frame is an unmatched exit.
 *
 * Folding follows hookprof's replay (hookprof/src/analysis/replay.rs) step by step, so that a profile
 * of a run and the trace of the same run give the same report (tests/tests/trace_e2e.rs folds
 * a trace's records with this header to check it, byte for byte).
 *
 * Memory comes from the caller's hkt_cct_grow_fn (mremap in the runtime, realloc in tests);
 * nothing here calls libc. Freestanding: <stdint.h>, <stddef.h>.
 */
#ifndef HOOKCC_RUNTIME_TRACE_CCT_H
#define HOOKCC_RUNTIME_TRACE_CCT_H

#include <stddef.h>
#include <stdint.h>

#include "trace_format.h"
#include "trace_pack.h"

#define HKT_CCT_FN static inline __attribute__((no_instrument_function))
#define HKT_CCT_NONE 0xffffffffu
#define HKT_CCT_MAX_DEPTH (1u << 20)   /* frames the stack holds; deeper ones are counted */
#define HKT_CCT_MAX_UNMATCHED 4096u    /* addresses of unmatched exits kept; more are lost */
#define HKT_CCT_MIN_BUCKETS 1024u

/* One call path: the function at its end, its parent path, and its calls' sums. 64 bytes. */
struct hkt_cct_node {
    uint64_t address;
    uint64_t calls;     /* frames closed (by their exit, an outer exit or a longjmp) */
    uint64_t ticks;     /* sum of their durations */
    uint64_t exclusive; /* sum of their durations less their direct callees' */
    uint64_t min, max;  /* shortest and longest duration (0, 0 before the first) */
    uint32_t parent;    /* node index, HKT_CCT_NONE at the thread's root */
    uint32_t chain;     /* next node in the same hash bucket, HKT_CCT_NONE at the end */
    uint32_t unwound;   /* of the calls, frames closed by an outer exit or a longjmp */
    uint32_t longjmp;   /* of those, by a longjmp (a resync) */
};

/* An open frame. 32 bytes. */
struct hkt_cct_frame {
    uint64_t address;
    uint64_t entry;      /* its entry's time, ticks */
    uint64_t child;      /* its direct callees' durations so far */
    uint32_t node;       /* HKT_CCT_NONE: not in the tree (the tree could not grow) */
    uint32_t last_child; /* the node its last callee was: most often the next one too */
};

struct hkt_cct_unmatched {
    uint64_t address;
    uint64_t count;
};

/* Gives the tree memory: `old` (NULL at first) of old_bytes grown to new_bytes, its contents
 * kept; NULL if it cannot (old stays valid). */
typedef void *(*hkt_cct_grow_fn)(void *old, size_t old_bytes, size_t new_bytes);

struct hkt_cct {
    struct hkt_cct_node *nodes;
    uint32_t n_nodes, cap_nodes, max_nodes;
    uint32_t *buckets; /* node index + 1 chains, by hkt_cct_hash; 0 = empty */
    uint32_t n_buckets;
    struct hkt_cct_frame *stack;
    uint32_t depth, cap_depth;
    uint64_t beyond; /* entries deeper than HKT_CCT_MAX_DEPTH still open (not in the tree) */
    struct hkt_cct_unmatched *unmatched;
    uint32_t n_unmatched, cap_unmatched;
    int started, resync;
    uint64_t first_tick, last_tick;
    uint64_t records; /* records folded */
    uint64_t lost;    /* records that could not be placed (the tree or a table was full) */
    uint64_t shift;   /* ticks taken out of every later record (the runtime's own pauses) */
    hkt_cct_grow_fn grow;
};

/* An empty tree that grows with `grow`, up to max_nodes call paths. */
HKT_CCT_FN void hkt_cct_init(struct hkt_cct *c, hkt_cct_grow_fn grow, uint32_t max_nodes)
{
    struct hkt_cct empty = {0};
    *c = empty;
    c->grow = grow;
    c->max_nodes = max_nodes;
}

HKT_CCT_FN uint32_t hkt_cct_hash(uint32_t parent, uint64_t address, uint32_t n_buckets)
{
    uint64_t key = (address ^ ((uint64_t)parent << 40) ^ parent) * UINT64_C(0x9E3779B97F4A7C15);
    return (uint32_t)(key >> 32) & (n_buckets - 1);
}

/* Doubles the bucket array (or makes the first) and chains every node again. */
__attribute__((noinline)) HKT_CCT_FN int hkt_cct_rehash(struct hkt_cct *c)
{
    uint32_t n = c->n_buckets ? c->n_buckets * 2 : HKT_CCT_MIN_BUCKETS;
    uint32_t *b = (uint32_t *)c->grow(c->buckets, (size_t)c->n_buckets * sizeof *b,
                                      (size_t)n * sizeof *b);
    if (b == NULL)
        return 0;
    for (uint32_t i = 0; i < n; i++)
        b[i] = 0;
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        uint32_t h = hkt_cct_hash(c->nodes[i].parent, c->nodes[i].address, n);
        c->nodes[i].chain = b[h] ? b[h] - 1 : HKT_CCT_NONE;
        b[h] = i + 1;
    }
    c->buckets = b;
    c->n_buckets = n;
    return 1;
}

/* The node of `address` under `parent`, made if new; HKT_CCT_NONE if the tree is full. */
__attribute__((noinline)) HKT_CCT_FN uint32_t hkt_cct_child(struct hkt_cct *c, uint32_t parent,
                                                            uint64_t address)
{
    if (c->n_buckets != 0) {
        uint32_t at = c->buckets[hkt_cct_hash(parent, address, c->n_buckets)];
        for (uint32_t i = at ? at - 1 : HKT_CCT_NONE; i != HKT_CCT_NONE; i = c->nodes[i].chain)
            if (c->nodes[i].address == address && c->nodes[i].parent == parent)
                return i;
    }
    if (c->n_nodes >= c->max_nodes)
        return HKT_CCT_NONE;
    if (c->n_nodes == c->cap_nodes) {
        uint32_t cap = c->cap_nodes ? c->cap_nodes * 2 : 256;
        if (cap > c->max_nodes)
            cap = c->max_nodes;
        struct hkt_cct_node *nodes = (struct hkt_cct_node *)c->grow(
            c->nodes, (size_t)c->cap_nodes * sizeof *nodes, (size_t)cap * sizeof *nodes);
        if (nodes == NULL)
            return HKT_CCT_NONE;
        c->nodes = nodes;
        c->cap_nodes = cap;
    }
    if (c->n_nodes >= c->n_buckets && !hkt_cct_rehash(c))
        return HKT_CCT_NONE;
    uint32_t i = c->n_nodes++;
    struct hkt_cct_node *node = &c->nodes[i];
    struct hkt_cct_node fresh = {0};
    *node = fresh;
    node->address = address;
    node->parent = parent;
    uint32_t h = hkt_cct_hash(parent, address, c->n_buckets);
    node->chain = c->buckets[h] ? c->buckets[h] - 1 : HKT_CCT_NONE;
    c->buckets[h] = i + 1;
    return i;
}

/* Closes the frame on top at `time`; `how` 0 for its exit, 1 for an outer exit, 2 for a
 * longjmp. */
HKT_CCT_FN void hkt_cct_close(struct hkt_cct *c, uint64_t time, int how)
{
    struct hkt_cct_frame *f = &c->stack[--c->depth];
    uint64_t duration = time > f->entry ? time - f->entry : 0;
    if (f->node != HKT_CCT_NONE) {
        struct hkt_cct_node *n = &c->nodes[f->node];
        if (n->calls == 0 || duration < n->min)
            n->min = duration;
        if (duration > n->max)
            n->max = duration;
        n->calls++;
        n->ticks += duration;
        n->exclusive += duration > f->child ? duration - f->child : 0;
        if (how != 0)
            n->unwound++;
        if (how == 2)
            n->longjmp++;
    } else {
        c->lost += 2; /* its entry and its exit: a path the tree had no room for */
    }
    if (c->depth != 0)
        c->stack[c->depth - 1].child += duration;
}

/* The innermost open frame of `address`, as its depth index, or -1. */
HKT_CCT_FN int64_t hkt_cct_find(const struct hkt_cct *c, uint64_t address)
{
    for (uint32_t i = c->depth; i-- > 0;)
        if (c->stack[i].address == address)
            return i;
    return -1;
}

__attribute__((noinline)) HKT_CCT_FN void hkt_cct_unmatched_exit(struct hkt_cct *c,
                                                                 uint64_t address)
{
    for (uint32_t i = 0; i < c->n_unmatched; i++)
        if (c->unmatched[i].address == address) {
            c->unmatched[i].count++;
            return;
        }
    if (c->n_unmatched == c->cap_unmatched) {
        uint32_t cap = c->cap_unmatched ? c->cap_unmatched * 2 : 16;
        struct hkt_cct_unmatched *u =
            cap > HKT_CCT_MAX_UNMATCHED
                ? NULL
                : (struct hkt_cct_unmatched *)c->grow(c->unmatched,
                                                      (size_t)c->cap_unmatched * sizeof *u,
                                                      (size_t)cap * sizeof *u);
        if (u == NULL) {
            c->lost++;
            return;
        }
        c->unmatched = u;
        c->cap_unmatched = cap;
    }
    c->unmatched[c->n_unmatched].address = address;
    c->unmatched[c->n_unmatched].count = 1;
    c->n_unmatched++;
}

/* An exit that is not of the frame on top (see replay.rs, exit_below_top). */
__attribute__((noinline)) HKT_CCT_FN void hkt_cct_exit_below(struct hkt_cct *c, uint64_t time,
                                                             uint64_t address)
{
    if (address == 0) { /* a resync escape: the next record names the frame */
        c->resync = 1;
        return;
    }
    int64_t at = hkt_cct_find(c, address);
    if (at < 0) {
        hkt_cct_unmatched_exit(c, address);
        return;
    }
    while (c->depth > (uint64_t)at + 1)
        hkt_cct_close(c, time, 1);
    hkt_cct_close(c, time, 0);
}

/* The entry after a resync escape: the frames above the innermost one of `address` close. */
__attribute__((noinline)) HKT_CCT_FN void hkt_cct_resync(struct hkt_cct *c, uint64_t time,
                                                         uint64_t address)
{
    c->resync = 0;
    int64_t at = hkt_cct_find(c, address);
    if (at >= 0)
        while (c->depth > (uint64_t)at + 1)
            hkt_cct_close(c, time, 2);
}

__attribute__((noinline)) HKT_CCT_FN int hkt_cct_grow_stack(struct hkt_cct *c)
{
    uint32_t cap = c->cap_depth ? c->cap_depth * 2 : 256;
    if (cap > HKT_CCT_MAX_DEPTH)
        return 0;
    struct hkt_cct_frame *s = (struct hkt_cct_frame *)c->grow(
        c->stack, (size_t)c->cap_depth * sizeof *s, (size_t)cap * sizeof *s);
    if (s == NULL)
        return 0;
    c->stack = s;
    c->cap_depth = cap;
    return 1;
}

HKT_CCT_FN void hkt_cct_enter(struct hkt_cct *c, uint64_t time, uint64_t address)
{
    if (c->beyond != 0 || (c->depth == c->cap_depth && !hkt_cct_grow_stack(c))) {
        c->beyond++;
        return;
    }
    uint32_t node;
    if (c->depth == 0) {
        node = hkt_cct_child(c, HKT_CCT_NONE, address);
    } else {
        struct hkt_cct_frame *top = &c->stack[c->depth - 1];
        uint32_t last = top->last_child;
        if (top->node == HKT_CCT_NONE)
            node = HKT_CCT_NONE;
        else if (last != HKT_CCT_NONE && c->nodes[last].address == address)
            node = last;
        else
            node = top->last_child = hkt_cct_child(c, top->node, address);
    }
    struct hkt_cct_frame *f = &c->stack[c->depth++];
    f->address = address;
    f->entry = time;
    f->child = 0;
    f->node = node;
    f->last_child = HKT_CCT_NONE;
}

/* Folds one record, whatever it is (hkt_cct_fold's slow path). */
__attribute__((noinline)) HKT_CCT_FN void hkt_cct_fold_one(struct hkt_cct *c,
                                                           const struct hkt_record *r)
{
    uint64_t time = r->time > c->shift ? r->time - c->shift : 0;
    uint64_t word = r->address_kind;
    if (!c->started) {
        c->started = 1;
        c->first_tick = c->last_tick = time;
    }
    if (time > c->last_tick)
        c->last_tick = time;
    if (word & HKT_EXIT_BIT) {
        uint64_t address = word & ~HKT_EXIT_BIT;
        if (c->beyond != 0 && address != 0) {
            c->beyond--; /* the exit of a frame too deep to be in the tree */
            c->lost += 2;
        } else if (c->depth != 0 && c->stack[c->depth - 1].address == address) {
            hkt_cct_close(c, time, 0);
        } else {
            hkt_cct_exit_below(c, time, address);
        }
    } else if (c->resync) {
        hkt_cct_resync(c, time, word);
    } else {
        hkt_cct_enter(c, time, word);
    }
}

/* Folds n records (in the thread's order) into the tree. The common records, the exit of the
 * frame on top and an entry of the same callee as its caller's last one, take a loop that keeps
 * the tree's state in registers (the writer folds every record: about 60 instructions a call
 * pair this way, 116 through hkt_cct_fold_one alone); anything else takes hkt_cct_fold_one. */
HKT_CCT_FN void hkt_cct_fold(struct hkt_cct *c, const struct hkt_record *r, size_t n)
{
    size_t i = 0;
    while (i < n) {
        if (!c->started || c->resync || c->beyond != 0) {
            hkt_cct_fold_one(c, &r[i++]);
            continue;
        }
        const uint64_t shift = c->shift;
        struct hkt_cct_frame *const stack = c->stack;
        struct hkt_cct_node *const nodes = c->nodes;
        const uint32_t cap = c->cap_depth;
        uint32_t depth = c->depth;
        uint64_t last = c->last_tick;
        for (; i < n; i++) {
            uint64_t time = r[i].time > shift ? r[i].time - shift : 0;
            uint64_t word = r[i].address_kind;
            if (word & HKT_EXIT_BIT) {
                if (depth == 0)
                    break;
                struct hkt_cct_frame *f = &stack[depth - 1];
                if (f->address != (word & ~HKT_EXIT_BIT) || f->node == HKT_CCT_NONE)
                    break;
                uint64_t duration = time > f->entry ? time - f->entry : 0;
                struct hkt_cct_node *node = &nodes[f->node];
                node->min = node->calls == 0 || duration < node->min ? duration : node->min;
                node->max = duration > node->max ? duration : node->max;
                node->calls++;
                node->ticks += duration;
                node->exclusive += duration > f->child ? duration - f->child : 0;
                depth--;
                if (depth != 0)
                    stack[depth - 1].child += duration;
            } else {
                if (depth == 0 || depth == cap)
                    break;
                uint32_t child = stack[depth - 1].last_child;
                if (child == HKT_CCT_NONE || nodes[child].address != word)
                    break;
                struct hkt_cct_frame *f = &stack[depth++];
                f->address = word;
                f->entry = time;
                f->child = 0;
                f->node = child;
                f->last_child = HKT_CCT_NONE;
            }
            last = time > last ? time : last;
        }
        c->depth = depth;
        c->last_tick = last;
        if (i < n)
            hkt_cct_fold_one(c, &r[i++]);
    }
    c->records += n;
}

/* The most bytes hkt_cct_encode writes. */
HKT_CCT_FN size_t hkt_cct_bound(const struct hkt_cct *c)
{
    return (size_t)c->n_nodes * 90 + (size_t)c->depth * 30 + (size_t)c->n_unmatched * 20 + 8;
}

/* Writes the tree as a PROFILE payload's stream (docs/trace-format.md, "PROFILE") into `out`
 * (hkt_cct_bound bytes), fills *fixed, and returns the stream's bytes, zero-padded to 8. */
HKT_CCT_FN size_t hkt_cct_encode(const struct hkt_cct *c, uint64_t sequence,
                                 struct hkt_profile *fixed, uint8_t *out)
{
    uint8_t *o = out;
    uint64_t last = 0;
    for (uint32_t i = 0; i < c->n_nodes; i++) {
        const struct hkt_cct_node *n = &c->nodes[i];
        o = hkt_pack_varint(o, n->parent == HKT_CCT_NONE ? 0 : (uint64_t)n->parent + 1);
        o = hkt_pack_varint(o, hkt_pack_zigzag(n->address - last));
        last = n->address;
        o = hkt_pack_varint(o, n->calls);
        o = hkt_pack_varint(o, n->ticks);
        o = hkt_pack_varint(o, n->exclusive);
        o = hkt_pack_varint(o, n->min);
        o = hkt_pack_varint(o, n->max - n->min);
        o = hkt_pack_varint(o, n->unwound);
        o = hkt_pack_varint(o, n->longjmp);
    }
    uint32_t open = 0;
    for (uint32_t i = 0; i < c->depth && c->stack[i].node != HKT_CCT_NONE; i++, open++) {
        o = hkt_pack_varint(o, c->stack[i].node);
        o = hkt_pack_varint(o, c->stack[i].entry - c->first_tick);
        o = hkt_pack_varint(o, c->stack[i].child);
    }
    last = 0;
    for (uint32_t i = 0; i < c->n_unmatched; i++) {
        o = hkt_pack_varint(o, hkt_pack_zigzag(c->unmatched[i].address - last));
        last = c->unmatched[i].address;
        o = hkt_pack_varint(o, c->unmatched[i].count);
    }
    size_t bytes = (size_t)(o - out);
    while ((size_t)(o - out) % HKT_CHUNK_ALIGN != 0)
        *o++ = 0;
    fixed->sequence = sequence;
    fixed->first_tick = c->first_tick;
    fixed->last_tick = c->last_tick;
    fixed->records = c->records;
    fixed->nodes = c->n_nodes;
    fixed->open = open;
    fixed->unmatched = c->n_unmatched;
    fixed->stream_bytes = (uint32_t)bytes;
    return (size_t)(o - out);
}

/* ---------------------------------------------------------------------------------------- */
/* The duration threshold (HOOKCC_MIN_DURATION): which records a trace keeps                */
/*
 * Every record is folded into the thread's tree (exact counts and times: the report reads the
 * tree), and a buffer's records are then filtered before they are packed: a call whose entry
 * and exit are in the same buffer and that lasted less than min_ticks is taken out, entry and
 * exit, as XRay's FDR mode rewinds its buffer over a short call. Its callees, shorter still, are
 * gone already. A call whose entry was written with an earlier buffer stays, as does anything
 * that is not a plain pair (resyncs, exits below the top, unmatched exits), so the records kept
 * are always a valid trace: the timeline shows the long calls.
 */

struct hkt_keep_frame {
    uint64_t address;
    uint64_t entry;
    int64_t pos; /* index of its entry among the records kept of this buffer; -1: earlier */
};

struct hkt_keep {
    struct hkt_keep_frame *stack;
    uint32_t depth, cap;
    uint64_t beyond; /* frames deeper than the stack holds (always kept) */
    int resync;
    uint64_t min_ticks; /* 0: keep everything */
    uint64_t folded;    /* calls taken out */
    hkt_cct_grow_fn grow;
};

HKT_CCT_FN void hkt_keep_init(struct hkt_keep *k, hkt_cct_grow_fn grow, uint64_t min_ticks)
{
    struct hkt_keep empty = {0};
    *k = empty;
    k->grow = grow;
    k->min_ticks = min_ticks;
}

__attribute__((noinline)) HKT_CCT_FN int hkt_keep_grow(struct hkt_keep *k)
{
    uint32_t cap = k->cap ? k->cap * 2 : 256;
    if (cap > HKT_CCT_MAX_DEPTH)
        return 0;
    struct hkt_keep_frame *s = (struct hkt_keep_frame *)k->grow(
        k->stack, (size_t)k->cap * sizeof *s, (size_t)cap * sizeof *s);
    if (s == NULL)
        return 0;
    k->stack = s;
    k->cap = cap;
    return 1;
}

/* Filters a buffer's n records in place; returns how many are kept (at the start of r). */
HKT_CCT_FN size_t hkt_keep_filter(struct hkt_keep *k, struct hkt_record *r, size_t n)
{
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        struct hkt_record rec = r[i];
        uint64_t word = rec.address_kind;
        if (word & HKT_EXIT_BIT) {
            uint64_t address = word & ~HKT_EXIT_BIT;
            if (address == 0) {
                k->resync = 1;
            } else if (k->beyond != 0) {
                k->beyond--;
            } else if (k->depth != 0 && k->stack[k->depth - 1].address == address) {
                struct hkt_keep_frame f = k->stack[--k->depth];
                if (f.pos >= 0 && out == (size_t)f.pos + 1 && rec.time >= f.entry &&
                    rec.time - f.entry < k->min_ticks) {
                    out = (size_t)f.pos; /* the call goes, entry and exit */
                    k->folded++;
                    continue;
                }
            } else {
                for (uint32_t d = k->depth; d-- > 0;)
                    if (k->stack[d].address == address) {
                        k->depth = d; /* the frames above it close too (unmatched entries) */
                        break;
                    }
            }
        } else if (k->resync) {
            k->resync = 0;
            for (uint32_t d = k->depth; d-- > 0;)
                if (k->stack[d].address == word) {
                    k->depth = d + 1;
                    break;
                }
        } else if (k->beyond != 0 || (k->depth == k->cap && !hkt_keep_grow(k))) {
            k->beyond++;
        } else {
            struct hkt_keep_frame *f = &k->stack[k->depth++];
            f->address = word;
            f->entry = rec.time;
            f->pos = (int64_t)out;
        }
        r[out++] = rec;
    }
    /* The entries kept are written with this buffer: no later exit can take them back. */
    for (uint32_t d = 0; d < k->depth; d++)
        k->stack[d].pos = -1;
    return out;
}

/* ---------------------------------------------------------------------------------------- */
/* Triggers (HOOKCC_TRACE_START / HOOKCC_TRACE_STOP): which records a thread keeps            */
/*
 * A window opens at an entry of a start function and closes at the return of that call, or,
 * where stop functions are given, at the return of the first stop function called in the
 * window (Zephyr's trigger and stopper); then the next entry of a start function opens another.
 * Records outside every window are dropped before anything else sees them (the trace, the ring,
 * the tree). Per thread: a window is a call on one thread's stack.
 */

struct hkt_window {
    const uint64_t *start, *stop; /* functions, as the entry records' words name them */
    uint32_t n_start, n_stop;
    /* start and stop hold functions' addresses, and the entry records' words are functions'
     * records (the native trace's hooks are passed them): each entry is compared by the
     * function its record holds (bare metal, whose records never go away; the hosted runtime
     * gives the records' addresses in start and stop instead). */
    int records;
    int open;
    int resync;         /* the last record kept was a resync escape */
    int64_t depth;      /* frames entered in the window, less those that returned */
    int64_t stop_depth; /* the depth a stop function was entered at; -1: none yet */
    uint64_t windows;   /* windows opened */
};

HKT_CCT_FN int hkt_window_has(const uint64_t *set, uint32_t n, uint64_t address)
{
    for (uint32_t i = 0; i < n; i++)
        if (set[i] == address)
            return 1;
    return 0;
}

/* The function an entry's word names, as start and stop hold it: the word, or where the words
 * are records, the function in the record (its second pointer, `struct hkrt_fn`'s `function`). */
HKT_CCT_FN uint64_t hkt_window_function(const struct hkt_window *w, uint64_t word)
{
    if (!w->records)
        return word;
    return (uint64_t)(uintptr_t)((const void *const *)(uintptr_t)word)[1];
}

/* Keeps the records of n that are inside a window, in place; returns how many. */
HKT_CCT_FN size_t hkt_window_filter(struct hkt_window *w, struct hkt_record *r, size_t n)
{
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t word = r[i].address_kind;
        int exit = (word & HKT_EXIT_BIT) != 0;
        if (!w->open) {
            if (exit || !hkt_window_has(w->start, w->n_start, hkt_window_function(w, word)))
                continue;
            w->open = 1;
            w->resync = 0;
            w->depth = 0;
            w->stop_depth = -1;
            w->windows++;
        }
        r[out++] = r[i];
        if (exit && word == HKT_RESYNC_ESCAPE) {
            w->resync = 1; /* the next record names a frame already open */
        } else if (exit) {
            w->depth--;
            if (w->stop_depth >= 0 ? w->depth <= w->stop_depth
                                   : w->n_stop == 0 ? w->depth <= 0 : w->depth < 0)
                w->open = 0;
        } else if (w->resync) {
            w->resync = 0;
        } else {
            if (w->n_stop != 0 && w->stop_depth < 0 &&
                hkt_window_has(w->stop, w->n_stop, hkt_window_function(w, word)))
                w->stop_depth = w->depth;
            w->depth++;
        }
    }
    return out;
}

#endif /* HOOKCC_RUNTIME_TRACE_CCT_H */
