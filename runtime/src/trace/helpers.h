/* trace.c, part 4 of 19: helpers.
 *
 * Small helpers with no stdio (usable after fork and in signal handlers): the tid, decimal
 * formatting, parsing numbers, durations and sizes (for the options), counting lost records; and
 * the process lock (slow paths only), a spinlock that knows its owner.
 *
 * Relies on state.h.
 * Included only by trace.c, at its place in the order there: not a header of its own. */

/* ---------------------------------------------------------------------------------------- */
/* Small helpers (no stdio: usable after fork and in signal handlers)                        */

static HKRT_FN uint64_t hkrt_gettid(void)
{
    return (uint64_t)syscall(SYS_gettid);
}

static HKRT_FN size_t hkrt_u64_to_dec(uint64_t v, char *out)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (size_t i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    out[n] = '\0';
    return n;
}

/* hkrt_append, hkrt_warn, hkrt_warn_hint, hkrt_getenv: message.h */


/* Parses a decimal u64; 0 on garbage or overflow. */
static HKRT_FN int hkrt_parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (*s == '\0')
        return 0;
    for (; *s != '\0'; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        uint64_t d = (uint64_t)(*s - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

/* The decimal number s starts with, in *v; returns what follows it, or NULL if there is none
 * or it overflows. */
static HKRT_FN const char *hkrt_parse_leading_u64(const char *s, uint64_t *v)
{
    char digits[32];
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9' && n < sizeof digits - 1) {
        digits[n] = s[n];
        n++;
    }
    digits[n] = '\0';
    return hkrt_parse_u64(digits, v) ? s + n : NULL;
}

/* Parses a duration as hookprof's options take it (hookprof/src/analysis/view.rs,
 * parse_duration): a decimal number with a fraction or not, followed by its unit, ns, us (or
 * µs), ms or s ("5us", "1.5ms"); "0" alone needs none. Returns 1 on success, 0 on garbage or
 * overflow, and -1 for a bare number other than 0 (a unit is missing: the caller says so). */
static HKRT_FN int hkrt_parse_duration(const char *s, uint64_t *ns)
{
    uint64_t v, unit, frac = 0, frac_scale = 1;
    const char *u = hkrt_parse_leading_u64(s, &v);
    if (u == NULL || u == s)
        return 0;
    if (*u == '.') {
        u++;
        if (*u < '0' || *u > '9')
            return 0;
        for (; *u >= '0' && *u <= '9'; u++)
            if (frac_scale < 1000000000) { /* digits beyond a nanosecond of 1s are dropped */
                frac = frac * 10 + (uint64_t)(*u - '0');
                frac_scale *= 10;
            }
    }
    if (*u == '\0') {
        if (v == 0 && frac == 0) {
            *ns = 0;
            return 1;
        }
        return -1;
    }
    if (strcmp(u, "ns") == 0)
        unit = 1;
    else if (strcmp(u, "us") == 0 || strcmp(u, "\xc2\xb5s") == 0)
        unit = 1000;
    else if (strcmp(u, "ms") == 0)
        unit = 1000000;
    else if (strcmp(u, "s") == 0)
        unit = 1000000000;
    else
        return 0;
    if (v > UINT64_MAX / unit || v * unit > UINT64_MAX - unit)
        return 0;
    /* Rounded to the nearest nanosecond, as hookprof rounds. */
    *ns = v * unit + (frac * unit + frac_scale / 2) / frac_scale;
    return 1;
}

/* Parses a size: a decimal number of bytes, optionally followed by K, M, G or T (powers of
 * 1024, either case, then an optional "B" or "iB": 2G, 512MiB, 64kb); 0 on garbage or
 * overflow. */
static HKRT_FN int hkrt_parse_size(const char *s, uint64_t *out)
{
    uint64_t v, unit = 1;
    const char *suffix = hkrt_parse_leading_u64(s, &v);
    if (suffix == NULL)
        return 0;
    static const char units[] = "kmgt";
    for (int i = 0; units[i] != '\0'; i++)
        if (suffix[0] == units[i] || suffix[0] == units[i] - ('a' - 'A')) {
            unit = UINT64_C(1) << (10 * (i + 1));
            suffix++;
            if (suffix[0] == 'i')
                suffix++;
            break;
        }
    if (suffix[0] == 'b' || suffix[0] == 'B')
        suffix++;
    if (suffix[0] != '\0' || v > UINT64_MAX / unit)
        return 0;
    *out = v * unit;
    return 1;
}

static HKRT_FN void hkrt_count_lost(struct hkrt_thread *t, uint64_t n)
{
    if (n == 0)
        return;
    /* Once a thread's LOST chunk is out, more losses go to the process-wide count, which the
     * header's `lost` includes. */
    if (t != NULL && t->life == HKRT_THREAD_LIVE && !t->final_written)
        __atomic_fetch_add(&t->lost, n, __ATOMIC_RELAXED);
    else
        __atomic_fetch_add(&g.lost_unattributed, n, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------------------------- */
/* The lock (slow paths only). A spinlock that knows its owner, so that the fatal-signal
 * handler can tell "I interrupted myself holding it" from "another thread holds it".         */

static HKRT_FN int hkrt_my_tid_for_lock(void)
{
    return t_self.tid != 0 ? (int)t_self.tid : (int)hkrt_gettid();
}

static HKRT_FN void hkrt_lock(void)
{
    int me = hkrt_my_tid_for_lock();
    for (;;) {
        int expected = 0;
        if (__atomic_compare_exchange_n(&g.lock_owner, &expected, me, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return;
        sched_yield();
    }
}

static HKRT_FN void hkrt_unlock(void)
{
    __atomic_store_n(&g.lock_owner, 0, __ATOMIC_RELEASE);
}

/* In a signal handler: returns 1 with the lock taken, or 0 if it could not be taken (this
 * thread already holds it, or the holder did not let go within ~1 s); the caller then goes on
 * without it, since dying with the trace unfinished is worse. */
static HKRT_FN int hkrt_lock_from_signal(void)
{
    int me = hkrt_my_tid_for_lock();
    for (int i = 0; i < 1000; i++) {
        int expected = 0;
        if (__atomic_compare_exchange_n(&g.lock_owner, &expected, me, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return 1;
        if (expected == me)
            return 0;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return 0;
}

/* Maps a buffer of `bytes` (a power of two) whose start is aligned to `bytes`, with room for
 * the EVENTS chunk header just before it and `after` bytes after it: maps enough to align,
 * then unmaps the slack. Returns the buffer, 0 on failure. The thread's first buffer has its
 * packer after it (its state, then the room where PACKED payloads are made), whose pages are
 * touched only when a buffer is written. */
static HKRT_FN uintptr_t hkrt_map_aligned(size_t bytes, size_t after, void **map, size_t *map_size)
{
    const size_t header = sizeof(struct hkt_chunk_header);
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    if (page == 0 || (page & (page - 1)) != 0)
        page = 4096;
    size_t len = 2 * bytes + header + after + (size_t)page;
    char *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED)
        return 0;
    uintptr_t start = (uintptr_t)base, end = start + len;
    uintptr_t buf = (start + header + bytes - 1) & ~(uintptr_t)(bytes - 1);
    uintptr_t keep_lo = (buf - header) & ~(page - 1);
    uintptr_t keep_hi = (buf + bytes + after + page - 1) & ~(page - 1);
    if (keep_lo > start)
        munmap(base, keep_lo - start);
    if (end > keep_hi)
        munmap((void *)keep_hi, end - keep_hi);
    *map = (void *)keep_lo;
    *map_size = keep_hi - keep_lo;
    return buf;
}
