/* trace.c, part 1 of 19: per-function switches.
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

/* One function's record, as the pass lays it out (8-byte aligned; no padding on any target:
 * two pointers, then 1 + 1 + 2 + 4 bytes, then 8). The hooks are passed its address (+ 2 for
 * an exit), not the function's: a trace's records name functions by their records. */
struct hkrt_fn {
    const char *name; /* the function's name as people write it: a C symbol, a demangled C++
                         name, a Rust path */
    const void *function; /* its address */
    volatile uint8_t on;  /* read once at the function's entry: HKRT_ON_* */
    uint8_t flags;        /* HKRT_FN_* */
    uint16_t reserved;
    /* the function's address less this field's: a link-time constant, from which hookprof
     * finds the function of a record in the ELF file (docs/trace-format.md, "Functions'
     * records") */
    int32_t function_offset;
    /* calls while `on` was HKRT_ON_COUNT (__hookcc_count's atomic add); 8-aligned on every
     * target, as the pass aligns each record (i686 would give it 4) */
    uint64_t count __attribute__((aligned(8)));
};

/* on: the call's entry and exit are recorded; or only counted in `count` (the function is
 * throttled: "Throttling" below); or neither (off). An exit tests the value its entry read, so
 * a switch never leaves half a call in the trace. */
#define HKRT_ON_OFF 0u
#define HKRT_ON_RECORD 1u
#define HKRT_ON_COUNT 2u

/* flags: the function is not wanted (HOOKCC_FUNCTIONS, hookcc_trace_function); it is
 * throttled. `on` follows from them while recording is on, and is HKRT_ON_OFF while it is off. */
#define HKRT_FN_UNWANTED 1u
#define HKRT_FN_THROTTLED 2u

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
    uint8_t on = HKRT_ON_OFF;
    if (recording && hkrt_fn_wanted(f))
        on = (f->flags & HKRT_FN_THROTTLED) != 0 ? HKRT_ON_COUNT : HKRT_ON_RECORD;
    __atomic_store_n(&f->on, on, __ATOMIC_RELAXED);
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
                __atomic_store_n(&f->on, (uint8_t)HKRT_ON_OFF, __ATOMIC_RELAXED);
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

/* What the hooks of the function at `function` pass, its record's address: for a trigger
 * given by the function's address (hookcc_trace_trigger, HOOKCC_TRACE_START, a debugger). The
 * address itself where no registered file has a record of it (never in a record, then, as
 * before). Under g_fn_lock (a file dlclose unloads leaves the ranges there); 0 at once if it
 * is taken (the caller may be finishing in a signal handler that interrupted its holder). */
static HKRT_FN uint64_t hkrt_fn_record_of(uint64_t function)
{
    if (__atomic_exchange_n(&g_fn_lock, 1, __ATOMIC_ACQUIRE))
        return 0;
    uint64_t record = function;
    for (unsigned r = 0, n = g_fn_nranges; r < n && record == function; r++)
        for (const struct hkrt_fn *f = g_fn_ranges[r].start; f < g_fn_ranges[r].stop; f++)
            if ((uint64_t)(uintptr_t)f->function == function) {
                record = (uint64_t)(uintptr_t)f;
                break;
            }
    hkrt_fn_unlock();
    return record;
}

/* Files that dlclose unloaded so far (fork.h, "dlclose"): while 0, every record a thread's
 * cache of counts names is there. */
static unsigned g_fn_unloads;

/* Whether `f` is a record of a file still loaded (every one, until a dlclose unloads one: the
 * ranges are then searched, without g_fn_lock: only a dlclose in progress changes them). */
static HKRT_FN int hkrt_fn_live(const struct hkrt_fn *f)
{
    if (__atomic_load_n(&g_fn_unloads, __ATOMIC_ACQUIRE) == 0)
        return 1;
    for (unsigned r = 0, n = __atomic_load_n(&g_fn_nranges, __ATOMIC_ACQUIRE); r < n; r++)
        if (g_fn_ranges[r].start <= f && f < g_fn_ranges[r].stop)
            return 1;
    return 0;
}

/* ---------------------------------------------------------------------------------------- */
/* Throttling                                                                               */

/* A function whose calls last too little for the hooks to time them (TAU's throttle, done at
 * run time): once it has HKRT_THROTTLE_CALLS timed calls whose mean, from entry record to exit
 * record, is below HKRT_THROTTLE_FACTOR times what a hook pair costs (the OVERHEAD chunk's
 * measure), its switch goes to HKRT_ON_COUNT: its later calls leave no records, and are
 * counted in its record's `count` (an atomic add, at the cost of the off path and the add),
 * which the THROTTLE chunk carries at the end. Its time then falls to its caller, as an
 * inlined function's does. Measured where the writer packs the records (hkt_pack's per-chunk
 * statistics, of calls whose entry and exit are in one chunk), so the traced threads pay
 * nothing for it. HOOKCC_THROTTLE=0 keeps every record; HOOKCC_THROTTLE=CALLS,FACTOR sets both
 * (docs/recording.md, "Throttling", says how the defaults were chosen). */
#define HKRT_THROTTLE_CALLS 1000u
#define HKRT_THROTTLE_FACTOR 3u

struct hkrt_throttle_entry {
    uintptr_t address;
    struct hkrt_fn *fn;
    uint64_t calls, ticks; /* timed calls seen by the writer, and their time */
    uint64_t timed;        /* calls seen when it was throttled (0: not throttled) */
    uint64_t at;           /* the tick it was throttled at */
    uint64_t counted;      /* its record's count before a dlclose (hkrt_throttle_snapshot) */
};

/* Every registered function by its record's address, which is what the hooks pass (sorted;
 * rebuilt under g_fn_lock when a file registers), and the throttle's settings (0 calls: off). */
static struct hkrt_throttle_entry *g_throttle;
static size_t g_throttle_len;
static unsigned g_throttle_ranges; /* the ranges it holds */
static uint64_t g_throttle_calls = HKRT_THROTTLE_CALLS, g_throttle_factor = HKRT_THROTTLE_FACTOR;

/* The first entry of `address` in table[0..len), or NULL. */
static HKRT_FN struct hkrt_throttle_entry *
hkrt_throttle_find(struct hkrt_throttle_entry *table, size_t len, uintptr_t address)
{
    size_t lo = 0, hi = len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (table[mid].address < address)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < len && table[lo].address == address ? &table[lo] : NULL;
}

static HKRT_FN int hkrt_throttle_order(const void *a, const void *b)
{
    uintptr_t x = ((const struct hkrt_throttle_entry *)a)->address;
    uintptr_t y = ((const struct hkrt_throttle_entry *)b)->address;
    return x < y ? -1 : x > y;
}

/* Rebuilds the table with every range's functions, keeping what was measured (under
 * g_fn_lock). Without memory, the table stays as it was: those functions are never
 * throttled. */
static HKRT_FN void hkrt_throttle_index(void)
{
    size_t n = 0;
    unsigned nr = __atomic_load_n(&g_fn_nranges, __ATOMIC_ACQUIRE);
    for (unsigned r = 0; r < nr; r++)
        n += (size_t)(g_fn_ranges[r].stop - g_fn_ranges[r].start);
    struct hkrt_throttle_entry *table = calloc(n ? n : 1, sizeof *table);
    if (table == NULL)
        return;
    size_t len = 0;
    for (unsigned r = 0; r < nr; r++)
        for (struct hkrt_fn *f = g_fn_ranges[r].start; f < g_fn_ranges[r].stop; f++) {
            table[len].address = (uintptr_t)f;
            table[len].fn = f;
            for (struct hkrt_throttle_entry *e =
                     hkrt_throttle_find(g_throttle, g_throttle_len, table[len].address);
                 e != NULL && e < g_throttle + g_throttle_len && e->address == table[len].address;
                 e++)
                if (e->fn == f)
                    table[len] = *e;
            len++;
        }
    qsort(table, len, sizeof *table, hkrt_throttle_order);
    struct hkrt_throttle_entry *old = g_throttle;
    g_throttle = table;
    g_throttle_len = len;
    g_throttle_ranges = nr;
    free(old);
}

/* Throttling ends (under g_fn_lock): trigger windows were set, and a count cannot tell the calls
 * inside a window from those outside. The throttled functions are recorded again; what they
 * counted so far (when every call was in the trace) stays theirs. */
static HKRT_FN void hkrt_throttle_end_locked(void)
{
    g_throttle_calls = 0;
    for (size_t i = 0; i < g_throttle_len; i++)
        if (g_throttle[i].fn->flags & HKRT_FN_THROTTLED) {
            g_throttle[i].fn->flags &= (uint8_t)~HKRT_FN_THROTTLED;
            hkrt_fn_apply(g_throttle[i].fn);
        }
}

static HKRT_FN void hkrt_throttle_end(void)
{
    hkrt_fn_lock();
    hkrt_throttle_end_locked();
    hkrt_fn_unlock();
}

/* Adds a packed chunk's statistics (hkt_pack's calls and ticks of each table address) and
 * throttles the functions that now qualify; `pair_ticks` is a hook pair's cost (0: not
 * measured, nothing is throttled), `now` the chunk's last tick. Does nothing if g_fn_lock is
 * taken (a file registering): the chunk's calls are then not counted towards the throttle. */
static HKRT_FN void hkrt_throttle_add(const uint64_t *addresses, const uint32_t *calls,
                                      const uint64_t *ticks, uint32_t len, uint64_t pair_ticks,
                                      uint64_t now)
{
    if (g_throttle_calls == 0 || pair_ticks == 0 ||
        __atomic_exchange_n(&g_fn_lock, 1, __ATOMIC_ACQUIRE))
        return;
    if (hkrt_fn_ranges() != g_throttle_ranges)
        hkrt_throttle_index();
    if (__atomic_load_n(&hookcc_trace_triggers.n_start, __ATOMIC_ACQUIRE) != 0) {
        /* A debugger wrote the trigger table (hookcc_trace_trigger ends it at once). */
        hkrt_throttle_end_locked();
        len = 0;
    }
    for (uint32_t i = 0; i < len; i++) {
        if (calls[i] == 0)
            continue;
        for (struct hkrt_throttle_entry *e =
                 hkrt_throttle_find(g_throttle, g_throttle_len, (uintptr_t)addresses[i]);
             e != NULL && e < g_throttle + g_throttle_len && e->address == addresses[i]; e++) {
            if (e->timed != 0)
                continue;
            e->calls += calls[i];
            e->ticks += ticks[i];
            if (e->calls >= g_throttle_calls &&
                e->ticks / e->calls < g_throttle_factor * pair_ticks) {
                e->timed = e->calls;
                e->at = now;
                e->fn->flags |= HKRT_FN_THROTTLED;
                hkrt_fn_apply(e->fn);
            }
        }
    }
    hkrt_fn_unlock();
}

/* Before a dlclose: what each throttled function counted so far, into its entry, from its
 * record, which the unload may take away (hkrt_fn_forget, after it). */
static HKRT_FN void hkrt_throttle_snapshot(void)
{
    hkrt_fn_lock();
    for (size_t i = 0; i < g_throttle_len; i++)
        if (g_throttle[i].timed != 0)
            g_throttle[i].counted = __atomic_load_n(&g_throttle[i].fn->count, __ATOMIC_RELAXED);
    hkrt_fn_unlock();
}

/* A file dlclose unloaded (fork.h, "dlclose"): its ranges of records, those that start in
 * [lo, hi) (its module's addresses), are forgotten, and the throttle's table is rebuilt
 * without their functions, so that nothing reads or writes a record that is gone. Switching
 * tracing off at the end wrote every record's `on`, the unloaded file's too: the program died
 * of SIGSEGV in exit() and its trace was lost. A file loaded later at the same addresses then
 * registers as a new one. */
static HKRT_FN void hkrt_fn_forget(uint64_t lo, uint64_t hi)
{
    hkrt_fn_lock();
    unsigned n = g_fn_nranges, kept = 0;
    for (unsigned r = 0; r < n; r++) {
        uint64_t start = (uint64_t)(uintptr_t)g_fn_ranges[r].start;
        if (start < lo || start >= hi)
            g_fn_ranges[kept++] = g_fn_ranges[r];
    }
    if (kept != n) {
        __atomic_fetch_add(&g_fn_unloads, 1, __ATOMIC_RELEASE);
        __atomic_store_n(&g_fn_nranges, kept, __ATOMIC_RELEASE);
        hkrt_throttle_index();
    }
    hkrt_fn_unlock();
}

/* The throttled functions' counts start over: in a fork child (the counts so far are the
 * parent's), and in a new file after a failed exec (they are the earlier file's). */
static HKRT_FN void hkrt_throttle_counts_reset(void)
{
    for (size_t i = 0; i < g_throttle_len; i++)
        __atomic_store_n(&g_throttle[i].fn->count, 0, __ATOMIC_RELAXED);
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
    if (hkrt_fn_add_range(from, to)) {
        for (struct hkrt_fn *f = from; f < to; f++) {
            if (g_functions_list != NULL)
                hkrt_fn_choose(f, g_functions_list);
            else
                hkrt_fn_apply(f);
        }
    }
    if (hkrt_fn_ranges() != g_throttle_ranges)
        hkrt_throttle_index(); /* the writer finds the files' functions by address */
    hkrt_fn_unlock();
}
