/* Function cost buffers saved to files, for `hookprof nitro` (docs/nitro.md, "Decoding a dump
 * with hookprof nitro"). The seed's example (seeds/nitro-sdk-profiler.txt §4.4): test1 once,
 * test2 three times, test3 four times.
 *
 * Usage: nitro_dump_functioncost MODE OUT
 *   Writes, through a print function that keeps the runtime's text:
 *     OUT.cost.bin   the measurement buffer just before OS_CalcStatistics
 *     OUT.calc.txt   what OS_CalcStatistics printed (nothing unless the buffer was full)
 *     OUT.stats.bin  the statistics buffer after it
 *     OUT.dump.txt   what OS_DumpStatistics printed
 *   The summary runs inside finish(), a profiled function whose call is still in progress.
 *   MODE:
 *     stats     the seed's example
 *     full      a measurement buffer of 7 records: records lost, a call in progress dropped, the summary says so
 *     dropped   a statistics buffer of 2 functions: "N calls of other functions ..."
 *     switch    test2 is switched out (OS_SwitchProfilerThread) in the middle of each call:
 *               the time away is recorded as intervals and subtracted from its calls
 * Build: hookcc -profile --hook-runtime=functioncost nitro_dump_functioncost.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hookcc/nitro.h>

#define COSTSIZE 0x3000
#define STATSIZE 0x300

static u64 CostBuffer[COSTSIZE / sizeof(u64)];
static u64 StatBuffer[STATSIZE / sizeof(u64)];
static u32 cost_size = COSTSIZE;
static u32 stat_size = STATSIZE;

static const char *mode;
static const char *out_prefix;
static volatile u32 sink;

/* Not profiled (§1.3): these must not add records to the buffers they save. */
#pragma profile off
#include "nitro_dump_save.h"

static void work(int n)
{
    for (int i = 0; i < n * 1000; i++)
        sink += (u32)i;
}

/* Switched out for a while, as a user-level scheduler would do around another thread. */
static void away(void)
{
    void *me = OS_SwitchProfilerThread(NULL);
    work(20);
    OS_SwitchProfilerThread(me);
}
#pragma profile reset

void test1(void) { work(1); }
void test2(void)
{
    work(4);
    if (strcmp(mode, "switch") == 0)
        away();
    work(4);
}
void test3(void) { work(1); }

void finish(void)
{
    write_file(".cost.bin", CostBuffer, cost_size);
    captured_len = 0;
    OS_CalcStatistics(&StatBuffer);
    write_file(".calc.txt", captured, captured_len);
    write_file(".stats.bin", StatBuffer, stat_size);
    captured_len = 0;
    OS_DumpStatistics(&StatBuffer);
    write_file(".dump.txt", captured, captured_len);
}

void NitroMain(void)
{
    OS_Init();
    OS_InitTick();
    if (strcmp(mode, "full") == 0)
        cost_size = OS_CalcFunctionCostBufferSize(7);
    else if (strcmp(mode, "dropped") == 0)
        stat_size = 80 + 2 * 24; /* docs/nitro.md: an 80-byte header, 24-byte lines */
    else if (strcmp(mode, "stats") != 0 && strcmp(mode, "switch") != 0) {
        fprintf(stderr, "unknown mode %s\n", mode);
        exit(2);
    }
    OS_InitFunctionCost(&CostBuffer, cost_size);
    OS_InitStatistics(&StatBuffer, stat_size);

    test1();
    for (int i = 0; i < 3; i++)
        test2();
    for (int i = 0; i < 4; i++)
        test3();

    finish();
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s MODE OUT\n", argv[0]);
        return 2;
    }
    mode = argv[1];
    out_prefix = argv[2];
    OS_SetProfilePrintFunction(capture, NULL);
    NitroMain();
    return 0;
}
