/* Tests of the profile point runtime (runtime/src/pfp.c), built with hookcc --hook-runtime=pfp.
 * The seed's measurement example rebuilt (seeds/ti-pfp-profile-points.txt): a calibrated
 * overhead point, nested regions with known busy loops, tasks switched by a user-level
 * scheduler, two OS threads, latch, reset, alpha, misuse. Work is compared through each
 * point's Cmin (the least a region measured over repetitions: a pre-empted repetition only
 * adds), against reference points that measure the same loops alone.
 *
 * Prints what pfpPrintStats prints to stdout, and writes the instance (pfpInst) to pfp.bin for
 * hookprof pfp; exits 0, or prints "file:line: what" and exits 1. */
#define _GNU_SOURCE 1
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <hookcc/pfp.h>

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

enum {
    ID_OVERHEAD = 0, /* pfpCalibrate's */
    ID_REF_SMALL,    /* the small loop alone */
    ID_REF_LARGE,    /* the large loop alone */
    ID_INNER,        /* nested: the large loop */
    ID_OUTER,        /* nested: the small loop around ID_INNER */
    ID_TASK_A,       /* a task switched out in the middle of its region */
    ID_TASK_B,       /* the task that runs meanwhile */
    ID_LATCH,        /* two partial measurements, one result */
    ID_ALPHA,        /* alpha = 1: the average is the last measurement */
    ID_THREAD_1,     /* one per OS thread */
    ID_THREAD_2,
    ID_MISUSED,      /* Begin twice: disabled */
};

#define SMALL 20000
#define LARGE 100000
#define REPEAT 30

static volatile unsigned sink;
static void loop(int n)
{
    for (int i = 0; i < n; i++)
        sink += (unsigned)i;
}

static pfpStats_t stats(int id)
{
    pfpStats_t s;
    pfpGetStats(id, &s);
    return s;
}

/* ---- user-level tasks ---- */
static ucontext_t main_ctx, a_ctx, b_ctx;
static char a_stack[256 * 1024], b_stack[256 * 1024];
static int task_a_handle, task_b_handle;

static void switch_to(void *from, ucontext_t *from_ctx, void *to, ucontext_t *to_ctx)
{
    pfpTaskSwitch(from, to);
    swapcontext(from_ctx, to_ctx);
}

static void task_b(void)
{
    pfpBegin(ID_TASK_B, &task_b_handle);
    loop(LARGE);
    pfpEnd(ID_TASK_B, 0);
    switch_to(&task_b_handle, &b_ctx, &task_a_handle, &a_ctx);
}

static void task_a(void)
{
    pfpBegin(ID_TASK_A, &task_a_handle);
    loop(SMALL / 2);
    switch_to(&task_a_handle, &a_ctx, &task_b_handle, &b_ctx); /* B runs LARGE meanwhile */
    loop(SMALL / 2);
    pfpEnd(ID_TASK_A, 0);
    switch_to(&task_a_handle, &a_ctx, NULL, &main_ctx);
}

/* ---- OS threads ---- */
static void *thread_body(void *arg)
{
    int id = (int)(long)arg;
    for (int i = 0; i < REPEAT; i++) {
        pfpBegin(id, NULL);
        loop(SMALL);
        pfpEnd(id, 0);
    }
    return NULL;
}

/* ---- output ---- */
static char printed[8192];
static size_t printed_len;
static void capture(const char *text, void *context)
{
    (void)context;
    size_t n = strlen(text);
    if (printed_len + n < sizeof printed) {
        memcpy(printed + printed_len, text, n + 1);
        printed_len += n;
    }
}

extern char pfpInst[]; /* the instance, for the dump: its layout is docs/pfp.md's */

int main(void)
{
    pfpCreate();
    pfpCalibrate(1000, 0);
    for (int id = 0; id < PFP_PPCNT_MAX; id++)
        pfpEnable(id);
    pfpStats_t overhead = stats(ID_OVERHEAD);
    CHECK(overhead.n_count == 1000, "calibration: %u measurements", (unsigned)overhead.n_count);

    /* References and nesting. */
    for (int r = 0; r < REPEAT; r++) {
        pfpBegin(ID_REF_SMALL, NULL);
        loop(SMALL);
        pfpEnd(ID_REF_SMALL, 0);
        pfpBegin(ID_REF_LARGE, NULL);
        loop(LARGE);
        pfpEnd(ID_REF_LARGE, 0);
        pfpBegin(ID_OUTER, NULL);
        loop(SMALL / 2);
        pfpBegin(ID_INNER, NULL);
        loop(LARGE);
        pfpEnd(ID_INNER, 0);
        loop(SMALL / 2);
        pfpEnd(ID_OUTER, 0);
    }
    pfpStats_t small = stats(ID_REF_SMALL), large = stats(ID_REF_LARGE);
    pfpStats_t inner = stats(ID_INNER), outer = stats(ID_OUTER);
    CHECK(small.n_count == REPEAT && large.n_count == REPEAT && inner.n_count == REPEAT &&
              outer.n_count == REPEAT,
          "counts %u %u %u %u", (unsigned)small.n_count, (unsigned)large.n_count,
          (unsigned)inner.n_count, (unsigned)outer.n_count);
    CHECK(large.c_min > 3 * small.c_min, "the large loop (%llu) is not larger than the small one "
          "(%llu)", (unsigned long long)large.c_min, (unsigned long long)small.c_min);
    /* Exclusive: the outer region holds its own small loop, not the inner large one. Within
     * 25 % of the reference; inclusive would be 6 times that. */
    CHECK(outer.c_min * 4 < small.c_min * 5 && outer.c_min * 4 > small.c_min * 3,
          "outer (exclusive) Cmin %llu vs the small loop's %llu",
          (unsigned long long)outer.c_min, (unsigned long long)small.c_min);
    CHECK(inner.c_min * 4 < large.c_min * 5 && inner.c_min * 4 > large.c_min * 3,
          "inner Cmin %llu vs the large loop's %llu", (unsigned long long)inner.c_min,
          (unsigned long long)large.c_min);

    /* A task switched out pauses: A measures its own two half loops, not B's large one. */
    for (int r = 0; r < REPEAT; r++) {
        getcontext(&a_ctx);
        a_ctx.uc_stack.ss_sp = a_stack;
        a_ctx.uc_stack.ss_size = sizeof a_stack;
        a_ctx.uc_link = &main_ctx;
        makecontext(&a_ctx, task_a, 0);
        getcontext(&b_ctx);
        b_ctx.uc_stack.ss_sp = b_stack;
        b_ctx.uc_stack.ss_size = sizeof b_stack;
        b_ctx.uc_link = &main_ctx;
        makecontext(&b_ctx, task_b, 0);
        switch_to(NULL, &main_ctx, &task_a_handle, &a_ctx);
    }
    pfpStats_t a = stats(ID_TASK_A), b = stats(ID_TASK_B);
    CHECK(a.n_count == REPEAT && b.n_count == REPEAT, "tasks: %u %u", (unsigned)a.n_count,
          (unsigned)b.n_count);
    CHECK(a.c_min * 4 < small.c_min * 5 && a.c_min * 4 > small.c_min * 3,
          "task A Cmin %llu vs the small loop's %llu: B's %llu leaked in?",
          (unsigned long long)a.c_min, (unsigned long long)small.c_min,
          (unsigned long long)b.c_min);

    /* Latch: two partial measurements make one. */
    for (int r = 0; r < REPEAT; r++) {
        pfpBegin(ID_LATCH, NULL);
        loop(SMALL);
        pfpEnd(ID_LATCH, 1);
        loop(LARGE); /* outside the region */
        pfpBegin(ID_LATCH, NULL);
        loop(SMALL);
        pfpEnd(ID_LATCH, 0);
    }
    pfpStats_t latch = stats(ID_LATCH);
    CHECK(latch.n_count == REPEAT, "latch: %u measurements", (unsigned)latch.n_count);
    CHECK(latch.c_min * 4 < small.c_min * 2 * 5 && latch.c_min * 4 > small.c_min * 2 * 3,
          "latch Cmin %llu vs two small loops %llu", (unsigned long long)latch.c_min,
          (unsigned long long)(2 * small.c_min));

    /* Alpha 1: the average is the last measurement exactly. */
    pfpSetAlpha(ID_ALPHA, 1.0f);
    for (int r = 0; r < 3; r++) {
        long long before = stats(ID_ALPHA).c_total;
        pfpBegin(ID_ALPHA, NULL);
        loop(SMALL);
        pfpEnd(ID_ALPHA, 0);
        pfpStats_t s = stats(ID_ALPHA);
        CHECK(s.alpha == 1.0f && s.c_average == (float)(s.c_total - before),
              "alpha 1: average %g, last %lld", s.c_average, s.c_total - before);
    }
    /* Reset. */
    pfpResetStats(ID_ALPHA);
    CHECK(stats(ID_ALPHA).n_count == 0 && stats(ID_ALPHA).c_total == 0, "reset");

    /* OS threads at once, each with its own list. */
    pthread_t t1, t2;
    CHECK(pthread_create(&t1, NULL, thread_body, (void *)(long)ID_THREAD_1) == 0, "thread");
    CHECK(pthread_create(&t2, NULL, thread_body, (void *)(long)ID_THREAD_2) == 0, "thread");
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    CHECK(stats(ID_THREAD_1).n_count == REPEAT && stats(ID_THREAD_2).n_count == REPEAT,
          "threads: %u %u", (unsigned)stats(ID_THREAD_1).n_count,
          (unsigned)stats(ID_THREAD_2).n_count);

    /* Misuse: never a crash; counted; Begin-Begin disables the point. */
    pfpBegin(ID_MISUSED, NULL);
    pfpBegin(ID_MISUSED, NULL);
    pfpEnd(ID_MISUSED, 0);       /* disabled now: ignored */
    pfpEnd(ID_REF_SMALL, 0);     /* without Begin */
    pfpBegin(PFP_PPCNT_MAX, NULL); /* out of range */
    pfpEnd(-1, 0);
    CHECK(stats(ID_MISUSED).n_count == 0, "a misused point measured");
    pfpBegin(ID_MISUSED, NULL); /* still disabled */
    pfpEnd(ID_MISUSED, 0);
    CHECK(stats(ID_MISUSED).n_count == 0, "a disabled point measured");

    /* What pfpPrintStats prints: each line as the seed's, and printf's %g for C-avg. */
    pfpSetPrintFunction(capture, NULL);
    pfpPrintStats();
    char *line = printed;
    int lines = 0;
    for (char *end; (end = strchr(line, '\n')) != NULL; line = end + 1) {
        *end = '\0';
        unsigned id, n;
        unsigned long long c, cmin, cmax;
        char avg[32], avg_t[32];
        if (strncmp(line, "PFP: ", 5) == 0) {
            *end = '\n';
            continue;
        }
        CHECK(sscanf(line, "ID: %2u, n=%u, C=%llu, Cmin=%llu, Cmax=%llu, C-avg=%31[^,], "
                           "Avg-T=%31[^m]ms", &id, &n, &c, &cmin, &cmax, avg, avg_t) == 7,
              "not the seed's line: %s", line);
        char want[32];
        snprintf(want, sizeof want, "%g", (double)c / n);
        CHECK(strcmp(avg, want) == 0, "C-avg %s, printf's %%g says %s", avg, want);
        pfpStats_t s = stats((int)id);
        CHECK(s.n_count == n && (unsigned long long)s.c_total == c, "%s", line);
        *end = '\n';
        lines++;
    }
    CHECK(lines == ID_MISUSED - 1, "%d measurement lines (alpha's was reset):\n%s", lines,
          printed);
    CHECK(strstr(printed, "PFP: 1 pfpBegin calls on a point already begun: the point was "
                          "disabled\n") != NULL &&
              strstr(printed, "PFP: 2 calls with an id out of range were ignored\n") != NULL &&
              strstr(printed, "PFP: 1 pfpEnd calls without pfpBegin were ignored\n") != NULL,
          "misuse lines:\n%s", printed);
    fputs(printed, stdout);

    /* The instance as a debugger would dump it. */
    FILE *dump = fopen("pfp.bin", "wb");
    CHECK(dump != NULL, "pfp.bin");
    CHECK(fwrite(pfpInst, 80 + 96 * PFP_PPCNT_MAX, 1, dump) == 1 && fclose(dump) == 0,
          "pfp.bin");
    return 0;
}
