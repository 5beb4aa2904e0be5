/* Call trace: sizes, dump format (64-bit values), enable/disable/restore, clear, a print
 * function with hooks of its own, errno, and building with -DOS_CALLTRACE_NO_REGISTERS
 * (run.sh builds this file both ways). */
#include <errno.h>

#include "nitro_test.h"

static u32 buffer[0x600 / sizeof(u32)];

#ifdef OS_CALLTRACE_NO_REGISTERS
#define REGS(r0, r1, r2, r3) ""
#define WORDS 3
#else
#define REGS(r0, r1, r2, r3) ", r0=" r0 ", r1=" r1 ", r2=" r2 ", r3=" r3
#define WORDS 7
#endif

void show(void) { OS_DumpCallTrace(); }
long wide(long a, long b, long c, long d, long e) { show(); return a + b + c + d + e; }
int leaf(int a) { return a + 1; }
int branch(int a) { return leaf(a) + leaf(a + 1); }
void clear_here(void) { OS_ClearCallTraceBuffer(); }
int clearing(int a) { clear_here(); return leaf(a); }

/* A print function with hooks: what it calls must not be recorded. */
static int hooked_prints;
void in_print(void) { hooked_prints++; }
void print_with_hooks(const char *text, void *context)
{
    in_print();
    nt_capture(text, context);
}

#pragma profile off
int main(void)
{
    nt_capture_start();

    /* OS_CalcCallTraceLines and OS_CalcCallTraceBufferSize agree, and a call takes WORDS words. */
    u32 one = OS_CalcCallTraceBufferSize(1), two = OS_CalcCallTraceBufferSize(2);
    NT_CHECK(two - one == WORDS * sizeof(void *), "record size %u", two - one);
    for (int n = 0; n < 200; n++) {
        NT_CHECK(OS_CalcCallTraceLines(OS_CalcCallTraceBufferSize(n)) == n, "lines %d", n);
        NT_CHECK(OS_CalcCallTraceLines(OS_CalcCallTraceBufferSize(n + 1) - 1) == n, "lines- %d", n);
    }
    NT_CHECK(OS_CalcCallTraceLines(0) == 0 && OS_CalcCallTraceBufferSize(-1) == one - (two - one),
             "degenerate sizes");

    /* Stack mode; disabled calls leave nothing. */
    OS_InitCallTrace(buffer, sizeof buffer, OS_CALLTRACE_STACK);
    NT_CHECK(OS_DisableCallTrace() == TRUE, "was enabled");
    (void)branch(1);
    show(); /* disabled: show is not recorded, the dump still prints */
    NT_CHECK(OS_RestoreCallTrace(TRUE) == FALSE, "was disabled");
    NT_CHECK(OS_EnableCallTrace() == TRUE, "was enabled again");
    nt_expect_captured("OS_DumpCallTrace: lr=ADDR\n");

    /* Values wider than 32 bits get 16 digits; the fifth argument is not recorded. */
    errno = 4242;
    (void)wide(0x10, 0x7fffffff, 0, 3, 5);
    if (sizeof(long) == 8)
        (void)wide((long)0x123456789, -1L, 0, 3, 5);
    NT_CHECK(errno == 4242, "errno changed to %d", errno);
    if (sizeof(long) == 8)
        nt_expect_captured("OS_DumpCallTrace: lr=ADDR\n"
                           "show: lr=ADDR" REGS("00000000", "00000000", "00000000", "00000000") "\n"
                           "wide: lr=ADDR" REGS("00000010", "7fffffff", "00000000", "00000003") "\n"
                           "OS_DumpCallTrace: lr=ADDR\n"
                           "show: lr=ADDR" REGS("00000000", "00000000", "00000000", "00000000") "\n"
                           "wide: lr=ADDR" REGS("0000000123456789", "ffffffffffffffff", "00000000", "00000003") "\n");
    else
        nt_capture_start();

    /* A print function with hooks: its calls are not recorded, the stack is unchanged. */
    OS_SetProfilePrintFunction(print_with_hooks, NULL);
    (void)wide(1, 2, 3, 4, 5);
    OS_SetProfilePrintFunction(nt_capture, NULL);
    (void)wide(1, 2, 3, 4, 5);
    NT_CHECK(hooked_prints == 3, "print function called %d times", hooked_prints);
    nt_expect_captured("OS_DumpCallTrace: lr=ADDR\n"
                       "show: lr=ADDR" REGS("00000000", "00000000", "00000000", "00000000") "\n"
                       "wide: lr=ADDR" REGS("00000001", "00000002", "00000003", "00000004") "\n"
                       "OS_DumpCallTrace: lr=ADDR\n"
                       "show: lr=ADDR" REGS("00000000", "00000000", "00000000", "00000000") "\n"
                       "wide: lr=ADDR" REGS("00000001", "00000002", "00000003", "00000004") "\n");

    /* Clearing in stack mode inside a call: that call and clear_here return without a record
     * (counted, and said); calls after it are recorded as usual. */
    (void)clearing(7);
    (void)wide(9, 0, 0, 0, 0);
    nt_expect_captured("OS_DumpCallTrace: lr=ADDR\n"
                       "show: lr=ADDR" REGS("00000000", "00000000", "00000000", "00000000") "\n"
                       "wide: lr=ADDR" REGS("00000009", "00000000", "00000000", "00000000") "\n"
                       "OS_DumpCallTrace: 2 returns had no record to remove: their functions were "
                       "called before OS_InitCallTrace or OS_ClearCallTraceBuffer (§3.4: initialise "
                       "from the outermost function)\n");

    /* Log mode: levels, clear. */
    OS_InitCallTrace(buffer, sizeof buffer, OS_CALLTRACE_LOG);
    (void)branch(1);
    OS_DumpCallTrace();
    nt_expect_captured("OS_DumpCallTrace: lr=ADDR\n"
                       " leaf: lr=ADDR" REGS("00000002", "00000000", "00000000", "00000000") "\n"
                       " leaf: lr=ADDR" REGS("00000001", "00000000", "00000000", "00000000") "\n"
                       "branch: lr=ADDR" REGS("00000001", "00000000", "00000000", "00000000") "\n");
    (void)clearing(3);
    (void)leaf(4);
    OS_DumpCallTrace();
    nt_expect_captured("OS_DumpCallTrace: lr=ADDR\n"
                       "leaf: lr=ADDR" REGS("00000004", "00000000", "00000000", "00000000") "\n"
                       " leaf: lr=ADDR" REGS("00000003", "00000000", "00000000", "00000000") "\n");
    OS_ClearCallTraceBuffer();
    OS_DumpCallTrace();
    nt_expect_captured("OS_DumpCallTrace: lr=ADDR\n");
    printf("ok\n");
    return 0;
}
