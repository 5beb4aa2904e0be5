/* Call counts known by construction, for gprof: main calls work 40 times and spin once; work
 * calls leaf 3 times (120 in all) and, every other time, twice (20); spin burns ~100 ms of CPU
 * so that the PC histogram has samples. With an argument, the program also saves the
 * profiling data as a debugger would (hookcc_gprof_data) to that file before it returns. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

#include <hookcc/gprof.h>

extern void *hookcc_gprof_data;
extern size_t hookcc_gprof_data_size;

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(int i) { sink += (unsigned long)i; }
__attribute__((noinline)) void twice(int i) { sink += 2u * (unsigned long)i; }
__attribute__((noinline)) void work(int i)
{
    for (int k = 0; k < 3; k++)
        leaf(i + k);
    if (i % 2 == 0)
        twice(i);
}
__attribute__((noinline)) void spin(void)
{
    for (unsigned long i = 0; i < 150000000UL; i++)
        sink += i;
}

int main(int argc, char **argv)
{
    for (int i = 0; i < 40; i++)
        work(i);
    spin();
    if (argc > 1) {
        /* The SIGPROF timer stopped first: a sample between this copy and the runtime's own
         * gmon.out at exit would make the two differ (it did once under qemu in CI). */
        struct itimerval off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_PROF, &off, NULL);
        FILE *f = fopen(argv[1], "wb");
        if (f == NULL || fwrite(hookcc_gprof_data, 1, hookcc_gprof_data_size, f) !=
                             hookcc_gprof_data_size || fclose(f) != 0)
            return 1;
    }
    printf("%lu\n", sink);
    return 0;
}
