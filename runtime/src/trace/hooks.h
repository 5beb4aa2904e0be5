/* trace.c, part 18 of 19: hooks.
 *
 * The hooks: the hot path (__hookcc_enter, __hookcc_exit, __hookcc_resync and the inlined
 * hkrt_record), the slow path it falls into at a buffer boundary (hkrt_record_slow), and the
 * compensation timing: the hooks' own cost measured once at start (hkrt_measure_overhead, the
 * OVERHEAD chunk). Kept in trace.c's translation unit so that hkrt_record is inlined.
 *
 * Relies on every part before it: the slow path starts the process, attaches threads, hands
 * buffers to the writer, writes ring windows and folds profiles.
 * Included only by trace.c, at its place in the order there: not a header of its own. */

/* ---------------------------------------------------------------------------------------- */
/* Hooks                                                                                    */

/* The switch of the function timed below: tested before each hook, as the pass tests a
 * function's (functions.h). */
static volatile uint8_t hkrt_overhead_switch = 1;

/* Hook pairs around an empty body, as the compiler inserts them into a function. */
static HKRT_FN __attribute__((noinline)) void hkrt_overhead_loop(unsigned pairs)
{
    for (unsigned i = 0; i < pairs; i++) {
        if (hkrt_overhead_switch)
            __hookcc_enter((void *)hkrt_overhead_loop);
        __asm__ volatile("" ::: "memory");
        if (hkrt_overhead_switch)
            __hookcc_exit((void *)((uintptr_t)hkrt_overhead_loop + HKT_EXIT_BIT));
    }
}

/* Functions for the count's calibration, as the pass makes them: one whose switch says
 * "count" (its record's `on` read once, tested at entry and at exit), and one plain; both
 * with an empty body and never inlined, so that what the first costs more than the second is
 * what a counted call adds to a call, its own prologue and the caller's stack adjustment
 * included. Their records, one to a cache line, stand for 64 functions of a program: each
 * count reads another record and another slot of the thread's cache, as a program's do. */
#define HKRT_COUNT_FNS HKT_COUNT_MARK_CALLS
static struct hkrt_fn hkrt_overhead_fns[2 * HKRT_COUNT_FNS] __attribute__((aligned(64)));

static HKRT_FN __attribute__((noinline)) void hkrt_counted_fn(struct hkrt_fn *f)
{
    uint8_t on = f->on;
    if (on == HKRT_ON_RECORD)
        __hookcc_enter((void *)hkrt_counted_fn);
    else if (on != HKRT_ON_OFF)
        __hookcc_count(f);
    __asm__ volatile("" ::: "memory");
    if (on == HKRT_ON_RECORD)
        __hookcc_exit((void *)((uintptr_t)hkrt_counted_fn + HKT_EXIT_BIT));
}

static HKRT_FN __attribute__((noinline)) void hkrt_plain_fn(struct hkrt_fn *f)
{
    __asm__ volatile("" : : "r"(f) : "memory");
}

/* HKRT_COUNT_FNS calls, each of another function: counted ones, or plain ones. */
static HKRT_FN __attribute__((noinline)) void hkrt_count_loop(int counted)
{
    if (counted)
        for (unsigned i = 0; i < HKRT_COUNT_FNS; i++)
            hkrt_counted_fn(&hkrt_overhead_fns[2 * i]);
    else
        for (unsigned i = 0; i < HKRT_COUNT_FNS; i++)
            hkrt_plain_fn(&hkrt_overhead_fns[2 * i]);
}

/* The mean of the fastest 90 % of v (sorted in place), rounded: the slowest are interrupts and
 * cache misses; a mean rather than a median, because a coarse counter (some VMs' TSC moves in
 * steps of 20) gives a median of one step or two where the mean gets between them. */
static HKRT_FN uint64_t hkrt_trimmed_mean(uint64_t *v, unsigned n)
{
    for (unsigned i = 1; i < n; i++) /* insertion sort: n is small */
        for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
            uint64_t x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    unsigned kept = n - n / 10;
    uint64_t sum = 0;
    for (unsigned i = 0; i < kept; i++)
        sum += v[i];
    return (sum + kept / 2) / kept;
}

/* What HKT_COUNT_MARK_CALLS calls of a throttled function cost (the count marks' share of
 * the OVERHEAD chunk): the count loop timed with counted calls and with plain ones, each
 * HKRT_OVERHEAD_PAIRS / 8 times, the difference of their trimmed means. The thread's budget
 * is put out of reach meanwhile (no mark), and the loop's functions leave its cache. */
static HKRT_FN void hkrt_measure_count(struct hkrt_thread *t)
{
    enum { reps = HKRT_OVERHEAD_PAIRS / 8 };
    uint64_t with[reps], without[reps];
    for (unsigned i = 0; i < HKRT_COUNT_FNS; i++) {
        hkrt_overhead_fns[2 * i].function = (const void *)hkrt_counted_fn;
        hkrt_overhead_fns[2 * i].on = HKRT_ON_COUNT;
    }
    uint32_t budget = t->count_budget;
    t->count_budget = UINT32_MAX;
    for (unsigned i = 0; i < reps; i++) {
        uint64_t t0 = hkrt_ticks();
        hkrt_count_loop(1);
        uint64_t t1 = hkrt_ticks();
        hkrt_count_loop(0);
        uint64_t t2 = hkrt_ticks();
        with[i] = t1 - t0;
        without[i] = t2 - t1;
    }
    t->count_budget = budget;
    for (unsigned i = 0; i < HKRT_COUNT_FNS; i++) {
        struct hkrt_count *c = &t->counts[hkrt_count_slot(&hkrt_overhead_fns[2 * i])];
        if (c->key == &hkrt_overhead_fns[2 * i]) {
            c->key = NULL;
            c->val = 0;
        }
    }
    uint64_t a = hkrt_trimmed_mean(with, reps), b = hkrt_trimmed_mean(without, reps);
    g.overhead.count_ticks = a > b ? a - b : 0;
    g.overhead.count_calls = HKT_COUNT_MARK_CALLS;
}

/* Measures what the hooks cost (hook-overhead compensation: docs/trace-format.md, "OVERHEAD"),
 * once per process, on the first thread with an empty buffer while recording is on (the main
 * thread in the runtime's constructor, unless tracing starts disabled), the guard held: the
 * real hooks run HKRT_OVERHEAD_PAIRS times into the buffer, after the slot the first record
 * will take, with signals blocked so that no handler's record lands among them; the records
 * are then dropped (pos goes back to the guard's NULL). From their times: the
 * mean time from an entry to its exit (the part of the two hooks inside the function's window)
 * and from an exit to the next entry (the part outside), written as an OVERHEAD chunk. Not
 * measured if the buffer is too small to hold the pairs (HOOKCC_BUFFER_RECORDS). */
static HKRT_FN void hkrt_measure_overhead(struct hkrt_thread *t)
{
    const unsigned pairs = HKRT_OVERHEAD_PAIRS;
    if (__atomic_exchange_n(&g.overhead_taken, 1, __ATOMIC_ACQ_REL) ||
        (size_t)(t->buf_end - t->buf) < 2u * pairs + 2u)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    struct hkt_record *start = t->buf + 1;
    __atomic_store_n(&t->pos, start, __ATOMIC_RELAXED);
    hkrt_overhead_loop(pairs);
    struct hkt_record *end = __atomic_load_n(&t->pos, __ATOMIC_RELAXED);
    __atomic_store_n(&t->pos, (struct hkt_record *)NULL, __ATOMIC_RELAXED);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (end != start + 2u * pairs)
        return; /* recording was switched off meanwhile, or a buffer boundary came */
    uint64_t inside[HKRT_OVERHEAD_PAIRS], outside[HKRT_OVERHEAD_PAIRS - 1];
    for (unsigned i = 0; i < pairs; i++) {
        inside[i] = start[2 * i + 1].time - start[2 * i].time;
        if (i + 1 < pairs)
            outside[i] = start[2 * i + 2].time - start[2 * i + 1].time;
    }
    g.overhead.self_ticks = hkrt_trimmed_mean(inside, pairs);
    g.overhead.child_ticks = hkrt_trimmed_mean(outside, pairs - 1);
    g.overhead.pairs = pairs;
    hkrt_measure_count(t);
    hkrt_write_chunk(HKT_CHUNK_OVERHEAD, 0, &g.overhead, sizeof g.overhead, NULL);
}

/* Reached when pos is at a buffer boundary: the thread's first hook (NULL), a full buffer (its
 * end), a fresh one (its start), a hook re-entered from inside the runtime (NULL while the
 * guard is held), or any hook while recording is off (full_mask 0). Records `word` (the
 * function's address, + 2 for an exit) unless tracing is off. */
static HKRT_COLD HKRT_HOOK_CC void hkrt_record_slow(void *word)
{
    if (HKRT_UNLIKELY(t_self.sig_redirect)) {
        /* In a signal handler that interrupted a hook: this record cannot be kept in order
         * (see "Signal handlers"), so it is counted. */
        if (hkrt_recording())
            hkrt_count_lost(&t_self, 1);
        return;
    }
    /* Off (HOOKCC_DISABLE, hookcc_trace_disable, finished): back at once, touching nothing. Not
     * before the start: `enabled` is 1 until then, so the first hook starts the runtime. */
    if (!__atomic_load_n(&g_hot.enabled, __ATOMIC_RELAXED) &&
        __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) != HKRT_UNINIT)
        return;
    struct hkrt_thread *t = &t_self;
    int saved_errno = errno;
    if (!hkrt_guard_enter(t)) {
        /* Re-entered (the guard's NULL pos sent us here), or the finisher took this thread. */
        hkrt_count_lost(t, 1);
        errno = saved_errno;
        return;
    }
    hkrt_ensure_started();
    if (!hkrt_recording())
        goto out; /* disabled or finished: not recorded, not counted */
    if (HKRT_UNLIKELY(t->resume_from != NULL)) /* an exec failed: see hkrt_drop_written */
        t->held_pos = hkrt_drop_written(t, t->held_pos);
    if (t->life == HKRT_THREAD_LIVE) {
        /* At the buffer's end (full) or at its start (nothing to write: after a flush, a fork,
         * or a hook that found it full raced with a signal handler that flushed it). The time
         * the write takes is the runtime's, not the program's: a PAUSE chunk says how long it
         * was, so that the reader can take it out (its own small write is not in it). */
        if (g.ring) {
            /* The ring starts over: nothing is written until a snapshot. */
            if (t->held_pos == t->buf_end)
                t->ring_laps++;
            t->held_pos = t->buf;
        } else {
            uint64_t from = hkrt_ticks();
            if (!hkrt_hand_over(t, from)) {
                /* Only after records were written: past HOOKCC_MAX_BYTES, where none are, the
                 * file must not keep growing by a PAUSE chunk per buffer. */
                uint64_t wrote = hkrt_write_events(t, t->held_pos);
                t->held_pos = t->buf;
                t->fold_mark = NULL;
                struct hkt_pause pause = {from, hkrt_ticks()};
                if (g.profile || g.min_duration_ns != 0)
                    hkrt_profile_pause(t, &pause);
                if (!g.profile && (wrote != 0 || g.min_duration_ns != 0) && hkrt_file_ok())
                    hkrt_write_chunk(HKT_CHUNK_PAUSE, t->tid, &pause, sizeof pause, NULL);
                hkrt_switches_read_own(t);
            }
        }
    } else if (t->life == HKRT_THREAD_DEAD || !hkrt_thread_attach(t)) {
        hkrt_count_lost(t, 1);
        goto out;
    }
    if (!__atomic_load_n(&g.overhead_taken, __ATOMIC_RELAXED))
        hkrt_measure_overhead(t); /* the buffer is empty: just attached, or just written */
    /* The timestamp is taken after the work above, so every record of a thread is later than
     * the one before and than the CLOCK chunk's first_tick. */
    t->held_pos->time = hkrt_ticks();
    t->held_pos->address_kind = (uint64_t)(uintptr_t)word;
    t->held_pos++;
out:
    hkrt_guard_leave(t);
    errno = saved_errno;
}

/* The whole hot path: with local-exec TLS and the kind already in `word`, ten instructions on
 * x86-64 with the ret (and under preserve_most the saves of rdtsc's two registers), the slow
 * path reached by a conditional tail jump (docs/performance.md). Returns 0 where the slow path
 * must record `word` instead: each hook tail-calls it, so that the registers the fast path
 * uses are saved on that path alone, without a slot to keep the stack aligned for a call. */
static inline __attribute__((always_inline, no_instrument_function)) int
hkrt_record_fast(void *word)
{
    struct hkt_record *p = t_self.pos;
    /* A plain load of full_mask: clang does not fold an __atomic load into the test, which
     * costs an instruction. Each hook is its own call, so it is read afresh every time. */
    if (HKRT_UNLIKELY(((uintptr_t)p & g_hot.full_mask) == 0))
        return 0;
#if defined(HKRT_CLOCK_IS_MONOTONIC_NS)
    /* The clock is a call out of this function (clock_gettime): a signal handler that runs
     * during it is not seen "inside a hook" by hkrt_signal_wrapper, and its records would land
     * at p. So the position is read again after the clock: if a handler moved it, start over
     * (with a new time, which keeps the thread's records in time order). From the second
     * read to the store, the code is this function's own. */
    for (;;) {
        uint64_t now = hkrt_ticks();
        struct hkt_record *again = __atomic_load_n(&t_self.pos, __ATOMIC_RELAXED);
        if (HKRT_UNLIKELY(again != p)) {
            p = again;
            if (((uintptr_t)p & g_hot.full_mask) == 0)
                return 0;
            continue;
        }
        p->time = now;
        break;
    }
#elif defined(HKRT_TICKS_SPLIT) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* rdtsc gives edx:eax; storing the halves as they come costs 2 instructions instead of 4
     * (shift, or, store). memcpy: no aliasing question. */
    uint32_t lo, hi;
    hkrt_ticks_split(&lo, &hi);
    memcpy((char *)&p->time, &lo, sizeof lo);
    memcpy((char *)&p->time + sizeof lo, &hi, sizeof hi);
#else
    p->time = hkrt_ticks();
#endif
    p->address_kind = (uint64_t)(uintptr_t)word;
    /* Release: the finisher, on another thread at exit, reads pos and then the records below
     * it. A plain mov on x86 (TSO); stlr on AArch64. */
    __atomic_store_n(&t_self.pos, p + 1, __ATOMIC_RELEASE);
    return 1;
}

/* One record, by the fast path or the slow one (for the resync's two). */
static inline __attribute__((always_inline, no_instrument_function)) void
hkrt_record(void *word)
{
    if (!hkrt_record_fast(word))
        hkrt_record_slow(word);
}

/* The two hooks, alone in their section: a signal handler's wrapper tells from the interrupted
 * program counter whether a hook was interrupted (see "Signal handlers"). */
#define HKRT_HOOK_SECTION __attribute__((section("hkrt_hooks"), aligned(16)))
extern const char __start_hkrt_hooks[] __attribute__((visibility("hidden")));
extern const char __stop_hkrt_hooks[] __attribute__((visibility("hidden")));

HKRT_EXPORT HKRT_HOOK_SECTION HKRT_HOOK_CC void __hookcc_enter(void *fn)
{
    if (HKRT_LIKELY(hkrt_record_fast(fn)))
        return;
    HKRT_TAIL_CALL hkrt_record_slow(fn);
}

HKRT_EXPORT HKRT_HOOK_SECTION HKRT_HOOK_CC void __hookcc_exit(void *fn_exit)
{
    if (HKRT_LIKELY(hkrt_record_fast(fn_exit)))
        return;
    HKRT_TAIL_CALL hkrt_record_slow(fn_exit);
}

/* A throttled function's call (functions.h, "Throttling"): counted, not recorded. Called by
 * the pass's code at the function's entry when its switch says so. The count goes to the
 * thread's cache (state.h, counts): a compare and an increment, no atomic instruction,
 * where an atomic add on the shared record cost a throttled call about 6 ns (SQLite -O0:
 * 4.9 M of them). In the hooks' section, so that a signal handler that interrupts it between
 * the compare and the increment does not take its slot (hkrt_count_slow). */
static HKRT_COLD HKRT_HOOK_SECTION HKRT_HOOK_CC void hkrt_count_mark(void *record);

static HKRT_COLD HKRT_HOOK_SECTION HKRT_HOOK_CC void hkrt_count_slow(void *record)
{
    struct hkrt_fn *f = record;
    struct hkrt_thread *t = &t_self;
    if (t->sig_redirect || t->life != HKRT_THREAD_LIVE ||
        __atomic_load_n(&t->count_closed, __ATOMIC_RELAXED)) {
        __atomic_fetch_add(&f->count, 1, __ATOMIC_RELAXED);
        return;
    }
    unsigned s = hkrt_count_slot(f);
    struct hkrt_fn *old = t->counts[s].key;
    if (old != NULL && t->counts[s].val != 0 && !hkrt_spill_add(t, old, t->counts[s].val))
        __atomic_fetch_add(&old->count, t->counts[s].val, __ATOMIC_RELAXED);
    t->counts[s].val = 1;
    t->counts[s].key = f;
    if (--t->count_budget == 0)
        HKRT_TAIL_CALL hkrt_count_mark(record);
}

HKRT_EXPORT HKRT_HOOK_SECTION HKRT_HOOK_CC void __hookcc_count(void *fn_record)
{
    struct hkrt_fn *f = fn_record;
    /* The slot's byte offset, so that both fields are reached from the thread pointer with
     * it (clang otherwise forms the slot's address for the increment: two instructions). */
    uintptr_t at = (uintptr_t)hkrt_count_slot(f) * sizeof(struct hkrt_count);
    if (HKRT_LIKELY(*(struct hkrt_fn **)((char *)t_self.counts + at) == f)) {
        (*(uint64_t *)((char *)t_self.counts + at + sizeof(struct hkrt_fn *)))++;
        if (HKRT_LIKELY(--t_self.count_budget != 0))
            return;
        HKRT_TAIL_CALL hkrt_count_mark(fn_record);
    }
    HKRT_TAIL_CALL hkrt_count_slow(fn_record);
}

/* Every HKT_COUNT_MARK_CALLS counted calls of a thread, a count mark in its records: where the
 * reader takes their cost out of the time (docs/trace-format.md, "Count marks"), which is
 * otherwise its callers' (a counted call is 2 ns on the project's VM: SQLite -O0's 4.9 M of
 * them were 40 % of main's time). `record`: the counted function's (unused: the argument of
 * a tail call). */
static HKRT_COLD HKRT_HOOK_SECTION HKRT_HOOK_CC void hkrt_count_mark(void *record)
{
    (void)record;
    t_self.count_budget = HKT_COUNT_MARK_CALLS;
    hkrt_record((void *)(uintptr_t)HKT_COUNT_MARK);
}

/* The two records of a resync, next to each other in the thread's stream: a signal handler
 * that comes between them runs "inside a hook" (this section), so its records are counted
 * lost rather than put between them (see "Signal handlers"). */
HKRT_EXPORT HKRT_HOOK_SECTION HKRT_HOOK_CC void __hookcc_resync(void *fn)
{
    hkrt_record((void *)(uintptr_t)HKT_RESYNC_ESCAPE);
    hkrt_record(fn);
}
