/* A FreeRTOS firmware that runs for a while, for streaming (make stream HOOKS=stream
 * APP=stream_app.c; docs/baremetal.md, "Streaming"): three tasks and a queue, each task counting
 * the calls it makes so that the streamed trace can be checked against them
 * (tests/tests/baremetal.rs).
 *
 * - "producer" makes a value every PERIOD ticks (produce()) and sends it into the queue;
 * - "consumer" takes each from the queue (consume());
 * - "worker" does WORK rounds of work() every PERIOD ticks.
 * All three call checksum(). After SECONDS seconds of the kernel's ticks the consumer prints
 * the counts, and the runtime's own (records made, records lost), and ends the run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "FreeRTOS.h"
#include "queue.h"
#include "task.h"

#if defined(__has_include) && __has_include(<hookcc/trace_baremetal.h>)
#include <hookcc/trace_baremetal.h>
#endif

#ifndef SECONDS
#define SECONDS 60
#endif
#ifndef PERIOD
#define PERIOD 10 /* ticks between rounds */
#endif
#ifndef WORK
#define WORK 4
#endif
#define STACK_WORDS 512
#define NOINLINE __attribute__((noinline))

static unsigned produced, consumed, worked, summed;
static QueueHandle_t queue;
static volatile uint32_t total;

NOINLINE uint32_t checksum(uint32_t value)
{
    summed++;
    return value * 2654435761u;
}

NOINLINE uint32_t produce(uint32_t i)
{
    produced++;
    return checksum(i) >> 8;
}

NOINLINE void consume(uint32_t value)
{
    consumed++;
    total += checksum(value) & 0xFF;
}

NOINLINE void work(void)
{
    worked++;
    total ^= checksum(total);
}

static void producer(void *unused)
{
    (void)unused;
    for (uint32_t i = 0;; i++) {
        uint32_t value = produce(i);
        xQueueSend(queue, &value, portMAX_DELAY);
        vTaskDelay(PERIOD);
    }
}

static void consumer(void *unused)
{
    (void)unused;
    for (;;) {
        uint32_t value;
        if (xQueueReceive(queue, &value, portMAX_DELAY) != pdPASS)
            exit(2);
        consume(value);
        if (xTaskGetTickCount() >= (TickType_t)SECONDS * configTICK_RATE_HZ)
            break;
    }
    taskDISABLE_INTERRUPTS();
    printf("ticks %u switches %lu\n", (unsigned)xTaskGetTickCount(), rtos_task_switches);
    printf("count produce %u\ncount consume %u\ncount work %u\ncount checksum %u\n", produced,
           consumed, worked, summed);
#ifdef HOOKCC_TRACE_API
    printf("stream records %u lost %u\n", (unsigned)hookcc_trace_stream_records,
           (unsigned)hookcc_trace_stream_lost);
#endif
    exit(0);
}

static void worker(void *unused)
{
    (void)unused;
    for (;;) {
        for (int i = 0; i < WORK; i++)
            work();
        vTaskDelay(PERIOD);
    }
}

/* FreeRTOSConfig.h asks for it (configUSE_DAEMON_TASK_STARTUP_HOOK): nothing to do here. */
void vApplicationDaemonTaskStartupHook(void)
{
}

static void start(TaskFunction_t code, const char *name, UBaseType_t priority)
{
    if (xTaskCreate(code, name, STACK_WORDS, NULL, priority, NULL) != pdPASS)
        exit(2);
}

int main(void)
{
    queue = xQueueCreate(4, sizeof(uint32_t));
    if (queue == NULL)
        return 2;
    start(producer, "producer", 2);
    start(consumer, "consumer", 3);
    start(worker, "worker", 1);
    vTaskStartScheduler();
    return 2;
}
