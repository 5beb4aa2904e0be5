/* The example's FreeRTOS application: four tasks, a queue, a software timer and the tick
 * interrupt, each task counting the calls it makes so that a profile can be checked against
 * the program's own numbers (tests/tests/baremetal.rs).
 *
 * - "producer" (priority 2) makes ITEMS values: produce(), then sends each into the queue and
 *   sleeps a tick.
 * - "consumer" (priority 4, the most urgent) takes them from the queue: consume().
 * - "worker" (priority 1) does a few rounds of work() a tick until the consumer is done.
 * - the software timer's callback, on_timer(), runs every TIMER_TICKS ticks in FreeRTOS's timer
 *   service task ("Tmr Svc").
 * Every one of them also calls checksum(), the function they share: a profile with a call stack
 * per task gives each task its own count of it.
 * When the consumer has every item it prints the counts and ends the run with exit() (qemu's
 * exit status), interrupts masked so that no task switch comes in between.
 *
 * The tasks' control blocks are static (xTaskCreateStatic), so that a debugger and hookprof
 * name a task by its symbol: `producer_task` is the producer's (the TI post tool's task column).
 *
 * With each of hookcc's runtimes (the Makefile's HOOKS= or NITRO_PROFILE_TYPE=), the profile
 * the firmware keeps, and how each task gets its own (<hookcc/freertos.h> switches it):
 * - NITRO function cost: every task, and the timer service task from the daemon's start-up hook,
 *   initialises a measurement buffer of its own; the consumer summarizes them all at the end
 *   into one statistics buffer of inclusive costs and dumps it ("name: count N, cost C"). The
 *   producer's pause_a_tick() (vTaskDelay(1)) costs what the kernel does in it, not the tick it
 *   spends switched out, which the producer also measures as wall time ("pause wall W").
 * - NITRO call trace: the same buffers for the call stacks; the consumer's last consume()
 *   dumps its stack, which holds the consumer's frames and no other task's.
 * - TI hooks: hook_init() in main, every task switch recorded; hookcc_ti_done() at the end is
 *   where a debugger dumps the buffer (make ti-dump).
 * - TI profile points: a region around each pause_a_tick(), which pauses while the producer is
 *   switched out (and during the tick interrupt), and one around each work().
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "FreeRTOS.h"
#include "queue.h"
#include "task.h"
#include "timers.h"

#if defined(PROFILE_TYPE_CALLTRACE) || defined(PROFILE_TYPE_FUNCTIONCOST)
#include <hookcc/nitro.h>
#define NITRO 1
#elif defined(HOOKS_TI)
#include <hookcc/ti.h>
#elif defined(HOOKS_PFP)
#include <hookcc/pfp.h>
#endif

#define ITEMS 24
#define WORK_PER_TICK 3
#define TIMER_TICKS 3
#define STACK_WORDS 1024

#define NOINLINE __attribute__((noinline))

/* Calls made, by the task that made them. */
struct counts {
    const char *task;
    const char *function;
    unsigned calls;
};
enum {
    PRODUCE,
    CONSUME,
    WORK,
    ON_TIMER,
    PAUSE,
    SUM_PRODUCER,
    SUM_CONSUMER,
    SUM_WORKER,
    SUM_TIMER
};
static struct counts counts[] = {
    [PRODUCE] = {"producer", "produce", 0},
    [CONSUME] = {"consumer", "consume", 0},
    [WORK] = {"worker", "work", 0},
    [ON_TIMER] = {"Tmr Svc", "on_timer", 0},
    [PAUSE] = {"producer", "pause_a_tick", 0},
    [SUM_PRODUCER] = {"producer", "checksum", 0},
    [SUM_CONSUMER] = {"consumer", "checksum", 0},
    [SUM_WORKER] = {"worker", "checksum", 0},
    [SUM_TIMER] = {"Tmr Svc", "checksum", 0},
};

static QueueHandle_t queue;
static volatile uint32_t total;

/* ---- The profile each runtime keeps (see the top) ---- */

enum { T_PRODUCER, T_CONSUMER, T_WORKER, T_TIMER, TASKS };

#if NITRO
/* Measurement buffers (function cost: 24-byte records until the end's summary; call trace:
 * stacks) and the statistics (inclusive costs: each line holds the calls made inside). */
static u32 profile_buffer[TASKS][0x10000 / sizeof(u32)];
static u32 statistics[0x800 / sizeof(u32)];

static void print(const char *text, void *context)
{
    (void)context;
    fputs(text, stdout);
}
#endif

#ifdef HOOKS_TI
HOOKCC_TI_PROFILE_BUFFER(16384);
#endif

#ifdef HOOKS_PFP
enum { ID_PAUSE = 1, ID_WORK = 2 };

static void print(const char *text, void *context)
{
    (void)context;
    fputs(text, stdout);
}
#endif

/* Called first by each task (the timer service task: from the daemon's start-up hook). No
 * hooks: its entry would come before the task's buffer, and its return find no record. */
__attribute__((no_instrument_function)) static void profile_task(unsigned task)
{
#ifdef PROFILE_TYPE_FUNCTIONCOST
    OS_InitFunctionCost(profile_buffer[task], sizeof profile_buffer[task]);
#elif defined(PROFILE_TYPE_CALLTRACE)
    OS_InitCallTrace(profile_buffer[task], sizeof profile_buffer[task], OS_CALLTRACE_STACK);
#endif
    (void)task;
}

/* No hooks: its return would come after hook_init without its entry. */
__attribute__((no_instrument_function)) static void profile_start(void)
{
#if NITRO
    OS_SetProfilePrintFunction(print, NULL);
#endif
#ifdef PROFILE_TYPE_FUNCTIONCOST
    OS_InitStatisticsEx(statistics, sizeof statistics, TRUE);
#endif
#ifdef HOOKS_TI
    hook_init();
#endif
#ifdef HOOKS_PFP
    pfpCreate();
    pfpSetPrintFunction(print, NULL);
    pfpEnable(ID_PAUSE);
    pfpEnable(ID_WORK);
#endif
}

/* In the consumer, interrupts masked: no task switch any more. */
static void profile_end(void)
{
#ifdef PROFILE_TYPE_FUNCTIONCOST
    OS_CalcStatistics(statistics);
    for (unsigned t = 0; t < TASKS; t++)
        if (t != T_CONSUMER)
            OS_CalcThreadStatistics(statistics, profile_buffer[t]);
    OS_DumpStatistics(statistics);
#endif
#ifdef HOOKS_TI
    hookcc_ti_done(); /* a debugger's breakpoint: the buffer is complete here */
    printf("records=%u\n", uiProfileDataCnt);
    printf("dropped=%lu\n", hookcc_ti_dropped);
#endif
#ifdef HOOKS_PFP
    pfpPrintStats();
#endif
}

#ifdef HOOKS_PFP
#define REGION_BEGIN(id) pfpBegin((id), NULL)
#define REGION_END(id) pfpEnd((id), 0)
#else
#define REGION_BEGIN(id) ((void)0)
#define REGION_END(id) ((void)0)
#endif

/* The timer service task's start (configUSE_DAEMON_TASK_STARTUP_HOOK), before any callback:
 * no hooks, its entry would come before the task's buffer. */
__attribute__((no_instrument_function)) void vApplicationDaemonTaskStartupHook(void)
{
    profile_task(T_TIMER);
}

/* ---- The application ---- */

NOINLINE uint32_t checksum(uint32_t value, unsigned who)
{
    counts[who].calls++;
    return value * 2654435761u;
}

NOINLINE uint32_t produce(uint32_t i)
{
    counts[PRODUCE].calls++;
    return checksum(i, SUM_PRODUCER) >> 8;
}

NOINLINE void consume(uint32_t value)
{
    counts[CONSUME].calls++;
    total += checksum(value, SUM_CONSUMER) & 0xFF;
#ifdef PROFILE_TYPE_CALLTRACE
    if (counts[CONSUME].calls == ITEMS)
        OS_DumpCallTrace(); /* the consumer's stack, no other task's frames */
#endif
}

NOINLINE void work(void)
{
    counts[WORK].calls++;
    total ^= checksum(total, SUM_WORKER);
}

NOINLINE void on_timer(TimerHandle_t timer)
{
    (void)timer;
    counts[ON_TIMER].calls++;
    total += checksum(xTaskGetTickCount(), SUM_TIMER) & 1;
}

/* The profilers' counter (the board's, ../$(BOARD)/board.c): the unit of their times. */
uint64_t hkrt_ticks_extern(void);

/* A tick switched out: the wall time it takes, in the profilers' ticks, the shortest seen. */
static uint64_t pause_wall = UINT64_MAX;

/* Set by the producer after its last pause: the consumer ends the run only then. */
static volatile int producer_done;

NOINLINE void pause_a_tick(void)
{
    counts[PAUSE].calls++;
    vTaskDelay(1);
}

static void producer(void *unused)
{
    (void)unused;
    profile_task(T_PRODUCER);
    for (uint32_t i = 0; i < ITEMS; i++) {
        uint32_t value = produce(i);
        xQueueSend(queue, &value, portMAX_DELAY);
        uint64_t before = hkrt_ticks_extern();
        REGION_BEGIN(ID_PAUSE);
        pause_a_tick();
        REGION_END(ID_PAUSE);
        uint64_t wall = hkrt_ticks_extern() - before;
        if (wall < pause_wall)
            pause_wall = wall;
    }
    producer_done = 1;
    vTaskDelete(NULL);
}

static void finish(void)
{
    printf("total %u ticks %u switches %lu\n", (unsigned)total, (unsigned)xTaskGetTickCount(),
           rtos_task_switches);
    printf("tick calls %lu\n", rtos_tick_calls);
    printf("pause wall %llu\n", (unsigned long long)pause_wall);
    for (unsigned i = 0; i < sizeof counts / sizeof counts[0]; i++)
        printf("count %s %s %u\n", counts[i].task, counts[i].function, counts[i].calls);
}

static void consumer(void *unused)
{
    (void)unused;
    profile_task(T_CONSUMER);
    for (unsigned n = 0; n < ITEMS; n++) {
        uint32_t value;
        if (xQueueReceive(queue, &value, portMAX_DELAY) != pdPASS) {
            fputs("consumer: xQueueReceive failed\n", stderr);
            exit(2);
        }
        consume(value);
    }
    /* The producer's last pause ended (a fixed delay is not enough: where qemu's clock runs
     * ahead of a busy host, the board's tick handler catches up several ticks at once and the
     * consumer, woken with the producer, could end the run inside that pause), then two more
     * ticks for the worker and the timer, then the end. */
    while (!producer_done)
        vTaskDelay(1);
    vTaskDelay(2);
    /* make run EXIT_INTERRUPTS_ON=1: the end as an application may write it,
     * the tick still running while the counts are printed and the trace is written out (its
     * records then go on; the trace must come out whole either way). */
#ifndef EXIT_INTERRUPTS_ON
    taskDISABLE_INTERRUPTS();
#endif
    finish();
    profile_end();
    exit(0);
}

static void worker(void *unused)
{
    (void)unused;
    profile_task(T_WORKER);
    for (;;) {
        for (int i = 0; i < WORK_PER_TICK; i++) {
            REGION_BEGIN(ID_WORK);
            work();
            REGION_END(ID_WORK);
        }
        vTaskDelay(1);
    }
}

/* Each task's control block and stack, named (a task's handle is its control block). */
StaticTask_t producer_task, consumer_task, worker_task;
static StackType_t producer_stack[STACK_WORDS], consumer_stack[STACK_WORDS],
    worker_stack[STACK_WORDS];

static void start(TaskFunction_t code, const char *name, UBaseType_t priority, StackType_t *stack,
                  StaticTask_t *task)
{
    if (xTaskCreateStatic(code, name, STACK_WORDS, NULL, priority, stack, task) == NULL) {
        fprintf(stderr, "rtos_app: cannot create task %s\n", name);
        exit(2);
    }
}

int main(void)
{
    queue = xQueueCreate(4, sizeof(uint32_t));
    TimerHandle_t timer = xTimerCreate("tick3", TIMER_TICKS, pdTRUE, NULL, on_timer);
    if (queue == NULL || timer == NULL || xTimerStart(timer, 0) != pdPASS) {
        fputs("rtos_app: cannot create the queue or the timer\n", stderr);
        return 2;
    }
    profile_start();
    start(producer, "producer", 2, producer_stack, &producer_task);
    start(consumer, "consumer", 4, consumer_stack, &consumer_task);
    start(worker, "worker", 1, worker_stack, &worker_task);
    vTaskStartScheduler();
    fputs("rtos_app: the scheduler returned (heap too small for the idle or timer task)\n",
          stderr);
    return 2;
}
