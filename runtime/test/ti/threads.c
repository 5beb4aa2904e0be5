/* Four threads record at once, through the default 1 Mi-record buffer.
 *   threads stop N       each thread makes N entry/exit pairs of its own function: every
 *                        record is kept, none lost or shared, each thread's in its order;
 *   threads circular N   the same with the circular hooks (wraps when 8N > 2^20): every slot
 *                        holds a whole record of one of the threads. Order is not checked: a
 *                        thread preempted between reserving its slot and writing it while the
 *                        others fill a whole lap writes its record over a newer one
 *                        (docs/ti-runtime.md, "Atomicity"). Printed for information only:
 *                        older= (records older than the oldest slot's: such overwrites, and
 *                        timestamps taken long before the slot was reserved) and breaks=
 *                        (breaks in a thread's entry/exit alternation). */
#include <pthread.h>

#include "ti_test.h"

TI_FUNCTION(w0, 0)
TI_FUNCTION(w1, 1)
TI_FUNCTION(w2, 2)
TI_FUNCTION(w3, 3)

static void (*const fns[4])(void) = {w0, w1, w2, w3};
static long pairs;
static int circular;

static void *worker(void *arg)
{
    void (*f)(void) = fns[(long)arg];
    for (long i = 0; i < pairs; i++) {
        if (circular) {
            ENTRY_C(f);
            EXIT_C(f);
        } else {
            ENTRY(f);
            EXIT(f);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    circular = argc > 1 && strcmp(argv[1], "circular") == 0;
    pairs = argc > 2 ? atol(argv[2]) : 50000;
    hook_init();
    pthread_t t[4];
    for (long k = 0; k < 4; k++)
        pthread_create(&t[k], NULL, worker, (void *)k);
    for (int k = 0; k < 4; k++)
        pthread_join(t[k], NULL);

    unsigned long total = 8ul * (unsigned long)pairs;
    CHECK(uiProfileDataCnt == total, "count %u, expected %lu", uiProfileDataCnt, total);
    unsigned int cap = uiMaxProfileRecordNum;
    unsigned int n = total < cap ? (unsigned int)total : cap;
    unsigned int first = total < cap ? 0 : uiProfileDataCnt & (cap - 1);
    long seen[4][2] = {{0}}, stale = 0, breaks = 0;
    int next_type[4] = {-1, -1, -1, -1}, bad = 0;
    uint64_t oldest_time = ti_time(&ProfileData[first & (cap - 1)]);
    for (unsigned int j = 0; j < n && bad < 5; j++) {
        const Hook_Record *r = &ProfileData[(first + j) & (cap - 1)];
        if (circular && j > 0 && ti_time(r) < oldest_time)
            stale++; /* older than the oldest slot's record: from a lap before */
        int k = 0;
        while (k < 4 && (r->address_type & ~HOOKCC_TI_TYPE_MASK) != ti_at(fns[k], 0))
            k++;
        int type = (int)(r->address_type & HOOKCC_TI_TYPE_MASK);
        if (k == 4 || type > 1) {
            CHECK(0, "record %u: 0x%llx is nobody's", j, (unsigned long long)r->address_type);
            bad++;
            continue;
        }
        /* each thread's records alternate entry, exit, in slot order */
        if (next_type[k] >= 0 && type != next_type[k]) {
            breaks++;
            if (!circular) {
                CHECK(0, "record %u: thread %d's records do not alternate", j, k);
                bad++;
            }
        }
        next_type[k] = !type;
        seen[k][type]++;
    }
    for (int k = 0; k < 4; k++) {
        if (!circular)
            CHECK(seen[k][0] == pairs && seen[k][1] == pairs, "thread %d: %ld entries, %ld exits",
                  k, seen[k][0], seen[k][1]);
        TI_VAR("fn", "0x%llx", (unsigned long long)(uintptr_t)fns[k]);
    }
    if (circular) {
        CHECK(seen[0][0] + seen[0][1] + seen[1][0] + seen[1][1] + seen[2][0] + seen[2][1] +
                      seen[3][0] + seen[3][1] == (long)n,
              "not every slot holds a record");
        TI_VAR("older", "%ld", stale);
        TI_VAR("breaks", "%ld", breaks);
    }
    return ti_finish();
}
