/* trace.c, part 1 of 16: per-function switches.
 *
 * `hookcc --trace` gives every instrumented function a record in the section `hookcc_fns`
 * (pass/src/instrument.rs, function_switch) and tests its `on` byte before each of the
 * function's hook calls: a function switched off costs a load and a branch not taken at entry
 * and at exit, and never reaches the runtime. Here: the records of the executable (the linker's
 * __start_/__stop_ symbols), switched by name at start (HOOKCC_FUNCTIONS), while the program
 * runs (hookcc_trace_function), and all of them with recording (HOOKCC_DISABLE,
 * hookcc_trace_disable/enable, the end of the trace: hkrt_functions_enable).
 *
 * Written only under the process lock (or before threads exist); read by the hooks' callers
 * with a plain volatile load: a switch that changes while a thread is inside a function shows
 * in the reader as an unmatched entry or exit, as a disable always has.
 *
 * Relies on nothing of the other parts: the first one. The functions of shared libraries have
 * records in their own sections, which the executable's runtime does not see: they stay on,
 * and their hooks reach the runtime's slow path while recording is off, as before. */

/* One function's record, as the pass lays it out (no padding on any target: a pointer, then
 * 1 + 1 + 2 + 4 bytes). */
struct hkrt_fn {
    const char *name; /* the function's name as people write it: a C symbol, a demangled C++
                         name, a Rust path */
    volatile uint8_t on; /* tested before every hook call of the function: 0 skips them */
    uint8_t flags;       /* HKRT_FN_* */
    uint16_t reserved;
    uint32_t id;
};

/* flags: the function is wanted (HOOKCC_FUNCTIONS, hookcc_trace_function); `on` is this bit
 * while recording is on, and 0 while it is off. */
#define HKRT_FN_UNWANTED 1u

extern struct hkrt_fn __start_hookcc_fns[] __attribute__((weak, visibility("hidden")));
extern struct hkrt_fn __stop_hookcc_fns[] __attribute__((weak, visibility("hidden")));

/* Recording is on: the functions' switches follow their wants (1), or every switch is off (0). */
static int g_functions_recording = 1;

static HKRT_FN int hkrt_fn_wanted(const struct hkrt_fn *f)
{
    return (f->flags & HKRT_FN_UNWANTED) == 0;
}

static HKRT_FN void hkrt_fn_apply(struct hkrt_fn *f)
{
    __atomic_store_n(&f->on, (uint8_t)(g_functions_recording && hkrt_fn_wanted(f)),
                     __ATOMIC_RELAXED);
}

/* Recording on or off, for every function's switch. */
static HKRT_FN void hkrt_functions_enable(int on)
{
    g_functions_recording = on != 0;
    for (struct hkrt_fn *f = __start_hookcc_fns; f != NULL && f < __stop_hookcc_fns; f++)
        hkrt_fn_apply(f);
}

/* Whether `name` matches one of the comma-separated globs of `list` that are (`negated` 1) or
 * are not (0) preceded by `!`; *any is set when the list has a glob of that kind. */
static HKRT_FN int hkrt_fn_matches(const char *name, const char *list, int negated, int *any)
{
    char glob[512];
    int matched = 0;
    while (*list != '\0') {
        size_t len = strcspn(list, ",");
        const char *g = list;
        size_t n = len;
        int neg = n > 0 && g[0] == '!';
        if (neg) {
            g++;
            n--;
        }
        if (neg == negated && n > 0 && n < sizeof glob) {
            memcpy(glob, g, n);
            glob[n] = '\0';
            *any = 1;
            if (fnmatch(glob, name, 0) == 0)
                matched = 1;
        }
        list += len;
        if (*list == ',')
            list++;
    }
    return matched;
}

/* HOOKCC_FUNCTIONS: which functions are recorded, by name. A comma-separated list of globs;
 * one preceded by `!` leaves its functions out. A function is recorded when some glob without
 * `!` matches it (or the list has none) and no glob with `!` does:
 * `parse_*,!parse_space`. Returns the number of functions it leaves out. */
static HKRT_FN uint64_t hkrt_functions_choose(const char *list)
{
    uint64_t left_out = 0;
    for (struct hkrt_fn *f = __start_hookcc_fns; f != NULL && f < __stop_hookcc_fns; f++) {
        int any_positive = 0, any_negative = 0;
        int in = hkrt_fn_matches(f->name, list, 0, &any_positive);
        int out = hkrt_fn_matches(f->name, list, 1, &any_negative);
        int wanted = (in || !any_positive) && !out;
        f->flags = (uint8_t)(wanted ? f->flags & ~HKRT_FN_UNWANTED : f->flags | HKRT_FN_UNWANTED);
        left_out += !wanted;
        hkrt_fn_apply(f);
    }
    return left_out;
}

/* hookcc_trace_function: the functions whose name matches `glob`, wanted or not. Returns how
 * many matched. */
static HKRT_FN int hkrt_functions_set(const char *glob, int on)
{
    int n = 0;
    for (struct hkrt_fn *f = __start_hookcc_fns; f != NULL && f < __stop_hookcc_fns; f++) {
        if (fnmatch(glob, f->name, 0) != 0)
            continue;
        f->flags = (uint8_t)(on ? f->flags & ~HKRT_FN_UNWANTED : f->flags | HKRT_FN_UNWANTED);
        hkrt_fn_apply(f);
        n++;
    }
    return n;
}
