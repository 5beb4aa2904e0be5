/* A bare-metal program (Cortex-M, no libc): links against ti.o built with -ffreestanding,
 * defines the buffer and the timestamp source (there is no counter the runtime knows on
 * 32-bit Arm; a real one would read DWT->CYCCNT), and the memset the compiler may call.
 * -DNO_TIMESTAMP / -DNO_BUFFER leave one out: the link must then fail, naming it. */
#include <stddef.h>

#include <hookcc/ti.h>

#ifndef NO_BUFFER
__attribute__((section(".far.External_NonCache_Data"))) HOOKCC_TI_PROFILE_BUFFER(256);
#endif

#ifndef NO_TIMESTAMP
static volatile uint32_t cycles;
HOOKCC_TI_NOHOOKS uint64_t hookcc_ti_timestamp(void)
{
    return cycles++;
}
#endif

void *memset(void *d, int c, size_t n)
{
    unsigned char *p = d;
    while (n--)
        *p++ = (unsigned char)c;
    return d;
}

/* The Arm EABI's memset helpers (argument order: dest, n, c), as libc or compiler-rt has them. */
void __aeabi_memset(void *d, size_t n, int c);
void __aeabi_memset4(void *d, size_t n, int c);
void __aeabi_memset8(void *d, size_t n, int c);
void __aeabi_memset(void *d, size_t n, int c)
{
    memset(d, c, n);
}
void __aeabi_memset4(void *d, size_t n, int c)
{
    memset(d, c, n);
}
void __aeabi_memset8(void *d, size_t n, int c)
{
    memset(d, c, n);
}

static struct { int id; } task_a, task_b;

void work(void)
{
}

void _start(void)
{
    hook_init();
    entry_hook(work);
    task_switch_hook((uintptr_t)&task_a, (uintptr_t)&task_b);
    exit_hook(work);
    entry_hook_circular(work);
    exit_hook_circular(work);
    task_switch_hook_circular((uintptr_t)&task_b, (uintptr_t)&task_a);
    for (;;)
        ;
}
