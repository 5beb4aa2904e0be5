/* trace.c, part 15 of 19: fork.
 *
 * Fork: the atfork handlers (the child gets fresh counters and a file of its own); and the
 * other process events the runtime interposes for the same reason: clone() without CLONE_VM,
 * daemon(), the exec functions; and dlclose (UNLOAD chunks).
 *
 * Relies on functions.h, state.h, helpers.h, chunks.h, output.h, switches.h, modes.h, finish.h;
 * hkrt_control_forget through declarations.h.
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
    hkrt_control_forget(); /* the parent's socket: the child has none */
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
        if (t->spill != NULL)
            munmap(t->spill, HKRT_SPILL_SLOTS * sizeof *t->spill);
        hkrt_cct_free(t);
    }
    g.threads = NULL;
    g.thread_seq = 0;
    /* The counts cached before the fork are the parent's. */
    memset(me->counts, 0, sizeof me->counts);
    if (me->spill != NULL)
        memset(me->spill, 0, HKRT_SPILL_SLOTS * sizeof *me->spill);
    me->spill_used = 0;
    /* A parent's thread that held the switches' lock is not here to let it go. */
    __atomic_store_n(&g_fn_lock, 0, __ATOMIC_RELAXED);
    hkrt_throttle_counts_reset();
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
        me->resume_from = NULL; /* (the parent's failed exec, see "exec") */
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

/* ---------------------------------------------------------------------------------------- */
/* exec                                                                                     */
/*
 * exec replaces the image without atexit handlers: the records the old image had buffered
 * were gone, and its file left unfinished (issue 37: a program that calls work() 10 times
 * and execs itself kept only the last image's calls; each earlier file 456 bytes, 0 records,
 * "lost 0"). The program's calls to the exec functions come here (the executable's
 * definitions interpose libc's; libc's own, in posix_spawn or system, do not, and their
 * images start after a fork whose child has nothing buffered): the file is finished first
 * (hkrt_exec_prepare), then the kernel's execve is called directly (the runtime's execvp
 * searches PATH itself, as glibc's does). If the exec fails the process goes on, and so does
 * the trace (hkrt_exec_resume), in a file of its own (the next free name, as a new image
 * would take: the finished one stays as it is): the calling thread starts on an empty buffer;
 * another thread drops, before its next write, the records the finish wrote for it
 * (hkrt_drop_written). Context switches are recorded again for the calling thread only.
 * Under HOOKCC_MODE=ring or profile, or HOOKCC_MIN_DURATION (whose folded state would be
 * written twice), recording stays off after a failed exec, with one warning.
 * In a vfork child (it shares our memory, and so our file) nothing is done, as for _exit. */

/* Finishes the file before an exec; returns 1 if hkrt_exec_resume must follow a failure. */
static HKRT_FN int hkrt_exec_prepare(void)
{
    if (__atomic_load_n(&g.image_pid, __ATOMIC_RELAXED) != (int)syscall(SYS_getpid) ||
        __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) != HKRT_RUNNING ||
        __atomic_load_n(&g.finishing, __ATOMIC_ACQUIRE))
        return 0;
    /* A fork child whose file is still to open (at its first chunk) and that has nothing to
     * put in it: no file, as before, and no finish, whose clock calibration could wait up to a
     * millisecond before the exec of every child a shell or a server starts. */
    struct hkrt_thread *me = &t_self;
    if (__atomic_load_n(&g.open_deferred, __ATOMIC_ACQUIRE) &&
        (g.threads == NULL || (g.threads == me && me->next == NULL)) &&
        (me->pos == NULL || me->pos == me->buf) &&
        __atomic_load_n(&me->lost, __ATOMIC_RELAXED) == 0 &&
        __atomic_load_n(&g.lost_unattributed, __ATOMIC_RELAXED) == 0)
        return 0;
    int saved_errno = errno;
    hkrt_finish(0);
    errno = saved_errno;
    return __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == HKRT_FINISHED &&
           __atomic_load_n(&g.finisher_tid, __ATOMIC_ACQUIRE) == (int)hkrt_gettid();
}

/* The exec failed: recording goes on in a new file (see above). */
static HKRT_FN void hkrt_exec_resume(void)
{
    int saved_errno = errno;
    if (g.ring || g.profile || g.min_duration_ns != 0) {
        hkrt_warn("an exec failed after the trace was finished for it: later records are not "
                  "recorded (HOOKCC_MODE=ring or profile, or HOOKCC_MIN_DURATION)",
                  g.path, 0);
        errno = saved_errno;
        return;
    }
    struct hkrt_thread *me = &t_self;
    hkrt_lock();
    for (struct hkrt_thread *t = g.threads; t != NULL; t = t->next) {
        if (!t->final_written)
            continue; /* the finish could not take it: nothing of it was written */
        t->final_written = 0;
        __atomic_store_n(&t->count_closed, 0, __ATOMIC_RELAXED); /* its cache counts again */
        if (t == me) {
            if (t->pos != NULL)
                t->pos = t->buf; /* not in a hook: pos is the real one */
        } else {
            t->resume_from = t->final_upto;
        }
        __atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE); /* taken by the finish */
    }
    if (hkrt_fd_is_trace(g.fd))
        close(g.fd); /* finished: the next image of this pid will not take its name */
    __atomic_store_n(&g.fd, -1, __ATOMIC_RELEASE);
    __atomic_store_n(&g.records, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.lost_reported, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.lost_unattributed, 0, __ATOMIC_RELAXED);
    hkrt_throttle_counts_reset(); /* the earlier file's THROTTLE chunks have them */
    g.clock_start = hkrt_clock_point_now();
    __atomic_store_n(&g.open_deferred, 1, __ATOMIC_RELEASE); /* the next free name */
    __atomic_store_n(&g.finisher_tid, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&g.state, HKRT_RUNNING, __ATOMIC_RELEASE);
    __atomic_store_n(&g.finishing, 0, __ATOMIC_RELEASE);
    if (me->life == HKRT_THREAD_LIVE)
        hkrt_switches_open(me);
    hkrt_set_enabled(g.user_enabled);
    hkrt_unlock();
    errno = saved_errno;
}

extern char **environ;

/* The exec system call itself (no libc wrapper: libc's execve is ours here). */
static HKRT_FN int hkrt_sys_execve(const char *path, char *const argv[], char *const envp[])
{
    return (int)syscall(SYS_execve, path, argv, envp);
}

/* A file execve refused as no executable format (ENOEXEC): run by /bin/sh, as POSIX's execvp
 * and glibc do. */
static HKRT_FN int hkrt_exec_script(const char *path, char *const argv[], char *const envp[])
{
    size_t argc = 0;
    while (argv[argc] != NULL)
        argc++;
    char *shell_argv[argc + 3];
    shell_argv[0] = (char *)"/bin/sh";
    shell_argv[1] = (char *)(uintptr_t)path;
    for (size_t i = 1; i <= argc; i++) /* argv[1..], and its NULL */
        shell_argv[i + 1] = argv[i];
    if (argc == 0)
        shell_argv[2] = NULL;
    return hkrt_sys_execve("/bin/sh", shell_argv, envp);
}

/* execvpe's search: `file` itself if it has a '/', else each directory of PATH (default
 * /bin:/usr/bin; an empty entry is the working directory). ENOEXEC: by /bin/sh; EACCES is
 * remembered and the search goes on; a name not found (ENOENT, ENOTDIR, ESTALE, ENODEV,
 * ETIMEDOUT) goes on; any other error ends it. Returns -1 (errno set). */
static HKRT_FN int hkrt_exec_search(const char *file, char *const argv[], char *const envp[])
{
    if (file[0] == '\0') {
        errno = ENOENT;
        return -1;
    }
    if (strchr(file, '/') != NULL) {
        hkrt_sys_execve(file, argv, envp);
        if (errno == ENOEXEC)
            hkrt_exec_script(file, argv, envp);
        return -1;
    }
    size_t flen = strlen(file);
    if (flen > NAME_MAX) {
        errno = ENAMETOOLONG;
        return -1;
    }
    const char *dirs = getenv("PATH");
    if (dirs == NULL)
        dirs = "/bin:/usr/bin";
    int saw_eacces = 0;
    for (const char *p = dirs;; p++) {
        const char *end = strchrnul(p, ':');
        size_t dlen = (size_t)(end - p);
        char path[PATH_MAX];
        if (dlen + 1 + flen < sizeof path) {
            memcpy(path, p, dlen);
            size_t at = dlen;
            if (dlen != 0)
                path[at++] = '/';
            memcpy(path + at, file, flen + 1);
            hkrt_sys_execve(path, argv, envp);
            switch (errno) {
            case ENOEXEC:
                hkrt_exec_script(path, argv, envp);
                return -1;
            case EACCES:
                saw_eacces = 1;
                break;
            case ENOENT:
            case ENOTDIR:
            case ESTALE:
            case ENODEV:
            case ETIMEDOUT:
            case ENAMETOOLONG:
                break;
            default:
                return -1;
            }
        }
        if (*end == '\0')
            break;
        p = end;
    }
    errno = saw_eacces ? EACCES : ENOENT;
    return -1;
}

/* Weak, like _exit: a program's own definitions win. */
HKRT_EXPORT __attribute__((weak)) int execve(const char *path, char *const argv[],
                                             char *const envp[])
{
    int resume = hkrt_exec_prepare();
    int r = hkrt_sys_execve(path, argv, envp);
    if (resume)
        hkrt_exec_resume();
    return r;
}

HKRT_EXPORT __attribute__((weak)) int execv(const char *path, char *const argv[])
{
    return execve(path, argv, environ);
}

HKRT_EXPORT __attribute__((weak)) int execvpe(const char *file, char *const argv[],
                                              char *const envp[])
{
    int resume = hkrt_exec_prepare();
    int r = hkrt_exec_search(file, argv, envp);
    if (resume)
        hkrt_exec_resume();
    return r;
}

HKRT_EXPORT __attribute__((weak)) int execvp(const char *file, char *const argv[])
{
    return execvpe(file, argv, environ);
}

HKRT_EXPORT __attribute__((weak)) int fexecve(int fd, char *const argv[], char *const envp[])
{
    int resume = hkrt_exec_prepare();
    int r = -1;
#if defined(SYS_execveat)
    r = (int)syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
    if (errno == ENOSYS)
#endif
    {
        /* Through /proc, as libc does where execveat is missing. */
        char path[40] = "/proc/self/fd/";
        char digits[24];
        digits[hkrt_u64_to_dec((uint64_t)(unsigned)fd, digits)] = '\0';
        hkrt_append(path, sizeof path, digits);
        r = hkrt_sys_execve(path, argv, envp);
    }
    if (resume)
        hkrt_exec_resume();
    return r;
}

/* The list forms: their arguments gathered into an argv on the stack. */
#define HKRT_GATHER_ARGS(first, last_arg, argv_name)                                          \
    size_t argc_ = 1;                                                                          \
    va_list ap_;                                                                               \
    va_start(ap_, last_arg);                                                                   \
    while (va_arg(ap_, char *) != NULL)                                                        \
        argc_++;                                                                               \
    va_end(ap_);                                                                               \
    char *argv_name[argc_ + 1];                                                                \
    argv_name[0] = (char *)(uintptr_t)(first);                                                 \
    va_start(ap_, last_arg);                                                                   \
    for (size_t i_ = 1; i_ <= argc_; i_++)                                                     \
        argv_name[i_] = va_arg(ap_, char *); /* the last is the NULL */

HKRT_EXPORT __attribute__((weak)) int execl(const char *path, const char *arg, ...)
{
    HKRT_GATHER_ARGS(arg, arg, argv)
    va_end(ap_);
    return execve(path, argv, environ);
}

HKRT_EXPORT __attribute__((weak)) int execlp(const char *file, const char *arg, ...)
{
    HKRT_GATHER_ARGS(arg, arg, argv)
    va_end(ap_);
    return execvpe(file, argv, environ);
}

HKRT_EXPORT __attribute__((weak)) int execle(const char *path, const char *arg, ...)
{
    HKRT_GATHER_ARGS(arg, arg, argv)
    char *const *envp = va_arg(ap_, char *const *); /* after the NULL */
    va_end(ap_);
    return execve(path, argv, envp);
}

/* ---------------------------------------------------------------------------------------- */
/* dlclose                                                                                  */
/*
 * A library that dlclose unloads leaves its addresses free, and the loader often puts the
 * next one dlopen'ed there: the reader, which names an address by the module that holds it,
 * then named the first library's calls with the second's functions (issue 37: `frame_dummy`
 * 4 000, no warning). The program's calls to dlclose come here: the modules loaded before the
 * call are noted (in g_unload, no malloc), libc's dlclose runs (with the library's
 * destructors, recorded as usual), and every module gone after it gets an UNLOAD chunk: the
 * module, its path, and the tick when it was gone (docs/trace-format.md), by which the reader
 * names each record by the module loaded when it was made. At most HKRT_UNLOAD_MODULES
 * modules and HKRT_UNLOAD_NAMES bytes of their paths are noted; modules past that are not
 * followed. A dlclose called from a destructor that dlclose runs is passed through unnoted
 * (the outer call sees what it unloads). libc's own unloads (a failed dlopen's cleanup) are not
 * seen. An unloaded file's records go with it: the runtime forgets them (hkrt_fn_forget), after
 * writing what its throttled functions counted (THROTTLE); counts another thread still holds
 * in its cache for them are dropped. */
#define HKRT_UNLOAD_MODULES 512
#define HKRT_UNLOAD_NAMES (64u * 1024u)

static struct {
    int owner; /* atomic: the TID of the thread inside a noted dlclose, 0 if none */
    unsigned n;
    size_t names_used;
    struct {
        struct hkt_module module;
        uint32_t name; /* offset in names */
        int still_loaded;
    } entries[HKRT_UNLOAD_MODULES];
    char names[HKRT_UNLOAD_NAMES];
} g_unload;

static HKRT_FN int hkrt_unload_note(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct hkt_module module;
    const char *name;
    if (!hkrt_module_of(info, data, &module, &name) || g_unload.n == HKRT_UNLOAD_MODULES)
        return 0;
    size_t len = strlen(name) + 1;
    if (len > HKRT_UNLOAD_NAMES - g_unload.names_used)
        return 0;
    memcpy(g_unload.names + g_unload.names_used, name, len);
    g_unload.entries[g_unload.n].module = module;
    g_unload.entries[g_unload.n].name = (uint32_t)g_unload.names_used;
    g_unload.entries[g_unload.n].still_loaded = 0;
    g_unload.names_used += len;
    g_unload.n++;
    return 0;
}

static HKRT_FN int hkrt_unload_mark(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct hkt_module module;
    const char *name;
    if (!hkrt_module_of(info, data, &module, &name))
        return 0;
    for (unsigned i = 0; i < g_unload.n; i++)
        if (memcmp(&g_unload.entries[i].module, &module, sizeof module) == 0 &&
            strcmp(g_unload.names + g_unload.entries[i].name, name) == 0)
            g_unload.entries[i].still_loaded = 1;
    return 0;
}

#pragma weak dlsym /* a static program that never calls it has none: dlclose then unloads nothing */

HKRT_EXPORT __attribute__((weak)) int dlclose(void *handle)
{
    static int (*real_dlclose)(void *);
    int (*real)(void *) = __atomic_load_n(&real_dlclose, __ATOMIC_ACQUIRE);
    if (real == NULL) {
        if (dlsym == NULL)
            return 0;
        real = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
        if (real == NULL)
            return 0;
        __atomic_store_n(&real_dlclose, real, __ATOMIC_RELEASE);
    }
    int me = (int)hkrt_gettid();
    int noted = __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == HKRT_RUNNING &&
                __atomic_load_n(&g_unload.owner, __ATOMIC_ACQUIRE) != me;
    if (noted) {
        int expected = 0;
        while (!__atomic_compare_exchange_n(&g_unload.owner, &expected, me, 0, __ATOMIC_ACQUIRE,
                                            __ATOMIC_RELAXED)) {
            expected = 0;
            sched_yield();
        }
        g_unload.n = 0;
        g_unload.names_used = 0;
        struct hkrt_module_walk walk = {0, (uintptr_t)getauxval(AT_SYSINFO_EHDR), NULL};
        dl_iterate_phdr(hkrt_unload_note, &walk);
        /* What this thread counted and the throttled functions' counts, while every record is
         * still there. */
        if (t_self.life == HKRT_THREAD_LIVE && hkrt_guard_enter(&t_self)) {
            hkrt_counts_flush(&t_self, 0);
            hkrt_guard_leave(&t_self);
        }
        hkrt_throttle_snapshot();
    }
    int r = real(handle);
    if (noted) {
        int saved_errno = errno;
        uint64_t tick = hkrt_ticks(); /* after the library's destructors */
        struct hkrt_module_walk walk = {0, (uintptr_t)getauxval(AT_SYSINFO_EHDR), NULL};
        dl_iterate_phdr(hkrt_unload_mark, &walk);
        for (unsigned i = 0; i < g_unload.n; i++) {
            if (g_unload.entries[i].still_loaded)
                continue;
            /* Its records are gone: what its throttled functions counted, then forgotten. */
            struct hkt_module *m = &g_unload.entries[i].module;
            if (hkrt_file_ready())
                hkrt_write_throttled(m->start, m->end, 1);
            hkrt_fn_forget(m->start, m->end);
            if (!hkrt_file_ready())
                continue;
            struct hkt_unload unload = {g_unload.entries[i].module, tick};
            hkrt_write_chunk(HKT_CHUNK_UNLOAD, 0, &unload, sizeof unload,
                             g_unload.names + g_unload.entries[i].name);
        }
        __atomic_store_n(&g_unload.owner, 0, __ATOMIC_RELEASE);
        errno = saved_errno;
    }
    return r;
}
