/* Recursion as deep as its argument (default 30000): the stack views' worst case (issue 26). */
#include <stdio.h>
#include <stdlib.h>

int down(int n) {
    if (n == 0)
        return 0;
    return 1 + down(n - 1);
}

int main(int argc, char **argv) {
    int depth = argc > 1 ? atoi(argv[1]) : 30000;
    printf("%d\n", down(depth));
    return 0;
}
