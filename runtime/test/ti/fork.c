/* A forked child dumps to files of its own: with HOOKCC_TI_OUTPUT=P, the parent writes P.bin
 * and P.dat and the child P.<pid>.bin and P.<pid>.dat; by default each its own
 * <program>.<pid>.ti.*. The child's buffer is the parent's at fork plus its own records. */
#include <sys/wait.h>
#include <unistd.h>

#include "ti_test.h"

TI_FUNCTION(before, 1)
TI_FUNCTION(in_child, 2)
TI_FUNCTION(after, 3)

int main(void)
{
    hook_init();
    for (int i = 0; i < 10; i++) {
        ENTRY(before);
        EXIT(before);
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        for (int i = 0; i < 5; i++) {
            ENTRY(in_child);
            EXIT(in_child);
        }
        exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    for (int i = 0; i < 3; i++) {
        ENTRY(after);
        EXIT(after);
    }
    TI_VAR("child_pid", "%d", (int)pid);
    TI_VAR("pid", "%d", (int)getpid());
    TI_ADDR(before);
    TI_ADDR(in_child);
    TI_ADDR(after);
    return ti_finish();
}
