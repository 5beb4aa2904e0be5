/* trace.c, part 17 of 19: start.
 *
 * Starting the process's recording: the SIGXFSZ and fatal-signal handlers installed, options
 * read, clock start taken, atexit/atfork registered (hkrt_start_locked, hkrt_ensure_started).
 * Near the end of the order: it installs the handlers of the parts before it.
 *
 * Relies on state.h, helpers.h, options.h, output.h and the parts whose handlers it installs:
 * threads.h (the key destructor), modes.h (SIGUSR2), finish.h (exit, fatal signals), fork.h.
 * Included only by trace.c, at its place in the order there: not a header of its own. */

static struct sigaction g_old_xfsz;

/* SIGXFSZ, whose default action kills the process, is sent with the EFBIG of a write past
 * RLIMIT_FSIZE. Our own writes must not kill the program: then the write just fails (and the
 * file is finished as after a full disk). Any other write past the limit is the program's: the
 * file is finished and the signal gets its default action, as without the runtime. */
static HKRT_FN void hkrt_on_xfsz(int sig, siginfo_t *info, void *context)
{
    (void)info;
    (void)context;
    if (__atomic_load_n(&g.writes_in_flight, __ATOMIC_ACQUIRE) > 0)
        return;
    int saved_errno = errno;
    hkrt_finish(1);
    hkrt_real_sigaction(sig, &g_old_xfsz, NULL);
    raise(sig);
    errno = saved_errno;
}

static HKRT_FN void hkrt_install_fatal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = hkrt_on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    /* SA_ONSTACK: on stack overflow the handler runs on the thread's alternate stack. Not
     * SA_NODEFER: a fault inside the handler then kills the process instead of recursing. */
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    for (int i = 0; i < HKRT_NFATAL; i++) {
        if (hkrt_real_sigaction(hkrt_fatal_signals[i], NULL, &g_old_actions[i]) != 0)
            continue;
        if (!(g_old_actions[i].sa_flags & SA_SIGINFO) && g_old_actions[i].sa_handler == SIG_IGN)
            continue; /* the program ignores it: leave that alone */
        if (hkrt_real_sigaction(hkrt_fatal_signals[i], &sa, NULL) == 0)
            g_handler_installed[i] = 1;
    }
    /* SIGXFSZ only where it has its default action: ignored or handled, writes just fail. */
    if (hkrt_real_sigaction(SIGXFSZ, NULL, &g_old_xfsz) == 0 && !(g_old_xfsz.sa_flags & SA_SIGINFO) &&
        g_old_xfsz.sa_handler == SIG_DFL) {
        sa.sa_sigaction = hkrt_on_xfsz;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        hkrt_real_sigaction(SIGXFSZ, &sa, NULL);
    }
}

/* Starts the runtime, under the lock. */
static HKRT_FN void hkrt_start_locked(void)
{
    __atomic_store_n(&g.image_pid, (int)getpid(), __ATOMIC_RELAXED);
    hkrt_read_options();
    g.clock_start = hkrt_clock_point_now();
    if (!g.once_done) {
        g.once_done = 1;
        /* Registered as early as possible: atexit handlers run in reverse order, so the file
         * is finished after the program's own handlers and its C++ static destructors. */
        atexit(hkrt_at_exit);
        at_quick_exit(hkrt_at_exit); /* quick_exit skips atexit handlers, not these */
        pthread_atfork(hkrt_atfork_prepare, hkrt_atfork_parent, hkrt_atfork_child);
        g.key_ok = pthread_key_create(&g.key, hkrt_thread_key_destructor) == 0;
        if (!g.key_ok)
            hkrt_warn("cannot create a pthread key; records will be counted as lost", NULL, 0);
        hkrt_install_fatal_handlers();
    }
    hkrt_open_file();
    hkrt_describe_state();
    if (g.ring || g.profile) {
        /* SIGUSR2 takes a snapshot, where the program leaves it at its default action. */
        struct sigaction old, sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = hkrt_on_snapshot_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        if (hkrt_real_sigaction(SIGUSR2, NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
            old.sa_handler == SIG_DFL)
            hkrt_real_sigaction(SIGUSR2, &sa, NULL);
    }
    /* The flag first: a hook in another thread that sees RUNNING also sees HOOKCC_DISABLE. */
    hkrt_set_enabled(g.user_enabled);
    __atomic_store_n(&g.state, HKRT_RUNNING, __ATOMIC_RELEASE);
}

/* Starts the runtime if nobody has. Called with the calling thread's busy flag held (see
 * hkrt_guard_enter), so that a hook run by a libc function it calls (interposed by the program
 * and instrumented) is counted as lost instead of coming back here. */
static HKRT_FN void hkrt_ensure_started(void)
{
    if (__atomic_load_n(&g.state, __ATOMIC_ACQUIRE) != HKRT_UNINIT)
        return;
    if (__atomic_load_n(&g.lock_owner, __ATOMIC_RELAXED) == hkrt_my_tid_for_lock())
        return; /* re-entered while this thread starts the runtime: spinning would deadlock */
    hkrt_lock();
    if (g.state == HKRT_UNINIT)
        hkrt_start_locked();
    hkrt_unlock();
}

/* Starts the runtime from outside a hook (constructor, public API). */
static HKRT_FN void hkrt_ensure_started_guarded(void)
{
    struct hkrt_thread *t = &t_self;
    if (__atomic_load_n(&g.state, __ATOMIC_ACQUIRE) != HKRT_UNINIT || !hkrt_guard_enter(t))
        return;
    hkrt_ensure_started();
    hkrt_guard_leave(t);
}
