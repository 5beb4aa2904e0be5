/* Empty -finstrument-functions hooks, compiled on their own (without -finstrument-functions) and
 * linked beside the program, so that the compiler cannot inline them: what a variant using them
 * costs is the two calls alone, the floor of any out-of-line hook pair. */
void __cyg_profile_func_enter(void *fn, void *call_site) __attribute__((no_instrument_function));
void __cyg_profile_func_exit(void *fn, void *call_site) __attribute__((no_instrument_function));

void __cyg_profile_func_enter(void *fn, void *call_site)
{
    (void)fn;
    (void)call_site;
}

void __cyg_profile_func_exit(void *fn, void *call_site)
{
    (void)fn;
    (void)call_site;
}
