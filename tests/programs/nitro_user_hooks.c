/* A program's own profiler (seeds/nitro-sdk-profiler.txt §5): `void __PROFILE_ENTRY(const
 * char *name)` and `void __PROFILE_EXIT(void)`, as a program built with NITRO_PROFILE=TRUE and
 * no NITRO_PROFILE_TYPE defines them. It keeps the names of the functions entered and, at exit,
 * prints them one per line, then a line if entries and exits did not balance.
 *
 * The compiler passes more arguments than the one declared here (lr, r0–r3); the C calling
 * convention lets the callee ignore them. Nothing in this file gets hooks: the hooks never
 * do, and the rest is under `#pragma profile off`. */
#include <stdio.h>

#pragma profile off

#define MAX_NAMES 256
static const char *names[MAX_NAMES];
static int entries, exits;

void __PROFILE_ENTRY(const char *name)
{
    if (entries < MAX_NAMES)
        names[entries] = name;
    entries++;
}

void __PROFILE_EXIT(void)
{
    exits++;
}

__attribute__((destructor)) static void print_profile(void)
{
    for (int i = 0; i < entries && i < MAX_NAMES; i++)
        printf("%s\n", names[i]);
    if (entries != exits)
        printf("unbalanced: %d entries, %d exits\n", entries, exits);
    fflush(stdout);
}
