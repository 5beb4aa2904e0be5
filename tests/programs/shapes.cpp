// C++: methods, virtual calls, templates, overloads. Counts: Square::area 3, Circle::area 2,
// add<int> 4, add<double> 5, describe(int) 2, describe(double) 1, total(...) 1.
#include <cstdio>
#include <memory>
#include <vector>

struct Shape {
    virtual ~Shape() = default;
    virtual double area() const = 0;
};
struct Square : Shape {
    double side;
    explicit Square(double s) : side(s) {}
    double area() const override { return side * side; }
};
struct Circle : Shape {
    double r;
    explicit Circle(double r) : r(r) {}
    double area() const override { return 3.14159 * r * r; }
};

template <typename T> T add(T a, T b) { return a + b; }

int describe(int x) { return x + 1; }
int describe(double x) { return static_cast<int>(x) + 2; }

double total(const std::vector<std::unique_ptr<Shape>> &shapes) {
    double sum = 0;
    for (const auto &s : shapes)
        sum = add<double>(sum, 0) + s->area();
    return sum;
}

int main() {
    std::vector<std::unique_ptr<Shape>> shapes;
    shapes.emplace_back(new Square(1));
    shapes.emplace_back(new Circle(1));
    shapes.emplace_back(new Square(2));
    shapes.emplace_back(new Circle(2));
    shapes.emplace_back(new Square(3));
    int n = add<int>(1, 2) + add<int>(3, 4) + add<int>(5, 6) + add<int>(7, 8);
    n += describe(1) + describe(2) + describe(2.5);
    std::printf("%d %.2f\n", n, total(shapes));
    return 0;
}
