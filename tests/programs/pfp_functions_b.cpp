// The second translation unit of tests/tests/pfp_functions.rs: calls the inline shared() twice.
#include "pfp_shared.h"

void from_b()
{
    shared();
    shared();
}
