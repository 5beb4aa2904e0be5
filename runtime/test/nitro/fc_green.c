/* Function cost: time spent switched out is not part of a call's cost (§2.2, §4.2). Green
 * threads (ucontext) whose scheduler reports switches with OS_SwitchProfilerThread: `waits`
 * yields in the middle to a thread that spins for SPIN_MS, yet costs little. And an OS thread
 * that marks a blocking sleep the same way: `blocked` sleeps as long as `sleeper` but costs
 * little. */
#include <time.h>
#include <ucontext.h>

#include "nitro_test.h"

#define SPIN_MS 30
#define STACK_SIZE (256 * 1024)

struct green {
    ucontext_t context;
    void *profiler;
    u32 buffer[0x1000 / sizeof(u32)];
};

static struct green main_thread, a_thread, b_thread;
static struct green *running = &main_thread;
static u32 stats[0x400 / sizeof(u32)];
static OSTick spin_ticks;

static void switch_to(struct green *to);

static volatile u32 sink;
void quick(void) { for (int i = 0; i < 1000; i++) sink += (u32)i; }
void waits(void) { quick(); switch_to(&b_thread); quick(); }
void spin(void)
{
    OSTick start = OS_GetTick();
    while (OS_GetTick() - start < spin_ticks)
        sink++;
}

/* Not measured itself: the sleep is the caller's own time (costs exclude the calls made). */
#pragma profile off
static void nap(void)
{
    struct timespec ts = {0, SPIN_MS * 1000000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}
#pragma profile reset

void sleeper(void) { nap(); }
void blocked(void)
{
    void *me = OS_SwitchProfilerThread(NULL); /* not running for a while */
    nap();
    OS_SwitchProfilerThread(me);
}

#pragma profile off
static void switch_to(struct green *to)
{
    struct green *from = running;
    from->profiler = OS_SwitchProfilerThread(to->profiler);
    running = to;
    swapcontext(&from->context, &to->context);
}

static void a_body(void)
{
    OS_InitFunctionCost(a_thread.buffer, sizeof a_thread.buffer);
    waits();
    OS_CalcStatistics(stats);
    switch_to(&main_thread);
}

static void b_body(void)
{
    OS_InitFunctionCost(b_thread.buffer, sizeof b_thread.buffer);
    spin();
    OS_CalcStatistics(stats);
    switch_to(&a_thread);
}

static unsigned long long cost_of(const char *dump, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "%s: count ", name);
    const char *line = strstr(dump, key);
    NT_CHECK(line != NULL, "no %s in:\n%s", name, dump);
    const char *cost = strstr(line, ", cost ");
    NT_CHECK(cost != NULL, "no cost for %s", name);
    return strtoull(cost + 7, NULL, 10);
}

static unsigned long long count_of(const char *dump, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "%s: count ", name);
    const char *line = strstr(dump, key);
    NT_CHECK(line != NULL, "no %s in:\n%s", name, dump);
    return strtoull(line + strlen(key), NULL, 10);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(void)
{
    static char stacks[2][STACK_SIZE];
    nt_capture_start();
    /* SPIN_MS in ticks. */
    uint64_t t0 = now_ns();
    OSTick k0 = OS_GetTick();
    while (now_ns() - t0 < 10000000u)
        ;
    spin_ticks = (OS_GetTick() - k0) * SPIN_MS / 10;
    NT_CHECK(spin_ticks > 0, "the tick does not advance");

    OS_InitStatistics(stats, sizeof stats);
    struct green *g[2] = {&a_thread, &b_thread};
    void (*bodies[2])(void) = {a_body, b_body};
    for (int i = 0; i < 2; i++) {
        getcontext(&g[i]->context);
        g[i]->context.uc_stack.ss_sp = stacks[i];
        g[i]->context.uc_stack.ss_size = STACK_SIZE;
        makecontext(&g[i]->context, bodies[i], 0);
    }
    switch_to(&a_thread);

    static u32 mine[0x400 / sizeof(u32)];
    OS_InitFunctionCost(mine, sizeof mine);
    sleeper();
    blocked();
    OS_CalcStatistics(stats);
    OS_DumpStatistics(stats);
    const char *dump = nt_captured();
    NT_CHECK(count_of(dump, "quick") == 2 && count_of(dump, "waits") == 1 &&
                 count_of(dump, "spin") == 1 && count_of(dump, "sleeper") == 1 &&
                 count_of(dump, "blocked") == 1, "counts:\n%s", dump);
    unsigned long long waits = cost_of(dump, "waits"), spin = cost_of(dump, "spin");
    unsigned long long sleeper = cost_of(dump, "sleeper"), blocked = cost_of(dump, "blocked");
    NT_CHECK(spin >= spin_ticks, "spin cost %llu < %llu ticks", spin, (unsigned long long)spin_ticks);
    NT_CHECK(waits < spin / 10, "waits cost %llu: the switched-out %llu not subtracted\n%s", waits, spin, dump);
    NT_CHECK(sleeper >= spin_ticks / 2, "sleeper cost %llu", sleeper);
    NT_CHECK(blocked < sleeper / 10, "blocked cost %llu vs sleeper %llu\n%s", blocked, sleeper, dump);
    printf("ok\n");
    return 0;
}
