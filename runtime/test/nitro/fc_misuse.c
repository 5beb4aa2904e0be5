/* Function cost: misuse caught and reported (use before init, buffers too small, a full
 * measurement or statistics buffer, a buffer another thread measures into), and the buffer
 * semantics around it (calls in progress across OS_CalcStatistics, clear, disable). Buffers
 * end at an inaccessible page. */
#include "nitro_test.h"

void f(void) {}
void g(void) {}
void h(void) {}
void outer(void) { f(); f(); f(); }
void run(void *stats) { f(); OS_CalcStatistics(stats); f(); }

#pragma profile off

#define expect_dump(want) (nt_expect_text(nt_blank_costs((char *)nt_captured()), want), nt_capture_start())

static u32 shared[0x400 / sizeof(u32)];

static void *second_user(void *arg)
{
    (void)arg;
    nt_capture_reset();
    OS_InitFunctionCost(shared, sizeof shared);
    const char *report = nt_captured();
    NT_CHECK(strstr(report, "OS_InitFunctionCost: the buffer at ") == report &&
                 strstr(report, "; each thread needs a buffer of its own. Nothing is recorded\n"),
             "no report of the shared buffer: %s", report);
    return NULL;
}

static void *measure_and_exit(void *arg)
{
    OS_InitFunctionCost(arg, 0x400);
    g();
    g();
    return NULL;
}

static void *summarize_other(void *stats)
{
    nt_capture_reset();
    OS_CalcThreadStatistics(stats, shared); /* the main thread measures into it */
    nt_expect_captured("OS_CalcThreadStatistics: a running thread measures into this buffer; it "
                       "must summarize it itself (OS_CalcStatistics)\n");
    return NULL;
}

int main(void)
{
    char want[512];
    static u32 stats[0x400 / sizeof(u32)], blank[0x100 / sizeof(u32)];
    nt_capture_start();

    /* Before any init. */
    f();
    OS_InitStatistics(stats, sizeof stats);
    OS_CalcStatistics(stats);
    OS_DumpStatistics(blank);
    OS_CalcStatistics(blank);
    OS_ClearFunctionCostBuffer();
    NT_CHECK(OS_EnableFunctionCost() == FALSE && OS_DisableFunctionCost() == FALSE &&
                 OS_RestoreFunctionCost(TRUE) == FALSE, "enable state without a buffer");
    OS_DumpStatistics(stats);
    nt_expect_captured("OS_CalcStatistics: this thread has no function cost buffer (call "
                       "OS_InitFunctionCost first)\n"
                       "OS_DumpStatistics: not a statistics buffer (call OS_InitStatistics first)\n"
                       "OS_CalcStatistics: not a statistics buffer (call OS_InitStatistics first)\n"
                       "OS_CalcStatistics: this thread has no function cost buffer (call "
                       "OS_InitFunctionCost first)\n"
                       "OS_ClearFunctionCostBuffer: this thread has no function cost buffer (call "
                       "OS_InitFunctionCost first)\n");

    /* Sizes. */
    NT_CHECK(OS_CalcFunctionCostBufferSize(2) - OS_CalcFunctionCostBufferSize(1) == 24, "24 bytes");
    for (int n = 0; n < 100; n++)
        NT_CHECK(OS_CalcFunctionCostLines(OS_CalcFunctionCostBufferSize(n)) == n, "lines %d", n);
    u32 small = OS_CalcFunctionCostBufferSize(1) - 8;
    OS_InitFunctionCost(nt_guarded(small), small);
    OS_InitStatistics(nt_guarded(80), 80);
    OS_InitFunctionCost(NULL, 100);
    snprintf(want, sizeof want,
             "OS_InitFunctionCost: a buffer of %u bytes is too small: one record needs %u "
             "(OS_CalcFunctionCostBufferSize); nothing is measured\n"
             "OS_InitStatistics: a buffer of 80 bytes is too small: one function needs 104\n"
             "OS_InitFunctionCost: the buffer is NULL; nothing is measured\n",
             small, OS_CalcFunctionCostBufferSize(1));
    nt_expect_captured(want);

    /* A full measurement buffer: 8 records, 6 kept; the 2 calls in progress at that point are
     * not counted, the 2 complete ones are. Nothing is written past the buffer. */
    u32 six = OS_CalcFunctionCostBufferSize(6);
    void *full = nt_guarded(six);
    OS_InitFunctionCost(full, six);
    outer();
    OS_CalcStatistics(stats);
    OS_DumpStatistics(stats);
    expect_dump("OS_CalcStatistics: the function cost buffer was full: 2 records were not kept, so "
                "2 calls in progress then are not counted; summarize more often or use a larger "
                "buffer (OS_CalcFunctionCostBufferSize)\n"
                "f: count 2, cost C\n");
    /* After the summary it measures again. */
    f();
    f();
    g();
    OS_CalcStatistics(stats);
    OS_DumpStatistics(stats);
    expect_dump("f: count 4, cost C\n"
                "g: count 1, cost C\n");

    /* A full statistics buffer: room for 2 functions. */
    u32 two = 80 + 2 * 24;
    void *tiny = nt_guarded(two);
    OS_InitStatistics(tiny, two);
    static u32 big[0x1000 / sizeof(u32)];
    OS_InitFunctionCost(big, sizeof big);
    f();
    g();
    h();
    h();
    OS_CalcStatistics(tiny);
    OS_DumpStatistics(tiny);
    expect_dump("f: count 1, cost C\n"
                "g: count 1, cost C\n"
                "OS_DumpStatistics: 2 calls of other functions are not counted: the statistics "
                "buffer holds 2 functions\n");

    /* A call in progress across OS_CalcStatistics is counted when it returns. */
    OS_InitStatistics(stats, sizeof stats);
    run(stats);
    OS_CalcStatistics(stats);
    OS_DumpStatistics(stats);
    expect_dump("run: count 1, cost C\n"
                "f: count 2, cost C\n");

    /* Clear forgets; disabled calls are not measured. */
    OS_InitStatistics(stats, sizeof stats);
    g();
    OS_ClearFunctionCostBuffer();
    NT_CHECK(OS_DisableFunctionCost() == TRUE, "was enabled");
    h();
    NT_CHECK(OS_RestoreFunctionCost(TRUE) == FALSE, "was disabled");
    f();
    OS_CalcStatistics(stats);
    OS_DumpStatistics(stats);
    expect_dump("f: count 1, cost C\n");

    /* Another thread may not measure into this thread's buffer, nor summarize it. */
    OS_InitFunctionCost(shared, sizeof shared);
    nt_run_thread(second_user, NULL);
    nt_run_thread(summarize_other, stats);
    /* A buffer whose thread has ended may be summarized by another. */
    static u32 ended[0x400 / sizeof(u32)];
    nt_run_thread(measure_and_exit, ended);
    OS_InitStatistics(stats, sizeof stats);
    OS_CalcThreadStatistics(stats, ended);
    OS_DumpStatistics(stats);
    expect_dump("g: count 2, cost C\n");
    printf("ok\n");
    return 0;
}
