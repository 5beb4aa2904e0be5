/* seeds/nitro-sdk-profiler.txt §1.3.1: where to place the pragma, the seed's example. The
 * state in force when a function ends decides. test1 starts under `profile off` but is
 * profiled: `#pragma profile on` comes before its closing brace. test2 starts under `on` but is
 * not: `#pragma profile off` comes before its closing brace. So only test1 is profiled, with
 * or without -profile (`on` also works without it, under --dialect=nitro). Link with a
 * profiler that prints the functions entered (nitro_user_hooks.c). */

static volatile int calls;

#pragma profile off
void XXXXX( void )
{
    calls++;
}

#pragma profile off
void test1( void )
{
    XXXXX();
    XXXXX();
    XXXXX();
#pragma profile on
}

void test2( void )
{
    XXXXX();
    XXXXX();
    XXXXX();
#pragma profile off
}

int main(void)
{
    test1();
    test2();
    return calls == 6 ? 0 : 1;
}
