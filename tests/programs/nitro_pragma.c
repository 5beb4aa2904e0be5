/* seeds/nitro-sdk-profiler.txt §1.3: switching with #pragma profile, the seed's example.
 * Compiled with -profile, test1, test2 and test4 are profiled and test3 is not (main too, after
 * `reset`); without -profile none is. Link with a profiler that prints the functions entered
 * (nitro_user_hooks.c). */

void test1( void )
{
}

void test2( void )
{
}

#pragma profile off
void test3( void )
{
}

#pragma profile reset

void test4( void )
{
}

int main(void)
{
    test1();
    test2();
    test3();
    test4();
    return 0;
}
