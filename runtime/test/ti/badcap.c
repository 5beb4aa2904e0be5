/* A buffer defined by hand with a capacity that is not a power of two: hook_init warns and
 * uses the largest power of two below it (64 of 100). */
#include "ti_test.h"

Hook_Record ProfileData[100];
const unsigned int uiMaxProfileRecordNum = 100;

TI_FUNCTION(f, 1)

int main(void)
{
    hook_init();
    for (int i = 0; i < 50; i++) {
        ENTRY(f);
        EXIT(f);
    }
    CHECK(uiProfileDataCnt == 64, "count %u", uiProfileDataCnt);
    CHECK(hookcc_ti_dropped == 36, "dropped %lu", hookcc_ti_dropped);
    CHECK(ProfileData[64].address_type == 0 && ProfileData[99].address_type == 0,
          "records past the power of two were written");
    TI_ADDR(f);
    return ti_finish();
}
