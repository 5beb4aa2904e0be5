/* Own native hooks (`hookcc --trace --hook-runtime=none`): each prints what it was passed, the
 * function's record, as the function's name and whether its address is the function's
 * (HOOKCC_NAME_OF, HOOKCC_FUNCTION_OF of <hookcc/trace.h>). tests/tests/records.rs. */
#include <hookcc/trace.h>
#include <stdio.h>
#include <string.h>

static int depth;
static void *square_seen;

HOOKCC_NATIVE_HOOK __attribute__((no_instrument_function)) void __hookcc_enter(void *fn)
{
    printf("%*s> %s\n", 2 * depth++, "", HOOKCC_NAME_OF(fn));
    if (strcmp(HOOKCC_NAME_OF(fn), "square") == 0)
        square_seen = HOOKCC_FUNCTION_OF(fn);
}

HOOKCC_NATIVE_HOOK __attribute__((no_instrument_function)) void __hookcc_exit(void *fn)
{
    printf("%*s< %s\n", 2 * --depth, "", HOOKCC_NAME_OF(fn));
}

HOOKCC_NATIVE_HOOK __attribute__((no_instrument_function)) void __hookcc_resync(void *fn)
{
    (void)fn;
}

__attribute__((noinline)) int square(int x)
{
    return x * x;
}

__attribute__((noinline)) int twice_square(int x)
{
    return 2 * square(x);
}

int main(void)
{
    int (*volatile f)(int) = twice_square;
    int r = f(3);
    printf("%d, square's address %s\n", r, square_seen == (void *)square ? "seen" : "not seen");
    return r == 18 ? 0 : 1;
}
