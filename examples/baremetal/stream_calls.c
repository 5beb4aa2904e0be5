/* A plain firmware for streaming through a UART (make run HOOKS=stream APP=../stream_calls.c
 * STREAM_UART=0x40004000 on the Cortex-M3 board; docs/baremetal.md, "Streaming"): ROUNDS
 * rounds of a small call tree, the ring sent to the UART after each (stream_out_pump(),
 * stream_out.c), the program's own counts printed at the end (tests/tests/baremetal.rs).
 */
#include <stdint.h>
#include <stdio.h>

#ifndef ROUNDS
#define ROUNDS 2000
#endif
#define NOINLINE __attribute__((noinline))

#ifndef PUMP_EVERY
#define PUMP_EVERY 1 /* rounds between two pumps; 0: only at exit (a ring that holds it all) */
#endif

/* stream_out.c's (make HOOKS=stream); absent otherwise. */
__attribute__((weak)) void stream_out_pump(void);
uint64_t hkrt_ticks_extern(void);

static unsigned leaves, mids, tops;
static volatile unsigned sink;

NOINLINE unsigned leaf(unsigned x)
{
    leaves++;
    return x * 2654435761u;
}

NOINLINE unsigned mid(unsigned x)
{
    mids++;
    return leaf(x) ^ leaf(x + 1);
}

NOINLINE unsigned top(unsigned x)
{
    tops++;
    unsigned v = 0;
    for (unsigned i = 0; i < 3; i++)
        v += mid(x + i);
    return v;
}

int main(void)
{
    uint64_t start = hkrt_ticks_extern();
    for (unsigned round = 0; round < ROUNDS; round++) {
        sink = top(round);
        if (PUMP_EVERY != 0 && round % (PUMP_EVERY ? PUMP_EVERY : 1) == 0 && stream_out_pump)
            stream_out_pump();
    }
    uint64_t ticks = hkrt_ticks_extern() - start;
    printf("count top %u\ncount mid %u\ncount leaf %u\n", tops, mids, leaves);
    printf("loop ticks %lu\n", (unsigned long)ticks);
    return 0;
}
