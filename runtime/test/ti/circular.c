/* The circular hooks on a 16-record buffer: they return before hook_init, wrap, and keep
 * recording when the count reaches 0xFFFFFFFF or passes 2^32.
 *   circular [wrap|pass]   wrap (default): 100 records, dumped wrapped at exit;
 *                          pass: start just below 2^32 and cross it (checked in-process). */
#include "ti_test.h"

HOOKCC_TI_PROFILE_BUFFER(16);

TI_FUNCTION(f0, 0)
TI_FUNCTION(f1, 1)
TI_FUNCTION(f2, 2)
TI_FUNCTION(f3, 3)
TI_FUNCTION(f4, 4)

static void (*const fns[5])(void) = {f0, f1, f2, f3, f4};

static struct task { long id; } task_a = {1}, task_b = {2};

/* Record i: entry (even i) or exit (odd i) of fns[(i / 2) % 5], so pairs match. */
static uintptr_t expected(unsigned int i)
{
    return ti_at(fns[(i / 2) % 5], i % 2 == 0 ? HOOK_TYPE_FUNC_ENTRY : HOOK_TYPE_FUNC_EXIT);
}

static void record(unsigned int i)
{
    if (i % 2 == 0)
        ENTRY_C(fns[(i / 2) % 5]);
    else
        EXIT_C(fns[(i / 2) % 5]);
}

static void wrap(void)
{
    hook_init();
    for (unsigned int i = 0; i < 100; i++)
        record(i);
    CHECK(uiProfileDataCnt == 100, "count %u", uiProfileDataCnt);
    /* the last 16 records, record i in slot i & 15 */
    for (unsigned int i = 84; i < 100; i++)
        CHECK(ProfileData[i & 15].address_type == expected(i), "slot %u: 0x%llx", i & 15,
              (unsigned long long)ProfileData[i & 15].address_type);
    /* times increase from the oldest slot (100 & 15) round to the newest */
    for (unsigned int i = 85; i < 100; i++)
        CHECK(ti_time(&ProfileData[i & 15]) >= ti_time(&ProfileData[(i - 1) & 15]),
              "slot %u older than slot %u", i & 15, (i - 1) & 15);
    CHECK(hookcc_ti_dropped == 0, "dropped %lu", hookcc_ti_dropped);
    TI_VAR("oldest", "%u", 100u & 15u);
}

static void pass(void)
{
    hook_init();
    /* 20 records take counts 0xFFFFFFEB..0xFFFFFFFE (slots 11..15, 0..14); the 20th makes the
     * count 0xFFFFFFFF, so the runtime moves it to 16 and marks slot 15 invalid; 10 more take
     * counts 16..25 (slots 0..9). */
    uiProfileDataCnt = 0xFFFFFFFFu - 20;
    for (unsigned int i = 0; i < 30; i++)
        record(i);
    CHECK(uiProfileDataCnt == 26, "count %u after passing 0xFFFFFFFF", uiProfileDataCnt);
    for (unsigned int s = 0; s < 16; s++) {
        if (s == 15) {
            CHECK(ti_invalid(&ProfileData[s]) && ProfileData[s].TSCL == 0xFFFFFFFFu,
                  "slot 15 is not marked invalid");
            continue;
        }
        unsigned int i = s <= 9 ? 20 + s : s + 5; /* slots 10..14 hold records 15..19 */
        CHECK(ProfileData[s].address_type == expected(i), "slot %u: 0x%llx, want record %u",
              s, (unsigned long long)ProfileData[s].address_type, i);
    }

    /* Passing 2^32 itself (no stop on 0xFFFFFFFF): the count is moved up by the capacity, so
     * "count >= capacity: the whole buffer" still holds. */
    hook_init();
    uiProfileDataCnt = 0xFFFFFFFFu - 2; /* a switch takes ...FD and ...FE: lands on ...FF */
    task_switch_hook_circular((uintptr_t)&task_a, (uintptr_t)&task_b);
    CHECK(uiProfileDataCnt == 16, "count %u after a switch onto 0xFFFFFFFF", uiProfileDataCnt);
    CHECK(ProfileData[13].address_type == ((uintptr_t)&task_a | HOOK_TYPE_TASK_EXIT) &&
              ProfileData[14].address_type == ((uintptr_t)&task_b | HOOK_TYPE_TASK_ENTRY),
          "switch records in slots 13, 14");
    uiProfileDataCnt = 0xFFFFFFFFu - 1; /* a switch takes ...FE and ...FF: passes 2^32 */
    task_switch_hook_circular((uintptr_t)&task_b, (uintptr_t)&task_a);
    CHECK(uiProfileDataCnt == 16, "count %u after a switch past 2^32", uiProfileDataCnt);
    CHECK(ProfileData[14].address_type == ((uintptr_t)&task_b | HOOK_TYPE_TASK_EXIT) &&
              ProfileData[15].address_type == ((uintptr_t)&task_a | HOOK_TYPE_TASK_ENTRY),
          "switch records in slots 14, 15");
    ENTRY_C(f0);
    CHECK(uiProfileDataCnt == 17 && ProfileData[0].address_type == expected(0),
          "recording goes on: count %u", uiProfileDataCnt);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "wrap";
    ENTRY_C(f0);
    EXIT_C(f0);
    CHECK(uiProfileDataCnt == 0xFFFFFFFFu, "circular hooks recorded before hook_init");
    if (strcmp(mode, "pass") == 0)
        pass();
    else
        wrap();
    TI_ADDR(f0);
    TI_ADDR(f1);
    TI_ADDR(f2);
    TI_ADDR(f3);
    TI_ADDR(f4);
    return ti_finish();
}
