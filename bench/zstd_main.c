/* The zstd driver for bench/placement.py: compresses and decompresses a generated buffer with
 * libzstd (zstd-sys's bundled lib/ sources, which have no CLI) and prints a checksum of the
 * round trip. `zstd_main [MiB] [level]`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "zstd.h"
#include "main_cpu.h"

/* Text-like data: words drawn from a small vocabulary with a fixed xorshift generator, so that
 * every build compresses the same bytes and the matcher has work to do. */
static void fill(unsigned char *buf, size_t size)
{
    static const char *words[] = {"function", "hook", "entry", "exit", "trace", "inline",
                                  "record", "buffer", "thread", "clock", "the", "a", "of",
                                  "call", "return", "profile", "count", "time", "main", "zstd"};
    uint64_t x = 0x2026;
    size_t at = 0;
    while (at < size) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        const char *w = words[x % (sizeof words / sizeof *words)];
        size_t n = strlen(w);
        for (size_t i = 0; i < n && at < size; i++)
            buf[at++] = (unsigned char)w[i];
        if (at < size)
            buf[at++] = (x >> 32) % 11 == 0 ? '\n' : ' ';
    }
}

int main(int argc, char **argv)
{
    main_cpu_start();
    size_t size = (size_t)(argc > 1 ? atoi(argv[1]) : 8) << 20;
    int level = argc > 2 ? atoi(argv[2]) : 3;
    unsigned char *src = malloc(size);
    size_t bound = ZSTD_compressBound(size);
    unsigned char *packed = malloc(bound);
    unsigned char *back = malloc(size);
    if (!src || !packed || !back)
        return 1;
    fill(src, size);
    size_t packed_size = ZSTD_compress(packed, bound, src, size, level);
    if (ZSTD_isError(packed_size)) {
        fprintf(stderr, "compress: %s\n", ZSTD_getErrorName(packed_size));
        return 1;
    }
    size_t back_size = ZSTD_decompress(back, size, packed, packed_size);
    if (ZSTD_isError(back_size) || back_size != size || memcmp(src, back, size) != 0) {
        fprintf(stderr, "round trip failed\n");
        return 1;
    }
    uint32_t sum = 0;
    for (size_t i = 0; i < packed_size; i++)
        sum = sum * 31 + packed[i];
    printf("%zu -> %zu bytes, checksum %08x\n", size, packed_size, sum);
    free(src);
    free(packed);
    free(back);
    main_cpu_end();
    return 0;
}
