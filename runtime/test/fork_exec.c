/* fork + exec: the exec'd image (this program again, with argument "child") must get a file of
 * its own and leave its parent's alone, and the fork child that only execs must leave no file.
 * parent: main, A pairs, fork, (wait), C pairs, exit main; the exec'd child: main, B pairs. */
#include "hk_test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

HK_FUNCTION(before, 1)
HK_FUNCTION(in_child, 2)
HK_FUNCTION(after, 3)

static void pairs(void (*f)(void), int n)
{
    for (int i = 0; i < n; i++) {
        ENTER(f);
        EXIT(f);
    }
}

int main(int argc, char **argv)
{
    ENTER(main);
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        pairs(in_child, 500);
        const char *path = hookcc_trace_path();
        HK_VAR("child_pid", "%ld", (long)getpid());
        HK_VAR("child_path", "%s", path != NULL ? path : "(null)");
        HK_VAR("child_addr.in_child", "%p", (void *)in_child);
        EXIT(main);
        return 0;
    }
    HK_VAR("pid", "%ld", (long)getpid());
    HK_VAR("addr.before", "%p", (void *)before);
    HK_VAR("addr.in_child", "%p", (void *)in_child);
    HK_VAR("addr.after", "%p", (void *)after);
    const char *path = hookcc_trace_path();
    HK_VAR("path", "%s", path != NULL ? path : "(null)");
    pairs(before, 1000);
    pid_t child = fork();
    if (child < 0)
        return 2;
    if (child == 0) {
        char *args[] = {argv[0], "child", NULL};
        execv("/proc/self/exe", args);
        _exit(127);
    }
    int status;
    waitpid(child, &status, 0);
    pairs(after, 200);
    EXIT(main);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 3;
}
