/* trace.c, part 8 of 19: switches.
 *
 * Context switches and CPU-time samples: a perf event ring per traced thread (where Linux
 * allows it), read into SWITCH and SAMPLE chunks; empty stand-ins where perf events are missing
 * (HKRT_HAVE_SWITCHES 0).
 *
 * Relies on state.h, helpers.h, chunks.h.
 * Included only by trace.c, at its place in the order there: not a header of its own. */

/* The kernel's mark on a switch-out of a thread that was preempted (Linux 4.17 on; older
 * kernels never set it, and their preempted switches read as blocked ones). */
#ifdef PERF_RECORD_MISC_SWITCH_OUT_PREEMPT
#define HKRT_MISC_SWITCH_OUT_PREEMPT PERF_RECORD_MISC_SWITCH_OUT_PREEMPT
#else
#define HKRT_MISC_SWITCH_OUT_PREEMPT (1 << 14)
#endif

/* ---------------------------------------------------------------------------------------- */
/* Context switches                                                                         */
/*
 * Where the kernel allows it, each traced thread gets a perf event of its own (opened when the
 * thread attaches, in the slow path) that records nothing but the thread's context switches
 * (PERF_RECORD_SWITCH: `context_switch` on a dummy software event) into a small ring the
 * kernel writes and we read. A thread's own switches need no privilege at the default
 * perf_event_paranoid of 2 (checked: this machine is at 2); at 3 (Debian's old kernels), or
 * where a container's seccomp profile refuses the call, the runtime says so once on stderr and
 * goes on without them. The hooks never see any of it.
 *
 * The writer thread reads every ring every HKRT_SW_PERIOD_NS, pairs each switch-out with the
 * next switch-in, and writes the pairs as SWITCH chunks of the thread; the thread's last
 * chunks (exit, or the finish) read its ring a last time and close it, before its THREAD
 * chunk. Without a writer (HOOKCC_WRITER=0, a fork child) a thread reads its own ring when its
 * buffer is full. The kernel stamps the records with CLOCK_MONOTONIC (use_clockid): each chunk
 * carries one instant read on both clocks, from which a reader converts them to ticks.
 *
 * The ring holds HKRT_SW_PAGES pages: 24 bytes a record, two records a switch, so 4 KiB pages
 * hold 680 switches, 68 000 a second at the writer's pace; beyond that the kernel drops
 * records and says how many (counted in the chunk's `lost`).
 *
 * With HOOKCC_SAMPLE_HZ (default 4 kHz) the event is a task-clock one that also samples the
 * thread's CPU time in user mode: 32 bytes a sample, 1.3 KB per 10 ms at the default rate,
 * written as SAMPLE chunks (the address and instant of each; docs/trace-format.md, "SAMPLE").
 */

#define HKRT_SW_PAGES 8                         /* data pages of a thread's ring (a power of 2) */
#define HKRT_SW_PERIOD_NS (10 * 1000 * 1000)    /* the writer reads the rings this often */
#define HKRT_SW_BATCH 200                       /* pairs per SWITCH chunk, at most */

/* Takes g.sw_lock. `bounded` (the finisher, which may be a signal handler that interrupted
 * the holder): gives up after about a second, or at once if this thread holds it. */
static HKRT_FN int hkrt_sw_lock(int bounded)
{
    int me = (int)hkrt_gettid();
    if (__atomic_load_n(&g.sw_lock, __ATOMIC_RELAXED) == me)
        return 0;
    for (unsigned i = 0;; i++) {
        int free = 0;
        if (__atomic_compare_exchange_n(&g.sw_lock, &free, me, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return 1;
        if (bounded && i > 1000000)
            return 0;
        sched_yield();
    }
}

static HKRT_FN void hkrt_sw_unlock(void)
{
    __atomic_store_n(&g.sw_lock, 0, __ATOMIC_RELEASE);
}

#if HKRT_HAVE_SWITCHES

/* Once per process: why there will be no off-CPU time. */
static HKRT_FN void hkrt_switches_refused(const char *call, int err)
{
    if (!g.sw_say_refusal || __atomic_exchange_n(&g.sw_warned, 1, __ATOMIC_RELAXED))
        return;
    char hint[320] = "; /proc/sys/kernel/perf_event_paranoid is ";
    char level[16] = "unreadable";
    int fd = open("/proc/sys/kernel/perf_event_paranoid", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, level, sizeof level - 1);
        level[n > 0 ? n : 0] = '\0';
        char *nl = strchr(level, '\n');
        if (nl != NULL)
            *nl = '\0';
        close(fd);
    }
    hkrt_append(hint, sizeof hint, level);
    hkrt_append(hint, sizeof hint, " (at most 2 allows it, unless a container's seccomp profile "
                                   "refuses the call). Off-CPU and sampled times will not be "
                                   "shown; HOOKCC_SWITCHES=0 HOOKCC_SAMPLE_HZ=0 silences this");
    hkrt_warn_hint("context switches and samples are not recorded:", call, err, hint);
}

/* Opens the calling thread's switch ring (its attach, slow path). */
static HKRT_FN void hkrt_switches_open(struct hkrt_thread *t)
{
    t->sw_ring = NULL;
    if (!__atomic_load_n(&g.sw_wanted, __ATOMIC_RELAXED))
        return;
    struct perf_event_attr attr;
    memset(&attr, 0, sizeof attr);
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.sample_id_all = 1;
    attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    attr.context_switch = g.sw_switches != 0;
    if (g.sample_period_ns != 0) {
        /* A sample every sample_period_ns of the thread's CPU time (task-clock counts ns),
         * in user mode: the address it was at, its thread and the instant. */
        attr.config = PERF_COUNT_SW_TASK_CLOCK;
        attr.sample_period = g.sample_period_ns;
        attr.sample_type |= PERF_SAMPLE_IP;
    } else {
        attr.config = PERF_COUNT_SW_DUMMY; /* counts nothing: only the side-band records */
    }
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
    int fd = (int)syscall(SYS_perf_event_open, &attr, 0 /* this thread */, -1 /* any CPU */,
                          -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) {
        /* The next thread would be refused too (same process, same credentials). */
        __atomic_store_n(&g.sw_wanted, 0, __ATOMIC_RELAXED);
        hkrt_switches_refused("perf_event_open", errno);
        return;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t size = page * (1 + HKRT_SW_PAGES);
    void *ring = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ring == MAP_FAILED) {
        int err = errno; /* EPERM past perf_event_mlock_kb and RLIMIT_MEMLOCK */
        close(fd);
        hkrt_switches_refused("mmap of the perf ring", err);
        return;
    }
    t->sw_fd = fd;
    t->sw_ring_size = size;
    t->sw_out_ns = 0;
    t->sw_lost = 0;
    t->samples_in_hooks = 0;
    t->sw_ring = ring;
    if (!hkrt_sw_lock(1)) {
        munmap(ring, size);
        close(fd);
        t->sw_ring = NULL;
        return;
    }
    t->sw_next = g.sw_threads;
    g.sw_threads = t;
    hkrt_sw_unlock();
}

/* Under sw_lock: the pairs read and not written yet (one thread's at a time). */
static struct {
    struct hkt_switch head;
    struct hkt_switch_pair pairs[HKRT_SW_BATCH];
} g_sw_chunk;
static unsigned g_sw_pairs;

/* Whether a SWITCH or SAMPLE chunk of `payload` bytes may be written: like the records, only
 * while HOOKCC_MAX_BYTES and the free-space reserve let records be written (switches and
 * samples without them are no use, and a thread that hands tiny buffers over switches at every
 * one), with room for the chunk and its CHECK chunk. */
static HKRT_FN int hkrt_side_chunk_fits(size_t payload)
{
    size_t bytes = sizeof(struct hkt_chunk_header) + payload + sizeof(struct hkrt_check_chunk);
    return hkrt_file_ok() && !__atomic_load_n(&g.space_stopped, __ATOMIC_RELAXED) &&
           hkrt_room() >= bytes;
}

/* The hooks' section (hooks.h): a sample there is the hooks' time. */
extern const char __start_hkrt_hooks[] __attribute__((visibility("hidden")));
extern const char __stop_hkrt_hooks[] __attribute__((visibility("hidden")));

/* Under sw_lock: the samples read and not written yet. */
static struct {
    struct hkt_sample head;
    struct hkt_sample_point points[HKRT_SW_BATCH];
} g_sample_chunk;
static unsigned g_samples;

/* Writes the samples read as a SAMPLE chunk of t. */
static HKRT_FN void hkrt_samples_write(struct hkrt_thread *t)
{
    size_t payload = sizeof g_sample_chunk.head + g_samples * sizeof g_sample_chunk.points[0];
    if ((g_samples == 0 && t->samples_in_hooks == 0) || !hkrt_side_chunk_fits(payload)) {
        g_samples = 0;
        return;
    }
    struct hkrt_clock_point now = hkrt_clock_point_now();
    g_sample_chunk.head.anchor_ticks = now.ticks;
    g_sample_chunk.head.anchor_ns = now.ns;
    g_sample_chunk.head.period_ns = g.sample_period_ns;
    g_sample_chunk.head.in_hooks = t->samples_in_hooks;
    t->samples_in_hooks = 0;
    hkrt_write_chunk(HKT_CHUNK_SAMPLE, t->tid, &g_sample_chunk, payload, NULL);
    g_samples = 0;
}

/* Writes the pairs read as a SWITCH chunk of t. */
static HKRT_FN void hkrt_switches_write(struct hkrt_thread *t)
{
    size_t payload = sizeof g_sw_chunk.head + g_sw_pairs * sizeof g_sw_chunk.pairs[0];
    if ((g_sw_pairs == 0 && t->sw_lost == 0) || !hkrt_side_chunk_fits(payload)) {
        g_sw_pairs = 0;
        return;
    }
    struct hkrt_clock_point now = hkrt_clock_point_now();
    g_sw_chunk.head.anchor_ticks = now.ticks;
    g_sw_chunk.head.anchor_ns = now.ns;
    g_sw_chunk.head.lost = t->sw_lost;
    hkrt_write_chunk(HKT_CHUNK_SWITCH, t->tid, &g_sw_chunk, payload, NULL);
    t->sw_lost = 0;
    g_sw_pairs = 0;
}

/* Under sw_lock: reads t's ring and writes what it holds. `closing`: the thread's last read; a
 * switch-out without its switch-in yet (another thread, finished by the process's end while
 * switched out) ends now. */
static HKRT_FN void hkrt_switches_read(struct hkrt_thread *t, int closing)
{
    struct perf_event_mmap_page *meta = t->sw_ring;
    size_t page = t->sw_ring_size / (1 + HKRT_SW_PAGES);
    uint64_t data_size = meta->data_size != 0 ? meta->data_size : page * HKRT_SW_PAGES;
    const unsigned char *data =
        (const unsigned char *)t->sw_ring + (meta->data_offset != 0 ? meta->data_offset : page);
    /* The kernel keeps these 8-aligned (offsets 1024 and 1032 of a page), which i386's
     * 4-byte alignment of uint64_t in the struct does not know. */
    hkrt_u64a *head_at =
        (hkrt_u64a *)((char *)t->sw_ring + offsetof(struct perf_event_mmap_page, data_head));
    hkrt_u64a *tail_at =
        (hkrt_u64a *)((char *)t->sw_ring + offsetof(struct perf_event_mmap_page, data_tail));
    uint64_t head = __atomic_load_n(head_at, __ATOMIC_ACQUIRE);
    uint64_t tail = *tail_at;
    g_sw_pairs = 0;
    g_samples = 0;
    while (tail + sizeof(struct perf_event_header) <= head) {
        /* A record may wrap around the ring's end: copied out a byte at a time. */
        union {
            struct perf_event_header h;
            uint64_t words[8];
        } rec;
        for (size_t i = 0; i < sizeof rec.h; i++)
            ((unsigned char *)&rec)[i] = data[(tail + i) % data_size];
        size_t size = rec.h.size;
        if (size < sizeof rec.h || tail + size > head)
            break; /* cannot happen: the kernel writes whole records */
        if (size <= sizeof rec)
            for (size_t i = sizeof rec.h; i < size; i++)
                ((unsigned char *)&rec)[i] = data[(tail + i) % data_size];
        tail += size;
        if (rec.h.type == PERF_RECORD_SWITCH && size >= 24) {
            uint64_t time = rec.words[2]; /* after the header: pid/tid, then time */
            if (rec.h.misc & PERF_RECORD_MISC_SWITCH_OUT) {
                /* Bit 0 (HKT_FLAG_SWITCH_REASONS): preempted, still ready to run. */
                t->sw_out_ns = (time & ~UINT64_C(1)) |
                               ((rec.h.misc & HKRT_MISC_SWITCH_OUT_PREEMPT) != 0);
            } else if (t->sw_out_ns != 0) {
                g_sw_chunk.pairs[g_sw_pairs].out_ns = t->sw_out_ns;
                g_sw_chunk.pairs[g_sw_pairs].in_ns = time;
                t->sw_out_ns = 0;
                if (++g_sw_pairs == HKRT_SW_BATCH)
                    hkrt_switches_write(t);
            }
        } else if (rec.h.type == PERF_RECORD_SAMPLE && size >= 32) {
            /* after the header, in sample_type's bit order: ip, pid/tid, time */
            uint64_t ip = rec.words[1];
            if (ip >= (uintptr_t)__start_hkrt_hooks && ip < (uintptr_t)__stop_hkrt_hooks) {
                t->samples_in_hooks++; /* the hooks' time, not the program's */
                continue;
            }
            g_sample_chunk.points[g_samples].ip = ip;
            g_sample_chunk.points[g_samples].ns = rec.words[3];
            if (++g_samples == HKRT_SW_BATCH)
                hkrt_samples_write(t);
        } else if (rec.h.type == PERF_RECORD_LOST && size >= 24) {
            t->sw_lost += rec.words[2]; /* id, then lost */
            t->sw_out_ns = 0;           /* its switch-in may be among them */
        }
    }
    __atomic_store_n(tail_at, tail, __ATOMIC_RELEASE);
    if (closing && t->sw_out_ns != 0) {
        g_sw_chunk.pairs[g_sw_pairs].out_ns = t->sw_out_ns;
        g_sw_chunk.pairs[g_sw_pairs].in_ns = hkrt_monotonic_ns();
        t->sw_out_ns = 0;
        if (++g_sw_pairs == HKRT_SW_BATCH)
            hkrt_switches_write(t);
    }
    hkrt_switches_write(t);
    hkrt_samples_write(t);
}

/* The thread's last read of its ring (its last chunks, before THREAD), and the ring's end. */
static HKRT_FN void hkrt_switches_close(struct hkrt_thread *t)
{
    if (t->sw_ring == NULL || !hkrt_sw_lock(1))
        return;
    if (hkrt_file_ok())
        hkrt_switches_read(t, 1);
    for (struct hkrt_thread **p = &g.sw_threads; *p != NULL; p = &(*p)->sw_next)
        if (*p == t) {
            *p = t->sw_next;
            break;
        }
    munmap(t->sw_ring, t->sw_ring_size);
    close(t->sw_fd);
    t->sw_ring = NULL;
    hkrt_sw_unlock();
}

/* The writer's round: every ring, unless the file is being finished (then the finisher reads
 * them, each thread before its THREAD chunk, and nothing may follow the CLOCK chunk). */
static HKRT_FN void hkrt_switches_read_all(void)
{
    if (__atomic_load_n(&g.sw_threads, __ATOMIC_RELAXED) == NULL || !hkrt_sw_lock(0))
        return;
    for (struct hkrt_thread *t = g.sw_threads; t != NULL; t = t->sw_next) {
        if (__atomic_load_n(&g.finishing, __ATOMIC_ACQUIRE) || !hkrt_file_ok())
            break;
        hkrt_switches_read(t, 0);
    }
    hkrt_sw_unlock();
}

/* A thread without a writer reads its own ring (from the slow path, its buffer just written). */
static HKRT_FN void hkrt_switches_read_own(struct hkrt_thread *t)
{
    if (t->sw_ring == NULL || __atomic_load_n(&g.writer_running, __ATOMIC_RELAXED) ||
        !hkrt_sw_lock(1))
        return;
    if (!__atomic_load_n(&g.finishing, __ATOMIC_ACQUIRE) && hkrt_file_ok())
        hkrt_switches_read(t, 0);
    hkrt_sw_unlock();
}

/* A fork child: the rings it inherited watch the parent's threads. The forking thread, the
 * child's only one, opens its own. */
static HKRT_FN void hkrt_switches_after_fork(struct hkrt_thread *me)
{
    for (struct hkrt_thread *t = g.sw_threads; t != NULL; t = t->sw_next) {
        munmap(t->sw_ring, t->sw_ring_size);
        close(t->sw_fd);
        t->sw_ring = NULL;
    }
    g.sw_threads = NULL;
    __atomic_store_n(&g.sw_lock, 0, __ATOMIC_RELAXED);
    g_sw_pairs = 0;
    g_samples = 0;
    if (me->life == HKRT_THREAD_LIVE)
        hkrt_switches_open(me);
}

#else /* no perf_event_open: no off-CPU time */

static HKRT_FN void hkrt_switches_open(struct hkrt_thread *t) { t->sw_ring = NULL; }
static HKRT_FN void hkrt_switches_close(struct hkrt_thread *t) { (void)t; }
static HKRT_FN void hkrt_switches_read_all(void) {}
static HKRT_FN void hkrt_switches_read_own(struct hkrt_thread *t) { (void)t; }
static HKRT_FN void hkrt_switches_after_fork(struct hkrt_thread *me) { (void)me; }

#endif
