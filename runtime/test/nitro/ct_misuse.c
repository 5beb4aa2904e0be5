/* Call trace misuse the seed warns about, caught and reported: use before OS_InitCallTrace, a
 * buffer too small or misaligned, a bad mode, NULL, a buffer another thread records into
 * (§3.7), a bad pointer given to OS_SwitchProfilerThread. Buffers end at an inaccessible page. */
#include "nitro_test.h"

int f(int x) { return x + 1; }
int g(int x) { return f(x) * 2; }
int h(int x) { return g(x) + f(x); }
void show(void) { OS_DumpCallTrace(); }

#define R0(v) ", r0=" v ", r1=00000000, r2=00000000, r3=00000000"

static u32 shared[0x400 / sizeof(u32)];

#pragma profile off
static void *second_user(void *arg)
{
    nt_capture_reset();
    OS_InitCallTrace((char *)shared + (uintptr_t)arg, 0x200, OS_CALLTRACE_LOG);
    const char *report = nt_captured();
    NT_CHECK(strstr(report, "OS_InitCallTrace: the buffer at ") == report &&
                 strstr(report, " is in use by thread ") != NULL &&
                 strstr(report, "; each thread needs a buffer of its own. Nothing is recorded\n"),
             "no report of the shared buffer: %s", report);
    nt_capture_reset();
    (void)g(5);
    show();
    nt_expect_captured("OS_DumpCallTrace: this thread has no call trace buffer (call "
                       "OS_InitCallTrace first)\n");
    return NULL;
}

static void *owner_then_exit(void *arg)
{
    OS_InitCallTrace(arg, 0x200, OS_CALLTRACE_STACK);
    (void)f(1);
    return NULL;
}

static void *next_owner(void *arg)
{
    nt_capture_reset();
    OS_InitCallTrace(arg, 0x200, OS_CALLTRACE_LOG);
    (void)f(2);
    OS_DumpCallTrace();
    nt_expect_captured("OS_DumpCallTrace: lr=ADDR\n"
                       "f: lr=ADDR" R0("00000002") "\n");
    return NULL;
}

int main(void)
{
    char want[512];
    nt_capture_start();

    /* Before any OS_InitCallTrace. */
    (void)h(1);
    OS_DumpCallTrace();
    OS_ClearCallTraceBuffer();
    NT_CHECK(OS_EnableCallTrace() == FALSE && OS_DisableCallTrace() == FALSE &&
                 OS_RestoreCallTrace(TRUE) == FALSE, "enable state without a buffer");
    nt_expect_captured("OS_DumpCallTrace: this thread has no call trace buffer (call "
                       "OS_InitCallTrace first)\n"
                       "OS_ClearCallTraceBuffer: this thread has no call trace buffer (call "
                       "OS_InitCallTrace first)\n");

    /* Too small. */
    u32 small = OS_CalcCallTraceBufferSize(1) - 8;
    OS_InitCallTrace(nt_guarded(small), small, OS_CALLTRACE_STACK);
    (void)h(1);
    snprintf(want, sizeof want,
             "OS_InitCallTrace: a buffer of %u bytes is too small: one call needs %u "
             "(OS_CalcCallTraceBufferSize); nothing is recorded\n",
             small, OS_CalcCallTraceBufferSize(1));
    nt_expect_captured(want);

    /* NULL, a bad mode. */
    OS_InitCallTrace(NULL, 0x100, OS_CALLTRACE_STACK);
    OS_InitCallTrace(shared, sizeof shared, (OSCallTraceMode)7);
    show();
    nt_expect_captured("OS_InitCallTrace: the buffer is NULL; nothing is recorded\n"
                       "OS_InitCallTrace: mode 7 is neither OS_CALLTRACE_STACK nor "
                       "OS_CALLTRACE_LOG; nothing is recorded\n"
                       "OS_DumpCallTrace: this thread has no call trace buffer (call "
                       "OS_InitCallTrace first)\n");

    /* Misaligned: the header moves to the next 8-byte boundary, within the buffer. */
    u32 two = OS_CalcCallTraceBufferSize(2);
    char *area = nt_guarded(two + 8);
    OS_InitCallTrace(area + 4, two + 4, OS_CALLTRACE_STACK);
    (void)h(3); /* h, g, f: the third does not fit */
    OS_InitCallTrace(area + 4, OS_CalcCallTraceBufferSize(1), OS_CALLTRACE_STACK);
    snprintf(want, sizeof want,
             "OS_CallTrace: stack overflow in f: lr=ADDR" R0("00000003")
             "; the buffer holds 2 calls, deeper calls are not recorded (size it with "
             "OS_CalcCallTraceBufferSize)\n"
             "OS_InitCallTrace: a buffer of %u bytes is too small: one call needs %u from an "
             "8-byte aligned address (OS_CalcCallTraceBufferSize); nothing is recorded\n",
             OS_CalcCallTraceBufferSize(1), OS_CalcCallTraceBufferSize(1));
    nt_expect_captured(want);

    /* Another thread may not record into this thread's buffer, nor into part of it. */
    OS_InitCallTrace(shared, sizeof shared, OS_CALLTRACE_LOG);
    nt_run_thread(second_user, (void *)0);
    nt_run_thread(second_user, (void *)0x100);
    (void)f(7);
    OS_DumpCallTrace();
    nt_expect_captured("OS_DumpCallTrace: lr=ADDR\n"
                       "f: lr=ADDR" R0("00000007") "\n");

    /* Once its thread has ended, a buffer is free for another. */
    static u32 handed_on[0x200 / sizeof(u32)];
    nt_run_thread(owner_then_exit, handed_on);
    nt_run_thread(next_owner, handed_on);

    /* OS_SwitchProfilerThread with something that is not a buffer. */
    static u32 garbage[64];
    void *previous = OS_SwitchProfilerThread(garbage);
    NT_CHECK(previous != NULL, "the main thread's buffer");
    (void)f(8);
    show();
    nt_expect_captured("OS_SwitchProfilerThread: not a call trace buffer (pass what "
                       "OS_SwitchProfilerThread returned, or NULL); the incoming thread records "
                       "nothing\n"
                       "OS_DumpCallTrace: this thread has no call trace buffer (call "
                       "OS_InitCallTrace first)\n");
    NT_CHECK(OS_SwitchProfilerThread(previous) == NULL, "nothing was installed");
    (void)f(9);
    OS_DumpCallTrace();
    nt_expect_captured("OS_DumpCallTrace: lr=ADDR\n"
                       "f: lr=ADDR" R0("00000009") "\n"
                       "f: lr=ADDR" R0("00000007") "\n");
    printf("ok\n");
    return 0;
}
