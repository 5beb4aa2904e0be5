/* exit(3) from three frames deep. The program's own atexit handler, registered after the
 * runtime's, runs first, so its hooks are in the file. `exit_nested quick`: quick_exit(3),
 * which runs no atexit handler; the runtime's at_quick_exit handler still finishes the file. */
#include "hk_test.h"

#include <stdlib.h>
#include <unistd.h>

HK_FUNCTION(a, 1)
HK_FUNCTION(b, 2)
HK_FUNCTION(c, 3)
HK_FUNCTION(handler_body, 4)

static void at_exit_handler(void)
{
    ENTER(handler_body);
    EXIT(handler_body);
}

int main(int argc, char **argv)
{
    atexit(at_exit_handler);
    ENTER(main);
    HK_VAR("pid", "%ld", (long)getpid());
    HK_VAR("addr.handler_body", "%p", (void *)handler_body);
    ENTER(a);
    ENTER(b);
    ENTER(c);
    if (argc > 1 && argv[1][0] == 'q')
        quick_exit(3); /* records: main, a, b, c entries; 4 frames open */
    exit(3); /* records: main, a, b, c entries + the handler's pair; 4 frames open */
}
