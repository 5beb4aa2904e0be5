/* Issue 35 item 1, per-function switches: known calls of parse_a (1500), parse_space (1000),
 * mid (1500), leaf (4000) and main (1). With `off` as its argument the program
 * switches leaf off by name after the first 1000 rounds (hookcc_trace_function): leaf then has
 * the 3000 calls of those rounds, every other function all of its calls. */
#include <stdio.h>
#include <string.h>

#include <hookcc/trace.h>

/* Kept out of line at -O2 too, where leaf (which calls nothing) and parse_space (a tail call)
 * have their hooks outlined into clones (docs/recording.md, "Outlined hooks") and mid and
 * parse_a (which make calls) keep them inline. */
#define NOINLINE __attribute__((noinline))

NOINLINE static int leaf(int x) { return x * 3 + 1; }
NOINLINE static int mid(int x) { return leaf(x) + leaf(x + 1); }
NOINLINE int parse_a(int x) { return mid(x) + 1; }
NOINLINE int parse_space(int x) { return leaf(x); }

int main(int argc, char **argv)
{
    long sum = 0;
    for (int i = 0; i < 1000; i++)
        sum += parse_a(i) + parse_space(i);
    int switched = -1;
    if (argc > 1 && strcmp(argv[1], "off") == 0)
        switched = hookcc_trace_function("lea?", 0);
    for (int i = 0; i < 500; i++)
        sum += parse_a(i);
    printf("%ld %d\n", sum, switched);
    return 0;
}
