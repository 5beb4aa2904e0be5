/* trace.c, part 15 of 16: fork.
 *
 * Fork: the atfork handlers (the child gets fresh counters and a file of its own).
 *
 * Relies on state.h, helpers.h, start.h, switches.h, modes.h.
 * Included only by trace.c, at its place in the order there: not a header of its own. */

/* ---------------------------------------------------------------------------------------- */
/* fork                                                                                     */

static HKRT_FN void hkrt_atfork_prepare(void)
{
    hkrt_lock(); /* no thread is halfway through changing the list when the copy is taken */
}

static HKRT_FN void hkrt_atfork_parent(void)
{
    hkrt_unlock();
}

/* The child has one thread, this one. It forgets the parent's threads and file, and starts a
 * file of its own: records this thread buffered before the fork are the parent's (the parent
 * writes them), so they are dropped here. The frames open at the fork close in the child as
 * unmatched exits. */
static HKRT_FN void hkrt_atfork_child(void)
{
    struct hkrt_thread *me = &t_self;
    int saved_errno = errno;
    __atomic_store_n(&g.lock_owner, 0, __ATOMIC_RELAXED);
    if (me->life == HKRT_THREAD_LIVE)
        me->tid = hkrt_gettid();
    hkrt_lock();
    for (struct hkrt_thread *t = g.threads, *next; t != NULL; t = next) {
        next = t->next;
        if (t == me)
            continue;
        /* Copies of other threads' memory, which no thread here will use. */
        if (t->map != NULL)
            munmap(t->map, t->map_size);
        if (t->spare_map != NULL)
            munmap(t->spare_map, t->spare_map_size);
        if (t->altstack != NULL)
            munmap(t->altstack, HKRT_ALTSTACK_SIZE);
        hkrt_cct_free(t);
    }
    g.threads = NULL;
    g.thread_seq = 0;
    /* No writer here: the parent's writes what the parent handed over (a buffer of ours that
     * it has is the parent's records: dropped, as the rest of them). */
    __atomic_store_n(&g.writer_running, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.writer_tid, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.queue, NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&me->handed, 0, __ATOMIC_RELAXED);
    if (me->life == HKRT_THREAD_LIVE) {
        me->prev = me->next = NULL;
        g.threads = me;
        me->sequence = ++g.thread_seq;
        me->pos = me->buf;
        hkrt_cct_free(me); /* the parent's calls: the parent writes them */
        __atomic_store_n(&me->lost, 0, __ATOMIC_RELAXED);
        me->final_written = 0;
    }
    if (hkrt_fd_is_trace(g.fd)) /* (not a number the program has reused since) */
        close(g.fd); /* the parent's file (its flock stays the parent's): never written here */
    g.fd = -1;
    hkrt_switches_after_fork(me);
    __atomic_store_n(&g.open_deferred, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.records, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.lost_reported, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.lost_unattributed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.finishing, 0, __ATOMIC_RELAXED);
    g.is_fork_child = 1;
    __atomic_store_n(&g.image_pid, (int)getpid(), __ATOMIC_RELAXED);
    if (g.state == HKRT_RUNNING) {
        int guarded = hkrt_guard_enter(me);
        g.clock_start = hkrt_clock_point_now();
        __atomic_store_n(&g.open_deferred, 1, __ATOMIC_RELEASE); /* see hkrt_file_ready */
        hkrt_set_enabled(g.user_enabled);
        if (guarded)
            hkrt_guard_leave(me);
    }
    hkrt_unlock();
    errno = saved_errno;
}

/* ---------------------------------------------------------------------------------------- */
/* clone() without CLONE_VM                                                                 */
/*
 * A child made by clone() without CLONE_VM has a copy of our memory, as a fork child does,
 * but glibc runs no atfork handlers for it: it went on with the parent's state, handed its
 * full buffer to a writer thread that exists only in the parent and waited for it forever,
 * or (HOOKCC_WRITER=0) wrote its chunks at offsets the parent also reserves, over the
 * parent's (issue 37). The program's calls to clone() come here (the executable's definition
 * interposes libc's; libc's own, for pthread_create, posix_spawn and fork, do not): without
 * CLONE_VM the child starts in hkrt_clone_child, which does what the fork handlers do (a file
 * of its own, fresh counters), runs the program's function, and finishes its trace when that
 * returns (the child then ends by the exit system call, which runs no atexit handler). With
 * CLONE_VM the child shares our memory, as a thread or a vfork child does: passed through
 * unchanged. Not covered: clone by syscall(), clone3. */
#if defined(__GLIBC__)
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000 /* <linux/sched.h>; older libc headers lack it */
#endif
extern int __clone(int (*fn)(void *), void *stack, int flags, void *arg, ...);

struct hkrt_clone_start {
    int (*fn)(void *);
    void *arg;
};

static HKRT_FN int hkrt_clone_child(void *start)
{
    /* Our own copy of the parent's frame in hookcc's clone below: the copy was taken after it
     * was filled in, and no one else writes it. */
    struct hkrt_clone_start s = *(const struct hkrt_clone_start *)start;
    hkrt_atfork_child();
    int status = s.fn(s.arg);
    if (__atomic_load_n(&g.image_pid, __ATOMIC_RELAXED) == (int)syscall(SYS_getpid))
        hkrt_finish(0);
    return status;
}

HKRT_EXPORT __attribute__((weak)) int clone(int (*fn)(void *), void *stack, int flags, void *arg,
                                            ...)
{
    /* The optional arguments are positional: one is there if it or a later one is used. */
    void *ptid = NULL, *tls = NULL, *ctid = NULL;
    int want_ctid = (flags & (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID)) != 0;
    int want_tls = want_ctid || (flags & CLONE_SETTLS) != 0;
    int want_ptid = want_tls || (flags & (CLONE_PARENT_SETTID | CLONE_PIDFD)) != 0;
    va_list ap;
    va_start(ap, arg);
    if (want_ptid)
        ptid = va_arg(ap, void *);
    if (want_tls)
        tls = va_arg(ap, void *);
    if (want_ctid)
        ctid = va_arg(ap, void *);
    va_end(ap);
    if (flags & CLONE_VM)
        return __clone(fn, stack, flags, arg, ptid, tls, ctid);
    struct hkrt_clone_start start = {fn, arg};
    hkrt_atfork_prepare();
    int pid = __clone(hkrt_clone_child, stack, flags, &start, ptid, tls, ctid);
    int saved_errno = errno;
    hkrt_atfork_parent();
    errno = saved_errno;
    return pid;
}
#endif

/* ---------------------------------------------------------------------------------------- */
/* daemon()                                                                                 */
/*
 * libc's daemon() forks and ends the parent with its own internal _exit, which the runtime's
 * _exit (finish.h) never sees: the parent's trace was left unfinished, its buffered records
 * gone and "lost 0" (issue 37). The program's calls to daemon() come here instead (weak: a
 * program's own definition wins), which does what glibc's does, in the same order, but
 * through fork() (the atfork handlers give the child its own file) and the runtime's _exit
 * (the parent's file is finished): the parent exits 0; the child becomes a session leader,
 * moves to / unless `nochdir`, and puts /dev/null on descriptors 0, 1 and 2 unless `noclose`
 * (refused with ENODEV if /dev/null is not the null device). */
HKRT_EXPORT __attribute__((weak)) int daemon(int nochdir, int noclose)
{
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid > 0)
        _exit(0);
    if (setsid() < 0)
        return -1;
    if (!nochdir && chdir("/") != 0)
        return -1; /* (glibc ignores this failure; / is always there) */
    if (noclose)
        return 0;
    int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st = {0};
    if (fstat(fd, &st) != 0 || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3)) {
        int err = errno;
        close(fd);
        errno = S_ISCHR(st.st_mode) ? err : ENODEV;
        return -1;
    }
    for (int std = 0; std <= 2; std++)
        if (fd != std)
            dup2(fd, std); /* dup2 clears close-on-exec on the copies */
    if (fd > 2)
        close(fd);
    return 0;
}
