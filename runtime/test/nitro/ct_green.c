/* Call trace with user-level threads (ucontext): the scheduler reports each switch with
 * OS_SwitchProfilerThread, so each green thread records only into its own buffer, even though
 * they all run on one OS thread and switch in the middle of calls. */
#include <ucontext.h>

#include "nitro_test.h"

#define GREEN 3
#define STACK_SIZE (256 * 1024)

struct green {
    ucontext_t context;
    void *profiler; /* NITRO's OSThread.profiler */
    int id;
    int done;
    u32 buffer[0x400 / sizeof(u32)];
};

static struct green main_thread, threads[GREEN];
static struct green *running = &main_thread;

static void switch_to(struct green *to);
void yield(void);

int level3(int id) { OS_DumpCallTrace(); return id; }
int level2(int id) { yield(); return level3(id) + 1; }
int level1(int id) { yield(); return level2(id) + 1; }

static char dumps[GREEN][2048];

#pragma profile off
static void switch_to(struct green *to)
{
    struct green *from = running;
    from->profiler = OS_SwitchProfilerThread(to->profiler);
    running = to;
    swapcontext(&from->context, &to->context);
}

/* Round robin over the green threads that have not finished, then back to main. */
void yield(void)
{
    for (int i = 1; i <= GREEN; i++) {
        struct green *next = &threads[(running->id + i) % GREEN];
        if (next != running && !next->done) {
            switch_to(next);
            return;
        }
    }
}

static void body(int id)
{
    struct green *self = &threads[id];
    OS_InitCallTrace(self->buffer, sizeof self->buffer, OS_CALLTRACE_STACK);
    nt_capture_start();
    (void)level1(id + 1);
    snprintf(dumps[id], sizeof dumps[id], "%s", nt_normalize((char *)nt_captured()));
    nt_capture_start(); /* the capture buffer is per OS thread: empty it for the next dump */
    self->done = 1;
    yield();
    switch_to(&main_thread); /* the last one returns to main */
}

int main(void)
{
    static char stacks[GREEN][STACK_SIZE];
    for (int i = 0; i < GREEN; i++) {
        threads[i].id = i;
        getcontext(&threads[i].context);
        threads[i].context.uc_stack.ss_sp = stacks[i];
        threads[i].context.uc_stack.ss_size = STACK_SIZE;
        threads[i].context.uc_link = NULL;
        makecontext(&threads[i].context, (void (*)(void))body, 1, i);
    }
    main_thread.id = -1;
    switch_to(&threads[0]);
    for (int i = 0; i < GREEN; i++) {
        char want[1024];
        snprintf(want, sizeof want,
                 "OS_DumpCallTrace: lr=ADDR\n"
                 "level3: lr=ADDR, r0=%08x, r1=00000000, r2=00000000, r3=00000000\n"
                 "level2: lr=ADDR, r0=%08x, r1=00000000, r2=00000000, r3=00000000\n"
                 "level1: lr=ADDR, r0=%08x, r1=00000000, r2=00000000, r3=00000000\n",
                 i + 1, i + 1, i + 1);
        nt_expect_text(dumps[i], want);
    }
    printf("ok\n");
    return 0;
}
