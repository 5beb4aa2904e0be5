/* Replacing the timestamp source: the program's hookcc_ti_timestamp (picked up through the
 * runtime's weak reference), hookcc_ti_set_timestamp, back to the program's with NULL, errno
 * kept across a timestamp function that changes it, and a timestamp function that has hooks
 * itself (against the rule) neither recursing nor recording its own hooks. */
#include <errno.h>

#include "ti_test.h"

TI_FUNCTION(f, 1)

static uint64_t program_clock = 0xFFFFFFFEull; /* crosses into TSCH after two reads */

HOOKCC_TI_NOHOOKS uint64_t hookcc_ti_timestamp(void)
{
    errno = 77; /* the hooks must hide this from the program */
    return program_clock++;
}

static uint64_t other_clock = 0xABCD00000000ull;

HOOKCC_TI_NOHOOKS static uint64_t other_timestamp(void)
{
    return other_clock += 0x10;
}

/* A timestamp function with hooks in it, as if compiled with --entry_hook and no NO_HOOKS. */
static uint64_t hooked_calls;

static uint64_t hooked_timestamp(void)
{
    ENTRY((void (*)(void))(uintptr_t)hooked_timestamp);
    hooked_calls++;
    EXIT((void (*)(void))(uintptr_t)hooked_timestamp);
    return 0x500000000ull + hooked_calls;
}

static void check(unsigned int slot, Hook_Record_Type type, uint64_t time)
{
    const Hook_Record *r = &ProfileData[slot];
    CHECK(r->address_type == ti_at(f, type), "record %u: 0x%llx", slot,
          (unsigned long long)r->address_type);
    CHECK(ti_time(r) == time, "record %u: time 0x%llx, expected 0x%llx", slot,
          (unsigned long long)ti_time(r), (unsigned long long)time);
}

int main(void)
{
    hook_init();
    errno = 5;
    for (int i = 0; i < 3; i++) {
        ENTRY(f);
        EXIT(f);
    }
    CHECK(errno == 5, "errno %d after hooks with a timestamp function setting it", errno);
    for (unsigned int i = 0; i < 6; i++)
        check(i, i % 2 ? HOOK_TYPE_FUNC_EXIT : HOOK_TYPE_FUNC_ENTRY, 0xFFFFFFFEull + i);

    hookcc_ti_set_timestamp(other_timestamp);
    ENTRY(f);
    EXIT(f);
    check(6, HOOK_TYPE_FUNC_ENTRY, 0xABCD00000010ull);
    check(7, HOOK_TYPE_FUNC_EXIT, 0xABCD00000020ull);

    hookcc_ti_set_timestamp(NULL); /* back to the program's */
    ENTRY(f);
    check(8, HOOK_TYPE_FUNC_ENTRY, 0xFFFFFFFEull + 6);

    hookcc_ti_set_timestamp(hooked_timestamp);
    ENTRY(f);
    EXIT(f);
    CHECK(hooked_calls == 2, "hooked timestamp function called %llu times",
          (unsigned long long)hooked_calls);
    check(9, HOOK_TYPE_FUNC_ENTRY, 0x500000001ull);
    check(10, HOOK_TYPE_FUNC_EXIT, 0x500000002ull);
    CHECK(uiProfileDataCnt == 11, "count %u: the timestamp function's own hooks were recorded",
          uiProfileDataCnt);

    /* hook_init keeps a timestamp function set at run time */
    hook_init();
    ENTRY(f);
    check(0, HOOK_TYPE_FUNC_ENTRY, 0x500000003ull);
    hookcc_ti_set_timestamp(NULL);
    TI_ADDR(f);
    return ti_finish();
}
