/* Call trace: a full stack is reported once, the calls beyond it are not recorded and their
 * returns pop nothing, so the stack is right again afterwards; the log ring wraps. Buffers end
 * at an inaccessible page: a write past them would crash. */
#include <errno.h>

#include "nitro_test.h"

int rec(int n)
{
    if (n > 0)
        return rec(n - 1) + 1;
    OS_DumpCallTrace();
    return 0;
}

int after(int x) { OS_DumpCallTrace(); return x; }
int a(int x) { return x; }
int b(int x) { return a(x) + 1; }

#define R0(v) ", r0=" v ", r1=00000000, r2=00000000, r3=00000000"

#pragma profile off
int main(void)
{
    nt_capture_start();
    u32 size = OS_CalcCallTraceBufferSize(4);
    void *stack = nt_guarded(size);
    OS_InitCallTrace(stack, size, OS_CALLTRACE_STACK);
    errno = 4242;
    (void)rec(7);
    NT_CHECK(errno == 4242, "errno changed to %d", errno);
    nt_expect_captured("OS_CallTrace: stack overflow in rec: lr=ADDR" R0("00000003")
                       "; the buffer holds 4 calls, deeper calls are not recorded (size it with "
                       "OS_CalcCallTraceBufferSize)\n"
                       "OS_DumpCallTrace: lr=ADDR\n"
                       "rec: lr=ADDR" R0("00000004") "\n"
                       "rec: lr=ADDR" R0("00000005") "\n"
                       "rec: lr=ADDR" R0("00000006") "\n"
                       "rec: lr=ADDR" R0("00000007") "\n"
                       "OS_DumpCallTrace: 4 calls were not recorded: the buffer holds 4; the 4 "
                       "innermost calls in progress are missing above\n");
    /* All returned: the stack is empty again and records as before. */
    (void)after(9);
    (void)rec(2);
    nt_expect_captured("OS_DumpCallTrace: lr=ADDR\n"
                       "after: lr=ADDR" R0("00000009") "\n"
                       "OS_DumpCallTrace: 4 calls were not recorded: the buffer holds 4\n"
                       "OS_DumpCallTrace: lr=ADDR\n"
                       "rec: lr=ADDR" R0("00000000") "\n"
                       "rec: lr=ADDR" R0("00000001") "\n"
                       "rec: lr=ADDR" R0("00000002") "\n"
                       "OS_DumpCallTrace: 4 calls were not recorded: the buffer holds 4\n");

    /* The log ring keeps the newest calls. */
    size = OS_CalcCallTraceBufferSize(3);
    void *ring = nt_guarded(size);
    OS_InitCallTrace(ring, size, OS_CALLTRACE_LOG);
    for (int i = 1; i <= 4; i++)
        (void)b(i);
    OS_DumpCallTrace();
    nt_expect_captured("OS_DumpCallTrace: lr=ADDR\n"
                       " a: lr=ADDR" R0("00000004") "\n"
                       "b: lr=ADDR" R0("00000004") "\n"
                       " a: lr=ADDR" R0("00000003") "\n");
    /* Many times round. */
    for (int i = 1; i <= 1000; i++)
        (void)a(i);
    OS_DumpCallTrace();
    nt_expect_captured("OS_DumpCallTrace: lr=ADDR\n"
                       "a: lr=ADDR" R0("000003e8") "\n"
                       "a: lr=ADDR" R0("000003e7") "\n"
                       "a: lr=ADDR" R0("000003e6") "\n");
    printf("ok\n");
    return 0;
}
