/* FreeRTOS's trace macros mapped to hookcc's runtimes: include this at the end of
 * FreeRTOSConfig.h (docs/baremetal.md, "FreeRTOS").
 *
 * - traceTASK_CREATE: the task's name, for the trace's threads.
 * - traceTASK_SWITCHED_OUT / traceTASK_SWITCHED_IN: the task switch, for whichever runtime the
 *   firmware links:
 *   - the bare-metal native trace (hookcc --trace): from here on the hooks' records are the
 *     new task's; each task gets its own call stack, a thread of its own in every hookprof
 *     view, named after the task (<hookcc/trace_baremetal.h>);
 *   - NITRO's call trace and function cost (NITRO_PROFILE=TRUE): each task records into the
 *     buffer it initialised itself (OS_InitCallTrace / OS_InitFunctionCost, called from the
 *     task), which the runtime switches with the task (hookcc_nitro_task_switch, which calls
 *     OS_SwitchProfilerThread); function cost leaves out the time a task is switched out;
 *   - the TI runtime (hookcc --hook-runtime=ti): task_switch_hook(prev, next), the seed's
 *     task-switch hook (define HOOKCC_FREERTOS_TI_SWITCH as task_switch_hook_circular before
 *     including this header for the circular buffer), so that the post tool gives each task
 *     its own call stack;
 *   - TI's profile points (hookcc --hook-runtime=pfp): pfpTaskSwitch(prev, next), so that a
 *     task's regions pause while it is switched out.
 * - traceTASK_DELETE: NITRO forgets the task's buffer (it stays the program's).
 * - traceISR_ENTER / traceISR_EXIT / traceISR_EXIT_TO_SCHEDULER (the ports' tick handlers):
 *   pfpHwiBegin / pfpHwiEnd, so that the interrupted region pauses. The other runtimes nest an
 *   interrupt's calls in the task it interrupted, as the TI call graph shows them.
 *
 * The runtimes' functions are weak references: without a runtime that has them (no hooks, or
 * another runtime) a macro does nothing but test null pointers.
 *
 * Build the kernel with hookcc's --hook-exclude=vTaskSwitchContext: FreeRTOS calls the switch
 * macros inside that function, whose entry is then the old task's and its exit the new task's
 * (examples/baremetal/freertos/Makefile does). The macros run inside the kernel, where
 * pxCurrentTCB and the TCB's pcTaskName are in scope.
 *
 * A port or another RTOS: call the runtime's functions (declared below) where the scheduler
 * creates a task and has chosen the next one, with the interrupts that have hooks masked, from
 * a function without hooks; HOOKCC_RTOS_SWITCH(prev, next) calls all of them.
 */
#ifndef HOOKCC_FREERTOS_H
#define HOOKCC_FREERTOS_H

#ifndef __ASSEMBLER__ /* FreeRTOSConfig.h is also included by ports' assembler sources */

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The native trace (<hookcc/trace_baremetal.h>). */
__attribute__((weak)) void hookcc_trace_task_created(const void *task, const char *name);
__attribute__((weak)) void hookcc_trace_task_switched_in(const void *task);
/* NITRO (<hookcc/nitro.h>). */
__attribute__((weak)) void hookcc_nitro_task_switch(const void *prev, const void *next);
__attribute__((weak)) void hookcc_nitro_task_deleted(const void *task, const void *running);
/* TI (<hookcc/ti.h>). */
__attribute__((weak)) void task_switch_hook(uintptr_t prevTask, uintptr_t nextTask);
__attribute__((weak)) void task_switch_hook_circular(uintptr_t prevTask, uintptr_t nextTask);
/* PFP (<hookcc/pfp.h>). */
__attribute__((weak)) void pfpTaskSwitch(void *prev, void *next);
__attribute__((weak)) void pfpHwiBegin(void *hwi);
__attribute__((weak)) void pfpHwiEnd(void *hwi);

#ifdef __cplusplus
}
#endif

#ifndef HOOKCC_FREERTOS_TI_SWITCH
#define HOOKCC_FREERTOS_TI_SWITCH task_switch_hook
#endif

/* A switch from task prev to task next (prev NULL: the first task, from main; the same task
 * when the scheduler chose the running one again, which only the trace records). */
#define HOOKCC_RTOS_SWITCH(prev, next)                                                         \
    do {                                                                                       \
        const void *hookcc_next_ = (next), *hookcc_prev_ = (prev);                             \
        if (hookcc_trace_task_switched_in != 0)                                                \
            hookcc_trace_task_switched_in(hookcc_next_);                                       \
        if (hookcc_prev_ != hookcc_next_) {                                                    \
            if (hookcc_nitro_task_switch != 0)                                                 \
                hookcc_nitro_task_switch(hookcc_prev_, hookcc_next_);                          \
            if (HOOKCC_FREERTOS_TI_SWITCH != 0)                                                \
                HOOKCC_FREERTOS_TI_SWITCH((uintptr_t)hookcc_prev_, (uintptr_t)hookcc_next_);   \
            if (pfpTaskSwitch != 0)                                                            \
                pfpTaskSwitch((void *)hookcc_prev_, (void *)hookcc_next_);                     \
        }                                                                                      \
    } while (0)

/* The task switched out, kept for the switch in: both macros expand in tasks.c only
 * (vTaskSwitchContext, and vTaskStartScheduler's first switch, which has no switch out). */
static const void *hookcc_freertos_out_ __attribute__((unused));

/* What the macros do, for a FreeRTOSConfig.h that defines them itself (to count switches, or
 * to call another tracer as well): call these from its own definitions. */
#define HOOKCC_FREERTOS_TASK_CREATE(pxNewTCB)                                                  \
    do {                                                                                       \
        if (hookcc_trace_task_created != 0)                                                    \
            hookcc_trace_task_created((pxNewTCB), (pxNewTCB)->pcTaskName);                     \
    } while (0)
#define HOOKCC_FREERTOS_TASK_SWITCHED_OUT() (hookcc_freertos_out_ = pxCurrentTCB)
#define HOOKCC_FREERTOS_TASK_SWITCHED_IN()                                                     \
    do {                                                                                       \
        HOOKCC_RTOS_SWITCH(hookcc_freertos_out_, pxCurrentTCB);                                \
        hookcc_freertos_out_ = pxCurrentTCB;                                                   \
    } while (0)
#define HOOKCC_FREERTOS_TASK_DELETE(pxTCB)                                                     \
    do {                                                                                       \
        if (hookcc_nitro_task_deleted != 0)                                                    \
            hookcc_nitro_task_deleted((pxTCB), pxCurrentTCB);                                  \
    } while (0)
#define HOOKCC_FREERTOS_ISR_ENTER()                                                            \
    do {                                                                                       \
        if (pfpHwiBegin != 0)                                                                  \
            pfpHwiBegin(0);                                                                    \
    } while (0)
#define HOOKCC_FREERTOS_ISR_EXIT()                                                             \
    do {                                                                                       \
        if (pfpHwiEnd != 0)                                                                    \
            pfpHwiEnd(0);                                                                      \
    } while (0)

#ifndef traceTASK_CREATE
#define traceTASK_CREATE(pxNewTCB) HOOKCC_FREERTOS_TASK_CREATE(pxNewTCB)
#endif
#ifndef traceTASK_SWITCHED_OUT
#define traceTASK_SWITCHED_OUT() HOOKCC_FREERTOS_TASK_SWITCHED_OUT()
#endif
#ifndef traceTASK_SWITCHED_IN
#define traceTASK_SWITCHED_IN() HOOKCC_FREERTOS_TASK_SWITCHED_IN()
#endif
#ifndef traceTASK_DELETE
#define traceTASK_DELETE(pxTCB) HOOKCC_FREERTOS_TASK_DELETE(pxTCB)
#endif
#ifndef traceISR_ENTER
#define traceISR_ENTER() HOOKCC_FREERTOS_ISR_ENTER()
#endif
#ifndef traceISR_EXIT
#define traceISR_EXIT() HOOKCC_FREERTOS_ISR_EXIT()
#endif
#ifndef traceISR_EXIT_TO_SCHEDULER
#define traceISR_EXIT_TO_SCHEDULER() HOOKCC_FREERTOS_ISR_EXIT()
#endif

#endif /* __ASSEMBLER__ */

#endif /* HOOKCC_FREERTOS_H */
