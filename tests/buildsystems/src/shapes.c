/* A shared library of the build-system tests (tests/tests/buildsystems.rs). */
#include "shapes.h"

static int square(int x)
{
    return x * x;
}

int shapes_area(int side)
{
    return square(side);
}

int shapes_total(int n)
{
    int total = 0;
    for (int i = 1; i <= n; i++)
        total += shapes_area(i);
    return total;
}
