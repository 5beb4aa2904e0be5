/* The seed's example scenario (seeds/ti-c6000-function-hooks.txt, "Example"): three tasks
 * switched round-robin, each running a delay function that burns a known number of cycles, a
 * known number of times; every switch is recorded with task_switch_hook(prev, next), as
 * SYS/BIOS's switchFxn does in the seed.
 *
 * Build (TI dialect, stop-when-full hooks, the TI runtime):
 *   hookcc --entry_hook=entry_hook --entry_parm=address --exit_hook=exit_hook \
 *          --exit_parm=address --hook-runtime=ti ti_tasks.c -o ti_tasks
 *
 * The scheduler is a user-level one: tasks are ucontext coroutines; a task gives up the CPU by
 * calling task_yield(), which switches straight to the next runnable task (task to task, as an
 * RTOS does). Task handles are the addresses of the per-task structs (aligned, so their low 2
 * bits are free for the record type). main is a task too (main_task): it switches to the first
 * task and gets the CPU back when the last one finishes.
 *
 * Task k (k = 0, 1, 2) calls delay(DELAY_ITERATIONS) RUNS[k] times, yielding after each, so
 * its records per run are: delay entry/exit, task_yield entry/exit and switch_to entry/exit
 * (plus the switch's two records). A task function that finishes returns into task_trampoline
 * (NO_HOOKS, standing in for the RTOS's task exit path), which switches away for good.
 *
 * Prints key=value lines for the checkers: the record count (uiProfileDataCnt before main's
 * own exit record), task handles (task.NAME=0x...), function addresses (addr.NAME=0x...) and
 * the expected counts.
 */
#define _GNU_SOURCE 1
#include <stdint.h>
#include <stdio.h>
#include <ucontext.h>

#include <hookcc/ti.h>

#define NTASKS 3
#define DELAY_ITERATIONS 20000
#define STACK_SIZE (64 * 1024)

static const int RUNS[NTASKS] = {3, 4, 5};

struct task {
    ucontext_t context;
    const char *name;
    int id;
    int runs_left;
    int finished;
    /* 16-byte alignment, as malloc'd TCBs have: the handle's low 2 bits are zero */
} __attribute__((aligned(16)));

static struct task tasks[NTASKS];
static struct task main_task = {.name = "main"};
static struct task *current = &main_task;
static char stacks[NTASKS][STACK_SIZE] __attribute__((aligned(16)));

static volatile unsigned long delay_sink;

/* The work: a busy loop of a known number of iterations. */
void delay(unsigned long iterations)
{
    for (unsigned long i = 0; i < iterations; i++)
        delay_sink += i;
}

/* The one place a switch happens: record it, then swap contexts. Returns when some task
 * switches back to the caller's. */
void switch_to(struct task *next)
{
    struct task *prev = current;
    task_switch_hook((uintptr_t)prev, (uintptr_t)next);
    current = next;
    swapcontext(&prev->context, &next->context);
}

/* The next runnable task after `from`, round-robin; main_task if none is left. */
#pragma NO_HOOKS(next_runnable)
static struct task *next_runnable(const struct task *from)
{
    int start = from == &main_task ? NTASKS - 1 : from->id;
    for (int i = 1; i <= NTASKS; i++) {
        struct task *t = &tasks[(start + i) % NTASKS];
        if (!t->finished)
            return t;
    }
    return &main_task;
}

void task_yield(void)
{
    struct task *next = next_runnable(current);
    if (next != current)
        switch_to(next);
}

void task_function(struct task *self)
{
    while (self->runs_left > 0) {
        delay(DELAY_ITERATIONS);
        self->runs_left--;
        task_yield();
    }
}

/* The RTOS's part: run the task function, then leave for good (a finished task's context is
 * never resumed, so no exit hook would ever close this frame: no hooks here). */
#pragma NO_HOOKS(task_trampoline)
static void task_trampoline(void)
{
    struct task *self = current;
    task_function(self);
    self->finished = 1;
    struct task *next = next_runnable(self);
    task_switch_hook((uintptr_t)self, (uintptr_t)next);
    current = next;
    setcontext(&next->context);
}

void run_scheduler(void)
{
    for (int k = 0; k < NTASKS; k++) {
        struct task *t = &tasks[k];
        t->id = k;
        t->name = k == 0 ? "t0" : k == 1 ? "t1" : "t2";
        t->runs_left = RUNS[k];
        getcontext(&t->context);
        t->context.uc_stack.ss_sp = stacks[k];
        t->context.uc_stack.ss_size = sizeof stacks[k];
        t->context.uc_link = NULL;
        makecontext(&t->context, task_trampoline, 0);
    }
    switch_to(&tasks[0]); /* back here when every task has finished */
}

int main(void)
{
    hook_init();
    run_scheduler();

    /* Expected counts, derived from the schedule the round-robin gives. */
    long runs = 0, switches = 1; /* main -> t0 */
    for (int k = 0; k < NTASKS; k++)
        runs += RUNS[k];
    /* Each run ends in a yield; it switches unless the task is the only one left. Every
     * finished task switches once more (the trampoline). */
    long lonely_yields = RUNS[NTASKS - 1] - RUNS[NTASKS - 2]; /* t2 alone at the end */
    switches += runs - lonely_yields + NTASKS;

    printf("records=%u\n", uiProfileDataCnt);
    printf("dropped=%lu\n", hookcc_ti_dropped);
    printf("profiledata=0x%llx\n", (unsigned long long)(uintptr_t)ProfileData);
    printf("capacity=%u\n", uiMaxProfileRecordNum);
    printf("task.main=0x%llx\n", (unsigned long long)(uintptr_t)&main_task);
    for (int k = 0; k < NTASKS; k++)
        printf("task.%s=0x%llx\n", tasks[k].name, (unsigned long long)(uintptr_t)&tasks[k]);
    printf("addr.delay=0x%llx\n", (unsigned long long)(uintptr_t)delay);
    printf("addr.task_function=0x%llx\n", (unsigned long long)(uintptr_t)task_function);
    printf("addr.task_yield=0x%llx\n", (unsigned long long)(uintptr_t)task_yield);
    printf("addr.switch_to=0x%llx\n", (unsigned long long)(uintptr_t)switch_to);
    printf("addr.run_scheduler=0x%llx\n", (unsigned long long)(uintptr_t)run_scheduler);
    printf("addr.main=0x%llx\n", (unsigned long long)(uintptr_t)main);
    for (int k = 0; k < NTASKS; k++)
        printf("expect.delay.%s=%d\n", tasks[k].name, RUNS[k]);
    printf("expect.switches=%ld\n", switches);
    printf("expect.delay_iterations=%d\n", DELAY_ITERATIONS);
    return 0;
}
