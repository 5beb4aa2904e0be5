/* A program that calls the native trace's hooks itself with a function's address, as a
 * program's own hooks do (<hookcc/trace.h>'s HOOKCC_NATIVE_HOOK), instead of the record the
 * compiler passes: its trace names `work` by its address, which only the symbol table knows
 * (tests/tests/messages.rs: a stripped executable). Built with `hookcc --trace`; nothing here is
 * instrumented by the compiler. */
void __hookcc_enter(void *fn);
void __hookcc_exit(void *fn_exit);

__attribute__((noinline, no_instrument_function, aligned(4))) static int work(int x)
{
    return x * 3;
}

__attribute__((no_instrument_function)) int main(void)
{
    int sum = 0;
    for (int i = 0; i < 5; i++) {
        __hookcc_enter((void *)work);
        sum += work(i);
        __hookcc_exit((char *)work + 2);
    }
    return sum == 30 ? 0 : 1;
}
