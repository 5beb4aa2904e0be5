/* gprof on bare metal (make … HOOKS=gprof): starts profiling the firmware's code before main,
 * and the board's timer, whose interrupt hands the interrupted PC to __profile_hit, as the
 * seed's HAL timer does (seeds/ecos-gprof.txt). The arcs come from hookcc's entry hooks
 * (--hook-runtime=gprof). The data stays in memory; gdb takes it out (make gprof-dump).
 *
 * The code range is the linker script's: picolibc's puts the code from the flash origin
 * (__flash, which the board's Makefile defines) to __text_end. */
#include <stdint.h>

#include <hookcc/gprof.h>

#define SAMPLE_US 20 /* a sample every 20 us of the board's (icount) time */

void board_start_sample(unsigned period_us, void (*sample)(uintptr_t pc));

extern char __flash[], __text_end[];

__attribute__((constructor, no_instrument_function)) static void gprof_start(void)
{
    profile_on(__flash, __text_end, 16, SAMPLE_US);
    board_start_sample(SAMPLE_US, __profile_hit);
}
