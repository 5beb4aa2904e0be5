/* GCC's -finstrument-functions hooks, defined by the program: each prints the function entered
 * or left (found in a table of the program's functions) and whether a call site came with it.
 * Built the same way by gcc (or clang) and by hookcc, the output must be the same. */
#include <stdio.h>

#include "gcc_hooks_excluded.h"

static int helper(int x) { return x + 1; }
int work(int x) { return helper(x) + in_header(x); }
int main(void);

#define NOINSTR __attribute__((no_instrument_function))

static NOINSTR const char *name_of(void *fn)
{
    if (fn == (void *)main)
        return "main";
    if (fn == (void *)work)
        return "work";
    if (fn == (void *)helper)
        return "helper";
    if (fn == (void *)in_header)
        return "in_header";
    return "?";
}

NOINSTR void __cyg_profile_func_enter(void *this_fn, void *call_site)
{
    printf("enter %s%s\n", name_of(this_fn), call_site ? "" : " (no call site)");
}

NOINSTR void __cyg_profile_func_exit(void *this_fn, void *call_site)
{
    printf("exit %s%s\n", name_of(this_fn), call_site ? "" : " (no call site)");
}

int main(void)
{
    int sum = 0;
    for (int i = 0; i < 2; i++)
        sum += work(i);
    printf("sum %d\n", sum);
    return 0;
}
