/* The board support of the RISC-V example: qemu's virt board, rv32imac, machine mode.
 *
 * - The counter the profiler runtimes time with: mtime, the 64-bit machine timer of the
 *   CLINT at 0x0200BFF8, 10 MHz on virt. Read as two 32-bit halves, high again after low,
 *   until the high half did not change (the usual rv32 idiom), so no wrap is lost and any
 *   interrupt level may read it. (mcycle counts cycles, but its rate is the core's, which a
 *   board does not always tell; mtime's is fixed.)
 * - Where the NITRO profiler prints: stdout, through picolibc's semihosting.
 * - The tick interrupt of ../ti_tasks.c: the machine timer interrupt (mtimecmp), taken by a
 *   handler of our own installed in mtvec while the tick runs (picolibc's _trap otherwise).
 *   The same interrupt samples the interrupted PC (mepc) for gprof (../gprof_sampling.c).
 * - The tasks' context switch (ra, s0-s11) and their first frames.
 *
 * Nothing here may get hooks: the runtime calls the counter from inside its hooks.
 */
#include <stdint.h>
#include <stdio.h>

#define BOARD_NOHOOKS __attribute__((no_instrument_function))

#define CLINT_MTIME_LO (*(volatile uint32_t *)0x0200BFF8u)
#define CLINT_MTIME_HI (*(volatile uint32_t *)0x0200BFFCu)
#define MTIME_HZ 10000000u /* virt's RISCV_ACLINT_DEFAULT_TIMEBASE_FREQ */

BOARD_NOHOOKS uint64_t hkrt_ticks_extern(void)
{
    uint32_t hi, lo;
    do {
        hi = CLINT_MTIME_HI;
        lo = CLINT_MTIME_LO;
    } while (hi != CLINT_MTIME_HI);
    return ((uint64_t)hi << 32) | lo;
}

BOARD_NOHOOKS uint64_t hkrt_ticks_per_second_extern(void)
{
    return MTIME_HZ;
}

#if defined(PROFILE_TYPE_CALLTRACE) || defined(PROFILE_TYPE_FUNCTIONCOST)
#include <hookcc/nitro.h>

static BOARD_NOHOOKS void board_print(const char *text, void *context)
{
    (void)context;
    fputs(text, stdout);
}

/* Runs before main (picolibc's crt0 calls the constructors). */
__attribute__((constructor)) static BOARD_NOHOOKS void board_init(void)
{
    OS_SetProfilePrintFunction(board_print, NULL);
}
#endif

/* ---- The tick interrupt ------------------------------------------------------------------ */

#define CLINT_MTIMECMP_LO (*(volatile uint32_t *)0x02004000u) /* hart 0 */
#define CLINT_MTIMECMP_HI (*(volatile uint32_t *)0x02004004u)
#define MIE_MTIE (1u << 7)
#define MSTATUS_MIE (1u << 3)

static void (*board_tick)(void);
static void (*board_sample)(uintptr_t pc);
static uint64_t board_tick_period, board_next_tick;
static uintptr_t board_saved_mtvec;

/* Writes mtimecmp without passing through a value below the wanted one (high word first set
 * to all ones, as the privileged spec's rv32 example does). */
static BOARD_NOHOOKS void board_set_mtimecmp(uint64_t when)
{
    CLINT_MTIMECMP_HI = 0xFFFFFFFFu;
    CLINT_MTIMECMP_LO = (uint32_t)when;
    CLINT_MTIMECMP_HI = (uint32_t)(when >> 32);
}

/* The machine-mode trap handler: clang saves and restores every register it uses and returns
 * with mret. Only the timer interrupt is enabled while it is installed. */
__attribute__((interrupt("machine"), aligned(4))) static BOARD_NOHOOKS void board_trap(void)
{
    board_next_tick += board_tick_period;
    board_set_mtimecmp(board_next_tick);
    if (board_sample != 0) {
        uintptr_t pc; /* where the interrupt came: the instruction mret returns to */
        __asm__ __volatile__("csrr %0, mepc" : "=r"(pc));
        board_sample(pc);
    } else {
        board_tick();
    }
}

static BOARD_NOHOOKS void board_start_timer(unsigned period_us)
{
    board_tick_period = (uint64_t)period_us * (MTIME_HZ / 1000000u);
    board_next_tick = hkrt_ticks_extern() + board_tick_period;
    board_set_mtimecmp(board_next_tick);
    __asm__ __volatile__("csrrw %0, mtvec, %1" : "=r"(board_saved_mtvec) : "r"(board_trap));
    __asm__ __volatile__("csrs mie, %0" : : "r"(MIE_MTIE));
    __asm__ __volatile__("csrs mstatus, %0" : : "r"(MSTATUS_MIE) : "memory");
}

BOARD_NOHOOKS void board_start_tick(unsigned period_us, void (*tick)(void))
{
    board_tick = tick;
    board_sample = 0;
    board_start_timer(period_us);
}

/* gprof's sampling timer: `sample` gets the interrupted PC every period_us. */
BOARD_NOHOOKS void board_start_sample(unsigned period_us, void (*sample)(uintptr_t pc))
{
    board_sample = sample;
    board_start_timer(period_us);
}

BOARD_NOHOOKS void board_stop_tick(void)
{
    __asm__ __volatile__("csrc mstatus, %0" : : "r"(MSTATUS_MIE) : "memory");
    __asm__ __volatile__("csrc mie, %0" : : "r"(MIE_MTIE));
    __asm__ __volatile__("csrw mtvec, %0" : : "r"(board_saved_mtvec));
}

/* ---- Tasks (../ti_tasks.c) --------------------------------------------------------------- */

/* ra and s0-s11 saved in a 64-byte frame (the stack stays 16-byte aligned), sp saved; the
 * other stack's frame restored. Naked: no hooks, no compiler frame. */
__attribute__((naked)) void board_switch_context(void **save, void *load)
{
    __asm__ __volatile__("addi sp, sp, -64\n\t"
                         "sw ra, 0(sp)\n\t"
                         "sw s0, 4(sp)\n\t"
                         "sw s1, 8(sp)\n\t"
                         "sw s2, 12(sp)\n\t"
                         "sw s3, 16(sp)\n\t"
                         "sw s4, 20(sp)\n\t"
                         "sw s5, 24(sp)\n\t"
                         "sw s6, 28(sp)\n\t"
                         "sw s7, 32(sp)\n\t"
                         "sw s8, 36(sp)\n\t"
                         "sw s9, 40(sp)\n\t"
                         "sw s10, 44(sp)\n\t"
                         "sw s11, 48(sp)\n\t"
                         "sw sp, 0(a0)\n\t"
                         "mv sp, a1\n\t"
                         "lw ra, 0(sp)\n\t"
                         "lw s0, 4(sp)\n\t"
                         "lw s1, 8(sp)\n\t"
                         "lw s2, 12(sp)\n\t"
                         "lw s3, 16(sp)\n\t"
                         "lw s4, 20(sp)\n\t"
                         "lw s5, 24(sp)\n\t"
                         "lw s6, 28(sp)\n\t"
                         "lw s7, 32(sp)\n\t"
                         "lw s8, 36(sp)\n\t"
                         "lw s9, 40(sp)\n\t"
                         "lw s10, 44(sp)\n\t"
                         "lw s11, 48(sp)\n\t"
                         "addi sp, sp, 64\n\t"
                         "ret");
}

/* The frame board_switch_context restores: s0-s11 = 0, ra = entry. */
BOARD_NOHOOKS void *board_task_stack(void *top, void (*entry)(void))
{
    uint32_t *sp = (uint32_t *)top - 16;
    for (int i = 0; i < 16; i++)
        sp[i] = 0;
    sp[0] = (uint32_t)(uintptr_t)entry;
    return sp;
}

#ifdef HOOKS_TI
#include <hookcc/ti.h>

HOOKCC_TI_NOHOOKS uint64_t hookcc_ti_timestamp(void)
{
    return hkrt_ticks_extern();
}
#endif
