/* seeds/nitro-sdk-profiler.txt §3.5.2: the log-mode example. test1 is called twice, with
 * 0x100 and 0x200; the dump shows both call chains, newest first, test2 and test3 indented by
 * their call level. */
#include <hookcc/nitro.h>

#define BUFFERSIZE 0x300
static u32 buffer[BUFFERSIZE / sizeof(u32)];

int test1(int a);
int test2(int a);
int test3(int a);

int test1( int a ){ return test2( a + 1 ); }
int test2( int a ){ return test3( a + 2 ); }
int test3( int a ){ return a + 4; }

void NitroMain( void )
{
    OS_Init();

    OS_InitCallTrace( &buffer, BUFFERSIZE, OS_CALLTRACE_LOG );
    (void) test1( 0x100 );
    (void) test1( 0x200 );

    OS_DumpCallTrace();
}

int main(void)
{
    NitroMain();
    return 0;
}
