/* A function defined in a header, for -finstrument-functions-exclude-file-list=. */
static __attribute__((noinline)) int in_header(int x) { return x * 5; }
