/* trace.c, part 12 of 19: threads.
 *
 * Threads: a thread's alternate signal stack, its record buffer mapped aligned to its size (with
 * the packer's area after it), attaching it to the thread list, and the pthread key destructor
 * that writes its last chunks when it ends.
 *
 * Relies on functions.h, state.h, helpers.h, switches.h, writer.h, modes.h, buffers.h.
 * Included only by trace.c, at its place in the order there: not a header of its own. */

/* ---------------------------------------------------------------------------------------- */
/* Threads                                                                                  */

/* Gives the thread an alternate signal stack if it has none, so that the fatal-signal handler
 * can still finish the file after a stack overflow. */
static HKRT_FN void hkrt_thread_altstack_on(struct hkrt_thread *t)
{
    stack_t current;
    if (sigaltstack(NULL, &current) != 0 || !(current.ss_flags & SS_DISABLE))
        return;
    void *mem = mmap(NULL, HKRT_ALTSTACK_SIZE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return;
    stack_t ss = {.ss_sp = mem, .ss_flags = 0, .ss_size = HKRT_ALTSTACK_SIZE};
    if (sigaltstack(&ss, NULL) == 0)
        t->altstack = mem;
    else
        munmap(mem, HKRT_ALTSTACK_SIZE);
}

static HKRT_FN void hkrt_thread_altstack_off(struct hkrt_thread *t)
{
    if (t->altstack == NULL)
        return;
    stack_t current;
    if (sigaltstack(NULL, &current) != 0)
        return; /* cannot tell whether it is still installed: leak it rather than risk it */
    if (current.ss_sp == t->altstack && !(current.ss_flags & SS_DISABLE)) {
        if (current.ss_flags & SS_ONSTACK)
            return; /* running on it (cannot happen at thread exit) */
        stack_t off = {.ss_sp = NULL, .ss_flags = SS_DISABLE, .ss_size = 0};
        if (sigaltstack(&off, NULL) != 0)
            return;
    }
    munmap(t->altstack, HKRT_ALTSTACK_SIZE);
    t->altstack = NULL;
}

static HKRT_FN void hkrt_list_remove(struct hkrt_thread *t)
{
    if (t->prev != NULL)
        t->prev->next = t->next;
    else if (g.threads == t)
        g.threads = t->next;
    if (t->next != NULL)
        t->next->prev = t->prev;
    t->prev = t->next = NULL;
}

/* Bytes a thread's PACKED payloads are made in: a quarter of its records' bytes (a chunk
 * holds about 2.5 bytes a record, so one chunk per buffer), and never less than 4 KiB. */
static HKRT_FN size_t hkrt_pack_cap(size_t bytes)
{
    return bytes / 4 + 4096;
}

static HKRT_FN int hkrt_thread_map_buffer(struct hkrt_thread *t, size_t bytes)
{
    const size_t packer = (sizeof(struct hkt_packer) + 63) & ~(size_t)63;
    uintptr_t buf = hkrt_map_aligned(bytes, packer + hkrt_pack_cap(bytes), &t->map, &t->map_size);
    if (buf == 0)
        return 0;
    t->buf = (struct hkt_record *)buf;
    t->buf_end = (struct hkt_record *)(buf + bytes);
    t->packer = (struct hkt_packer *)(buf + bytes); /* zeroed by mmap: an empty table */
    t->packed = (uint8_t *)(buf + bytes + packer);
    t->pack_cap = hkrt_pack_cap(bytes);
    t->spare = NULL;
    t->spare_map = NULL;
    __atomic_store_n(&t->handed, 0, __ATOMIC_RELAXED);
    return 1;
}

/* Gives the calling thread a buffer and registers it. The caller holds the guard: on success
 * held_pos is the buffer's start. Returns 0 if that failed (no memory, no pthread key). */
static HKRT_FN int hkrt_thread_attach(struct hkrt_thread *t)
{
    if (!g.key_ok || !hkrt_thread_map_buffer(t, hkrt_buffer_bytes()))
        return 0;
    t->held_pos = t->buf;
    t->tid = hkrt_gettid();
    /* The throttle may act: a table for the counts that leave the cache (state.h, spill). */
    if (t->spill == NULL && g_throttle_calls != 0) {
        void *spill = mmap(NULL, HKRT_SPILL_SLOTS * sizeof *t->spill, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        t->spill = spill == MAP_FAILED ? NULL : spill;
        t->spill_used = 0;
    }
    __atomic_store_n(&t->lost, 0, __ATOMIC_RELAXED);
    t->final_written = 0;
    /* The key's destructor runs at thread exit only for a non-NULL value. */
    if (pthread_setspecific(g.key, t) != 0) {
        munmap(t->map, t->map_size);
        t->map = NULL;
        t->buf = t->buf_end = t->held_pos = NULL;
        return 0;
    }
    hkrt_thread_altstack_on(t);
    hkrt_lock();
    t->sequence = ++g.thread_seq;
    t->prev = NULL;
    t->next = g.threads;
    if (g.threads != NULL)
        g.threads->prev = t;
    g.threads = t;
    t->count_budget = HKT_COUNT_MARK_CALLS;
    t->life = HKRT_THREAD_LIVE;
    hkrt_unlock();
    hkrt_switches_open(t);
    return 1;
}

/* Thread exit (pthread key destructor): last chunks, leave the list, free the buffer. Runs
 * after the thread's C++ thread_local destructors (glibc runs those first). Key destructors
 * run in rounds, each key's once a round, while some destructor leaves a value set, up to
 * PTHREAD_DESTRUCTOR_ITERATIONS rounds: ours is called first (its key is among the oldest), so
 * it sets its value again and comes back, and writes the last chunks only in the last round,
 * after the other keys' destructors have run (and their hooks were recorded: googletest's
 * lost 2 216 records every run). Hooks in destructors that run after that are counted lost. */
/* After a failed exec (fork.h, "exec"): t's records below t->resume_from are in the file
 * finished before the exec; moves those after it, [resume_from, upto), to the buffer's start
 * and returns their end. The caller holds t->busy. */
static HKRT_FN struct hkt_record *hkrt_drop_written(struct hkrt_thread *t,
                                                   struct hkt_record *upto)
{
    struct hkt_record *from = t->resume_from;
    if (from == NULL)
        return upto;
    t->resume_from = NULL;
    if (from < t->buf || from > upto || upto > t->buf_end)
        return t->buf;
    memmove(t->buf, from, (size_t)(upto - from) * sizeof *from);
    return t->buf + (upto - from);
}

static HKRT_FN void hkrt_thread_key_destructor(void *arg)
{
    struct hkrt_thread *t = &t_self;
    if (arg != t || t->life != HKRT_THREAD_LIVE)
        return;
    if (++t->exit_rounds < PTHREAD_DESTRUCTOR_ITERATIONS && pthread_setspecific(g.key, t) == 0)
        return;
    int saved_errno = errno;
    /* The finisher holds the lock for all its work, so once we have it, the finisher is
     * either done with this thread (final_written) or has not started. */
    hkrt_lock();
    int was_busy = __atomic_exchange_n(&t->busy, 1, __ATOMIC_ACQUIRE);
    struct hkt_record *upto = was_busy ? t->pos : hkrt_drop_written(t, t->pos);
    t->pos = NULL; /* later hooks of this thread: slow path, counted lost */
    if (!was_busy && !t->final_written &&
        __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == HKRT_RUNNING)
        hkrt_thread_final_chunks(t, upto, 1);
    hkrt_list_remove(t);
    t->life = HKRT_THREAD_DEAD;
    hkrt_unlock();
    hkrt_thread_altstack_off(t);
    /* The writer may still read a buffer of ours (when the final chunks were not ours to
     * write): the mappings go only once it is done; if it is stuck, they stay. */
    if (hkrt_wait_handed(t)) {
        munmap(t->map, t->map_size);
        if (t->spare_map != NULL)
            munmap(t->spare_map, t->spare_map_size);
        hkrt_cct_free(t);
    }
    if (t->spill != NULL)
        munmap(t->spill, HKRT_SPILL_SLOTS * sizeof *t->spill);
    t->spill = NULL;
    t->map = t->spare_map = NULL;
    t->buf = t->buf_end = t->spare = NULL;
    __atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
    errno = saved_errno;
}
