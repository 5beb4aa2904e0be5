/* TI hook options: the hooks print what they receive. Expected with
 * --entry_hook=on_entry --entry_parm=name --exit_hook=on_exit --exit_parm=name:
 *   enter main / enter helper / exit helper / exit main
 * skipped (NO_HOOKS), twice_inline (declared inline), attr (no_instrument_function) get none. */
#include <stdio.h>

void on_entry(const char *name) { printf("enter %s\n", name); }
void on_exit(const char *name) { printf("exit %s\n", name); }

#pragma NO_HOOKS(skipped)
int skipped(int x) { return x + 1; }

static inline int twice_inline(int x) { return x * 2; }

__attribute__((no_instrument_function)) int attr(int x) { return x - 1; }

_Pragma("NO_HOOKS(via_operator)")
int via_operator(int x) { return x; }

int helper(int x) { return skipped(x) + twice_inline(x) + attr(x) + via_operator(x); }

int main(void) {
    int r = helper(1);
    return r == 5 ? 0 : 1;
}
