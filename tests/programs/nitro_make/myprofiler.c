/* The program's own profiler (§5), linked when NITRO_PROFILE_TYPE is not given: it prints
 * "> name" at every profiled function's entry and "<" at its exit. The seed's profiler
 * functions take the name only; the compiler's extra arguments (lr, r0–r3) are ignored.
 * The file is compiled like the others, with -profile: nothing in it gets hooks, as the hooks
 * never do and the rest is under `#pragma profile off`. */
#include <stdio.h>

#pragma profile off

void __PROFILE_ENTRY(const char *name)
{
    printf("> %s\n", name);
}

void __PROFILE_EXIT(void)
{
    printf("<\n");
}
