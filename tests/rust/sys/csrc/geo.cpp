// C++ under a Rust program: hookprof names these `geo::square(int)` and `geo::Grid::cell(int,
// int) const`. geo_sum(n) calls square n times and cell n times.
namespace geo {

int square(int x)
{
    return x * x;
}

struct Grid {
    int width;
    int cell(int row, int column) const { return row * width + column; }
};

} // namespace geo

extern "C" int geo_sum(int n)
{
    geo::Grid grid{10};
    int sum = 0;
    for (int i = 1; i <= n; i++)
        sum += geo::square(i) + grid.cell(i, 1);
    return sum;
}
