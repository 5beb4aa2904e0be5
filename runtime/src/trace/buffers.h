/* trace.c, part 11 of 19: buffers.
 *
 * A thread's buffer written: its records as raw EVENTS or PACKED chunks (trace_pack.h), or
 * folded or windowed by the recording mode (hkrt_write_events, hkrt_write_packed); its
 * counted calls (COUNTED chunks, the counts added to the functions' records); and its last
 * chunks, LOST, END and THREAD (hkrt_thread_final_chunks).
 *
 * Relies on functions.h, state.h, helpers.h, chunks.h, output.h, switches.h, writer.h, modes.h.
 * Included only by trace.c, at its place in the order there: not a header of its own. */

static HKRT_FN uint64_t hkrt_write_events(struct hkrt_thread *t, struct hkt_record *upto)
{
    if (g.ring)
        return hkrt_ring_window(t, upto);
    if (g.profile)
        return hkrt_fold_upto(t, upto);
    uint64_t n = (uint64_t)(upto - t->buf);
    if (n == 0)
        return 0;
    /* The buffer handed to the writer before this one goes first: a thread's chunks are in
     * the file in the order of its records. */
    if (!hkrt_wait_handed(t) || !hkrt_file_ready()) {
        hkrt_count_lost(t, n);
        return 0;
    }
    if (g.raw_records)
        return hkrt_write_raw_events(t, n);
    return hkrt_write_packed(t, t->buf, n);
}

/* Writes t's records [buf, upto) as PACKED chunks, each with its CHECK chunk, and counts them
 * (written or lost). One chunk holds what fits in the thread's pack_cap bytes (all of a full
 * buffer, on the benchmark's workloads); under HOOKCC_MAX_BYTES a last chunk holds what fits
 * below the limit. The CHECK chunk is written from here, not from the buffer past upto, where
 * a late hook of another thread (at exit) may still store a record. Returns the records
 * written.
 * The packing part of hkrt_write_events, for records anywhere (the writer thread writes a
 * buffer the thread has handed over). The file must be ready (hkrt_file_ready). */
static HKRT_FN uint64_t hkrt_write_packed(struct hkrt_thread *t, const struct hkt_record *r,
                                         uint64_t n)
{
    const uint64_t fixed = sizeof(struct hkt_chunk_header) + sizeof(struct hkrt_check_chunk);
    uint64_t written = 0;
    if (g.profile)
        return hkrt_fold(t, r, n);
    n = hkrt_window_cut(t, r, n);
    if (g.min_duration_ns != 0 && n != 0)
        n = hkrt_fold_and_keep(t, (struct hkt_record *)(uintptr_t)r, n);
    if (!hkrt_file_ok()) {
        hkrt_count_lost(t, n);
        return 0;
    }
    while (n > 0) {
        size_t cap = t->pack_cap, payload = 0, keep = 0;
        uint64_t off = UINT64_MAX;
        for (;;) {
            uint64_t room = hkrt_room();
            if (room <= fixed)
                break;
            if (room - fixed < cap)
                cap = (size_t)(room - fixed);
            /* The throttle's statistics only while it may still throttle. */
            keep = g_throttle_calls != 0
                       ? hkt_pack_timed(t->packer, r, (size_t)n, t->packed, cap, &payload)
                       : hkt_pack(t->packer, r, (size_t)n, t->packed, cap, &payload);
            if (keep == 0 || !hkrt_space_allows(payload + fixed))
                break;
            off = hkrt_reserve(payload + fixed);
            if (off != UINT64_MAX)
                break;
            /* Another thread took the room: pack again for what is left. */
        }
        if (off == UINT64_MAX)
            break;
        struct hkt_chunk_header header = {HKT_CHUNK_PACKED, (uint32_t)payload, t->tid};
        struct hkrt_check_chunk trailer;
        hkrt_check_chunk(&trailer, t->tid,
                         hkt_checksum(&header, sizeof header) + hkt_checksum(t->packed, payload));
        struct iovec iov[3] = {
            {&header, sizeof header}, {t->packed, payload}, {&trailer, sizeof trailer}};
        if (!hkrt_pwritev_all(iov, 3, off))
            break;
        __atomic_fetch_add(&g.records, keep, __ATOMIC_RELAXED);
        hkrt_throttle_add(t->packer->table, t->packer->calls, t->packer->ticks,
                          t->packer->table_len, g.overhead.self_ticks + g.overhead.child_ticks,
                          r[keep - 1].time);
        written += keep;
        r += keep;
        n -= keep;
    }
    hkrt_count_lost(t, n);
    return written;
}

/* A thread's COUNTED chunks: each function's calls counted in this thread (its spill table,
 * the cache emptied into it), up to 64 functions a chunk, from a stack buffer (no
 * allocation: this may run in a fatal signal's handler). */
static HKRT_FN void hkrt_write_counted(struct hkrt_thread *t)
{
    enum { PER_CHUNK = 64 };
    struct {
        uint64_t functions;
        struct hkt_counted fns[PER_CHUNK];
    } c;
    if (!hkrt_file_ready())
        return;
    c.functions = 0;
    for (unsigned s = 0; s <= HKRT_SPILL_SLOTS; s++) {
        if (c.functions == PER_CHUNK || (s == HKRT_SPILL_SLOTS && c.functions > 0)) {
            hkrt_write_chunk(HKT_CHUNK_COUNTED, t->tid, &c,
                             sizeof c.functions + c.functions * sizeof c.fns[0], NULL);
            c.functions = 0;
        }
        if (s < HKRT_SPILL_SLOTS && t->spill[s].key != NULL && t->spill[s].val != 0 &&
            hkrt_fn_live(t->spill[s].key))
            c.fns[c.functions++] =
                (struct hkt_counted){(uint64_t)(uintptr_t)t->spill[s].key,
                                     t->spill[s].val};
    }
}

/* Adds the thread's counts (its cache's and its spill table's) to the records and empties
 * both, after writing them as the thread's COUNTED chunks (each function's calls in this
 * thread); `close`: for good. */
static HKRT_FN void hkrt_counts_flush(struct hkrt_thread *t, int close)
{
    if (close)
        __atomic_store_n(&t->count_closed, 1, __ATOMIC_RELAXED);
    for (unsigned s = 0; s < HKRT_COUNT_SLOTS; s++) {
        struct hkrt_fn *f = t->counts[s].key;
        uint64_t n = t->counts[s].val;
        t->counts[s].key = NULL;
        t->counts[s].val = 0;
        if (f != NULL && n != 0 && hkrt_fn_live(f) && !hkrt_spill_add(t, f, n))
            __atomic_fetch_add(&f->count, n, __ATOMIC_RELAXED);
    }
    if (t->spill == NULL)
        return;
    hkrt_write_counted(t);
    for (unsigned s = 0; s < HKRT_SPILL_SLOTS; s++) {
        if (t->spill[s].key != NULL && t->spill[s].val != 0 && hkrt_fn_live(t->spill[s].key))
            __atomic_fetch_add(&t->spill[s].key->count, t->spill[s].val, __ATOMIC_RELAXED);
        t->spill[s].key = NULL;
        t->spill[s].val = 0;
    }
    t->spill_used = 0;
}

/* Last flush of a thread: its records up to `upto`, then LOST (if any), END if the thread is
 * ending (`ended`: at thread exit, not when the process finishes), and THREAD. The caller
 * holds t->busy. */
static HKRT_FN void hkrt_thread_final_chunks(struct hkrt_thread *t, struct hkt_record *upto,
                                             int ended)
{
    /* its throttled functions' counts (COUNTED), before the THROTTLE chunks */
    hkrt_counts_flush(t, 1);
    hkrt_write_events(t, upto);
    if ((g.profile || g.min_duration_ns != 0) && hkrt_wait_handed(t)) {
        hkrt_write_profile(t);
        if (g.min_duration_ns != 0) {
            struct hkt_folded folded = {__atomic_load_n(&g.min_ticks, __ATOMIC_RELAXED),
                                        t->keep.folded};
            hkrt_write_chunk(HKT_CHUNK_FOLDED, t->tid, &folded, sizeof folded, NULL);
        }
    }
    hkrt_switches_close(t); /* its SWITCH chunks, before its THREAD chunk */
    struct hkt_lost lost = {__atomic_exchange_n(&t->lost, 0, __ATOMIC_RELAXED)};
    t->final_written = 1;
    __atomic_fetch_add(&g.lost_reported, lost.records, __ATOMIC_RELAXED);
    if (lost.records != 0 && hkrt_file_ready())
        hkrt_write_chunk(HKT_CHUNK_LOST, t->tid, &lost, sizeof lost, NULL);
    if (ended) {
        /* Taken after the last record was written, so never earlier than it: a reader closes
         * the frames the thread left open (pthread_exit inside calls) here, not when the
         * process finished. */
        struct hkt_end end = {hkrt_ticks()};
        hkrt_write_chunk(HKT_CHUNK_END, t->tid, &end, sizeof end, NULL);
    }
    char name[HKRT_THREAD_NAME_MAX];
    hkrt_thread_name(t, name);
    struct hkt_thread_name seq = {t->sequence};
    hkrt_write_chunk(HKT_CHUNK_THREAD, t->tid, &seq, sizeof seq, name);
}
