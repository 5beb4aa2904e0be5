/* Triggers set by the program: 100 rounds recorded whole, then hookcc_trace_trigger(middle)
 * keeps only middle's calls for 100 more, then hookcc_trace_triggers_clear() everything for
 * 10 more. Prints the sum it made. */
#include <hookcc/trace.h>
#include <stdio.h>

static volatile long sink;

__attribute__((noinline)) void leaf(long i) { sink += i; }
__attribute__((noinline)) void middle(long i) { leaf(i); leaf(i + 1); }
__attribute__((noinline)) long fib(long n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
__attribute__((noinline)) void round_of(long i)
{
    middle(i);
    if (i % 10 == 0)
        sink += fib(10);
}

int main(void)
{
    for (long i = 0; i < 100; i++)
        round_of(i);
    if (hookcc_trace_trigger((void (*)(void))middle, NULL) != 0)
        return 1;
    for (long i = 0; i < 100; i++)
        round_of(i);
    hookcc_trace_triggers_clear();
    for (long i = 0; i < 10; i++)
        round_of(i);
    printf("%ld\n", sink);
    return 0;
}
