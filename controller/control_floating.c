/*
 * The "floating" control algorithm (the default): U = slice/period is a controlled variable.
 *
 * Model. At a fixed period T a job's rate is an increasing function r = f_T(U) (percent of
 * R_max against percent of a CPU). f is U itself only for pure computation: blocking waits
 * make f concave and above U (the wait overlaps time the job would be parked anyway), memory
 * contention and waiting for other ranks make it lower. The algorithm learns f near the
 * operating point and moves U to where f(U) = r_target:
 *
 *     U' = U + g (r_target - r) / s,        clamped to [U_lo, U_hi]
 *
 * s is the local slope dr/dU: the least-squares slope over the last CONTROL_FPTS evaluations
 * at this period when their U spread over at least SPREAD_MIN points, else the last such
 * slope, else the efficiency r/U (exact for f = kU); always within [SLOPE_LO, SLOPE_HI] times
 * r/U. U_lo = min_slice/T, U_hi = min(u_max, the admission limit).
 *
 * Stability. Near the fixed point the error evolves as e' = (1 - g s_true/s) e: monotone for
 * 0 < g s_true/s <= 1, a decaying overshoot up to 2. g = 1 far from the target (|e| > 3 dead
 * bands) and 0.7 near it, so a slope underestimated by up to 2.8x still converges, and an
 * overestimated one only converges more slowly. Where even the longest evaluation is noisier
 * than eps/3, g near the target falls with (eps / 3 sigma)^2, so that the small steps average
 * that many evaluations (stochastic approximation) instead of chasing noise. Steps are taken only
 * when |e| exceeds the dead band db = clamp(2 sigma, 0.3 eps, eps), sigma being the s.d. of one
 * evaluation measured from successive evaluations at an unchanged constraint: noise alone triggers
 * a step with probability < 5 %, so the loop does not chase noise. sigma can only be measured
 * where the constraint holds still, so after BLIND_MAX small steps (|e| within 3 dead bands)
 * in a row, each from the first evaluation at its constraint, the next such evaluation is
 * confirmed by a second before U moves again, which makes a noise pair. Without this a noisy
 * job stepped at every evaluation, sigma kept its prior (0.5 points), and so did the dead band
 * and the evaluation length: a 1:5 bsp at 45 % moved U on errors of -6.7 ... +6.2 points every
 * 4-8 s (bench/RESULTS.md run 15). Confirming every small step delayed a load step's
 * follow-up (2 of 24 seeds of test_load_step_followed back in band only after 47-52 s). An
 * evaluation spans whole application reports over at least eval_periods periods, eval_min_ns and
 * the length the slice's phase needs (phase_len()); its length doubles (up to eval_max_ns) while
 * sigma > eps/3 and halves when sigma < eps/8 (not below those floors), so that the dead band fits
 * inside the band (with params.len_trial, not the default, a doubling is kept only where it
 * averaged the noise: see learn_noise()).
 *
 * Inside a bracket (fit points below and above the target at this period) the step goes to
 * where the chord between them meets the target (regula falsi), which converges on any
 * monotone curve whatever the slope estimate, also where the rate is very steep in U.
 *
 * Period search (the paper's granularity effect, for efficiency only). Once U has settled
 * (2 evaluations in the dead band; or after UNSETTLED steps without settling), the period is halved
 * while the U the model says the target needs there, U + (r_target - r)/s, falls by more than a
 * dead band's worth (doubled from the start instead if the first halving did not help), within
 * [floor, initial_period]. Each probe runs at the U the best period so far needs, so the rate stays
 * near the target while it searches. The search ends at the period that needs the least U (the best
 * measured efficiency), with that U; a tie keeps the coarser period (less overhead, fewer deadline
 * misses). Done once per job, again after the nodes' floor moved. A probe, and the start, are
 * judged on the mean of probe_evals() evaluations (1 to PROBE_MAX, from the noise).
 *
 * Co-scheduling (u_slot_ns set): a job holds whole slots of the frame, so U moves in steps
 * of one slot at the period (the sub-frame): every U above is rounded to the nearest whole
 * number of slots, at least one. The rate then reaches the target within half a slot's
 * worth of rate, and a step that rounds to the current U holds.
 *
 * Saturation. At U_hi with the rate below the target by more than the dead band the job is
 * unreachable: it holds U_hi, the most it can get, and need_u_pct is the U the model says it
 * needs; at U_lo above the target likewise (faster than asked at the smallest slice). A
 * refused rise of U (a node's admission control) caps U where it was; the daemon then
 * bisects the gap between that cap and the refused U (control_probe_u_limit(), down to
 * BISECT_GAP), so that the job holds the most the nodes admit, and lifts the cap after a
 * back-off (control_set_u_limit()). A new target that needs a U step the nodes refuse is
 * kept the same way (control_reject_keep_target()): the target is the administrator's, U is
 * what the nodes can give.
 *
 * Silence. A job that completes no iteration under its constraint reports nothing and is never
 * evaluated; the daemon calls control_on_silence() after many of its usual report gaps, which
 * lifts U to the target if it held less (from there the evaluations resume as usual).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "control.h"

#define SPREAD_MIN   2.0 /* points of U between fit points for a slope fit */
#define SLOPE_LO     0.2 /* slope bounds, times the efficiency r/U */
#define SLOPE_HI     3.0
#define SLOPE_MIN    0.05 /* points of rate per point of U */
#define U_STEP_MIN   0.05 /* smaller U changes are not sent */
#define GAIN_NEAR    0.7
#define NEED_MAX     999.0 /* shown need: "more than a CPU" beyond 100 */
#define BISECT_GAP   1.0   /* points of U: a refused rise is bisected down to this gap */
#define UNSETTLED    6     /* U steps at one period after which the period search starts anyway */
#define PROBE_MAX    4     /* evaluations a probe (and the search's start) is judged on, at most */
#define NOISE_W      0.2   /* the noise estimate's weight of a new pair, once it has 4 */
#define NOISE_PAIRS  2     /* measured pairs before the period search starts from a settled U */
#define SHIFT_BANDS  3     /* a pair this many dead bands (and 6 sigma) apart is a speed shift */
#define SHIFT_RECENT 3     /* ... unless one of the last this many pairs was as far apart */
#define LEN_PAIRS    4     /* pairs a doubled evaluation length is judged on ... */
#define LEN_GAIN     0.75  /* ... it stays when their variance fell below this much of before */
#define CAP_EVALS    24    /* evaluations at a capped length before the cap lifts */
#define WIN_CAP_MAX  65536 /* win_cap: no cap */
#define PHASE_SHARE  0.2   /* of eps: the s.d. the slice's phase may add to an evaluation */
#define BRACKET_EL   10.0  /* a bracket's chord steeper than this elasticity is not trusted */
#define BLIND_MAX    2     /* small U steps in a row without a noise pair between them */

void control_floating_init(struct control_job *job)
{
	struct control_float *f = &job->fl;

	memset(f, 0, sizeof(*f));
	f->u_limit_pct = 100.0;
	f->u_refused_pct = 100.0;
	f->noise_pct = job->p.noise_pct;
	f->prev_e = NAN;
	f->need_u_pct = NAN;
	f->win_mult = 1;
	f->win_cap = WIN_CAP_MAX;
}

/*
 * The evaluation length the slice's phase needs. A job parked outside its window finishes
 * iterations, and so reports, only inside windows: a rate measured between two reports over
 * a span S whose ends lie d apart in their windows (|d| <= U T) is off by r (1 - U) d / S
 * points. With both ends uniform in the window, d has s.d. U T / sqrt(6), so the error has
 * s.d. r (1 - U) T / (sqrt(6) S); PHASE_SHARE eps bounds it. Shorter evaluations measure the
 * phase, not the rate: on the windowed simulator the length halved to 4 periods on a small
 * measured noise (successive evaluations' ends fall at similar phases) and U then moved at
 * every evaluation. r is the target, U the one held, both in percent.
 */
static mono_ns phase_len(const struct control_job *job)
{
	double u = job->cur_u_pct / 100.0;

	if (u >= 1 || job->target_pct <= 0)
		return 0;
	return (mono_ns)(job->target_pct * (1 - u) * (double)job->period_ns /
	                 (sqrt(6.0) * PHASE_SHARE * job->p.epsilon_pct));
}

/* The evaluation length before the noise multiplier. */
static mono_ns base_len(const struct control_job *job)
{
	mono_ns len = job->p.eval_periods * job->period_ns, ph = phase_len(job);

	if (len < ph)
		len = ph;
	return len < job->p.eval_min_ns ? job->p.eval_min_ns : len;
}

mono_ns control_floating_eval_len(const struct control_job *job)
{
	mono_ns len = base_len(job) * job->fl.win_mult;

	return len < job->p.eval_max_ns ? len : job->p.eval_max_ns;
}

bool control_floating_inband(const struct control_job *job)
{
	return job->fl.settled > 0;
}

static double u_lo(const struct control_job *job, mono_ns period)
{
	return 100.0 * (double)job->p.min_slice_ns / (double)period;
}

static double u_hi(const struct control_job *job)
{
	return fmin(job->p.u_max_pct, job->fl.u_limit_pct);
}

static double clamp(double x, double lo, double hi)
{
	return x < lo ? lo : (x > hi ? hi : x);
}

/* u within the bounds at period; with u_slot set (co-scheduling: a job holds whole slots
 * of the frame), the nearest whole number of slots of that period inside them, at least
 * one slot. */
static double u_fit(const struct control_job *job, mono_ns period, double u)
{
	double lo = u_lo(job, period), hi = u_hi(job), q;

	u = clamp(u, lo, hi);
	if (job->p.u_slot_ns == 0)
		return u;
	q = 100.0 * (double)job->p.u_slot_ns / (double)period;
	lo = fmax(q, ceil(lo / q - 1e-9) * q);
	hi = fmax(q, floor(hi / q + 1e-9) * q);
	return clamp(round(u / q) * q, lo, hi);
}

static double dead_band(const struct control_job *job)
{
	double eps = job->p.epsilon_pct;
	return clamp(2.0 * job->fl.noise_pct, 0.3 * eps, eps);
}

/* The period U is held at: the search's best while a probe runs, else the current one. */
static mono_ns held_period(const struct control_job *job)
{
	return job->fl.search == CONTROL_FS_PROBE ? job->fl.best_period : job->period_ns;
}

/* A new constraint: the fit points and the noise pairing belong to the old one. */
static void apply(struct control_job *job, mono_ns period, double u, mono_ns now,
                  enum control_reason why, struct control_decision *out)
{
	struct control_float *f = &job->fl;

	if (period != job->period_ns) {
		f->npts = 0;
		f->pts_pos = 0;
		f->steps = 0;
	}
	f->prev_e = NAN;
	control_apply(job, period, u, now, why, out);
}

/* ---- learning: fit points, slope, noise, evaluation length ---------------------------- */

static void fit_slope(struct control_float *f)
{
	double w = 1, sw = 0, su = 0, sr = 0, lo = INFINITY, hi = -INFINITY;
	double suu = 0, sur = 0;

	for (uint32_t k = 0; k < f->npts; k++, w *= 0.8) { /* newest first, older weigh less */
		const struct control_fpoint *p =
		    &f->pts[(f->pts_pos + CONTROL_FPTS - 1 - k) % CONTROL_FPTS];
		sw += w;
		su += w * p->u;
		sr += w * p->r;
		suu += w * p->u * p->u;
		sur += w * p->u * p->r;
		lo = fmin(lo, p->u);
		hi = fmax(hi, p->u);
	}
	if (f->npts < 2 || hi - lo < SPREAD_MIN)
		return; /* keep the last fitted slope */
	double var = suu / sw - (su / sw) * (su / sw);
	double cov = sur / sw - (su / sw) * (sr / sw);
	if (var > 0 && cov > 0)
		f->slope = cov / var;
}

/* Doubles the evaluation; with len_trial, to twice what the last one really spanned (a round
 * ends with whole reports, so a job with long iterations spans more than asked, and doubling
 * below that would average nothing more; within 20 %: every round spans a little more),
 * within eval_max. */
static void double_len(struct control_job *job)
{
	struct control_float *f = &job->fl;
	mono_ns len = control_floating_eval_len(job);
	mono_ns want = 2 * (job->last_span_ns > len ? job->last_span_ns : len);

	f->win_mult *= 2;
	while (job->p.len_trial && f->win_mult < WIN_CAP_MAX &&
	       base_len(job) * f->win_mult * 5 < want * 4 &&
	       control_floating_eval_len(job) < job->p.eval_max_ns)
		f->win_mult *= 2;
}

/* The length may double: below eval_max, and on trial below the cap, with its variance
 * measured (or too few pairs coming to measure it). */
static bool may_double(const struct control_job *job)
{
	const struct control_float *f = &job->fl;

	if (control_floating_eval_len(job) >= job->p.eval_max_ns)
		return false;
	return !job->p.len_trial || (f->win_mult < f->win_cap &&
	                             (f->len_pairs >= LEN_PAIRS || f->len_evals >= 3 * LEN_PAIRS));
}

/* A new evaluation length: its pairs start again. */
static void len_reset(struct control_float *f)
{
	f->len_var = 0;
	f->len_pairs = 0;
	f->len_evals = 0;
}

/* s.d. of one evaluation from successive ones at the same constraint; the evaluation length
 * follows it (see the top of the file). The configured guess counts as one pair: the first
 * measured pairs weigh 1/2, 1/3, 1/4, then NOISE_W each (a guess of 0.5 points took 9 pairs
 * to reach half of a 1:5 bsp's measured 5 points with NOISE_W alone).
 *
 * A doubling of the length is on trial (params.len_trial): averaging twice as long halves
 * the variance of independent noise, but not of noise correlated over longer than the
 * evaluation (a co-runner's phases, the host taking CPU time); there a longer evaluation
 * only delays the loop while the rate really moves, which the loop could follow. So the
 * length doubles once LEN_PAIRS pairs measured its variance, and after LEN_PAIRS pairs at
 * the new length, unless their variance fell below LEN_GAIN of that, it goes back and stays
 * at most there (win_cap) for CAP_EVALS evaluations or until the next target. Only pairs
 * near the target count (both within 3 dead bands: not a transient). A job that steps so
 * often that LEN_PAIRS pairs do not come in 3 LEN_PAIRS evaluations doubles untried. On the
 * simulator (bench/control_noise.c, 100 seeds x 4 phases) with a 3 % speed drift of 5 s
 * correlation time, 236 phases of 400 held +-2 points over 5 s windows with growth alone,
 * 303 with the trial (303 with evaluations of at most 1 s, which lose the averaging that
 * independent noise needs: test_noise_not_chased's mean error +1.03 points, +0.28 with the
 * trial). Off by default: on the real compute and wait jobs (bench/RESULTS.md run 9) it
 * stepped U 3-6 times as often in the 70 % phases, which then ran 1.1-1.6 points above
 * their target (a bias each change of the reservation still adds, not modelled here). */
static void learn_noise(struct control_job *job, double e, bool shift)
{
	struct control_float *f = &job->fl;
	double eps = job->p.epsilon_pct;
	bool trial = job->p.len_trial;

	f->len_evals++;
	if (!isnan(f->prev_e) && !shift) {
		double d = e - f->prev_e;
		double w = fmax(NOISE_W, 1.0 / (double)(++f->noise_n + 1));
		f->noise_pct = sqrt((1 - w) * f->noise_pct * f->noise_pct + w * d * d / 2);
		if (fmax(fabs(e), fabs(f->prev_e)) <= 3 * dead_band(job)) {
			f->len_var += d * d / 2;
			f->len_pairs++;
		}
		if (trial && f->win_cap < WIN_CAP_MAX && f->len_evals >= CAP_EVALS)
			f->win_cap = WIN_CAP_MAX; /* try again: the noise may have changed */
		if (trial && f->var_before > 0) {
			if (f->len_pairs >= LEN_PAIRS) {
				if (f->len_var / f->len_pairs > LEN_GAIN * f->var_before) {
					f->win_mult = f->mult_before;
					f->win_cap = f->win_mult;
					f->noise_pct = sqrt(f->var_before);
					len_reset(f);
				}
				f->var_before = 0;
			}
		} else if (f->noise_pct > eps / 3 && may_double(job)) {
			f->var_before = f->len_pairs >= LEN_PAIRS ? f->len_var / f->len_pairs : 0;
			f->mult_before = f->win_mult;
			len_reset(f);
			double_len(job);
			f->noise_pct /= M_SQRT2;
		} else if (f->noise_pct < eps / 8 && f->win_mult > 1) {
			f->win_mult /= 2;
			f->noise_pct *= M_SQRT2;
			len_reset(f);
		}
	}
	f->prev_e = e;
}

/*
 * A shift of the job's speed under an unchanged constraint (a load that starts or ends, a
 * co-runner that comes or goes): two successive evaluations further apart than SHIFT_BANDS
 * dead bands and 6 sigma, i.e. more than 4.2 s.d. of the difference of two independent
 * evaluations (3e-5 for Gaussian noise). Such a pair is not noise: counted as noise it
 * inflated sigma (1.4 from 0.5 on a 4.6-point drop of a real 5:1 bsp), with it the dead band,
 * and cut the gain near the target to a sixth, and the fit points from before it, kept as a
 * bracket, put the target a fraction of a point away: U then took ~100 s, a point at a time,
 * to follow the drop. A sigma set too low cannot get stuck: such pairs, when they come often,
 * count as noise (shifts_often()).
 */
static bool speed_shift(const struct control_job *job, double e)
{
	const struct control_float *f = &job->fl;

	return !isnan(f->prev_e) &&
	       fabs(e - f->prev_e) > SHIFT_BANDS * fmax(dead_band(job), 2 * f->noise_pct);
}

/*
 * Whether pairs as far apart as a shift come too often to be shifts: one of the last
 * SHIFT_RECENT pairs was one too. A shift of speed is an event (a load starts); a job whose
 * pairs keep jumping that far is noisier than sigma says. Taken as shifts, such pairs were
 * never measured: sigma kept its 0.5-point prior for a whole phase of a 1:5 bsp at 45 %
 * whose evaluations swung -5 ... +10 points (bench/RESULTS.md run 15), and only pairs that
 * happened to be close counted, which held sigma down.
 */
static bool shifts_often(const struct control_float *f)
{
	return (f->big & ((1u << SHIFT_RECENT) - 1)) != 0;
}

static void learn(struct control_job *job, double e, double r)
{
	struct control_float *f = &job->fl;
	bool big = speed_shift(job, e), shift = big && !shifts_often(f);

	if (!isnan(f->prev_e))
		f->big = (uint8_t)(f->big << 1 | big);

	if (shift) { /* the points before it describe another speed */
		f->npts = 0;
		f->pts_pos = 0;
		f->shifts++;
	}
	f->pts[f->pts_pos] = (struct control_fpoint){.u = job->cur_u_pct, .r = r};
	f->pts_pos = (f->pts_pos + 1) % CONTROL_FPTS;
	if (f->npts < CONTROL_FPTS)
		f->npts++;
	fit_slope(f);
	learn_noise(job, e, shift);
}

/* The slope to step with at (U, r). */
static double slope_at(const struct control_job *job, double u, double r)
{
	double eff = r / u;
	double s = job->fl.slope > 0 ? job->fl.slope : eff;

	s = clamp(s, SLOPE_LO * eff, SLOPE_HI * eff);
	return s > SLOPE_MIN ? s : SLOPE_MIN;
}

/* ---- U towards the target ------------------------------------------------------------ */

/* Regula falsi: with fit points on both sides of the target (the highest U below it, the
 * lowest U above it, in that order), the U between them where the chord meets the target;
 * else NAN. A monotone rate curve has its root inside the bracket, whatever its slope. But
 * the points are measurements: a bracket whose rates differ by no more than the noise, or
 * whose chord is steeper than a job's rate can be, is noise or a change of speed between
 * the two (a co-runner's U moved), and the root may lie outside it. Trusted, such a
 * bracket pinned U below its stale upper point while every evaluation read 5-11 points
 * under the target (membench at 70 %, bench/RESULTS.md run 14): each chord step moved U a
 * fraction of the way to a point it could not pass. */
static double bracket_u(const struct control_job *job)
{
	const struct control_float *f = &job->fl;
	const struct control_fpoint *lo = NULL, *hi = NULL;
	double t = job->target_pct;

	for (uint32_t k = 0; k < f->npts; k++) {
		const struct control_fpoint *p = &f->pts[k];
		if (p->r < t && (!lo || p->u > lo->u))
			lo = p;
		if (p->r > t && (!hi || p->u < hi->u))
			hi = p;
	}
	if (!lo || !hi || lo->u >= hi->u)
		return NAN;
	/* the two rates must differ by more than two s.d.s of their difference ... */
	if (hi->r - lo->r <= 2 * M_SQRT2 * f->noise_pct)
		return NAN;
	/* ... and the chord's elasticity (relative change of r per relative change of U) be one
	 * a job can have */
	if ((hi->r - lo->r) / (hi->r + lo->r) > BRACKET_EL * (hi->u - lo->u) / (hi->u + lo->u))
		return NAN;
	return lo->u + (t - lo->r) * (hi->u - lo->u) / (hi->r - lo->r);
}

/* The gain of a step at error e: 1 for a real change (beyond 3 dead bands), else GAIN_NEAR,
 * reduced where one evaluation's noise is still above eps/3 at the longest evaluation, so
 * that successive small steps average the noise instead of following it. */
static double gain(const struct control_job *job, double e)
{
	double lim = job->p.epsilon_pct / 3, sd = job->fl.noise_pct;

	if (fabs(e) > 3 * dead_band(job))
		return 1.0;
	if (sd <= lim || control_floating_eval_len(job) < job->p.eval_max_ns)
		return GAIN_NEAR; /* the evaluation can still grow instead */
	return GAIN_NEAR * (lim / sd) * (lim / sd);
}

/* The U to move to from U with error e at rate r: inside a bracket its chord, else a step
 * along the slope, at most halving or doubling U (+20 points); both scaled by gain(). */
static double u_want(const struct control_job *job, double e, double r)
{
	double u = job->cur_u_pct, b = bracket_u(job);
	double g = gain(job, e);

	if (!isnan(b))
		return u + g * (b - u);
	return clamp(u - g * e / slope_at(job, u, r), u / 2, fmax(2 * u, u + 20));
}

/* Moves U for error e at rate r. Returns false when the step is too small to send (and the
 * job is not pinned at a bound): U holds, as in the dead band. */
static bool step_u(struct control_job *job, double e, double r, mono_ns now,
                   struct control_decision *out)
{
	struct control_float *f = &job->fl;
	double u = job->cur_u_pct, s = slope_at(job, u, r);
	double lo = u_fit(job, job->period_ns, 0), hi = u_fit(job, job->period_ns, 100);
	double want = u_want(job, e, r);
	double nu = u_fit(job, job->period_ns, want);

	f->full_step = fabs(e) > 3 * dead_band(job);
	/* unreachable: pinned at a bound that the model says is not enough */
	job->unreachable = (e < 0 && want > hi && u >= hi - U_STEP_MIN) ||
	                   (e > 0 && want < lo && u <= lo + U_STEP_MIN);
	f->need_u_pct = job->unreachable ? clamp(u - e / s, 0, NEED_MAX) : NAN;
	if (fabs(nu - u) < U_STEP_MIN) {
		if (!job->unreachable)
			return false;
		control_keep(job, CONTROL_R_UNREACHABLE, out);
		return true;
	}
	apply(job, job->period_ns, nu, now, CONTROL_R_USTEP, out);
	return true;
}

/* ---- period search for efficiency ------------------------------------------------------ */

/* The U the model says the target needs at the current period, given rate r at U: at most
 * halving or doubling U (+20 points), as a step does. Unbounded, a poor slope (noisy fit
 * points, e.g. an MPI job's) sent a probe from U 48.6 % to the smallest slice (0.2 %), where
 * the busy-polling ranks made no progress and so never reported again. */
static double u_need(const struct control_job *job, double r)
{
	double u = job->cur_u_pct;
	return clamp(u + (job->target_pct - r) / slope_at(job, u, r), u / 2, fmax(2 * u, u + 20));
}

/* The next period in direction dir from p, or 0 when outside [floor, initial]. */
static mono_ns next_period(const struct control_job *job, mono_ns p, int dir)
{
	mono_ns n = dir < 0 ? p / 2 : 2 * p;
	if (n < control_min_period(job, job->fl.best_u) || n > job->p.initial_period_ns)
		return 0;
	return n;
}

/* Evaluations a probe is judged on: a period counts as better when the U it needs is lower
 * by the dead band's worth, and the difference of two means of n independent evaluations of
 * s.d. sigma has s.d. sigma sqrt(2/n); n = 5.4 (sigma/db)^2 puts the dead band at 1.65 of
 * that s.d. (5 % false "better" for independent noise), within [1, PROBE_MAX]. A noisy job's
 * probe of one evaluation was a coin toss (a 1:5 bsp's 100 ms probe read e = -5.2 against
 * -1.5 at 200 ms, one evaluation each). Evaluations are not independent (an iteration's
 * phase against the slice carries over): on the simulator with 5 % iteration noise, a pure
 * compute job's search still leaves the initial period for no gain in 9 of 40 seeds (13 of
 * 40 on one evaluation; bench/RESULTS.md). */
static uint32_t probe_evals(const struct control_job *job)
{
	double q = job->fl.noise_pct / dead_band(job);
	return (uint32_t)clamp(ceil(5.4 * q * q - 1e-9), 1, PROBE_MAX);
}

/* The mean rate of the newest evaluations at the current U (at most probe_evals() of them;
 * at least the newest, r): what the search's start is judged on. */
static double mean_rate_at_u(const struct control_job *job, double r)
{
	const struct control_float *f = &job->fl;
	uint32_t n = 0, want = probe_evals(job);
	double sum = 0;

	for (uint32_t k = 0; k < f->npts && n < want; k++, n++) {
		const struct control_fpoint *p =
		    &f->pts[(f->pts_pos + CONTROL_FPTS - 1 - k) % CONTROL_FPTS];
		if (fabs(p->u - job->cur_u_pct) > 1e-9)
			break;
		sum += p->r;
	}
	return n ? sum / n : r;
}

/* Measures period at the U the best period needs, so the rate stays near the target. */
static void probe(struct control_job *job, mono_ns period, mono_ns now,
                  struct control_decision *out)
{
	double u = u_fit(job, period, job->fl.best_u);

	job->fl.search = CONTROL_FS_PROBE;
	job->fl.probe_n = 0;
	job->fl.probe_sum = 0;
	apply(job, period, u, now, CONTROL_R_PROBE, out);
}

/* Ends the search at the best period. Returns false when that is the current one, whose
 * evaluation the caller then uses as usual. */
static bool search_end(struct control_job *job, mono_ns now, struct control_decision *out)
{
	struct control_float *f = &job->fl;
	mono_ns p = f->best_period;

	f->search = CONTROL_FS_NONE;
	f->searched = true;
	if (p == job->period_ns)
		return false;
	apply(job, p, u_fit(job, p, f->best_u), now, CONTROL_R_BEST, out);
	return true;
}

/* Starts the search from the current period, where U has settled with rate r. */
static void search_start(struct control_job *job, double r, mono_ns now,
                         struct control_decision *out)
{
	struct control_float *f = &job->fl;
	mono_ns n;

	f->best_period = job->period_ns;
	f->best_u = u_need(job, mean_rate_at_u(job, r));
	f->improved = false;
	f->dir = -1;
	n = next_period(job, job->period_ns, -1);
	if (!n) {
		f->dir = 1;
		n = next_period(job, job->period_ns, 1);
	}
	if (!n) {
		f->searched = true;
		control_keep(job, CONTROL_R_INBAND, out);
		return;
	}
	probe(job, n, now, out);
}

/* A probe's evaluation (rate r): once probe_evals() of them are in (fewer when their mean is
 * already clearly worse: by two of its s.d.s), a period is better when the mean of their
 * rates needs less U for the target, by more than the dead band's worth of U. Returns false
 * when the search ended at this period (the caller evaluates r as usual). */
static bool search_feed(struct control_job *job, double r, mono_ns now,
                        struct control_decision *out)
{
	struct control_float *f = &job->fl;
	mono_ns n;

	f->probe_sum += r;
	f->probe_n++;
	r = f->probe_sum / f->probe_n;
	double s = slope_at(job, job->cur_u_pct, r);
	double need = u_need(job, r);
	double margin = dead_band(job) / s;
	double sd = job->fl.noise_pct * sqrt(2.0 / f->probe_n) / s; /* of need - best_u */

	/* more evaluations at the same constraint, unless the period is already clearly worse */
	if (f->probe_n < probe_evals(job) && need < f->best_u - margin + 2 * sd) {
		control_keep(job, CONTROL_R_PROBE, out);
		return true;
	}

	if (need < f->best_u - margin) {
		f->best_period = job->period_ns;
		f->best_u = need;
		f->improved = true;
		n = next_period(job, job->period_ns, f->dir);
	} else if (!f->improved && f->dir < 0) {
		f->dir = 1; /* finer did not help: try coarser from the start */
		n = next_period(job, f->best_period, 1);
	} else {
		n = 0;
	}
	if (n) {
		probe(job, n, now, out);
		return true;
	}
	return search_end(job, now, out);
}

/* ---- entry points ---------------------------------------------------------------------- */

/* U holds (in the dead band, or a step too small to send); after two such evaluations in a
 * row, and NOISE_PAIRS measured pairs in the noise estimate the search is judged with, the
 * period search starts, once. */
static void hold(struct control_job *job, double r, mono_ns now, struct control_decision *out)
{
	struct control_float *f = &job->fl;

	f->settled++;
	f->need_u_pct = NAN;
	job->unreachable = false;
	if (f->settled >= 2 && !f->searched && f->noise_n >= NOISE_PAIRS) {
		search_start(job, r, now, out);
		return;
	}
	control_keep(job, CONTROL_R_INBAND, out);
}

void control_floating_eval(struct control_job *job, double e, mono_ns now,
                           struct control_decision *out)
{
	struct control_float *f = &job->fl;
	double r = job->last_rate_pct;
	bool paired = !isnan(f->prev_e); /* an evaluation before this one at this constraint */

	if (f->unplaced) {
		if (job->cur_u_pct >= 100) { /* unreserved: the rate says nothing about U */
			control_keep(job, CONTROL_R_UNREACHABLE, out);
			return;
		}
		f->unplaced = false; /* a probe holds: from here the loop as usual */
	}
	learn(job, e, r);
	if (f->search == CONTROL_FS_PROBE && search_feed(job, r, now, out)) {
		f->settled = 0;
		return;
	}
	if (fabs(e) <= dead_band(job)) {
		hold(job, r, now, out);
		return;
	}
	if (paired)
		f->blind = 0;
	else if (fabs(e) <= 3 * dead_band(job) && f->blind >= BLIND_MAX) {
		control_keep(job, CONTROL_R_CONFIRM, out); /* a small step waits: see the top */
		return;
	}
	/* a period where U does not settle is the granularity problem itself: search */
	if (++f->steps > UNSETTLED && !f->searched) {
		f->settled = 0;
		search_start(job, r, now, out);
		return;
	}
	if (step_u(job, e, r, now, out)) {
		f->settled = 0;
		f->blind = paired || f->full_step ? 0 : f->blind + 1;
	} else {
		hold(job, r, now, out);
	}
}

/* U for a new target from the model at the last evaluation at this period, else U = target;
 * never below half of what the proportional model (the same efficiency) says: from a shallow
 * local slope a large drop of the target extrapolates to U_lo, where a job that communicates
 * or waits may not finish an iteration, and then no report, no evaluation, would correct it
 * (measured: a 1:5 bsp at 72.5 % sent from target 70 to 20 got U 0.05 % and stalled). */
void control_floating_target(struct control_job *job, mono_ns now, struct control_decision *out)
{
	struct control_float *f = &job->fl;
	mono_ns period = job->period_ns;
	double u = job->target_pct;

	f->settled = 0;
	f->need_u_pct = NAN;
	f->u_limit_pct = 100.0; /* a new target is a new admission: the nodes say what fits */
	f->u_refused_pct = 100.0;
	f->unplaced = false;
	f->win_cap = WIN_CAP_MAX; /* the noise may differ at the new target's U */
	job->unreachable = false;
	if (f->search == CONTROL_FS_PROBE) { /* abandon the probe, search again later */
		f->search = CONTROL_FS_NONE;
		period = f->best_period;
	} else if (f->npts > 0) {
		const struct control_fpoint *p =
		    &f->pts[(f->pts_pos + CONTROL_FPTS - 1) % CONTROL_FPTS];
		u = p->u + (job->target_pct - p->r) / slope_at(job, p->u, p->r);
		if (p->r > 0)
			u = fmax(u, 0.5 * p->u * job->target_pct / p->r);
	}
	if (period < control_min_period(job, u))
		period = job->p.initial_period_ns;
	apply(job, period, u_fit(job, period, u), now, CONTROL_R_TARGET, out);
}

void control_floating_bounds(struct control_job *job, enum control_reason why, mono_ns now,
                             struct control_decision *out)
{
	struct control_float *f = &job->fl;
	double u = fmin(job->cur_u_pct, u_hi(job));
	mono_ns period = held_period(job);

	f->search = CONTROL_FS_NONE;
	if (why == CONTROL_R_FLOOR)
		f->searched = false;
	if (period < control_min_period(job, u)) {
		period = control_min_period(job, u);
		if (period > job->p.initial_period_ns)
			period = job->p.initial_period_ns;
	}
	f->settled = 0;
	apply(job, period, u_fit(job, period, u), now, why, out);
}

void control_floating_unplaced(struct control_job *job, double refused_u_pct)
{
	struct control_float *f = &job->fl;

	f->unplaced = true;
	f->u_limit_pct = 0;
	f->u_refused_pct = refused_u_pct;
	f->need_u_pct = refused_u_pct; /* what control_floating_reopen_limit() tries again */
	job->unreachable = true;
}

void control_floating_rejected(struct control_job *job, double refused_u_pct)
{
	if (job->fl.unplaced && job->prev_u_pct >= 100) {
		/* a probe up from nothing refused: still nothing held */
		job->fl.u_limit_pct = 0;
		job->fl.u_refused_pct = fmin(job->fl.u_refused_pct, refused_u_pct);
	} else if (refused_u_pct > job->prev_u_pct && job->prev_u_pct > 0) {
		job->fl.u_limit_pct = job->prev_u_pct;
		job->fl.u_refused_pct = fmin(job->fl.u_refused_pct, refused_u_pct);
	}
	job->fl.search = CONTROL_FS_NONE;
	job->fl.settled = 0;
	job->fl.prev_e = NAN;
}

int control_on_silence(struct control_job *job, mono_ns now, struct control_decision *out)
{
	struct control_float *f = &job->fl;

	if (!out)
		return -EINVAL;
	if (job->p.algo != CONTROL_ALGO_FLOATING || job->state == CONTROL_CALIBRATING ||
	    job->target_pct <= 0)
		return -EAGAIN;

	mono_ns period = held_period(job);
	double u = job->target_pct;

	if (period < control_min_period(job, u))
		period = job->p.initial_period_ns;
	u = u_fit(job, period, u);
	if (u < job->cur_u_pct + U_STEP_MIN)
		return -EAGAIN;
	f->search = CONTROL_FS_NONE;
	f->settled = 0;
	f->need_u_pct = NAN;
	job->unreachable = false;
	apply(job, period, u, now, CONTROL_R_SILENT, out);
	return 0;
}

bool control_u_limit_open(const struct control_job *job)
{
	const struct control_float *f = &job->fl;

	return job->p.algo == CONTROL_ALGO_FLOATING && job->state != CONTROL_CALIBRATING &&
	       job->target_pct > 0 && f->u_limit_pct < 100 && f->u_refused_pct < 100 &&
	       f->u_refused_pct - f->u_limit_pct > BISECT_GAP &&
	       job->cur_u_pct >= f->u_limit_pct - U_STEP_MIN;
}

int control_probe_u_limit(struct control_job *job, mono_ns now, struct control_decision *out)
{
	struct control_float *f = &job->fl;
	double u;

	if (!out || !control_u_limit_open(job))
		return -EAGAIN;

	mono_ns period = held_period(job);

	f->u_limit_pct = (f->u_limit_pct + f->u_refused_pct) / 2;
	u = u_fit(job, period, f->u_limit_pct);
	if (!(f->unplaced && job->cur_u_pct >= 100) &&
	    u < job->cur_u_pct + U_STEP_MIN) { /* the slot grid or u_max: no finer step */
		f->u_refused_pct = 100.0;
		return -EAGAIN;
	}
	f->search = CONTROL_FS_NONE;
	f->settled = 0;
	apply(job, period, u, now, CONTROL_R_LIMIT, out);
	return 0;
}

bool control_floating_reopen_limit(struct control_job *job)
{
	struct control_float *f = &job->fl;
	double want = f->need_u_pct;

	if (job->p.algo != CONTROL_ALGO_FLOATING || !job->unreachable || !isfinite(want) ||
	    job->cur_u_pct < f->u_limit_pct - U_STEP_MIN)
		return false;
	want = fmin(fmin(want, job->p.u_max_pct) + BISECT_GAP, 100.0);
	if (want - f->u_limit_pct <= BISECT_GAP)
		return false;
	f->u_refused_pct = want; /* the bisection's upper end: what it needs */
	return true;
}

double control_start_u(const struct control_job *job)
{
	if (job->p.algo != CONTROL_ALGO_FLOATING)
		return job->target_pct;
	return u_fit(job, job->p.initial_period_ns, job->target_pct);
}
