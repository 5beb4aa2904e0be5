/* fork(): the child writes its own file; the parent's stays whole.
 * parent: main, A pairs, fork, (wait), C pairs, exit main; child: B pairs, exit(0).
 * `fork chdir`: the child first moves to the directory "away" (as a daemon moves to /): its
 * file must still be where the parent started. `fork _exit`: the child ends with _exit(0), and
 * its file must still be finished. `fork vfork`: first a vfork child that only calls _exit,
 * which must not touch the parent's trace (it shares the parent's memory). */
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
    HK_VAR("pid", "%ld", (long)getpid());
    HK_VAR("addr.before", "%p", (void *)before);
    HK_VAR("addr.in_child", "%p", (void *)in_child);
    HK_VAR("addr.after", "%p", (void *)after);
    const char *path = hookcc_trace_path();
    HK_VAR("path", "%s", path != NULL ? path : "(null)");
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "vfork") == 0) {
        pid_t v = vfork();
        if (v == 0)
            _exit(0);
        int vstatus;
        waitpid(v, &vstatus, 0);
    }
    pairs(before, 1000);
    pid_t child = fork();
    if (child < 0)
        return 2;
    if (child == 0) {
        if (strcmp(mode, "chdir") == 0 && chdir("away") != 0)
            _exit(4);
        pairs(in_child, 500);
        path = hookcc_trace_path();
        HK_VAR("child_pid", "%ld", (long)getpid());
        HK_VAR("child_path", "%s", path != NULL ? path : "(null)");
        if (strcmp(mode, "_exit") == 0)
            _exit(0);
        exit(0);
    }
    int status;
    waitpid(child, &status, 0);
    pairs(after, 200);
    EXIT(main);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 3;
}
