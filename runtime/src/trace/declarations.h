/* trace.c, part 3 of 19: declarations.
 *
 * The one place where a call goes against the parts' order: each function here is defined in
 * a later part and called from an earlier one, because the two parts call each other (a
 * concern that needs the other's service and serves it back). Every other call goes from a
 * part to one before it; no other part declares a function it does not define
 * (hookprof/tests/layering.rs checks both). The public API's functions are declared by
 * <hookcc/trace.h> instead.
 *
 * Relies on state.h (struct hkrt_thread). Included only by trace.c, at its place in the order
 * there: not a header of its own. */

/* modes.h: a thread's pause in the profile mode, called by the writer (writer.h) for a
 * buffer it has written; modes.h hands its buffers to the writer. */
static HKRT_FN void hkrt_profile_pause(struct hkrt_thread *t, const struct hkt_pause *pause);

/* buffers.h: a thread's records packed and written. Called by the writer (writer.h) and by
 * the ring mode's windows (modes.h), which buffers.h's hkrt_write_events calls in turn. */
static HKRT_FN uint64_t hkrt_write_packed(struct hkrt_thread *t, const struct hkt_record *r,
                                         uint64_t n);

/* control.h: its socket's name removed at exit and a rotation it is doing waited for
 * (finish.h), its socket forgotten in a fork child (fork.h); the control channel finishes
 * and resumes files through finish.h and fork.h. */
static HKRT_FN void hkrt_control_remove(void);
static HKRT_FN void hkrt_control_forget(void);
static HKRT_FN void hkrt_control_wait_rotation(void);
