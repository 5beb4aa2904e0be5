/* The board support of the Cortex-M4F example, qemu's mps2-an386: the Cortex-M3 board's
 * (same memory map, SysTick as the counter at 25 MHz, CMSDK timer 0 at IRQ 8), whose reset
 * entry turns the FPU on when the firmware is compiled for one (__ARM_FP). */
#include "../cortex-m3/board.c"
