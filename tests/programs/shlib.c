/* Built into a shared library with hookcc --trace -shared: lib_square 7, lib_helper 21. */
static int lib_helper(int x) { return x + 1; }

int lib_square(int x) { return lib_helper(x) * lib_helper(x) / lib_helper(x); }
