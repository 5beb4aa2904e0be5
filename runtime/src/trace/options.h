/* trace.c, part 5 of 19: options.
 *
 * Configuration: the HOOKCC_* environment variables read at start (hkrt_read_options), and the
 * functions HOOKCC_TRACE_START/STOP name, resolved against the executable's symbols.
 *
 * Relies on state.h (g, where the options go), functions.h and helpers.h (the parsers).
 * Included only by trace.c, at its place in the order there: not a header of its own. */

/* ---------------------------------------------------------------------------------------- */
/* Starting: options, file                                                                   */

static HKRT_FN int hkrt_executable_bias(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(uintptr_t *)data = (uintptr_t)info->dlpi_addr;
    return 1; /* the executable comes first */
}

/* Triggers: the run-time addresses of the functions named in `list` (comma-separated, as `nm`
 * prints them: mangled for C++ and Rust), from the executable's symbol table (.symtab, else
 * .dynsym), up to HKRT_MAX_TRIGGERS; every symbol of a name counts (static functions of the
 * same name in two files). A name not found is warned about. Returns how many were found. */
static HKRT_FN uint32_t hkrt_resolve_functions(const char *list, uint64_t *out, const char *var)
{
    uint32_t found = 0;
    int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(ElfW(Ehdr))) {
        if (fd >= 0)
            close(fd);
        hkrt_warn("cannot read the executable's symbols (/proc/self/exe), ignoring", var, 0);
        return 0;
    }
    size_t size = (size_t)st.st_size;
    const unsigned char *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return 0;
    const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)(const void *)map;
    const ElfW(Shdr) *symtab = NULL, *strtab = NULL;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_shoff != 0 &&
        eh->e_shentsize == sizeof(ElfW(Shdr)) &&
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(ElfW(Shdr)) <= size) {
        const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(const void *)(map + eh->e_shoff);
        for (unsigned pass = 0; pass < 2 && symtab == NULL; pass++)
            for (unsigned i = 0; i < eh->e_shnum; i++)
                if (sh[i].sh_type == (pass == 0 ? SHT_SYMTAB : SHT_DYNSYM) &&
                    sh[i].sh_link < eh->e_shnum && sh[i].sh_entsize == sizeof(ElfW(Sym)) &&
                    sh[i].sh_offset + sh[i].sh_size <= size &&
                    sh[sh[i].sh_link].sh_offset + sh[sh[i].sh_link].sh_size <= size) {
                    symtab = &sh[i];
                    strtab = &sh[sh[i].sh_link];
                    break;
                }
    }
    uintptr_t bias = 0;
    dl_iterate_phdr(hkrt_executable_bias, &bias);
    const char *name = list;
    while (*name != '\0') {
        size_t len = strcspn(name, ",");
        int any = 0;
        if (symtab != NULL && len != 0) {
            const ElfW(Sym) *sym = (const ElfW(Sym) *)(const void *)(map + symtab->sh_offset);
            const char *names = (const char *)map + strtab->sh_offset;
            size_t count = symtab->sh_size / sizeof *sym;
            for (size_t i = 0; i < count; i++) {
                if ((sym[i].st_info & 0xf) != STT_FUNC || sym[i].st_value == 0 ||
                    sym[i].st_name >= strtab->sh_size)
                    continue;
                const char *s = names + sym[i].st_name;
                if (strncmp(s, name, len) != 0 || s[len] != '\0')
                    continue;
                any = 1;
                if (found < HKRT_MAX_TRIGGERS)
                    out[found++] = (uint64_t)(sym[i].st_value + bias);
            }
        }
        if (!any && len != 0) {
            char one[256];
            size_t n = len < sizeof one - 1 ? len : sizeof one - 1;
            memcpy(one, name, n);
            one[n] = '\0';
            hkrt_warn_hint(var, one, 0,
                           ": no such function in the executable's symbol table (give its name "
                           "as nm prints it; a stripped program has only its exported ones)");
        }
        name += len;
        if (*name == ',')
            name++;
    }
    munmap((void *)(uintptr_t)map, size);
    return found;
}

static HKRT_FN void hkrt_read_options(void)
{
    const char *v = hkrt_getenv("HOOKCC_DISABLE");
    g.user_enabled = v == NULL || strcmp(v, "0") == 0;
    /* Which functions are recorded (functions.h); the switches follow at the start's
     * hkrt_set_enabled. */
    v = hkrt_getenv("HOOKCC_FUNCTIONS");
    if (v != NULL && v[0] != '\0') {
        uint64_t total = 0, left_out = hkrt_functions_choose(v, &total);
        if (total == 0)
            hkrt_warn("ignoring HOOKCC_FUNCTIONS: this program has no switchable functions "
                      "(built by a hookcc before them):", v, 0);
        else if (left_out == total)
            hkrt_warn("HOOKCC_FUNCTIONS leaves out every function of the program, nothing will "
                      "be recorded:", v, 0);
    }

    g.buffer_records = HKRT_DEFAULT_BUFFER_RECORDS;
    v = hkrt_getenv("HOOKCC_BUFFER_RECORDS");
    if (v != NULL) {
        uint64_t n;
        if (!hkrt_parse_u64(v, &n) || n == 0) {
            hkrt_warn("ignoring HOOKCC_BUFFER_RECORDS, not a positive number:", v, 0);
        } else {
            if (n > HKRT_MAX_BUFFER_RECORDS) {
                hkrt_warn("HOOKCC_BUFFER_RECORDS too large, using 4194304; was", v, 0);
                n = HKRT_MAX_BUFFER_RECORDS;
            }
            uint32_t p = 1;
            while (p < n)
                p <<= 1;
            g.buffer_records = p;
        }
    }

    g.max_bytes = UINT64_MAX;
    v = hkrt_getenv("HOOKCC_MAX_BYTES");
    if (v != NULL) {
        uint64_t n;
        if (hkrt_parse_size(v, &n))
            g.max_bytes = n;
        else
            hkrt_warn("ignoring HOOKCC_MAX_BYTES, not a size (bytes, or with K, M, G or T):", v,
                      0);
    }

    v = hkrt_getenv("HOOKCC_PACK");
    g.raw_records = v != NULL && strcmp(v, "0") == 0;
    v = hkrt_getenv("HOOKCC_MODE");
    g.ring = 0;
    if (v != NULL && strcmp(v, "ring") == 0) {
        g.ring = 1;
        g.raw_records = 0;
        /* The ring of each thread is its buffer: HOOKCC_RING_BYTES (default 1 MiB, 65 536
         * records), rounded up to a power of two. */
        const char *bytes = hkrt_getenv("HOOKCC_RING_BYTES");
        uint64_t n = 0;
        if (bytes != NULL && (!hkrt_parse_size(bytes, &n) || n < 64 * sizeof(struct hkt_record))) {
            hkrt_warn("ignoring HOOKCC_RING_BYTES, not a size of at least 1K:", bytes, 0);
            n = 0;
        }
        if (n != 0) {
            uint64_t records = n / sizeof(struct hkt_record), p2 = 64;
            while (p2 < records && p2 < HKRT_MAX_BUFFER_RECORDS)
                p2 <<= 1;
            g.buffer_records = (uint32_t)p2;
        }
    } else if (v != NULL && strcmp(v, "profile") == 0) {
        /* Each thread's records are folded into its calling-context tree (by the writer, as
         * it would pack them), which is written instead of them ("The profile"). */
        g.profile = 1;
        g.raw_records = 0;
    } else if (v != NULL && strcmp(v, "trace") != 0) {
        hkrt_warn("ignoring HOOKCC_MODE, not trace, ring or profile:", v, 0);
    }
    g.min_duration_ns = 0;
    v = hkrt_getenv("HOOKCC_MIN_DURATION");
    if (v != NULL) {
        int parsed = hkrt_parse_duration(v, &g.min_duration_ns);
        if (parsed < 0) {
            /* As hookprof's --min-duration says it: the number with each unit. */
            char hint[160] = ": a number needs its unit: ";
            static const char *const units[] = {"ns", "us", "ms", "s"};
            for (int i = 0; i < 4; i++) {
                hkrt_append(hint, sizeof hint, i == 0 ? "" : i == 3 ? " or " : ", ");
                hkrt_append(hint, sizeof hint, v);
                hkrt_append(hint, sizeof hint, units[i]);
            }
            hkrt_warn_hint("ignoring HOOKCC_MIN_DURATION", v, 0, hint);
        } else if (parsed == 0) {
            hkrt_warn("ignoring HOOKCC_MIN_DURATION, not a duration (e.g. 5us, 200ns, 1.5ms):",
                      v, 0);
        }
        if (parsed <= 0)
            g.min_duration_ns = 0;
        else if (g.ring || g.profile)
            g.min_duration_ns = 0; /* a ring keeps its last records; a profile has no records */
        else
            g.raw_records = 0;
    }
    /* Triggers: the environment's, else the ones hookcc --trace-start/--trace-stop built in. */
    struct hookcc_trace_triggers *trig = &hookcc_trace_triggers;
    v = hkrt_getenv("HOOKCC_TRACE_START");
    const char *stop = hkrt_getenv("HOOKCC_TRACE_STOP");
#ifdef HKRT_TRACE_START
    if (v == NULL) {
        v = HKRT_TRACE_START;
#ifdef HKRT_TRACE_STOP
        if (stop == NULL)
            stop = HKRT_TRACE_STOP;
#endif
    }
#endif
    /* HOOKCC_TRACE_START=none: everything, whatever was built in (an empty value is unset). */
    if (v != NULL && strcmp(v, "none") != 0) {
        uint64_t found[HKRT_MAX_TRIGGERS];
        uint32_t n = hkrt_resolve_functions(v, found, "HOOKCC_TRACE_START");
        for (uint32_t i = 0; i < n; i++)
            trig->start[i] = found[i];
        if (stop != NULL && stop[0] != '\0') {
            uint32_t m = hkrt_resolve_functions(stop, found, "HOOKCC_TRACE_STOP");
            for (uint32_t i = 0; i < m; i++)
                trig->stop[i] = found[i];
            __atomic_store_n(&trig->n_stop, m, __ATOMIC_RELEASE);
        }
        __atomic_store_n(&trig->n_start, n, __ATOMIC_RELEASE);
        if (n == 0) {
            /* Nothing could ever open a window: nothing would be recorded. */
            hkrt_warn("HOOKCC_TRACE_START names no function of the program: recording "
                      "everything, as without it:", v, 0);
        } else {
            g.raw_records = 0; /* the windows are cut where records are packed */
        }
    }
    g.profile_nodes = HKRT_DEFAULT_PROFILE_NODES;
    v = hkrt_getenv("HOOKCC_PROFILE_NODES");
    if (v != NULL && (g.profile || g.min_duration_ns != 0)) {
        uint64_t n;
        if (!hkrt_parse_u64(v, &n) || n == 0 || n > HKT_CCT_NONE - 1)
            hkrt_warn("ignoring HOOKCC_PROFILE_NODES, not a number of call paths:", v, 0);
        else
            g.profile_nodes = (uint32_t)n;
    }
    /* The throttle (functions.h, "Throttling"): where the writer packs every record. */
    v = hkrt_getenv("HOOKCC_THROTTLE");
    if (v != NULL && strcmp(v, "0") != 0 && strcmp(v, "1") != 0) {
        uint64_t calls = 0, factor = 0;
        const char *rest = hkrt_parse_leading_u64(v, &calls);
        if (rest != NULL && *rest == ',' && hkrt_parse_u64(rest + 1, &factor) && calls > 0 &&
            factor > 0 && factor <= 1000000) {
            g_throttle_calls = calls;
            g_throttle_factor = factor;
        } else {
            hkrt_warn("ignoring HOOKCC_THROTTLE, not 0, 1 or CALLS,FACTOR (as 1000,3):", v, 0);
        }
    }
    /* A count covers the whole run: not what a ring's window or a trigger's holds. */
    if ((v != NULL && strcmp(v, "0") == 0) || g.raw_records || g.profile || g.ring ||
        g.min_duration_ns != 0 || __atomic_load_n(&trig->n_start, __ATOMIC_RELAXED) != 0)
        g_throttle_calls = 0;
    v = hkrt_getenv("HOOKCC_WRITER");
    g.writer_wanted = !g.raw_records && !g.ring && (v == NULL || strcmp(v, "0") != 0);
    /* Off-CPU time is a property of calls in a trace: a ring's windows and a profile's trees
     * have no use for it. */
    v = hkrt_getenv("HOOKCC_SWITCHES");
    g.sw_switches = HKRT_HAVE_SWITCHES && !g.ring && !g.profile &&
                    (v == NULL || strcmp(v, "0") != 0);
    /* Sampled CPU time, like off-CPU time, belongs to calls in a trace. */
    uint64_t hz = HKRT_DEFAULT_SAMPLE_HZ;
    v = hkrt_getenv("HOOKCC_SAMPLE_HZ");
    if (v != NULL && (!hkrt_parse_u64(v, &hz) || hz > HKRT_MAX_SAMPLE_HZ)) {
        hkrt_warn("ignoring HOOKCC_SAMPLE_HZ, not a number of samples a second from 0 to "
                  "100000:", v, 0);
        hz = HKRT_DEFAULT_SAMPLE_HZ;
    }
    g.sample_period_ns = (HKRT_HAVE_SWITCHES && !g.ring && !g.profile && hz != 0)
                             ? 1000000000u / hz : 0;
    g.sw_wanted = g.sw_switches || g.sample_period_ns != 0;
    /* A kernel's refusal is said once, unless neither was asked for: HOOKCC_SWITCHES=0 with
     * the default rate keeps a run quiet, as it did before samples. */
    g.sw_say_refusal = g.sw_switches || v != NULL;

    if (getcwd(g.start_dir, sizeof g.start_dir) == NULL || g.start_dir[0] != '/')
        g.start_dir[0] = '\0';

    v = hkrt_getenv("HOOKCC_OUTPUT");
    g.output_env[0] = '\0';
    if (v != NULL)
        hkrt_append(g.output_env, sizeof g.output_env, v);
}
