/* The TI example on bare metal: the three-task scenario of tests/programs/ti_tasks.c (after
 * seeds/ti-c6000-function-hooks.txt, "Example") on the ARM926, with a timer interrupt whose
 * handler runs instrumented code while the tasks do.
 *
 *   make run APP=ti_tasks.c HOOKS=ti          boots it; prints what a checker needs
 *   scripts/baremetal-ti-dump.sh firmware.elf ti.bin -- qemu-system-arm …
 *                                              the same under gdb: the record buffer dumped at
 *                                              hookcc_ti_done(), as a CCS user would
 *
 * Tasks have stacks of their own and switch task to task (task_yield -> switch_to), every
 * switch recorded with task_switch_hook(prev, next) as SYS/BIOS's switchFxn does. Task k
 * (k = 0, 1, 2) calls delay(DELAY_ITERATIONS) RUNS[k] times, yielding after each. Meanwhile
 * SP804 timer 1 interrupts every TICK_US microseconds; its handler calls on_tick(), which has
 * hooks: those records nest inside whatever the interrupted task was running.
 */
#include <stdint.h>
#include <stdio.h>

#include <hookcc/ti.h>

#define NTASKS 3
#define DELAY_ITERATIONS 20000
#define STACK_WORDS 1024
#define TICK_US 100

HOOKCC_TI_PROFILE_BUFFER(4096);

void board_start_tick(unsigned period_us, void (*tick)(void));
void board_stop_tick(void);

static const int RUNS[NTASKS] = {3, 4, 5};

struct task {
    uint32_t *sp; /* saved by switch_context */
    const char *name;
    int id;
    int runs_left;
    int finished;
} __attribute__((aligned(16)));

static struct task tasks[NTASKS];
static struct task main_task = {.name = "main"};
static struct task *current = &main_task;
static uint64_t stacks[NTASKS][STACK_WORDS / 2]; /* 8-byte aligned (AAPCS) */

static volatile unsigned long delay_sink;
static volatile unsigned ticks, switches;

/* Saves r4-r11 and lr on the current stack and its sp in *save, loads sp = load and returns
 * through the frame found there. Naked: no hooks, no compiler frame. ARM code always. */
__attribute__((naked, target("arm"))) static void switch_context(uint32_t **save, uint32_t *load)
{
    __asm__ __volatile__("push {r4-r11, lr}\n\t"
                         "str sp, [r0]\n\t"
                         "mov sp, r1\n\t"
                         "pop {r4-r11, lr}\n\t"
                         "bx lr");
}

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
    switch_context(&prev->sp, next->sp);
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
    uint32_t *discard;
    switch_context(&discard, next->sp);
}

void run_scheduler(void)
{
    for (int k = 0; k < NTASKS; k++) {
        struct task *t = &tasks[k];
        t->id = k;
        t->name = k == 0 ? "t0" : k == 1 ? "t1" : "t2";
        t->runs_left = RUNS[k];
        /* The frame switch_context pops: r4-r11 = 0, lr = the trampoline. */
        uint32_t *sp = (uint32_t *)&stacks[k][STACK_WORDS / 2] - 9;
        for (int i = 0; i < 8; i++)
            sp[i] = 0;
        sp[8] = (uint32_t)(uintptr_t)task_trampoline;
        t->sp = sp;
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
