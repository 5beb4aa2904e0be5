/* A library loaded, unloaded and replaced by another built from this file (tests/programs/
 * unload_main.c): -DLIB_B names its functions apart. */
#ifdef LIB_B
#define WORK b_work
#else
#define WORK a_work
#endif
static volatile int sink;
__attribute__((noinline)) void WORK(int i) { sink += i; }
int run(int n)
{
    for (int i = 0; i < n; i++)
        WORK(i);
    return n;
}
