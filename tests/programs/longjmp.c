/* longjmp out of 11 frames, 1000 times (tests/tests/trace_e2e.rs): work() calls setjmp, then
 * deep(10) recurses to deep(0), which longjmps back to work; work then calls after(). The exits
 * of the 11 deep frames are never recorded: hookcc's resync record at setjmp's second return
 * closes them, so that after() is work's child and the deepest stack is main, work and 11
 * deep frames (13). Prints 11000. */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;
static volatile int visits;

__attribute__((noinline)) void deep(int n)
{
    if (n == 0)
        longjmp(env, 1);
    visits++;
    deep(n - 1);
}

__attribute__((noinline)) void after(void)
{
    visits++;
}

__attribute__((noinline)) void work(void)
{
    if (setjmp(env) == 0)
        deep(10);
    after();
}

int main(void)
{
    for (int i = 0; i < 1000; i++)
        work();
    printf("%d\n", visits);
    return 0;
}
