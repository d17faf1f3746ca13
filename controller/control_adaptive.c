/*
 * The "adaptive" control algorithm: same goal and invariant as paper 004 Sect. 4.2
 * (U = slice/period = r_target, search the period for |e| <= eps), fewer iterations:
 *
 *  1. Fresh reports only. A report counts for the current constraint only if at most
 *     stale_frac (5 %) of its interval lies before the constraint took effect (decision
 *     time + apply_latency_ns); older reports are dropped (CONTROL_R_STALE). Every
 *     evaluation therefore measures one (period, U).
 *  2. Memory of granularities. Every evaluation is recorded in a small per-job table
 *     (period, U) -> mean error (last <= 8 reports, LRU over CONTROL_MEMO_SIZE entries).
 *     On a target change the job jumps to the period with the smallest known |error| at
 *     the new U if that is <= eps; else to the period whose relative efficiency r/U,
 *     measured at another U, predicts |e| <= eps/2 at the new target; else it keeps its
 *     period. When the granularity is known the first fresh report is in band: 1
 *     iteration.
 *  3. Search on x = log2(period) instead of 2 ms steps: halve the period while |e| does not
 *     get worse by more than the report noise (double it if the start was already too
 *     fine), then golden-section search inside the bracket, until a probe is in band. The
 *     noise (s.d. of one report's error) starts at noise_pct and is re-estimated from the
 *     reports while the job holds a constraint. Probes whose (period, U) is in the memo are not
 *     re-measured. The search stops when the bracket is narrower than delta_period or after
 *     24 probes; the job is then parked at the best period and marked unreachable (shown
 *     as "rejected") if that is still out of band; it searches again after 64 evaluations.
 *  4. Hysteresis. Once a report is in band the schedule is held; it is left only when the
 *     mean of the last avg_reports reports (at this constraint) is out of band, or a single
 *     report is off by more than jump_factor * eps (a real change, e.g. external load).
 *
 * Search bounds: [max(min_period, min_slice/U), initial_period].
 */
#include <math.h>

#include "control.h"

#define SEARCH_MAX_PROBES 24
#define PARKED_RETRY      64
#define GOLD              0.3819660112501051 /* 2 - phi */

enum feed { FEED_NEXT, FEED_FOUND, FEED_DONE };

/* Fresh: at most stale_frac of [now - interval, now] lies before the constraint took
 * effect (gen_start + apply_latency). */
bool control_adaptive_fresh(const struct control_job *job, mono_ns interval_ns, mono_ns now)
{
	mono_ns start = now - interval_ns; /* wrap-safe comparisons */
	mono_ns effect = job->gen_start + job->p.apply_latency_ns;

	if (!mono_before(start, effect))
		return true;
	if (!mono_before(effect, now))
		return false; /* the whole interval precedes the constraint */
	return (double)(effect - start) <= job->p.stale_frac * (double)interval_ns;
}

void control_adaptive_reset(struct control_job *job)
{
	job->search = CONTROL_S_IDLE;
	job->holding = false;
	job->unreachable = false;
	job->s_steps = 0;
}

/* ---- memo ---------------------------------------------------------------------------- */

static bool same_period(mono_ns a, mono_ns b)
{
	mono_ns d = a > b ? a - b : b - a;
	return d * 200 <= b; /* within 0.5 % */
}

static bool same_u(double a, double b)
{
	return fabs(a - b) < 0.0005;
}

static double memo_mean(const struct control_memo *m)
{
	return m->err_sum / m->n;
}

static struct control_memo *memo_find(struct control_job *job, mono_ns period, double u)
{
	for (uint32_t i = 0; i < job->memo_n; i++) {
		struct control_memo *m = &job->memo[i];
		if (same_period(m->period_ns, period) && same_u(m->u, u))
			return m;
	}
	return NULL;
}

static void memo_add(struct control_job *job, mono_ns period, double u, double e)
{
	struct control_memo *m = memo_find(job, period, u);

	if (!m) {
		if (job->memo_n < CONTROL_MEMO_SIZE) {
			m = &job->memo[job->memo_n++];
		} else {
			m = &job->memo[0];
			for (uint32_t i = 1; i < CONTROL_MEMO_SIZE; i++)
				if (job->memo[i].stamp < m->stamp)
					m = &job->memo[i];
		}
		m->period_ns = period;
		m->u = u;
		m->err_sum = 0;
		m->n = 0;
	}
	if (m->n >= 8) { /* keep it a recent mean */
		m->err_sum *= 7.0 / 8.0;
		m->n = 7;
	}
	m->err_sum += e;
	m->n++;
	m->stamp = ++job->memo_clock;
}

static void memo_forget_u(struct control_job *job, double u)
{
	uint32_t w = 0;
	for (uint32_t i = 0; i < job->memo_n; i++)
		if (!same_u(job->memo[i].u, u))
			job->memo[w++] = job->memo[i];
	job->memo_n = w;
}

static bool usable(const struct control_job *job, mono_ns period)
{
	return period >= control_min_period(job, job->target_pct) &&
	       period <= job->p.initial_period_ns;
}

/* Best known period at the current target: smallest |mean error| <= eps, not `except`. */
static const struct control_memo *memo_best(struct control_job *job, mono_ns except)
{
	const struct control_memo *best = NULL;
	double u = job->target_pct / 100.0;

	for (uint32_t i = 0; i < job->memo_n; i++) {
		const struct control_memo *m = &job->memo[i];
		if (!same_u(m->u, u) || (except && same_period(m->period_ns, except)) ||
		    !usable(job, m->period_ns))
			continue;
		double a = fabs(memo_mean(m));
		if (a > job->p.epsilon_pct)
			continue;
		if (!best || a < fabs(memo_mean(best)) ||
		    (a == fabs(memo_mean(best)) && m->period_ns > best->period_ns))
			best = m;
	}
	return best;
}

/* Period whose efficiency r/U measured at another U predicts |e| <= eps/2 at the target. */
static mono_ns memo_predict(struct control_job *job)
{
	double u = job->target_pct / 100.0, best_a = INFINITY;
	mono_ns best = 0;

	for (uint32_t i = 0; i < job->memo_n; i++) {
		const struct control_memo *m = &job->memo[i];
		if (same_u(m->u, u) || !usable(job, m->period_ns))
			continue;
		double ratio = (100.0 * m->u + memo_mean(m)) / (100.0 * m->u);
		double pred = fabs((ratio - 1.0) * job->target_pct);
		if (pred <= job->p.epsilon_pct / 2 &&
		    (pred < best_a || (pred == best_a && m->period_ns > best))) {
			best_a = pred;
			best = m->period_ns;
		}
	}
	return best;
}

/* ---- averaging (hysteresis) ---------------------------------------------------------- */

static void avg_push(struct control_job *job, double e)
{
	uint32_t n = job->p.avg_reports;
	job->avg_buf[job->avg_pos] = e;
	job->avg_pos = (job->avg_pos + 1) % n;
	if (job->avg_n < n)
		job->avg_n++;
}

static double avg_mean(const struct control_job *job)
{
	double s = 0;
	for (uint32_t i = 0; i < job->avg_n; i++)
		s += job->avg_buf[i];
	return job->avg_n ? s / job->avg_n : NAN;
}

/* With a full averaging window at one constraint, refine the noise estimate (EWMA of the
 * window's sample s.d.). */
static void noise_update(struct control_job *job)
{
	uint32_t n = job->avg_n;
	if (n < 4 || n < job->p.avg_reports)
		return;
	double m = avg_mean(job), v = 0;
	for (uint32_t i = 0; i < n; i++)
		v += (job->avg_buf[i] - m) * (job->avg_buf[i] - m);
	job->noise_pct = 0.8 * job->noise_pct + 0.2 * sqrt(v / (n - 1));
}

/* ---- search on x = log2(period) ------------------------------------------------------ */

static double x_lo(const struct control_job *job)
{
	return log2((double)control_min_period(job, job->target_pct));
}

static double x_hi(const struct control_job *job)
{
	return log2((double)job->p.initial_period_ns);
}

static mono_ns x_period(const struct control_job *job, double x)
{
	double lo = x_lo(job), hi = x_hi(job);
	if (x <= lo)
		return control_min_period(job, job->target_pct);
	if (x >= hi)
		return job->p.initial_period_ns;
	return (mono_ns)llround(exp2(x));
}

/* Bracket narrower than the linear step: nothing left to gain. */
static bool too_close(const struct control_job *job, double a, double b)
{
	return fabs(exp2(b) - exp2(a)) < (double)job->p.delta_period_ns;
}

static enum feed golden_next(struct control_job *job, double *next)
{
	double a = job->s_lo, b = job->s_hi, c = job->s_best_x, m;

	if (job->s_steps >= SEARCH_MAX_PROBES || too_close(job, a, b))
		return FEED_DONE;
	if (c - a >= b - c)
		m = c - GOLD * (c - a);
	else
		m = c + GOLD * (b - c);
	if (fabs(exp2(m) - exp2(c)) < (double)job->p.delta_period_ns / 2)
		return FEED_DONE;
	*next = m;
	return FEED_NEXT;
}

#define X_TINY 1e-9 /* positions closer than this are the same */

/* The first probe (out of band): descend towards finer periods, or ascend from the finest. */
static enum feed feed_first(struct control_job *job, double x, double e, double *next)
{
	double lo = x_lo(job), hi = x_hi(job);

	job->s_best_x = x;
	job->s_best_e = e;
	job->s_prev_x = NAN; /* NAN: no worse point above the best known yet */
	if (x > lo + X_TINY) {
		job->search = CONTROL_S_DESCEND;
		*next = fmax(x - 1, lo);
		return FEED_NEXT;
	}
	job->search = CONTROL_S_ASCEND;
	job->s_lo = lo;
	if (x >= hi - X_TINY)
		return FEED_DONE;
	*next = fmin(x + 1, hi);
	return FEED_NEXT;
}

/* Descending (halving the period): on while not worse, then bracket and refine. */
static enum feed feed_descend(struct control_job *job, double x, double e, bool worse, double *next)
{
	double lo = x_lo(job), hi = x_hi(job);

	if (fabs(e) < fabs(job->s_best_e) || !worse) {
		if (fabs(e) < fabs(job->s_best_e)) {
			if (isnan(job->s_prev_x) || job->s_best_x > x)
				job->s_prev_x = job->s_best_x; /* point above */
			job->s_best_x = x;
			job->s_best_e = e;
		}
		if (x <= lo + X_TINY) {
			job->s_lo = lo;
			job->s_hi =
			    isnan(job->s_prev_x) ? fmin(job->s_best_x + 1, hi) : job->s_prev_x;
			job->search = CONTROL_S_GOLDEN;
			return golden_next(job, next);
		}
		*next = fmax(x - 1, lo);
		return FEED_NEXT;
	}
	job->s_lo = x;
	if (!isnan(job->s_prev_x)) {
		job->s_hi = job->s_prev_x;
		job->search = CONTROL_S_GOLDEN;
		return golden_next(job, next);
	}
	/* the start was the best: the optimum may be coarser */
	if (job->s_best_x < hi - X_TINY) {
		job->search = CONTROL_S_ASCEND;
		*next = fmin(job->s_best_x + 1, hi);
		return FEED_NEXT;
	}
	job->s_hi = hi;
	job->search = CONTROL_S_GOLDEN;
	return golden_next(job, next);
}

/* Ascending (doubling the period): on while not worse, then bracket and refine. */
static enum feed feed_ascend(struct control_job *job, double x, double e, bool worse, double *next)
{
	double hi = x_hi(job);

	if (fabs(e) < fabs(job->s_best_e) || !worse) {
		if (fabs(e) < fabs(job->s_best_e)) {
			job->s_lo = job->s_best_x;
			job->s_best_x = x;
			job->s_best_e = e;
		}
		if (x >= hi - X_TINY) {
			job->s_hi = hi;
			job->search = CONTROL_S_GOLDEN;
			return golden_next(job, next);
		}
		*next = fmin(x + 1, hi);
		return FEED_NEXT;
	}
	job->s_hi = x;
	job->search = CONTROL_S_GOLDEN;
	return golden_next(job, next);
}

/* Golden-section refinement of the bracket [s_lo, s_hi] around s_best_x. */
static enum feed feed_golden(struct control_job *job, double x, double e, double *next)
{
	double c = job->s_best_x;

	if (fabs(e) < fabs(job->s_best_e)) {
		if (x < c)
			job->s_hi = c;
		else
			job->s_lo = c;
		job->s_best_x = x;
		job->s_best_e = e;
	} else if (x < c) {
		job->s_lo = x;
	} else {
		job->s_hi = x;
	}
	return golden_next(job, next);
}

/*
 * Feeds the error e measured (or remembered) at x into the search; returns FOUND (e in
 * band), DONE (exhausted, best in s_best_*) or NEXT with the next x to probe in *next.
 */
static enum feed search_feed(struct control_job *job, double x, double e, double *next)
{
	bool first = job->s_steps == 0, worse;

	job->s_steps++;
	if (fabs(e) <= job->p.epsilon_pct) {
		job->s_best_x = x;
		job->s_best_e = e;
		return FEED_FOUND;
	}
	if (first)
		return feed_first(job, x, e, next);
	/* A single report is noisy: a probe is "worse" only if it is worse by more than the
	 * noise; within the noise the halving goes on (the bottom of |e| is flat). */
	worse = fabs(e) > fabs(job->s_best_e) + job->noise_pct;
	switch (job->search) {
	case CONTROL_S_DESCEND:
		return feed_descend(job, x, e, worse, next);
	case CONTROL_S_ASCEND:
		return feed_ascend(job, x, e, worse, next);
	case CONTROL_S_GOLDEN:
		return feed_golden(job, x, e, next);
	default:
		return FEED_DONE;
	}
}

/* Runs the search from the measurement (x, e) until a probe needs a measurement. */
static void search_drive(struct control_job *job, double x, double e, bool measured_here,
                         mono_ns now, struct control_decision *out)
{
	double u = job->target_pct / 100.0;

	for (int i = 0; i < 2 * SEARCH_MAX_PROBES; i++) {
		double nx = NAN;
		enum feed f = search_feed(job, x, e, &nx);
		if (f == FEED_FOUND) {
			job->search = CONTROL_S_IDLE;
			if (measured_here) {
				job->holding = true;
				control_keep(job, CONTROL_R_INBAND, out);
			} else {
				/* remembered in band: go there, verify with the next report */
				control_apply(job, x_period(job, x), job->target_pct, now,
				              CONTROL_R_MEMO, out);
			}
			return;
		}
		if (f == FEED_DONE)
			break;
		mono_ns np = x_period(job, nx);
		const struct control_memo *m = memo_find(job, np, u);
		if (m && !same_period(np, job->period_ns)) {
			x = log2((double)np);
			e = memo_mean(m);
			measured_here = false;
			continue;
		}
		job->s_x = log2((double)np);
		control_apply(job, np, job->target_pct, now, CONTROL_R_SEARCH, out);
		return;
	}
	/* exhausted: park at the best period seen */
	job->search = CONTROL_S_PARKED;
	job->s_steps = 0;
	job->unreachable = fabs(job->s_best_e) > job->p.epsilon_pct;
	control_apply(job, x_period(job, job->s_best_x), job->target_pct, now, CONTROL_R_BEST, out);
	if (!out->changed)
		out->reason = CONTROL_R_UNREACHABLE;
}

static void start_search(struct control_job *job, double e, mono_ns now,
                         struct control_decision *out)
{
	const struct control_memo *m = memo_best(job, job->period_ns);

	job->holding = false;
	job->s_steps = 0;
	if (m) {
		job->search = CONTROL_S_IDLE;
		control_apply(job, m->period_ns, job->target_pct, now, CONTROL_R_MEMO, out);
		return;
	}
	job->search = CONTROL_S_DESCEND;
	search_drive(job, log2((double)job->period_ns), e, true, now, out);
}

static void hold(struct control_job *job, double e, mono_ns now, struct control_decision *out)
{
	const double eps = job->p.epsilon_pct;
	double mean = avg_mean(job);

	noise_update(job);
	if (fabs(e) > job->p.jump_factor * eps) {
		start_search(job, e, now, out);
		return;
	}
	if (job->avg_n >= job->p.avg_reports && fabs(mean) > eps) {
		start_search(job, mean, now, out);
		return;
	}
	control_keep(job, fabs(e) <= eps ? CONTROL_R_INBAND : CONTROL_R_HYSTERESIS, out);
}

void control_adaptive_eval(struct control_job *job, double e, mono_ns now,
                           struct control_decision *out)
{
	const double eps = job->p.epsilon_pct;
	double u = job->target_pct / 100.0;

	memo_add(job, job->period_ns, u, e);
	avg_push(job, e);

	switch (job->search) {
	case CONTROL_S_IDLE:
		if (job->holding) {
			hold(job, e, now, out);
		} else if (fabs(e) <= eps) {
			job->holding = true;
			control_keep(job, CONTROL_R_INBAND, out);
		} else {
			start_search(job, e, now, out);
		}
		return;
	case CONTROL_S_PARKED:
		noise_update(job);
		if (job->avg_n >= job->p.avg_reports && fabs(avg_mean(job)) <= eps) {
			job->search = CONTROL_S_IDLE;
			job->holding = true;
			job->unreachable = false;
			control_keep(job, CONTROL_R_INBAND, out);
			return;
		}
		if (++job->s_steps >= PARKED_RETRY) {
			memo_forget_u(job, u);
			memo_add(job, job->period_ns, u, e);
			job->unreachable = false;
			start_search(job, e, now, out);
			return;
		}
		control_keep(job, CONTROL_R_UNREACHABLE, out);
		return;
	default:
		search_drive(job, log2((double)job->period_ns), e, true, now, out);
		return;
	}
}

void control_adaptive_target(struct control_job *job, double old_pct, mono_ns now,
                             struct control_decision *out)
{
	const struct control_memo *m;
	mono_ns period;

	(void)old_pct;
	control_adaptive_reset(job);
	m = memo_best(job, 0);
	if (m) {
		control_apply(job, m->period_ns, job->target_pct, now, CONTROL_R_MEMO, out);
		return;
	}
	period = memo_predict(job);
	if (period) {
		control_apply(job, period, job->target_pct, now, CONTROL_R_MEMO, out);
		return;
	}
	period = job->period_ns;
	if (!usable(job, period))
		period = job->p.initial_period_ns;
	control_apply(job, period, job->target_pct, now, CONTROL_R_TARGET, out);
}
