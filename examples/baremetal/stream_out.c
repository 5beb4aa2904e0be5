/* The native trace streamed while the firmware runs (make HOOKS=stream; docs/baremetal.md,
 * "Streaming"): the RTT control block and its ring, which a host drains while the firmware
 * runs (hookprof record --gdb HOST:PORT --exe firmware.elf -o firmware.hktrace), and at exit
 * the stream's end: an END record, then a wait for the host to have read everything.
 * STREAM_BYTES sets the ring's size (make STREAM_BYTES=N).
 */
#include <stdint.h>
#include <stdlib.h>

#include <hookcc/trace_baremetal.h>

#ifndef STREAM_BYTES
#define STREAM_BYTES 16384
#endif
HOOKCC_TRACE_STREAM_BUFFER(STREAM_BYTES);

uint64_t hkrt_ticks_per_second_extern(void);

static HOOKCC_TRACE_NOHOOKS void stream_end(void)
{
    /* Up to 2 s of the board's time for the host to read the rest: at exit, qemu (or a
     * board's reset) would take it with it. */
    hookcc_trace_stream_end(2 * hkrt_ticks_per_second_extern());
}

/* Registered before main runs, so it runs after main has returned (its exit recorded). */
__attribute__((constructor)) static HOOKCC_TRACE_NOHOOKS void stream_end_at_exit(void)
{
    atexit(stream_end);
}
