/* The packed RAM buffer's way out on these boards (make HOOKS=packed; docs/baremetal.md, "The
 * packed RAM buffer"): the hooks encode each record into 2 to 3 bytes in a RAM buffer of
 * PACKED_BYTES bytes (make PACKED_BYTES=N), which stops when full and counts what it drops; at
 * exit hookcc_trace_packed_finish() ends it and its bytes are written to firmware.hkpacked in
 * qemu's working directory through picolibc's semihosting fopen/fwrite (a debugger dumps the
 * same bytes instead: docs/baremetal.md). The program may print what the runtime counted
 * (hookcc_trace_stream_records, hookcc_trace_stream_lost): PACKED_COUNTS=1 does it here.
 * Decode: hookprof record --serial firmware.hkpacked --exe firmware.elf -o firmware.hktrace
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <hookcc/trace_baremetal.h>

#ifndef PACKED_BYTES
#define PACKED_BYTES 65536
#endif
#ifdef PACKED_RING
/* make run HOOKS=packed PACKED_RING=1: a flight recorder keeping the newest records */
HOOKCC_TRACE_PACKED_RING_BUFFER(PACKED_BYTES);
#else
HOOKCC_TRACE_PACKED_BUFFER(PACKED_BYTES);
#endif

static HOOKCC_TRACE_NOHOOKS void packed_out(void)
{
    size_t size;
    const void *bytes = hookcc_trace_packed_finish(&size);
#ifdef PACKED_COUNTS
    fprintf(stderr, "packed records %u lost %u bytes %u\n",
            (unsigned)hookcc_trace_stream_records, (unsigned)hookcc_trace_stream_lost,
            (unsigned)size);
#endif
    FILE *f = fopen("firmware.hkpacked", "wb");
    if (f == NULL || fwrite(bytes, 1, size, f) != size || fclose(f) != 0)
        fputs("packed_out: cannot write firmware.hkpacked through semihosting\n", stderr);
}

/* Registered before main runs, so it runs after main has returned (its exit recorded). */
__attribute__((constructor)) static HOOKCC_TRACE_NOHOOKS void packed_out_at_exit(void)
{
    atexit(packed_out);
}
