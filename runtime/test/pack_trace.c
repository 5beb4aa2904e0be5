/* pack_trace IN OUT: rewrites a trace's EVENTS chunks (16-byte records, what the runtime writes
 * under HOOKCC_PACK=0) as PACKED chunks, with the runtime's own encoder (trace_pack.h), and
 * copies every other chunk as it is. CHECK chunks are made anew after every chunk of a checked
 * file; the header does not change, so the CLOCK chunk's header checksum still holds.
 *
 * A test tool: the same run's records, raw and packed, must give every report byte for byte
 * (tests/tests/trace_e2e.rs). Little-endian hosts only, reading traces of their own byte order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_format.h"
#include "trace_pack.h"

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

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: pack_trace IN.hktrace OUT.hktrace\n");
        return 2;
    }
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
    put(data, HKT_HEADER_SIZE);

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
        if (h.type == HKT_CHUNK_EVENTS) {
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
    if (fclose(out) != 0) {
        perror(argv[2]);
        return 1;
    }
    fprintf(stderr, "pack_trace: %lu PACKED chunks\n", packed_chunks);
    return 0;
}
