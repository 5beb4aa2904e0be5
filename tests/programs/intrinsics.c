/* Intrinsics from the compiler's own headers and an always_inline function: no hooks unless
   --hook-intrinsics (issue 26). Prints 2016 with or without AVX2. */
#include <immintrin.h>
#include <stdio.h>
static inline __attribute__((always_inline)) int twice(int x) { return 2 * x; }
__attribute__((target("avx2"))) int sum(const int *a, int n) {
    __m256i acc = _mm256_setzero_si256();
    for (int i = 0; i + 8 <= n; i += 8)
        acc = _mm256_add_epi32(acc, _mm256_loadu_si256((const __m256i *)(a + i)));
    int out[8];
    _mm256_storeu_si256((__m256i *)out, acc);
    int s = 0;
    for (int i = 0; i < 8; ++i) s += out[i];
    return twice(s) / 2;
}
int main(void) {
    int a[64];
    for (int i = 0; i < 64; ++i) a[i] = i;
    printf("%d\n", __builtin_cpu_supports("avx2") ? sum(a, 64) : 2016);
    return 0;
}
