// Shared by pfp_functions_a.cpp and pfp_functions_b.cpp (tests/tests/pfp_functions.rs):
// shared() is an inline function both translation units compile; the linker keeps one copy,
// and --pfp-functions gives it one profile point.
#ifndef PFP_SHARED_H
#define PFP_SHARED_H

inline volatile unsigned pfp_sink;

inline void busy(int n)
{
    for (int i = 0; i < n; i++)
        pfp_sink = pfp_sink + static_cast<unsigned>(i);
}

inline void shared()
{
    busy(5000);
}

void from_b();

#endif
