/* A plain firmware for streaming through a UART (make run HOOKS=stream APP=../stream_calls.c
 * STREAM_UART=0x40004000 on the Cortex-M3 board; docs/baremetal.md, "Streaming"): ROUNDS
 * rounds of a small call tree, the ring sent to the UART after each (stream_out_pump(),
 * stream_out.c), the program's own counts printed at the end (tests/tests/baremetal.rs).
 */
#include <stdio.h>

#ifndef ROUNDS
#define ROUNDS 2000
#endif
#define NOINLINE __attribute__((noinline))

void stream_out_pump(void);

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
    for (unsigned round = 0; round < ROUNDS; round++) {
        sink = top(round);
        stream_out_pump();
    }
    printf("count top %u\ncount mid %u\ncount leaf %u\n", tops, mids, leaves);
    return 0;
}
