/* NITRO call trace with interrupts: a timer interrupt calls a profiled function (on_tick)
 * thousands of times while the main line runs the seed's profiled call chain (§3.5.1's test1
 * -> test2 -> test3) in stack mode. The interrupt's entries and exits push and pop on the same
 * call trace stack in the middle of the main line's; the stack must come out intact: the
 * final dump from test3 is exactly the seed's three lines, with nothing of on_tick and no
 * unmatched returns. Built with NITRO_PROFILE_TYPE=CALLTRACE on any board (board_start_tick
 * is the board's):
 *   make run APP=../nitro_interrupts.c NITRO_PROFILE=TRUE NITRO_PROFILE_TYPE=CALLTRACE
 */
#include <stdio.h>

#include <hookcc/nitro.h>

#define BUFFERSIZE 0x300
static u32 buffer[BUFFERSIZE / sizeof(u32)];

void board_start_tick(unsigned period_us, void (*tick)(void));
void board_stop_tick(void);

static volatile unsigned ticks;
static volatile int dump_now;

void on_tick(void) { ticks++; }

int test1(int a);
int test2(int a);
int test3(int a);

int test1( int a ){ return test2( a + 1 ); }
int test2( int a ){ return test3( a + 2 ); }
int test3( int a ){ if (dump_now) OS_DumpCallTrace(); return a + 4; }

void NitroMain( void )
{
    OS_Init();

    OS_InitCallTrace( &buffer, BUFFERSIZE, OS_CALLTRACE_STACK );
    board_start_tick(20, on_tick);
    unsigned long sum = 0;
    for (int i = 0; i < 20000; i++)
        sum += (unsigned long)test1(i);
    dump_now = 1;
    (void) test1( 0x100 );
    board_stop_tick();
    printf("sum=%lu ticks>100=%d\n", sum, ticks > 100);
}

int main(void)
{
    NitroMain();
    return 0;
}
