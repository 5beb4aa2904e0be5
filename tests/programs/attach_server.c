/* A small threaded server for the attach tests (tests/tests/attach.rs): it listens on
 * 127.0.0.1 (an ephemeral port, printed as "port N"), serves each connection in a thread of its
 * own, and keeps a background thread busy, so that an attach finds threads in the middle of
 * their work. Requests, one line each:
 *   req      handle_request() (which calls parse_request and compute): "ok"
 *   count    the program's own counters: "handled H background B"
 *   quit     the program exits (main returns)
 * Built with `hookcc --trace --hook-placement=source`; run with HOOKCC_DISABLE=1. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static unsigned long long handled;    /* calls of handle_request */
static unsigned long long background; /* calls of background_step */
static volatile int quitting;

__attribute__((noinline)) static int parse_request(const char *line)
{
    return strncmp(line, "req", 3) == 0;
}

__attribute__((noinline)) static unsigned compute(unsigned seed)
{
    unsigned x = seed;
    for (int i = 0; i < 200; i++)
        x = x * 1103515245u + 12345u;
    return x;
}

__attribute__((noinline)) static unsigned handle_request(const char *line, unsigned seed)
{
    __atomic_fetch_add(&handled, 1, __ATOMIC_RELAXED);
    if (!parse_request(line))
        return 0;
    return compute(seed);
}

__attribute__((noinline)) static void background_step(void)
{
    __atomic_fetch_add(&background, 1, __ATOMIC_RELAXED);
    compute((unsigned)background);
}

static void *background_main(void *arg)
{
    (void)arg;
    while (!quitting) {
        background_step();
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return NULL;
}

static void *serve_connection(void *arg)
{
    int fd = (int)(long)arg;
    FILE *in = fdopen(fd, "r");
    char line[256];
    unsigned seed = 1;
    while (in != NULL && fgets(line, sizeof line, in) != NULL) {
        char reply[128];
        if (strncmp(line, "quit", 4) == 0) {
            quitting = 1;
            snprintf(reply, sizeof reply, "bye\n");
        } else if (strncmp(line, "count", 5) == 0) {
            snprintf(reply, sizeof reply, "handled %llu background %llu\n",
                     __atomic_load_n(&handled, __ATOMIC_RELAXED),
                     __atomic_load_n(&background, __ATOMIC_RELAXED));
        } else {
            seed = handle_request(line, seed);
            snprintf(reply, sizeof reply, "ok\n");
        }
        if (write(fd, reply, strlen(reply)) < 0)
            break;
        if (quitting) {
            shutdown(fd, SHUT_RDWR);
            exit(0);
        }
    }
    if (in != NULL)
        fclose(in);
    return NULL;
}

int main(void)
{
    int server = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (server < 0 || bind(server, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        listen(server, 16) != 0 || getsockname(server, (struct sockaddr *)&addr, &len) != 0) {
        perror("attach_server");
        return 1;
    }
    pthread_t bg;
    pthread_create(&bg, NULL, background_main, NULL);
    printf("port %d\n", ntohs(addr.sin_port));
    fflush(stdout);
    for (;;) {
        int client = accept(server, NULL, NULL);
        if (client < 0)
            continue;
        pthread_t t;
        pthread_create(&t, NULL, serve_connection, (void *)(long)client);
        pthread_detach(t);
    }
}
