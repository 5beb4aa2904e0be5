/* Calls lib_square (in libshlib.so) 7 times. */
#include <stdio.h>

int lib_square(int x);

int main(void) {
    int s = 0;
    for (int i = 0; i < 7; i++)
        s += lib_square(i);
    printf("%d\n", s);
    return 0;
}
