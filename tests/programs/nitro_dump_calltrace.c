/* A call trace buffer saved to a file, for `hookprof nitro` (docs/nitro.md, "Decoding a dump
 * with hookprof nitro"). The seed's test1 -> test2 -> test3 (seeds/nitro-sdk-profiler.txt §3.5).
 *
 * Usage: nitro_dump_calltrace MODE OUT
 *   Prints OS_DumpCallTrace's text into OUT.txt (through a print function that keeps only the
 *   dump) and writes the buffer, from the address given to OS_InitCallTrace for the size
 *   given, to OUT.bin: what a debugger's memory save of the buffer holds.
 *   MODE:
 *     stack            §3.5.1: the dump inside test3
 *     log              §3.5.2: test1(0x100), test1(0x200), the dump after them
 *     log-wrap         log mode in a 4-call ring after 9 calls: the ring has wrapped
 *     stack-noregs     stack mode without r0-r3 (OS_InitCallTraceEx(..., FALSE))
 *     stack-overflow   a 2-call stack, the dump in test3: "1 calls were not recorded"
 *     stack-unmatched  initialised in a function that returns: "1 returns had no record"
 *     stack-misaligned the buffer at an address 4 past an 8-byte boundary: the header at 4
 * Build: hookcc -profile --hook-runtime=calltrace nitro_dump_calltrace.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hookcc/nitro.h>

#define BUFFERSIZE 0x300
/* u64 storage so that "+ 4" is 4 past an 8-byte boundary. */
static u64 storage[BUFFERSIZE / sizeof(u64) + 1];

static const char *mode;
static const char *out_prefix;
static char *buffer;
static u32 buffer_size;

/* Not profiled (§1.3): saving must not add records to the buffer it saves. */
#pragma profile off
#include "nitro_dump_save.h"

/* OS_DumpCallTrace's text to OUT.txt, the buffer's bytes to OUT.bin. */
static void dump_and_save(void)
{
    captured_len = 0;
    OS_DumpCallTrace();
    write_file(".txt", captured, captured_len);
    write_file(".bin", buffer, buffer_size);
}
#pragma profile reset

int test1(int a);
int test2(int a);
int test3(int a);

int test1(int a) { return test2(a + 1); }
int test2(int a) { return test3(a + 2); }
int test3(int a)
{
    if (strncmp(mode, "stack", 5) == 0)
        dump_and_save();
    return a + 4;
}

void setup(void)
{
    OS_InitCallTrace(buffer, buffer_size, OS_CALLTRACE_STACK);
}

void NitroMain(void)
{
    OS_Init();
    buffer = (char *)storage;
    buffer_size = BUFFERSIZE;
    if (strcmp(mode, "stack") == 0) {
        OS_InitCallTrace(buffer, buffer_size, OS_CALLTRACE_STACK);
        (void)test1(0x100);
    } else if (strcmp(mode, "log") == 0) {
        OS_InitCallTrace(buffer, buffer_size, OS_CALLTRACE_LOG);
        (void)test1(0x100);
        (void)test1(0x200);
        dump_and_save();
    } else if (strcmp(mode, "log-wrap") == 0) {
        buffer_size = OS_CalcCallTraceBufferSize(4);
        OS_InitCallTrace(buffer, buffer_size, OS_CALLTRACE_LOG);
        for (int i = 1; i <= 3; i++)
            (void)test1(i * 0x100);
        dump_and_save();
    } else if (strcmp(mode, "stack-noregs") == 0) {
        OS_InitCallTraceEx(buffer, buffer_size, OS_CALLTRACE_STACK, FALSE);
        (void)test1(0x100);
    } else if (strcmp(mode, "stack-overflow") == 0) {
        buffer_size = OS_CalcCallTraceBufferSize(2);
        OS_InitCallTrace(buffer, buffer_size, OS_CALLTRACE_STACK);
        (void)test1(0x100);
    } else if (strcmp(mode, "stack-unmatched") == 0) {
        setup();
        (void)test1(0x100);
    } else if (strcmp(mode, "stack-misaligned") == 0) {
        buffer = (char *)storage + 4;
        OS_InitCallTrace(buffer, buffer_size, OS_CALLTRACE_STACK);
        (void)test1(0x100);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        exit(2);
    }
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
