/* What a benchmark program (micro.c, lua_main.c) must do for the runtimes that need the program's
 * help: NITRO call trace and function cost (OS_Init* from <hookcc/nitro.h>), TI records
 * (hook_init from <hookcc/ti.h>). bench/bench.py selects one with -D:
 *
 *   BENCH_NITRO_CALLTRACE=1     OS_InitCallTrace(..., OS_CALLTRACE_STACK)
 *   BENCH_NITRO_CALLTRACE=2     OS_InitCallTrace(..., OS_CALLTRACE_LOG)
 *   BENCH_NITRO_FUNCTIONCOST    OS_InitFunctionCost with room for every call of the run, and
 *                               OS_CalcStatistics once at the end (outside the timed loop)
 *   BENCH_TI_RECORDS=N          hook_init with a buffer of N records (a power of two)
 *   BENCH_PFP                   pfpCreate, pfpCalibrate and point 1 enabled: micro.c's run()
 *                               brackets every leaf() call with pfpBegin(1)/pfpEnd(1, 0)
 *   BENCH_XRAY                  __xray_log_init_mode($BENCH_XRAY_INIT_MODE) at the start, and
 *                               __xray_log_finalize and __xray_log_flushLog at the end: FDR
 *                               mode keeps its records in memory until told to write them
 *                               (compiler-rt 19 registers no exit handler for it)
 *
 * Every other variant needs nothing here (hooks, sleds or mcount are the compiler's; the trace
 * runtime, XRay, gprof, uftrace and the rdtsc logger start themselves).
 *
 * For in-memory recorders the program says on stderr how many bytes of records a call pair
 * adds ("hookbench: record_bytes_per_call=B"), since they write no file to measure.
 *
 * The helpers are inlined and never hooked, so they add no instrumented call.
 */
#ifndef BENCH_VARIANT_INIT_H
#define BENCH_VARIANT_INIT_H

#include <stdio.h>
#include <stdlib.h>

#if defined(__clang__)
#define BENCH_HELPER                                                                           \
    static inline __attribute__((always_inline, no_instrument_function, xray_never_instrument))
#else
#define BENCH_HELPER static inline __attribute__((always_inline, no_instrument_function))
#endif

/* BENCH_CALLS in the environment overrides the program's own estimate of its calls (the Lua
 * driver cannot know them; bench.py passes the count the native trace measured). */
BENCH_HELPER unsigned long long bench_calls(unsigned long long estimate)
{
    const char *e = getenv("BENCH_CALLS");
    return e && *e ? strtoull(e, NULL, 10) : estimate;
}

#if defined(BENCH_NITRO_CALLTRACE)
#include <hookcc/nitro.h>

/* Stack mode keeps the current call stack only; log mode a ring of the latest calls. 64 KiB is
 * deeper than any stack of the workloads and leaves log mode wrapping all the time. */
#define BENCH_CALLTRACE_BYTES (64u * 1024u)
static unsigned int bench_calltrace_buffer[BENCH_CALLTRACE_BYTES / sizeof(unsigned int)];

BENCH_HELPER void bench_variant_init(unsigned long long calls)
{
    (void)calls;
    OS_InitCallTrace(bench_calltrace_buffer, BENCH_CALLTRACE_BYTES,
                     BENCH_NITRO_CALLTRACE == 1 ? OS_CALLTRACE_STACK : OS_CALLTRACE_LOG);
}

BENCH_HELPER void bench_variant_finish(void)
{
    /* Log mode adds one line per call; stack mode overwrites in place. */
    int lines = OS_CalcCallTraceLines(BENCH_CALLTRACE_BYTES);
    double per_call = BENCH_NITRO_CALLTRACE == 1 || lines <= 0
                          ? 0.0
                          : (double)BENCH_CALLTRACE_BYTES / (double)lines;
    fprintf(stderr, "hookbench: record_bytes_per_call=%.1f\n", per_call);
}

#elif defined(BENCH_PFP)
#include <hookcc/pfp.h>

BENCH_HELPER void bench_variant_init(unsigned long long calls)
{
    (void)calls;
    pfpCreate();
    pfpCalibrate(1000, 1);
    pfpEnable(1);
}

BENCH_HELPER void bench_variant_finish(void)
{
    pfpStats_t s;
    pfpGetStats(1, &s);
    /* Statistics only: no records. The point's count says every region was measured. */
    fprintf(stderr, "hookbench: record_bytes_per_call=0 pfp_regions=%u\n", (unsigned)s.n_count);
}

#elif defined(BENCH_NITRO_FUNCTIONCOST)
#include <hookcc/nitro.h>

static void *bench_cost_buffer;
static unsigned long long bench_cost_lines;
#define BENCH_STAT_BYTES (1u << 20)
static unsigned int bench_stat_buffer[BENCH_STAT_BYTES / sizeof(unsigned int)];

BENCH_HELPER void bench_variant_init(unsigned long long calls)
{
    /* An entry line and an exit line per call, so that nothing is summarized inside the timed
     * loop: what is measured is the hooks, as NITRO-SDK's own cost figures are. */
    bench_cost_lines = 2 * bench_calls(calls) + 1024;
    if (bench_cost_lines > (1ull << 27)) /* the size is a u32 */
        bench_cost_lines = 1ull << 27;
    unsigned long size = OS_CalcFunctionCostBufferSize((int)bench_cost_lines);
    bench_cost_buffer = malloc(size);
    if (!bench_cost_buffer) {
        fprintf(stderr, "hookbench: cannot allocate %lu bytes for the function cost buffer\n", size);
        exit(3);
    }
    /* OS_InitFunctionCost zeroes the whole buffer (free record slots hold 0), which touches
     * every page now: a buffer this large is fresh memory, and its page faults inside the loop
     * would be charged to the hooks (NITRO programs reuse a small buffer). A memset here did
     * not: clang turns malloc + memset(0) into calloc, which leaves fresh pages untouched. */
    OS_InitFunctionCost(bench_cost_buffer, size);
    OS_InitStatistics(bench_stat_buffer, BENCH_STAT_BYTES);
}

BENCH_HELPER void bench_variant_finish(void)
{
    OS_CalcStatistics(bench_stat_buffer);
    unsigned long size = OS_CalcFunctionCostBufferSize((int)bench_cost_lines);
    fprintf(stderr, "hookbench: record_bytes_per_call=%.1f\n",
            2.0 * (double)size / (double)bench_cost_lines);
}

#elif defined(BENCH_TI_RECORDS)
#include <hookcc/ti.h>

HOOKCC_TI_PROFILE_BUFFER(BENCH_TI_RECORDS);

BENCH_HELPER void bench_variant_init(unsigned long long calls)
{
    (void)calls;
    hook_init();
}

BENCH_HELPER void bench_variant_finish(void)
{
    /* The hosted runtime writes PREFIX.bin and PREFIX.dat at exit; bench.py measures .bin. */
    fprintf(stderr, "hookbench: ti_records=%u ti_dropped=%lu\n", uiProfileDataCnt,
            hookcc_ti_dropped);
}

#elif defined(BENCH_XRAY)
/* <xray/xray_log_interface.h> is C++ only; these two are extern "C" and return an enum. */
int __xray_log_init_mode(const char *mode, const char *config);
int __xray_log_finalize(void);
int __xray_log_flushLog(void);

BENCH_HELPER void bench_variant_init(unsigned long long calls)
{
    (void)calls;
    /* xray_mode=xray-fdr in XRAY_OPTIONS selects FDR mode but, in compiler-rt 19, does not
     * initialize it (basic mode initializes itself): without this call nothing is recorded. */
    const char *mode = getenv("BENCH_XRAY_INIT_MODE");
    if (mode && *mode)
        __xray_log_init_mode(mode, "");
}

BENCH_HELPER void bench_variant_finish(void)
{
    __xray_log_finalize();
    __xray_log_flushLog();
}

#else

BENCH_HELPER void bench_variant_init(unsigned long long calls)
{
    (void)calls;
}

BENCH_HELPER void bench_variant_finish(void)
{
}

#endif

#endif /* BENCH_VARIANT_INIT_H */
