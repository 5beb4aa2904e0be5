/* Empty hooks with hookcc's own signatures, compiled on their own and linked beside the program
 * (hookcc --hook-runtime=none links no runtime of its own): what the calls hookcc inserts cost
 * with nothing recorded, the floor under the native trace (__hookcc_*) and the NITRO runtimes
 * (__PROFILE_*), which pass more arguments than -finstrument-functions does. */
#include <stdint.h>

#define EMPTY_HOOK __attribute__((no_instrument_function, visibility("default")))

EMPTY_HOOK void __hookcc_enter(void *fn);
EMPTY_HOOK void __hookcc_exit(void *fn_exit);
EMPTY_HOOK void __hookcc_resync(void *fn); /* after setjmp's returns (Lua's error handling) */
EMPTY_HOOK void __PROFILE_ENTRY(const char *name, void *lr, uintptr_t r0, uintptr_t r1, uintptr_t r2,
                                uintptr_t r3);
EMPTY_HOOK void __PROFILE_EXIT(void);

void __hookcc_enter(void *fn)
{
    (void)fn;
}

void __hookcc_exit(void *fn_exit)
{
    (void)fn_exit;
}

void __hookcc_resync(void *fn)
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
