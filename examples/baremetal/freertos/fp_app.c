/* Floating point under interrupts, on the Cortex-M4F board (make run BOARD=cortex-m4f
 * APP=fp_app.c HOOKS=trace; tests/tests/freertos_fp.rs): two tasks of the same priority, fpa
 * and fpb, compute fp_series() ROUNDS times each and fold the results into an accumulator that
 * lives across the calls (a callee-saved s16-s31 register), while CMSDK timer 1 interrupts
 * every IRQ_PERIOD_COUNTS clocks (about 13 µs, a prime count so that it lands anywhere) and its
 * handler computes irq_fp(), with other values, in the same registers. The kernel's tick
 * time-slices the two tasks (the port's PendSV saves s16-s31 for a task that used the FPU).
 *
 * The timer's interrupt is more urgent than configMAX_SYSCALL_INTERRUPT_PRIORITY: the kernel
 * never masks it (it calls no FreeRTOS function), so it also comes inside the tick, inside
 * PendSV's context switch, and inside the hooks. What it interrupts with the FPU in use has
 * s0-s15 and FPSCR saved by the core only when the handler's first FP instruction comes (lazy
 * stacking: FPCCR's LSPACT is set on entry until then); board_timer1_isr counts those entries.
 *
 * main computes every result first, before the timer starts; the tasks and the handler compare
 * theirs with them bit for bit. When both tasks are done, report() (a lower priority: it runs
 * only then) stops the timer, prints the counts ("count TASK FUNCTION N" as rtos_app.c, then
 * "irq calls N during_fp N mismatches N" and "fp mismatches N") and exits 0 if every result
 * was exact, 1 if not. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "FreeRTOS.h"
#include "task.h"

#define ROUNDS 1500
#define TERMS 128
#define INPUTS 8
#define IRQ_PERIOD_COUNTS 331

/* ARM CMSDK APB timer 1 (DDI 0479), IRQ 9 on mps2-an385/an386/an500 (../cortex-m3/board.c has
 * its vector). */
#define TIMER1_CTRL (*(volatile uint32_t *)0x40001000u)
#define TIMER1_VALUE (*(volatile uint32_t *)0x40001004u)
#define TIMER1_RELOAD (*(volatile uint32_t *)0x40001008u)
#define TIMER1_INTCLEAR (*(volatile uint32_t *)0x4000100Cu)
#define TIMER1_IRQ 9
#define NVIC_ISER0 (*(volatile uint32_t *)0xE000E100u)
#define NVIC_ICER0 (*(volatile uint32_t *)0xE000E180u)
#define NVIC_IPR ((volatile uint8_t *)0xE000E400u)
/* More urgent than configMAX_SYSCALL_INTERRUPT_PRIORITY (5 << 5): never masked by the kernel. */
#define TIMER1_PRIORITY (2 << 5)
/* FP Context Control Register (ARMv7-M ARM, B3.2.22): LSPACT, lazy state preservation active. */
#define FPCCR (*(volatile uint32_t *)0xE000EF34u)
#define FPCCR_LSPACT 1u

static const float inputs[INPUTS] = {0.5f, 1.25f, 2.0f, 3.75f, 0.125f, 5.5f, 7.0f, 9.25f};
static float task_expected[INPUTS], irq_expected[INPUTS];

/* Four values carried through TERMS steps of multiplies and adds: every s-register the compiler
 * cares to use. */
__attribute__((noinline)) float fp_series(float x)
{
    float a = x, b = x * 0.5f, c = x + 1.0f, d = 1.0f / (x + 2.0f), s = 0.0f;
    for (int i = 0; i < TERMS; i++) {
        a = a * 0.999f + b * 0.001f;
        b = b * 1.0001f - c * 0.0002f;
        c = c * 0.9995f + d;
        d = d * 0.5f + a * 0.25f;
        s += a * b - c * d;
    }
    return s;
}

/* The handler's computation: other constants, fewer steps, the same registers. */
__attribute__((noinline)) float irq_fp(float x)
{
    float a = x * 3.0f, b = 1.0f / x, s = 1.0f;
    for (int i = 0; i < 16; i++) {
        a = a * 0.75f + b;
        b = b * 1.5f - a * 0.125f;
        s = s * 0.5f + a * b;
    }
    return s;
}

static int same(float a, float b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

volatile unsigned long irq_calls, irq_during_fp, irq_mismatches;

__attribute__((noinline)) void irq_work(void)
{
    unsigned long n = irq_calls++;
    if (!same(irq_fp(inputs[n % INPUTS]), irq_expected[n % INPUTS]))
        irq_mismatches++;
}

/* The vector's handler (../cortex-m3/board.c): FPCCR read before any FP instruction of the
 * handler (irq_work's come later); no hooks, so that none comes first either. */
__attribute__((no_instrument_function)) void board_timer1_isr(void)
{
    uint32_t lazy = FPCCR & FPCCR_LSPACT;
    TIMER1_INTCLEAR = 1;
    irq_during_fp += lazy;
    irq_work();
}

struct fp_task {
    const char *name;
    unsigned offset; /* where in inputs[] it starts: the two tasks differ */
    unsigned long calls, mismatches;
    float acc, acc_expected;
};

static struct fp_task tasks[2] = {{"fpa", 0}, {"fpb", 3}};

static void fp_task(void *parameter)
{
    struct fp_task *t = parameter;
    float acc = 0.0f;
    for (unsigned i = 0; i < ROUNDS; i++) {
        unsigned k = (i + t->offset) % INPUTS;
        float r = fp_series(inputs[k]);
        t->calls++;
        if (!same(r, task_expected[k]))
            t->mismatches++;
        acc = acc * 0.5f + r;
    }
    t->acc = acc;
    vTaskSuspend(NULL);
}

static void report(void *unused)
{
    (void)unused;
    NVIC_ICER0 = 1u << TIMER1_IRQ;
    TIMER1_CTRL = 0;
    taskDISABLE_INTERRUPTS();
    unsigned long mismatches = irq_mismatches;
    for (int j = 0; j < 2; j++) {
        struct fp_task *t = &tasks[j];
        printf("count %s fp_series %lu\n", t->name, t->calls);
        if (!same(t->acc, t->acc_expected))
            mismatches++;
        mismatches += t->mismatches;
    }
    printf("count main fp_series %u\n", INPUTS);
    printf("count main irq_fp %u\n", INPUTS);
    printf("irq calls %lu during_fp %lu mismatches %lu\n", irq_calls, irq_during_fp,
           irq_mismatches);
    printf("fp mismatches %lu\n", mismatches);
    exit(mismatches == 0 ? 0 : 1);
}

int main(void)
{
    for (int k = 0; k < INPUTS; k++) {
        task_expected[k] = fp_series(inputs[k]);
        irq_expected[k] = irq_fp(inputs[k]);
    }
    for (int j = 0; j < 2; j++) {
        float acc = 0.0f;
        for (unsigned i = 0; i < ROUNDS; i++)
            acc = acc * 0.5f + task_expected[(i + tasks[j].offset) % INPUTS];
        tasks[j].acc_expected = acc;
        if (xTaskCreate(fp_task, tasks[j].name, 512, &tasks[j], 2, NULL) != pdPASS)
            return 2;
    }
    if (xTaskCreate(report, "report", 512, NULL, 1, NULL) != pdPASS)
        return 2;

    NVIC_IPR[TIMER1_IRQ] = TIMER1_PRIORITY;
    TIMER1_CTRL = 0;
    TIMER1_RELOAD = IRQ_PERIOD_COUNTS;
    TIMER1_VALUE = IRQ_PERIOD_COUNTS;
    TIMER1_CTRL = 1u | (1u << 3); /* enable, interrupt enable */
    NVIC_ISER0 = 1u << TIMER1_IRQ;
    vTaskStartScheduler();
    return 2;
}
