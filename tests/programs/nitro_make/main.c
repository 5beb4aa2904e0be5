/* Runs two frames of the game under whichever profiler the build chose (see Makefile). */
#include <stdio.h>

#include "game.h"

#if defined(PROFILE_TYPE_CALLTRACE) || defined(PROFILE_TYPE_FUNCTIONCOST)
#include <hookcc/nitro.h>
#endif

#if defined(PROFILE_TYPE_CALLTRACE)
static u32 traceBuffer[0x400 / sizeof(u32)];
#elif defined(PROFILE_TYPE_FUNCTIONCOST)
static u32 costBuffer[0x1000 / sizeof(u32)];
static u32 statBuffer[0x400 / sizeof(u32)];
#endif

/* Prints to stdout, so that the test compares one stream. */
#pragma profile off
static void print_to_stdout(const char *text, void *context)
{
    (void)context;
    fputs(text, stdout);
}

int main(void)
{
#if defined(PROFILE_TYPE_CALLTRACE)
    OS_SetProfilePrintFunction(print_to_stdout, NULL);
    OS_InitCallTrace(traceBuffer, sizeof traceBuffer, OS_CALLTRACE_LOG);
#elif defined(PROFILE_TYPE_FUNCTIONCOST)
    OS_SetProfilePrintFunction(print_to_stdout, NULL);
    OS_InitFunctionCost(costBuffer, sizeof costBuffer);
    OS_InitStatistics(statBuffer, sizeof statBuffer);
#else
    (void)print_to_stdout;
#endif

    for (int frame = 1; frame <= 2; frame++)
        game_frame(frame);

#if defined(PROFILE_TYPE_CALLTRACE)
    OS_DumpCallTrace();
#elif defined(PROFILE_TYPE_FUNCTIONCOST)
    OS_CalcStatistics(statBuffer);
    OS_DumpStatistics(statBuffer);
#endif
    printf("score %d\n", game_score());
    fflush(stdout);
    return 0;
}
