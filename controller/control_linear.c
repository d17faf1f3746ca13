/*
 * The control algorithm of Lin, Sundararaj, Dinda (papers/004, Sect. 4.2), exactly:
 *
 *   at startup: period = initial (200 ms), slice = U * period, U = r_target;
 *   on every new rate report and on every target change, e = r_current - r_target;
 *     |e| >  eps: period -= delta_period, slice = U * period; if period <= min_period,
 *                 period = initial (and slice = U * period);
 *     |e| <= eps: keep (period, slice).
 *
 * A linear search from coarse to fine granularity, restarting from the top. Invariant:
 * U = slice/period = r_target (asserted in control_apply()). Reading of the paper where it
 * is not explicit (docs/control.md):
 *   - the reset test is made on the decremented period, so min_period itself is never used;
 *     min_period is the larger of the configured one and the nodes' floor;
 *     a slice below min_slice is treated like a period below min_period (reset);
 *   - on a target change the error is recomputed with the last r_current (measured under
 *     the old target) against the new target; in band, the period is kept and only the
 *     slice is rescaled so that U = the new target;
 *   - every job-level report counts, including one measured partly under the previous
 *     constraint (the paper does not filter).
 */
#include <math.h>

#include "control.h"

static void linear_step(struct control_job *job, mono_ns now, struct control_decision *out)
{
	const struct control_params *p = &job->p;
	enum control_reason why = CONTROL_R_STEP;
	mono_ns period =
	    job->period_ns > p->delta_period_ns ? job->period_ns - p->delta_period_ns : 0;

	mono_ns lo = job->floor_ns > p->min_period_ns ? job->floor_ns : p->min_period_ns;

	if (period <= lo || control_slice_for(period, job->target_pct) < p->min_slice_ns) {
		period = p->initial_period_ns;
		why = CONTROL_R_RESET;
		job->resets++;
	}
	control_apply(job, period, job->target_pct, now, why, out);
}

void control_linear_eval(struct control_job *job, double e, mono_ns now,
                         struct control_decision *out)
{
	if (fabs(e) <= job->p.epsilon_pct) {
		control_keep(job, CONTROL_R_INBAND, out);
		return;
	}
	linear_step(job, now, out);
}

void control_linear_target(struct control_job *job, double old_pct, mono_ns now,
                           struct control_decision *out)
{
	(void)old_pct;
	if (!isnan(job->last_rate_pct) &&
	    fabs(job->last_rate_pct - job->target_pct) > job->p.epsilon_pct) {
		linear_step(job, now, out);
		if (out->reason == CONTROL_R_STEP)
			out->reason = CONTROL_R_TARGET;
		return;
	}
	/* in band (or nothing measured yet): same period, slice for the new U */
	mono_ns period = job->period_ns;
	if (control_slice_for(period, job->target_pct) < job->p.min_slice_ns)
		period = job->p.initial_period_ns;
	control_apply(job, period, job->target_pct, now, CONTROL_R_TARGET, out);
}
