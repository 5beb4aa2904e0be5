/* Empty hooks with hookcc's own signatures, compiled on their own and linked beside the program
 * (hookcc --hook-runtime=none links no runtime of its own): what the calls hookcc inserts cost
 * with nothing recorded, the floor under the native trace (__hookcc_*) and the NITRO runtimes
 * (__PROFILE_*), which pass more arguments than -finstrument-functions does. */
#include <stdint.h>

#include <hookcc/trace.h>

#define EMPTY_HOOK __attribute__((no_instrument_function, visibility("default")))

/* As the pass calls them (HOOKCC_NATIVE_HOOK: preserve_most on x86-64 and AArch64). */
EMPTY_HOOK HOOKCC_NATIVE_HOOK void __hookcc_enter(void *fn);
EMPTY_HOOK HOOKCC_NATIVE_HOOK void __hookcc_exit(void *fn_exit);
/* After setjmp's returns (Lua's error handling). */
EMPTY_HOOK HOOKCC_NATIVE_HOOK void __hookcc_resync(void *fn);
EMPTY_HOOK void __PROFILE_ENTRY(const char *name, void *lr, uintptr_t r0, uintptr_t r1, uintptr_t r2,
                                uintptr_t r3);
EMPTY_HOOK void __PROFILE_EXIT(void);

HOOKCC_NATIVE_HOOK void __hookcc_enter(void *fn)
{
    (void)fn;
}

HOOKCC_NATIVE_HOOK void __hookcc_exit(void *fn_exit)
{
    (void)fn_exit;
}

HOOKCC_NATIVE_HOOK void __hookcc_resync(void *fn)
{
    (void)fn;
}

void __PROFILE_ENTRY(const char *name, void *lr, uintptr_t r0, uintptr_t r1, uintptr_t r2, uintptr_t r3)
{
    (void)name;
    (void)lr;
    (void)r0;
    (void)r1;
    (void)r2;
    (void)r3;
}

void __PROFILE_EXIT(void)
{
}
