/* Five processes of one program (tests/tests/views_e2e.rs, `hookprof timeline A B …`): the
 * parent runs parent_work(), forks four children one after another — child i calls
 * child_work() i + 1 times and exits — waits for each before it forks the next, and runs
 * parent_work() again. Each process writes its own trace; the parent prints every pid. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) unsigned long spin(unsigned long n)
{
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < n; i++)
        x += i;
    return x;
}

#ifndef CHILD_SPINS
#define CHILD_SPINS 200000 /* a second build changes it (tests/tests/export.rs) */
#endif

__attribute__((noinline)) void child_work(void) { spin(CHILD_SPINS); }

__attribute__((noinline)) void parent_work(void) { spin(100000); }

/* Forks child i and waits for it: returns its pid. */
__attribute__((noinline)) pid_t run_child(int i)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        for (int k = 0; k <= i; k++)
            child_work();
        exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        fprintf(stderr, "family: child %d failed\n", i);
        exit(1);
    }
    return pid;
}

int main(void)
{
    parent_work();
    printf("parent %d\n", (int)getpid());
    for (int i = 0; i < 4; i++)
        printf("child %d %d\n", i, (int)run_child(i));
    parent_work();
    return 0;
}
