/* The bare-metal trace runtime's tasks (<hookcc/trace_baremetal.h>), driven by hand on the
 * host: compiled with runtime/src/trace_baremetal.c (not by hookcc, no hooks; the hooks are
 * called directly), it writes the trace finished twice: argv[1] after the first part, argv[2]
 * after the second. tests/tests/baremetal.rs reads both with hookprof.
 *
 * 18 tasks are created: the runtime names the first 16 (the first's name is cut to 15 bytes);
 * t16 and t17 share the thread past them. Calls, by thread:
 *   1 "main":         main_fn, open at the end
 *   2 (t0's name):    fa, entered before a switch and left after two
 *   3 "t1":           fb once in part 1, twice more in part 2
 *   18 "other tasks": fc once by t17, once by t16
 * With -DRECORDS=N the buffer has N records (a full one counts the rest as lost). */
#include <stdio.h>
#include <stdlib.h>

#include <hookcc/trace_baremetal.h>

#ifndef RECORDS
#define RECORDS 256
#endif
HOOKCC_TRACE_BUFFER(RECORDS);

void __hookcc_enter(void *fn);
void __hookcc_exit(void *fn_exit);

/* Aligned as hookcc aligns the functions it instruments: bit 1 of an address is the exit's. */
#define TRACED __attribute__((noinline, aligned(4)))
TRACED void main_fn(void) { __asm__ volatile(""); }
TRACED void fa(void) { __asm__ volatile(""); }
TRACED void fb(void) { __asm__ volatile(""); }
TRACED void fc(void) { __asm__ volatile(""); }

static void enter(void (*f)(void)) { __hookcc_enter((void *)f); }
static void leave(void (*f)(void)) { __hookcc_exit((char *)f + 2); }
static void call(void (*f)(void))
{
    enter(f);
    leave(f);
}

static int task[18]; /* their addresses are the tasks */

static void write_trace(const char *path)
{
    size_t size;
    const void *trace = hookcc_trace_finish(&size);
    FILE *f = fopen(path, "wb");
    if (f == NULL || fwrite(trace, 1, size, f) != size || fclose(f) != 0) {
        perror(path);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fputs("usage: baremetal_tasks PART1.hktrace PART2.hktrace\n", stderr);
        return 2;
    }
    enter(main_fn);
    for (int i = 0; i < 18; i++) {
        char name[8];
        snprintf(name, sizeof name, "t%d", i);
        hookcc_trace_task_created(&task[i], i == 0 ? "a_task_name_longer_than_15" : name);
    }
    hookcc_trace_task_switched_in(&task[0]);
    enter(fa);
    hookcc_trace_task_switched_in(&task[1]);
    call(fb);
    hookcc_trace_task_switched_in(&task[0]);
    leave(fa);
    hookcc_trace_task_switched_in(&task[17]);
    call(fc);
    hookcc_trace_task_switched_in(&task[16]);
    call(fc);
    write_trace(argv[1]);
    hookcc_trace_task_switched_in(&task[1]);
    call(fb);
    call(fb);
    write_trace(argv[2]);
    return 0;
}
