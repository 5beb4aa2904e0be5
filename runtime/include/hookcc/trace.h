/* hookcc trace runtime: control from the traced program.
 *
 * A program built with `hookcc --trace` (or HOOKCC_TRACE=1) records an entry and an exit for
 * every instrumented function into a trace file (docs/trace-format.md), decoded by hookprof.
 * Nothing here is needed for that: these calls only narrow or steer what is recorded.
 *
 * Environment, read once at start:
 *   HOOKCC_OUTPUT          trace file path (default `<program>.<pid>.hktrace` in the working
 *                          directory). A forked child writes its own file: the default name
 *                          with its pid, or HOOKCC_OUTPUT with `.<child pid>` inserted before a
 *                          final `.hktrace` (appended if there is none).
 *   HOOKCC_MAX_BYTES       EVENTS chunks stop once the file would grow past this many bytes;
 *                          their records are counted as lost. The small process and thread
 *                          chunks (modules, lost counts, names, clock) are still written.
 *   HOOKCC_BUFFER_RECORDS  records per thread buffer (default 65536, rounded up to a power of
 *                          two, at most 4194304); a full buffer is written as one chunk.
 *   HOOKCC_DISABLE         any value other than empty or `0`: start with tracing disabled.
 *   HOOKCC_FUNCTIONS       which functions are recorded, by name: comma-separated globs, one
 *                          preceded by `!` leaves its functions out (`parse_*,!parse_space`).
 *                          A function left out costs a load and a branch at entry and at exit.
 *   HOOKCC_CONTROL         `0`: no control channel (the Unix socket through which `hookprof attach`
 *                          starts and stops recording while the program runs; docs/recording.md).
 *
 * None of these functions is async-signal-safe: do not call them from a signal handler.
 */
#ifndef HOOKCC_TRACE_H
#define HOOKCC_TRACE_H

#if defined(__GNUC__) || defined(__clang__)
#define HOOKCC_TRACE_API __attribute__((visibility("default")))
#else
#define HOOKCC_TRACE_API
#endif

/* The calling convention `hookcc --trace` calls the native hooks with (__hookcc_enter,
 * __hookcc_exit, __hookcc_resync, __hookcc_count): LLVM's preserve_most on x86-64 and AArch64
 * (the hook keeps every register but a scratch one), C's elsewhere. A program that brings its
 * own native hooks (`--trace --hook-runtime=none`) defines them with it:
 * `HOOKCC_NATIVE_HOOK void __hookcc_enter(void *fn) { ... }`. */
#if defined(__clang__) && (defined(__x86_64__) || defined(__aarch64__))
#define HOOKCC_NATIVE_HOOK __attribute__((preserve_most))
#else
#define HOOKCC_NATIVE_HOOK
#endif

/* What the native hooks are passed: the function's record (docs/trace-format.md, "Functions'
 * records"), + 2 in an exit. Own hooks get the function's address and its name (as people
 * write it: a C symbol, a demangled C++ name, a Rust path) from it with these. */
#define HOOKCC_FUNCTION_OF(arg)                                                                \
    (((void *const *)((__UINTPTR_TYPE__)(arg) & ~(__UINTPTR_TYPE__)2))[1])
#define HOOKCC_NAME_OF(arg)                                                                    \
    (((const char *const *)((__UINTPTR_TYPE__)(arg) & ~(__UINTPTR_TYPE__)2))[0])

#ifdef __cplusplus
extern "C" {
#endif

/* Writes the calling thread's buffered records to the trace file now, so that a reader sees
 * them while the program runs. Safe to call at any time, also before tracing started, after it
 * finished, while disabled, or from a thread that never recorded anything (then it does
 * nothing). Other threads' buffers are written when they fill, at thread exit and at exit. */
HOOKCC_TRACE_API void hookcc_trace_flush(void);

/* HOOKCC_MODE=ring (a flight recorder: each thread keeps its last HOOKCC_RING_BYTES of
 * records, nothing is written until a snapshot): writes what every thread's ring holds since
 * the previous snapshot. HOOKCC_MODE=profile: writes every thread's call-path tree as it is.
 * SIGUSR2 does the same, from outside. Does nothing in the default mode. */
HOOKCC_TRACE_API void hookcc_trace_snapshot(void);

/* Triggers (docs/recording.md): records are kept only from an entry of a start function to its
 * return, or, where stop functions are set, to the return of the first one called after it;
 * per thread. With no start function, everything is kept. The table is filled at start from
 * HOOKCC_TRACE_START / HOOKCC_TRACE_STOP (or hookcc --trace-start / --trace-stop), and may be
 * changed while the program runs: by the calls below, or by a debugger writing it (gdb:
 * `set var hookcc_trace_triggers.start[0] = (unsigned long long)&parse`, then
 * `set var hookcc_trace_triggers.n_start = 1`). A thread's records are judged by the table
 * when its buffer is written; the calls below first write the calling thread's buffer, so that
 * the change holds for it from the call on. Not under HOOKCC_PACK=0 (everything is kept). */
#define HOOKCC_TRACE_MAX_TRIGGERS 32
struct hookcc_trace_triggers {
    unsigned int n_start; /* entries of start[] in use */
    unsigned int n_stop;
    unsigned long long start[HOOKCC_TRACE_MAX_TRIGGERS]; /* function addresses */
    unsigned long long stop[HOOKCC_TRACE_MAX_TRIGGERS];
};
extern HOOKCC_TRACE_API struct hookcc_trace_triggers hookcc_trace_triggers;

/* Adds a start function and, if `stop` is not NULL, a stop function. Returns 0, or -1 if the
 * table is full. */
HOOKCC_TRACE_API int hookcc_trace_trigger(void (*start)(void), void (*stop)(void));

/* Empties the table: everything is kept again. */
HOOKCC_TRACE_API void hookcc_trace_triggers_clear(void);

/* Starts recording again, in every thread (tracing is process-wide). Records buffered before a
 * disable are kept. No effect once the trace is finished (after exit began). */
HOOKCC_TRACE_API void hookcc_trace_enable(void);

/* Switches the recording of the functions whose name matches `glob` (fnmatch: `parse_*`; a
 * C symbol, a demangled C++ name such as `ns::f(int)`, a Rust path such as `crate::f`) on
 * (`on` != 0) or off, in every thread, from the next call on; a call in progress shows up as an
 * unmatched entry or exit. A function switched off is not recorded, and its hooks are not even
 * called: a load and a branch at entry and at exit. Shared libraries built with `hookcc --trace`
 * are switched with the program. Returns the number of functions that matched. */
HOOKCC_TRACE_API int hookcc_trace_function(const char *glob, int on);

/* Stops recording, in every thread, until hookcc_trace_enable(). Every function's switch is
 * turned off: its hooks are not called (a load and a branch at entry and at exit), nothing is
 * recorded nor counted as lost, so frames open at the moment of the switch show up as
 * unmatched entries or exits in the reader. */
HOOKCC_TRACE_API void hookcc_trace_disable(void);

/* 1 if hooks record now, 0 if disabled (HOOKCC_DISABLE, hookcc_trace_disable) or finished. */
HOOKCC_TRACE_API int hookcc_trace_enabled(void);

/* The path of the trace file being written (as opened: relative paths are relative to the
 * working directory at start), or NULL if no file could be opened. Valid for the life of the
 * process; after fork() the child's own file. */
HOOKCC_TRACE_API const char *hookcc_trace_path(void);

#ifdef __cplusplus
}
#endif

#endif /* HOOKCC_TRACE_H */
