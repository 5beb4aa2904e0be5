// In C++ the hooks are extern "C": this definition, written without extern "C", gets C linkage
// from the implicit declaration, so the C-named calls the compiler inserts find it.
#include <cstdio>

void trace_hook(const char *name) { std::printf("hook %s\n", name); }

namespace app {
int add(int a, int b) { return a + b; }
}

int main() { return app::add(1, 2) == 3 ? 0 : 1; }
