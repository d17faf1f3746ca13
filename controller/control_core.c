/*
 * Controller core: job state, rank aggregation, R_max calibration, state classification.
 * The per-algorithm decisions are in control_floating.c (U controlled, the default),
 * control_linear.c (paper 004 Sect. 4.2, exactly) and control_adaptive.c; all apply them
 * through control_step.c (the constraint invariant: slice = U * period, 0 < slice <= period).
 *
 * Rounds. A job-level report ("evaluation", one control iteration) is made when every rank
 * has reported at least once since the previous evaluation, or, if round_timeout_ns is set,
 * when that long has passed with at least one rank reported (missing ranks are left out).
 * A rank that reports twice in a round replaces its rate. The job rate is the minimum over
 * the ranks of the round (slowest, default) or their mean. With floating, a round also lasts
 * at least control_floating_eval_len() and a rank's rate is the sum of its units over the
 * sum of its intervals in the round.
 *
 * States (control_classify()):
 *   CALIBRATING  R_max unknown and being measured at U = 1.
 *   REJECTED     a node refused the last change (control_reject()), or the target is
 *                unreachable: adaptive search exhausted with the best |e| > eps, or linear
 *                reset twice since the last target change without one evaluation in band.
 *   OSCILLATING  in the last osc_window evaluations either the band was left (an
 *                evaluation judged in band followed by one that changed the schedule)
 *                osc_count times, or the errors that changed the schedule flipped sign
 *                osc_count times; or (linear) the search was reset to the initial period
 *                after the job had been in band since the last target change, and the
 *                band has not been regained yet (the paper's Fig. 5 cycles).
 *   STABLE       the last evaluation was judged in band (kept the schedule); floating:
 *                the mean error of the last (2 to 4) evaluations since the target was
 *                set is within eps, and none is off by more than 2 eps.
 *   CONVERGING   otherwise: out of band, or no evaluation under the current constraint yet.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control.h"
#include "proto_admin.h"

/* The algorithms' names are the admin protocol's (padm_algo_names) */
_Static_assert((int)CONTROL_ALGO_LINEAR == PADM_ALGO_LINEAR &&
                   (int)CONTROL_ALGO_ADAPTIVE == PADM_ALGO_ADAPTIVE &&
                   (int)CONTROL_ALGO_FLOATING == PADM_ALGO_FLOATING,
               "enum control_algo = enum padm_algo");

void control_params_default(struct control_params *p)
{
	memset(p, 0, sizeof(*p));
	p->algo = CONTROL_ALGO_FLOATING;
	p->agg = CONTROL_AGG_SLOWEST;
	p->calib = CONTROL_CALIB_RUN;
	p->nranks = 1;
	p->target_pct = 0;
	p->epsilon_pct = 2.0; /* the band floating holds (docs/control.md) */
	p->r_max = 0;
	p->delta_period_ns = 2 * NSEC_PER_MSEC;
	p->min_period_ns = 1 * NSEC_PER_MSEC;
	p->min_slice_ns = 100 * NSEC_PER_USEC;
	p->initial_period_ns = 200 * NSEC_PER_MSEC;
	p->calib_rounds = 2;
	p->round_timeout_ns = 0;
	p->apply_latency_ns = 0;
	p->stale_frac = 0.05;
	p->avg_reports = 8;
	p->jump_factor = 3.0;
	p->noise_pct = 0.5;
	p->osc_window = 16;
	p->osc_count = 3;
	p->u_max_pct = 100.0;
	p->eval_periods = 4;
	p->eval_min_ns = 0;
	p->eval_max_ns = 8 * NSEC_PER_SEC;
	p->len_trial = false; /* measured worse on the real jobs: bench/RESULTS.md run 9 */
}

int control_params_check(const struct control_params *p)
{
	if (!p)
		return -EINVAL;
	if ((unsigned)p->algo >= CONTROL_ALGO_COUNT)
		return -EINVAL;
	if (p->agg != CONTROL_AGG_SLOWEST && p->agg != CONTROL_AGG_MEAN)
		return -EINVAL;
	if (p->calib != CONTROL_CALIB_RUN && p->calib != CONTROL_CALIB_OBSERVED)
		return -EINVAL;
	if (p->nranks < 1 || p->nranks > CONTROL_MAX_RANKS)
		return -EINVAL;
	if (!isfinite(p->target_pct) || p->target_pct < 0 || p->target_pct > 100)
		return -EINVAL;
	if (!isfinite(p->epsilon_pct) || p->epsilon_pct <= 0 || p->epsilon_pct >= 100)
		return -EINVAL;
	if (!isfinite(p->r_max) || p->r_max < 0)
		return -EINVAL;
	if (p->min_period_ns == 0 || p->min_slice_ns == 0 || p->delta_period_ns == 0)
		return -EINVAL;
	if (p->initial_period_ns <= p->min_period_ns || p->min_slice_ns > p->min_period_ns)
		return -EINVAL;
	if (p->initial_period_ns > 1000ULL * 3600 * NSEC_PER_SEC) /* beyond 1000 h: a typo */
		return -EINVAL;
	if (p->calib_rounds < 1 || p->avg_reports < 1 || p->avg_reports > CONTROL_AVG_MAX)
		return -EINVAL;
	if (!isfinite(p->stale_frac) || p->stale_frac < 0 || p->stale_frac >= 1)
		return -EINVAL;
	if (!isfinite(p->noise_pct) || p->noise_pct < 0 || p->noise_pct > 50)
		return -EINVAL;
	if (!isfinite(p->jump_factor) || p->jump_factor < 1)
		return -EINVAL;
	if (p->osc_window < 2 || p->osc_window > CONTROL_HIST_SIZE || p->osc_count < 1)
		return -EINVAL;
	if (!isfinite(p->u_max_pct) || p->u_max_pct <= 0 || p->u_max_pct > 100)
		return -EINVAL;
	if (p->eval_periods < 1 || p->eval_periods > 1000 || p->eval_max_ns < p->eval_min_ns ||
	    p->eval_max_ns > 3600ULL * NSEC_PER_SEC)
		return -EINVAL;
	if (p->u_slot_ns > p->min_period_ns)
		return -EINVAL; /* at least one slot in every period searched */
	if (p->target_pct > 0 &&
	    control_slice_for(p->initial_period_ns, p->target_pct) < p->min_slice_ns)
		return -EINVAL;
	return 0;
}

int control_job_init(struct control_job *job, const struct control_params *p, mono_ns now,
                     struct control_decision *out)
{
	int rc;

	if (!job)
		return -EINVAL;
	rc = control_params_check(p);
	if (rc)
		return rc;
	memset(job, 0, sizeof(*job));
	job->ranks = calloc(p->nranks, sizeof(*job->ranks));
	if (!job->ranks)
		return -ENOMEM;
	job->p = *p;
	job->nranks = p->nranks;
	job->target_pct = p->target_pct;
	job->r_max = p->r_max;
	job->r_max_calibrated = p->r_max > 0;
	job->last_rate_pct = NAN;
	job->last_err_pct = NAN;
	job->noise_pct = p->noise_pct;
	job->round = 1;
	job->round_start = now;
	job->gen_start = now;
	job->state = CONTROL_CONVERGING;
	control_floating_init(job);

	if (job->r_max == 0 && p->calib == CONTROL_CALIB_RUN) {
		job->state = CONTROL_CALIBRATING;
		control_apply(job, p->initial_period_ns, 100.0, now, CONTROL_R_CALIBRATE, out);
	} else if (job->target_pct > 0) {
		control_apply(job, p->initial_period_ns, control_start_u(job), now, CONTROL_R_INIT,
		              out);
	} else {
		/* no target: unconstrained (U = 1) until one is set */
		control_apply(job, p->initial_period_ns, 100.0, now, CONTROL_R_NOTARGET, out);
	}
	job->prev_period_ns = job->period_ns;
	job->prev_u_pct = job->cur_u_pct;
	job->prev_target_pct = job->cur_target_pct;
	return 0;
}

void control_job_fini(struct control_job *job)
{
	if (!job)
		return;
	free(job->ranks);
	job->ranks = NULL;
	job->nranks = 0;
}

int control_set_nranks(struct control_job *job, uint32_t nranks)
{
	struct control_rank *r;

	if (!job || nranks < 1 || nranks > CONTROL_MAX_RANKS)
		return -EINVAL;
	r = calloc(nranks, sizeof(*r));
	if (!r)
		return -ENOMEM;
	free(job->ranks);
	job->ranks = r;
	job->nranks = nranks;
	job->p.nranks = nranks;
	job->round++;
	job->round_count = 0;
	return 0;
}

static void hist_push(struct control_job *job, double e, bool inband, bool acted)
{
	struct control_hist *h = &job->hist[job->hist_pos];
	h->err = (float)e;
	h->inband = inband;
	h->acted = acted;
	job->hist_pos = (job->hist_pos + 1) % CONTROL_HIST_SIZE;
	if (job->hist_n < CONTROL_HIST_SIZE)
		job->hist_n++;
}

static void hist_clear(struct control_job *job)
{
	job->hist_n = 0;
	job->hist_pos = 0;
}

/* Oscillation test over the last osc_window evaluations, oldest first. */
static bool control_oscillating(const struct control_job *job)
{
	uint32_t n = job->hist_n < job->p.osc_window ? job->hist_n : job->p.osc_window;
	uint32_t exits = 0, flips = 0;
	int last_sign = 0;
	bool prev_inband = false;

	for (uint32_t k = 0; k < n; k++) {
		uint32_t i = (job->hist_pos + CONTROL_HIST_SIZE - n + k) % CONTROL_HIST_SIZE;
		const struct control_hist *h = &job->hist[i];
		if (k > 0 && prev_inband && h->acted)
			exits++;
		if (h->acted) {
			int s = h->err > 0 ? 1 : (h->err < 0 ? -1 : 0);
			if (s && last_sign && s != last_sign)
				flips++;
			if (s)
				last_sign = s;
		}
		prev_inband = h->inband;
	}
	return exits >= job->p.osc_count || flips >= job->p.osc_count;
}

/* The mean error of the last (up to 4, at least 2) evaluations is within eps, and none of
 * them is off by more than 2 eps. */
static bool recent_mean_inband(const struct control_job *job)
{
	uint32_t n = job->hist_n < 4 ? job->hist_n : 4;
	double sum = 0, eps = job->p.epsilon_pct;

	if (n < 2)
		return false;
	for (uint32_t k = 0; k < n; k++) {
		float e =
		    job->hist[(job->hist_pos + CONTROL_HIST_SIZE - 1 - k) % CONTROL_HIST_SIZE].err;
		if (fabs(e) > 2 * eps)
			return false;
		sum += e;
	}
	return fabs(sum / n) <= eps;
}

static void control_classify(struct control_job *job)
{
	if (job->state == CONTROL_CALIBRATING)
		return;
	if (job->rejected || job->unreachable) {
		job->state = CONTROL_REJECTED;
		return;
	}
	if (control_oscillating(job)) {
		job->state = CONTROL_OSCILLATING;
		return;
	}
	if (job->p.algo == CONTROL_ALGO_FLOATING) {
		job->state = recent_mean_inband(job) ? CONTROL_STABLE : CONTROL_CONVERGING;
		return;
	}
	if (job->hist_n == 0) {
		job->state = CONTROL_CONVERGING;
		return;
	}
	const struct control_hist *last =
	    &job->hist[(job->hist_pos + CONTROL_HIST_SIZE - 1) % CONTROL_HIST_SIZE];
	if (last->inband)
		job->state = CONTROL_STABLE;
	else if (job->lost)
		job->state = CONTROL_OSCILLATING;
	else
		job->state = CONTROL_CONVERGING;
}

static double round_rate(const struct control_job *job)
{
	double agg = job->p.agg == CONTROL_AGG_MEAN ? 0.0 : INFINITY;
	uint32_t n = 0;

	for (uint32_t i = 0; i < job->nranks; i++) {
		const struct control_rank *r = &job->ranks[i];
		if (r->round != job->round)
			continue;
		if (job->p.agg == CONTROL_AGG_MEAN)
			agg += r->rate;
		else if (r->rate < agg)
			agg = r->rate;
		n++;
	}
	if (n == 0)
		return NAN;
	return job->p.agg == CONTROL_AGG_MEAN ? agg / n : agg;
}

static void start_round(struct control_job *job, mono_ns now)
{
	job->round++;
	job->round_count = 0;
	job->round_start = now;
}

/* Calibration round done: R_max = mean of the calibration rounds. */
static void calib_eval(struct control_job *job, double rate, mono_ns now,
                       struct control_decision *out)
{
	job->calib_sum += rate;
	job->calib_n++;
	if (job->calib_n < job->p.calib_rounds || job->calib_sum <= 0) {
		control_keep(job, CONTROL_R_CALIB_WAIT, out);
		return;
	}
	job->r_max = job->calib_sum / job->calib_n;
	job->r_max_calibrated = true;
	job->state = CONTROL_CONVERGING;
	if (job->target_pct > 0)
		control_apply(job, job->p.initial_period_ns, control_start_u(job), now,
		              CONTROL_R_CALIBRATED, out);
	else
		control_keep(job, CONTROL_R_NOTARGET, out);
}

/* Records a fresh rank report in the current round. */
static void rank_accept(struct control_job *job, uint32_t rank, uint64_t units, mono_ns interval_ns,
                        mono_ns now)
{
	struct control_rank *r = &job->ranks[rank];

	job->reports++;
	if (r->round != job->round) {
		r->round = job->round;
		r->units = 0;
		r->ivl = 0;
		job->round_count++;
	}
	if (job->p.algo == CONTROL_ALGO_FLOATING) {
		/* whole reports of the round: their units over their intervals */
		r->units += (double)units;
		r->ivl += interval_ns;
		r->rate = r->units * (double)NSEC_PER_SEC / (double)r->ivl;
	} else {
		r->rate = (double)units * (double)NSEC_PER_SEC / (double)interval_ns;
	}
	r->end = now;
	r->seen = true;
}

/* The round can be evaluated: every rank reported (or the round timed out with one), and
 * for floating the round spans the evaluation length. */
static bool round_ready(const struct control_job *job, mono_ns now)
{
	bool timed_out = job->p.round_timeout_ns &&
	                 !mono_before(now, job->round_start + job->p.round_timeout_ns);

	if (job->round_count < job->nranks && !timed_out)
		return false;
	if (job->p.algo == CONTROL_ALGO_FLOATING && job->state != CONTROL_CALIBRATING)
		return !mono_before(now, job->round_start + control_floating_eval_len(job));
	return true;
}

/* One evaluation at the job's rate r_current (percent of R_max): the algorithm's decision,
 * then the history and the state. */
static void evaluate(struct control_job *job, double e, mono_ns now, struct control_decision *out)
{
	bool inband;

	switch (job->p.algo) {
	case CONTROL_ALGO_FLOATING:
		control_floating_eval(job, e, now, out);
		inband = control_floating_inband(job);
		break;
	case CONTROL_ALGO_ADAPTIVE:
		control_adaptive_eval(job, e, now, out);
		inband = out->reason == CONTROL_R_INBAND || out->reason == CONTROL_R_HYSTERESIS;
		break;
	default:
		control_linear_eval(job, e, now, out);
		inband = out->reason == CONTROL_R_INBAND;
		break;
	}
	if (inband) {
		job->inband_since_target++;
		job->lost = false;
	} else if (out->reason == CONTROL_R_RESET && job->inband_since_target > 0) {
		job->lost = true;
	}
	if (job->p.algo == CONTROL_ALGO_LINEAR)
		job->unreachable = job->resets >= 2 && job->inband_since_target == 0;
	/* a floating job's probes, bound moves and small steps near the target are not control
	 * actions against an error (they do not count towards oscillation) */
	bool acted = job->p.algo == CONTROL_ALGO_FLOATING
	                 ? out->reason == CONTROL_R_USTEP && job->fl.full_step
	                 : out->changed;
	hist_push(job, e, inband, acted);
	control_classify(job);
	out->err_pct = e;
	out->rate_pct = job->last_rate_pct;
}

int control_on_report(struct control_job *job, uint32_t rank, uint64_t units, mono_ns interval_ns,
                      mono_ns now, struct control_decision *out)
{
	double rate;

	if (!job || !out || !job->ranks || interval_ns == 0)
		return -EINVAL;
	if (rank >= job->nranks)
		return -ERANGE;

	/* A report must reflect the current constraint: its interval must start after the
	 * constraint was decided (+ apply latency). The paper's linear algorithm uses every
	 * report; calibration always needs clean ones. */
	if ((job->p.algo != CONTROL_ALGO_LINEAR || job->state == CONTROL_CALIBRATING) &&
	    !control_adaptive_fresh(job, interval_ns, now)) {
		job->stale++;
		control_keep(job, CONTROL_R_STALE, out);
		return 0;
	}
	rank_accept(job, rank, units, interval_ns, now);
	if (!round_ready(job, now)) {
		control_keep(job, CONTROL_R_WAIT_RANKS, out);
		return 0;
	}

	rate = round_rate(job);
	job->last_span_ns = now - job->round_start;
	start_round(job, now);
	job->evaluations++;
	if (rate > job->r_observed_max)
		job->r_observed_max = rate;

	if (job->state == CONTROL_CALIBRATING) {
		calib_eval(job, rate, now, out);
		return 0;
	}
	if (!job->r_max_calibrated) {
		/* CONTROL_CALIB_OBSERVED: the best rate seen is the estimate of R_max. */
		if (job->r_observed_max > job->r_max)
			job->r_max = job->r_observed_max;
	}
	if (job->r_max <= 0 || job->target_pct <= 0) {
		control_keep(job, CONTROL_R_NOTARGET, out);
		return 0;
	}

	job->last_rate_pct = 100.0 * rate / job->r_max;
	job->last_err_pct = job->last_rate_pct - job->target_pct;
	evaluate(job, job->last_err_pct, now, out);
	return 0;
}

int control_set_target(struct control_job *job, double pct, mono_ns now,
                       struct control_decision *out)
{
	double old;

	if (!job || !out || !isfinite(pct) || pct <= 0 || pct > 100)
		return -EINVAL;
	if (control_slice_for(job->p.initial_period_ns, pct) < job->p.min_slice_ns)
		return -ERANGE;

	old = job->target_pct;
	job->target_pct = pct;
	job->resets = 0;
	job->inband_since_target = 0;
	job->lost = false;
	job->unreachable = false;
	hist_clear(job);

	if (job->state == CONTROL_CALIBRATING) {
		control_keep(job, CONTROL_R_CALIB_WAIT, out); /* applied once calibrated */
		return 0;
	}
	job->state = CONTROL_CONVERGING;
	if (old <= 0 || job->r_max <= 0) {
		control_adaptive_reset(job);
		control_apply(job, job->p.initial_period_ns, control_start_u(job), now,
		              CONTROL_R_INIT, out);
		return 0;
	}
	if (job->p.algo == CONTROL_ALGO_FLOATING)
		control_floating_target(job, now, out);
	else if (job->p.algo == CONTROL_ALGO_ADAPTIVE)
		control_adaptive_target(job, old, now, out);
	else
		control_linear_target(job, old, now, out);
	return 0;
}

int control_set_floor(struct control_job *job, mono_ns floor_ns, mono_ns now,
                      struct control_decision *out)
{
	if (!job || !out || floor_ns >= job->p.initial_period_ns)
		return -EINVAL;
	job->floor_ns = floor_ns;
	if (job->state == CONTROL_CALIBRATING || job->target_pct <= 0 ||
	    job->period_ns >= control_min_period(job, job->cur_u_pct)) {
		control_keep(job, CONTROL_R_NONE, out);
		return 0;
	}
	if (job->p.algo == CONTROL_ALGO_FLOATING) {
		control_floating_bounds(job, CONTROL_R_FLOOR, now, out);
		return 0;
	}
	control_adaptive_reset(job);
	control_apply(job, control_min_period(job, job->target_pct), job->target_pct, now,
	              CONTROL_R_FLOOR, out);
	return 0;
}

int control_set_u_limit(struct control_job *job, double u_pct, mono_ns now,
                        struct control_decision *out)
{
	if (!job || !out || job->p.algo != CONTROL_ALGO_FLOATING || !isfinite(u_pct) ||
	    u_pct <= 0 || u_pct > 100)
		return -EINVAL;
	job->fl.u_limit_pct = u_pct;
	if (u_pct >= 100)
		job->fl.u_refused_pct = 100.0; /* lifted: what was refused is tried afresh */
	else /* set from outside (given back, the plan): no bisection up until the back-off */
		job->fl.u_refused_pct = fmin(job->fl.u_refused_pct, u_pct);
	if (job->state == CONTROL_CALIBRATING || job->target_pct <= 0 || job->cur_u_pct <= u_pct) {
		control_keep(job, CONTROL_R_NONE, out);
		return 0;
	}
	control_floating_bounds(job, CONTROL_R_LIMIT, now, out);
	return 0;
}

int control_retry_u_limit(struct control_job *job, mono_ns now, struct control_decision *out)
{
	if (!job || !out)
		return -EINVAL;
	if (control_floating_reopen_limit(job))
		return control_probe_u_limit(job, now, out);
	return control_set_u_limit(job, 100, now, out);
}

void control_restart_round(struct control_job *job, mono_ns at)
{
	job->gen_start = at;
	job->round++;
	job->round_count = 0;
	job->round_start = at;
	job->fl.prev_e = NAN;
}

double control_u_pct(const struct control_job *job)
{
	return job->cur_u_pct;
}

int control_set_rmax(struct control_job *job, double r_max, mono_ns now,
                     struct control_decision *out)
{
	if (!job || !out || !isfinite(r_max) || r_max <= 0)
		return -EINVAL;
	job->r_max = r_max;
	job->r_max_calibrated = true;
	if (job->state == CONTROL_CALIBRATING) {
		job->state = CONTROL_CONVERGING;
		if (job->target_pct > 0) {
			control_apply(job, job->p.initial_period_ns, control_start_u(job), now,
			              CONTROL_R_CALIBRATED, out);
			return 0;
		}
	}
	control_keep(job, CONTROL_R_NONE, out);
	return 0;
}

void control_reject(struct control_job *job, mono_ns now, struct control_decision *out)
{
	mono_ns p = job->prev_period_ns;
	double u = job->prev_u_pct, t = job->prev_target_pct;

	job->rejected = true;
	if (p == 0 || !(u > 0)) {
		/* nothing to go back to: keep, but say so */
		job->state = CONTROL_REJECTED;
		control_keep(job, CONTROL_R_ROLLBACK, out);
		return;
	}
	/* a refused rise of U by the loop itself (same target) caps U; a refused target
	 * change only goes back */
	if (job->p.algo == CONTROL_ALGO_FLOATING && job->cur_target_pct == job->prev_target_pct)
		control_floating_rejected(job, job->cur_u_pct);
	/* back to the constraint (and target) in force before the last change */
	job->target_pct = t;
	control_adaptive_reset(job);
	control_apply(job, p, u, now, CONTROL_R_ROLLBACK, out);
	job->prev_period_ns = p;
	job->prev_u_pct = u;
	job->prev_target_pct = t;
	job->rejected = true;
	job->state = CONTROL_REJECTED;
}

void control_reject_keep_target(struct control_job *job, mono_ns now, struct control_decision *out)
{
	job->prev_target_pct = job->cur_target_pct;
	control_reject(job, now, out);
}

void control_reject_unplaced(struct control_job *job, mono_ns now, struct control_decision *out)
{
	double refused = job->cur_u_pct;

	control_reject_keep_target(job, now, out);
	if (job->p.algo == CONTROL_ALGO_FLOATING)
		control_floating_unplaced(job, refused);
}

const char *control_state_name(enum control_state s)
{
	switch (s) {
	case CONTROL_CALIBRATING:
		return "calibrating";
	case CONTROL_CONVERGING:
		return "converging";
	case CONTROL_STABLE:
		return "stable";
	case CONTROL_OSCILLATING:
		return "oscillating";
	case CONTROL_REJECTED:
		return "rejected";
	}
	return "?";
}

const char *control_reason_name(enum control_reason r)
{
	static const char *const names[] = {
	    [CONTROL_R_NONE] = "none",
	    [CONTROL_R_INBAND] = "inband",
	    [CONTROL_R_HYSTERESIS] = "hysteresis",
	    [CONTROL_R_WAIT_RANKS] = "wait-ranks",
	    [CONTROL_R_STALE] = "stale",
	    [CONTROL_R_CALIB_WAIT] = "calib-wait",
	    [CONTROL_R_UNREACHABLE] = "unreachable",
	    [CONTROL_R_NOTARGET] = "no-target",
	    [CONTROL_R_INIT] = "init",
	    [CONTROL_R_CALIBRATE] = "calibrate",
	    [CONTROL_R_CALIBRATED] = "calibrated",
	    [CONTROL_R_CONFIRM] = "confirm",
	    [CONTROL_R_TARGET] = "target",
	    [CONTROL_R_STEP] = "step",
	    [CONTROL_R_RESET] = "reset",
	    [CONTROL_R_MEMO] = "memo",
	    [CONTROL_R_SEARCH] = "search",
	    [CONTROL_R_BEST] = "best",
	    [CONTROL_R_ROLLBACK] = "rollback",
	    [CONTROL_R_USTEP] = "u-step",
	    [CONTROL_R_PROBE] = "probe",
	    [CONTROL_R_LIMIT] = "limit",
	    [CONTROL_R_FLOOR] = "floor",
	    [CONTROL_R_SILENT] = "silent",
	};
	if ((unsigned)r < sizeof(names) / sizeof(names[0]) && names[r])
		return names[r];
	return "?";
}

const char *control_algo_name(enum control_algo a)
{
	return padm_algo_name((uint8_t)a);
}

int control_algo_parse(const char *s, enum control_algo *out)
{
	uint8_t a;

	if (!s || !out || padm_algo_parse(s, &a) != 0)
		return -EINVAL;
	*out = (enum control_algo)a;
	return 0;
}
