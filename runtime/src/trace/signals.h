/* trace.c, part 14 of 19: signals.
 *
 * The program's signal handlers, wrapped (sigaction and signal interposed) so that a handler that
 * interrupts a hook has its records counted lost instead of overwriting the hook's.
 *
 * Relies on state.h (hkrt_real_sigaction, HKRT_WRAP_HANDLERS).
 * Included only by trace.c, at its place in the order there: not a header of its own. */

/* ---------------------------------------------------------------------------------------- */
/* Signal handlers                                                                          */
/*
 * A hook keeps its position in a register between its load of pos and its store of pos + 1.
 * A signal handler that runs in between and calls instrumented functions writes its records
 * from that same pos on; the interrupted hook then overwrites the first and moves pos back
 * (the rest are overwritten later, or, if the handler flushed the buffer, written twice). The
 * hot path cannot see that without costing every call, so the runtime wraps the program's
 * handlers instead: sigaction and signal are interposed (the executable's definitions come
 * first), every handler the program installs runs through hkrt_signal_wrapper, which looks at
 * the interrupted program counter. Inside a hook (the hkrt_hooks section) it sets the thread's
 * pos to NULL for the handler's duration, so the handler's hooks go to the slow path and are
 * counted lost; anywhere else the handler's records nest into the thread's stream where it
 * was interrupted, which is what the TI Dynamic Call Graph shows for an interrupt.
 * Not covered: handlers installed by libc-internal calls and by raw syscalls; a handler that
 * leaves by longjmp after interrupting a hook (the thread's later records are then counted
 * lost). */

#if HKRT_WRAP_HANDLERS
static struct sigaction g_user_actions[NSIG]; /* the program's handlers, as it gave them */

typedef int (*hkrt_sigaction_fn)(int, const struct sigaction *, struct sigaction *);


static HKRT_FN uintptr_t hkrt_context_pc(const void *context)
{
    const ucontext_t *uc = context;
    if (uc == NULL)
        return 0;
#if defined(__x86_64__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__i386__)
    return (uintptr_t)uc->uc_mcontext.gregs[REG_EIP];
#elif defined(__aarch64__)
    return (uintptr_t)uc->uc_mcontext.pc;
#elif defined(__arm__)
    return (uintptr_t)uc->uc_mcontext.arm_pc;
#elif defined(__riscv)
    return (uintptr_t)uc->uc_mcontext.__gregs[REG_PC];
#elif defined(__s390x__)
    return (uintptr_t)uc->uc_mcontext.psw.addr;
#else
    return 0; /* unknown: taken as "in a hook", the safe side */
#endif
}

static HKRT_FN void hkrt_signal_wrapper(int sig, siginfo_t *info, void *context)
{
    struct sigaction user = g_user_actions[sig];
    struct hkrt_thread *t = &t_self;
    uintptr_t pc = hkrt_context_pc(context);
    int in_hook = pc == 0 || (pc >= (uintptr_t)__start_hkrt_hooks &&
                              pc < (uintptr_t)__stop_hkrt_hooks);
    int redirect = in_hook && t->life == HKRT_THREAD_LIVE && !t->sig_redirect;
    if (redirect) {
        t->sig_saved_pos = t->pos; /* what the interrupted hook loaded, or already stored */
        t->sig_redirect = 1;
        t->pos = NULL;
    }
    if (user.sa_flags & SA_SIGINFO)
        user.sa_sigaction(sig, info, context);
    else if (user.sa_handler != SIG_DFL && user.sa_handler != SIG_IGN)
        user.sa_handler(sig);
    if (redirect) {
        t->pos = t->sig_saved_pos;
        t->sig_redirect = 0;
    }
}

/* Weak: a runtime that interposes them too (a sanitizer's) wins, and handlers are then not
 * wrapped, as before, instead of the link failing on a duplicate symbol. */
HKRT_EXPORT __attribute__((weak)) int sigaction(int sig, const struct sigaction *act,
                                                struct sigaction *old)
{
    if (sig <= 0 || sig >= NSIG || act == NULL ||
        (!(act->sa_flags & SA_SIGINFO) &&
         (act->sa_handler == SIG_DFL || act->sa_handler == SIG_IGN))) {
        /* A query, a default or an ignore: nothing to wrap. */
        struct sigaction prev;
        int r = __sigaction(sig, act, &prev);
        if (r == 0 && old != NULL) {
            if (prev.sa_sigaction == hkrt_signal_wrapper && sig > 0 && sig < NSIG)
                *old = g_user_actions[sig];
            else
                *old = prev;
        }
        return r;
    }
    struct sigaction wrapped = *act;
    wrapped.sa_sigaction = hkrt_signal_wrapper;
    wrapped.sa_flags |= SA_SIGINFO;
    struct sigaction before = g_user_actions[sig];
    g_user_actions[sig] = *act; /* before the wrapper can run with it */
    struct sigaction prev;
    int r = __sigaction(sig, &wrapped, &prev);
    if (r != 0) {
        g_user_actions[sig] = before;
        return r;
    }
    if (old != NULL)
        *old = prev.sa_sigaction == hkrt_signal_wrapper ? before : prev;
    return 0;
}

/* signal() in glibc calls the internal sigaction, not ours: interposed too, with its BSD
 * semantics (handler stays installed, interrupted calls restart). */
HKRT_EXPORT __attribute__((weak)) sighandler_t signal(int sig, sighandler_t handler)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sig > 0 && sig < NSIG)
        sigaddset(&sa.sa_mask, sig);
    if (sigaction(sig, &sa, &old) != 0)
        return SIG_ERR;
    return old.sa_handler;
}
#endif /* HKRT_WRAP_HANDLERS */
