/* What FreeRTOS's port needs from the board and from the application, on both boards:
 *
 * Cortex-M3 (GCC/ARM_CM3 port, ../cortex-m3/board.c):
 * - the tick: the board's CMSDK timer 0 interrupt instead of SysTick, which the board keeps as
 *   the profilers' free-running counter (hkrt_ticks_extern). The port's vPortSetupTimerInterrupt
 *   is weak for this; the timer's interrupt calls the port's xPortSysTickHandler, at the
 *   kernel's interrupt priority (the lowest), as the port's SysTick would have been.
 * RV32 (GCC/RISC-V port, ../riscv32/board.c):
 * - the port's trap handler in mtvec (the port leaves that to the application), before main;
 *   the port's own tick (the CLINT's mtimecmp; the board reads mtime as its counter, which
 *   stays as it is).
 * Both:
 * - the idle hook (configUSE_IDLE_HOOK): wait for the next interrupt (WFI); the timer task's
 *   start-up hook, empty unless the application has one.
 * - configASSERT's failure: file and line on stderr, then exit status 3.
 * - the kernel's count of task switches (FreeRTOSConfig.h's traceTASK_SWITCHED_IN) and of its
 *   tick function's calls (traceTASK_INCREMENT_TICK).
 * Nothing here gets hooks: the tick setup runs inside the scheduler's start, the idle hook runs
 * once a tick. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "FreeRTOS.h"
#include "task.h"

#define RTOS_NOHOOKS __attribute__((no_instrument_function))

volatile unsigned long rtos_task_switches;
volatile unsigned long rtos_tick_calls;

#if defined(__arm__)
void board_start_tick(unsigned period_us, void (*tick)(void));
void xPortSysTickHandler(void);

#define TIMER0_IRQ 8
/* NVIC interrupt priority registers, one byte an interrupt (ARMv7-M ARM, B3.4). */
#define NVIC_IPR ((volatile uint8_t *)0xE000E400u)

uint64_t hkrt_ticks_extern(void);

/* The timer's period in counter ticks (SysTick's, the CPU clock): the CMSDK timer counts
 * RELOAD + 1 clocks a period (200 periods of board_start_tick's RELOAD 25000 measured 5 000 200
 * counter ticks under qemu). */
#define RTOS_TICK_COUNTS (configCPU_CLOCK_HZ / configTICK_RATE_HZ + 1)

/* When the next kernel tick is due, by the counter; never later than the timer's own. */
static uint64_t rtos_tick_due;

/* The tick interrupt: one kernel tick for the interrupt, and one more for every further period
 * the counter says has passed since the tick before. qemu (7.2, -icount) delivers a timer
 * interrupt to a Cortex-M halted in WFI (the idle hook) only at the timer's next expiry, one
 * period late, and the two expiries become one interrupt: without this count, 1 000 ticks of
 * vTaskDelay took 2.0 s of the counter's time with -icount sleep=off and 1.01-1.03 s with
 * sleep=on (docs/baremetal.md, "FreeRTOS"). Real silicon has no such delay; the loop then runs
 * once. */
static RTOS_NOHOOKS void rtos_tick(void)
{
    uint64_t now = hkrt_ticks_extern();
    do {
        rtos_tick_due += RTOS_TICK_COUNTS;
        xPortSysTickHandler();
    } while ((int64_t)(now - rtos_tick_due) >= 0);
}

RTOS_NOHOOKS void vPortSetupTimerInterrupt(void)
{
    NVIC_IPR[TIMER0_IRQ] = configKERNEL_INTERRUPT_PRIORITY;
    /* Read before the timer starts: the first tick is due no later than its interrupt. */
    rtos_tick_due = hkrt_ticks_extern() + RTOS_TICK_COUNTS;
    board_start_tick(1000000u / configTICK_RATE_HZ, rtos_tick);
}
#elif defined(__riscv)
void freertos_risc_v_trap_handler(void);

/* Runs before main (picolibc's crt0 calls the constructors). The handler is 4-byte aligned
 * (mtvec's direct mode). */
__attribute__((constructor)) static RTOS_NOHOOKS void rtos_trap_handler(void)
{
    __asm__ __volatile__("csrw mtvec, %0" : : "r"(freertos_risc_v_trap_handler));
}
#else
#error "rtos_board.c: no FreeRTOS port for this board (the Cortex-M3 and RV32 boards have one)"
#endif

/* The timer service task's start (FreeRTOSConfig.h's configUSE_DAEMON_TASK_STARTUP_HOOK, which
 * rtos_app.c uses to give that task its profile): an application without one gets this. */
__attribute__((weak)) RTOS_NOHOOKS void vApplicationDaemonTaskStartupHook(void) {}

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
