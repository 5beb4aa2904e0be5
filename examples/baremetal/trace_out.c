/* The native trace's way out on these boards (make HOOKS=trace): at exit, the finished trace
 * (<hookcc/trace_baremetal.h>) is written to firmware.hktrace in qemu's working directory
 * through picolibc's semihosting fopen/fwrite; a board without a debugger link would send the
 * same bytes over its UART, or a debugger dumps hookcc_trace_buffer (docs/baremetal.md).
 * Read it with: hookprof report firmware.hktrace --exe firmware.elf
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <hookcc/trace_baremetal.h>

#if defined(TRACE_PROFILE)
/* make run HOOKS=trace TRACE_PROFILE=64: a call-path profile of at most 64 paths, folded from a
 * buffer of 1024 records each time it fills */
HOOKCC_TRACE_PROFILE_BUFFER(1024, TRACE_PROFILE);
#elif defined(TRACE_RING)
HOOKCC_TRACE_RING_BUFFER(TRACE_RING); /* make run HOOKS=trace TRACE_RING=64: the last 64 */
#else
#ifndef TRACE_RECORDS
#define TRACE_RECORDS 16384 /* 256 KiB: these boards have megabytes of RAM */
#endif
HOOKCC_TRACE_BUFFER(TRACE_RECORDS);
#endif

#ifdef TRACE_MIN_TICKS
/* make run HOOKS=trace TRACE_PROFILE=64 TRACE_MIN_TICKS=N: the records of calls of N ticks or
 * more, and the tree of every call */
__attribute__((constructor)) static HOOKCC_TRACE_NOHOOKS void trace_threshold(void)
{
    hookcc_trace_min_ticks = TRACE_MIN_TICKS;
}
#endif

#ifdef TRACE_START
/* make run HOOKS=trace TRACE_START=apply: only the calls made inside apply() (a function with
 * external linkage: its address is all this needs) */
extern char TRACE_START[];
__attribute__((constructor)) static HOOKCC_TRACE_NOHOOKS void trace_trigger(void)
{
    hookcc_trace_triggers.start[0] = (unsigned long long)(uintptr_t)TRACE_START;
    hookcc_trace_triggers.n_start = 1;
}
#endif

static HOOKCC_TRACE_NOHOOKS void trace_out(void)
{
    size_t size;
    const void *trace = hookcc_trace_finish(&size);
    FILE *f = fopen("firmware.hktrace", "wb");
    if (f == NULL || fwrite(trace, 1, size, f) != size || fclose(f) != 0)
        fputs("trace_out: cannot write firmware.hktrace through semihosting\n", stderr);
}

/* Registered before main runs, so it runs after main has returned (its exit recorded). */
__attribute__((constructor)) static HOOKCC_TRACE_NOHOOKS void trace_out_at_exit(void)
{
    atexit(trace_out);
}
