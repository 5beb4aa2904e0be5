/* Calls of every shape the PACKED encoding predicts or escapes: three threads, recursion 700
 * deep (past the encoder's 256-frame ring), mutual recursion, 64 distinct small functions
 * through a table of pointers, and a longjmp out of 5 frames (a resync). Prints a checksum. */
#define _GNU_SOURCE
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>

static __thread unsigned long acc;

#define LEAF(n) void leaf##n(unsigned long x) { acc += x * (n + 1); }
#define LEAVES8(b) LEAF(b##0) LEAF(b##1) LEAF(b##2) LEAF(b##3) LEAF(b##4) LEAF(b##5) LEAF(b##6) LEAF(b##7)
LEAVES8(1) LEAVES8(2) LEAVES8(3) LEAVES8(4) LEAVES8(5) LEAVES8(6) LEAVES8(7) LEAVES8(8)
#define REF8(b) leaf##b##0, leaf##b##1, leaf##b##2, leaf##b##3, leaf##b##4, leaf##b##5, leaf##b##6, leaf##b##7
static void (*const leaves[64])(unsigned long) = {REF8(1), REF8(2), REF8(3), REF8(4),
                                                  REF8(5), REF8(6), REF8(7), REF8(8)};

unsigned long deep(unsigned long n) { return n == 0 ? 1 : deep(n - 1) + 1; }
unsigned long odd(unsigned long n);
unsigned long even(unsigned long n) { return n == 0 ? 1 : odd(n - 1); }
unsigned long odd(unsigned long n) { return n == 0 ? 0 : even(n - 1); }

static jmp_buf where;
void thrower(int n) { if (n == 0) longjmp(where, 1); thrower(n - 1); }
void catcher(void) { if (setjmp(where) == 0) thrower(4); }

void *worker(void *arg) {
    unsigned long k = (unsigned long)arg;
    for (unsigned long i = 0; i < 2000 * k; i++)
        leaves[(i * 7 + k) % 64](i);
    acc += deep(700) + even(300);
    return (void *)acc;
}

int main(void) {
    pthread_t t[3];
    unsigned long sum = 0;
    for (unsigned long k = 1; k <= 3; k++)
        pthread_create(&t[k - 1], NULL, worker, (void *)k);
    for (int k = 0; k < 3; k++) {
        void *r;
        pthread_join(t[k], &r);
        sum += (unsigned long)r;
    }
    catcher();
    printf("%lu\n", sum + (unsigned long)worker((void *)4));
    return 0;
}
