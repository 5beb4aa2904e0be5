/* The program behind fuzz/corpus/trace/threads-longjmp*.hktrace: two threads, a longjmp out of
 * three frames, few records, so that the fuzzer's mutations of the trace stay fast. Built with
 * `hookcc --trace -O1 -pthread threads_longjmp.c -o small`, run as `HOOKCC_OUTPUT=FILE ./small`. */
#include <pthread.h>
#include <setjmp.h>

static jmp_buf env;
static volatile int visits;

__attribute__((noinline)) static void deep(int n)
{
    if (n == 0)
        longjmp(env, 1);
    visits++;
    deep(n - 1);
}

__attribute__((noinline)) static void leaf(void)
{
    visits++;
}

__attribute__((noinline)) static void *worker(void *arg)
{
    leaf();
    leaf();
    return arg;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, 0, worker, 0);
    if (setjmp(env) == 0)
        deep(2);
    leaf();
    pthread_join(t, 0);
    return visits == 5 ? 0 : 1;
}
