/* trace.c, part 6 of 19: chunks.
 *
 * The file writer: writing chunks at offsets reserved with one atomic add, their CHECK checksums,
 * write failures, the free-space limit, a thread's records as raw EVENTS (HOOKCC_PACK=0), a
 * thread's name, and the MODULE chunks. A thread's buffer as a whole is written by buffers.h.
 *
 * Relies on state.h, helpers.h.
 * Included only by trace.c, at its place in the order there: not a header of its own. */

/* ---------------------------------------------------------------------------------------- */
/* Writing chunks                                                                           */

static HKRT_FN int hkrt_file_ok(void)
{
    return g.fd >= 0 && !__atomic_load_n(&g.write_failed, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------------------------------- */
/* The trace's descriptor                                                                   */
/*
 * The descriptor is the program's to close: a daemon's closefrom(3), close_range() or a
 * close() loop closes it too, and the program's next open() gets its number; started with
 * stdout or stderr closed, open() gives the trace 1 or 2. Before, the chunks then went into
 * the program's file (issue 37: a 5000-byte file left with a trace header in it) or the
 * program's printf text into the trace. So the descriptor is kept high (hkrt_fd_move_high:
 * an open() takes the lowest free number, and ours is reached only by a program that has
 * every number below it open), and every write first checks that the descriptor is still
 * the file that was opened (fstat: device and inode; one system call per chunk, none in the
 * hooks). If it is not, the file is opened again by its path (no O_CREAT, no truncation, the
 * same device and inode, its flock taken again: closing our descriptor released it), and
 * only if that fails are the records counted as lost, with a warning naming the cause. The
 * old number is never closed or written: it is the program's now.
 * Not covered: a close and a reuse of the number between the check and the pwrite (a window
 * of a system call); a program that keeps every number below ours open when it reuses it. */

/* Moves fd to a high number (close-on-exec), for a program that opens files after closing
 * descriptors; returns the descriptor to use (fd itself if no higher one is free). */
static HKRT_FN int hkrt_fd_move_high(int fd)
{
    int floor = 1000;
    struct rlimit lim;
    if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY &&
        lim.rlim_cur <= (rlim_t)floor + 1)
        floor = (int)(lim.rlim_cur / 2);
    while (floor > 3 && floor > fd) {
        int high = fcntl(fd, F_DUPFD_CLOEXEC, floor);
        if (high >= 0) {
            close(fd);
            return high;
        }
        floor /= 2;
    }
    if (fd > 2)
        return fd;
    int above = fcntl(fd, F_DUPFD_CLOEXEC, 3); /* never 0, 1 or 2 */
    if (above < 0)
        return fd;
    close(fd);
    return above;
}

/* A FIFO opened for writing once a process reads it, waiting up to HKRT_FIFO_WAIT_MS for one
 * (a reader started beside the program may come a little later; an exec'd image whose
 * reader saw the end of its predecessor's trace must not wait forever, as a plain blocking
 * open would): else -1, ENXIO. Writes then block while the pipe is full, as any writer's do. */
#define HKRT_FIFO_WAIT_MS 5000
static HKRT_FN int hkrt_open_fifo(const char *path)
{
    int fd;
    for (int waited = 0;; waited += 10) {
        do
            fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        while (fd < 0 && errno == EINTR);
        if (fd >= 0 || errno != ENXIO || waited >= HKRT_FIFO_WAIT_MS)
            break;
        struct timespec pause = {0, 10000000};
        nanosleep(&pause, NULL);
    }
    if (fd >= 0)
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return fd;
}

/* Whether fd is still the trace file that was opened. */
static HKRT_FN int hkrt_fd_is_trace(int fd)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == g.fd_dev && st.st_ino == g.fd_ino;
}

/* Opens the trace again by the path it was opened by; -1 if that is not the same file, or its
 * lock is someone else's now. */
static HKRT_FN int hkrt_fd_reopen(void)
{
    if (g.opened_path[0] == '\0')
        return -1;
    int fd;
    if (g.fd_stream)
        fd = hkrt_open_fifo(g.opened_path); /* (fails on a terminal or a socket) */
    else
        do
            fd = open(g.opened_path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return -1;
    if (!hkrt_fd_is_trace(fd) ||
        (g.fd_regular && flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK)) {
        close(fd);
        return -1;
    }
    return hkrt_fd_move_high(fd);
}

/* The trace's descriptor, checked (see above): reopened if the program closed or replaced
 * it; -1 if there is none (never opened, or lost for good). */
static HKRT_FN int hkrt_trace_fd(void)
{
    for (int waits = 0;;) {
        int fd = __atomic_load_n(&g.fd, __ATOMIC_ACQUIRE);
        if (fd < 0 || hkrt_fd_is_trace(fd))
            return fd;
        if (__atomic_exchange_n(&g.fd_reopening, 1, __ATOMIC_ACQ_REL)) {
            /* Another thread is reopening it. Bounded: this may be a signal handler that
             * interrupted that very thread. */
            if (++waits > 10000)
                return -1;
            sched_yield();
            continue;
        }
        if (__atomic_load_n(&g.fd, __ATOMIC_ACQUIRE) == fd) {
            int again = hkrt_fd_reopen();
            __atomic_store_n(&g.fd, again, __ATOMIC_RELEASE);
            if (again < 0)
                hkrt_warn_hint("the program closed or replaced the trace's descriptor, and the "
                               "trace cannot be opened again:",
                               g.path, 0, "; later records are counted as lost");
        }
        __atomic_store_n(&g.fd_reopening, 0, __ATOMIC_RELEASE);
    }
}

/* A write failed (disk full, file size limit, I/O error) for the chunk at `chunk_off` (0: the
 * header): no more chunks are started; hkrt_finish cuts the file where the first failed chunk
 * began and finishes what is before it (hkrt_salvage). */
static HKRT_FN void hkrt_write_failed(int err, uint64_t chunk_off)
{
    if (chunk_off >= HKT_HEADER_SIZE) {
        uint64_t cur = __atomic_load_n(&g.failed_off, __ATOMIC_RELAXED);
        while (chunk_off < cur &&
               !__atomic_compare_exchange_n(&g.failed_off, &cur, chunk_off, 1, __ATOMIC_RELAXED,
                                            __ATOMIC_RELAXED))
            ;
    }
    __atomic_store_n(&g.write_failed, 1, __ATOMIC_RELEASE);
    if (__atomic_exchange_n(&g.write_warned, 1, __ATOMIC_RELAXED) == 0)
        hkrt_warn_hint("cannot write trace file", g.path, err,
                       "; later records are counted as lost");
}

/* A stream (HOOKCC_OUTPUT a FIFO, a terminal, a socket) has no offsets: pwritev fails there
 * with ESPIPE, and every record was lost (issue 37), although a pipe is a documented output.
 * Its chunks are written in the order their writes come, each whole, under stream_lock (a
 * write of more than PIPE_BUF bytes to a pipe may be interleaved with another writer's, and a
 * partial write is finished by another call); their reserved offsets only count the bytes
 * (HOOKCC_MAX_BYTES).
 * A thread's chunks still come in the order of its records: it (or the writer thread, which
 * it waits for) writes them one after another. SIGPIPE is blocked around the write, so a
 * reader that went away fails the write (EPIPE: records counted lost) instead of killing the
 * program. The header is written once, first, never rewritten (HKT_FLAG_STREAM): the CLOCK
 * chunk ends a finished trace, and LOST chunks carry every count (hkrt_finish). */
static HKRT_FN int hkrt_stream_lock(void)
{
    int me = hkrt_my_tid_for_lock();
    if (__atomic_load_n(&g.stream_lock, __ATOMIC_RELAXED) == me)
        return 0; /* a signal handler that interrupted our own write */
    for (int i = 0; i < 20000; i++) { /* bounded: a fatal signal's finish must end */
        int expected = 0;
        if (__atomic_compare_exchange_n(&g.stream_lock, &expected, me, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return 1;
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
    return 0;
}

static HKRT_FN ssize_t hkrt_stream_writev(int fd, const struct iovec *iov, int parts)
{
    sigset_t pipe_set, old, pending;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    int was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
    ssize_t n = writev(fd, iov, parts);
    if (n < 0 && errno == EPIPE && !was_pending) {
        int err = errno;
        struct timespec none = {0, 0};
        sigtimedwait(&pipe_set, NULL, &none); /* ours: taken, never delivered */
        errno = err;
    }
    int err = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = err;
    return n;
}

/* Writes the parts in order at `off` (a stream: after what was written before), as one
 * pwritev where it can. Returns 0 after a failure (then counted: hkrt_write_failed). */
static HKRT_FN int hkrt_pwritev_all(struct iovec *iov, int parts, uint64_t off)
{
    uint64_t chunk_off = off;
    int ok = 1;
    __atomic_fetch_add(&g.writes_in_flight, 1, __ATOMIC_ACQ_REL);
    int fd = hkrt_trace_fd();
    int streamed = g.fd_stream && fd >= 0 && hkrt_stream_lock();
    if (fd < 0 || (g.fd_stream && !streamed)) {
        hkrt_write_failed(fd < 0 ? EBADF : EDEADLK, chunk_off);
        ok = 0;
        parts = 0;
    }
    while (parts > 0) {
        ssize_t n = streamed ? hkrt_stream_writev(fd, iov, parts)
                             : pwritev(fd, iov, parts, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            hkrt_write_failed(n < 0 ? errno : ENOSPC, chunk_off);
            ok = 0;
            break;
        }
        off += (uint64_t)n;
        while (parts > 0 && (size_t)n >= iov->iov_len) { /* skip the parts written whole */
            n -= (ssize_t)iov->iov_len;
            iov++;
            parts--;
        }
        if (parts > 0) {
            iov->iov_base = (char *)iov->iov_base + n;
            iov->iov_len -= (size_t)n;
        }
    }
    if (streamed)
        __atomic_store_n(&g.stream_lock, 0, __ATOMIC_RELEASE);
    __atomic_fetch_sub(&g.writes_in_flight, 1, __ATOMIC_ACQ_REL);
    return ok;
}

static HKRT_FN int hkrt_pwrite_all(const void *data, size_t len, uint64_t off)
{
    struct iovec iov = {(void *)(uintptr_t)data, len};
    return hkrt_pwritev_all(&iov, 1, off);
}

/* The CHECK chunk that follows a chunk (docs/trace-format.md, "Checksums"). */
struct hkrt_check_chunk {
    struct hkt_chunk_header header;
    struct hkt_check check;
};

static HKRT_FN void hkrt_check_chunk(struct hkrt_check_chunk *c, uint64_t thread, uint64_t sum)
{
    c->header.type = HKT_CHUNK_CHECK;
    c->header.length = sizeof c->check;
    c->header.thread = thread;
    c->check.sum = sum;
}

/* Writes one small process or thread chunk: the fixed part of its payload, then an optional
 * NUL-terminated string padded to 8 bytes. Not limited by HOOKCC_MAX_BYTES. */
static HKRT_FN void hkrt_write_chunk(uint32_t type, uint64_t thread, const void *fixed,
                                     size_t fixed_len, const char *str)
{
    if (!hkrt_file_ok())
        return;
    union {
        struct hkt_chunk_header header;
        unsigned char bytes[sizeof(struct hkt_chunk_header) + 32 + PATH_MAX + HKT_CHUNK_ALIGN +
                            sizeof(struct hkrt_check_chunk)];
    } chunk;
    size_t len = fixed_len;
    if (fixed_len != 0)
        memcpy(chunk.bytes + sizeof chunk.header, fixed, fixed_len);
    if (str != NULL) {
        size_t slen = strnlen(str, PATH_MAX - 1);
        memcpy(chunk.bytes + sizeof chunk.header + len, str, slen);
        len += slen;
        do /* at least one NUL, then up to the next multiple of 8 */
            chunk.bytes[sizeof chunk.header + len++] = 0;
        while (len % HKT_CHUNK_ALIGN != 0);
    }
    chunk.header.type = type;
    chunk.header.length = (uint32_t)len;
    chunk.header.thread = thread;
    uint64_t total = sizeof chunk.header + len;
    struct hkrt_check_chunk check;
    hkrt_check_chunk(&check, thread, hkt_checksum(chunk.bytes, (size_t)total));
    memcpy(chunk.bytes + total, &check, sizeof check);
    total += sizeof check;
    uint64_t off = __atomic_fetch_add(&g.file_end, total, __ATOMIC_RELAXED);
    hkrt_pwrite_all(chunk.bytes, (size_t)total, off);
}

/* The free-space reserve (docs/trace-format.md, "Environment"): without HOOKCC_MAX_BYTES, a
 * chunk of `bytes` more is written to a regular file only while its file system keeps a tenth
 * of its size (and HKRT_SPACE_SLACK for the chunks that finish the file) free after it. The
 * first time it would not, records stop for good (a trace with a gap would mislead more than
 * one that ends early), with one warning; the later ones are counted as lost. */
#define HKRT_SPACE_SLACK (UINT64_C(1) << 20)
static HKRT_FN int hkrt_space_allows(uint64_t bytes)
{
    if (g.max_bytes != UINT64_MAX || !g.fd_regular)
        return 1;
    if (__atomic_load_n(&g.space_stopped, __ATOMIC_RELAXED))
        return 0;
    struct statvfs fs;
    if (fstatvfs(g.fd, &fs) != 0 || fs.f_blocks == 0)
        return 1;
    uint64_t unit = fs.f_frsize != 0 ? (uint64_t)fs.f_frsize : (uint64_t)fs.f_bsize;
    uint64_t avail = (uint64_t)fs.f_bavail * unit;
    uint64_t reserve = (uint64_t)fs.f_blocks * unit / 10 + HKRT_SPACE_SLACK;
    if (avail >= reserve && avail - reserve >= bytes)
        return 1;
    if (__atomic_exchange_n(&g.space_stopped, 1, __ATOMIC_RELAXED) == 0)
        hkrt_warn_hint("trace stopped: the file system would have less than 10% free:", g.path, 0,
                       "; later records are counted as lost (HOOKCC_MAX_BYTES=SIZE, e.g. 2G, "
                       "sets the limit instead)");
    return 0;
}

/* Reserves `total` bytes of the file for one chunk; returns its offset, or UINT64_MAX if it
 * does not fit under HOOKCC_MAX_BYTES (then nothing is reserved). With a limit, a plain
 * fetch_add could move the end past it and leave a hole that later (unlimited) metadata chunks
 * would sit behind, so the reservation is a CAS. */
static HKRT_FN uint64_t hkrt_reserve(uint64_t total)
{
    if (g.max_bytes == UINT64_MAX)
        return __atomic_fetch_add(&g.file_end, total, __ATOMIC_RELAXED);
    uint64_t off = __atomic_load_n(&g.file_end, __ATOMIC_RELAXED);
    do {
        if (off > g.max_bytes || g.max_bytes - off < total)
            return UINT64_MAX;
    } while (!__atomic_compare_exchange_n(&g.file_end, &off, off + total, 1, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    return off;
}

/* The bytes of HOOKCC_MAX_BYTES still free (UINT64_MAX without a limit). */
static HKRT_FN uint64_t hkrt_room(void)
{
    if (g.max_bytes == UINT64_MAX)
        return UINT64_MAX;
    uint64_t off = __atomic_load_n(&g.file_end, __ATOMIC_RELAXED);
    return g.max_bytes > off ? g.max_bytes - off : 0;
}

/* Writes t's records [buf, upto) as one EVENTS chunk of 16-byte records (HOOKCC_PACK=0), as
 * many as fit under HOOKCC_MAX_BYTES, with its CHECK chunk. The chunk header goes in the 16
 * bytes the mapping keeps in front of buf. Returns the records written; counts the rest lost. */
static HKRT_FN uint64_t hkrt_write_raw_events(struct hkrt_thread *t, uint64_t n)
{
    const uint64_t record = sizeof(struct hkt_record);
    const uint64_t fixed = sizeof(struct hkt_chunk_header) + sizeof(struct hkrt_check_chunk);
    uint64_t room = hkrt_room(), keep = n, off = UINT64_MAX;
    while (keep > 0) {
        if (room < fixed + record)
            break;
        if ((room - fixed) / record < keep)
            keep = (room - fixed) / record;
        if (!hkrt_space_allows(fixed + keep * record))
            break;
        off = hkrt_reserve(fixed + keep * record);
        if (off != UINT64_MAX)
            break;
        room = hkrt_room();
    }
    if (off == UINT64_MAX) {
        hkrt_count_lost(t, n);
        return 0;
    }
    struct hkt_chunk_header *header = (struct hkt_chunk_header *)(void *)t->buf - 1;
    header->type = HKT_CHUNK_EVENTS;
    header->length = (uint32_t)(keep * record);
    header->thread = t->tid;
    struct hkrt_check_chunk trailer;
    hkrt_check_chunk(&trailer, t->tid, hkt_checksum(header, sizeof *header + keep * record));
    struct iovec iov[2] = {{header, (size_t)(sizeof *header + keep * record)},
                           {&trailer, sizeof trailer}};
    if (!hkrt_pwritev_all(iov, 2, off)) {
        hkrt_count_lost(t, n);
        return 0;
    }
    __atomic_fetch_add(&g.records, keep, __ATOMIC_RELAXED);
    hkrt_count_lost(t, n - keep);
    return keep;
}

/* The name of a registered thread: prctl for the caller, /proc for another thread (what
 * pthread_getname_np does, without needing the thread's pthread_t). */
static HKRT_FN void hkrt_thread_name(const struct hkrt_thread *t, char name[HKRT_THREAD_NAME_MAX])
{
    memset(name, 0, HKRT_THREAD_NAME_MAX);
    if (t == &t_self) {
        if (prctl(PR_GET_NAME, name, 0, 0, 0) != 0)
            name[0] = '\0';
        name[HKRT_THREAD_NAME_MAX - 1] = '\0';
        return;
    }
    char path[64] = "/proc/self/task/";
    hkrt_u64_to_dec(t->tid, path + strlen(path));
    hkrt_append(path, sizeof path, "/comm");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, name, HKRT_THREAD_NAME_MAX - 1);
    close(fd);
    if (n <= 0) {
        name[0] = '\0';
        return;
    }
    name[n] = '\0';
    if (name[n - 1] == '\n')
        name[n - 1] = '\0';
}


struct hkrt_module_walk {
    unsigned index;
    uintptr_t vdso;
    void *data; /* the caller's (hkrt_module_walk's `each`) */
};

/* The module `info` describes, and its name ("" for the executable), for a MODULE chunk; 0 if
 * it is none (an unnamed object that is not the executable, the vDSO, no PT_LOAD segment). */
static HKRT_FN int hkrt_module_of(struct dl_phdr_info *info, struct hkrt_module_walk *walk,
                                  struct hkt_module *module, const char **name)
{
    *name = info->dlpi_name != NULL ? info->dlpi_name : "";
    int is_executable = walk->index++ == 0; /* the executable always comes first */
    if (!is_executable && (*name)[0] == '\0')
        return 0; /* an unnamed object that is not the executable: some libcs' vDSO */
    if (is_executable)
        *name = "";
    uint64_t start = UINT64_MAX, end = 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t lo = (uint64_t)(uintptr_t)(info->dlpi_addr + ph->p_vaddr);
        uint64_t hi = lo + (uint64_t)ph->p_memsz;
        if (lo < start)
            start = lo;
        if (hi > end)
            end = hi;
    }
    if (start >= end)
        return 0;
    if (walk->vdso != 0 && start <= (uint64_t)walk->vdso && (uint64_t)walk->vdso < end)
        return 0; /* linux-vdso: no file to read symbols from */
    *module = (struct hkt_module){(uint64_t)(uintptr_t)info->dlpi_addr, start, end};
    return 1;
}

static HKRT_FN int hkrt_module_callback(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct hkt_module module;
    const char *name;
    if (hkrt_module_of(info, data, &module, &name))
        hkrt_write_chunk(HKT_CHUNK_MODULE, 0, &module, sizeof module, name);
    return 0;
}

static HKRT_FN void hkrt_write_modules(void)
{
    if (!hkrt_file_ok())
        return;
    struct hkrt_module_walk walk = {0, (uintptr_t)getauxval(AT_SYSINFO_EHDR), NULL};
    dl_iterate_phdr(hkrt_module_callback, &walk);
}
