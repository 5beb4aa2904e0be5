/* A program-defined buffer (HOOKCC_TI_PROFILE_BUFFER replaces the runtime's weak default) with
 * the stop-when-full hooks: recording stops at 64 records, the rest are counted as dropped,
 * and a task switch that finds one free slot keeps its TASK_EXIT record. */
#include "ti_test.h"

HOOKCC_TI_PROFILE_BUFFER(64);

TI_FUNCTION(f, 1)

static struct task { long id; } task_a = {1}, task_b = {2};

int main(void)
{
    CHECK(uiMaxProfileRecordNum == 64, "capacity %u", uiMaxProfileRecordNum);
    CHECK(sizeof ProfileData == 64 * sizeof(Hook_Record), "the program's buffer");
    hook_init();
    for (int i = 0; i < 31; i++) {
        ENTRY(f);
        EXIT(f);
    }
    ENTRY(f); /* record 62 */
    CHECK(uiProfileDataCnt == 63, "count %u", uiProfileDataCnt);
    task_switch_hook((uintptr_t)&task_a, (uintptr_t)&task_b); /* one slot left */
    CHECK(uiProfileDataCnt == 65, "count %u after the switch", uiProfileDataCnt);
    CHECK(ProfileData[63].address_type == ((uintptr_t)&task_a | HOOK_TYPE_TASK_EXIT),
          "last record 0x%llx", (unsigned long long)ProfileData[63].address_type);
    CHECK(hookcc_ti_dropped == 1, "dropped %lu", hookcc_ti_dropped);
    for (int i = 0; i < 100; i++) {
        ENTRY(f);
        EXIT(f);
    }
    task_switch_hook((uintptr_t)&task_b, (uintptr_t)&task_a);
    CHECK(uiProfileDataCnt == 65, "count %u once full", uiProfileDataCnt);
    CHECK(hookcc_ti_dropped == 1 + 200 + 2, "dropped %lu", hookcc_ti_dropped);
    for (unsigned int i = 0; i < 63; i++)
        CHECK(ProfileData[i].address_type ==
                  ti_at(f, i % 2 == 0 ? HOOK_TYPE_FUNC_ENTRY : HOOK_TYPE_FUNC_EXIT),
              "record %u", i);
    /* hook_init restarts: count, fill and dropped */
    hook_init();
    CHECK(uiProfileDataCnt == 0 && hookcc_ti_dropped == 0 && ti_invalid(&ProfileData[0]),
          "restart");
    for (int i = 0; i < 40; i++) {
        ENTRY(f);
        EXIT(f);
    }
    CHECK(uiProfileDataCnt == 64 && hookcc_ti_dropped == 16, "after restart: %u, %lu",
          uiProfileDataCnt, hookcc_ti_dropped);
    TI_ADDR(f);
    return ti_finish();
}
