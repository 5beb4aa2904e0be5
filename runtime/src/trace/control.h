/* trace.c, part 16 of 19: control.
 *
 * The control channel (docs/recording.md, "Attaching and watching live"; the protocol in
 * docs/control-protocol.md): a Unix socket per traced process, `<pid>.sock` in a directory only
 * its user may enter ($XDG_RUNTIME_DIR/hookcc/, else /tmp/hookcc-<uid>/, mode 0700, ours),
 * through which `hookprof attach` and `hookprof ps` ask for the status, switch recording and
 * functions, start and finish a trace file, take a snapshot.
 *
 * Served by a thread of its own ("hookcc-control", all signals blocked, its hooks the
 * runtime's: never recorded), not by the writer: finishing a file waits for the writer to be
 * done with every thread's buffer, which the writer cannot wait for itself. One client at a
 * time, one request a connection, read and answered with timeouts: a client that stops
 * talking or vanishes costs the thread at most HKRT_CTL_TIMEOUT_MS, and never the program's
 * threads, whose hooks know nothing of it (the hot path is unchanged). Peer credentials are
 * checked (SO_PEERCRED: the process's own user or root).
 *
 * Fork: the child closes the inherited socket and has none (no thread may be created there
 * before exec, as for the writer). Exec: the socket is close-on-exec; a traced new image binds
 * the same name (its pid) again; a name nobody listens on is stale (hookprof ps removes it).
 * Exit and fatal signals remove it (hkrt_control_remove, called from finish.h).
 * HOOKCC_CONTROL=0 turns the channel off.
 *
 * Relies on the parts before it (hkrt_finish, hkrt_exec_resume); the public API
 * (hookcc_trace_enable, …, api.h) through <hookcc/trace.h>.
 * Included only by trace.c, at its place in the order there: not a header of its own. */

#define HKRT_CTL_MAX_LINE 4096    /* a request longer than this is refused */
#define HKRT_CTL_TIMEOUT_MS 2000  /* to read a request or send a reply */
#define HKRT_CTL_POLL_MS 500

static struct {
    int fd;       /* the listening socket, -1 if none */
    dev_t dev;    /* its identity: the program may close the number and reuse it */
    ino_t ino;
    int pid;      /* the process that bound it: only it removes the name */
    int rotating; /* atomic: a request is finishing a file and resuming (hkrt_ctl_rotate) */
    int exiting;  /* atomic: the exit's finish has begun: no rotation any more */
    char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
    char startup_functions[HKRT_CTL_MAX_LINE]; /* HOOKCC_FUNCTIONS at start, "" if none */
    char functions[HKRT_CTL_MAX_LINE];         /* the list a client chose (kept: functions.h
                                                  keeps a pointer to it for later files) */
} g_ctl = {.fd = -1};

/* Whether a peer of user `peer` may control a process of user `self`: its own user, or root.
 * A function of its own so that the rule is tested without a second user
 * (runtime/test/control_peer.c). */
static HKRT_FN int hkrt_control_peer_allowed(uid_t peer, uid_t self)
{
    return peer == self || peer == 0;
}

/* Whether `st` (lstat of the socket directory) is one only `self` may enter: a directory, not
 * a link, owned by `self`, no permission for group or others. */
static HKRT_FN int hkrt_control_dir_safe(const struct stat *st, uid_t self)
{
    return S_ISDIR(st->st_mode) && st->st_uid == self && (st->st_mode & 077) == 0;
}

/* The directory's name into `dir` ("" if it would not fit). */
static HKRT_FN void hkrt_control_dir(char *dir, size_t size)
{
    dir[0] = '\0';
    const char *xdg = hkrt_getenv("XDG_RUNTIME_DIR");
    if (xdg != NULL && xdg[0] == '/') {
        hkrt_append(dir, size, xdg);
        hkrt_append(dir, size, "/hookcc");
    } else {
        char uid[24];
        uid[hkrt_u64_to_dec((uint64_t)geteuid(), uid)] = '\0';
        hkrt_append(dir, size, "/tmp/hookcc-");
        hkrt_append(dir, size, uid);
    }
}

/* Binds and listens on <dir>/<pid>.sock; returns the descriptor or -1 (warned once). */
static HKRT_FN int hkrt_control_listen(void)
{
    char dir[PATH_MAX];
    hkrt_control_dir(dir, sizeof dir);
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        hkrt_warn("no control channel: cannot create", dir, errno);
        return -1;
    }
    struct stat st;
    if (lstat(dir, &st) != 0 || !hkrt_control_dir_safe(&st, geteuid())) {
        hkrt_warn_hint("no control channel: refusing the socket directory", dir, 0,
                       " (it must be a directory of this user with mode 0700; remove it)");
        return -1;
    }
    char pid[24];
    pid[hkrt_u64_to_dec((uint64_t)getpid(), pid)] = '\0';
    char path[PATH_MAX] = "";
    hkrt_append(path, sizeof path, dir);
    hkrt_append(path, sizeof path, "/");
    hkrt_append(path, sizeof path, pid);
    hkrt_append(path, sizeof path, ".sock");
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof addr.sun_path) {
        hkrt_warn("no control channel: the socket's path is too long", path, 0);
        return -1;
    }
    memcpy(addr.sun_path, path, strlen(path) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    /* A name with our pid is a dead process's (or our earlier image's, before an exec). */
    unlink(path);
    if (bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(fd, 8) != 0) {
        hkrt_warn("no control channel: cannot listen on", path, errno);
        close(fd);
        return -1;
    }
    chmod(path, 0600);
    fd = hkrt_fd_move_high(fd);
    struct stat me;
    if (fstat(fd, &me) == 0) {
        g_ctl.dev = me.st_dev;
        g_ctl.ino = me.st_ino;
    }
    memcpy(g_ctl.path, path, strlen(path) + 1);
    g_ctl.pid = (int)getpid();
    return fd;
}

/* Removes the socket's name: at exit and on a fatal signal (async-signal-safe), in the process
 * that bound it only. */
static HKRT_FN void hkrt_control_remove(void)
{
    if (g_ctl.pid != 0 && g_ctl.pid == (int)syscall(SYS_getpid) && g_ctl.path[0] != '\0')
        unlink(g_ctl.path);
}

/* In a fork child: the parent's socket is the parent's. */
static HKRT_FN void hkrt_control_forget(void)
{
    if (g_ctl.fd >= 0)
        close(g_ctl.fd);
    g_ctl.fd = -1;
    g_ctl.pid = 0;
}

/* A reply under construction. */
struct hkrt_ctl_reply {
    char text[PATH_MAX + 512];
};

static HKRT_FN void hkrt_ctl_put(struct hkrt_ctl_reply *r, const char *key, const char *value)
{
    hkrt_append(r->text, sizeof r->text, " ");
    hkrt_append(r->text, sizeof r->text, key);
    hkrt_append(r->text, sizeof r->text, "=");
    hkrt_append(r->text, sizeof r->text, value);
}

static HKRT_FN void hkrt_ctl_put_u64(struct hkrt_ctl_reply *r, const char *key, uint64_t v)
{
    char dec[24];
    dec[hkrt_u64_to_dec(v, dec)] = '\0';
    hkrt_ctl_put(r, key, dec);
}

static HKRT_FN void hkrt_ctl_error(struct hkrt_ctl_reply *r, const char *what)
{
    r->text[0] = '\0';
    hkrt_append(r->text, sizeof r->text, "error ");
    hkrt_append(r->text, sizeof r->text, what);
}

static HKRT_FN const char *hkrt_ctl_mode(void)
{
    return g.ring ? "ring" : g.profile ? "profile" : g.min_duration_ns != 0 ? "min-duration" : "trace";
}

/* `status`: what the process is and does. Paths are last: they may hold spaces. */
static HKRT_FN void hkrt_ctl_status(struct hkrt_ctl_reply *r)
{
    char comm[HKRT_THREAD_NAME_MAX] = "";
    const char *name = program_invocation_short_name;
    hkrt_append(comm, sizeof comm, name != NULL && name[0] != '\0' ? name : "?");
    for (char *c = comm; *c != '\0'; c++)
        if (*c == ' ' || *c == '=')
            *c = '_';
    hkrt_ctl_put_u64(r, "pid", (uint64_t)getpid());
    hkrt_ctl_put(r, "program", comm);
    hkrt_ctl_put(r, "mode", hkrt_ctl_mode());
    hkrt_ctl_put_u64(r, "recording", (uint64_t)hkrt_recording());
    hkrt_ctl_put_u64(r, "records", __atomic_load_n(&g.records, __ATOMIC_RELAXED));
    hkrt_ctl_put(r, "path", __atomic_load_n(&g.fd, __ATOMIC_ACQUIRE) >= 0 ? g.opened_path : "");
}

/* The file is finished and recording goes on, switched off, in a new one opened when it first
 * has something to hold (fork.h's resume after a failed exec, which was made for finishing a
 * file while other threads run). *records gets the finished file's count. Returns 0 if another
 * finish (the program's exit) was first. */
static HKRT_FN int hkrt_ctl_rotate(uint64_t *records)
{
    /* With hkrt_control_wait_rotation's two stores and loads, sequentially consistent: either
     * the exit sees this rotation and waits for it, or this rotation sees the exit. */
    __atomic_store_n(&g_ctl.rotating, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&g_ctl.exiting, __ATOMIC_SEQ_CST)) {
        __atomic_store_n(&g_ctl.rotating, 0, __ATOMIC_SEQ_CST);
        return 0;
    }
    hkrt_finish(0);
    int ours = __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) == HKRT_FINISHED &&
               __atomic_load_n(&g.finisher_tid, __ATOMIC_ACQUIRE) == (int)hkrt_gettid();
    if (ours) {
        *records = __atomic_load_n(&g.records, __ATOMIC_RELAXED);
        hkrt_exec_resume();
    }
    __atomic_store_n(&g_ctl.rotating, 0, __ATOMIC_SEQ_CST);
    return ours;
}

/* At exit: a rotation under way would make the exit's finish return at once (one finish at a
 * time) and leave the program's last file unfinished; so the exit waits for it (a few
 * milliseconds; at most 2 s), then finishes the file the rotation opened. */
static HKRT_FN void hkrt_control_wait_rotation(void)
{
    __atomic_store_n(&g_ctl.exiting, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < 2000 && __atomic_load_n(&g_ctl.rotating, __ATOMIC_SEQ_CST); i++) {
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
}

/* The name the next file takes (HOOKCC_OUTPUT's place: hkrt_make_path), set before a rotation
 * so that no file is ever opened under the one before. */
static HKRT_FN void hkrt_ctl_set_output(const char *path)
{
    hkrt_lock();
    g.output_env[0] = '\0';
    hkrt_append(g.output_env, sizeof g.output_env, path);
    hkrt_unlock();
}

/* Whether the open file holds nothing worth finishing: none is open yet. */
static HKRT_FN int hkrt_ctl_nothing_open(void)
{
    return __atomic_load_n(&g.open_deferred, __ATOMIC_ACQUIRE) &&
           __atomic_load_n(&g.records, __ATOMIC_RELAXED) == 0;
}

/* `start PATH`: the current file is finished (if one is open), recording goes on in PATH (an
 * absolute path; the runtime's rules for a trace's name apply: never through a symlink, never
 * over a file that is not a trace), and is switched on. */
static HKRT_FN void hkrt_ctl_start(struct hkrt_ctl_reply *r, const char *path)
{
    if (path == NULL || path[0] != '/' || strlen(path) >= sizeof g.output_env) {
        hkrt_ctl_error(r, "start needs an absolute path");
        return;
    }
    if (g.ring || g.profile || g.min_duration_ns != 0 || g.is_fork_child) {
        hkrt_ctl_error(r, "this process records in a ring or a profile: take a snapshot");
        return;
    }
    if (hkrt_recording()) {
        hkrt_ctl_error(r, "already recording: stop first");
        return;
    }
    uint64_t records = 0;
    hkrt_ctl_set_output(path);
    if (!hkrt_ctl_nothing_open() && !hkrt_ctl_rotate(&records)) {
        hkrt_ctl_error(r, "the process is exiting");
        return;
    }
    /* Opened now, so that a name the runtime refuses is said to the client, not only on the
     * program's stderr. */
    if (!hkrt_file_ready() || __atomic_load_n(&g.fd, __ATOMIC_ACQUIRE) < 0) {
        hkrt_ctl_error(r, "cannot open the trace file (the program's stderr says why)");
        return;
    }
    hookcc_trace_enable();
    memcpy(r->text, "ok", 3);
    hkrt_ctl_put(r, "path", g.opened_path);
}

/* `rotate PATH`: while recording, the file is finished and recording goes on in PATH (`hookprof
 * top`'s windows). The hooks are off only while the finish runs. */
static HKRT_FN void hkrt_ctl_rotate_into(struct hkrt_ctl_reply *r, const char *path)
{
    if (path == NULL || path[0] != '/' || strlen(path) >= sizeof g.output_env) {
        hkrt_ctl_error(r, "rotate needs an absolute path");
        return;
    }
    if (g.ring || g.profile || g.min_duration_ns != 0 || g.is_fork_child) {
        hkrt_ctl_error(r, "this process records in a ring or a profile: take a snapshot");
        return;
    }
    if (!hkrt_recording() || hkrt_ctl_nothing_open()) {
        hkrt_ctl_error(r, "not recording into a file: start first");
        return;
    }
    char finished[PATH_MAX] = "";
    hkrt_append(finished, sizeof finished, g.opened_path);
    uint64_t records = 0;
    hkrt_ctl_set_output(path);
    if (!hkrt_ctl_rotate(&records)) {
        hkrt_ctl_error(r, "the process is exiting");
        return;
    }
    if (!hkrt_file_ready() || __atomic_load_n(&g.fd, __ATOMIC_ACQUIRE) < 0) {
        hookcc_trace_disable();
        hkrt_ctl_error(r, "cannot open the trace file (the program's stderr says why); "
                          "recording is off");
        return;
    }
    memcpy(r->text, "ok", 3);
    hkrt_ctl_put_u64(r, "records", records);
    hkrt_ctl_put(r, "path", finished);
}

/* `stop`: recording off, the file finished; recording goes on, off, in the next free name of
 * HOOKCC_OUTPUT (opened only when something is recorded). */
static HKRT_FN void hkrt_ctl_stop(struct hkrt_ctl_reply *r, const char *startup_output)
{
    if (g.ring || g.profile || g.min_duration_ns != 0 || g.is_fork_child) {
        hkrt_ctl_error(r, "this process records in a ring or a profile: take a snapshot");
        return;
    }
    hookcc_trace_disable();
    char finished[PATH_MAX] = "";
    hkrt_append(finished, sizeof finished, g.opened_path);
    uint64_t records = 0;
    int open = __atomic_load_n(&g.fd, __ATOMIC_ACQUIRE) >= 0 && !hkrt_ctl_nothing_open();
    hkrt_ctl_set_output(startup_output);
    if (open && !hkrt_ctl_rotate(&records)) {
        hkrt_ctl_error(r, "the process is exiting");
        return;
    }
    memcpy(r->text, "ok", 3);
    hkrt_ctl_put_u64(r, "records", records);
    hkrt_ctl_put(r, "path", open ? finished : "");
}

/* `functions [LIST]`: which functions are recorded, as HOOKCC_FUNCTIONS chooses them (globs,
 * `!` leaves out); without LIST, what HOOKCC_FUNCTIONS chose at start (every function if
 * unset). */
static HKRT_FN void hkrt_ctl_functions(struct hkrt_ctl_reply *r, const char *list)
{
    const char *chosen = list != NULL ? list : g_ctl.startup_functions;
    hkrt_lock();
    g_ctl.functions[0] = '\0';
    hkrt_append(g_ctl.functions, sizeof g_ctl.functions, chosen);
    uint64_t total = 0, left_out = hkrt_functions_choose(g_ctl.functions, &total);
    hkrt_unlock();
    memcpy(r->text, "ok", 3);
    hkrt_ctl_put_u64(r, "functions", total);
    hkrt_ctl_put_u64(r, "chosen", total - left_out);
}

/* `function GLOB on|off`: hookcc_trace_function. */
static HKRT_FN void hkrt_ctl_function(struct hkrt_ctl_reply *r, char *args)
{
    char *space = args != NULL ? strrchr(args, ' ') : NULL;
    if (space == NULL || (strcmp(space + 1, "on") != 0 && strcmp(space + 1, "off") != 0)) {
        hkrt_ctl_error(r, "usage: function GLOB on|off");
        return;
    }
    *space = '\0';
    int n = hookcc_trace_function(args, strcmp(space + 1, "on") == 0);
    memcpy(r->text, "ok", 3);
    hkrt_ctl_put_u64(r, "matched", (uint64_t)n);
}

/* One request (a line without its newline), answered into r. */
static HKRT_FN void hkrt_ctl_dispatch(char *line, struct hkrt_ctl_reply *r, const char *output)
{
    char *args = strchr(line, ' ');
    if (args != NULL)
        *args++ = '\0';
    if (strcmp(line, "status") == 0 && args == NULL) {
        memcpy(r->text, "ok", 3);
        hkrt_ctl_status(r);
    } else if (strcmp(line, "start") == 0) {
        hkrt_ctl_start(r, args);
    } else if (strcmp(line, "rotate") == 0) {
        hkrt_ctl_rotate_into(r, args);
    } else if (strcmp(line, "stop") == 0 && args == NULL) {
        hkrt_ctl_stop(r, output);
    } else if ((strcmp(line, "enable") == 0 || strcmp(line, "disable") == 0) && args == NULL) {
        if (line[0] == 'e')
            hookcc_trace_enable();
        else
            hookcc_trace_disable();
        memcpy(r->text, "ok", 3);
        hkrt_ctl_put_u64(r, "recording", (uint64_t)hkrt_recording());
    } else if (strcmp(line, "functions") == 0) {
        hkrt_ctl_functions(r, args);
    } else if (strcmp(line, "function") == 0) {
        hkrt_ctl_function(r, args);
    } else if (strcmp(line, "snapshot") == 0 && args == NULL) {
        if (!g.ring && !g.profile) {
            hkrt_ctl_error(r, "snapshot is for HOOKCC_MODE=ring or profile");
            return;
        }
        hookcc_trace_snapshot();
        memcpy(r->text, "ok", 3);
        hkrt_ctl_put(r, "path", __atomic_load_n(&g.fd, __ATOMIC_ACQUIRE) >= 0 ? g.opened_path : "");
    } else {
        hkrt_ctl_error(r, "unknown command (status, start PATH, rotate PATH, stop, enable, disable, "
                          "functions [LIST], function GLOB on|off, snapshot)");
    }
}

/* Reads one line from the client into buf (NUL-terminated, newline removed): 1 on success, 0
 * if the client went away or was too slow, -1 if the line is too long or not text. */
static HKRT_FN int hkrt_ctl_read_line(int fd, char *buf, size_t size)
{
    size_t len = 0;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        int ready = poll(&p, 1, HKRT_CTL_TIMEOUT_MS);
        if (ready <= 0)
            return 0;
        ssize_t n = recv(fd, buf + len, size - 1 - len, MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n <= 0)
            return 0;
        for (ssize_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)buf[len + (size_t)i];
            if (c == '\n') {
                buf[len + (size_t)i] = '\0';
                return 1;
            }
            if (c < 0x20 || c == 0x7f)
                return -1;
        }
        len += (size_t)n;
        if (len >= size - 1)
            return -1;
    }
}

/* Sends the reply and its newline, waiting at most HKRT_CTL_TIMEOUT_MS for room. */
static HKRT_FN void hkrt_ctl_send(int fd, struct hkrt_ctl_reply *r)
{
    hkrt_append(r->text, sizeof r->text, "\n");
    size_t len = strlen(r->text), sent = 0;
    while (sent < len) {
        struct pollfd p = {fd, POLLOUT, 0};
        if (poll(&p, 1, HKRT_CTL_TIMEOUT_MS) <= 0)
            return;
        ssize_t n = send(fd, r->text + sent, len - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (n <= 0)
            return;
        sent += (size_t)n;
    }
}

static HKRT_FN void hkrt_ctl_serve(int client, const char *output)
{
    static char line[HKRT_CTL_MAX_LINE + 2];
    static struct hkrt_ctl_reply reply;
    reply.text[0] = '\0';
#if defined(SO_PEERCRED)
    struct ucred cred;
    socklen_t len = sizeof cred;
    if (getsockopt(client, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
        !hkrt_control_peer_allowed(cred.uid, geteuid())) {
        hkrt_ctl_error(&reply, "permission denied: not this process's user");
        hkrt_ctl_send(client, &reply);
        return;
    }
#endif
    int got = hkrt_ctl_read_line(client, line, sizeof line);
    if (got == 0)
        return; /* gone: nothing was changed */
    if (got < 0)
        hkrt_ctl_error(&reply, "bad request: one line of printable text, at most 4096 bytes");
    else
        hkrt_ctl_dispatch(line, &reply, output);
    hkrt_ctl_send(client, &reply);
}

static HKRT_FN void *hkrt_control_main(void *arg)
{
    (void)arg;
    t_self.life = HKRT_THREAD_DEAD; /* its hooks are the runtime's: never recorded */
    prctl(PR_SET_NAME, "hookcc-control", 0, 0, 0);
    static char output[PATH_MAX]; /* HOOKCC_OUTPUT as it was at start */
    output[0] = '\0';
    hkrt_append(output, sizeof output, g.output_env);
    for (;;) {
        int fd = g_ctl.fd;
        if (fd < 0 || g_ctl.pid != (int)getpid())
            return NULL;
        struct pollfd p = {fd, POLLIN, 0};
        int ready = poll(&p, 1, HKRT_CTL_POLL_MS);
        /* The program closed our number (a daemon's closefrom), perhaps reused it: the
         * channel ends, its name is removed. */
        struct stat st;
        if ((p.revents & POLLNVAL) != 0 || fstat(fd, &st) != 0 || st.st_dev != g_ctl.dev ||
            st.st_ino != g_ctl.ino) {
            hkrt_control_remove();
            return NULL;
        }
        if (ready <= 0)
            continue;
        int client = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (client < 0)
            continue;
        hkrt_ctl_serve(client, output);
        close(client);
    }
    return NULL;
}

/* After the runtime's constructor (priority 101): the socket and its thread. */
__attribute__((constructor(102), no_instrument_function)) static void hkrt_control_constructor(void)
{
    int saved_errno = errno;
    const char *v = hkrt_getenv("HOOKCC_CONTROL");
    if ((v != NULL && strcmp(v, "0") == 0) || g.is_fork_child ||
        __atomic_load_n(&g.state, __ATOMIC_ACQUIRE) != HKRT_RUNNING) {
        errno = saved_errno;
        return;
    }
    v = hkrt_getenv("HOOKCC_FUNCTIONS");
    hkrt_append(g_ctl.startup_functions, sizeof g_ctl.startup_functions, v != NULL ? v : "");
    g_ctl.fd = hkrt_control_listen();
    if (g_ctl.fd >= 0) {
        if (!hkrt_spawn_thread(hkrt_control_main)) {
            hkrt_control_remove();
            hkrt_control_forget();
        }
    }
    errno = saved_errno;
}
