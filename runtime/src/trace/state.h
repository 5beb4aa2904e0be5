/* trace.c, part 2 of 19: state.
 *
 * The runtime's state: a thread's record buffer and its bookkeeping (struct hkrt_thread, the
 * local-exec TLS t_self the hot path reads), the hot path's cache line (g_hot: full_mask and the
 * enable switch), the process state (g: options, file, thread list, clock start, overhead), the
 * debugger-visible hookcc_trace_state, the fatal-signal table and the real sigaction; the
 * per-thread guard around the runtime's own work (hkrt_guard_enter/leave) and the busy flag.
 *
 * Relies on the prelude of trace.c (the HKRT_* macros, <hookcc/trace.h>, clock.h, trace_format.h,
 * trace_pack.h, trace_cct.h) and functions.h.
 * Included only by trace.c, at its place in the order there: not a header of its own. */

/* ---------------------------------------------------------------------------------------- */
/* State                                                                                    */

enum hkrt_life {
    HKRT_THREAD_NEW = 0, /* no hook seen yet: pos == end == NULL */
    HKRT_THREAD_LIVE,    /* has a buffer and is in the thread list */
    HKRT_THREAD_DEAD,    /* its last chunks are written and its buffer unmapped */
};

struct hkrt_thread {
    /* Hot: the only field the hooks touch. The next free record; at a buffer boundary
     * (g_hot.full_mask) or NULL, the next hook goes to the slow path. */
    struct hkt_record *pos;

    /* Cold: slow path, finisher. */
    struct hkt_record *held_pos; /* the real pos while busy is held (pos is NULL then) */
    struct hkt_record *buf;      /* first record, aligned to the buffer's size in bytes; the
                                  * EVENTS chunk header sits just before */
    struct hkt_record *buf_end;  /* one past the last record */
    void *map;                  /* the buffer mapping (chunk header + records, then packer) */
    size_t map_size;
    struct hkt_packer *packer;  /* in the first mapping, after its records (trace_pack.h) */
    uint8_t *packed;            /* a PACKED payload is made here: pack_cap bytes */
    size_t pack_cap;
    /* The writer thread ("The writer" below): a full buffer is handed to it and the thread
     * goes on in its spare. While `handed` is 1 the writer owns handed_buf and the packer. */
    struct hkt_record *spare;        /* a second buffer, aligned as buf; NULL until needed */
    void *spare_map;
    size_t spare_map_size;
    struct hkt_record *handed_buf;   /* the buffer the writer writes */
    uint64_t handed_n;               /* its records */
    struct hkt_pause handed_pause;   /* the thread's time handing it over (a PAUSE chunk) */
    int handed;                      /* atomic (a futex word): the writer has work of ours */
    struct hkrt_thread *queue_next;  /* in g.queue */
    void *altstack; /* our sigaltstack, or NULL if the thread had one already */
    struct hkrt_thread *prev, *next; /* thread list, under the lock */
    hkrt_u64a lost;                  /* atomic: records this thread could not keep */
    uint64_t tid;
    uint64_t sequence; /* 1 = first thread seen */
    int busy;          /* atomic: in the slow path, flushing, or taken by the finisher */
    int life;          /* enum hkrt_life */
    int final_written; /* its LOST/THREAD chunks are in the file */
    int exit_rounds;   /* rounds of key destructors seen at thread exit */
    /* HOOKCC_MODE=ring: a full buffer starts over instead of being written ("The ring"). */
    uint64_t ring_laps;      /* times the buffer started over since the last snapshot */
    struct hkt_record *ring_mark; /* where the last snapshot ended (NULL: none yet) */
    /* HOOKCC_MODE=profile: the thread's calling-context tree ("The profile"), and how far the
     * current buffer is folded into it (NULL: not at all). */
    struct hkt_cct cct;
    int tree_busy; /* atomic: the tree is being folded into or written (never by a hook) */
    struct hkt_record *fold_mark;
    uint64_t handed_skip; /* records at the start of handed_buf folded already */
    /* HOOKCC_MIN_DURATION: which records the trace keeps (trace_cct.h, "The duration
     * threshold"); the tree above gets every record. */
    struct hkt_keep keep;
    /* HOOKCC_TRACE_START / HOOKCC_TRACE_STOP: which records are kept at all; the triggers'
     * functions as the records name them, and the functions they were found for
     * (hkrt_window_cut). */
    struct hkt_window window;
    uint64_t window_start[HOOKCC_TRACE_MAX_TRIGGERS], window_stop[HOOKCC_TRACE_MAX_TRIGGERS];
    uint64_t window_start_of[HOOKCC_TRACE_MAX_TRIGGERS], window_stop_of[HOOKCC_TRACE_MAX_TRIGGERS];
    /* A signal handler that interrupted one of this thread's hooks is running (see "Signal
     * handlers"): pos is NULL meanwhile, and the hook's pos is kept here. */
    int sig_redirect;
    struct hkt_record *sig_saved_pos;
    /* Context switches ("Context switches"): the thread's perf ring (NULL: none), its fd, a
     * switch-out read whose switch-in is not read yet (0: none), and the kernel's drops. */
    void *sw_ring;
    size_t sw_ring_size;
    int sw_fd;
    uint64_t sw_out_ns;
    uint64_t sw_lost;
    struct hkrt_thread *sw_next; /* in g.sw_threads, under g.sw_lock */
    uint64_t samples_in_hooks;   /* samples read in the hooks, not written yet (SAMPLE) */
    /* Throttled functions' calls this thread counted (__hookcc_count, "Throttling" in
     * functions.h) and has not yet added to their records: a direct-mapped cache by record,
     * so that a count takes no atomic instruction. A slot's count is added (atomically) when
     * another function takes the slot, and all of them when the thread's last chunks are
     * written (its end, or the finish), after which the thread adds to the records directly
     * (count_closed); so does a thread not attached, or a signal handler that interrupted a
     * hook. */
    struct hkrt_count {
        struct hkrt_fn *key;
        uint64_t val;
    } counts[HKRT_COUNT_SLOTS];
    int count_closed;
    /* The counts that left the cache for another function's, still this thread's (an open
     * hash of HKRT_SPILL_SLOTS, at most 3/4 full; NULL if not mapped): at the thread's end
     * its COUNTED chunk gives every function's calls in this thread. What finds no room goes
     * to the record alone (the process's count, no thread's). */
    struct hkrt_count *spill;
    uint32_t spill_used;
    /* Counted calls left before the thread's next count mark (HKT_COUNT_MARK): from
     * HKT_COUNT_MARK_CALLS down, set when the thread is attached (only a live thread's counts
     * reach the cache, whose hit decrements it: one instruction and a branch). */
    uint32_t count_budget;
    /* An exec that failed (fork.h, "exec"): the finish before it wrote this thread's records
     * up to final_upto; after it, resume_from (non-NULL once) says that the records below it
     * are in the earlier file, and are dropped before the thread's next write. */
    struct hkt_record *final_upto;
    struct hkt_record *resume_from;
};

/* The cache slot of a function's record (records are an array: consecutive ones differ). */
static HKRT_FN unsigned hkrt_count_slot(const struct hkrt_fn *f)
{
    return (unsigned)(((uintptr_t)f / sizeof(struct hkrt_fn)) & (HKRT_COUNT_SLOTS - 1));
}

/* Adds n counted calls of f to the thread's spill table; 0 if there is no room (no table, or
 * 3/4 full: then the caller adds them to the record alone). No lock, no allocation: called in
 * the count's slow path (the hooks' section, so that a signal handler never re-enters it). */
static inline __attribute__((always_inline, no_instrument_function)) int
hkrt_spill_add(struct hkrt_thread *t, struct hkrt_fn *f, uint64_t n)
{
    if (t->spill == NULL)
        return 0;
    unsigned s = (unsigned)(((uintptr_t)f / sizeof(struct hkrt_fn)) & (HKRT_SPILL_SLOTS - 1));
    for (;; s = (s + 1) & (HKRT_SPILL_SLOTS - 1)) {
        if (t->spill[s].key == f) {
            t->spill[s].val += n;
            return 1;
        }
        if (t->spill[s].key == NULL)
            break;
    }
    if (t->spill_used >= HKRT_SPILL_SLOTS / 4 * 3)
        return 0;
    t->spill[s].key = f;
    t->spill[s].val = n;
    t->spill_used++;
    return 1;
}

/* local-exec: the hook reaches its state at a link-time constant %fs offset (x86-64), with no
 * __tls_get_addr call and no GOT load (initial-exec cost one more instruction per hook:
 * docs/performance.md). Valid because hookcc links trace.o into executables only, never into
 * shared libraries. No destructor (the pthread key does the thread-exit work). */
static __thread struct hkrt_thread t_self __attribute__((tls_model("local-exec")));

enum hkrt_state {
    HKRT_UNINIT = 0,
    HKRT_RUNNING,  /* file open (or failed to open: then records are counted lost) */
    HKRT_FINISHED, /* header complete; hooks do nothing */
};

/* Read by every hook, written rarely: alone on its cache line, away from the counters that
 * every flush writes. The hooks read only full_mask: it is the buffer size in bytes - 1 while
 * recording, and 0 before the start, while disabled and once finished, so that every hook then
 * finds its pos "at a boundary" and goes to the slow path, which sees `enabled` and does
 * nothing. That makes the enable switch free in the hot path. `enabled` starts at 1 so that
 * the first hook anywhere starts the runtime (a hook may run before our constructor, e.g. in a
 * shared library's constructor), which then clears it if HOOKCC_DISABLE says so. */
static struct __attribute__((aligned(64))) { /* aligned type: sizeof is a whole line */
    uintptr_t full_mask; /* see above; written only through hkrt_set_enabled */
    int enabled;         /* exactly 0 or 1 */
} g_hot = {0, 1};
_Static_assert(sizeof g_hot == 64, "g_hot has its cache line to itself");

static struct {
    /* Written by every flush. */
    hkrt_u64a file_end;          /* atomic: next free byte of the file */
    hkrt_u64a records;           /* atomic: records written in EVENTS chunks */
    hkrt_u64a lost_reported;     /* atomic: sum of the threads' final lost counts */
    hkrt_u64a lost_unattributed; /* atomic: lost records that belong to no live thread */
    int write_failed;            /* atomic: a write failed; no more chunks */
    hkrt_u64a failed_off;        /* atomic: lowest chunk offset whose write failed */
    int writes_in_flight;        /* atomic: pwrites of ours under way (hkrt_on_xfsz) */
    int write_warned;            /* atomic: the write failure was reported */
    int finishing;               /* atomic: hkrt_finish has begun */
    int finisher_tid;            /* atomic: the thread running hkrt_finish */

    /* Under the lock. */
    int lock_owner; /* atomic: TID of the holder, 0 if free */
    int state;      /* enum hkrt_state; read atomically outside the lock */
    int user_enabled;
    int once_done; /* atexit, pthread_atfork, signal handlers: once per process image */
    int overhead_taken;            /* atomic: a thread has started measuring the hooks */
    struct hkt_overhead overhead;  /* what they cost; pairs 0 if not measured */
    int open_deferred; /* atomic: a fork child's file, opened when it first has something */
    int key_ok;
    int is_fork_child;
    int image_pid; /* atomic: getpid() of this image's process (start, fork child): a vfork
                    * child, which shares our memory, has another (see _exit) */
    pthread_key_t key;
    struct hkrt_thread *threads;
    uint64_t thread_seq;

    /* Set at start (and in a fork child), then read-only; except fd, which hkrt_trace_fd
     * changes (atomically) when the program closed or replaced the trace's descriptor. */
    int fd;
    dev_t fd_dev; /* the trace file's identity, checked before each write (hkrt_trace_fd) */
    ino_t fd_ino;
    int fd_reopening; /* atomic: a thread is reopening the trace (hkrt_trace_fd) */
    int fd_stream;    /* a FIFO, a terminal, a socket: no offsets (hkrt_pwritev_all) */
    int stream_lock;  /* atomic: the TID writing to the stream, 0 if none */
    int fd_regular;     /* the file is a regular file (the free-space reserve applies) */
    uint64_t max_bytes; /* UINT64_MAX: no limit */
    int raw_records;    /* HOOKCC_PACK=0: 16-byte EVENTS records instead of PACKED chunks */
    int ring;           /* HOOKCC_MODE=ring: nothing is written until a snapshot */
    int profile;        /* HOOKCC_MODE=profile: records are folded into call-path trees */
    uint32_t profile_nodes; /* HOOKCC_PROFILE_NODES: call paths a thread's tree holds */
    uint64_t min_duration_ns; /* HOOKCC_MIN_DURATION (trace mode): shorter calls are folded */
    hkrt_u64a min_ticks;      /* atomic: min_duration_ns in ticks, once the clock is known */
    int writer_wanted;  /* HOOKCC_WRITER is not 0: pack and write full buffers in a thread */
    int writer_running; /* atomic: the writer thread runs (this process image, not a fork) */
    int writer_tid;     /* atomic */
    uint64_t writer_start_ns; /* CLOCK_MONOTONIC when the writer thread started */
    int writer_wake;    /* atomic (a futex word): bumped for every buffer handed over */
    struct hkrt_thread *queue; /* atomic: threads that handed a buffer over (a stack) */
    int space_stopped;  /* atomic: the free-space reserve was reached; no more records */
    /* Context switches: HOOKCC_SWITCHES is not 0 (trace mode only); the threads with a perf
     * ring, under sw_lock (the TID of its holder, 0 if free: the writer takes it, never the
     * main lock); the refusal was reported. */
    int sw_wanted;
    /* Of the rings: switch records (HOOKCC_SWITCHES is not 0), and samples of the thread's
     * CPU time every sample_period_ns (HOOKCC_SAMPLE_HZ; 0: none). sw_wanted: either. */
    int sw_switches;
    uint64_t sample_period_ns;
    int sw_say_refusal;
    int sw_lock;
    struct hkrt_thread *sw_threads;
    int sw_warned;
    uint32_t buffer_records;
    struct hkt_header header;
    struct hkrt_clock_point clock_start;
    char output_env[PATH_MAX]; /* HOOKCC_OUTPUT, "" if unset */
    char path[PATH_MAX];
    /* The working directory when this image started: a relative trace path is opened there,
     * also by a fork child that has changed directory since (a daemon in /). "" if unknown. */
    char start_dir[PATH_MAX];
    char opened_path[PATH_MAX]; /* the trace as it was opened (start_dir/path if relative) */
} g = {.fd = -1, .max_bytes = UINT64_MAX, .failed_off = UINT64_MAX};

/* For a reader of a core file (trace_format.h, struct hkt_state). */
__attribute__((visibility("default"))) struct hkt_state hookcc_trace_state;

static HKRT_FN void hkrt_describe_state(void)
{
    struct hkt_state *s = &hookcc_trace_state;
    s->version = HKT_STATE_VERSION;
    s->ring = (uint32_t)g.ring;
    s->threads = (uint64_t)(uintptr_t)&g.threads;
    s->start_ticks = g.clock_start.ticks;
    s->ticks_per_second = hkrt_ticks_per_second_fixed();
    s->pid = (uint64_t)getpid();
    s->start_realtime_ns = g.header.start_realtime_ns;
    s->buffer_records = g.buffer_records;
    s->off_next = offsetof(struct hkrt_thread, next);
    s->off_buf = offsetof(struct hkrt_thread, buf);
    s->off_buf_end = offsetof(struct hkrt_thread, buf_end);
    s->off_pos = offsetof(struct hkrt_thread, pos);
    s->off_held_pos = offsetof(struct hkrt_thread, held_pos);
    s->off_busy = offsetof(struct hkrt_thread, busy);
    s->off_tid = offsetof(struct hkrt_thread, tid);
    s->off_sequence = offsetof(struct hkrt_thread, sequence);
    s->off_ring_laps = offsetof(struct hkrt_thread, ring_laps);
    s->off_ring_mark = offsetof(struct hkrt_thread, ring_mark);
    s->off_life = offsetof(struct hkrt_thread, life);
    s->off_final_written = offsetof(struct hkrt_thread, final_written);
    s->live = HKRT_THREAD_LIVE;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    memcpy(s->magic, HKT_STATE_MAGIC, sizeof s->magic);
}

/* The real sigaction, for the runtime's own handlers: glibc's __sigaction, which its own
 * sigaction aliases (the program's calls go through ours, "Signal handlers"). */
#if defined(__GLIBC__)
extern int __sigaction(int, const struct sigaction *, struct sigaction *);
#define hkrt_real_sigaction __sigaction
#define HKRT_WRAP_HANDLERS 1
#else
/* Another libc: no known name for the real one, so the program's handlers are not wrapped
 * (the limit described in "Signal handlers" then stays). */
#define hkrt_real_sigaction sigaction
#define HKRT_WRAP_HANDLERS 0
#endif

static const int hkrt_fatal_signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
#define HKRT_NFATAL ((int)(sizeof hkrt_fatal_signals / sizeof hkrt_fatal_signals[0]))
static struct sigaction g_old_actions[HKRT_NFATAL];
static int g_handler_installed[HKRT_NFATAL];

/* Bytes of one thread buffer's records: a power of two, the buffer aligned to it. */
static HKRT_FN size_t hkrt_buffer_bytes(void)
{
    return (size_t)g.buffer_records * sizeof(struct hkt_record);
}

/* Switches recording on or off for every thread: `enabled` for the slow path, and full_mask,
 * which sends every hook there while off (see g_hot). */
static HKRT_FN void hkrt_set_enabled(int on)
{
    hkrt_functions_enable(on);
    __atomic_store_n(&g_hot.enabled, on ? 1 : 0, __ATOMIC_RELAXED);
    __atomic_store_n(&g_hot.full_mask, on ? (uintptr_t)hkrt_buffer_bytes() - 1 : 0,
                     __ATOMIC_RELAXED);
}

/* Whether the hooks record now: enabled, and the process running (not starting or finished). */
static HKRT_FN int hkrt_recording(void)
{
    return __atomic_load_n(&g_hot.enabled, __ATOMIC_RELAXED) &&
           __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == HKRT_RUNNING;
}

/* Takes another thread's busy flag, waiting up to ~1 s for it to finish a flush. */
static HKRT_FN int hkrt_take_busy(struct hkrt_thread *t)
{
    for (int i = 0; i < 1000; i++) {
        int expected = 0;
        if (__atomic_compare_exchange_n(&t->busy, &expected, 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED))
            return 1;
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    return 0;
}

/* The per-thread recursion guard. Taking `busy` and moving pos to held_pos (pos = NULL)
 * sends every hook this thread runs meanwhile (from a signal handler, or from a libc function
 * the runtime calls that the program interposed and instrumented) to the slow path, which sees
 * `busy` and counts the record as lost. Between enter and leave, held_pos is the thread's pos.
 * Returns 0 if busy was already taken (by this thread further up, or by the finisher). */
static HKRT_FN int hkrt_guard_enter(struct hkrt_thread *t)
{
    if (__atomic_exchange_n(&t->busy, 1, __ATOMIC_ACQUIRE))
        return 0;
    t->held_pos = t->pos;
    t->pos = NULL;
    return 1;
}

static HKRT_FN void hkrt_guard_leave(struct hkrt_thread *t)
{
    t->pos = t->life == HKRT_THREAD_LIVE ? t->held_pos : NULL;
    __atomic_store_n(&t->busy, 0, __ATOMIC_RELEASE);
}
