/* Dies of a fatal signal; the runtime must finish the file and the signal must still kill
 * the process. `kill` (SIGKILL) cannot be caught: the file stays incomplete but readable.
 * With CRASH_CHAIN=1 in the environment, a SIGSEGV/SIGABRT handler is installed before the
 * runtime's (from .preinit_array); the runtime must pass the signal on to it (exit 42).
 * Usage: crash segv|abort|overflow|kill [N] */
#include "hk_test.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

HK_FUNCTION(work, 1)
HK_FUNCTION(crasher, 2)

static volatile int *volatile null_pointer;

static void previous_handler(int sig)
{
    (void)sig;
    static const char msg[] = "previous handler ran\n";
    ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)ignored;
    _exit(42);
}

/* Runs before every constructor, so before the runtime installs its handlers. */
static void install_previous_handler(int argc, char **argv, char **envp)
{
    (void)argc;
    (void)argv;
    for (char **e = envp; *e != NULL; e++) {
        if (strcmp(*e, "CRASH_CHAIN=1") == 0) {
            signal(SIGSEGV, previous_handler);
            signal(SIGABRT, previous_handler);
        }
    }
}
__attribute__((section(".preinit_array"), used)) static void (*preinit)(int, char **, char **) =
    install_previous_handler;
static volatile int stop_recursion; /* never set: keeps -Winfinite-recursion quiet */

__attribute__((noinline)) static int recurse(int depth)
{
    volatile char frame[64];
    frame[0] = (char)depth;
    if (stop_recursion)
        return 0;
    ENTER(recurse);
    int r = recurse(depth + 1) + frame[0];
    EXIT(recurse);
    return r;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "segv";
    int n = argc > 2 ? atoi(argv[2]) : 1000;
    ENTER(main);
    HK_VAR("pid", "%ld", (long)getpid());
    for (int i = 0; i < n; i++) {
        ENTER(work);
        EXIT(work);
    }
    ENTER(crasher);
    if (strcmp(mode, "segv") == 0)
        *null_pointer = 1;
    else if (strcmp(mode, "abort") == 0)
        abort();
    else if (strcmp(mode, "overflow") == 0)
        return recurse(0);
    else if (strcmp(mode, "kill") == 0)
        raise(SIGKILL);
    return 0;
}
