/* Two functions whose names are not UTF-8 and differ only in a byte that is not (Latin-1
 * "café" and "cafè"): read as UTF-8, both are "caf\u{FFFD}" (issue 37 item 10). The first is
 * called 4 times, the second 2. */
static volatile int sink;
__attribute__((noinline)) void cafe_acute(int x) __asm__("caf\xe9");
__attribute__((noinline)) void cafe_grave(int x) __asm__("caf\xe8");
void cafe_acute(int x) { sink += x; }
void cafe_grave(int x) { sink -= x; }
int main(void)
{
    for (int i = 0; i < 4; i++)
        cafe_acute(i);
    for (int i = 0; i < 2; i++)
        cafe_grave(i);
    return 0;
}
