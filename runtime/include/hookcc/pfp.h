/* hookcc's profile points (PFP): the API of TI's "Profile Point Component"
 * (seeds/ti-pfp-profile-points.txt), for any target hookcc builds for. docs/pfp.md.
 *
 * Link the component with `hookcc --hook-runtime=pfp` (no compiler hooks are needed: profile
 * points are the program's own calls). A region is measured between pfpBegin(id, h) and
 * pfpEnd(id, latch):
 *
 *   pfpCreate();                       first, once
 *   pfpCalibrate(1000, 0);             optional: measures the Begin/End overhead on id 0
 *   pfpEnable(PFP_ID_WORK);            every profile point starts disabled
 *   ...
 *   pfpBegin(PFP_ID_WORK, handle);     handle: the task (NULL: the calling thread)
 *   doSomeWork();
 *   pfpEnd(PFP_ID_WORK, 0);            0: record the measurement; 1: latch it (add the next)
 *   ...
 *   pfpPrintStats();                   "ID: 00, n=1000, C=49265, Cmin=49, Cmax=314, ..."
 *
 * Cycles are the runtime's counter (rdtsc on x86, cntvct_el0 on AArch64, the target's counter on
 * bare metal). Nested regions are exclusive: an outer region's clock pauses while an inner one
 * runs. A region's clock also pauses while its task is switched out: on Linux every OS thread
 * has its own list of regions in progress, so other threads never disturb it; a user-level
 * scheduler (coroutines, an RTOS port on one thread) calls pfpTaskSwitch(prev, next), and
 * interrupt or software-interrupt handlers call pfpHwiBegin/End, pfpSwiBegin/End, as the
 * seed's SYS/BIOS hooks do. Misuse (an id out of range, Begin twice, End without Begin, End
 * out of nesting order) is never a crash: the call is ignored or the point disabled, and
 * counted (pfpPrintStats says so). */
#ifndef HOOKCC_PFP_H
#define HOOKCC_PFP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Profile points per program, as the seed's 32 allocated at compile time. */
#define PFP_PPCNT_MAX 32

/* Statistics of one profile point (pfpGetStats). Cycle counts are 64-bit here (the seed's are
 * 32-bit: 5.7 s at 750 MHz, under 2 s at today's clock rates). */
typedef struct {
    long long c_total;       /* total cycles of the completed measurements */
    uint_least32_t n_count;  /* number of completed measurements */
    uint_least64_t c_min;    /* shortest measurement */
    uint_least64_t c_max;    /* longest measurement */
    float alpha;             /* exponential averaging constant (0: not configured) */
    float c_average;         /* exponentially averaged cycles (0 until configured) */
} pfpStats_t;

/* The component. */
void pfpCreate(void);
void pfpCalibrate(int loopcnt, int reset);
void pfpBegin(int id, void *exhandle);
void pfpEnd(int id, int latch);
void pfpEnable(int id);
void pfpDisable(int id);
void pfpGetStats(int id, pfpStats_t *pStats);
void pfpResetStats(int id);
void pfpSetAlpha(int id, float alpha);

/* The seed's SYS/BIOS hooks, for a scheduler to call. Handles are the scheduler's own task,
 * Swi and Hwi objects; the Register/Create/Ready hooks need do nothing here. */
void pfpTaskRegister(int hookSetId);
void pfpTaskCreate(void *task, void *eb);
void pfpTaskReady(void *task);
void pfpTaskSwitch(void *prev, void *next);
void pfpSwiRegister(int hookSetId);
void pfpSwiCreate(void *swi, void *eb);
void pfpSwiReady(void *swi);
void pfpSwiBegin(void *swi);
void pfpSwiEnd(void *swi);
void pfpHwiRegister(int hookSetId);
void pfpHwiCreate(void *hwi, void *eb);
void pfpHwiReady(void *hwi);
void pfpHwiBegin(void *hwi);
void pfpHwiEnd(void *hwi);

/* hookcc's additions. The measurement lines of every point with completed measurements:
 *   ID: 00, n=1000, C=49265, Cmin=49, Cmax=314, C-avg=49.265, Avg-T=6.56867e-05ms
 * (C-avg = C / n, Avg-T = C-avg / the counter's rate, in ms; both as printf's %g), then a line
 * for any misuse counted. Printed through the print function: by default to standard error
 * (hosted), nothing (bare metal, until one is set). */
typedef void (*pfpPrintFunction)(const char *text, void *context);
void pfpSetPrintFunction(pfpPrintFunction print, void *context);
void pfpPrintStats(void);

#ifdef __cplusplus
}
#endif

#endif /* HOOKCC_PFP_H */
