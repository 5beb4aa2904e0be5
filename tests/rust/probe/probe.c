/* Run by build.rs at build time, as a configure test program is. */
static int answer(void) { return 42; }
int main(void) { return answer() == 42 ? 0 : 1; }
