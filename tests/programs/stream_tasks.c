/* The bare-metal runtime's stream (<hookcc/trace_baremetal.h>, HOOKCC_TRACE_STREAM_BUFFER)
 * driven by hand on the host, with a reader too slow for its ring: compiled with
 * runtime/src/trace_baremetal.c (not by hookcc: the hooks are called directly), it switches
 * between two tasks, "A" calling fa and "B" calling fb, and drains the 128-byte ring into
 * argv[1] only every few rounds, so that records are dropped, task switches among them. At the
 * end it ends the stream and drains the rest. It prints how many calls each function made and
 * the runtime's counts; tests/tests/baremetal.rs reads the file with hookprof record --serial
 * and checks that every call kept is in its own task's thread. */
#include <stdio.h>
#include <stdlib.h>

#include <hookcc/trace_baremetal.h>

HOOKCC_TRACE_STREAM_BUFFER(128);

void __hookcc_enter(void *fn);
void __hookcc_exit(void *fn_exit);

/* Aligned as hookcc aligns the functions it instruments: bit 1 of an address is the exit's. */
#define TRACED __attribute__((noinline, aligned(4)))
TRACED void fa(void) { __asm__ volatile(""); }
TRACED void fb(void) { __asm__ volatile(""); }
TRACED void outer(void) { __asm__ volatile(""); }

static void call(void (*f)(void))
{
    __hookcc_enter((void *)f);
    __hookcc_exit((char *)f + 2);
}

static int task_a, task_b;
static FILE *out;

static void drain(void)
{
    char bytes[64];
    size_t n;
    while ((n = hookcc_trace_stream_read(bytes, sizeof bytes)) != 0)
        if (fwrite(bytes, 1, n, out) != n) {
            perror("stream_tasks");
            exit(1);
        }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fputs("usage: stream_tasks STREAM.bin\n", stderr);
        return 2;
    }
    out = fopen(argv[1], "wb");
    if (out == NULL) {
        perror(argv[1]);
        return 1;
    }
    unsigned calls_a = 0, calls_b = 0;
    hookcc_trace_task_created(&task_a, "A");
    hookcc_trace_task_created(&task_b, "B");
    for (unsigned round = 0; round < 200; round++) {
        hookcc_trace_task_switched_in(&task_a);
        /* A task's outer frame spans its switches out: a loss closes it at the gap. */
        if (round == 0)
            __hookcc_enter((void *)outer);
        for (unsigned i = 0; i < 3; i++, calls_a++)
            call(fa);
        hookcc_trace_task_switched_in(&task_b);
        for (unsigned i = 0; i < 2; i++, calls_b++)
            call(fb);
        if (round % 7 == 6)
            drain();
    }
    hookcc_trace_task_switched_in(&task_a);
    __hookcc_exit((char *)outer + 2);
    drain();
    hookcc_trace_stream_end(0);
    drain();
    fclose(out);
    printf("count fa %u\ncount fb %u\nstream records %u lost %u\n", calls_a, calls_b,
           (unsigned)hookcc_trace_stream_records, (unsigned)hookcc_trace_stream_lost);
    return 0;
}
