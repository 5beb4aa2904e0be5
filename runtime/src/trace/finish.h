/* trace.c, part 13 of 19: finish.
 *
 * Finishing the file at exit and on fatal signals: every thread's last records, CLOCK, the final
 * header, salvage after a failed write (the file cut where the first failed chunk began), and the
 * _exit/_Exit interposers.
 *
 * Relies on functions.h, state.h, helpers.h, chunks.h, output.h, switches.h, writer.h,
 * buffers.h (each thread's last chunks), threads.h; the control channel's hkrt_control_remove and
 * hkrt_control_wait_rotation through declarations.h.
 * Included only by trace.c, at its place in the order there: not a header of its own. */

/* ---------------------------------------------------------------------------------------- */
/* Finishing: exit, fatal signals                                                           */

#define HKRT_SALVAGE_THREADS 64 /* threads whose THREAD chunk a salvage can write again */

/* What hkrt_scan_chunks finds before a cut. */
struct hkrt_scan {
    uint64_t kept;        /* records of the EVENTS and PACKED chunks */
    uint64_t lost;        /* the LOST chunks' counts */
    uint64_t last_events; /* start of the last EVENTS or PACKED chunk, 0 if none */
    unsigned unnamed;     /* threads with EVENTS and no THREAD chunk after them (at most
                           * HKRT_SALVAGE_THREADS are kept in tids) */
    uint64_t tids[HKRT_SALVAGE_THREADS];
};

/* Reads the chunk headers from the first chunk up to `*cut` at most, into *scan, and sets *cut
 * to the end of the last whole chunk. Zero words (holes) are skipped, as a reader does. */
static HKRT_FN void hkrt_scan_chunks(uint64_t *cut, struct hkrt_scan *scan)
{
    uint64_t off = HKT_HEADER_SIZE, end_of_whole = HKT_HEADER_SIZE;
    scan->kept = scan->last_events = scan->lost = 0;
    scan->unnamed = 0;
    while (off + sizeof(struct hkt_chunk_header) <= *cut) {
        struct hkt_chunk_header h;
        if (pread(g.fd, &h, sizeof h, (off_t)off) != (ssize_t)sizeof h)
            break;
        if (h.type == 0 && h.length == 0) {
            off += HKT_CHUNK_ALIGN;
            continue;
        }
        uint64_t end = off + sizeof h + h.length;
        if (end > *cut || h.length % HKT_CHUNK_ALIGN != 0)
            break;
        struct hkt_lost lost;
        if (h.type == HKT_CHUNK_LOST && h.length >= sizeof lost &&
            pread(g.fd, &lost, sizeof lost, (off_t)(off + sizeof h)) == (ssize_t)sizeof lost)
            scan->lost += lost.records;
        int events = h.type == HKT_CHUNK_EVENTS || h.type == HKT_CHUNK_PACKED;
        if (events || h.type == HKT_CHUNK_THREAD) {
            unsigned i = 0;
            while (i < scan->unnamed && scan->tids[i] != h.thread)
                i++;
            if (events) {
                struct hkt_packed packed = {0, 0, 0};
                if (h.type == HKT_CHUNK_EVENTS)
                    scan->kept += h.length / sizeof(struct hkt_record);
                else if (h.length >= sizeof packed &&
                         pread(g.fd, &packed, sizeof packed, (off_t)(off + sizeof h)) ==
                             (ssize_t)sizeof packed)
                    scan->kept += packed.records;
                scan->last_events = off;
                if (i == scan->unnamed && i < HKRT_SALVAGE_THREADS)
                    scan->tids[scan->unnamed++] = h.thread;
            } else if (i < scan->unnamed) {
                scan->tids[i] = scan->tids[--scan->unnamed];
            }
        }
        off = end_of_whole = end;
    }
    *cut = end_of_whole;
}

/* The THREAD chunk of a thread whose own was not written (the write failure came first): its
 * name and sequence number if it is still registered, else no name and a fresh number. Before
 * it, a LOST chunk of `lost` records, if not 0. */
static HKRT_FN void hkrt_salvage_thread_chunk(uint64_t tid, uint64_t *fresh_seq, uint64_t lost)
{
    if (lost != 0) {
        struct hkt_lost chunk = {lost};
        hkrt_write_chunk(HKT_CHUNK_LOST, tid, &chunk, sizeof chunk, NULL);
    }
    char name[HKRT_THREAD_NAME_MAX] = "";
    struct hkt_thread_name seq = {0};
    for (struct hkrt_thread *t = g.threads; t != NULL; t = t->next) {
        if (t->tid == tid) {
            hkrt_thread_name(t, name);
            seq.sequence = t->sequence;
        }
    }
    if (seq.sequence == 0)
        seq.sequence = ++*fresh_seq;
    hkrt_write_chunk(HKT_CHUNK_THREAD, tid, &seq, sizeof seq, name);
}

/* The header as the finish rewrites it, for a file that holds `kept` of the `made` records. */
static HKRT_FN struct hkt_header hkrt_final_header(const struct hkt_clock *clock, uint64_t kept,
                                                  uint64_t made)
{
    struct hkt_header h = g.header;
    h.ticks_per_second = clock->ticks_per_second;
    h.flags = HKT_FLAG_COMPLETE | HKT_FLAG_CHECKED | (g.header.flags & HKT_FLAG_SWITCH_REASONS);
    h.records = kept;
    h.lost = made - kept;
    return h;
}

/* The CLOCK chunk, with the checksum of the header `h` that the finish writes after it. */
static HKRT_FN void hkrt_write_clock(const struct hkt_clock *clock, const struct hkt_header *h)
{
    struct hkt_clock_checked c = {*clock, hkt_checksum(h, sizeof *h)};
    hkrt_write_chunk(HKT_CHUNK_CLOCK, 0, &c, sizeof c, NULL);
}

/* After a failed write (disk full, RLIMIT_FSIZE): cuts the file where the first failed chunk
 * began (later chunks, even whole ones, go: they could sit behind a hole), then writes there
 * the THREAD chunks that were not written and the CLOCK chunk; if they do not fit, drops the
 * last EVENTS chunk and tries again, so the file ends as a finished one does. Sets *h to the
 * header to write (a rewrite in place, which needs no new space), for the records the file
 * then holds of the `made`. Returns 0 if nothing can be salvaged (the header was never
 * written, or the file cannot be cut). */
static HKRT_FN int hkrt_salvage(const struct hkt_clock *clock, uint64_t made,
                                struct hkt_header *h)
{
    uint64_t cut = __atomic_load_n(&g.failed_off, __ATOMIC_RELAXED);
    if (g.fd_stream || hkrt_trace_fd() < 0 || cut == UINT64_MAX) /* never cut a file that is not the trace */
        return 0;
    for (;;) {
        struct hkrt_scan scan;
        hkrt_scan_chunks(&cut, &scan);
        *h = hkrt_final_header(clock, scan.kept, made);
        if (ftruncate(g.fd, (off_t)cut) != 0)
            return 0;
        __atomic_store_n(&g.file_end, cut, __ATOMIC_RELAXED);
        __atomic_store_n(&g.write_failed, 0, __ATOMIC_RELEASE);
        /* The records the failure cost, in a LOST chunk: the file's LOST chunks and the
         * header's `lost` then agree, and a reader names the cause (records not kept: the file
         * not writable) instead of taking the difference for records made after their
         * threads' last chunks (issue 37: "thread-exit destructors" under RLIMIT_FSIZE). It
         * goes to a thread whose THREAD chunk is still to come (the first such), or, if every
         * thread's is in the file, to thread 0 (the process's). */
        uint64_t unattributed = __atomic_load_n(&g.lost_unattributed, __ATOMIC_RELAXED);
        uint64_t by_failure = made - scan.kept;
        by_failure = by_failure > scan.lost ? by_failure - scan.lost : 0;
        by_failure = by_failure > unattributed ? by_failure - unattributed : 0;
        uint64_t fresh_seq = g.thread_seq;
        for (unsigned i = 0; i < scan.unnamed; i++)
            hkrt_salvage_thread_chunk(scan.tids[i], &fresh_seq, i == 0 ? by_failure : 0);
        if (scan.unnamed == 0 && by_failure != 0) {
            struct hkt_lost chunk = {by_failure};
            hkrt_write_chunk(HKT_CHUNK_LOST, 0, &chunk, sizeof chunk, NULL);
        }
        hkrt_write_clock(clock, h);
        if (hkrt_file_ok())
            return 1;
        if (scan.last_events == 0)
            return ftruncate(g.fd, (off_t)cut) == 0; /* no CLOCK; the header has the rate */
        cut = scan.last_events;
    }
}

/* The THROTTLE chunks: each throttled function with the calls counted since, in chunks of a
 * stack buffer's size (no allocation: this may run in a fatal signal's handler). Read without
 * g_fn_lock, which a thread the signal interrupted may hold: the table is only swapped for a
 * complete one. Those whose record is in [lo, hi); `unloaded`: their file is gone, and what
 * they counted is the entry's copy (hkrt_throttle_snapshot), not the record's. */
static HKRT_FN void hkrt_write_throttled(uint64_t lo, uint64_t hi, int unloaded)
{
    enum { PER_CHUNK = 64 };
    struct {
        struct hkt_throttle head;
        struct hkt_throttled fns[PER_CHUNK];
    } c;
    struct hkrt_throttle_entry *table = __atomic_load_n(&g_throttle, __ATOMIC_ACQUIRE);
    size_t len = __atomic_load_n(&g_throttle_len, __ATOMIC_ACQUIRE);
    c.head = (struct hkt_throttle){g_throttle_calls, g_throttle_factor,
                                   g.overhead.self_ticks + g.overhead.child_ticks, 0};
    for (size_t i = 0; table != NULL && i <= len; i++) {
        if (c.head.functions == PER_CHUNK || (i == len && c.head.functions > 0)) {
            hkrt_write_chunk(HKT_CHUNK_THROTTLE, 0, &c,
                             sizeof c.head + c.head.functions * sizeof c.fns[0], NULL);
            c.head.functions = 0;
        }
        if (i == len || table[i].timed == 0 || table[i].address < lo || table[i].address >= hi)
            continue;
        uint64_t counted = unloaded ? table[i].counted
                                    : __atomic_load_n(&table[i].fn->count, __ATOMIC_RELAXED);
        c.fns[c.head.functions++] =
            (struct hkt_throttled){table[i].address, table[i].timed, counted, table[i].at};
    }
}

/* Finishes the file: every thread's records and last chunks, MODULE, CLOCK, then the header.
 * Runs once; later calls return at once. Other threads may still be running hooks (exit() does
 * not stop them): hooks that passed their "full" test before recording was switched off may
 * land after this thread read their pos, and are not in the file. */
static HKRT_FN void hkrt_finish(int from_signal)
{
    if (__atomic_exchange_n(&g.finishing, 1, __ATOMIC_ACQ_REL))
        return;
    __atomic_store_n(&g.finisher_tid, (int)hkrt_gettid(), __ATOMIC_RELEASE);
    hkrt_set_enabled(0);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int locked = 1;
    if (from_signal)
        locked = hkrt_lock_from_signal();
    else if (__atomic_load_n(&g.lock_owner, __ATOMIC_RELAXED) == hkrt_my_tid_for_lock())
        locked = 0; /* exit() from a signal handler that interrupted us holding it */
    else
        hkrt_lock();
    if (g.state != HKRT_RUNNING)
        goto out;

    for (struct hkrt_thread *t = g.threads; t != NULL; t = t->next) {
        if (t->final_written)
            continue;
        struct hkt_record *upto;
        if (t == &t_self) {
            /* Busy already only if we got here from inside our own slow path (a fault in it,
             * or exit() from an interposed function it called): then held_pos is the pos. */
            int was_busy = __atomic_exchange_n(&t->busy, 1, __ATOMIC_ACQUIRE);
            upto = was_busy ? t->held_pos : t->sig_redirect ? t->sig_saved_pos : t->pos;
        } else {
            if (!hkrt_take_busy(t))
                continue; /* stuck in a write for a second: leave it rather than write twice */
            /* Kept busy from here on: the thread can no longer write its own buffer. Not in its
             * slow path, so its pos is the real one. */
            upto = t->sig_redirect ? t->sig_saved_pos : __atomic_load_n(&t->pos, __ATOMIC_ACQUIRE);
        }
        if (upto < t->buf || upto > t->buf_end)
            upto = t->buf;
        /* After an earlier finish and resume (a failed exec, a control channel's rotation):
         * the records below resume_from are in the earlier file; the others are moved to the
         * buffer's start. Another thread's pos is its own and stays where it was, so its
         * records up to that pos are the ones written now: the next resume starts there, not
         * at the moved copies' end (which would write them again at the next finish). */
        struct hkt_record *real_upto = upto;
        upto = hkrt_drop_written(t, upto);
        t->final_upto = t == &t_self ? upto : real_upto;
        hkrt_thread_final_chunks(t, upto, 0);
    }

    /* A SWITCH chunk the writer is writing lands before the CLOCK chunk: it checks `finishing`
     * under sw_lock before each. */
    if (hkrt_sw_lock(1))
        hkrt_sw_unlock();
    if (__atomic_load_n(&g.lost_unattributed, __ATOMIC_RELAXED) != 0)
        hkrt_file_ready(); /* a fork child with only losses still says so */
    if (g.fd_stream && hkrt_file_ok()) {
        /* A stream's header is never rewritten: the losses no thread's chunk holds go in a
         * LOST chunk of thread 0, so that the chunks hold every count. */
        struct hkt_lost lost = {__atomic_load_n(&g.lost_unattributed, __ATOMIC_RELAXED)};
        if (lost.records != 0)
            hkrt_write_chunk(HKT_CHUNK_LOST, 0, &lost, sizeof lost, NULL);
    }
    hkrt_write_modules(); /* again, for libraries dlopen'ed since the start */
    hkrt_write_writer_stats();
    hkrt_write_throttled(0, UINT64_MAX, 0);
    struct hkrt_clock_point end = hkrt_clock_point_after(&g.clock_start, HKRT_CALIBRATION_MIN_NS);
    struct hkt_clock clock = {hkrt_ticks_per_second(&g.clock_start, &end),
                              g.clock_start.ticks, end.ticks};
    uint64_t written = __atomic_load_n(&g.records, __ATOMIC_RELAXED);
    uint64_t made = written + __atomic_load_n(&g.lost_reported, __ATOMIC_RELAXED) +
                    __atomic_load_n(&g.lost_unattributed, __ATOMIC_RELAXED);
    struct hkt_header h = hkrt_final_header(&clock, written, made);
    int finished = 0;
    if (hkrt_file_ok()) {
        /* A stream's header stays as written first: the checksum is of that one. */
        hkrt_write_clock(&clock, g.fd_stream ? &g.header : &h);
        finished = hkrt_file_ok();
    }
    if (!finished)
        finished = hkrt_salvage(&clock, made, &h);
    if (finished && g.fd_stream) {
        /* Nothing to rewrite in a stream: its CLOCK chunk, written, ends it. */
    } else if (finished) {
        /* Rewrite the whole header in one pwrite: the in-place fields are then consistent with
         * each other, and the fields around them are unchanged. */
        hkrt_pwrite_all(&h, sizeof h, 0);
    } else {
        /* Not even the header could be written (a disk with less than a block free): an empty
         * or cut header is no trace, only a file to wonder about. It is ours: removed. */
        struct stat st;
        if (hkrt_trace_fd() >= 0 && g.fd_regular && fstat(g.fd, &st) == 0 && st.st_size < HKT_HEADER_SIZE &&
            g.opened_path[0] != '\0' && unlink(g.opened_path) == 0)
            hkrt_warn_hint("no trace: not even its header could be written to", g.opened_path, 0,
                           " (is the disk full?); the empty file was removed");
    }
    /* The fd stays open: a late hook in another thread must never write to a reused fd. */
    __atomic_store_n(&g.state, HKRT_FINISHED, __ATOMIC_RELEASE);
out:
    if (locked)
        hkrt_unlock();
}

static HKRT_FN void hkrt_at_exit(void)
{
    int saved_errno = errno;
    hkrt_control_remove();
    hkrt_control_wait_rotation();
    hkrt_finish(0);
    errno = saved_errno;
}

/* _exit and _Exit end the process without atexit handlers: a forked child that ends with
 * _exit (as most do) lost every record it had buffered, uncounted. The program's calls to them
 * come here (the executable's definition interposes libc's; libc's own calls do not), the file
 * is finished as for a fatal signal (bounded waits: _exit is also called from signal
 * handlers), and the process exits. Not in a vfork or posix_spawn child, which shares the
 * parent's memory, and so its runtime: its pid is not this image's, and it exits at once.
 * Weak: a program that defines its own _exit keeps it. */
HKRT_EXPORT __attribute__((noreturn, weak)) void _exit(int status)
{
    if (__atomic_load_n(&g.image_pid, __ATOMIC_RELAXED) == (int)syscall(SYS_getpid) &&
        __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == HKRT_RUNNING)
        hkrt_finish(1);
    hkrt_control_remove(); /* (only the process that bound it: not a vfork child) */
    for (;;)
        syscall(SYS_exit_group, status);
}

HKRT_EXPORT __attribute__((noreturn, weak)) void _Exit(int status)
{
    _exit(status);
}

/* Finishes the file, then gives the signal to whoever had it before: the previous action is
 * restored, and a signal that was sent (kill, raise, abort: si_code <= 0) is raised again, to
 * be delivered when this handler returns. A fault (si_code > 0) needs nothing: returning
 * re-executes the faulting instruction, which now meets the previous action. */
static HKRT_FN void hkrt_on_fatal_signal(int sig, siginfo_t *info, void *context)
{
    (void)context;
    int saved_errno = errno;
    hkrt_control_remove();
    hkrt_finish(1);
    /* If another thread is finishing (exit() racing a crash), give it time to complete the
     * file before the signal kills the process. */
    for (int i = 0; i < 1000 && __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == HKRT_RUNNING &&
                    __atomic_load_n(&g.finisher_tid, __ATOMIC_ACQUIRE) != (int)hkrt_gettid();
         i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    for (int i = 0; i < HKRT_NFATAL; i++) {
        if (hkrt_fatal_signals[i] == sig && g_handler_installed[i]) {
            hkrt_real_sigaction(sig, &g_old_actions[i], NULL);
            g_handler_installed[i] = 0;
        }
    }
    if (info == NULL || info->si_code <= 0)
        raise(sig);
    errno = saved_errno;
}
