/* --remove_hooks_when_inlining at -O2: `small` is inlined into main and loses its hooks there;
 * `kept` is inlined into main too but its out-of-line copy, called through a pointer, keeps
 * them; `opaque` is never inlined. Hooks count calls per function name. */
#include <stdio.h>
#include <string.h>

static int counts[3];
static const char *const names[3] = {"small", "kept", "opaque"};

void count_entry(const char *name) {
    for (int i = 0; i < 3; i++)
        if (strcmp(name, names[i]) == 0)
            counts[i]++;
}

static int small(int x) { return x + 1; }
int kept(int x) { return x * 2; }
__attribute__((noinline)) int opaque(int x) { return x - 1; }

int (*volatile pointer)(int) = kept;

int main(void) {
    int s = 0;
    for (int i = 0; i < 10; i++)
        s += small(i) + kept(i) + opaque(i);
    s += pointer(5);
    printf("small=%d kept=%d opaque=%d\n", counts[0], counts[1], counts[2]);
    return s == 0;
}
