/* pack_trace [--profile] IN OUT: rewrites a trace's EVENTS chunks (16-byte records, what the
 * runtime writes under HOOKCC_PACK=0) as PACKED chunks, with the runtime's own encoder
 * (trace_pack.h), and copies every other chunk as it is. CHECK chunks are made anew after every
 * chunk of a checked file; the header does not change, so the CLOCK chunk's header checksum
 * still holds.
 *
 * --profile folds each thread's records into its calling-context tree instead, with the
 * runtime's own code (trace_cct.h), and writes the tree as a PROFILE chunk before the thread's
 * THREAD chunk (or at the end), in a version 5 file: what HOOKCC_MODE=profile writes for the
 * same records. PAUSE chunks are left out (the tool does not take them out of the times, as
 * the runtime does, so that raw times stay those of the trace). The CLOCK chunk's checksum of
 * the header is made anew for the new version number.
 *
 * A test tool: the same run's records, raw and packed (or folded), must give every report byte
 * for byte (tests/tests/trace_e2e.rs). Little-endian hosts only, reading traces of their own
 * byte order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_format.h"
#include "trace_pack.h"
#include "trace_cct.h"

static FILE *out;
static int checked;
static unsigned long packed_chunks;

static void put(const void *data, size_t len)
{
    if (fwrite(data, 1, len, out) != len) {
        perror("pack_trace: write");
        exit(1);
    }
}

/* One chunk and, in a checked file, its CHECK chunk. */
static void chunk(uint32_t type, uint64_t thread, const void *payload, uint32_t len)
{
    struct hkt_chunk_header h = {type, len, thread};
    put(&h, sizeof h);
    put(payload, len);
    if (checked) {
        struct hkt_chunk_header ch = {HKT_CHUNK_CHECK, 8, thread};
        struct hkt_check c = {hkt_checksum(&h, sizeof h) + hkt_checksum(payload, len)};
        put(&ch, sizeof ch);
        put(&c, sizeof c);
    }
}

static void *grow(void *old, size_t old_bytes, size_t new_bytes)
{
    (void)old_bytes;
    return realloc(old, new_bytes);
}

#define MAX_THREADS 256
static struct {
    uint64_t tid;
    struct hkt_cct cct;
    int written;
} trees[MAX_THREADS];
static unsigned n_trees;

static struct hkt_cct *tree_of(uint64_t tid)
{
    for (unsigned i = 0; i < n_trees; i++)
        if (trees[i].tid == tid && !trees[i].written)
            return &trees[i].cct;
    if (n_trees == MAX_THREADS) {
        fprintf(stderr, "pack_trace: more than %d threads\n", MAX_THREADS);
        exit(1);
    }
    trees[n_trees].tid = tid;
    hkt_cct_init(&trees[n_trees].cct, grow, 1u << 24);
    return &trees[n_trees++].cct;
}

/* The PROFILE chunk of every tree of `tid` (all if tid is 0) not written yet. */
static void write_trees(uint64_t tid, uint64_t sequence)
{
    for (unsigned i = 0; i < n_trees; i++) {
        if (trees[i].written || (tid != 0 && trees[i].tid != tid))
            continue;
        trees[i].written = 1;
        struct hkt_cct *c = &trees[i].cct;
        uint8_t *stream = malloc(sizeof(struct hkt_profile) + hkt_cct_bound(c));
        struct hkt_profile fixed;
        size_t len = hkt_cct_encode(c, sequence, &fixed, stream + sizeof fixed);
        memcpy(stream, &fixed, sizeof fixed);
        chunk(HKT_CHUNK_PROFILE, trees[i].tid, stream, (uint32_t)(sizeof fixed + len));
        free(stream);
    }
}

int main(int argc, char **argv)
{
    int profile = argc == 4 && strcmp(argv[1], "--profile") == 0;
    if (argc != 3 && !profile) {
        fprintf(stderr, "usage: pack_trace [--profile] IN.hktrace OUT.hktrace\n");
        return 2;
    }
    argv += profile;
    FILE *in = fopen(argv[1], "rb");
    if (in == NULL) {
        perror(argv[1]);
        return 1;
    }
    fseek(in, 0, SEEK_END);
    long size = ftell(in);
    fseek(in, 0, SEEK_SET);
    unsigned char *data = malloc((size_t)size + 8);
    if (data == NULL || size < HKT_HEADER_SIZE || fread(data, 1, (size_t)size, in) != (size_t)size) {
        fprintf(stderr, "pack_trace: %s: cannot read a trace\n", argv[1]);
        return 1;
    }
    fclose(in);
    struct hkt_header header;
    memcpy(&header, data, sizeof header);
    if (memcmp(header.magic, HKT_MAGIC, HKT_MAGIC_SIZE) != 0 || header.version != HKT_VERSION ||
        header.endian != HKT_ENDIAN_LITTLE) {
        fprintf(stderr, "pack_trace: %s: not a little-endian version %d trace\n", argv[1],
                HKT_VERSION);
        return 1;
    }
    checked = (header.flags & HKT_FLAG_CHECKED) != 0;
    out = fopen(argv[2], "wb");
    if (out == NULL) {
        perror(argv[2]);
        return 1;
    }
    struct hkt_header folded = header;
    folded.version = HKT_VERSION_PROFILE;
    if (profile) {
        put(&folded, sizeof folded);
    } else {
        put(data, HKT_HEADER_SIZE);
    }

    static struct hkt_packer packer;
    size_t cap = 1u << 20;
    uint8_t *packed = aligned_alloc(64, cap);
    long at = header.header_size;
    while (at + 16 <= size) {
        struct hkt_chunk_header h;
        memcpy(&h, data + at, sizeof h);
        if (h.type == 0) { /* a hole: skipped word by word */
            at += 8;
            continue;
        }
        if (at + 16 + (long)h.length > size) {
            fprintf(stderr, "pack_trace: byte %ld: chunk cut short\n", at);
            return 1;
        }
        const unsigned char *payload = data + at + 16;
        if (profile && h.type == HKT_CHUNK_EVENTS) {
            struct hkt_record *r = malloc(h.length + 1);
            memcpy(r, payload, h.length);
            hkt_cct_fold(tree_of(h.thread), r, h.length / sizeof *r);
            free(r);
        } else if (profile && h.type == HKT_CHUNK_PAUSE) {
            /* left out: see above */
        } else if (profile && h.type == HKT_CHUNK_CLOCK && h.length >= 32) {
            unsigned char clock[64];
            memcpy(clock, payload, h.length > 64 ? 64 : h.length);
            uint64_t sum = hkt_checksum(&folded, sizeof folded);
            memcpy(clock + 24, &sum, sizeof sum);
            chunk(h.type, h.thread, clock, h.length);
        } else if (profile && h.type == HKT_CHUNK_THREAD) {
            uint64_t sequence;
            memcpy(&sequence, payload, sizeof sequence);
            write_trees(h.thread, sequence);
            chunk(h.type, h.thread, payload, h.length);
        } else if (h.type == HKT_CHUNK_EVENTS) {
            size_t n = h.length / sizeof(struct hkt_record);
            struct hkt_record *r = malloc(h.length + 1);
            memcpy(r, payload, h.length);
            for (size_t done = 0; done < n;) {
                size_t len = 0;
                size_t k = hkt_pack(&packer, r + done, n - done, packed, cap, &len);
                chunk(HKT_CHUNK_PACKED, h.thread, packed, (uint32_t)len);
                packed_chunks++;
                done += k;
            }
            free(r);
        } else if (h.type != HKT_CHUNK_CHECK) {
            chunk(h.type, h.thread, payload, h.length);
        }
        at += 16 + (long)h.length;
    }
    if (profile)
        write_trees(0, 0);
    if (fclose(out) != 0) {
        perror(argv[2]);
        return 1;
    }
    fprintf(stderr, "pack_trace: %lu PACKED chunks\n", packed_chunks);
    return 0;
}
