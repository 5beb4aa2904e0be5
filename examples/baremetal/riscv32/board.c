/* The board support of the RISC-V example: qemu's virt board, rv32imac, machine mode.
 *
 * - The counter the profiler runtimes time with: mtime, the 64-bit machine timer of the
 *   CLINT at 0x0200BFF8, 10 MHz on virt. Read as two 32-bit halves, high again after low,
 *   until the high half did not change (the usual rv32 idiom), so no wrap is lost and any
 *   interrupt level may read it. (mcycle counts cycles, but its rate is the core's, which a
 *   board does not always tell; mtime's is fixed.)
 * - Where the NITRO profiler prints: stdout, through picolibc's semihosting.
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

#ifdef HOOKS_TI
#include <hookcc/ti.h>

HOOKCC_TI_NOHOOKS uint64_t hookcc_ti_timestamp(void)
{
    return hkrt_ticks_extern();
}
#endif
