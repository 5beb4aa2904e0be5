/* trace.c, part 7 of 19: output.
 *
 * The output file: its name (HOOKCC_OUTPUT or the default, the next free one after fork or exec),
 * claiming it (never truncating a live process's trace or a file that is not a trace), opening it
 * and writing its first chunks (header, EXE, MODULE, OVERHEAD).
 *
 * Relies on state.h, helpers.h, chunks.h (the first chunks) and options.h (the path).
 * Included only by trace.c, at its place in the order there: not a header of its own. */

/* The file name for attempt `attempt` (0, 1, ...): HOOKCC_OUTPUT, or <program>.<pid>.hktrace.
 * A name already taken (hkrt_claim_file) moves to the next attempt, which inserts ".<pid>",
 * then ".<pid>-2", ".<pid>-3", ... before a final ".hktrace" (appended if there is none); the
 * default name, which has the pid already, gets "-2", "-3", .... A forked child starts at
 * ".<pid>": it must not truncate its parent's HOOKCC_OUTPUT. */
static HKRT_FN void hkrt_make_path(uint64_t pid, int attempt)
{
    static const char ext[] = ".hktrace";
    char dec[24];
    hkrt_u64_to_dec(pid, dec);
    g.path[0] = '\0';
    int with_pid;
    if (g.output_env[0] == '\0') {
        const char *name = program_invocation_short_name;
        hkrt_append(g.path, sizeof g.path, name != NULL && name[0] != '\0' ? name : "hookcc");
        hkrt_append(g.path, sizeof g.path, ".");
        hkrt_append(g.path, sizeof g.path, dec);
        hkrt_append(g.path, sizeof g.path, ext);
        with_pid = 0; /* the name has it */
    } else {
        hkrt_append(g.path, sizeof g.path, g.output_env);
        if (g.is_fork_child)
            attempt++;
        with_pid = attempt > 0;
        attempt--;
    }
    if (!with_pid && attempt <= 0)
        return;
    size_t len = strlen(g.path), elen = sizeof ext - 1;
    int has_ext = len > elen && strcmp(g.path + len - elen, ext) == 0;
    if (has_ext)
        g.path[len - elen] = '\0';
    if (with_pid) {
        hkrt_append(g.path, sizeof g.path, ".");
        hkrt_append(g.path, sizeof g.path, dec);
    }
    if (attempt > 0) {
        hkrt_u64_to_dec((uint64_t)attempt + 1, dec);
        hkrt_append(g.path, sizeof g.path, "-");
        hkrt_append(g.path, sizeof g.path, dec);
    }
    if (has_ext || g.output_env[0] == '\0')
        hkrt_append(g.path, sizeof g.path, ext);
}

enum hkrt_claim { HKRT_CLAIMED, HKRT_TAKEN, HKRT_REFUSED, HKRT_NOT_OURS };

/* Decides whether the file just opened as fd may become this process's trace, and empties it
 * if so. Nothing is truncated at open: an exec'd image inherits HOOKCC_OUTPUT and would
 * otherwise destroy the trace its parent is still writing (or its own previous image's).
 * - taken: another live process writes it (it holds the flock every writer keeps for as long
 *   as it runs), or it is a trace this process's earlier image (same pid, before an exec)
 *   left: the caller tries the next name;
 * - refused: a non-empty regular file that is not a hookcc trace: left alone;
 * - not ours: an empty file or a stale trace that another user owns, or that others may read
 *   (a file planted where a setuid program's trace would go): never written into; the caller
 *   replaces it with a new file, or takes the next name;
 * - claimed: empty, or a stale trace (a previous run's), of ours and 0600, or not a regular
 *   file (/dev/null, a pipe): locked and, if a regular file, emptied. */
static HKRT_FN enum hkrt_claim hkrt_claim_file(int fd, uint64_t pid)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        return HKRT_CLAIMED; /* /dev/null, a pipe: shared by any number of writers */
    int ours = st.st_uid == geteuid() && (st.st_mode & 077) == 0;
    int r;
    do
        r = flock(fd, LOCK_EX | LOCK_NB);
    while (r != 0 && errno == EINTR);
    if (r != 0 && errno == EWOULDBLOCK)
        return HKRT_TAKEN;
    /* Other flock errors (a file system without locks): go on with the header check. */
    if (st.st_size == 0)
        return ours ? HKRT_CLAIMED : HKRT_NOT_OURS;
    struct hkt_header old;
    ssize_t n = pread(fd, &old, sizeof old, 0);
    if (n < (ssize_t)HKT_MAGIC_SIZE || memcmp(old.magic, HKT_MAGIC, HKT_MAGIC_SIZE) != 0)
        return HKRT_REFUSED;
    if (n == (ssize_t)sizeof old && old.pid == pid)
        return HKRT_TAKEN;
    if (!ours)
        return HKRT_NOT_OURS;
    if (ftruncate(fd, 0) != 0)
        return HKRT_REFUSED;
    return HKRT_CLAIMED;
}

/* Opens the first free name (hkrt_make_path, hkrt_claim_file) as g.fd, -1 on failure
 * (warned). */
static HKRT_FN int hkrt_open_output(uint64_t pid)
{
    /* The policy of every hookcc runtime (docs/reliability.md): a symlink is never followed
     * (a name with a guessable pid could be one planted to make us write another file; and a
     * symlink's target is no previous trace of ours to replace), and the file is created
     * 0600: a trace is the program's call history. O_RDWR: the header of an existing file is
     * read before it is reused. */
    int flags = O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW;
    int replaced = 0; /* the name's file was not ours and was removed: create it anew */
    for (int attempt = 0; attempt < HKRT_MAX_NAME_TRIES; attempt++) {
        hkrt_make_path(pid, attempt);
        /* A relative name is the start directory's (a fork child may have moved). */
        char where[PATH_MAX];
        where[0] = '\0';
        if (g.path[0] != '/' && g.start_dir[0] != '\0') {
            hkrt_append(where, sizeof where, g.start_dir);
            hkrt_append(where, sizeof where, "/");
        }
        hkrt_append(where, sizeof where, g.path);
        /* A FIFO is written, not read: opened write-only, and never read-write even for a
         * moment (a reader waiting in its open would take our open and close for the end of
         * the trace), so that a reader going away fails our writes (EPIPE) instead of leaving
         * them to fill a pipe that only we hold open. No reader within HKRT_FIFO_WAIT_MS is
         * an error (hkrt_open_fifo). */
        struct stat at;
        if (lstat(where, &at) == 0 && S_ISFIFO(at.st_mode)) {
            int fd = hkrt_open_fifo(where);
            if (fd < 0) {
                hkrt_warn_hint("cannot write the trace to the FIFO", g.path, errno,
                               errno == ENXIO ? " (no process read it within 5 s); records "
                                                "are counted as lost"
                                              : "; records are counted as lost");
                return -1;
            }
            g.opened_path[0] = '\0';
            hkrt_append(g.opened_path, sizeof g.opened_path, where);
            return hkrt_fd_move_high(fd);
        }
        int fd;
        do
            fd = open(where, flags | (replaced ? O_EXCL : 0), 0600);
        while (fd < 0 && errno == EINTR);
        if (fd < 0 && replaced && errno == EEXIST) { /* someone else made it meanwhile */
            replaced = 0;
            continue;
        }
        if (fd < 0 && errno == ELOOP) {
            hkrt_warn_hint("not writing the trace through the symbolic link", g.path, 0,
                           " (hookcc never follows one; give the path it points to); records "
                           "are counted as lost");
            return -1;
        }
        if (fd < 0) {
            hkrt_warn_hint("cannot open trace file", g.path, errno,
                           "; records are counted as lost (set HOOKCC_OUTPUT to a writable path)");
            return -1;
        }
        switch (hkrt_claim_file(fd, pid)) {
        case HKRT_CLAIMED:
            g.opened_path[0] = '\0';
            hkrt_append(g.opened_path, sizeof g.opened_path, where);
            return hkrt_fd_move_high(fd); /* (chunks.h, "The trace's descriptor") */
        case HKRT_NOT_OURS:
            /* Not written into: replaced by a file of our own, 0600, if the directory lets us
             * remove it (same name, O_EXCL); else the next name. */
            close(fd);
            if (!replaced && unlink(where) == 0) {
                replaced = 1;
                attempt--;
            } else {
                replaced = 0;
            }
            break;
        case HKRT_REFUSED:
            close(fd);
            hkrt_warn_hint("not overwriting", g.path, 0,
                           ": it exists and is not a hookcc trace; records are counted as lost");
            return -1;
        case HKRT_TAKEN:
            close(fd);
            replaced = 0;
            break;
        }
    }
    hkrt_warn_hint("every trace file name is in use, up to", g.path, 0,
                   "; records are counted as lost");
    return -1;
}

/* Opens the file and writes the header, EXE and MODULE chunks. On failure, warns once; hooks
 * still run and count their records as lost. */
static HKRT_FN void hkrt_open_file(void)
{
    uint64_t pid = (uint64_t)getpid();
    int fd = hkrt_open_output(pid);
    __atomic_store_n(&g.write_failed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.write_warned, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g.failed_off, UINT64_MAX, __ATOMIC_RELAXED);
    __atomic_store_n(&g.space_stopped, 0, __ATOMIC_RELAXED);
    g.fd = fd;
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) != 0)
        memset(&st, 0, sizeof st);
    g.fd_regular = S_ISREG(st.st_mode);
    /* No offsets (chunks.h, "stream"): ESPIPE from lseek, as from pwrite. */
    g.fd_stream = lseek(fd, 0, SEEK_CUR) < 0 && errno == ESPIPE;
    g.fd_dev = st.st_dev;
    g.fd_ino = st.st_ino;

    struct hkt_header *h = &g.header;
    memset(h, 0, sizeof *h);
    memcpy(h->magic, HKT_MAGIC, HKT_MAGIC_SIZE);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    h->endian = HKT_ENDIAN_BIG;
#else
    h->endian = HKT_ENDIAN_LITTLE;
#endif
    h->pointer_size = (uint8_t)sizeof(void *);
    h->version = g.profile || g.min_duration_ns != 0 ? HKT_VERSION_PROFILE : HKT_VERSION;
    h->header_size = HKT_HEADER_SIZE;
    h->ticks_per_second = 0; /* set when the file is finished */
    h->pid = pid;
    h->flags = HKT_FLAG_CHECKED | (g.sw_switches ? HKT_FLAG_SWITCH_REASONS : 0) |
               (g.fd_stream ? HKT_FLAG_STREAM : 0);
    /* The wall clock at the CLOCK chunk's first_tick (g.clock_start, taken earlier: a fork
     * child opens its file at its first record), so that traces of several processes line up
     * on it (hookprof timeline A B …). */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    uint64_t wall = (uint64_t)now.tv_sec * UINT64_C(1000000000) + (uint64_t)now.tv_nsec;
    uint64_t mono = hkrt_monotonic_ns();
    if (g.clock_start.ns != 0 && g.clock_start.ns <= mono && mono - g.clock_start.ns < wall)
        wall -= mono - g.clock_start.ns;
    h->start_realtime_ns = wall;
    __atomic_store_n(&g.file_end, (uint64_t)HKT_HEADER_SIZE, __ATOMIC_RELAXED);
    if (!hkrt_pwrite_all(h, sizeof *h, 0))
        return;

    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    hkrt_write_chunk(HKT_CHUNK_EXE, 0, NULL, 0, exe);
    hkrt_write_modules();
    if (g.overhead.pairs != 0) /* a fork child's file: measured by the parent */
        hkrt_write_chunk(HKT_CHUNK_OVERHEAD, 0, &g.overhead, sizeof g.overhead, NULL);
}

/* hkrt_file_ok, after opening a fork child's file if that is still to do. A child made by
 * fork() opens its file when it first has a chunk to write (or its path is asked for), not at
 * the fork: a child that only calls exec (or _exit) then leaves no empty file behind. Takes
 * the lock unless this thread holds it or is the finisher (which may run without it). */
static HKRT_FN int hkrt_file_ready(void)
{
    if (HKRT_UNLIKELY(__atomic_load_n(&g.open_deferred, __ATOMIC_ACQUIRE))) {
        int me = hkrt_my_tid_for_lock();
        int lock = __atomic_load_n(&g.lock_owner, __ATOMIC_RELAXED) != me &&
                   __atomic_load_n(&g.finisher_tid, __ATOMIC_ACQUIRE) != me;
        if (lock)
            hkrt_lock();
        if (__atomic_load_n(&g.open_deferred, __ATOMIC_ACQUIRE)) {
            hkrt_open_file();
            __atomic_store_n(&g.open_deferred, 0, __ATOMIC_RELEASE);
        }
        if (lock)
            hkrt_unlock();
    }
    return hkrt_file_ok();
}
