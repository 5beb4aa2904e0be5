// --pfp-functions (docs/pfp.md, "The compiler bridge"), tests/tests/pfp_functions.rs: built
// with --pfp-functions='work::*' --pfp-functions='shared()'. work::outer() runs 2 × 20 000
// iterations of its own around work::inner()'s 100 000, 5 times, inside an explicit point 1
// of the program's own; shared() runs 3 times here and 2 times from the other translation unit.
// Prints pfpPrintStats' lines and writes pfpInst to pfp.bin.
#include <cstdio>

#include <hookcc/pfp.h>

#include "pfp_shared.h"

extern "C" char pfpInst[];

namespace work {

__attribute__((noinline)) void inner()
{
    busy(100000);
}

__attribute__((noinline)) void outer()
{
    busy(20000);
    inner();
    busy(20000);
}

} // namespace work

int main()
{
    pfpCreate();
    pfpSetPrintFunction([](const char *text, void *) { std::fputs(text, stdout); }, nullptr);
    pfpEnable(1);
    for (int i = 0; i < 5; i++) {
        pfpBegin(1, nullptr);
        work::outer();
        pfpEnd(1, 0);
    }
    for (int i = 0; i < 3; i++)
        shared();
    from_b();
    pfpPrintStats();
    std::FILE *f = std::fopen("pfp.bin", "wb");
    if (f == nullptr || std::fwrite(pfpInst, 1, 3152, f) != 3152 || std::fclose(f) != 0)
        return 1;
    return 0;
}
