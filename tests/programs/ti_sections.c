/* A function alone at the start of its own section (TI's CODE_SECTION pragma), linked with
 * --emit-relocs so that the executable keeps its section symbols, as TI's .out files do: with
 * --all-symbols, hookprof ti names it "fast - fastcode" (the seed: ".text - SL2MemoryBufInit"). */
#include <hookcc/ti.h>

#pragma CODE_SECTION(fast, "fastcode")
__attribute__((noinline)) int fast(int x) { return x * 3; }

int main(void)
{
    hook_init();
    int sum = 0;
    for (int i = 0; i < 3; i++)
        sum += fast(i);
    return sum == 9 ? 0 : 1;
}
