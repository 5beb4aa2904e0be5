/* The board support of the Cortex-M3 example: qemu's mps2-an385.
 *
 * - The counter the profiler runtimes time with: SysTick, the core's 24-bit down-counter,
 *   clocked by the CPU clock (25 MHz on AN385), reloading from 0xFFFFFF. hkrt_ticks_extern()
 *   counts up from it and extends it to 64 bits in software: each read adds the time since the
 *   previous one, so reads must come at least once per wrap (0.67 s), which a profiled program
 *   does at every hook. The read is done with interrupts masked (PRIMASK), so hooks in
 *   interrupt handlers may call it too. (DWT CYCCNT would be the usual cycle counter on real
 *   silicon; qemu does not implement it.)
 * - Where the NITRO profiler prints: stdout, through picolibc's semihosting (see ../arm926).
 * - The tick interrupt of ../ti_tasks.c: the CMSDK APB timer 0 (IRQ 8 on AN385), through a
 *   vector table of our own that replaces picolibc's (which has the core exceptions only).
 *   The same timer samples the interrupted PC for gprof (../gprof_sampling.c).
 * - The tasks' context switch (r4-r11, lr; s16-s31 too with an FPU) and their first frames.
 * - With an FPU (__ARM_FP: ../cortex-m4f, hard-float ABI), the reset entry turns it on before
 *   the start-up code runs: an FP instruction with the coprocessors off is a UsageFault.
 *
 * Nothing here may get hooks: the runtime calls the counter from inside its hooks.
 */
#include <stdint.h>
#include <stdio.h>

#define BOARD_NOHOOKS __attribute__((no_instrument_function))

/* ARMv7-M Architecture Reference Manual, B3.3: SysTick. */
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define SYST_CSR_ENABLE (1u << 0)
#define SYST_CSR_CLKSOURCE_CPU (1u << 2) /* no TICKINT: no interrupt, only the count */
#define SYST_MASK 0x00FFFFFFu
#define CPU_HZ 25000000u /* AN385's SYSCLK, which qemu's SysTick counts */

/* The 64-bit count and SysTick's value at the last read. */
struct board_counter {
    uint64_t total;
    uint32_t last;
};
__attribute__((visibility("hidden"), used)) struct board_counter board_counter;

static BOARD_NOHOOKS void counter_start(void)
{
    SYST_CSR = 0;
    SYST_RVR = SYST_MASK;
    SYST_CVR = 0; /* any write clears it: the count restarts from the reload value */
    board_counter.last = SYST_MASK;
    SYST_CSR = SYST_CSR_ENABLE | SYST_CSR_CLKSOURCE_CPU;
}

/* What it does, in C:
 *
 *     primask = PRIMASK; PRIMASK = 1;
 *     uint32_t value = SYST_CVR;            // counts down: the time since the last read is
 *     board_counter.total += (board_counter.last - value) & SYST_MASK;   // last - value
 *     board_counter.last = value;
 *     PRIMASK = primask;
 *     return board_counter.total;
 *
 * Written in assembly: every hook runs it, and clang -O1 makes it 18 instructions with a stack
 * frame, these 15 none (bench/stream.py: 3 instructions a record). Thumb-2 (ARMv7-M and up). */
__attribute__((naked)) uint64_t hkrt_ticks_extern(void)
{
    __asm__ __volatile__("mrs r3, primask\n\t"
                         "cpsid i\n\t"
                         "ldr r2, =board_counter\n\t"
                         "ldr r0, =0xE000E018\n\t" /* SYST_CVR */
                         "ldr r0, [r0]\n\t"
                         "ldr r1, [r2, #8]\n\t" /* last */
                         "str r0, [r2, #8]\n\t"
                         "subs r0, r1, r0\n\t"
                         "bic r0, r0, #0xFF000000\n\t" /* & SYST_MASK */
                         "ldrd r1, r12, [r2]\n\t"     /* total */
                         "adds r0, r0, r1\n\t"
                         "adc r1, r12, #0\n\t"
                         "strd r0, r1, [r2]\n\t"
                         "msr primask, r3\n\t"
                         "bx lr\n\t"
                         ".ltorg");
}

BOARD_NOHOOKS uint64_t hkrt_ticks_per_second_extern(void)
{
    return CPU_HZ;
}

#if defined(PROFILE_TYPE_CALLTRACE) || defined(PROFILE_TYPE_FUNCTIONCOST)
#include <hookcc/nitro.h>

static BOARD_NOHOOKS void board_print(const char *text, void *context)
{
    (void)context;
    fputs(text, stdout);
}
#endif

/* ---- The tick interrupt ------------------------------------------------------------------ */

/* ARM CMSDK APB timer (DDI 0479): CTRL +0, VALUE +4, RELOAD +8, INTCLEAR +0xC; 25 MHz PCLK. */
#define TIMER0_CTRL (*(volatile uint32_t *)0x40000000u)
#define TIMER0_RELOAD (*(volatile uint32_t *)0x40000008u)
#define TIMER0_VALUE (*(volatile uint32_t *)0x40000004u)
#define TIMER0_INTCLEAR (*(volatile uint32_t *)0x4000000Cu)
#define TIMER0_IRQ 8
#define NVIC_ISER0 (*(volatile uint32_t *)0xE000E100u)
#define NVIC_ICER0 (*(volatile uint32_t *)0xE000E180u)

static void (*board_tick)(void);
static void (*board_sample)(uintptr_t pc);

/* Called by the interrupt's entry below with the interrupted PC. */
BOARD_NOHOOKS void board_timer0_irq(uintptr_t pc)
{
    TIMER0_INTCLEAR = 1;
    if (board_sample != 0)
        board_sample(pc);
    else
        board_tick();
}

/* The interrupt's entry: the core stacked r0-r3, r12, lr, pc, xPSR on the stack in use when
 * the interrupt came (lr's bit 2 says which: MSP or PSP), so the interrupted PC is at +24.
 * Naked: nothing pushed before it is read; the tail branch returns through EXC_RETURN in lr. */
__attribute__((naked)) void board_timer0_isr(void)
{
    __asm__ __volatile__("tst lr, #4\n\t"
                         "ite eq\n\t"
                         "mrseq r0, msp\n\t"
                         "mrsne r0, psp\n\t"
                         "ldr r0, [r0, #24]\n\t"
                         "b board_timer0_irq");
}

static BOARD_NOHOOKS void timer0_start(unsigned period_us)
{
    TIMER0_CTRL = 0;
    TIMER0_RELOAD = period_us * (CPU_HZ / 1000000u);
    TIMER0_VALUE = period_us * (CPU_HZ / 1000000u);
    TIMER0_CTRL = 1u | (1u << 3); /* enable, interrupt enable */
    NVIC_ISER0 = 1u << TIMER0_IRQ;
}

BOARD_NOHOOKS void board_start_tick(unsigned period_us, void (*tick)(void))
{
    board_tick = tick;
    board_sample = 0;
    timer0_start(period_us);
}

/* gprof's sampling timer: `sample` gets the interrupted PC every period_us. */
BOARD_NOHOOKS void board_start_sample(unsigned period_us, void (*sample)(uintptr_t pc))
{
    board_sample = sample;
    timer0_start(period_us);
}

BOARD_NOHOOKS void board_stop_tick(void)
{
    NVIC_ICER0 = 1u << TIMER0_IRQ;
    TIMER0_CTRL = 0;
}

#ifdef __ARM_FP
/* The reset entry with an FPU: full access to CP10 and CP11 (CPACR bits 20-23; ARMv7-M ARM,
 * B3.2.20), then picolibc's _start. The DSB and ISB make the next instruction see it; nothing
 * before them touches a floating-point register. picolibc's crt0 for its +fp multilibs does the
 * same first (1.8, Debian 12), so here it is for a start-up that does not: a vendor's crt0, or
 * a board without picolibc (without either, the first FP instruction is a UsageFault, NOCP).
 * FPCCR keeps its reset value (ASPEN and LSPEN set): an interrupt of code that used the FPU
 * reserves room for s0-s15 and FPSCR on the stack, saved only if the handler uses the FPU itself
 * (lazy stacking). Naked: no frame, no hooks. */
__attribute__((naked)) void board_reset(void)
{
    __asm__ __volatile__("movw r0, #0xED88\n\t"
                         "movt r0, #0xE000\n\t"
                         "ldr r1, [r0]\n\t"
                         "orr r1, r1, #(0xF << 20)\n\t"
                         "str r1, [r0]\n\t"
                         "dsb\n\t"
                         "isb\n\t"
                         "b _start");
}
#define BOARD_RESET board_reset
#else
#define BOARD_RESET _start
#endif

/* The vector table: picolibc's crt0 defines a weak one with the core exceptions only; this one
 * replaces it (same name) and adds the external interrupts up to the timers'. */
extern char __stack[];
void _start(void);
void arm_nmi_isr(void);
void arm_hardfault_isr(void);
void arm_memmanage_isr(void);
void arm_busfault_isr(void);
void arm_usagefault_isr(void);
void arm_svc_isr(void);
void arm_debugmon_isr(void);
void arm_pendsv_isr(void);
void arm_systick_isr(void);
void arm_ignore_isr(void);

/* CMSDK timer 1 (IRQ 9) is the application's (../freertos/fp_app.c): its handler, if it has one. */
#define TIMER1_IRQ 9
void board_timer1_isr(void) __attribute__((weak));

__attribute__((section(".data.init.enter"), used, aligned(128))) void *const
    __interrupt_vector[16 + TIMER1_IRQ + 1] = {
        [0] = __stack,
        [1] = BOARD_RESET,
        [2] = arm_nmi_isr,
        [3] = arm_hardfault_isr,
        [4] = arm_memmanage_isr,
        [5] = arm_busfault_isr,
        [6] = arm_usagefault_isr,
        [11] = arm_svc_isr,
        [12] = arm_debugmon_isr,
        [14] = arm_pendsv_isr,
        [15] = arm_systick_isr,
        [16 + TIMER0_IRQ] = board_timer0_isr,
        [16 + TIMER1_IRQ] = board_timer1_isr,
};

/* ---- Tasks (../ti_tasks.c) --------------------------------------------------------------- */

/* With an FPU the hard-float ABI's callee-saved s16-s31 are switched too, below r4-r11 and lr. */
#ifdef __ARM_FP
#define BOARD_PUSH_FP "vpush {s16-s31}\n\t"
#define BOARD_POP_FP "vpop {s16-s31}\n\t"
#define BOARD_FP_WORDS 16
#else
#define BOARD_PUSH_FP ""
#define BOARD_POP_FP ""
#define BOARD_FP_WORDS 0
#endif

/* r4-r11 and lr pushed, sp saved; the other stack's frame popped. Naked: no hooks, no frame. */
__attribute__((naked)) void board_switch_context(void **save, void *load)
{
    __asm__ __volatile__("push {r4-r11, lr}\n\t" BOARD_PUSH_FP "mov r2, sp\n\t"
                         "str r2, [r0]\n\t"
                         "mov sp, r1\n\t" BOARD_POP_FP "pop {r4-r11, lr}\n\t"
                         "bx lr");
}

/* The frame board_switch_context pops: s16-s31 = 0 (with an FPU), r4-r11 = 0, lr = entry (a
 * Thumb address, bit 0 set). */
BOARD_NOHOOKS void *board_task_stack(void *top, void (*entry)(void))
{
    uint32_t *sp = (uint32_t *)top - (BOARD_FP_WORDS + 9);
    for (int i = 0; i < BOARD_FP_WORDS + 8; i++)
        sp[i] = 0;
    sp[BOARD_FP_WORDS + 8] = (uint32_t)(uintptr_t)entry;
    return sp;
}

#ifdef HOOKS_TI
#include <hookcc/ti.h>

HOOKCC_TI_NOHOOKS uint64_t hookcc_ti_timestamp(void)
{
    return hkrt_ticks_extern();
}
#endif

/* Runs before main (picolibc's crt0 calls the constructors). */
__attribute__((constructor)) static BOARD_NOHOOKS void board_init(void)
{
    counter_start();
#if defined(PROFILE_TYPE_CALLTRACE) || defined(PROFILE_TYPE_FUNCTIONCOST)
    OS_SetProfilePrintFunction(board_print, NULL);
#endif
}
