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

static BOARD_NOHOOKS void counter_start(void)
{
    SYST_CSR = 0;
    SYST_RVR = SYST_MASK;
    SYST_CVR = 0; /* any write clears it: the count restarts from the reload value */
    SYST_CSR = SYST_CSR_ENABLE | SYST_CSR_CLKSOURCE_CPU;
}

BOARD_NOHOOKS uint64_t hkrt_ticks_extern(void)
{
    static uint32_t last;
    static uint64_t total;
    uint32_t primask;
    __asm__ __volatile__("mrs %0, primask\n\tcpsid i" : "=r"(primask) : : "memory");
    uint32_t now = SYST_MASK - (SYST_CVR & SYST_MASK); /* counts up */
    total += (now - last) & SYST_MASK;
    last = now;
    uint64_t result = total;
    __asm__ __volatile__("msr primask, %0" : : "r"(primask) : "memory");
    return result;
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
