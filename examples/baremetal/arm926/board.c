/* The board support of the ARM926 example: qemu's versatilepb (ARM926EJ-S, ARMv5TE).
 *
 * - The counter the profiler runtimes time with: the SP804 dual timer at 0x101E2000 (timer 0),
 *   clocked at 1 MHz, free-running down from 0xFFFFFFFF. hkrt_ticks_extern() counts up from
 *   it; hkrt_ticks_per_second_extern() says 1000000 (docs/baremetal.md). TI's
 *   hookcc_ti_timestamp() reads the same counter.
 * - Where the NITRO profiler prints (OS_DumpCallTrace, OS_DumpStatistics): stdout, which
 *   picolibc's semihosting sends to the debugger or to qemu's console. A freestanding runtime
 *   prints nothing until the program gives it a print function; a constructor does it here,
 *   so the seed's programs run unchanged.
 *
 * - A periodic tick interrupt (board_start_tick): SP804 timer 1 through the PL190 vector
 *   interrupt controller, its handler calling the program's function, for programs that show
 *   hooks running in an interrupt while the main line runs instrumented code.
 * - gprof's sampling timer (board_start_sample, ../gprof_sampling.c): the same timer, whose
 *   interrupt entry hands the interrupted PC (lr_irq - 4, ARM or Thumb alike) to __profile_hit.
 *
 * Nothing here may get hooks: the runtime calls the counter from inside its hooks.
 */
#include <stdint.h>
#include <stdio.h>

#define BOARD_NOHOOKS __attribute__((no_instrument_function))

/* ARM DDI 0271 (SP804): per timer, Load +0x00, Value +0x04, Control +0x08, IntClr +0x0C. */
#define SP804_TIMER0 0x101E2000u
#define SP804_LOAD 0x00u
#define SP804_VALUE 0x04u
#define SP804_CONTROL 0x08u
#define SP804_CONTROL_ENABLE (1u << 7)
#define SP804_CONTROL_32BIT (1u << 1) /* free-running (bit 6 clear), no prescale, no IRQ */
#define SP804_HZ 1000000u             /* TIMCLK on versatilepb (qemu: the sp804's freq0) */
#define SP804_TIMER1 0x101E2020u      /* the second timer of the pair: the tick */
#define SP804_INTCLR 0x0Cu
#define SP804_CONTROL_PERIODIC (1u << 6)
#define SP804_CONTROL_IRQ (1u << 5)

/* ARM DDI 0181 (PL190 VIC) at 0x10140000: IntEnable +0x10; timers 0 and 1 are line 4. */
#define VIC_INTENABLE 0x10140010u
#define VIC_TIMER01 (1u << 4)

static inline BOARD_NOHOOKS volatile uint32_t *sp804(uint32_t reg)
{
    return (volatile uint32_t *)(uintptr_t)(SP804_TIMER0 + reg);
}

static BOARD_NOHOOKS void counter_start(void)
{
    *sp804(SP804_CONTROL) = 0;
    *sp804(SP804_LOAD) = 0xFFFFFFFFu;
    *sp804(SP804_CONTROL) = SP804_CONTROL_ENABLE | SP804_CONTROL_32BIT;
}

/* The 32-bit down-counter as an up-counter. It wraps after 71 minutes at 1 MHz; a firmware
 * that runs longer extends it to 64 bits in the timer's own wrap interrupt (a software high
 * word updated here instead would race with the hooks of an interrupt handler). No state, so
 * the hooks may call it from any interrupt level. */
BOARD_NOHOOKS uint64_t hkrt_ticks_extern(void)
{
    return 0xFFFFFFFFu - *sp804(SP804_VALUE);
}

BOARD_NOHOOKS uint64_t hkrt_ticks_per_second_extern(void)
{
    return SP804_HZ;
}

/* ---- The tick interrupt ---------------------------------------------------------------- */

static void (*board_tick)(void);
static void (*board_sample)(uintptr_t pc);
static uint64_t board_irq_stack[128]; /* 1 KiB for the IRQ mode, 8-byte aligned */

/* ARM code whatever the rest is (THUMB=1): the interrupt entry and the mode changes. */
__attribute__((interrupt("IRQ"), target("arm"))) static BOARD_NOHOOKS void board_irq(void)
{
    *(volatile uint32_t *)(uintptr_t)(SP804_TIMER1 + SP804_INTCLR) = 1;
    board_tick();
}

/* gprof's sample, called by board_sample_irq with the interrupted PC. */
__attribute__((target("arm"))) BOARD_NOHOOKS void board_sample_hit(uintptr_t pc)
{
    *(volatile uint32_t *)(uintptr_t)(SP804_TIMER1 + SP804_INTCLR) = 1;
    board_sample(pc);
}

/* The sampling interrupt's entry. On an IRQ, lr_irq is the address of the instruction to
 * resume plus 4 in ARM and Thumb state alike (ARM ARM, A2.6.8), so the interrupted PC is
 * lr - 4. The caller-saved registers and that PC are kept on the IRQ stack (six words: it stays
 * 8-byte aligned), and ldm with ^ returns to it, restoring CPSR from SPSR. Naked: nothing is
 * pushed before lr is read. */
__attribute__((naked, target("arm"))) static void board_sample_irq(void)
{
    __asm__ __volatile__("sub lr, lr, #4\n\t"
                         "push {r0-r3, r12, lr}\n\t"
                         "mov r0, lr\n\t"
                         "bl board_sample_hit\n\t"
                         "ldm sp!, {r0-r3, r12, pc}^");
}

/* Calls handler on every timer 1 interrupt, every period_us microseconds, from now on. The
 * exception vectors live at address 0 (RAM on versatilepb; qemu's boot stub there has run). */
__attribute__((target("arm"))) static BOARD_NOHOOKS void board_start_timer1(unsigned period_us,
                                                                             void (*handler)(void))
{
    volatile uint32_t *vectors = (volatile uint32_t *)0;
    vectors[6] = 0xE59FF018u;                    /* 0x18: ldr pc, [pc, #0x18] -> [0x38] */
    vectors[14] = (uint32_t)(uintptr_t)handler; /* 0x38 */
    /* The IRQ mode's stack, then back to SVC, interrupts still masked. */
    uint32_t top = (uint32_t)(uintptr_t)(board_irq_stack + 128);
    __asm__ __volatile__("mrs r1, cpsr\n\t"
                         "msr cpsr_c, #0xd2\n\t" /* IRQ mode, IRQ and FIQ masked */
                         "mov sp, %0\n\t"
                         "msr cpsr_c, r1\n\t"
                         :
                         : "r"(top)
                         : "r1", "memory");
    *(volatile uint32_t *)(uintptr_t)(SP804_TIMER1 + SP804_CONTROL) = 0;
    *(volatile uint32_t *)(uintptr_t)(SP804_TIMER1 + SP804_LOAD) = period_us;
    *(volatile uint32_t *)(uintptr_t)(SP804_TIMER1 + SP804_CONTROL) =
        SP804_CONTROL_ENABLE | SP804_CONTROL_PERIODIC | SP804_CONTROL_IRQ | SP804_CONTROL_32BIT;
    *(volatile uint32_t *)(uintptr_t)VIC_INTENABLE = VIC_TIMER01;
    __asm__ __volatile__("mrs r1, cpsr\n\t"
                         "bic r1, r1, #0x80\n\t" /* IRQ on */
                         "msr cpsr_c, r1"
                         :
                         :
                         : "r1", "memory");
}

/* Calls tick() from the timer interrupt every period_us microseconds, from now on. */
__attribute__((target("arm"))) BOARD_NOHOOKS void board_start_tick(unsigned period_us,
                                                                    void (*tick)(void))
{
    board_tick = tick;
    board_start_timer1(period_us, board_irq);
}

/* gprof's sampling timer: `sample` gets the interrupted PC every period_us. */
__attribute__((target("arm"))) BOARD_NOHOOKS void board_start_sample(unsigned period_us,
                                                                      void (*sample)(uintptr_t pc))
{
    board_sample = sample;
    board_start_timer1(period_us, board_sample_irq);
}

/* Stops the tick: interrupts masked in the CPU and the timer off. */
__attribute__((target("arm"))) BOARD_NOHOOKS void board_stop_tick(void)
{
    __asm__ __volatile__("mrs r1, cpsr\n\t"
                         "orr r1, r1, #0x80\n\t"
                         "msr cpsr_c, r1"
                         :
                         :
                         : "r1", "memory");
    *(volatile uint32_t *)(uintptr_t)(SP804_TIMER1 + SP804_CONTROL) = 0;
}

/* ---- Tasks (../ti_tasks.c) --------------------------------------------------------------- */

/* r4-r11 and lr pushed, sp saved; the other stack's frame popped. Naked: no hooks, no frame.
 * ARM code always (push of r8-r11 does not exist in Thumb-1); bx lr returns to either. */
__attribute__((naked, target("arm"))) void board_switch_context(void **save, void *load)
{
    __asm__ __volatile__("push {r4-r11, lr}\n\t"
                         "str sp, [r0]\n\t"
                         "mov sp, r1\n\t"
                         "pop {r4-r11, lr}\n\t"
                         "bx lr");
}

/* The frame board_switch_context pops: r4-r11 = 0, lr = entry (bit 0 set if it is Thumb). */
BOARD_NOHOOKS void *board_task_stack(void *top, void (*entry)(void))
{
    uint32_t *sp = (uint32_t *)top - 9;
    for (int i = 0; i < 8; i++)
        sp[i] = 0;
    sp[8] = (uint32_t)(uintptr_t)entry;
    return sp;
}

#ifdef HOOKS_TI
#include <hookcc/ti.h>

/* TI's timestamp function: the same counter (docs/ti-runtime.md). */
HOOKCC_TI_NOHOOKS uint64_t hookcc_ti_timestamp(void)
{
    return hkrt_ticks_extern();
}
#endif

/* ---- NITRO output ----------------------------------------------------------------------- */

#if defined(PROFILE_TYPE_CALLTRACE) || defined(PROFILE_TYPE_FUNCTIONCOST)
#include <hookcc/nitro.h>

static BOARD_NOHOOKS void board_print(const char *text, void *context)
{
    (void)context;
    fputs(text, stdout);
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
