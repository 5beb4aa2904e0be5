/* pack_check: the PACKED encoder (runtime/src/trace_pack.h) alone, on a raw trace's records.
 *
 *   clang-19 -O2 -gdwarf-4 -I runtime/src bench/pack_check.c -o pack_check
 *   pack_check [--timed] [--cap BYTES] TRACE [DUMP]
 *
 * Every EVENTS chunk of TRACE (a run with HOOKCC_PACK=0) is packed as the runtime packs a
 * buffer: chunk after chunk into `cap` bytes (default 1 MiB; a small cap makes many chunks,
 * testing the stop rule), with hkt_pack, or with hkt_pack_timed under --timed. DUMP gets each
 * chunk's payload and, under --timed, its table with the throttle's calls and ticks, so that
 * two builds of the encoder can be compared with cmp (byte-identical output and statistics).
 * The packing runs in pack_chunk (noinline), so callgrind gives its instructions apart:
 *
 *   valgrind --tool=callgrind --toggle-collect=pack_chunk ./pack_check TRACE
 *
 * and the instructions divided by the records (printed) are the encoder's cost a record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_format.h"
#include "trace_pack.h"

/* The packer by pointer, as the runtime passes it (t->packer), to a function that is not
 * static (so the compiler does not specialize it for one call). */
size_t pack_chunk(struct hkt_packer *p, const struct hkt_record *r, size_t n, uint8_t *out,
                  size_t cap, size_t *len, int timed);
__attribute__((noinline)) size_t pack_chunk(struct hkt_packer *p,
                                                   const struct hkt_record *r, size_t n,
                                                   uint8_t *out, size_t cap, size_t *len,
                                                   int timed)
{
    return timed ? hkt_pack_timed(p, r, n, out, cap, len) : hkt_pack(p, r, n, out, cap, len);
}

int main(int argc, char **argv)
{
    int timed = 0;
    size_t cap = 1u << 20;
    while (argc > 1 && argv[1][0] == '-') {
        if (strcmp(argv[1], "--timed") == 0) {
            timed = 1;
            argv++, argc--;
        } else if (strcmp(argv[1], "--cap") == 0 && argc > 2) {
            cap = strtoull(argv[2], NULL, 10);
            argv += 2, argc -= 2;
        } else {
            break;
        }
    }
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: pack_check [--timed] [--cap BYTES] TRACE [DUMP]\n");
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
        fprintf(stderr, "pack_check: %s: cannot read a trace\n", argv[1]);
        return 1;
    }
    fclose(in);
    FILE *dump = argc == 3 ? fopen(argv[2], "wb") : NULL;
    if (argc == 3 && dump == NULL) {
        perror(argv[2]);
        return 1;
    }
    struct hkt_header header;
    memcpy(&header, data, sizeof header);
    uint8_t *packed = aligned_alloc(64, (cap + 63) & ~(size_t)63);
    struct hkt_packer *packer = calloc(1, sizeof *packer); /* zeroed: an empty table */
    uint64_t records = 0, chunks = 0, bytes = 0;
    long at = header.header_size;
    while (at + 16 <= size) {
        struct hkt_chunk_header h;
        memcpy(&h, data + at, sizeof h);
        if (h.type == 0) {
            at += 8;
            continue;
        }
        if (at + 16 + (long)h.length > size)
            break;
        if (h.type == HKT_CHUNK_EVENTS) {
            size_t n = h.length / sizeof(struct hkt_record);
            struct hkt_record *r = aligned_alloc(64, (h.length + 63) & ~(size_t)63);
            memcpy(r, data + at + 16, h.length);
            for (size_t done = 0; done < n;) {
                size_t len = 0;
                size_t k = pack_chunk(packer, r + done, n - done, packed, cap, &len, timed);
                if (k == 0) {
                    fprintf(stderr, "pack_check: cap %zu too small\n", cap);
                    return 1;
                }
                if (dump != NULL) {
                    fwrite(&len, sizeof len, 1, dump);
                    fwrite(packed, 1, len, dump);
                    if (timed) {
                        fwrite(&packer->table_len, sizeof packer->table_len, 1, dump);
                        fwrite(packer->table, 8, packer->table_len, dump);
                        fwrite(packer->calls, 4, packer->table_len, dump);
                        fwrite(packer->ticks, 8, packer->table_len, dump);
                    }
                }
                records += k;
                bytes += len;
                chunks++;
                done += k;
            }
            free(r);
        }
        at += 16 + (long)h.length;
    }
    if (dump != NULL && fclose(dump) != 0) {
        perror(argv[2]);
        return 1;
    }
    printf("records %llu chunks %llu bytes %llu\n", (unsigned long long)records,
           (unsigned long long)chunks, (unsigned long long)bytes);
    return 0;
}
