// An exception unwinds through thrower and middle: their exit hooks must still run.
// Expected hooks (TI name hooks): main, middle, thrower enter; thrower, middle exit (unwinding);
// then middle, thrower enter and exit normally; main exit.
#include <cstdio>

extern "C" void on_entry(const char *name) { std::printf("enter %s\n", name); }
extern "C" void on_exit(const char *name) { std::printf("exit %s\n", name); }

struct Guard {
    ~Guard() { std::printf("guard\n"); }
};

void thrower(int x) {
    if (x)
        throw x;
}

int middle(int x) {
    Guard g; // a cleanup of its own: the exit hook goes before its resume
    thrower(x);
    return 1;
}

int main() {
    int caught = 0;
    try {
        middle(1);
    } catch (int) {
        caught = 1;
    }
    return caught && middle(0) == 1 ? 0 : 1;
}
