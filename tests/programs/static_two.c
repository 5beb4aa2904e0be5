/* See static_one.c: the other `static int helper()`; two() calls it 5 times. Built twice with
 * different -DTWO_NAME, it is two translation units of one source file name. */
#ifndef TWO_NAME
#define TWO_NAME two
#endif
static volatile int sink;
__attribute__((noinline)) static int helper(int x)
{
    sink -= x;
    return x * 2;
}
int TWO_NAME(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += helper(i);
    return s;
}
