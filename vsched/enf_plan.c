/*
 * vsched/enf_plan.c: where a task's perf enforcer should overflow (pure arithmetic; the
 * dispatcher arms it, dispatch.c arm_enforcer).
 *
 * The margin (slice / ENF_MARGIN_DIV, at most ENF_MARGIN_MAX): the enforcer's counter counts
 * the time the task is on its CPU, and that includes time the host took from the virtual CPU
 * (steal), which the task's CPU clock — the budget's measure — leaves out. Stopped at the
 * budget itself, a job stolen from would stop that much early and leave the CPU idle while
 * it still owes time (measured: 0.15-3.4 ms per second of steal on these VMs, 8-30 % of
 * window jobs short, bench/RESULTS.md session 30). With the margin, a job stolen less than
 * that still gets its whole budget; what it ran past it is taken from its next job (jobs.c),
 * so the share stays slice/period.
 *
 * The counter overflows every len of counted CPU from cpu0 on (the dispatcher rebases cpu0
 * at each stop it sees), and the task stops a timer's lateness after an overflow (20-150 µs
 * here). It is kept when its next overflow gives the job between its budget plus half the
 * margin and its budget plus the margin plus ENF_SLACK; else re-armed, with a period of one
 * slice when that lands there too. A task that uses its whole budget every job then runs one
 * slice per job, stop to stop, carrying an overrun of about the margin from job to job, and
 * needs no re-arming; steal uses the carried overrun up. Otherwise (a first job, one after a
 * short job, steal that used up half the margin) the period gives the job its budget plus
 * the whole margin, and a later job sets one slice.
 */
#include "vsched.h"

#define ENF_MARGIN_DIV 8                     /* margin: slice / this ... */
#define ENF_MARGIN_MAX (2 * NSEC_PER_MSEC)   /* ... and at most this */
#define ENF_SLACK      (300 * NSEC_PER_USEC) /* kept up to this past budget + margin */

uint64_t enf_margin(uint64_t slice)
{
	uint64_t m = slice / ENF_MARGIN_DIV;

	return m < ENF_MARGIN_MAX ? m : ENF_MARGIN_MAX;
}

uint64_t enf_plan(const struct enf_grid *g, uint64_t c, uint64_t rest, uint64_t slice)
{
	uint64_t m = enf_margin(slice), p;
	uint64_t lo = rest + m / 2, hi = rest + m + ENF_SLACK; /* CPU until the overflow */

	if (g->armed && g->len > 0 && !mono_before(c, g->cpu0)) {
		uint64_t nx = g->cpu0 + ((c - g->cpu0) / g->len + 1) * g->len;
		if (nx - c >= lo && nx - c <= hi)
			return 0;
	}
	p = slice >= lo && slice <= hi ? slice : rest + m;
	return p < PERFWATCH_MIN_NS ? PERFWATCH_MIN_NS : p;
}
