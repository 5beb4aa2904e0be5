/* Cost of one enter+exit pair, for callgrind (not run by run.sh):
 *   clang-19 -std=gnu11 -O2 -fPIC -fno-stack-protector -fvisibility=hidden \
 *       -I runtime/include -I runtime/src -c runtime/src/trace.c -o trace.o
 *   clang-19 -O2 -I runtime/include runtime/test/bench_pair.c trace.o -pthread -o bench_pair
 *   valgrind --tool=callgrind ./bench_pair hooks; valgrind --tool=callgrind ./bench_pair none
 * (Ir of "hooks" - Ir of "none") / N is the instructions a pair adds: the two calls with their
 * argument set-up, the hooks, and the amortized buffer flushes. */
#include "hk_test.h"

#include <stdlib.h>
#include <string.h>

#define N 10000000L

__attribute__((noinline)) static void empty_hooked(void)
{
    ENTER(empty_hooked); /* what the pass inserts: fn and call site */
    __asm__ __volatile__("");
    EXIT(empty_hooked);
}

__attribute__((noinline)) static void empty_plain(void)
{
    __asm__ __volatile__("");
}

int main(int argc, char **argv)
{
    int hooks = argc < 2 || strcmp(argv[1], "none") != 0;
    for (long i = 0; i < N; i++) {
        if (hooks)
            empty_hooked();
        else
            empty_plain();
    }
    return 0;
}
