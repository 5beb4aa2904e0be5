/* The control channel (trace/control.h, docs/control-protocol.md), from inside the program:
 * started with HOOKCC_DISABLE=1 and XDG_RUNTIME_DIR set, it talks to its own socket (the
 * runtime's control thread answers): status, a bad request, start a window file, 100 pairs of
 * `work`, stop; a fork child has no socket of its own and leaves the parent's. With the
 * argument `off` (HOOKCC_CONTROL=0) it checks that there is no socket. */
#include "hk_test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

HK_FUNCTION(work, 1)

static int failures;

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "control.c:%d: %s\n", __LINE__, #cond);                            \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

static char socket_path[512];

static void socket_of(long pid, char *out, size_t size)
{
    snprintf(out, size, "%s/hookcc/%ld.sock", getenv("XDG_RUNTIME_DIR"), pid);
}

/* One request (its bytes as given); the reply line into `reply` ("" if none). */
static void ask(const char *request, size_t len, char *reply, size_t size)
{
    reply[0] = '\0';
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    snprintf(addr.sun_path, sizeof addr.sun_path, "%s", socket_path);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        fprintf(stderr, "cannot connect to %s\n", socket_path);
        failures++;
        if (fd >= 0)
            close(fd);
        return;
    }
    if (write(fd, request, len) != (ssize_t)len)
        failures++;
    size_t got = 0;
    ssize_t n;
    while (got + 1 < size && (n = read(fd, reply + got, size - 1 - got)) > 0)
        got += (size_t)n;
    reply[got] = '\0';
    char *newline = strchr(reply, '\n');
    if (newline != NULL)
        *newline = '\0';
    close(fd);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int main(int argc, char **argv)
{
    socket_of((long)getpid(), socket_path, sizeof socket_path);
    if (argc > 1 && strcmp(argv[1], "off") == 0) {
        CHECK(!exists(socket_path));
        HK_VAR("failures", "%d", failures);
        return failures != 0;
    }
    CHECK(exists(socket_path));
    char reply[1024];
    char expect[64];
    ask("status\n", 7, reply, sizeof reply);
    snprintf(expect, sizeof expect, "ok pid=%ld ", (long)getpid());
    CHECK(strncmp(reply, expect, strlen(expect)) == 0);
    CHECK(strstr(reply, " mode=trace ") != NULL && strstr(reply, " recording=0 ") != NULL);
    ask("\001\002bad\n", 6, reply, sizeof reply);
    CHECK(strncmp(reply, "error bad request", 17) == 0);
    ask("functions x*\n", 13, reply, sizeof reply);
    CHECK(strncmp(reply, "ok functions=", 13) == 0);
    ask("functions\n", 10, reply, sizeof reply);
    CHECK(strncmp(reply, "ok functions=", 13) == 0);

    char cwd[256], request[512];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    int len = snprintf(request, sizeof request, "start %s/window.hktrace\n", cwd);
    ask(request, (size_t)len, reply, sizeof reply);
    CHECK(strncmp(reply, "ok path=", 8) == 0 && strstr(reply, "window.hktrace") != NULL);
    CHECK(hookcc_trace_enabled() == 1);
    for (int i = 0; i < 100; i++) {
        ENTER(work);
        EXIT(work);
    }

    /* A fork child: no socket of its own, the parent's left alone at its exit. */
    pid_t child = fork();
    if (child == 0) {
        char mine[512];
        socket_of((long)getpid(), mine, sizeof mine);
        _exit(exists(mine) ? 3 : 0);
    }
    int status = 0;
    CHECK(child > 0 && waitpid(child, &status, 0) == child && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
    CHECK(exists(socket_path));

    ask("stop\n", 5, reply, sizeof reply);
    CHECK(strncmp(reply, "ok records=200 path=", 20) == 0);
    CHECK(hookcc_trace_enabled() == 0);
    ask("stop\n", 5, reply, sizeof reply); /* nothing open: recording stays off */
    CHECK(strncmp(reply, "ok records=0 path=", 18) == 0);
    HK_VAR("window", "%s/window.hktrace", cwd);
    HK_VAR("socket", "%s", socket_path);
    HK_VAR("addr.work", "%p", (void *)work);
    HK_VAR("failures", "%d", failures);
    return failures != 0;
}
