/* The hooks' cost beside the work of the function they surround (bench/compensation.py,
 * phase "overlap"). `overlap K N`: run() calls work(x, K) N times, each call K steps of a
 * dependent multiply chain (about 1 ns a step at -O2); prints the checksum on stdout and
 * "hookbench: loop_ns=T" on stderr, T the time run() took (CLOCK_MONOTONIC around it).
 *
 * An out-of-order core runs the program's instructions while a hook's clock read is pending:
 * what a hook pair adds to a call is large when the call has little work to overlap it with,
 * and shrinks to almost nothing when the body is longer than the clock reads. Compensation
 * subtracts the same calibrated time from every call; this shows how far that is from what the
 * hooks added, as the body grows. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) unsigned long work(unsigned long x, int k)
{
    for (int i = 0; i < k; i++) {
        x = x * 2654435761u + (x >> 7);
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

__attribute__((noinline)) unsigned long run(unsigned long n, int k)
{
    unsigned long x = 1;
    for (unsigned long i = 0; i < n; i++)
        x = work(x + i, k);
    return x;
}

int main(int argc, char **argv)
{
    int k = argc > 1 ? atoi(argv[1]) : 0;
    unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    unsigned long x = run(n, k);
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%lu\n", x);
    fprintf(stderr, "hookbench: loop_ns=%lld\n",
            (long long)(b.tv_sec - a.tv_sec) * 1000000000LL + (b.tv_nsec - a.tv_nsec));
    return 0;
}
