/* Shared by nitro_dump_calltrace.c and nitro_dump_functioncost.c: what they print captured
 * in memory (the print function they install), and files written under the OUT prefix the
 * program was given (`out_prefix`, which the program defines before including this).
 * Included after `#pragma profile off`: saving must not add records to the buffers it
 * saves (§1.3). */
#ifndef NITRO_DUMP_SAVE_H
#define NITRO_DUMP_SAVE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char captured[8192];
static size_t captured_len;

static void capture(const char *text, void *context)
{
    (void)context;
    size_t n = strlen(text);
    if (captured_len + n < sizeof captured) {
        memcpy(captured + captured_len, text, n);
        captured_len += n;
    }
}

static void write_file(const char *suffix, const void *data, size_t size)
{
    char path[4096];
    snprintf(path, sizeof path, "%s%s", out_prefix, suffix);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

#endif
