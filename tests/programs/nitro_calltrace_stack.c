/* seeds/nitro-sdk-profiler.txt §3.5.1: the stack-mode example, as the seed writes it.
 * OS_DumpCallTrace in test3 prints test3, test2, test1 with r0 = 0x103, 0x101, 0x100.
 * Build: hookcc -profile --hook-runtime=calltrace (or NITRO_PROFILE=TRUE
 * NITRO_PROFILE_TYPE=CALLTRACE). */
#include <hookcc/nitro.h>

#define BUFFERSIZE 0x300
static u32 buffer[BUFFERSIZE / sizeof(u32)];

int test1(int a);
int test2(int a);
int test3(int a);

int test1( int a ){ return test2( a + 1 ); }
int test2( int a ){ return test3( a + 2 ); }
int test3( int a ){ OS_DumpCallTrace(); return a + 4; }

void NitroMain( void )
{
    OS_Init();

    OS_InitCallTrace( &buffer, BUFFERSIZE, OS_CALLTRACE_STACK );
    (void) test1( 0x100 );
}

int main(void)
{
    NitroMain();
    return 0;
}
