/* The regression gate's program (tests/tests/views_e2e.rs, `hookprof diff --fail-if`): main
 * calls work() 5 times, work() spins; built with -DREGRESS, work() spins 10 times as long (a
 * planted regression of spin's exclusive time) and tiny(), a call of no duration, is called 3
 * times instead of once (a change of calls the gate's --min-time leaves out as noise). */
#ifdef REGRESS
#define SPINS 20000000ul
#define TINY_CALLS 3
#else
#define SPINS 2000000ul
#define TINY_CALLS 1
#endif

__attribute__((noinline)) unsigned long spin(unsigned long n)
{
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < n; i++)
        x += i;
    return x;
}

__attribute__((noinline)) unsigned long work(void) { return spin(SPINS); }

__attribute__((noinline)) unsigned long tiny(void) { return 1; }

int main(void)
{
    unsigned long sum = 0;
    for (int i = 0; i < 5; i++)
        sum += work();
    for (int i = 0; i < TINY_CALLS; i++)
        sum += tiny();
    return sum == 42;
}
