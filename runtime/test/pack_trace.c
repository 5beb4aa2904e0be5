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
 * --min-duration TICKS does what HOOKCC_MIN_DURATION does: every record folded into the tree,
 * and the records packed without the calls shorter than TICKS (trace_cct.h, "The duration
 * threshold"), with a FOLDED chunk per thread.
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
    struct hkt_keep keep;
    int written;
} trees[MAX_THREADS];
static uint64_t min_ticks; /* --min-duration */
static uint64_t kept;      /* records kept under it */
static long clock_at = -1; /* where the CLOCK chunk is in the output */
static unsigned char *image;
static size_t image_len;
static unsigned n_trees;

static unsigned tree_index(uint64_t tid)
{
    for (unsigned i = 0; i < n_trees; i++)
        if (trees[i].tid == tid && !trees[i].written)
            return i;
    if (n_trees == MAX_THREADS) {
        fprintf(stderr, "pack_trace: more than %d threads\n", MAX_THREADS);
        exit(1);
    }
    trees[n_trees].tid = tid;
    hkt_cct_init(&trees[n_trees].cct, grow, 1u << 24);
    hkt_keep_init(&trees[n_trees].keep, grow, min_ticks);
    return n_trees++;
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
        if (min_ticks != 0) {
            struct hkt_folded folded = {min_ticks, trees[i].keep.folded};
            chunk(HKT_CHUNK_FOLDED, trees[i].tid, &folded, sizeof folded);
        }
    }
}

int main(int argc, char **argv)
{
    int profile = argc == 4 && strcmp(argv[1], "--profile") == 0;
    if (argc == 5 && strcmp(argv[1], "--min-duration") == 0) {
        min_ticks = strtoull(argv[2], NULL, 10);
        argv += 2;
        argc -= 2;
    }
    if (argc != 3 && !profile) {
        fprintf(stderr, "usage: pack_trace [--profile | --min-duration TICKS] IN OUT\n");
        return 2;
    }
    argv += profile;
    int threshold = min_ticks != 0;
    profile |= threshold;
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
    /* Made in memory, patched at the end, then written. */
    out = open_memstream((char **)&image, &image_len);
    if (out == NULL) {
        perror("pack_trace: open_memstream");
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
            unsigned t = tree_index(h.thread);
            size_t n = h.length / sizeof *r;
            hkt_cct_fold(&trees[t].cct, r, n);
            if (threshold) {
                n = hkt_keep_filter(&trees[t].keep, r, n);
                kept += n;
                for (size_t done = 0; done < n;) {
                    size_t len = 0;
                    size_t k = hkt_pack(&packer, r + done, n - done, packed, cap, &len);
                    chunk(HKT_CHUNK_PACKED, h.thread, packed, (uint32_t)len);
                    packed_chunks++;
                    done += k;
                }
            }
            free(r);
        } else if (profile && !threshold && h.type == HKT_CHUNK_PAUSE) {
            /* left out: see above */
        } else if (profile && h.type == HKT_CHUNK_CLOCK && h.length == 32) {
            /* Its header checksum is made anew at the end, for the header as it is then. */
            clock_at = ftell(out);
            chunk(h.type, h.thread, payload, h.length);
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
    if (fflush(out) != 0) {
        perror("pack_trace: memory");
        return 1;
    }
    if (profile) {
        /* Under --min-duration the header counts the records kept, as the runtime's does; the
         * CLOCK chunk (and its CHECK chunk) then carry the new header's checksum. */
        if (threshold)
            folded.records = kept;
        memcpy(image, &folded, sizeof folded);
        if (clock_at >= 0) {
            uint64_t sum = hkt_checksum(&folded, sizeof folded);
            memcpy(image + clock_at + 16 + 24, &sum, sizeof sum);
            if (checked) {
                uint64_t check = hkt_checksum(image + clock_at, 16 + 32);
                memcpy(image + clock_at + 16 + 32 + 16, &check, sizeof check);
            }
        }
    }
    FILE *file = fopen(argv[2], "wb");
    if (file == NULL || fwrite(image, 1, image_len, file) != image_len || fclose(file) != 0) {
        perror(argv[2]);
        return 1;
    }
    fprintf(stderr, "pack_trace: %lu PACKED chunks\n", packed_chunks);
    return 0;
}
