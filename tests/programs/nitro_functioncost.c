/* seeds/nitro-sdk-profiler.txt §4.4 and §4.5: the function cost example. test1 runs once,
 * test2 three times and test3 four times, so the dump is
 *   test1: count 1, cost …
 *   test2: count 3, cost …
 *   test3: count 4, cost …
 * with costs in ticks; test2 does about 8 times the work of test1 and test3. */
#include <hookcc/nitro.h>

#define COSTSIZE 0x3000
#define STATSIZE 0x300

static u32 CostBuffer[COSTSIZE / sizeof(u32)];
static u32 StatBuffer[STATSIZE / sizeof(u32)];

static volatile u32 sink;

/* Not measured itself (§1.3), so that the dump has exactly the seed's three lines. */
#pragma profile off
static void work(int n)
{
    for (int i = 0; i < n * 1000; i++)
        sink += (u32)i;
}
#pragma profile reset

void test1(void) { work(1); }
void test2(void) { work(8); }
void test3(void) { work(1); }

void NitroMain( void )
{
    OS_Init();
    OS_InitTick();

    //---- init functionCost
    OS_InitFunctionCost( &CostBuffer, COSTSIZE );
    OS_InitStatistics( &StatBuffer, STATSIZE );

    // This is the location to be measured
    test1();
    for (int i = 0; i < 3; i++)
        test2();
    for (int i = 0; i < 4; i++)
        test3();

    //---- calculate cost
    OS_CalcStatistics( &StatBuffer );

    //---- display functionCost
    OS_DumpStatistics( &StatBuffer );
}

int main(void)
{
    NitroMain();
    return 0;
}
