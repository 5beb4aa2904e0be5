/* hookcc's NITRO-SDK profiler runtimes: function call trace and function cost measurement
 * (seeds/nitro-sdk-profiler.txt §3, §4; docs/nitro.md).
 *
 * A program built with `-profile` (or `make NITRO_PROFILE=TRUE`) calls __PROFILE_ENTRY and
 * __PROFILE_EXIT in every function. NITRO_PROFILE_TYPE=CALLTRACE links runtime/src/calltrace.c,
 * which defines them and the OS_*CallTrace* functions below; NITRO_PROFILE_TYPE=FUNCTIONCOST
 * links runtime/src/functioncost.c, which defines them and the OS_*FunctionCost* and
 * OS_*Statistics functions. Only one of the two is linked into a program; the functions of the
 * other are declared here but not defined. hookcc puts this header on the include path of
 * every compile that uses the dialect: `#include <hookcc/nitro.h>`.
 *
 * Threads. Each thread records only into the buffer it initialised (OS_InitCallTrace /
 * OS_InitFunctionCost) and has its own enable state; a thread that initialised nothing
 * records nothing. Giving a buffer that another thread records into to OS_Init* is reported
 * and refused. A user-level scheduler (coroutines, green threads, an RTOS port) moves that
 * per-thread state with OS_SwitchProfilerThread.
 *
 * Printing (the dumps, and reports of misuse) goes through a replaceable print function:
 * standard error by default on hosted targets, nothing on freestanding ones until one is set.
 *
 * None of these functions may be called from a signal handler. The hooks may run in one.
 */
#ifndef HOOKCC_NITRO_H
#define HOOKCC_NITRO_H

#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define HOOKCC_NITRO_API __attribute__((visibility("default")))
/* The inline helpers below must not get hooks themselves in a -profile compile. */
#define HOOKCC_NITRO_INLINE static inline __attribute__((no_instrument_function, unused))
#else
#define HOOKCC_NITRO_API
#define HOOKCC_NITRO_INLINE static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- NITRO-SDK's basic types (nitro/types.h). Define HOOKCC_NITRO_NO_BASIC_TYPES before
 * including this header if the program has its own. */
#ifndef HOOKCC_NITRO_NO_BASIC_TYPES
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;
typedef volatile u8 vu8;
typedef volatile u16 vu16;
typedef volatile u32 vu32;
typedef volatile u64 vu64;
typedef int BOOL;
#endif
#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif

/* The OS tick: hookcc's cycle counter (rdtsc on x86, cntvct_el0 on AArch64, CLOCK_MONOTONIC
 * nanoseconds elsewhere), the unit of every cost. */
typedef u64 OSTick;

/* ---- Things NITRO programs call that hookcc needs nothing for. */
HOOKCC_NITRO_INLINE void OS_Init(void) {}
HOOKCC_NITRO_INLINE void OS_InitTick(void) {}
HOOKCC_NITRO_INLINE BOOL OS_IsTickAvailable(void) { return TRUE; }

/* The current tick, and its low 32 bits (NITRO's OS_GetTickLo). Defined by either runtime. */
HOOKCC_NITRO_API OSTick OS_GetTick(void);
HOOKCC_NITRO_API u32 OS_GetTickLo(void);

/* ---- Output */

/* Receives the profiler's output: NUL-terminated text, usually one whole line ending in '\n'
 * (a line longer than 255 bytes comes in several pieces). `context` is what was registered. */
typedef void (*OSProfilePrintFunction)(const char *text, void *context);

/* Sends all later output to `print` (NULL: back to the default, standard error on hosted
 * targets). Process-wide: set it before starting threads. Output produced while `print` runs
 * (it may have hooks itself) is not recorded by the profiler. */
HOOKCC_NITRO_API void OS_SetProfilePrintFunction(OSProfilePrintFunction print, void *context);

/* ---- User-level threads */

/* For a user-level scheduler (coroutines, green threads, an RTOS port) that runs several
 * threads of its own on one OS thread: call it at every switch, with the incoming thread's
 * profiler state (NULL for a thread that has none yet), and keep what it returns with the
 * outgoing thread:
 *
 *     from->profiler = OS_SwitchProfilerThread(to->profiler);
 *     swapcontext(&from->context, &to->context);
 *
 * This is NITRO's OSThread.profiler: the buffer the thread initialised, whose control area
 * also holds the thread's enable state. A thread starts with NULL and gets its state when it
 * calls OS_InitCallTrace / OS_InitFunctionCost. With function cost, the time from switching a
 * thread out to switching it back in is subtracted from the calls it had in progress (§4.2).
 *
 * OS threads need none of this: the kernel keeps each its own state. An OS thread may also use
 * it to leave out time it spends blocked (`void *me = OS_SwitchProfilerThread(NULL);`, block,
 * `OS_SwitchProfilerThread(me);`); time the kernel gives to other threads is otherwise part of
 * the calls in progress (docs/nitro.md). */
HOOKCC_NITRO_API void *OS_SwitchProfilerThread(void *incoming);

/* hookcc's: the same for an RTOS whose tasks have no field to keep the state in. The runtime
 * keeps each task's in a table of 16 (HKN_TASKS) per OS thread; call it from the scheduler's
 * switch, interrupts masked, with the outgoing and the incoming task's handles (any pointers;
 * NULL is what ran before the first task). <hookcc/freertos.h> calls it from FreeRTOS's
 * traceTASK_SWITCHED_IN, and hookcc_nitro_task_deleted(task, running) from traceTASK_DELETE:
 * a deleted task's buffer stays the program's (OS_CalcThreadStatistics), no longer the task's.
 * Each task then calls OS_InitCallTrace / OS_InitFunctionCost itself, as a NITRO thread does. */
HOOKCC_NITRO_API void hookcc_nitro_task_switch(const void *prev, const void *next);
HOOKCC_NITRO_API void hookcc_nitro_task_deleted(const void *task, const void *running);

/* ---- Function call trace (§3; runtime/src/calltrace.c, NITRO_PROFILE_TYPE=CALLTRACE) */

typedef enum {
    OS_CALLTRACE_STACK = 0, /* entry pushes a record, exit pops it */
    OS_CALLTRACE_LOG = 1    /* entry writes a record into a ring, exit does nothing */
} OSCallTraceMode;

/* Starts recording the calling thread's calls into buf (any alignment; 8-byte aligned wastes
 * nothing). A buffer smaller than OS_CalcCallTraceBufferSize(1), or one another thread records
 * into, is reported and not used. In stack mode call it from the outermost function: frames
 * open at this point return without a record (they are counted, and the dump says so). */
HOOKCC_NITRO_API void OS_InitCallTrace(void *buf, u32 size, OSCallTraceMode mode);

/* Lines (calls) a buffer of `size` bytes holds, and the size that holds `lines` calls. */
HOOKCC_NITRO_API int OS_CalcCallTraceLines(u32 size);
HOOKCC_NITRO_API u32 OS_CalcCallTraceBufferSize(int lines);

/* Prints "OS_DumpCallTrace: lr=<caller>" and then the calling thread's records, newest first:
 * "name: lr=…, r0=…, r1=…, r2=…, r3=…", indented by call level in log mode. */
HOOKCC_NITRO_API void OS_DumpCallTrace(void);

/* Enable/disable recording in the calling thread; each returns the previous state (FALSE if
 * the thread has no buffer). In stack mode, a frame entered while disabled and left while
 * enabled (or the reverse) leaves the stack off by one (§3.4). */
HOOKCC_NITRO_API BOOL OS_EnableCallTrace(void);
HOOKCC_NITRO_API BOOL OS_DisableCallTrace(void);
HOOKCC_NITRO_API BOOL OS_RestoreCallTrace(BOOL enable);

/* Forgets every record of the calling thread's buffer (log and stack mode; in stack mode the
 * frames open now then return without a record). */
HOOKCC_NITRO_API void OS_ClearCallTraceBuffer(void);

/* r0–r3 are recorded by default (28 bytes a call on 32-bit targets, 56 on 64-bit). To record
 * only name, lr and call level (12 / 24 bytes a call), build the program with
 * -DOS_CALLTRACE_NO_REGISTERS, or call the *Ex functions with registers = FALSE. */
HOOKCC_NITRO_API void OS_InitCallTraceEx(void *buf, u32 size, OSCallTraceMode mode, BOOL registers);
HOOKCC_NITRO_API int OS_CalcCallTraceLinesEx(u32 size, BOOL registers);
HOOKCC_NITRO_API u32 OS_CalcCallTraceBufferSizeEx(int lines, BOOL registers);
#ifdef OS_CALLTRACE_NO_REGISTERS
#define OS_InitCallTrace(buf, size, mode) OS_InitCallTraceEx((buf), (size), (mode), FALSE)
#define OS_CalcCallTraceLines(size) OS_CalcCallTraceLinesEx((size), FALSE)
#define OS_CalcCallTraceBufferSize(lines) OS_CalcCallTraceBufferSizeEx((lines), FALSE)
#endif

/* ---- Function cost measurement (§4; runtime/src/functioncost.c, FUNCTIONCOST) */

/* Starts measuring the calling thread's calls into buf (a measurement buffer). */
HOOKCC_NITRO_API void OS_InitFunctionCost(void *buf, u32 size);
HOOKCC_NITRO_API int OS_CalcFunctionCostLines(u32 size);
HOOKCC_NITRO_API u32 OS_CalcFunctionCostBufferSize(int lines);

/* A statistics buffer: one line per function (name, count, cost), shared by any threads.
 * A function's cost is the time spent in it, not in the functions it calls (the seed's §4.1:
 * 15 + 50 - 10 = 55), nor switched out. OS_InitStatisticsEx(statBuf, size, TRUE), hookcc's,
 * sets up a buffer whose costs include the calls made (inclusive). */
HOOKCC_NITRO_API void OS_InitStatistics(void *statBuf, u32 size);
HOOKCC_NITRO_API void OS_InitStatisticsEx(void *statBuf, u32 size, BOOL inclusive);

/* Adds the calling thread's measurements to statBuf and clears its measurement buffer (calls
 * still in progress stay, so that they are counted when they return). Several threads may
 * summarize into one statistics buffer, also at the same time. */
HOOKCC_NITRO_API void OS_CalcStatistics(void *statBuf);

/* The same for a measurement buffer no running thread records into (one of a thread that has
 * ended, or of a switched-out user-level thread); costBuf NULL means the calling thread's. */
HOOKCC_NITRO_API void OS_CalcThreadStatistics(void *statBuf, void *costBuf);

/* Prints one line per function, "name: count N, cost C", in the order of their first calls
 * (the first entries summarized). */
HOOKCC_NITRO_API void OS_DumpStatistics(void *statBuf);
HOOKCC_NITRO_API void OS_DispStatistics(void *statBuf);

HOOKCC_NITRO_API BOOL OS_EnableFunctionCost(void);
HOOKCC_NITRO_API BOOL OS_DisableFunctionCost(void);
HOOKCC_NITRO_API BOOL OS_RestoreFunctionCost(BOOL enable);

/* Forgets every measurement of the calling thread (calls in progress then return unmatched). */
HOOKCC_NITRO_API void OS_ClearFunctionCostBuffer(void);

/* The hooks the compiler calls are defined by either runtime and deliberately not declared
 * here, so that a program with its own `void __PROFILE_ENTRY(const char *name)` may include
 * this header too:
 *   void __PROFILE_ENTRY(const char *name, void *lr, uintptr_t r0, uintptr_t r1,
 *                        uintptr_t r2, uintptr_t r3);
 *   void __PROFILE_EXIT(void);                                                            */

#ifdef __cplusplus
}
#endif

#endif /* HOOKCC_NITRO_H */
