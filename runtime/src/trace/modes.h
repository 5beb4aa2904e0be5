/* trace.c, part 10 of 19: modes.
 *
 * The recording modes besides the plain trace: the ring (HOOKCC_MODE=ring, a flight recorder
 * written at snapshots), the profile (HOOKCC_MODE=profile, records folded into a calling-context
 * tree, trace_cct.h), the triggers (HOOKCC_TRACE_START/STOP, hookcc_trace_trigger),
 * HOOKCC_MIN_DURATION, and snapshots (SIGUSR2, hookcc_trace_snapshot).
 *
 * Relies on functions.h, state.h, helpers.h, chunks.h, output.h, writer.h; hkrt_write_packed
 * (buffers.h) through declarations.h, hookcc_trace_flush (api.h) through <hookcc/trace.h>.
 * Included only by trace.c, at its place in the order there: not a header of its own. */

/* ---------------------------------------------------------------------------------------- */
/* The ring (HOOKCC_MODE=ring)                                                              */
/*
 * A flight recorder: each thread's buffer is a ring that starts over when full, and nothing is
 * written until a snapshot: at exit or a fatal signal (the finish), on SIGUSR2 (when the
 * program leaves it at its default action), on hookcc_trace_snapshot(), and when a thread ends
 * (its ring goes with it otherwise). A snapshot writes, for every thread, the window of its
 * ring made since its last snapshot: a RING chunk saying how many records before the window
 * the ring no longer held, then the window's records, oldest first, as PACKED chunks. Another
 * thread's hooks go on during a snapshot (they take no lock): its ring is copied first, and the
 * records it overwrote meanwhile are left out (and counted in the RING chunk). While the
 * snapshot holds the thread's busy flag the thread cannot start its ring over: a hook that
 * fills it then counts its record lost.
 */

/* Writes t's window (see above); `upto` is t's position, read by the caller, who holds t's busy
 * flag. Returns the records written. */
static HKRT_FN uint64_t hkrt_ring_window(struct hkrt_thread *t, struct hkt_record *upto)
{
    struct hkt_record *buf = t->buf, *end = t->buf_end;
    const uint64_t n = (uint64_t)(end - buf);
    if (upto < buf || upto > end || !hkrt_wait_handed(t) || !hkrt_file_ready())
        return 0;
    struct hkt_record *mark = t->ring_mark != NULL ? t->ring_mark : buf;
    uint64_t laps = t->ring_laps;
    if (laps == 0 && upto < mark)
        mark = buf; /* cannot be: taken as a fresh ring */
    uint64_t since = laps * n + (uint64_t)(upto - buf) - (uint64_t)(mark - buf);
    if (since == 0)
        return 0;
    /* The older part [from, end) exists once the ring has gone round since the mark. */
    const struct hkt_record *older = NULL;
    uint64_t older_n = 0;
    if (laps > 0) {
        struct hkt_record *from = laps == 1 && mark > upto ? mark : upto;
        older = from;
        if (t != &t_self) {
            /* Copy it, then see how far the thread got meanwhile: what it wrote over is gone. */
            if (hkrt_spare(t)) {
                memcpy(t->spare + (from - buf), from, (size_t)(end - from) * sizeof *from);
                struct hkt_record *now = __atomic_load_n(&t->pos, __ATOMIC_ACQUIRE);
                if (now > from && now <= end)
                    from = now;
                else if (now < upto || now > end)
                    from = end; /* it went round, or is elsewhere: keep none of it */
                older = t->spare + (from - buf);
            } else {
                from = end;
            }
        }
        older_n = (uint64_t)(end - from);
    }
    uint64_t newer_n = (uint64_t)(upto - (laps > 0 ? buf : mark));
    const struct hkt_record *newer = laps > 0 ? buf : mark;
    struct hkt_ring ring = {since - older_n - newer_n};
    hkrt_write_chunk(HKT_CHUNK_RING, t->tid, &ring, sizeof ring, NULL);
    uint64_t written = 0;
    if (older_n != 0)
        written += hkrt_write_packed(t, older, older_n);
    if (newer_n != 0)
        written += hkrt_write_packed(t, newer, newer_n);
    t->ring_laps = 0;
    t->ring_mark = upto;
    return written;
}

/* ---------------------------------------------------------------------------------------- */
/* The profile (HOOKCC_MODE=profile)                                                        */
/*
 * Each thread's records are folded into its calling-context tree (trace_cct.h) where they
 * would be packed: by the writer, from the buffer a hook handed over, or by the hook itself
 * where there is no writer. Nothing is written until a snapshot (as for the ring: exit, a
 * fatal signal, SIGUSR2, hookcc_trace_snapshot(), hookcc_trace_flush() for the calling thread,
 * a thread's end), which folds the records since the last fold and writes the whole tree as a
 * PROFILE chunk; a later one of the same thread replaces it. The time a thread spends handing
 * its buffer over (the PAUSE of a trace) is taken out of its later records, as a reader takes
 * a PAUSE out. The tree grows by mremap, up to HOOKCC_PROFILE_NODES call paths; records of
 * paths beyond that are counted lost.
 */

static HKRT_FN void *hkrt_cct_grow(void *old, size_t old_bytes, size_t new_bytes)
{
    void *p = old == NULL ? mmap(NULL, new_bytes, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                          : mremap(old, old_bytes, new_bytes, MREMAP_MAYMOVE);
    return p == MAP_FAILED ? NULL : p;
}

/* The tree is changed by whoever folds t's records (the writer, or t itself where there is no
 * writer) and read by a snapshot from any thread: never by a hook, so a short spin is fine. */
static HKRT_FN void hkrt_tree_lock(struct hkrt_thread *t)
{
    while (__atomic_exchange_n(&t->tree_busy, 1, __ATOMIC_ACQUIRE))
        sched_yield();
}

static HKRT_FN void hkrt_tree_unlock(struct hkrt_thread *t)
{
    __atomic_store_n(&t->tree_busy, 0, __ATOMIC_RELEASE);
}

/* Unmaps t's tree and makes it empty. */
static HKRT_FN void hkrt_cct_free(struct hkrt_thread *t)
{
    struct hkt_cct *c = &t->cct;
    if (c->nodes != NULL)
        munmap(c->nodes, (size_t)c->cap_nodes * sizeof *c->nodes);
    if (c->buckets != NULL)
        munmap(c->buckets, (size_t)c->n_buckets * sizeof *c->buckets);
    if (c->stack != NULL)
        munmap(c->stack, (size_t)c->cap_depth * sizeof *c->stack);
    if (c->unmatched != NULL)
        munmap(c->unmatched, (size_t)c->cap_unmatched * sizeof *c->unmatched);
    hkt_cct_init(c, hkrt_cct_grow, g.profile_nodes);
    if (t->keep.stack != NULL)
        munmap(t->keep.stack, (size_t)t->keep.cap * sizeof *t->keep.stack);
    hkt_keep_init(&t->keep, hkrt_cct_grow, 0);
    t->fold_mark = NULL;
}

/* The records of the n functions of `functions` (a trigger table's), into `records`; `of`
 * remembers the function each was found for, so that a record is looked up again only when the
 * table changed there, or none was found (a file with it may have registered since). */
static HKRT_FN void hkrt_window_records(uint64_t *records, uint64_t *of, const uint64_t *functions,
                                        uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint64_t function = functions[i];
        if (of[i] != function || records[i] == function) {
            uint64_t record = hkrt_fn_record_of(function);
            if (record == 0)
                return; /* the lock was taken: as they were, this time */
            records[i] = record;
            of[i] = function;
        }
    }
}

/* HOOKCC_TRACE_START / HOOKCC_TRACE_STOP: keeps, at the start of r, the records of n that are
 * inside the thread's windows (trace_cct.h, "Triggers"), the others dropped; returns how many.
 * Every way records take to the file comes through here once (the records are cut in place:
 * the buffer is the caller's to reuse). */
static HKRT_FN uint64_t hkrt_window_cut(struct hkrt_thread *t, const struct hkt_record *r,
                                        uint64_t n)
{
    struct hookcc_trace_triggers *trig = &hookcc_trace_triggers;
    uint32_t starts = __atomic_load_n(&trig->n_start, __ATOMIC_ACQUIRE);
    uint32_t stops = __atomic_load_n(&trig->n_stop, __ATOMIC_ACQUIRE);
    if (starts == 0 || n == 0)
        return n;
    /* The table holds functions' addresses; the records name functions by their records. */
    t->window.n_start = starts < HKRT_MAX_TRIGGERS ? starts : HKRT_MAX_TRIGGERS;
    t->window.n_stop = stops < HKRT_MAX_TRIGGERS ? stops : HKRT_MAX_TRIGGERS;
    hkrt_window_records(t->window_start, t->window_start_of, (const uint64_t *)trig->start,
                        t->window.n_start);
    hkrt_window_records(t->window_stop, t->window_stop_of, (const uint64_t *)trig->stop,
                        t->window.n_stop);
    t->window.start = t->window_start;
    t->window.stop = t->window_stop;
    return hkt_window_filter(&t->window, (struct hkt_record *)(uintptr_t)r, (size_t)n);
}

/* Folds n of t's records into its tree (hkrt_write_packed's place in this mode). */
/* Folds n of t's records into its tree, under its tree lock; counts and returns the records
 * the tree had no room for. */
static HKRT_FN uint64_t hkrt_fold_into_tree(struct hkrt_thread *t, const struct hkt_record *r,
                                            uint64_t n)
{
    struct hkt_cct *c = &t->cct;
    if (c->grow == NULL)
        hkt_cct_init(c, hkrt_cct_grow, g.profile_nodes);
    hkrt_tree_lock(t);
    uint64_t lost = c->lost;
    hkt_cct_fold(c, r, (size_t)n);
    lost = c->lost - lost;
    hkrt_tree_unlock(t);
    hkrt_count_lost(t, lost);
    return lost;
}

static HKRT_FN uint64_t hkrt_fold(struct hkrt_thread *t, const struct hkt_record *r, uint64_t n)
{
    n = hkrt_window_cut(t, r, n);
    uint64_t lost = hkrt_fold_into_tree(t, r, n);
    __atomic_fetch_add(&g.records, n > lost ? n - lost : 0, __ATOMIC_RELAXED);
    return n;
}

HKRT_EXPORT int hookcc_trace_trigger(void (*start)(void), void (*stop)(void))
{
    int saved_errno = errno;
    struct hookcc_trace_triggers *trig = &hookcc_trace_triggers;
    hookcc_trace_flush(); /* the calling thread's records so far, by the table as it was */
    hkrt_throttle_end();
    hkrt_lock();
    uint32_t starts = trig->n_start, stops = trig->n_stop;
    int ok = start != NULL && starts < HKRT_MAX_TRIGGERS && (stop == NULL || stops < HKRT_MAX_TRIGGERS);
    if (ok) {
        if (stop != NULL) {
            trig->stop[stops] = (uint64_t)(uintptr_t)stop;
            __atomic_store_n(&trig->n_stop, stops + 1, __ATOMIC_RELEASE);
        }
        trig->start[starts] = (uint64_t)(uintptr_t)start;
        __atomic_store_n(&trig->n_start, starts + 1, __ATOMIC_RELEASE);
    }
    hkrt_unlock();
    errno = saved_errno;
    return ok ? 0 : -1;
}

HKRT_EXPORT void hookcc_trace_triggers_clear(void)
{
    int saved_errno = errno;
    hookcc_trace_flush();
    __atomic_store_n(&hookcc_trace_triggers.n_start, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&hookcc_trace_triggers.n_stop, 0, __ATOMIC_RELEASE);
    errno = saved_errno;
}

/* HOOKCC_MIN_DURATION in ticks: from the target's fixed rate, else measured against the
 * monotonic clock from the start (the first buffer written within 1 ms of it waits for the
 * rest of that millisecond, once: 1 ms gives the rate to well under 1 %). */
static HKRT_FN uint64_t hkrt_min_ticks(void)
{
    uint64_t ticks = __atomic_load_n(&g.min_ticks, __ATOMIC_RELAXED);
    if (ticks != 0)
        return ticks;
    uint64_t rate = hkrt_ticks_per_second_fixed();
    if (rate == 0) {
        struct hkrt_clock_point now = hkrt_clock_point_after(&g.clock_start, 1000000);
        rate = hkrt_ticks_per_second(&g.clock_start, &now);
    }
    ticks = (uint64_t)((double)g.min_duration_ns * (double)rate / 1e9 + 0.5);
    if (ticks == 0)
        ticks = 1;
    __atomic_store_n(&g.min_ticks, ticks, __ATOMIC_RELAXED);
    return ticks;
}

/* HOOKCC_MIN_DURATION: folds n of t's records into its tree (every call, for the report), then
 * leaves out of them the calls shorter than the threshold (for the trace); returns the records
 * kept, now at the start of r. */
static HKRT_FN uint64_t hkrt_fold_and_keep(struct hkrt_thread *t, struct hkt_record *r,
                                           uint64_t n)
{
    hkrt_fold_into_tree(t, r, n);
    if (t->keep.grow == NULL)
        hkt_keep_init(&t->keep, hkrt_cct_grow, 0);
    t->keep.min_ticks = hkrt_min_ticks();
    return t->keep.min_ticks != 0 ? hkt_keep_filter(&t->keep, r, (size_t)n) : n;
}

/* The thread's time handing its buffer over, taken out of its later records. */
static HKRT_FN void hkrt_profile_pause(struct hkrt_thread *t, const struct hkt_pause *pause)
{
    if (pause->to > pause->from) {
        hkrt_tree_lock(t);
        t->cct.shift += pause->to - pause->from;
        hkrt_tree_unlock(t);
    }
}

/* Folds t's records from where the last fold of this buffer ended up to `upto` (the caller
 * holds t's busy flag or is t); the next fold of this buffer starts at `upto`. */
static HKRT_FN uint64_t hkrt_fold_upto(struct hkrt_thread *t, struct hkt_record *upto)
{
    struct hkt_record *from = t->fold_mark;
    if (from == NULL || from < t->buf || from > upto)
        from = t->buf;
    if (upto < t->buf || upto > t->buf_end)
        return 0;
    if (!hkrt_wait_handed(t)) {
        hkrt_count_lost(t, (uint64_t)(upto - from));
        return 0;
    }
    t->fold_mark = upto;
    return hkrt_fold(t, from, (uint64_t)(upto - from));
}

/* Writes t's tree as a PROFILE chunk (with its CHECK chunk), if it has anything. */
static HKRT_FN void hkrt_write_profile(struct hkrt_thread *t)
{
    struct hkt_cct *c = &t->cct;
    if (!hkrt_file_ready() || !hkrt_file_ok())
        return;
    hkrt_tree_lock(t);
    const size_t head = sizeof(struct hkt_chunk_header) + sizeof(struct hkt_profile);
    size_t cap = head + hkt_cct_bound(c);
    void *map = c->started ? mmap(NULL, cap, PROT_READ | PROT_WRITE,
                                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
                           : MAP_FAILED;
    if (map == MAP_FAILED) {
        hkrt_tree_unlock(t);
        return;
    }
    struct hkt_profile fixed;
    size_t stream = hkt_cct_encode(c, t->sequence, &fixed, (uint8_t *)map + head);
    hkrt_tree_unlock(t);
    struct hkt_chunk_header header = {HKT_CHUNK_PROFILE,
                                      (uint32_t)(sizeof fixed + stream), t->tid};
    memcpy(map, &header, sizeof header);
    memcpy((char *)map + sizeof header, &fixed, sizeof fixed);
    struct hkrt_check_chunk trailer;
    hkrt_check_chunk(&trailer, t->tid, hkt_checksum(map, head + stream));
    struct iovec iov[2] = {{map, head + stream}, {&trailer, sizeof trailer}};
    if (hkrt_space_allows(head + stream + sizeof trailer)) {
        uint64_t off = __atomic_fetch_add(&g.file_end, head + stream + sizeof trailer,
                                          __ATOMIC_RELAXED);
        hkrt_pwritev_all(iov, 2, off);
    }
    munmap(map, cap);
}

/* The calling thread's part of a snapshot: its ring's window, or its tree with its records up
 * to now. (Another thread's tree is written as its last hand-over left it: folding that
 * thread's buffer would need its busy flag, and its hooks would lose every record that came to
 * a full buffer meanwhile.) */
static HKRT_FN void hkrt_snapshot_thread(struct hkrt_thread *t, struct hkt_record *upto)
{
    if (g.ring) {
        hkrt_ring_window(t, upto);
    } else if (hkrt_file_ready()) {
        hkrt_fold_upto(t, upto);
        hkrt_write_profile(t);
    }
}

/* A snapshot of every thread's ring, the process going on. From a signal handler (`in_signal`:
 * SIGUSR2) the lock is taken with a bounded wait, and the snapshot is skipped if it cannot be. */
static HKRT_FN void hkrt_ring_snapshot(int in_signal)
{
    if (!(g.ring || g.profile) || __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) != HKRT_RUNNING)
        return;
    struct hkrt_thread *self = &t_self;
    int mine = self->life == HKRT_THREAD_LIVE && hkrt_guard_enter(self);
    uint64_t from = hkrt_ticks();
    int locked;
    if (in_signal)
        locked = hkrt_lock_from_signal();
    else
        locked = (hkrt_lock(), 1);
    if (locked) {
        for (struct hkrt_thread *t = g.threads; t != NULL; t = t->next) {
            if (t->final_written || t->life != HKRT_THREAD_LIVE)
                continue;
            if (t == self) {
                if (mine)
                    hkrt_snapshot_thread(t, t->held_pos);
                continue;
            }
            if (g.profile) {
                /* Its tree as its last hand-over left it, t going on (its busy flag is not
                 * taken: a hook of t that found its buffer full meanwhile would lose its
                 * record). */
                if (hkrt_file_ready())
                    hkrt_write_profile(t);
                continue;
            }
            if (!hkrt_take_busy(t))
                continue;
            struct hkt_record *upto = t->sig_redirect ? t->sig_saved_pos
                                                      : __atomic_load_n(&t->pos, __ATOMIC_ACQUIRE);
            hkrt_snapshot_thread(t, upto);
            __atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
        }
        if (mine && g.ring && self->final_written == 0 && hkrt_file_ok()) {
            /* The snapshot's time is the runtime's, not the function's that the calling
             * thread was in (issue 37: 90 ms charged to it): a PAUSE chunk of this thread
             * after its window, from the snapshot's start to its end, which a reader takes out
             * of the thread's time as it does a buffer's hand-over. */
            struct hkt_pause pause = {from, hkrt_ticks()};
            hkrt_write_chunk(HKT_CHUNK_PAUSE, self->tid, &pause, sizeof pause, NULL);
        }
        hkrt_unlock();
    }
    if (mine && g.profile && self->final_written == 0) {
        /* The snapshot's time is the runtime's: taken out of the calling thread's later
         * records, as a PAUSE is (its tree took in its records up to the snapshot). */
        struct hkt_pause pause = {from, hkrt_ticks()};
        hkrt_profile_pause(self, &pause);
    }
    if (mine)
        hkrt_guard_leave(self);
}

static HKRT_FN void hkrt_on_snapshot_signal(int sig)
{
    (void)sig;
    int saved_errno = errno;
    hkrt_ring_snapshot(1);
    errno = saved_errno;
}

HKRT_EXPORT void hookcc_trace_snapshot(void)
{
    int saved_errno = errno;
    hkrt_ring_snapshot(0);
    errno = saved_errno;
}
