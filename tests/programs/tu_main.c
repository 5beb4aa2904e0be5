/* Two translation units: util_add 10, util_scale 20 (static in tu_util.c), run 1, main 1. */
#include <stdio.h>

int util_add(int a, int b);

static int run(void) {
    int s = 0;
    for (int i = 0; i < 10; i++)
        s = util_add(s, i);
    return s;
}

int main(void) {
    printf("%d\n", run());
    return 0;
}
