/* Process events that once lost or misplaced the trace (issue 37), one per first argument.
 * `work` is called a known number of times around each event; tests/tests/process_events.rs
 * runs it with small buffers (HOOKCC_BUFFER_RECORDS) so that chunks are written before and
 * after the event.
 *   closefrom FILE  work 3000, closefrom(3), FILE opened and 5000 bytes written, work 3000
 *   closeloop FILE  the same with a close() loop over every descriptor from 3 up
 *   stdio           (started with stdout closed) work 3000 with printf, work 3000
 *   clone           work 1000; a clone() child without CLONE_VM calls work 5000 and returns;
 *                   the parent waits for it, then work 1000
 *   daemon          work 2000, daemon(1, 1); the child writes its pid to the file named by
 *                   argv[2] and calls work 3000
 *   exec N          work 1000, then exec itself with N - 1 while N > 0
 *   execfail        work 1000, exec of a path that does not exist, work 1000
 *   execfail_thread the same, and a second thread calls work 700 before the exec and 300
 *                   after it (the exec waits for the first part, the second waits for it) */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int sink;

__attribute__((noinline)) void work(int i) { sink += i; }

static void work_n(int n)
{
    for (int i = 0; i < n; i++)
        work(i);
}

static int write_user_file(const char *path)
{
    int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (fd < 0)
        return 1;
    char block[500];
    memset(block, 'u', sizeof block);
    for (int i = 0; i < 5; i++) {
        if (write(fd, block, sizeof block) != (ssize_t)sizeof block)
            return 1;
        work_n(600);
        if (write(fd, block, sizeof block) != (ssize_t)sizeof block)
            return 1;
    }
    return close(fd);
}

static int child_body(void *arg)
{
    (void)arg;
    work_n(5000);
    return 7;
}

static pthread_barrier_t around_exec;

static void *second_thread(void *arg)
{
    (void)arg;
    work_n(700);
    pthread_barrier_wait(&around_exec); /* before the exec */
    pthread_barrier_wait(&around_exec); /* after it */
    work_n(300);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "closefrom") == 0 || strcmp(mode, "closeloop") == 0) {
        work_n(3000);
        if (mode[5] == 'f') {
            closefrom(3);
        } else {
            struct rlimit r;
            getrlimit(RLIMIT_NOFILE, &r);
            for (int fd = 3; fd < (int)r.rlim_cur && fd < 65536; fd++)
                close(fd);
        }
        return write_user_file(argv[2]);
    }
    if (strcmp(mode, "stdio") == 0) {
        for (int i = 0; i < 3; i++) {
            work_n(1000);
            printf("printf text that belongs to stdout, not to the trace %d\n", i);
            fflush(stdout);
        }
        work_n(3000);
        return 0;
    }
    if (strcmp(mode, "clone") == 0) {
        work_n(1000);
        static char stack[256 * 1024] __attribute__((aligned(16)));
        pid_t pid = clone(child_body, stack + sizeof stack, SIGCHLD, NULL);
        if (pid < 0)
            return 1;
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 7)
            return 2;
        work_n(1000);
        printf("child_pid=%d\n", (int)pid);
        return 0;
    }
    if (strcmp(mode, "daemon") == 0) {
        work_n(2000);
        if (daemon(1, 1) != 0)
            return 1;
        work_n(3000);
        FILE *f = fopen(argv[2], "w");
        if (f == NULL)
            return 1;
        fprintf(f, "%d\n", (int)getpid());
        return fclose(f) != 0;
    }
    if (strcmp(mode, "exec") == 0) {
        int n = atoi(argv[2]);
        work_n(1000);
        if (n <= 0)
            return 0;
        char next[16];
        snprintf(next, sizeof next, "%d", n - 1);
        execl("/proc/self/exe", argv[0], "exec", next, (char *)NULL);
        return 1;
    }
    if (strcmp(mode, "execfail_thread") == 0) {
        pthread_t thread;
        pthread_barrier_init(&around_exec, NULL, 2);
        if (pthread_create(&thread, NULL, second_thread, NULL) != 0)
            return 1;
        work_n(1000);
        pthread_barrier_wait(&around_exec);
        execl("/nonexistent/program", "program", (char *)NULL);
        int failed = errno == ENOENT;
        pthread_barrier_wait(&around_exec);
        work_n(1000);
        pthread_join(thread, NULL);
        return failed ? 0 : 1;
    }
    if (strcmp(mode, "execfail") == 0) {
        work_n(1000);
        execl("/nonexistent/program", "program", (char *)NULL);
        int failed = errno == ENOENT;
        work_n(1000);
        return failed ? 0 : 1;
    }
    return 3;
}
