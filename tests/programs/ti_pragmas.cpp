// TI's C++ forms of the pragmas: each applies to the next declaration of its kind.
#include <cstdio>

extern "C" void on_entry(const char *name) { std::printf("enter %s\n", name); }

#pragma CODE_SECTION(".text:fast")
int fast(int x) { return x + 1; }

#pragma DATA_SECTION(".far:buffer")
int buffer[16] = {5};

#pragma NO_HOOKS;
int quiet(int x); // the pragma binds to this declaration, and so to its definition below

int loud(int x) { return quiet(x) + fast(x) + buffer[0]; }

int quiet(int x) { return x * 2; }

#pragma NO_HOOKS
int main() { return loud(1) == 9 ? 0 : 1; }
