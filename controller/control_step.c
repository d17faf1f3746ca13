/*
 * The steps every control algorithm takes (control.h): apply a new (period, U) to a job, or
 * keep the one it has, and the decision that tells the caller which. Called by the core
 * (control_core.c) and by the algorithms (control_floating.c, control_linear.c,
 * control_adaptive.c).
 *
 * Invariant kept by control_apply: U = slice / period = u_pct / 100 up to rounding to 1 ns,
 * and 0 < slice <= period; a new constraint bumps the job's generation.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "control.h"

/* Broken invariants are fatal (STYLE.md), also in release builds where assert() is off. */
#define ctl_assert(c) ((c) ? (void)0 : ctl_assert_fail(#c, __FILE__, __LINE__))

static void ctl_assert_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "vsched_control: invariant broken: %s (%s:%d)\n", what, file, line);
	abort();
}

/* slice = U * period, rounded to the nearest ns: |slice - U*period| <= 0.5 ns. */
mono_ns control_slice_for(mono_ns period, double u_pct)
{
	/* rounded down (1e-6 ns absorbs the product's float error on exact values): a job never
	 * asks a node for more than its U, so U's that sum to the cap fit (vsched admits
	 * Σ U <= cap up to 1e-9; a slice rounded up by 0.2 ns at 12 ms is 1.7e-8 over) */
	return (mono_ns)floor((double)period * u_pct / 100.0 + 1e-6);
}

/* Smallest period usable at utilisation u_pct: >= min_period, >= the nodes' floor and
 * slice >= min_slice. */
mono_ns control_min_period(const struct control_job *job, double u_pct)
{
	mono_ns p = job->floor_ns > job->p.min_period_ns ? job->floor_ns : job->p.min_period_ns;
	double need = ceil((double)job->p.min_slice_ns * 100.0 / u_pct);
	if (need > (double)p)
		p = (mono_ns)need;
	return p;
}

static void decision_fill(const struct control_job *job, bool changed, enum control_reason why,
                          struct control_decision *out)
{
	if (!out)
		return;
	out->changed = changed;
	out->period_ns = job->period_ns;
	out->slice_ns = job->slice_ns;
	out->reason = why;
	out->gen = job->gen;
	out->err_pct = job->last_err_pct;
	out->rate_pct = job->last_rate_pct;
	out->u_pct = job->cur_u_pct;
}

void control_keep(const struct control_job *job, enum control_reason why,
                  struct control_decision *out)
{
	decision_fill(job, false, why, out);
}

/*
 * Sets (period, slice = u_pct/100 * period). A new constraint (period or slice differs)
 * bumps the generation, so that reports measured under the old one can be recognised, and
 * restarts the round and the averaging.
 */
void control_apply(struct control_job *job, mono_ns period, double u_pct, mono_ns now,
                   enum control_reason why, struct control_decision *out)
{
	mono_ns slice = control_slice_for(period, u_pct);
	bool changed = period != job->period_ns || slice != job->slice_ns;

	/* Invariant: U = slice/period = u_pct/100 rounded down to 1 ns; 0 < slice <= period. */
	ctl_assert((double)period * u_pct / 100.0 - (double)slice > -1e-5 - 1e-9 * (double)period &&
	           (double)period * u_pct / 100.0 - (double)slice < 1.0 + 1e-9 * (double)period);
	ctl_assert(slice <= period && slice > 0);

	if (changed) {
		job->prev_period_ns = job->period_ns;
		job->prev_u_pct = job->cur_u_pct;
		job->prev_target_pct = job->cur_target_pct;
		job->cur_u_pct = u_pct;
		job->cur_target_pct = job->target_pct;
		job->period_ns = period;
		job->slice_ns = slice;
		job->gen++;
		job->gen_start = now;
		job->round++;
		job->round_count = 0;
		job->round_start = now;
		job->avg_n = 0;
		job->avg_pos = 0;
		job->holding = false;
		job->changes++;
	}
	if (why != CONTROL_R_ROLLBACK)
		job->rejected = false;
	decision_fill(job, changed, why, out);
}
