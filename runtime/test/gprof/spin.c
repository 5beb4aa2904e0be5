/* Spins about 0.5 s of CPU time, then prints the CPU time it used (clock()). */
#include <stdio.h>
#include <time.h>
volatile unsigned long sink;
__attribute__((noinline)) void spin(void)
{
    clock_t start = clock();
    while (clock() - start < CLOCKS_PER_SEC / 2)
        for (int i = 0; i < 10000; i++)
            sink += i;
}
int main(void)
{
    spin();
    printf("%.3f\n", (double)clock() / CLOCKS_PER_SEC);
    return 0;
}
