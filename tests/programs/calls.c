/* Call counts known by construction: recursion, function pointers, a static function.
 * leaf: 100, apply: 50, twice: 25, negate: 25, fib: 1973 (fib(15) makes 2*fib(16)-1 calls),
 * main: 1. */
#include <stdio.h>

static int leaf(int x) { return x * 3 + 1; }

int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

typedef int (*op_t)(int);
int twice(int x) { return 2 * x; }
int negate(int x) { return -x; }
int apply(op_t op, int x) { return op(x); }

int main(void) {
    volatile int n = 15;
    long total = 0;
    for (int i = 0; i < 100; i++)
        total += leaf(i);
    op_t ops[2] = {twice, negate};
    for (int i = 0; i < 50; i++)
        total += apply(ops[i % 2], i);
    total += fib(n);
    printf("%ld\n", total);
    return 0;
}
