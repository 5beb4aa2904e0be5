/* The kernel's tick against the trace's clock (make run HOOKS=trace APP=tick_app.c, or
 * make stream HOOKS=stream APP=tick_app.c; docs/baremetal.md, "FreeRTOS"): one task waits
 * TICKS ticks in wait_ticks() (vTaskDelay) and prints how many ticks the kernel counted
 * meanwhile. wait_ticks' inclusive time in the trace is then TICKS / configTICK_RATE_HZ
 * seconds by the board's counter, give or take one tick (tests/tests/freertos_tick.rs). */
#include <stdio.h>
#include <stdlib.h>

#include "FreeRTOS.h"
#include "task.h"

#ifndef TICKS
#define TICKS 1000
#endif

__attribute__((noinline)) void wait_ticks(TickType_t ticks)
{
    vTaskDelay(ticks);
}

static void ticker(void *unused)
{
    (void)unused;
    TickType_t before = xTaskGetTickCount();
    wait_ticks(TICKS);
    TickType_t after = xTaskGetTickCount();
    taskDISABLE_INTERRUPTS();
    printf("waited %u ticks, the kernel counted %u\n", (unsigned)TICKS,
           (unsigned)(after - before));
    exit(0);
}

int main(void)
{
    if (xTaskCreate(ticker, "ticker", 512, NULL, 2, NULL) != pdPASS)
        return 2;
    vTaskStartScheduler();
    return 2;
}
