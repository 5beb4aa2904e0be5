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
 * Each linked file (the executable, every shared library built with `hookcc --trace`) has its
 * records in its own section: a constructor the pass adds to each module hands its file's range
 * to __hookcc_register_functions before main (or at dlopen), which keeps it (once, however many
 * modules ask) among HKRT_MAX_FN_RANGES ranges and gives the new switches what the names chose.
 *
 * Relies on nothing of the other parts: the first one. */

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

/* The linked files' ranges of records: the executable's (added at the first use) and those
 * registered. More files than this keep their switches on. */
#define HKRT_MAX_FN_RANGES 256
static struct hkrt_fn_range {
    struct hkrt_fn *start, *stop;
} g_fn_ranges[HKRT_MAX_FN_RANGES];
static unsigned g_fn_nranges;        /* read with acquire: entries below it are complete */
static int g_fn_lock;                /* a spin lock of its own: taken before the runtime starts */
static const char *g_functions_list; /* HOOKCC_FUNCTIONS, for files registered later */

/* Recording is on: the functions' switches follow their wants (1), or every switch is off (0). */
static int g_functions_recording = 1;

static HKRT_FN void hkrt_fn_lock(void)
{
    while (__atomic_exchange_n(&g_fn_lock, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

static HKRT_FN void hkrt_fn_unlock(void)
{
    __atomic_store_n(&g_fn_lock, 0, __ATOMIC_RELEASE);
}

/* Adds a range unless it is known (under g_fn_lock); returns whether it is new. */
static HKRT_FN int hkrt_fn_add_range(struct hkrt_fn *start, struct hkrt_fn *stop)
{
    if (start == NULL || stop <= start)
        return 0;
    unsigned n = __atomic_load_n(&g_fn_nranges, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++)
        if (g_fn_ranges[i].start == start)
            return 0;
    if (n == HKRT_MAX_FN_RANGES)
        return 0;
    g_fn_ranges[n].start = start;
    g_fn_ranges[n].stop = stop;
    __atomic_store_n(&g_fn_nranges, n + 1, __ATOMIC_RELEASE);
    return 1;
}

/* The number of ranges, the executable's added first (under g_fn_lock). */
static HKRT_FN unsigned hkrt_fn_ranges(void)
{
    hkrt_fn_add_range(__start_hookcc_fns, __stop_hookcc_fns);
    return __atomic_load_n(&g_fn_nranges, __ATOMIC_ACQUIRE);
}

static HKRT_FN int hkrt_fn_wanted(const struct hkrt_fn *f)
{
    return (f->flags & HKRT_FN_UNWANTED) == 0;
}

static HKRT_FN void hkrt_fn_apply(struct hkrt_fn *f)
{
    int recording = __atomic_load_n(&g_functions_recording, __ATOMIC_RELAXED);
    __atomic_store_n(&f->on, (uint8_t)(recording && hkrt_fn_wanted(f)), __ATOMIC_RELAXED);
}

/* Recording on or off, for every function's switch. Off is also what a fatal signal's finish
 * does, perhaps in a thread that the signal interrupted holding g_fn_lock: then it does not
 * wait for the lock (a deadlock), but clears the switches of the ranges published so far,
 * which are only ever appended to (their count stored last). */
static HKRT_FN void hkrt_functions_enable(int on)
{
    if (!on && __atomic_exchange_n(&g_fn_lock, 1, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&g_functions_recording, 0, __ATOMIC_RELAXED);
        unsigned n = __atomic_load_n(&g_fn_nranges, __ATOMIC_ACQUIRE);
        for (unsigned r = 0; r < n; r++)
            for (struct hkrt_fn *f = g_fn_ranges[r].start; f < g_fn_ranges[r].stop; f++)
                __atomic_store_n(&f->on, (uint8_t)0, __ATOMIC_RELAXED);
        return;
    }
    if (on)
        hkrt_fn_lock(); /* off: the exchange above took it */
    __atomic_store_n(&g_functions_recording, on != 0, __ATOMIC_RELAXED);
    for (unsigned r = 0, n = hkrt_fn_ranges(); r < n; r++)
        for (struct hkrt_fn *f = g_fn_ranges[r].start; f < g_fn_ranges[r].stop; f++)
            hkrt_fn_apply(f);
    hkrt_fn_unlock();
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

/* Whether the list chooses `f` (HOOKCC_FUNCTIONS, below); sets its flag and switch. */
static HKRT_FN int hkrt_fn_choose(struct hkrt_fn *f, const char *list)
{
    int any_positive = 0, any_negative = 0;
    int in = hkrt_fn_matches(f->name, list, 0, &any_positive);
    int out = hkrt_fn_matches(f->name, list, 1, &any_negative);
    int wanted = (in || !any_positive) && !out;
    f->flags = (uint8_t)(wanted ? f->flags & ~HKRT_FN_UNWANTED : f->flags | HKRT_FN_UNWANTED);
    hkrt_fn_apply(f);
    return wanted;
}

/* HOOKCC_FUNCTIONS: which functions are recorded, by name. A comma-separated list of globs;
 * one preceded by `!` leaves its functions out. A function is recorded when some glob without
 * `!` matches it (or the list has none) and no glob with `!` does:
 * `parse_*,!parse_space`. Kept for the files registered later. Sets *total to the functions
 * there are; returns the number it leaves out. */
static HKRT_FN uint64_t hkrt_functions_choose(const char *list, uint64_t *total)
{
    uint64_t left_out = 0;
    *total = 0;
    hkrt_fn_lock();
    g_functions_list = list;
    for (unsigned r = 0, n = hkrt_fn_ranges(); r < n; r++)
        for (struct hkrt_fn *f = g_fn_ranges[r].start; f < g_fn_ranges[r].stop; f++) {
            left_out += !hkrt_fn_choose(f, list);
            ++*total;
        }
    hkrt_fn_unlock();
    return left_out;
}

/* hookcc_trace_function: the functions whose name matches `glob`, wanted or not. Returns how
 * many matched. */
static HKRT_FN int hkrt_functions_set(const char *glob, int on)
{
    int n = 0;
    hkrt_fn_lock();
    for (unsigned r = 0, nr = hkrt_fn_ranges(); r < nr; r++)
        for (struct hkrt_fn *f = g_fn_ranges[r].start; f < g_fn_ranges[r].stop; f++) {
            if (fnmatch(glob, f->name, 0) != 0)
                continue;
            f->flags =
                (uint8_t)(on ? f->flags & ~HKRT_FN_UNWANTED : f->flags | HKRT_FN_UNWANTED);
            hkrt_fn_apply(f);
            n++;
        }
    hkrt_fn_unlock();
    return n;
}

/* A linked file's records, from the constructor the pass gives each module (every module of a
 * file names the same range: kept once). The file's switches take what HOOKCC_FUNCTIONS chose
 * and whether recording is on; functions named by hookcc_trace_function before the file was
 * loaded keep their default. Safe before the runtime starts: it takes only g_fn_lock. */
HKRT_EXPORT void __hookcc_register_functions(void *start, void *stop)
{
    struct hkrt_fn *from = start, *to = stop;
    hkrt_fn_lock();
    hkrt_fn_add_range(__start_hookcc_fns, __stop_hookcc_fns);
    if (hkrt_fn_add_range(from, to))
        for (struct hkrt_fn *f = from; f < to; f++) {
            if (g_functions_list != NULL)
                hkrt_fn_choose(f, g_functions_list);
            else
                hkrt_fn_apply(f);
        }
    hkrt_fn_unlock();
}
