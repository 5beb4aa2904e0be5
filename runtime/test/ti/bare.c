/* The runtime built as for bare metal (-DHOOKCC_BARE_METAL) but run natively: there is no
 * default buffer (the program defines one, here in a named section as the seed's DATA_SECTION
 * pragma does), hooks record as usual, and nothing is written at exit: a debugger dumps. */
#include "ti_test.h"

__attribute__((section(".ti_profile"))) HOOKCC_TI_PROFILE_BUFFER(32);

TI_FUNCTION(f, 1)

#if !defined(__x86_64__) && !defined(__i386__) && !defined(__aarch64__)
/* No counter the runtime knows in a bare-metal build for this target: the program's. */
static uint64_t ticks;
HOOKCC_TI_NOHOOKS uint64_t hookcc_ti_timestamp(void)
{
    return ++ticks;
}
#endif

int main(void)
{
    hook_init();
    for (int i = 0; i < 20; i++) {
        ENTRY(f);
        EXIT(f);
    }
    CHECK(uiProfileDataCnt == 32 && hookcc_ti_dropped == 8, "count %u, dropped %lu",
          uiProfileDataCnt, hookcc_ti_dropped);
    CHECK(hookcc_ti_dump() == -1, "hookcc_ti_dump wrote files in a bare-metal build");
    return ti_finish();
}
