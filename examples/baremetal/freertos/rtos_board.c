/* What FreeRTOS's GCC/ARM_CM3 port needs from this board (../cortex-m3/board.c) and from the
 * application:
 * - the tick: the board's CMSDK timer 0 interrupt instead of SysTick, which the board keeps as
 *   the profilers' free-running counter (hkrt_ticks_extern). The port's vPortSetupTimerInterrupt
 *   is weak for this; the timer's interrupt calls the port's xPortSysTickHandler, at the
 *   kernel's interrupt priority (the lowest), as the port's SysTick would have been.
 * - the idle hook (configUSE_IDLE_HOOK): WFI until the next interrupt.
 * - configASSERT's failure: file and line on stderr, then exit status 3.
 * Nothing here gets hooks: the tick setup runs inside the scheduler's start, the idle hook runs
 * once a tick. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "FreeRTOS.h"
#include "task.h"

#define RTOS_NOHOOKS __attribute__((no_instrument_function))

void board_start_tick(unsigned period_us, void (*tick)(void));
void xPortSysTickHandler(void);

#define TIMER0_IRQ 8
/* NVIC interrupt priority registers, one byte an interrupt (ARMv7-M ARM, B3.4). */
#define NVIC_IPR ((volatile uint8_t *)0xE000E400u)

/* Counted by FreeRTOSConfig.h's traceTASK_SWITCHED_IN. */
volatile unsigned long rtos_task_switches;

RTOS_NOHOOKS void vPortSetupTimerInterrupt(void)
{
    NVIC_IPR[TIMER0_IRQ] = configKERNEL_INTERRUPT_PRIORITY;
    board_start_tick(1000000u / configTICK_RATE_HZ, xPortSysTickHandler);
}

RTOS_NOHOOKS void vApplicationIdleHook(void)
{
    __asm__ __volatile__("wfi");
}

RTOS_NOHOOKS void rtos_assert_failed(const char *file, int line)
{
    taskDISABLE_INTERRUPTS();
    fprintf(stderr, "%s:%d: FreeRTOS assertion failed\n", file, line);
    exit(3);
}
