/* The native trace streamed while the firmware runs (make HOOKS=stream; docs/baremetal.md,
 * "Streaming"): the RTT control block and its ring, which a host drains while the firmware
 * runs (hookprof record --gdb HOST:PORT --exe firmware.elf -o firmware.hktrace), and at exit
 * the stream's end: an END record, then a wait for the host to have read everything.
 * STREAM_BYTES sets the ring's size (make STREAM_BYTES=N).
 *
 * STREAM_UART=ADDRESS (make STREAM_UART=0x40004000 on the Cortex-M3 board): no debugger
 * reads the ring; the firmware sends it itself through a CMSDK APB UART at ADDRESS (the
 * mps2 boards' UART0), each time the program calls stream_out_pump() (an idle task, a main
 * loop) and at exit. The host reads the UART: hookprof record --serial DEVICE, or --tcp when
 * the UART is a TCP socket (qemu's -serial tcp:…).
 */
#include <stdint.h>
#include <stdlib.h>

#include <hookcc/trace_baremetal.h>

#ifndef STREAM_BYTES
#define STREAM_BYTES 65536 /* 10 ms of a busy firmware under qemu, with margin */
#endif
HOOKCC_TRACE_STREAM_BUFFER(STREAM_BYTES);

uint64_t hkrt_ticks_per_second_extern(void);

#ifdef STREAM_UART
/* CMSDK APB UART: DATA, STATE (bit 0: TX buffer full), CTRL (bit 0: TX enable), BAUDDIV. */
#define UART_REG(offset) (*(volatile uint32_t *)((uintptr_t)(STREAM_UART) + (offset)))

HOOKCC_TRACE_NOHOOKS void stream_out_pump(void)
{
    static int ready;
    if (!ready) {
        UART_REG(0x10) = 16;
        UART_REG(0x08) = 1;
        ready = 1;
    }
    uint8_t bytes[64];
    size_t n;
    while ((n = hookcc_trace_stream_read(bytes, sizeof bytes)) != 0)
        for (size_t i = 0; i < n; i++) {
            while (UART_REG(0x04) & 1)
                ;
            UART_REG(0x00) = bytes[i];
        }
}

static HOOKCC_TRACE_NOHOOKS void stream_end(void)
{
    stream_out_pump();
    hookcc_trace_stream_end(0); /* the END record; no host to wait for */
    stream_out_pump();
}
#else
HOOKCC_TRACE_NOHOOKS void stream_out_pump(void)
{
}

static HOOKCC_TRACE_NOHOOKS void stream_end(void)
{
    /* Up to 2 s of the board's time for the host to read the rest: at exit, qemu (or a
     * board's reset) would take it with it. */
    hookcc_trace_stream_end(2 * hkrt_ticks_per_second_extern());
}
#endif

/* Registered before main runs, so it runs after main has returned (its exit recorded). */
__attribute__((constructor)) static HOOKCC_TRACE_NOHOOKS void stream_end_at_exit(void)
{
    atexit(stream_end);
}
