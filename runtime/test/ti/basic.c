/* The stop-when-full hooks with the runtime's default buffer: nothing before hook_init, then
 * n iterations of outer { inner } with a task switch away and back every 100th iteration.
 * Checks the records in-process, keeps errno, and leaves the exit dump to check_ti.py.
 *   basic [n] [noinit|dump]   noinit: never call hook_init (no files may appear);
 *                             dump: hookcc_ti_dump() half way, then go on. */
#include <errno.h>

#include "ti_test.h"

TI_FUNCTION(outer, 1)
TI_FUNCTION(inner, 2)

/* Task objects, as an RTOS's task handles: pointer-aligned structs. */
static struct task { long id; } task_a = {1}, task_b = {2};

static void run(long from, long to)
{
    for (long i = from; i < to; i++) {
        ENTRY(outer);
        if (i % 100 == 99) {
            task_switch_hook((uintptr_t)&task_a, (uintptr_t)&task_b);
            task_switch_hook((uintptr_t)&task_b, (uintptr_t)&task_a);
        }
        ENTRY(inner);
        EXIT(inner);
        EXIT(outer);
    }
}

/* The records run() leaves for iterations [0, n), in order. */
static void check_records(long n)
{
    unsigned int k = 0;
    uint64_t last = 0;
    int bad = 0;
    for (long i = 0; i < n && bad < 5; i++) {
        uintptr_t want[6];
        int m = 0;
        want[m++] = ti_at(outer, HOOK_TYPE_FUNC_ENTRY);
        if (i % 100 == 99) {
            want[m++] = ((uintptr_t)&task_a) | HOOK_TYPE_TASK_EXIT;
            want[m++] = ((uintptr_t)&task_b) | HOOK_TYPE_TASK_ENTRY;
            want[m++] = ((uintptr_t)&task_b) | HOOK_TYPE_TASK_EXIT;
            want[m++] = ((uintptr_t)&task_a) | HOOK_TYPE_TASK_ENTRY;
        }
        want[m++] = ti_at(inner, HOOK_TYPE_FUNC_ENTRY);
        /* inner's exit and outer's exit */
        uintptr_t tail[2] = {ti_at(inner, HOOK_TYPE_FUNC_EXIT), ti_at(outer, HOOK_TYPE_FUNC_EXIT)};
        for (int j = 0; j < m + 2; j++, k++) {
            const Hook_Record *r = &ProfileData[k];
            uintptr_t w = j < m ? want[j] : tail[j - m];
            if (r->address_type != w) {
                CHECK(r->address_type == w, "record %u: 0x%llx, expected 0x%llx", k,
                      (unsigned long long)r->address_type, (unsigned long long)w);
                bad++;
            }
            CHECK(ti_time(r) >= last, "record %u: time went back", k);
            last = ti_time(r);
        }
        if (i % 100 == 99) {
            /* a switch's two records share one timestamp */
            unsigned int s = k - 4 - 3;
            CHECK(ti_time(&ProfileData[s]) == ti_time(&ProfileData[s + 1]),
                  "task records %u, %u: different times", s, s + 1);
        }
    }
    CHECK(k == uiProfileDataCnt, "walked %u records, count is %u", k, uiProfileDataCnt);
    CHECK(ti_invalid(&ProfileData[k]), "record %u after the last is not 0xFF-filled", k);
}

static long records_for(long n)
{
    return 4 * n + 4 * (n / 100);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    const char *mode = argc > 2 ? argv[2] : "";

    CHECK(sizeof(Hook_Record) == (sizeof(void *) == 8 ? 16u : 12u), "sizeof %zu",
          sizeof(Hook_Record));
    CHECK(HOOKCC_TI_RECORD_WORDS == sizeof(void *) / 4 + 2, "words %zu",
          (size_t)HOOKCC_TI_RECORD_WORDS);
    CHECK(uiMaxProfileRecordNum == 1u << 20, "default capacity %u", uiMaxProfileRecordNum);

    /* Before hook_init: the seed's 0xFFFFFFFF keeps every hook from recording. */
    CHECK(uiProfileDataCnt == 0xFFFFFFFFu, "initial count %u", uiProfileDataCnt);
    ENTRY(outer);
    EXIT(outer);
    ENTRY_C(outer);
    EXIT_C(outer);
    task_switch_hook((uintptr_t)&task_a, (uintptr_t)&task_b);
    task_switch_hook_circular((uintptr_t)&task_a, (uintptr_t)&task_b);
    CHECK(uiProfileDataCnt == 0xFFFFFFFFu, "count %u before hook_init", uiProfileDataCnt);
    CHECK(hookcc_ti_dropped == 0, "dropped %lu before hook_init", hookcc_ti_dropped);
    errno = 0;
    CHECK(hookcc_ti_dump() == -1 && errno == EINVAL, "hookcc_ti_dump before hook_init");
    if (strcmp(mode, "noinit") == 0)
        return ti_finish();

    hook_init();
    CHECK(uiProfileDataCnt == 0, "count %u after hook_init", uiProfileDataCnt);
    CHECK(ti_invalid(&ProfileData[0]) && ProfileData[0].TSCL == 0xFFFFFFFFu &&
              ProfileData[0].TSCH == 0xFFFFFFFFu && ti_invalid(&ProfileData[(1u << 20) - 1]),
          "hook_init did not fill the buffer with 0xFF");

    errno = 4242;
    long half = strcmp(mode, "dump") == 0 ? n / 2 : n;
    run(0, half);
    CHECK(errno == 4242, "errno changed across the hooks: %d", errno);
    if (half != n) {
        CHECK(hookcc_ti_dump() == 0, "hookcc_ti_dump: %s", strerror(errno));
        TI_VAR("dumped_records", "%ld", records_for(half));
        run(half, n);
    }
    CHECK(uiProfileDataCnt == (unsigned int)records_for(n), "count %u, expected %ld",
          uiProfileDataCnt, records_for(n));
    check_records(n);
    CHECK(hookcc_ti_dropped == 0, "dropped %lu", hookcc_ti_dropped);

    TI_ADDR(outer);
    TI_ADDR(inner);
    TI_VAR("task.a", "0x%llx", (unsigned long long)(uintptr_t)&task_a);
    TI_VAR("task.b", "0x%llx", (unsigned long long)(uintptr_t)&task_b);
    TI_VAR("records", "%ld", records_for(n));
    return ti_finish();
}
