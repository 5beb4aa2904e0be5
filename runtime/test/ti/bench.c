/* Cost of one entry+exit pair, for docs/ti-runtime.md: a leaf function compiled with the TI
 * hooks, called 1M times after hook_init (the default 1 Mi-record buffer holds 2^20 records,
 * so the stop-when-full hooks record the first half of the calls and count the rest as
 * dropped; "circular" records them all). Not part of run.sh; measure with
 *   hookcc -O2 --entry_hook=entry_hook --entry_parm=address --exit_hook=exit_hook \
 *          --exit_parm=address --hook-runtime=ti bench.c -o bench
 *   valgrind --tool=callgrind --callgrind-out-file=cg.out ./bench [calls]
 *   callgrind_annotate cg.out | grep -E 'entry_hook|exit_hook|leaf'
 * (or with --entry_hook=entry_hook_circular --exit_hook=exit_hook_circular). */
#include <stdio.h>
#include <stdlib.h>

#include <hookcc/ti.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(unsigned long i)
{
    sink += i;
}

int main(int argc, char **argv)
{
    unsigned long calls = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
    hook_init();
    for (unsigned long i = 0; i < calls; i++)
        leaf(i);
    printf("records=%u dropped=%lu\n", uiProfileDataCnt, hookcc_ti_dropped);
    return 0;
}
