/* The TI example on bare metal: the three-task scenario of tests/programs/ti_tasks.c (after
 * seeds/ti-c6000-function-hooks.txt, "Example") on any of the boards, with a timer interrupt
 * whose handler runs instrumented code while the tasks do. What is the board's (the context
 * switch, a task's first frame, the tick interrupt) is in its board.c.
 *
 * In a board's directory:
 *   make run APP=../ti_tasks.c HOOKS=ti       boots it; prints what a checker needs
 *   make ti-dump APP=../ti_tasks.c HOOKS=ti   the same under gdb, which dumps the record buffer
 *                                              into ti.bin at hookcc_ti_done(), as a CCS user
 *                                              would
 *
 * Tasks have stacks of their own and switch task to task (task_yield -> switch_to), every
 * switch recorded with task_switch_hook(prev, next) as SYS/BIOS's switchFxn does. Task k
 * (k = 0, 1, 2) calls delay(DELAY_ITERATIONS) RUNS[k] times, yielding after each. Meanwhile
 * a timer interrupts every TICK_US microseconds; its handler calls on_tick(), which has hooks:
 * those records nest inside whatever the interrupted task was running.
 */
#include <stdint.h>
#include <stdio.h>

#include <hookcc/ti.h>

#define NTASKS 3
#define DELAY_ITERATIONS 20000
#define STACK_WORDS 1024
#define TICK_US 100

HOOKCC_TI_PROFILE_BUFFER(4096);

/* The board's part (board.c): */
/* Calls tick() from a timer interrupt every period_us microseconds, from now on. */
void board_start_tick(unsigned period_us, void (*tick)(void));
/* Stops it. */
void board_stop_tick(void);
/* Saves the callee-saved registers and the return address on the current stack and the stack
 * pointer in *save, then continues on load's stack from the frame saved there (or made by
 * board_task_stack). */
void board_switch_context(void **save, void *load);
/* The stack pointer of a task that has not run yet: a frame below top that
 * board_switch_context "returns" through into entry. */
void *board_task_stack(void *top, void (*entry)(void));

static const int RUNS[NTASKS] = {3, 4, 5};

struct task {
    void *sp; /* saved by board_switch_context */
    const char *name;
    int id;
    int runs_left;
    int finished;
} __attribute__((aligned(16)));

static struct task tasks[NTASKS];
static struct task main_task = {.name = "main"};
static struct task *current = &main_task;
static uint64_t stacks[NTASKS][STACK_WORDS / 2] __attribute__((aligned(16)));

static volatile unsigned long delay_sink;
static volatile unsigned ticks, switches;

/* The interrupt's instrumented work. */
void on_tick(void)
{
    ticks++;
}

void delay(unsigned long iterations)
{
    for (unsigned long i = 0; i < iterations; i++)
        delay_sink += i;
}

void switch_to(struct task *next)
{
    struct task *prev = current;
    task_switch_hook((uintptr_t)prev, (uintptr_t)next);
    switches++;
    current = next;
    board_switch_context(&prev->sp, next->sp);
}

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

/* The RTOS's task exit path: a finished task's frame is never resumed, so no hooks here. */
#pragma NO_HOOKS(task_trampoline)
static void task_trampoline(void)
{
    struct task *self = current;
    task_function(self);
    self->finished = 1;
    struct task *next = next_runnable(self);
    task_switch_hook((uintptr_t)self, (uintptr_t)next);
    switches++;
    current = next;
    void *discard;
    board_switch_context(&discard, next->sp);
}

void run_scheduler(void)
{
    for (int k = 0; k < NTASKS; k++) {
        struct task *t = &tasks[k];
        t->id = k;
        t->name = k == 0 ? "t0" : k == 1 ? "t1" : "t2";
        t->runs_left = RUNS[k];
        t->sp = board_task_stack(&stacks[k][STACK_WORDS / 2], task_trampoline);
    }
    switch_to(&tasks[0]); /* back here when every task has finished */
}

int main(void)
{
    hook_init();
    board_start_tick(TICK_US, on_tick);
    run_scheduler();
    board_stop_tick();
    hookcc_ti_done(); /* the debugger's breakpoint: the buffer is complete here */

    printf("records=%u\n", uiProfileDataCnt);
    printf("dropped=%lu\n", hookcc_ti_dropped);
    printf("ticks=%u\n", ticks);
    printf("switches=%u\n", switches);
    for (int k = 0; k < NTASKS; k++)
        printf("task.%s=0x%lx\n", tasks[k].name, (unsigned long)(uintptr_t)&tasks[k]);
    printf("task.main=0x%lx\n", (unsigned long)(uintptr_t)&main_task);
    return 0;
}
