/* The fleet worked example of docs/export.md (tests/tests/export.rs): a service's request
 * loop, 200 requests, each parsed and looked up. Build v2 (-DV2) sizes the lookup's table by
 * FLEET_TABLE from the environment, which one host of the fleet sets large: that host's
 * lookups get slower in v2, the other hosts' do not. */
#include <stdio.h>
#include <stdlib.h>

#define DEFAULT_TABLE 2000UL

__attribute__((no_instrument_function)) static unsigned long table_size(void)
{
#ifdef V2
    const char *setting = getenv("FLEET_TABLE");
    if (setting)
        return strtoul(setting, NULL, 10);
#endif
    return DEFAULT_TABLE;
}

__attribute__((noinline)) unsigned long parse(unsigned long request)
{
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < 2000; i++)
        x += i ^ request;
    return x;
}

__attribute__((noinline)) unsigned long lookup(unsigned long key)
{
    volatile unsigned long x = 0;
    unsigned long n = table_size();
    for (unsigned long i = 0; i < n; i++)
        x += i * key;
    return x;
}

__attribute__((noinline)) unsigned long handle(unsigned long request)
{
    return lookup(parse(request));
}

int main(void)
{
    unsigned long sum = 0;
    for (unsigned long r = 0; r < 200; r++)
        sum += handle(r);
    printf("%lu\n", sum);
    return 0;
}
