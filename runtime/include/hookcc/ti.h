/* hookcc TI runtime: the record buffer and hook functions of TI's "Profiling on the C6000 using
 * Function Hooks" (its hook.c / hook.h), as a library component (docs/ti-runtime.md).
 *
 * Build a program with
 *   hookcc --entry_hook=entry_hook --entry_parm=address \
 *          --exit_hook=exit_hook --exit_parm=address --hook-runtime=ti prog.c
 * (or the _circular hooks), call hook_init() where recording should start, and call
 * task_switch_hook(prev, next) from your scheduler's task switch, as the seed does from
 * SYS/BIOS. The records then sit in ProfileData, uiProfileDataCnt of them:
 *   - a debugger dumps the buffer (bare metal, or a hosted program stopped in a debugger);
 *   - a hosted program also writes it at exit, as PREFIX.bin (the buffer's memory) and
 *     PREFIX.dat (CCS "32-bit Hex - C Style" text). Environment:
 *       HOOKCC_TI_OUTPUT   PREFIX (default `<program>.<pid>.ti`, in the working directory)
 *       HOOKCC_TI_VERBOSE  1: say on stderr where the files went (quiet by default)
 *
 * Records. Each is {address_type, TSCL, TSCH}: the function's address (or task handle) with
 * the record type (Hook_Record_Type) in its low 2 bits, then the low and high 32 bits of the
 * timestamp. On 32-bit targets that is the seed's 12 bytes (3 words); on 64-bit targets
 * address_type is 64 bits wide and a record is 16 bytes (4 words: the address's two words in
 * memory order, TSCL, TSCH). A record whose address_type is all ones is invalid: never written
 * (hook_init fills the buffer with 0xFF bytes) or being written.
 *
 * Hooks take no lock, call no malloc, keep errno, and are never instrumented themselves.
 */
#ifndef HOOKCC_TI_H
#define HOOKCC_TI_H

#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define HOOKCC_TI_API __attribute__((visibility("default")))
/* For functions the hooks call (a timestamp function): hookcc inserts no hooks into them. */
#define HOOKCC_TI_NOHOOKS __attribute__((no_instrument_function))
#else
#define HOOKCC_TI_API
#define HOOKCC_TI_NOHOOKS
#endif

#if defined(__cplusplus) && __cplusplus >= 201103L
#define HOOKCC_TI_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define HOOKCC_TI_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#else /* C99, C++98: an array type of negative size if cond is false */
#define HOOKCC_TI_CAT2_(a, b) a##b
#define HOOKCC_TI_CAT_(a, b) HOOKCC_TI_CAT2_(a, b)
#define HOOKCC_TI_STATIC_ASSERT(cond, msg)                                                     \
    typedef char HOOKCC_TI_CAT_(hookcc_ti_static_assert_, __LINE__)[(cond) ? 1 : -1]
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The record type, in the low 2 bits of address_type (the seed's values). */
typedef enum {
    HOOK_TYPE_FUNC_ENTRY = 0, /* function entry hook */
    HOOK_TYPE_FUNC_EXIT,      /* function exit hook */
    HOOK_TYPE_TASK_ENTRY,     /* task entry (the task switched to) */
    HOOK_TYPE_TASK_EXIT       /* task exit (the task switched from) */
} Hook_Record_Type;

#define HOOKCC_TI_TYPE_MASK ((uintptr_t)3)

/* One record. uintptr_t is the seed's unsigned int on 32-bit targets. */
typedef struct {
    uintptr_t address_type; /* address with its low 2 bits replaced by the Hook_Record_Type */
    uint32_t TSCL;          /* low 32 bits of the timestamp */
    uint32_t TSCH;          /* high 32 bits of the timestamp */
} Hook_Record;

/* 32-bit words per record: 3 on 32-bit targets, 4 on 64-bit targets. */
#define HOOKCC_TI_RECORD_WORDS (sizeof(Hook_Record) / sizeof(uint32_t))

HOOKCC_TI_STATIC_ASSERT(sizeof(Hook_Record) == 2 * sizeof(uint32_t) + sizeof(uintptr_t),
                        "Hook_Record has no padding");

/* uiProfileDataCnt's value before hook_init: recording is off. */
#define HOOKCC_TI_NOT_INITIALIZED 0xFFFFFFFFu
/* The largest buffer (records); larger values are rounded down to it by hook_init. */
#define HOOKCC_TI_MAX_RECORDS (1u << 30)

/* The record buffer. The runtime defines a weak default of 1048576 records (1 Mi: 12 MiB on
 * 32-bit targets, 16 MiB on 64-bit ones; none in a bare-metal build, see docs); a program
 * replaces it, without rebuilding the runtime, with HOOKCC_TI_PROFILE_BUFFER below. */
HOOKCC_TI_API extern Hook_Record ProfileData[];

/* The buffer's capacity in records, the seed's MAX_PROFILE_RECORD_NUM: a power of two, fixed
 * at link time (defined by the runtime, weak, or by HOOKCC_TI_PROFILE_BUFFER). */
HOOKCC_TI_API extern const unsigned int uiMaxProfileRecordNum;

/* Records written since hook_init, the seed's counter: 0xFFFFFFFF until hook_init (recording
 * off). The stop-when-full hooks stop once it reaches uiMaxProfileRecordNum (it may pass it by
 * the number of threads that raced for the last slot); the circular hooks keep counting, and
 * the newest record is at index (uiProfileDataCnt - 1) & (uiMaxProfileRecordNum - 1).
 * Whenever uiProfileDataCnt >= uiMaxProfileRecordNum, dump the whole buffer; otherwise the
 * first uiProfileDataCnt records. (Past 2^32 records the circular hooks keep it at or above
 * uiMaxProfileRecordNum, so that rule still holds.) */
HOOKCC_TI_API extern unsigned int uiProfileDataCnt;

/* Records the stop-when-full hooks could not keep since hook_init (wraps on 32-bit targets). */
HOOKCC_TI_API extern unsigned long hookcc_ti_dropped;

/* Defines the record buffer with N records (a power of two, at most HOOKCC_TI_MAX_RECORDS),
 * replacing the runtime's default. Use once, at file scope, in one source file. An attribute
 * written before it applies to the buffer, for example
 *   __attribute__((section(".far:External_NonCache_Data"))) HOOKCC_TI_PROFILE_BUFFER(65536);
 */
#ifdef __cplusplus
#define HOOKCC_TI_DEFINE_CAPACITY_(n) extern const unsigned int uiMaxProfileRecordNum = (n)
#else
#define HOOKCC_TI_DEFINE_CAPACITY_(n) const unsigned int uiMaxProfileRecordNum = (n)
#endif
#define HOOKCC_TI_PROFILE_BUFFER(n)                                                            \
    Hook_Record ProfileData[(n)];                                                              \
    HOOKCC_TI_DEFINE_CAPACITY_(n);                                                             \
    HOOKCC_TI_STATIC_ASSERT((n) > 0 && ((n) & ((n) - 1)) == 0 &&                               \
                                (unsigned long long)(n) <= HOOKCC_TI_MAX_RECORDS,              \
                            "HOOKCC_TI_PROFILE_BUFFER: the record count must be a power of "   \
                            "two, at most 2^30")

/* Starts recording, or restarts it: fills the buffer with 0xFF bytes (invalid records) and
 * sets uiProfileDataCnt to 0. Call it before hooks run in other threads (hooks racing with it
 * may leave records on either side of the restart). In a hosted program the first call also
 * arranges for the buffer to be written at exit. */
HOOKCC_TI_API void hook_init(void);

/* Stop-when-full hooks: they keep the first records of the run. Use as
 * --entry_hook=entry_hook --entry_parm=address --exit_hook=exit_hook --exit_parm=address.
 * The parameter is the seed's void (*func_addr)(), spelt with (void) so that -pedantic C
 * builds do not warn (-Wstrict-prototypes); in C the two declarations are compatible (the one
 * hookcc's options declare uses ()), in C++ they are the same type. */
HOOKCC_TI_API void entry_hook(void (*func_addr)(void));
HOOKCC_TI_API void exit_hook(void (*func_addr)(void));

/* Circular hooks: they keep the last uiMaxProfileRecordNum records. They return at once before
 * hook_init. */
HOOKCC_TI_API void entry_hook_circular(void (*func_addr)(void));
HOOKCC_TI_API void exit_hook_circular(void (*func_addr)(void));

/* Task switch: a TASK_EXIT record for prevTask, then a TASK_ENTRY record for nextTask, with the
 * same timestamp (the stop-when-full variant keeps the first if only one fits). Task handles
 * are addresses of task objects: their low 2 bits are replaced by the type, so align them to
 * 4 bytes or more. On 32-bit targets uintptr_t is the seed's unsigned int; pass pointers as
 * (uintptr_t)handle. */
HOOKCC_TI_API void task_switch_hook(uintptr_t prevTask, uintptr_t nextTask);
HOOKCC_TI_API void task_switch_hook_circular(uintptr_t prevTask, uintptr_t nextTask);

/* Timestamps: the target's cycle counter by default (x86 rdtsc, AArch64 cntvct_el0, else
 * CLOCK_MONOTONIC in ns on hosted targets), the role TSCL/TSCH play on the C6000. To use
 * another, either define this function in the program (the runtime refers to it weakly and
 * picks it up; mark it HOOKCC_TI_NOHOOKS), or set one at run time below. Bare-metal targets
 * without a counter the runtime knows (32-bit Arm, RISC-V, ...) must define it. */
typedef uint64_t (*hookcc_ti_timestamp_fn)(void);
HOOKCC_TI_API uint64_t hookcc_ti_timestamp(void);

/* Sets the timestamp function the hooks call from now on; NULL returns to the default (the
 * program's hookcc_ti_timestamp if it defines one, else the built-in counter). */
HOOKCC_TI_API void hookcc_ti_set_timestamp(hookcc_ti_timestamp_fn fn);

/* Hosted: writes PREFIX.bin and PREFIX.dat now, as at exit (which writes them again). Returns
 * 0, or -1 with errno set (EINVAL before hook_init, else why a file could not be written,
 * also reported on stderr). A bare-metal build returns -1 and has no files: a debugger dumps. */
HOOKCC_TI_API int hookcc_ti_dump(void);

/* Does nothing, on every target: the place for a debugger's breakpoint once the program has
 * recorded what it wanted, where the buffer is then dumped (scripts/baremetal-ti-dump.sh:
 * `break hookcc_ti_done`, `dump binary memory`; docs/baremetal.md). Never inlined. */
HOOKCC_TI_API void hookcc_ti_done(void);

#ifdef __cplusplus
}
#endif

#endif /* HOOKCC_TI_H */
