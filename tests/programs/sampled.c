/* Sampled times (docs/views.md, "Sampled times"): where the CPU time of a traced run went, by
 * the samples the runtime takes of it (SAMPLE chunks), beside what the program measures itself.
 * `spin` computes with few calls; `copy` spends its time in libc's memcpy (code without hooks:
 * its caller's); `steps` makes a million calls of `step`, whose bodies are shorter than the
 * hooks; `nap` sleeps. The program prints the CPU time of `spin` and of `copy` by its thread's
 * CPU clock, for the test to compare with the samples. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;
static char from[1 << 16], to[1 << 16];

static double thread_cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void spin(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += i * i;
}

__attribute__((noinline)) static void copy(int times)
{
    for (int i = 0; i < times; i++) {
        from[i & 0xffff] = (char)i;
        memcpy(to, from, sizeof to);
    }
    sink += (unsigned char)to[times & 0xffff];
}

__attribute__((noinline)) static void step(unsigned long i)
{
    sink ^= i;
}

__attribute__((noinline)) static void steps(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        step(i);
}

__attribute__((noinline)) static void nap(void)
{
    struct timespec ts = {0, 100 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    unsigned long scale = argc > 1 ? strtoul(argv[1], NULL, 10) : 1;
    double t0 = thread_cpu_ms();
    spin(150000000ul * scale);
    double t1 = thread_cpu_ms();
    copy((int)(20000 * scale));
    double t2 = thread_cpu_ms();
    steps(1000000ul * scale);
    nap();
    printf("spin %.3f ms\ncopy %.3f ms\n", t1 - t0, t2 - t1);
    return 0;
}
