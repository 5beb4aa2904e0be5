/* trace.c, part 9 of 19: writer.
 *
 * The writer thread: a full buffer is handed to it (futex wait/wake) and the hook goes on in the
 * thread's spare buffer while the writer packs and writes the full one.
 *
 * Relies on state.h, helpers.h, chunks.h, output.h, switches.h; hkrt_profile_pause (modes.h)
 * and hkrt_write_packed (buffers.h) through declarations.h.
 * Included only by trace.c, at its place in the order there: not a header of its own. */

/* ---------------------------------------------------------------------------------------- */
/* The writer                                                                               */
/*
 * Packing a full buffer costs about 45 instructions a record (trace_pack.h); done by the
 * thread whose hook found the buffer full, that would be three times what its hooks cost. So
 * the process gets one writer thread (started by the runtime's constructor, all signals
 * blocked, named "hookcc-writer"): a hook that finds its buffer full hands the buffer over and
 * goes on in the thread's spare buffer, and the writer packs and writes it, then its PAUSE
 * chunk (the thread's time handing over: usually well under a microsecond). A thread hands over
 * one buffer at a time: if the writer still has its previous one, the thread waits (inside the
 * PAUSE), so the writer never falls behind by more than a buffer per thread and the chunks of a
 * thread stay in the order of its records. Every other write of a thread's records (its last
 * chunks, hookcc_trace_flush, the finisher) first waits for the writer to be done with it.
 *
 * The writer never takes the lock (the thread handing over has opened the file), so a thread
 * that holds the lock may wait for it. A fork child has no writer (creating a thread there is
 * not safe before exec): it packs in its own hooks, as does every process under
 * HOOKCC_WRITER=0 or HOOKCC_PACK=0, or when the thread could not be created.
 */

static HKRT_FN void hkrt_futex_wait(int *word, int value, const struct timespec *timeout)
{
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, timeout, NULL, 0);
}

static HKRT_FN void hkrt_futex_wake(int *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* Waits until the writer is done with what t handed over: returns 1 then, or 0 if it was not
 * within ~2 s (a write stuck on a slow file system) or if the caller is the writer itself (a
 * fatal signal in it). */
static HKRT_FN int hkrt_wait_handed(struct hkrt_thread *t)
{
    if (!__atomic_load_n(&t->handed, __ATOMIC_ACQUIRE))
        return 1;
    if (__atomic_load_n(&g.writer_tid, __ATOMIC_RELAXED) == (int)hkrt_gettid())
        return 0;
    for (int i = 0; i < 2000 && __atomic_load_n(&t->handed, __ATOMIC_ACQUIRE); i++) {
        struct timespec ms = {0, 1000000};
        hkrt_futex_wait(&t->handed, 1, &ms);
    }
    return !__atomic_load_n(&t->handed, __ATOMIC_ACQUIRE);
}

/* Writes what t handed over, then tells t. */
static HKRT_FN void hkrt_write_handed(struct hkrt_thread *t)
{
    uint64_t wrote = hkrt_write_packed(t, t->handed_buf + t->handed_skip,
                                       t->handed_n - t->handed_skip);
    if (g.profile || g.min_duration_ns != 0)
        hkrt_profile_pause(t, &t->handed_pause);
    /* Under HOOKCC_MIN_DURATION a buffer may keep no record; its pause is still the next
     * record's to lose. */
    if (!g.profile && (wrote != 0 || g.min_duration_ns != 0) && hkrt_file_ok())
        hkrt_write_chunk(HKT_CHUNK_PAUSE, t->tid, &t->handed_pause, sizeof t->handed_pause, NULL);
    __atomic_store_n(&t->handed, 0, __ATOMIC_RELEASE);
    /* t may be gone from here on (its thread exited): a wake on its old address is harmless. */
    hkrt_futex_wake(&t->handed);
}

static HKRT_FN void *hkrt_writer_main(void *arg)
{
    (void)arg;
    /* Hooks this thread runs (an instrumented function the program interposed on pwritev, say)
     * are the runtime's own: counted as lost, never recorded. */
    t_self.life = HKRT_THREAD_DEAD;
    prctl(PR_SET_NAME, "hookcc-writer", 0, 0, 0);
    g.writer_start_ns = hkrt_monotonic_ns();
    __atomic_store_n(&g.writer_tid, (int)hkrt_gettid(), __ATOMIC_RELEASE);
    uint64_t rings_read = 0; /* when the switch rings were last read (CLOCK_MONOTONIC ns) */
    for (;;) {
        /* With switch rings to read (or to come: a thread may open one at any time), every
         * HKRT_SW_PERIOD_NS, busy with buffers or not. */
        int rings = __atomic_load_n(&g.sw_wanted, __ATOMIC_RELAXED);
        if (rings && hkrt_monotonic_ns() - rings_read >= HKRT_SW_PERIOD_NS) {
            hkrt_switches_read_all();
            rings_read = hkrt_monotonic_ns();
        }
        int seen = __atomic_load_n(&g.writer_wake, __ATOMIC_ACQUIRE);
        struct hkrt_thread *t = __atomic_exchange_n(&g.queue, NULL, __ATOMIC_ACQUIRE);
        if (t == NULL) {
            struct timespec period = {0, HKRT_SW_PERIOD_NS};
            hkrt_futex_wait(&g.writer_wake, seen, rings ? &period : NULL);
            continue;
        }
        while (t != NULL) {
            struct hkrt_thread *next = t->queue_next;
            hkrt_write_handed(t);
            t = next;
        }
    }
    return NULL;
}

/* Starts the writer, from the runtime's constructor (a normal context: never from a hook, which
 * may run in a signal handler, nor in a fork child). */
/* A detached thread of the runtime's own (the writer, the control channel's server) running
 * `main`, with every signal blocked (it inherits the mask: no handler of the program runs on
 * it) and a 256 KiB stack. Returns whether it was started. */
static HKRT_FN int hkrt_spawn_thread(void *(*main)(void *))
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t attr;
    int ok = pthread_attr_init(&attr) == 0;
    if (ok) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        pthread_t thread;
        ok = pthread_create(&thread, &attr, main, NULL) == 0;
        pthread_attr_destroy(&attr);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return ok;
}

static HKRT_FN void hkrt_start_writer(void)
{
    if (!g.writer_wanted || g.is_fork_child || __atomic_load_n(&g.writer_running, __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&g.writer_running, hkrt_spawn_thread(hkrt_writer_main), __ATOMIC_RELEASE);
}

/* t's spare buffer (a second buffer aligned as its first), mapped when first needed. Returns 0
 * if it cannot be mapped. */
static HKRT_FN int hkrt_spare(struct hkrt_thread *t)
{
    if (t->spare == NULL)
        t->spare = (struct hkt_record *)hkrt_map_aligned(hkrt_buffer_bytes(), 0, &t->spare_map,
                                                         &t->spare_map_size);
    return t->spare != NULL;
}

/* From the slow path of a hook that found t's buffer full (t's guard held): hands the buffer
 * [buf, held_pos) to the writer and gives the thread its spare. `from` is when the hook began
 * this work. Returns 0 if the writer cannot take it (then the hook writes the buffer itself). */
static HKRT_FN int hkrt_hand_over(struct hkrt_thread *t, uint64_t from)
{
    if (!__atomic_load_n(&g.writer_running, __ATOMIC_ACQUIRE) || t->held_pos == t->buf ||
        !hkrt_spare(t) || !hkrt_wait_handed(t) || !hkrt_file_ready())
        return 0;
    struct hkt_record *full = t->buf;
    void *full_map = t->map;
    size_t full_map_size = t->map_size;
    t->handed_buf = full;
    t->handed_n = (uint64_t)(t->held_pos - full);
    /* Under HOOKCC_MODE=profile a snapshot may have folded the buffer's first records. */
    t->handed_skip = t->fold_mark != NULL && t->fold_mark >= full && t->fold_mark <= t->held_pos
                         ? (uint64_t)(t->fold_mark - full)
                         : 0;
    t->fold_mark = NULL;
    t->buf = t->spare;
    t->buf_end = t->buf + g.buffer_records;
    t->map = t->spare_map;
    t->map_size = t->spare_map_size;
    t->spare = full;
    t->spare_map = full_map;
    t->spare_map_size = full_map_size;
    t->held_pos = t->buf;
    t->handed_pause.from = from;
    t->handed_pause.to = hkrt_ticks();
    __atomic_store_n(&t->handed, 1, __ATOMIC_RELEASE);
    struct hkrt_thread *head = __atomic_load_n(&g.queue, __ATOMIC_RELAXED);
    do
        t->queue_next = head;
    while (!__atomic_compare_exchange_n(&g.queue, &head, t, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED));
    __atomic_fetch_add(&g.writer_wake, 1, __ATOMIC_RELEASE);
    hkrt_futex_wake(&g.writer_wake);
    return 1;
}

/* The WRITER chunk (trace_format.h): the writer thread's run and wait for a CPU so far, from
 * /proc/self/task/TID/schedstat (`run_ns wait_ns slices`; a kernel without schedstats has no
 * such file: no chunk). Written by the finisher, whatever thread that is. */
static HKRT_FN void hkrt_write_writer_stats(void)
{
    int tid = __atomic_load_n(&g.writer_tid, __ATOMIC_ACQUIRE);
    if (tid <= 0 || !__atomic_load_n(&g.writer_running, __ATOMIC_RELAXED) || !hkrt_file_ok())
        return;
    char path[64] = "";
    char digits[24];
    digits[hkrt_u64_to_dec((uint64_t)tid, digits)] = '\0';
    hkrt_append(path, sizeof path, "/proc/self/task/");
    hkrt_append(path, sizeof path, digits);
    hkrt_append(path, sizeof path, "/schedstat");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char text[96];
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return;
    text[n] = '\0';
    struct hkt_writer w = {0, 0, 0, 0};
    const char *p = hkrt_parse_leading_u64(text, &w.cpu_ns);
    if (p != NULL && *p == ' ')
        p = hkrt_parse_leading_u64(p + 1, &w.wait_ns);
    if (p != NULL && *p == ' ')
        p = hkrt_parse_leading_u64(p + 1, &w.slices);
    if (p == NULL)
        return;
    w.wall_ns = hkrt_monotonic_ns() - g.writer_start_ns;
    hkrt_write_chunk(HKT_CHUNK_WRITER, 0, &w, sizeof w, NULL);
}
