/* The atomic helpers a bare-metal runtime needs on a CPU without atomic instructions.
 *
 * ARMv5TE (the ARM926EJ-S, the NITRO hardware's ARM9) has no ldrex/strex, so clang turns every
 * __atomic_* builtin of the runtime into a call to libatomic's __atomic_load_4,
 * __atomic_store_4, … (and __atomic_thread_fence into __sync_synchronize); arm-none-eabi has no
 * libatomic, and neither picolibc nor libgcc defines them. On these single-core CPUs what can
 * interrupt a runtime function is an interrupt handler, so each helper runs with IRQ and FIQ
 * masked, the way the seed's hook.c used _disable_interrupts(). They are weak: a firmware with
 * its own helpers keeps them. Masking needs a privileged mode (SVC, SYS, IRQ: where bare-metal
 * code runs); in User mode the CPU ignores the mask bits.
 *
 * Included by every runtime component (one is linked per program); compiled only for such
 * targets. The functions are always ARM code (mrs/msr do not exist in Thumb-1).
 */
#ifndef HOOKCC_RUNTIME_BAREMETAL_ATOMIC_H
#define HOOKCC_RUNTIME_BAREMETAL_ATOMIC_H

#if defined(__arm__) && !__STDC_HOSTED__ && __GCC_ATOMIC_INT_LOCK_FREE < 2 &&                  \
    defined(__ARM_ARCH_ISA_ARM)

#include <stdint.h>

/* clang warns at every __atomic builtin that it becomes a call here ("large atomic operation
 * may incur significant performance penalty"): known, and what these helpers are for. */
#pragma clang diagnostic ignored "-Watomic-alignment"

#define HKRT_ATOMIC_FN                                                                         \
    __attribute__((weak, visibility("default"), no_instrument_function, target("arm")))

/* The CPSR before masking IRQ and FIQ (bits 7 and 6). */
static inline __attribute__((always_inline, target("arm"))) uint32_t hkrt_irq_save(void)
{
    uint32_t cpsr, masked;
    __asm__ __volatile__("mrs %0, cpsr\n\t"
                         "orr %1, %0, #0xc0\n\t"
                         "msr cpsr_c, %1"
                         : "=r"(cpsr), "=r"(masked)
                         :
                         : "memory");
    return cpsr;
}

static inline __attribute__((always_inline, target("arm"))) void hkrt_irq_restore(uint32_t cpsr)
{
    __asm__ __volatile__("msr cpsr_c, %0" : : "r"(cpsr) : "memory");
}

/* An aligned word load or store is single-copy atomic: only the ordering is the compiler's. */
HKRT_ATOMIC_FN uint32_t __atomic_load_4(const volatile void *mem, int model)
{
    (void)model;
    __asm__ __volatile__("" ::: "memory");
    uint32_t v = *(const volatile uint32_t *)mem;
    __asm__ __volatile__("" ::: "memory");
    return v;
}

HKRT_ATOMIC_FN void __atomic_store_4(volatile void *mem, uint32_t value, int model)
{
    (void)model;
    __asm__ __volatile__("" ::: "memory");
    *(volatile uint32_t *)mem = value;
    __asm__ __volatile__("" ::: "memory");
}

HKRT_ATOMIC_FN uint32_t __atomic_exchange_4(volatile void *mem, uint32_t value, int model)
{
    (void)model;
    uint32_t cpsr = hkrt_irq_save();
    uint32_t old = *(volatile uint32_t *)mem;
    *(volatile uint32_t *)mem = value;
    hkrt_irq_restore(cpsr);
    return old;
}

HKRT_ATOMIC_FN uint32_t __atomic_fetch_add_4(volatile void *mem, uint32_t value, int model)
{
    (void)model;
    uint32_t cpsr = hkrt_irq_save();
    uint32_t old = *(volatile uint32_t *)mem;
    *(volatile uint32_t *)mem = old + value;
    hkrt_irq_restore(cpsr);
    return old;
}

HKRT_ATOMIC_FN _Bool __atomic_compare_exchange_4(volatile void *mem, void *expected,
                                                 uint32_t desired, _Bool weak, int success,
                                                 int failure)
{
    (void)weak, (void)success, (void)failure;
    uint32_t cpsr = hkrt_irq_save();
    uint32_t old = *(volatile uint32_t *)mem;
    _Bool same = old == *(uint32_t *)expected;
    if (same)
        *(volatile uint32_t *)mem = desired;
    else
        *(uint32_t *)expected = old;
    hkrt_irq_restore(cpsr);
    return same;
}

/* One core, no out-of-order memory system visible to the program: a compiler barrier. Named
 * through an asm label: clang refuses a definition of the builtin's own name. */
HKRT_ATOMIC_FN void hkrt_sync_synchronize(void) __asm__("__sync_synchronize");
HKRT_ATOMIC_FN void hkrt_sync_synchronize(void)
{
    __asm__ __volatile__("" ::: "memory");
}

#endif
#endif
