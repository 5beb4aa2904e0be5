/* Hook placement (tests/tests/placement.rs): `square` is small and static, so clang inlines it
 * into `sum_of_squares` at -O2 and drops its body; `sum_of_squares` and `main` stay functions.
 * With the hooks placed after inlining, `square` records nothing and `sum_of_squares` has only
 * its own hooks; placed at the source, `square` is counted once per call, inlined or not. */
#include <stdio.h>
#include <stdlib.h>

static int square(int x) { return x * x; }

__attribute__((noinline)) int sum_of_squares(int n) {
    int sum = 0;
    for (int i = 0; i < n; i++)
        sum += square(i + n) % 1000;
    return sum;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 50;
    long total = 0;
    for (int r = 0; r < rounds; r++)
        total += sum_of_squares(r % 7 + 3);
    printf("%ld\n", total);
    return 0;
}
