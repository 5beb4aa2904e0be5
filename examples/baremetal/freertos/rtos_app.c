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
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "FreeRTOS.h"
#include "queue.h"
#include "task.h"
#include "timers.h"

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
enum { PRODUCE, CONSUME, WORK, ON_TIMER, SUM_PRODUCER, SUM_CONSUMER, SUM_WORKER, SUM_TIMER };
static struct counts counts[] = {
    [PRODUCE] = {"producer", "produce", 0},
    [CONSUME] = {"consumer", "consume", 0},
    [WORK] = {"worker", "work", 0},
    [ON_TIMER] = {"Tmr Svc", "on_timer", 0},
    [SUM_PRODUCER] = {"producer", "checksum", 0},
    [SUM_CONSUMER] = {"consumer", "checksum", 0},
    [SUM_WORKER] = {"worker", "checksum", 0},
    [SUM_TIMER] = {"Tmr Svc", "checksum", 0},
};

static QueueHandle_t queue;
static volatile uint32_t total;
static volatile int consumer_done;

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

static void producer(void *unused)
{
    (void)unused;
    for (uint32_t i = 0; i < ITEMS; i++) {
        uint32_t value = produce(i);
        xQueueSend(queue, &value, portMAX_DELAY);
        vTaskDelay(1);
    }
    vTaskDelete(NULL);
}

static void finish(void)
{
    printf("total %u ticks %u switches %lu\n", (unsigned)total, (unsigned)xTaskGetTickCount(),
           rtos_task_switches);
    for (unsigned i = 0; i < sizeof counts / sizeof counts[0]; i++)
        printf("count %s %s %u\n", counts[i].task, counts[i].function, counts[i].calls);
}

static void consumer(void *unused)
{
    (void)unused;
    for (unsigned n = 0; n < ITEMS; n++) {
        uint32_t value;
        if (xQueueReceive(queue, &value, portMAX_DELAY) != pdPASS) {
            fputs("consumer: xQueueReceive failed\n", stderr);
            exit(2);
        }
        consume(value);
    }
    /* One more tick for the worker and the timer, then the end. */
    vTaskDelay(1);
    taskDISABLE_INTERRUPTS();
    finish();
    exit(0);
}

static void worker(void *unused)
{
    (void)unused;
    for (;;) {
        for (int i = 0; i < WORK_PER_TICK; i++)
            work();
        vTaskDelay(1);
    }
}

static void start(TaskFunction_t code, const char *name, UBaseType_t priority)
{
    if (xTaskCreate(code, name, STACK_WORDS, NULL, priority, NULL) != pdPASS) {
        fprintf(stderr, "rtos_app: cannot create task %s (heap: configTOTAL_HEAP_SIZE)\n", name);
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
    start(producer, "producer", 2);
    start(consumer, "consumer", 4);
    start(worker, "worker", 1);
    vTaskStartScheduler();
    fputs("rtos_app: the scheduler returned (heap too small for the idle or timer task)\n",
          stderr);
    return 2;
}
