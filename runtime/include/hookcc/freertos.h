/* FreeRTOS's trace macros mapped to hookcc's runtimes: include this at the end of
 * FreeRTOSConfig.h (docs/baremetal.md, "FreeRTOS").
 *
 * - traceTASK_CREATE: the task's name, for the trace's threads.
 * - traceTASK_SWITCHED_IN: from here on the hooks' records are the new task's. With the
 *   bare-metal native trace (hookcc --trace) each task gets its own call stack, a thread of its
 *   own in every hookprof view, named after the task (<hookcc/trace_baremetal.h>).
 *
 * The runtime's functions are weak references: without a runtime that has them (no hooks, or
 * another runtime) the macros do nothing but a test of a null pointer.
 *
 * Build the kernel with hookcc's --hook-exclude=vTaskSwitchContext: FreeRTOS calls the macro
 * inside that function, whose entry is then the old task's and its exit the new task's
 * (examples/baremetal/freertos/Makefile does). The macros run inside the kernel, where
 * pxCurrentTCB and the TCB's pcTaskName are in scope.
 *
 * A port or another RTOS: call hookcc_trace_task_created and hookcc_trace_task_switched_in
 * where the scheduler creates a task and has chosen the next one (interrupts with hooks masked).
 */
#ifndef HOOKCC_FREERTOS_H
#define HOOKCC_FREERTOS_H

#ifndef __ASSEMBLER__ /* FreeRTOSConfig.h is also included by ports' assembler sources */

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((weak)) void hookcc_trace_task_created(const void *task, const char *name);
__attribute__((weak)) void hookcc_trace_task_switched_in(const void *task);

#ifdef __cplusplus
}
#endif

/* What the macros do, for a FreeRTOSConfig.h that defines them itself (to count switches, or
 * to call another tracer as well): call these from its own definitions. */
#define HOOKCC_FREERTOS_TASK_CREATE(pxNewTCB)                                                  \
    do {                                                                                       \
        if (hookcc_trace_task_created != 0)                                                    \
            hookcc_trace_task_created((pxNewTCB), (pxNewTCB)->pcTaskName);                     \
    } while (0)
#define HOOKCC_FREERTOS_TASK_SWITCHED_IN()                                                     \
    do {                                                                                       \
        if (hookcc_trace_task_switched_in != 0)                                                \
            hookcc_trace_task_switched_in(pxCurrentTCB);                                       \
    } while (0)

#ifndef traceTASK_CREATE
#define traceTASK_CREATE(pxNewTCB) HOOKCC_FREERTOS_TASK_CREATE(pxNewTCB)
#endif
#ifndef traceTASK_SWITCHED_IN
#define traceTASK_SWITCHED_IN() HOOKCC_FREERTOS_TASK_SWITCHED_IN()
#endif

#endif /* __ASSEMBLER__ */

#endif /* HOOKCC_FREERTOS_H */
