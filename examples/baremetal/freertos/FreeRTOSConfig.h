/* FreeRTOS's configuration for the example (examples/baremetal/freertos): FreeRTOS-Kernel
 * V11.2.0 with its GCC/ARM_CM3 port on qemu's mps2-an385, or its GCC/RISC-V port on qemu's
 * RV32 virt (docs/baremetal.md, "FreeRTOS").
 * The settings are the kernel's documented ones (FreeRTOS.h lists every default); what is
 * particular to this board and to hookcc is explained where it is set. */
#ifndef FREERTOS_CONFIG_H
#define FREERTOS_CONFIG_H

#define configUSE_PREEMPTION 1
#define configUSE_PORT_OPTIMISED_TASK_SELECTION 0
#define configUSE_TICKLESS_IDLE 0
#if defined(__riscv)
/* The port's tick counts the CLINT's mtime (10 MHz on virt) and compares with mtimecmp. */
#define configCPU_CLOCK_HZ 10000000
#define configMTIME_BASE_ADDRESS 0x0200BFF8
#define configMTIMECMP_BASE_ADDRESS 0x02004000
#define configISR_STACK_SIZE_WORDS 1024
#else
#define configCPU_CLOCK_HZ 25000000 /* AN385's SYSCLK */
#endif
#define configTICK_RATE_HZ 1000
#define configMAX_PRIORITIES 5
#define configMINIMAL_STACK_SIZE 256 /* words */
#define configMAX_TASK_NAME_LEN 16
#define configTICK_TYPE_WIDTH_IN_BITS TICK_TYPE_WIDTH_32_BITS
#define configIDLE_SHOULD_YIELD 1
#define configUSE_TASK_NOTIFICATIONS 1
#define configUSE_MUTEXES 0
#define configUSE_RECURSIVE_MUTEXES 0
#define configUSE_COUNTING_SEMAPHORES 0
#define configQUEUE_REGISTRY_SIZE 0
#define configUSE_QUEUE_SETS 0
#define configUSE_TIME_SLICING 1
#define configUSE_NEWLIB_REENTRANT 0
#define configENABLE_BACKWARD_COMPATIBILITY 0

/* Memory: heap_4 in a static array for the queue and the timer; the application's tasks are
 * static (xTaskCreateStatic: their control blocks have symbols), the idle and timer tasks' memory
 * the kernel's own (configKERNEL_PROVIDED_STATIC_MEMORY). */
#define configSUPPORT_STATIC_ALLOCATION 1
#define configKERNEL_PROVIDED_STATIC_MEMORY 1
#define configSUPPORT_DYNAMIC_ALLOCATION 1
#define configTOTAL_HEAP_SIZE (64 * 1024)

/* The idle hook waits for the next interrupt (WFI): an idle loop that spins would fill the
 * trace with the idle task's calls. */
#define configUSE_IDLE_HOOK 1
#define configUSE_TICK_HOOK 0
#define configCHECK_FOR_STACK_OVERFLOW 0
#define configUSE_MALLOC_FAILED_HOOK 0
#define configUSE_TRACE_FACILITY 0
#define configGENERATE_RUN_TIME_STATS 0

/* Software timers: the timer service task ("Tmr Svc") runs their callbacks. */
#define configUSE_TIMERS 1
/* vApplicationDaemonTaskStartupHook: the timer service task's first act (the application gives
 * it its profile there). */
#define configUSE_DAEMON_TASK_STARTUP_HOOK 1
#define configTIMER_TASK_PRIORITY 3
#define configTIMER_QUEUE_LENGTH 4
#define configTIMER_TASK_STACK_DEPTH 512

#if defined(__arm__)
/* Interrupt priorities, ARMv7-M's (lower number: more urgent), as the top bits of the 8-bit
 * field: the kernel's own interrupts (PendSV, SysTick, and the tick timer here) at the lowest,
 * interrupts that call FreeRTOS's FromISR functions no more urgent than 5 << 5. */
#define configKERNEL_INTERRUPT_PRIORITY 255
#define configMAX_SYSCALL_INTERRUPT_PRIORITY (5 << 5)

/* The port's two handlers under the names the board's vector table (../cortex-m3/board.c) and
 * picolibc's give them; the port checks at start that the table holds them. */
#define vPortSVCHandler arm_svc_isr
#define xPortPendSVHandler arm_pendsv_isr
#define configCHECK_HANDLER_INSTALLATION 1
#endif

/* A failed assertion says where and ends the run (rtos_board.c). */
void rtos_assert_failed(const char *file, int line);
#define configASSERT(x)                                                                        \
    do {                                                                                       \
        if (!(x))                                                                              \
            rtos_assert_failed(__FILE__, __LINE__);                                            \
    } while (0)

#define INCLUDE_vTaskDelay 1
#define INCLUDE_vTaskDelete 1
#define INCLUDE_vTaskSuspend 1
#define INCLUDE_xTaskGetSchedulerState 1
#define INCLUDE_xTimerPendFunctionCall 0

/* The kernel's count of task switches (rtos_board.c), which the example prints to compare with
 * the trace's; the switch is then hookcc's (below). */
#ifndef __ASSEMBLER__
extern volatile unsigned long rtos_task_switches;
extern volatile unsigned long rtos_tick_calls;
#endif
#define traceTASK_SWITCHED_IN()                                                                \
    do {                                                                                       \
        rtos_task_switches++;                                                                  \
        HOOKCC_FREERTOS_TASK_SWITCHED_IN();                                                    \
    } while (0)

/* The kernel's count of its tick function's calls (rtos_board.c): one a tick interrupt, and one
 * more for each tick that came while the scheduler was suspended, which xTaskResumeAll replays.
 * So the tick count (xTaskGetTickCount) is not the number of calls a trace must show. */
#define traceTASK_INCREMENT_TICK(xTickCount) (rtos_tick_calls++)

/* The tasks for hookcc's runtimes: each task its own thread in the trace. hookcc puts its
 * headers on the include path when it adds hooks; without hooks there is nothing to map. */
#if defined(__has_include) && __has_include(<hookcc/freertos.h>)
#include <hookcc/freertos.h>
#else
#define HOOKCC_FREERTOS_TASK_SWITCHED_IN() ((void)0)
#endif

#endif /* FREERTOS_CONFIG_H */
