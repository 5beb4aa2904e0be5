// The executable of the build-system tests: C++ over the C shared library. Counts by
// construction: main 1, Report::print 1, scaled ×3, shapes_total 1, shapes_area 10 + 3,
// square 13. Prints 385 (1² + … + 10²) and 14 (1 + 4 + 9).
#include <cstdio>

#include "shapes.h"

namespace {

int scaled(int side)
{
    return shapes_area(side);
}

struct Report {
    void print(int total, int small) const { std::printf("%d %d\n", total, small); }
};

} // namespace

int main()
{
    int small = 0;
    for (int i = 1; i <= 3; i++)
        small += scaled(i);
    Report().print(shapes_total(10), small);
    return 0;
}
