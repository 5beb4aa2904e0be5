/* The board support of the ARM926 example: qemu's versatilepb (ARM926EJ-S, ARMv5TE).
 *
 * - The counter the profiler runtimes time with: the SP804 dual timer at 0x101E2000 (timer 0),
 *   clocked at 1 MHz, free-running down from 0xFFFFFFFF. hkrt_ticks_extern() counts up from
 *   it, extended to 64 bits; hkrt_ticks_per_second_extern() says 1000000 (docs/baremetal.md).
 * - Where the NITRO profiler prints (OS_DumpCallTrace, OS_DumpStatistics): stdout, which
 *   picolibc's semihosting sends to the debugger or to qemu's console. A freestanding runtime
 *   prints nothing until the program gives it a print function; a constructor does it here,
 *   so the seed's programs run unchanged.
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

/* The 32-bit down-counter as an up-counter extended to 64 bits. The high word grows when the
 * low one wraps (every 71 minutes at 1 MHz); a read must come at least once per wrap. Racy only
 * in that an interrupt reading it between the two statements may see the old high word: one
 * wrap in 71 minutes, accepted for an example. */
BOARD_NOHOOKS uint64_t hkrt_ticks_extern(void)
{
    static uint32_t last, high;
    uint32_t now = 0xFFFFFFFFu - *sp804(SP804_VALUE);
    if (now < last)
        high++;
    last = now;
    return ((uint64_t)high << 32) | now;
}

BOARD_NOHOOKS uint64_t hkrt_ticks_per_second_extern(void)
{
    return SP804_HZ;
}

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
