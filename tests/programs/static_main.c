/* See static_one.c. With -DWITH_THREE, also three(), static_two.c built as TWO_NAME=three: it
 * calls its own helper 7 times. */
int one(int), two(int);
#ifdef WITH_THREE
int three(int);
#endif
int main(void)
{
    int s = one(3) + two(5);
#ifdef WITH_THREE
    s += three(7);
#endif
    return s == 0;
}
