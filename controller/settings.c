/*
 * Per-job settings (DESIGN.md §5.1): the algorithm, the aggregation over ranks, epsilon,
 * R_max, the period search's bounds and the most U a floating job may hold. They come from the
 * config's defaults, from JOB_SET and from the state file, and are checked by the one function
 * below in all three cases; the control library's own check (control_params_check) comes on top,
 * with the target.
 */
#include "controller.h"

#include <errno.h>
#include <math.h>

#include "text.h"

int settings_check(const struct job_settings *s, char *why, size_t whylen)
{
	if (!(s->eps_pct > 0 && s->eps_pct <= 50)) {
		text_fmt(why, whylen, "epsilon %g: must be in (0, 50] percentage points",
		         s->eps_pct);
		return -EINVAL;
	}
	if (!(s->r_max >= 0) || !isfinite(s->r_max)) {
		text_fmt(why, whylen, "r_max %g: must be >= 0 (0: measure it)", s->r_max);
		return -EINVAL;
	}
	if (s->delta_period == 0 || s->min_period == 0 || s->min_slice == 0 ||
	    s->initial_period == 0 || s->initial_period > VSP_PERIOD_MAX ||
	    s->min_period > VSP_PERIOD_MAX || s->delta_period > VSP_PERIOD_MAX) {
		text_fmt(why, whylen, "periods and slices must be > 0 (and at most a week)");
		return -EINVAL;
	}
	if (s->initial_period < s->min_period) {
		text_fmt(why, whylen,
		         "initial_period < min_period (need min_slice <= min_period <= "
		         "initial_period)");
		return -EINVAL;
	}
	if (!(s->u_max_pct > 0 && s->u_max_pct <= 100)) {
		text_fmt(why, whylen, "u_max %g: must be in (0, 100] percent of a CPU",
		         s->u_max_pct);
		return -EINVAL;
	}
	if (s->min_slice > s->min_period) {
		text_fmt(why, whylen,
		         "min_slice > min_period (need min_slice <= min_period <= initial_period)");
		return -EINVAL;
	}
	return 0;
}

int settings_apply(const struct padm_request *q, struct job_settings *s, char *why, size_t whylen)
{
	if (q->mask & PADM_SET_ALGO)
		s->algo = q->algo;
	if (q->mask & PADM_SET_AGG)
		s->agg = q->agg;
	if (q->mask & PADM_SET_EPS)
		s->eps_pct = q->eps_milli / 1000.0;
	if (q->mask & PADM_SET_RMAX) {
		s->r_max = q->r_max;
		s->r_max_given = q->r_max > 0;
	}
	if (q->mask & PADM_SET_DELTA_PERIOD)
		s->delta_period = q->delta_period;
	if (q->mask & PADM_SET_MIN_PERIOD)
		s->min_period = q->min_period;
	if (q->mask & PADM_SET_MIN_SLICE)
		s->min_slice = q->min_slice;
	if (q->mask & PADM_SET_INITIAL_PERIOD)
		s->initial_period = q->initial_period;
	if (q->mask & PADM_SET_U_MAX)
		s->u_max_pct = q->u_max_milli / 1000.0;
	return settings_check(s, why, whylen);
}

void settings_control_params(const struct ctld_config *c, const struct job_settings *s,
                             double target, struct control_params *p)
{
	control_params_default(p);
	p->algo = (enum control_algo)s->algo;
	p->agg = (enum control_agg)s->agg;
	p->calib = (enum control_calib)c->calib;
	p->epsilon_pct = s->eps_pct;
	p->r_max = s->r_max;
	p->target_pct = target;
	p->delta_period_ns = s->delta_period;
	p->min_period_ns = s->min_period;
	p->min_slice_ns = s->min_slice;
	p->initial_period_ns = s->initial_period;
	/* U = 1 is "unconstrained" to the daemon (never sent), and no vsched admits more than
	 * the kernel's RT throttling share (95 % by default): a floating job asks for less */
	p->u_max_pct = s->u_max_pct < U_CEILING_PCT ? s->u_max_pct : U_CEILING_PCT;
	if (c->cs.on) {
		/* the loop's period is the plan's sub-frame (frame / 1..8 window-sets, by
		 * halving), its U a whole number of slots of it; it starts at the frame, or at
		 * the job's initial period where that is finer than the frame and coarser than
		 * the finest sub-frame (the search starts there: round(frame / p) window-sets) */
		p->min_period_ns = c->cs.frame / COPLAN_MAX_WINDOWS > c->cs.slot
		                       ? c->cs.frame / COPLAN_MAX_WINDOWS
		                       : c->cs.slot;
		p->initial_period_ns =
		    s->initial_period < c->cs.frame && s->initial_period > p->min_period_ns
		        ? s->initial_period
		        : c->cs.frame;
		p->u_slot_ns = c->cs.slot;
	}
	p->round_timeout_ns = c->round_timeout;
	p->apply_latency_ns = c->apply_latency;
}
