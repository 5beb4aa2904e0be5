/* trace.c, part 19 of 19: api.
 *
 * Start (the constructor registering the main thread) and the public API of <hookcc/trace.h>:
 * flush, enable, disable, enabled, path.
 *
 * Relies on every part before it.
 * Included only by trace.c, at its place in the order there: not a header of its own. */

/* ---------------------------------------------------------------------------------------- */
/* Start, public API                                                                        */

/* Registers the calling thread now (the main thread, from the constructor), so that it is
 * thread 1 and its buffer exists before the first hook. */
static HKRT_FN void hkrt_start_and_attach_current_thread(void)
{
    struct hkrt_thread *t = &t_self;
    if (!hkrt_guard_enter(t))
        return;
    hkrt_ensure_started();
    if (t->life == HKRT_THREAD_NEW && __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == HKRT_RUNNING &&
        hkrt_thread_attach(t) && hkrt_recording())
        hkrt_measure_overhead(t);
    if (__atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == HKRT_RUNNING)
        hkrt_start_writer();
    hkrt_guard_leave(t);
}

/* Priority 101, the earliest a program may use: the atexit handler is registered before any
 * of the program's C++ static constructors register their destructors. */
__attribute__((constructor(101), no_instrument_function)) static void hkrt_constructor(void)
{
    int saved_errno = errno;
    hkrt_start_and_attach_current_thread();
    errno = saved_errno;
}

HKRT_EXPORT void hookcc_trace_flush(void)
{
    struct hkrt_thread *t = &t_self;
    int saved_errno = errno;
    if (t->life != HKRT_THREAD_LIVE || !hkrt_guard_enter(t)) {
        errno = saved_errno;
        return;
    }
    /* In ring mode nothing is written until a snapshot (hookcc_trace_snapshot). */
    if (__atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == HKRT_RUNNING && !t->final_written &&
        !g.ring) {
        hkrt_write_events(t, t->held_pos);
        t->held_pos = t->buf;
        t->fold_mark = NULL;
        if (g.profile || g.min_duration_ns != 0) {
            uint64_t from = hkrt_ticks();
            hkrt_write_profile(t); /* the calling thread's tree as it is now */
            struct hkt_pause pause = {from, hkrt_ticks()};
            hkrt_profile_pause(t, &pause);
        }
    }
    hkrt_guard_leave(t);
    errno = saved_errno;
}

HKRT_EXPORT void hookcc_trace_enable(void)
{
    int saved_errno = errno;
    hkrt_ensure_started_guarded();
    hkrt_lock();
    g.user_enabled = 1;
    if (g.state == HKRT_RUNNING && !__atomic_load_n(&g.finishing, __ATOMIC_ACQUIRE)) {
        hkrt_set_enabled(1);
        /* hkrt_finish switches recording off without the lock: if it began meanwhile, its
         * switch may have landed between our two stores. Switch off again, as it would. */
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        if (__atomic_load_n(&g.finishing, __ATOMIC_ACQUIRE))
            hkrt_set_enabled(0);
    }
    hkrt_unlock();
    errno = saved_errno;
}

HKRT_EXPORT void hookcc_trace_disable(void)
{
    int saved_errno = errno;
    hkrt_ensure_started_guarded();
    hkrt_lock();
    g.user_enabled = 0;
    hkrt_set_enabled(0);
    hkrt_unlock();
    errno = saved_errno;
}

HKRT_EXPORT int hookcc_trace_function(const char *glob, int on)
{
    if (glob == NULL)
        return 0;
    int saved_errno = errno;
    hkrt_ensure_started_guarded();
    hkrt_lock();
    int n = hkrt_functions_set(glob, on);
    hkrt_unlock();
    errno = saved_errno;
    return n;
}

HKRT_EXPORT int hookcc_trace_enabled(void)
{
    int saved_errno = errno;
    hkrt_ensure_started_guarded();
    errno = saved_errno;
    return hkrt_recording();
}

HKRT_EXPORT const char *hookcc_trace_path(void)
{
    int saved_errno = errno;
    hkrt_ensure_started_guarded();
    struct hkrt_thread *t = &t_self;
    if (__atomic_load_n(&g.open_deferred, __ATOMIC_ACQUIRE) && hkrt_guard_enter(t)) {
        hkrt_file_ready();
        hkrt_guard_leave(t);
    }
    errno = saved_errno;
    return g.fd >= 0 ? g.path : NULL;
}
