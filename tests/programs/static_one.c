/* With static_two.c and static_main.c: two translation units, each with its own
 * `static int helper()` (issue 27 item 6). one() calls its helper 3 times, two() its 5 times. */
static volatile int sink;
__attribute__((noinline)) static int helper(int x)
{
    sink += x;
    return x + 1;
}
int one(int n)
{
    int s = 0;
    for (int i = 0; i < n; i++)
        s += helper(i);
    return s;
}
