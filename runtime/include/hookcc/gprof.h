/* hookcc's gprof support: the API of eCos's CYGPKG_PROFILE_GPROF (seeds/ecos-gprof.txt) for
 * any target hookcc builds for. docs/gprof.md.
 *
 * `hookcc --hook-runtime=gprof` links runtime/src/gprof.c and makes every function defined in
 * the sources call __profile_mcount(caller_pc, callee_pc) on entry (after inlining, as gcc -pg
 * places mcount): the call-graph arcs, with no -pg and no per-architecture mcount. The flat
 * profile comes from a PC histogram: on Linux a SIGPROF timer (setitimer(ITIMER_PROF)) samples
 * the interrupted PC; on bare metal the firmware's timer interrupt calls __profile_hit(pc).
 *
 * Hosted, profiling starts by itself over the executable's code (bucket 16 bytes, a sample
 * every 1000 us; HOOKCC_GPROF_AUTO=0 leaves it off) and gmon.out is written at exit
 * ($HOOKCC_GMON_OUT, default gmon.out in the working directory); `gprof PROGRAM gmon.out` reads
 * it. On bare metal the data stays in memory: gdb's gprof_dump (scripts/gprof.gdb) saves it and
 * `hookprof gprof DUMP --exe ELF -o gmon.out` converts it. */
#ifndef HOOKCC_GPROF_H
#define HOOKCC_GPROF_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Starts profiling [start, end) in buckets of bucket_size bytes (rounded up to a power of 2),
 * sampling every interval microseconds (hosted; on bare metal the firmware's timer decides).
 * Called again, it drops the data and starts afresh. */
void profile_on(void *start, void *end, int bucket_size, int interval);
/* Stops profiling and drops the data. */
void profile_off(void);

/* The timer's sample: the interrupted program counter. */
void __profile_hit(uintptr_t pc);
/* An arc: a call from caller_pc (its return address) to the function at callee_pc. hookcc's
 * entry hooks call it; a firmware's own mcount may too. */
void __profile_mcount(uintptr_t caller_pc, uintptr_t callee_pc);

/* gprof.gdb's macros as functions: write gmon.out now (hosted) and reset the counts
 * (gprof_dump), write without resetting (gprof_fetch), reset only (gprof_reset). Return 0, or
 * -1 if the file could not be written (hosted) or there is nothing to write. */
int gprof_dump(void);
int gprof_fetch(void);
void gprof_reset(void);

/* The memory profile_on takes its tables from. Hosted, it is mapped on demand; on bare metal
 * the runtime has a 32 KiB arena, and a program defines a larger one with
 * HOOKCC_GPROF_ARENA(bytes) in one of its files (it then also lands in whatever section the
 * program's linker script puts .bss in). */
extern unsigned char hookcc_gprof_arena[];
extern const size_t hookcc_gprof_arena_size;
#define HOOKCC_GPROF_ARENA(bytes)                                                                  \
    __attribute__((aligned(8))) unsigned char hookcc_gprof_arena[(bytes)];                        \
    const size_t hookcc_gprof_arena_size = (bytes)

#ifdef __cplusplus
}
#endif

#endif /* HOOKCC_GPROF_H */
