/* A firmware's own mcount: handler stands for code hookcc does not instrument (assembly, a
 * library built without hooks), so its calls have no arcs; call_handler, the firmware's own
 * counting wrapper, records each one itself with __profile_mcount as <hookcc/gprof.h> declares
 * it (uintptr_t, uintptr_t, as the seed's HAL calls it). main calls caller once; caller calls
 * handler 25 times through call_handler. */
#include <stdint.h>
#include <stdio.h>

#include <hookcc/gprof.h>

static volatile unsigned long sink;

__attribute__((no_instrument_function, noinline)) void handler(int i) { sink += (unsigned long)i; }

__attribute__((no_instrument_function, noinline)) static void call_handler(int i)
{
    __profile_mcount((uintptr_t)__builtin_return_address(0), (uintptr_t)&handler);
    handler(i);
}

__attribute__((noinline)) void caller(void)
{
    for (int i = 0; i < 25; i++)
        call_handler(i);
}

int main(void)
{
    caller();
    printf("%lu\n", sink);
    return 0;
}
