/* What the TI C6000 compiler provides to the seed's hook.c, for a hosted build: the time-stamp
 * counter registers (cregister TSCL/TSCH; here plain variables that stay 0: the seed's code
 * also names its record fields TSCL and TSCH, so they cannot be macros) and the interrupt
 * intrinsics. Force-included. */
#include <string.h>
static volatile unsigned int TSCL, TSCH;
static inline unsigned int _disable_interrupts(void) { return 0; }
static inline void _restore_interrupts(unsigned int gie) { (void)gie; }
