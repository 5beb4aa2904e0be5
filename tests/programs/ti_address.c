/* --entry_parm=address / --exit_parm=address with one function as both hooks:
 * prints "E <name>" / "X <name>" by comparing the address with the known functions. */
#include <stdio.h>

int work(int x);
int main(void);

/* Hooks must not call functions that have hooks (TI's rule): exclude the helper. */
#pragma NO_HOOKS(name_of)
static const char *name_of(void (*addr)()) {
    if (addr == (void (*)())work) return "work";
    if (addr == (void (*)())main) return "main";
    return "?";
}

static int depth;

void both(void (*addr)()) {
    /* The same hook serves entry and exit: entries and exits alternate by nesting. */
    static void (*stack[16])();
    if (depth > 0 && stack[depth - 1] == addr) {
        depth--;
        printf("X %s\n", name_of(addr));
    } else {
        stack[depth++] = addr;
        printf("E %s\n", name_of(addr));
    }
}

int work(int x) { return x * 3; }

int main(void) { return work(2) == 6 ? 0 : 1; }
