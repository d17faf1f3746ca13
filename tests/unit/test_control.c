/*
 * Unit tests of the controller's decision logic (controller/control_*.c) with scripted
 * reports: the paper's linear algorithm step by step, the U invariant, rank aggregation,
 * rounds, calibration, staleness, hysteresis, memo jumps, rollback, state classification.
 * Rates: R_max = 100 units/s, so u units/s is r = u %.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "control.h"

#define MS  NSEC_PER_MSEC
#define SEC NSEC_PER_SEC

struct fx {
	struct control_job job;
	struct control_decision d;
	mono_ns now;
};

static void params(struct control_params *p, enum control_algo algo, uint32_t nranks)
{
	control_params_default(p);
	p->algo = algo;
	p->nranks = nranks;
	p->r_max = 100.0;
	p->target_pct = 50.0;
	p->epsilon_pct = 3.0;
}

static void assert_u(const struct control_decision *d, double target)
{
	/* invariant U = slice/period = target, to 1 ns */
	assert_true(fabs((double)d->slice_ns - (double)d->period_ns * target / 100.0) <= 0.5);
}

/* One report of r % (single rank, resolution 0.01 %) over the 100 s since the last one. */
static void report(struct fx *f, double r)
{
	f->now += 100 * SEC;
	assert_int_equal(
	    control_on_report(&f->job, 0, (uint64_t)llround(r * 100), 100 * SEC, f->now, &f->d), 0);
}

static void test_linear_paper_sequence(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = 10 * SEC};
	params(&p, CONTROL_ALGO_LINEAR, 1);
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	/* startup: period 200 ms, U = target */
	assert_true(f.d.changed);
	assert_int_equal(f.d.reason, CONTROL_R_INIT);
	assert_int_equal(f.d.period_ns, 200 * MS);
	assert_int_equal(f.d.slice_ns, 100 * MS);

	/* r:       40   45   48   52   60   50   30   53   47   57 */
	/* |e|:     10    5    2    2   10    0   20    3    3    7   (eps = 3, |e| <= eps keeps) */
	/* period: 198  196  196  196  194  194  192  192  192  190 */
	const double r[] = {40, 45, 48, 52, 60, 50, 30, 53, 47, 57};
	const mono_ns per[] = {198, 196, 196, 196, 194, 194, 192, 192, 192, 190};
	const bool chg[] = {1, 1, 0, 0, 1, 0, 1, 0, 0, 1};
	for (unsigned i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		report(&f, r[i]);
		assert_int_equal(f.d.period_ns, per[i] * MS);
		assert_int_equal(f.d.changed, chg[i]);
		assert_int_equal(f.d.reason, chg[i] ? CONTROL_R_STEP : CONTROL_R_INBAND);
		assert_u(&f.d, 50.0);
		assert_true(fabs(f.d.err_pct - (r[i] - 50.0)) < 1e-9);
	}
	control_job_fini(&f.job);
}

static void test_linear_reset_at_min_period(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = SEC};
	params(&p, CONTROL_ALGO_LINEAR, 1);
	p.initial_period_ns = 9 * MS;
	p.min_period_ns = 1 * MS;
	p.delta_period_ns = 2 * MS;
	p.target_pct = 30;
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	assert_int_equal(f.d.period_ns, 9 * MS);
	/* always out of band: 9 -> 7 -> 5 -> 3 -> (1 <= min_period) reset 9 -> 7 */
	const mono_ns per[] = {7, 5, 3, 9, 7, 5, 3, 9};
	const enum control_reason why[] = {CONTROL_R_STEP,  CONTROL_R_STEP, CONTROL_R_STEP,
	                                   CONTROL_R_RESET, CONTROL_R_STEP, CONTROL_R_STEP,
	                                   CONTROL_R_STEP,  CONTROL_R_RESET};
	for (unsigned i = 0; i < 8; i++) {
		report(&f, 10); /* e = -20 */
		assert_int_equal(f.d.period_ns, per[i] * MS);
		assert_int_equal(f.d.reason, why[i]);
		assert_u(&f.d, 30.0);
	}
	/* two resets without ever being in band: the target is unreachable -> "rejected" */
	assert_int_equal(f.job.state, CONTROL_REJECTED);
	report(&f, 31); /* in band */
	assert_int_equal(f.d.period_ns, 9 * MS);
	assert_false(f.d.changed);
	assert_int_equal(f.job.state, CONTROL_STABLE);
	control_job_fini(&f.job);

	/* even initial/delta: 10 -> 8 -> 6 -> 4 -> 2 -> (0) reset 10 */
	p.initial_period_ns = 10 * MS;
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	const mono_ns per2[] = {8, 6, 4, 2, 10};
	for (unsigned i = 0; i < 5; i++) {
		report(&f, 90);
		assert_int_equal(f.d.period_ns, per2[i] * MS);
	}
	control_job_fini(&f.job);
}

static void test_linear_reset_on_min_slice(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = SEC};
	params(&p, CONTROL_ALGO_LINEAR, 1);
	p.initial_period_ns = 20 * MS;
	p.min_slice_ns = 1 * MS;
	p.target_pct = 10; /* slice = period / 10: below 1 ms once period < 10 ms */
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	for (mono_ns want = 18; want >= 10; want -= 2) {
		report(&f, 50);
		assert_int_equal(f.d.period_ns, want * MS);
	}
	report(&f, 50); /* 8 ms would give a 0.8 ms slice */
	assert_int_equal(f.d.reason, CONTROL_R_RESET);
	assert_int_equal(f.d.period_ns, 20 * MS);
	control_job_fini(&f.job);
}

static void test_linear_no_change_inside_eps(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = SEC};
	params(&p, CONTROL_ALGO_LINEAR, 1);
	p.epsilon_pct = 2.0;
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	uint32_t gen = f.d.gen;
	const double r[] = {48, 52, 50, 51.5, 48.5, 52, 48};
	for (unsigned i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		report(&f, r[i]);
		assert_false(f.d.changed);
		assert_int_equal(f.d.reason, CONTROL_R_INBAND);
		assert_int_equal(f.d.period_ns, 200 * MS);
		assert_int_equal(f.d.gen, gen);
	}
	assert_int_equal(f.job.state, CONTROL_STABLE);
	control_job_fini(&f.job);
}

static void test_linear_target_change(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = SEC};
	params(&p, CONTROL_ALGO_LINEAR, 1);
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	report(&f, 50); /* in band at 50 */
	/* new target 30: e = 50 - 30 = 20 > eps -> period -= delta, slice = 0.3 * period */
	assert_int_equal(control_set_target(&f.job, 30, f.now, &f.d), 0);
	assert_true(f.d.changed);
	assert_int_equal(f.d.period_ns, 198 * MS);
	assert_int_equal(f.d.slice_ns, 59400 * NSEC_PER_USEC);
	/* back to 31: last r (50) vs 31 still out -> another step */
	report(&f, 30);
	assert_false(f.d.changed);
	assert_int_equal(control_set_target(&f.job, 31, f.now, &f.d), 0);
	/* e = 30 - 31 = -1: in band, period kept, slice rescaled */
	assert_int_equal(f.d.period_ns, 198 * MS);
	assert_int_equal(f.d.reason, CONTROL_R_TARGET);
	assert_u(&f.d, 31.0);
	/* invalid targets change nothing */
	assert_int_equal(control_set_target(&f.job, 0, f.now, &f.d), -EINVAL);
	assert_int_equal(control_set_target(&f.job, 100.5, f.now, &f.d), -EINVAL);
	assert_int_equal(control_set_target(&f.job, NAN, f.now, &f.d), -EINVAL);
	assert_true(f.job.target_pct == 31.0);
	control_job_fini(&f.job);
}

static void test_aggregation_and_rounds(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = SEC};
	params(&p, CONTROL_ALGO_LINEAR, 3);
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	f.now += SEC;
	assert_int_equal(control_on_report(&f.job, 0, 50, SEC, f.now, &f.d), 0);
	assert_int_equal(f.d.reason, CONTROL_R_WAIT_RANKS);
	/* a rank reporting twice in a round replaces its rate, counts once */
	assert_int_equal(control_on_report(&f.job, 0, 52, SEC, f.now, &f.d), 0);
	assert_int_equal(f.d.reason, CONTROL_R_WAIT_RANKS);
	assert_int_equal(control_on_report(&f.job, 2, 45, SEC, f.now, &f.d), 0);
	assert_int_equal(f.d.reason, CONTROL_R_WAIT_RANKS);
	assert_int_equal(control_on_report(&f.job, 1, 40, SEC, f.now, &f.d), 0);
	/* slowest rank: 40 -> e = -10 */
	assert_true(fabs(f.d.rate_pct - 40.0) < 1e-9);
	assert_int_equal(f.d.reason, CONTROL_R_STEP);
	assert_int_equal(f.job.evaluations, 1);
	/* errors: bad rank, zero interval */
	assert_int_equal(control_on_report(&f.job, 3, 1, SEC, f.now, &f.d), -ERANGE);
	assert_int_equal(control_on_report(&f.job, 0, 1, 0, f.now, &f.d), -EINVAL);
	control_job_fini(&f.job);

	/* mean aggregation */
	p.agg = CONTROL_AGG_MEAN;
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	control_on_report(&f.job, 0, 52, SEC, f.now, &f.d);
	control_on_report(&f.job, 1, 40, SEC, f.now, &f.d);
	control_on_report(&f.job, 2, 45, SEC, f.now, &f.d);
	assert_true(fabs(f.d.rate_pct - 45.666666666) < 1e-6);
	control_job_fini(&f.job);

	/* round timeout: a silent rank does not stall control */
	p.agg = CONTROL_AGG_SLOWEST;
	p.round_timeout_ns = 3 * SEC;
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	mono_ns t0 = f.now;
	control_on_report(&f.job, 0, 30, SEC, t0 + SEC, &f.d);
	assert_int_equal(f.d.reason, CONTROL_R_WAIT_RANKS);
	control_on_report(&f.job, 1, 35, SEC, t0 + 2 * SEC, &f.d);
	assert_int_equal(f.d.reason, CONTROL_R_WAIT_RANKS);
	control_on_report(&f.job, 1, 35, SEC, t0 + 3 * SEC, &f.d);
	assert_int_equal(f.d.reason, CONTROL_R_STEP); /* evaluated with ranks 0, 1 */
	assert_true(fabs(f.d.rate_pct - 30.0) < 1e-9);
	control_job_fini(&f.job);
}

static void test_calibration(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = SEC};
	params(&p, CONTROL_ALGO_LINEAR, 2);
	p.r_max = 0;
	p.calib_rounds = 2;
	p.target_pct = 40;
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	assert_int_equal(f.job.state, CONTROL_CALIBRATING);
	assert_int_equal(f.d.reason, CONTROL_R_CALIBRATE);
	assert_int_equal(f.d.slice_ns, f.d.period_ns); /* U = 1 */
	/* a report whose interval started before calibration began is not used */
	control_on_report(&f.job, 0, 300, 2 * SEC, f.now + SEC, &f.d);
	assert_int_equal(f.d.reason, CONTROL_R_STALE);
	f.now += 2 * SEC;
	control_on_report(&f.job, 0, 200, SEC, f.now, &f.d);
	control_on_report(&f.job, 1, 190, SEC, f.now, &f.d); /* slowest: 190 */
	assert_int_equal(f.d.reason, CONTROL_R_CALIB_WAIT);
	f.now += SEC;
	control_on_report(&f.job, 0, 210, SEC, f.now, &f.d);
	control_on_report(&f.job, 1, 215, SEC, f.now, &f.d); /* 210 */
	assert_int_equal(f.d.reason, CONTROL_R_CALIBRATED);
	assert_true(f.job.r_max_calibrated);
	assert_true(fabs(f.job.r_max - 200.0) < 1e-9); /* mean of 190, 210 */
	assert_int_equal(f.d.period_ns, 200 * MS);
	assert_u(&f.d, 40.0);
	assert_int_equal(f.job.state, CONTROL_CONVERGING);
	/* 80 units/s = 40 % of 200 */
	f.now += SEC;
	control_on_report(&f.job, 0, 80, SEC, f.now, &f.d);
	control_on_report(&f.job, 1, 80, SEC, f.now, &f.d);
	assert_int_equal(f.d.reason, CONTROL_R_INBAND);
	assert_int_equal(f.job.state, CONTROL_STABLE);
	control_job_fini(&f.job);
}

static void test_rmax_observed_and_given(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = SEC};
	params(&p, CONTROL_ALGO_LINEAR, 1);
	p.r_max = 0;
	p.calib = CONTROL_CALIB_OBSERVED;
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	/* no full-speed run: the target applies at once, R_max = best rate seen */
	assert_int_equal(f.job.state, CONTROL_CONVERGING);
	assert_int_equal(f.d.reason, CONTROL_R_INIT);
	assert_u(&f.d, 50.0);
	report(&f, 100); /* R_max := 100 u/s, r = 100 % */
	assert_false(f.job.r_max_calibrated);
	assert_true(fabs(f.job.r_max - 100) < 1e-9);
	assert_int_equal(f.d.reason, CONTROL_R_STEP);
	report(&f, 51); /* 51 % of 100 */
	assert_int_equal(f.d.reason, CONTROL_R_INBAND);
	/* the administrator gives R_max: it is calibrated from now on */
	assert_int_equal(control_set_rmax(&f.job, 102, f.now, &f.d), 0);
	assert_true(f.job.r_max_calibrated);
	assert_int_equal(control_set_rmax(&f.job, -1, f.now, &f.d), -EINVAL);
	report(&f, 51); /* 50 % of 102 */
	assert_true(fabs(f.d.rate_pct - 50.0) < 1e-9);
	control_job_fini(&f.job);

	/* R_max given while calibrating ends the calibration */
	params(&p, CONTROL_ALGO_ADAPTIVE, 1);
	p.r_max = 0;
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	assert_int_equal(f.job.state, CONTROL_CALIBRATING);
	assert_int_equal(control_set_rmax(&f.job, 100, f.now, &f.d), 0);
	assert_int_equal(f.d.reason, CONTROL_R_CALIBRATED);
	assert_u(&f.d, 50.0);
	control_job_fini(&f.job);
}

static void test_adaptive_drops_stale_reports(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = 100 * SEC};
	params(&p, CONTROL_ALGO_ADAPTIVE, 1);
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	/* interval [99.5 s, 100.5 s]: half of it before the constraint */
	control_on_report(&f.job, 0, 10, SEC, f.now + SEC / 2, &f.d);
	assert_int_equal(f.d.reason, CONTROL_R_STALE);
	assert_int_equal(f.job.evaluations, 0);
	/* interval starting 10 ms before the decision (the report that caused it was sent
	 * just before): 1 % of it, accepted */
	control_on_report(&f.job, 0, 50, SEC, f.now + SEC - 10 * MS, &f.d);
	assert_int_equal(f.d.reason, CONTROL_R_INBAND);
	assert_int_equal(f.job.evaluations, 1);
	/* the linear algorithm uses every report, like the paper */
	control_job_fini(&f.job);
	params(&p, CONTROL_ALGO_LINEAR, 1);
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	control_on_report(&f.job, 0, 10, SEC, f.now + SEC / 2, &f.d);
	assert_int_equal(f.d.reason, CONTROL_R_STEP);
	control_job_fini(&f.job);
}

/* A synthetic application: e = -0.1 pt per ms of period above 5 ms, times target/40;
 * -0.2 pt per ms below 2 ms. */
static double synth_rate(mono_ns period, double target)
{
	double ms = (double)period / 1e6;
	double e = ms > 5 ? -(ms - 5) * 0.1 * target / 40 : 0;
	if (ms < 2)
		e -= (2 - ms) * 0.2;
	return target + e;
}

/* Reports the synthetic rate until a report is in band; returns the number of reports. */
static uint32_t adaptive_converge(struct fx *f, uint32_t max)
{
	for (uint32_t i = 1; i <= max; i++) {
		report(f, synth_rate(f->job.period_ns, f->job.target_pct));
		if (f->d.reason == CONTROL_R_INBAND)
			return i;
	}
	return 0;
}

static void test_adaptive_search_and_memo(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = SEC};
	params(&p, CONTROL_ALGO_ADAPTIVE, 1);
	p.target_pct = 40;
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	/* 200 ms: e = -19.5; halving 100 (-9.5), 50 (-4.5), 25 (-2.0: in band) */
	uint32_t n = adaptive_converge(&f, 40);
	assert_true(n > 0 && n <= 5);
	assert_int_equal(f.job.period_ns, 25 * MS);
	assert_u(&f.d, 40.0);
	/* a linear search would have needed (200 - 30) / 2 = 85 steps */

	/* new target 50 %: nothing remembered at 50 % and no efficiency measured at 40 %
	 * predicts |e| <= eps/2, so the period is kept (e = -2.5 there): 1 report */
	assert_int_equal(control_set_target(&f.job, 50, f.now, &f.d), 0);
	assert_int_equal(f.d.reason, CONTROL_R_TARGET);
	assert_int_equal(f.d.period_ns, 25 * MS);
	assert_u(&f.d, 50.0);
	assert_int_equal(adaptive_converge(&f, 10), 1);
	control_job_fini(&f.job);
}

static void test_adaptive_memo_jump(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = SEC};
	params(&p, CONTROL_ALGO_ADAPTIVE, 1);
	p.target_pct = 40;
	p.epsilon_pct = 1.0;
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	uint32_t n = adaptive_converge(&f, 40);
	assert_true(n > 0);
	/* 200 -> 100 -> 50 -> 25 -> 12.5 ms (e = -0.75) */
	mono_ns good40 = f.job.period_ns;
	assert_int_equal(good40, 12500 * NSEC_PER_USEC);
	/* 70 %: 12.5 ms gives e = -1.31, out of band: the search moves to 6.25 ms */
	assert_int_equal(control_set_target(&f.job, 70, f.now, &f.d), 0);
	assert_true(adaptive_converge(&f, 40) > 1);
	assert_int_equal(f.job.period_ns, 6250 * NSEC_PER_USEC);
	/* back to 40 %: known granularity -> memo jump to 12.5 ms, in band at once */
	assert_int_equal(control_set_target(&f.job, 40, f.now, &f.d), 0);
	assert_int_equal(f.d.reason, CONTROL_R_MEMO);
	assert_true(f.d.changed);
	assert_int_equal(f.d.period_ns, good40);
	assert_int_equal(adaptive_converge(&f, 10), 1);
	control_job_fini(&f.job);
}

/* No period reaches the band (best e = -2 at 10 ms, eps = 1): the search ends parked near
 * the best period, the job is shown "rejected" (unreachable) and the schedule stays put. */
static void test_adaptive_unreachable(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = SEC};
	params(&p, CONTROL_ALGO_ADAPTIVE, 1);
	p.epsilon_pct = 1.0;
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	int i;
	for (i = 0; i < 40 && f.job.state != CONTROL_REJECTED; i++)
		report(&f, 50 - 2 - fabs(log2((double)f.job.period_ns / 10e6)));
	assert_int_equal(f.job.state, CONTROL_REJECTED);
	assert_true(i <= 15); /* a linear search would walk 95 steps down to 10 ms */
	assert_true(f.job.period_ns >= 8 * MS && f.job.period_ns <= 13 * MS);
	uint64_t changes = f.job.changes;
	for (i = 0; i < 30; i++) {
		report(&f, 50 - 2 - fabs(log2((double)f.job.period_ns / 10e6)));
		assert_int_equal(f.d.reason, CONTROL_R_UNREACHABLE);
	}
	assert_int_equal(f.job.changes, changes);
	assert_int_equal(f.job.state, CONTROL_REJECTED);
	/* a reachable target clears it */
	assert_int_equal(control_set_target(&f.job, 60, f.now, &f.d), 0);
	assert_int_not_equal(f.job.state, CONTROL_REJECTED);
	control_job_fini(&f.job);
}

static void test_adaptive_hysteresis(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = SEC};
	params(&p, CONTROL_ALGO_ADAPTIVE, 1);
	p.epsilon_pct = 1.0;
	p.avg_reports = 4;
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	report(&f, 50); /* in band: hold */
	assert_int_equal(f.d.reason, CONTROL_R_INBAND);
	/* single excursions out of band with the mean inside: kept */
	const double r[] = {48.5, 50.5, 51.5, 49.5, 48.8, 50.6};
	for (unsigned i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		report(&f, r[i]);
		assert_false(f.d.changed);
	}
	assert_int_equal(f.job.state, CONTROL_STABLE);
	/* a large single error (> jump_factor * eps) leaves at once */
	report(&f, 40);
	assert_true(f.d.changed);
	control_job_fini(&f.job);
}

static void test_oscillation_classified(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = SEC};
	params(&p, CONTROL_ALGO_LINEAR, 1);
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	/* in band, out, in, out, in, out: 3 band exits within 16 evaluations */
	const double r[] = {50, 55, 50, 45, 50, 55};
	for (unsigned i = 0; i < sizeof(r) / sizeof(r[0]); i++) {
		report(&f, r[i]);
		if (i < 5)
			assert_int_not_equal(f.job.state, CONTROL_OSCILLATING);
	}
	assert_int_equal(f.job.state, CONTROL_OSCILLATING);
	assert_string_equal(control_state_name(f.job.state), "oscillating");
	/* 16 quiet evaluations later it is stable again */
	for (int i = 0; i < 16; i++)
		report(&f, 50);
	assert_int_equal(f.job.state, CONTROL_STABLE);
	/* overshoot across the target (sign flips of acted errors) is oscillation too */
	const double r2[] = {56, 44, 56, 44};
	for (unsigned i = 0; i < 4; i++)
		report(&f, r2[i]);
	assert_int_equal(f.job.state, CONTROL_OSCILLATING);
	control_job_fini(&f.job);
}

static void test_reject_rolls_back(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = SEC};
	params(&p, CONTROL_ALGO_ADAPTIVE, 1);
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	report(&f, 50);
	mono_ns per = f.d.period_ns, sl = f.d.slice_ns;
	assert_int_equal(control_set_target(&f.job, 90, f.now, &f.d), 0);
	assert_true(f.d.changed);
	control_reject(&f.job, f.now, &f.d);
	assert_true(f.d.changed);
	assert_int_equal(f.d.reason, CONTROL_R_ROLLBACK);
	assert_int_equal(f.d.period_ns, per);
	assert_int_equal(f.d.slice_ns, sl);
	assert_true(f.job.target_pct == 50.0);
	assert_int_equal(f.job.state, CONTROL_REJECTED);
	control_job_fini(&f.job);
}

/* A floating job at target 45 %, eps 2, evaluated on every report (eval_periods 1). */
static void floating_45(struct fx *f)
{
	struct control_params p;
	params(&p, CONTROL_ALGO_FLOATING, 1);
	p.target_pct = 45;
	p.epsilon_pct = 2;
	p.eval_periods = 1;
	assert_int_equal(control_job_init(&f->job, &p, f->now, &f->d), 0);
}

/* Floating, scripted: the first step uses the efficiency r/U as slope, the second the
 * least-squares slope of two points, the third the chord of a bracket (regula falsi). */
static void test_floating_steps(void **state)
{
	(void)state;
	struct fx f = {.now = SEC};
	floating_45(&f);
	assert_true(fabs(f.d.u_pct - 45) < 1e-9);
	assert_int_equal(f.d.period_ns, 200 * MS);

	/* 60 % at U 45: slope 60/45, e = 15 > 3 dead bands: gain 1, U = 45 - 15 * 45/60 */
	report(&f, 60);
	assert_int_equal(f.d.reason, CONTROL_R_USTEP);
	assert_true(fabs(f.d.u_pct - 33.75) < 1e-6);
	assert_int_equal(f.d.period_ns, 200 * MS);
	/* 50 % at U 33.75: fit slope 10/11.25; U = 33.75 - 5 / (10/11.25) */
	report(&f, 50);
	assert_int_equal(f.d.reason, CONTROL_R_USTEP);
	assert_true(fabs(f.d.u_pct - 28.125) < 1e-6);
	/* 40 % at U 28.125: bracket (28.125, 40) .. (33.75, 50): chord meets 45 at 30.9375 */
	report(&f, 40);
	assert_int_equal(f.d.reason, CONTROL_R_USTEP);
	assert_true(fabs(f.d.u_pct - 30.9375) < 1e-6);
	/* the constraint is U * period, and U is below the target: the job needs less */
	assert_true(fabs((double)f.d.slice_ns - 200e6 * 0.309375) <= 0.5);
	/* in band: kept */
	report(&f, 45.3);
	assert_int_equal(f.d.reason, CONTROL_R_INBAND);
	assert_false(f.d.changed);
	/* just above the dead band: a chord step, inside the bracket (28.125, 40) .. (30.9375,
	 * 45.3), a little down */
	report(&f, 46.4);
	assert_int_equal(f.d.reason, CONTROL_R_USTEP);
	double u = f.d.u_pct;
	assert_true(u < 30.9375 && u > 30.5);
	/* the job slows down (a co-runner): 35 % just below the bracket's upper point. Its chord
	 * to (30.9375, 45.3) is steeper than a job can be (elasticity ~70): not a bracket; a
	 * step along the slope instead, U well past the old upper point (the chord would have
	 * stayed below it) */
	report(&f, 35);
	assert_int_equal(f.d.reason, CONTROL_R_USTEP);
	assert_true(f.d.u_pct > 33);
	control_job_fini(&f.job);
}

/* Floating, scripted: a job whose every evaluation lands just outside the dead band takes
 * BLIND_MAX (2) small steps in a row from first evaluations at their constraints, then
 * confirms the next one before it moves U again: that pair of evaluations at one constraint
 * is a noise measurement (none is made while U moves at every evaluation). A large error is
 * followed at once, whatever came before. */
static void test_floating_confirms_small_steps(void **state)
{
	(void)state;
	struct fx f = {.now = SEC};
	floating_45(&f);

	/* dead band 1 (2 x the 0.5-point prior), 3 dead bands 3: +-1.5 are small errors */
	report(&f, 46.5);
	assert_int_equal(f.d.reason, CONTROL_R_USTEP);
	report(&f, 43.5);
	assert_int_equal(f.d.reason, CONTROL_R_USTEP);
	assert_int_equal(f.job.fl.noise_n, 0);
	double u = f.job.cur_u_pct;
	report(&f, 46.5); /* a third in a row: confirmed first */
	assert_int_equal(f.d.reason, CONTROL_R_CONFIRM);
	assert_false(f.d.changed);
	assert_true(f.job.cur_u_pct == u);
	report(&f, 46.4); /* the pair: noise measured, then the step */
	assert_int_equal(f.job.fl.noise_n, 1);
	assert_int_equal(f.d.reason, CONTROL_R_USTEP);
	report(&f, 43.6); /* the count started again */
	assert_int_equal(f.d.reason, CONTROL_R_USTEP);
	report(&f, 30); /* a real change is followed at once */
	assert_int_equal(f.d.reason, CONTROL_R_USTEP);
	report(&f, 46.5);
	assert_int_equal(f.d.reason, CONTROL_R_USTEP);
	control_job_fini(&f.job);
}

/* Floating, scripted: a pair of evaluations at one constraint further apart than a shift
 * (3 dead bands: 3 points with the 0.5-point prior) is taken as a shift of speed once, not
 * as noise; a second such pair soon after is noise, and sigma grows from the prior. */
static void test_floating_frequent_shifts_are_noise(void **state)
{
	(void)state;
	struct fx f = {.now = SEC};
	floating_45(&f);

	report(&f, 45.8); /* in the dead band: held */
	assert_int_equal(f.d.reason, CONTROL_R_INBAND);
	report(&f, 42.5); /* 3.3 points from the last at this constraint: a shift */
	assert_int_equal(f.job.fl.shifts, 1);
	assert_int_equal(f.job.fl.noise_n, 0);
	assert_true(f.d.changed);
	report(&f, 45.5); /* first at the new constraint, in band: held */
	assert_int_equal(f.d.reason, CONTROL_R_INBAND);
	report(&f, 48.8); /* 3.3 apart again, one pair later: noise */
	assert_int_equal(f.job.fl.shifts, 1);
	assert_int_equal(f.job.fl.noise_n, 1);
	/* sqrt((0.25 + 3.3^2 / 2) / 2) = 1.69, over sqrt 2 for the doubled evaluation */
	assert_true(fabs(f.job.fl.noise_pct - 1.69 / M_SQRT2) < 0.01);
	assert_int_equal(f.job.fl.win_mult, 2);
	control_job_fini(&f.job);
}

/* Floating: an evaluation spans at least eval_periods periods and the length the slice's
 * phase needs (r (1 - U) T / (sqrt 6 * 0.2 eps): 3.4 s here); a rank's rate is the sum of
 * its units over the sum of its intervals (whole reports). */
static void test_floating_evaluation_window(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = SEC};
	params(&p, CONTROL_ALGO_FLOATING, 1);
	p.target_pct = 50;
	p.eval_periods = 4; /* 4 x 200 ms */
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	mono_ns len = control_floating_eval_len(&f.job);
	double phase = 50 * 0.5 * 0.2 / (sqrt(6.0) * 0.2 * 3) * 1e9;
	assert_true(fabs((double)len - phase) < 1e3);
	assert_true(len >= 4 * 200 * MS);
	const uint64_t units[] = {0, 10, 0, 12, 0, 8, 0, 10}; /* lumpy: units at iteration ends */
	uint64_t sum = 0;
	unsigned i = 0;
	for (; (i + 1) * 100 * MS < len; i++) {
		f.now += 100 * MS;
		sum += units[i % 8];
		assert_int_equal(control_on_report(&f.job, 0, units[i % 8], 100 * MS, f.now, &f.d),
		                 0);
		assert_int_equal(f.d.reason, CONTROL_R_WAIT_RANKS);
	}
	f.now += 100 * MS;
	sum += units[i % 8];
	assert_int_equal(control_on_report(&f.job, 0, units[i % 8], 100 * MS, f.now, &f.d), 0);
	/* the round ended at the first report past the length: 170 units over 3.5 s */
	assert_int_equal(i + 1, 35);
	assert_int_not_equal(f.d.reason, CONTROL_R_WAIT_RANKS);
	assert_true(fabs(f.d.rate_pct - (double)sum / ((i + 1) * 0.1)) < 1e-9);
	control_job_fini(&f.job);
}

/* A floating job at target 40, eps 2, one period per evaluation. */
static void floating_at_40(struct fx *f)
{
	struct control_params p;

	params(&p, CONTROL_ALGO_FLOATING, 1);
	p.target_pct = 40;
	p.epsilon_pct = 2;
	p.eval_periods = 1;
	assert_int_equal(control_job_init(&f->job, &p, f->now, &f->d), 0);
}

/* Floating: a refused rise caps U where it was; the admission limit cuts U at once; the
 * floor lifts the period at once. */
static void test_floating_bounds(void **state)
{
	(void)state;
	struct fx f = {.now = SEC};
	floating_at_40(&f);
	report(&f, 20); /* needs more: U 40 -> 80 */
	assert_true(fabs(f.d.u_pct - 80) < 1e-6);
	control_reject(&f.job, f.now, &f.d);
	assert_int_equal(f.d.reason, CONTROL_R_ROLLBACK);
	assert_true(fabs(f.d.u_pct - 40) < 1e-6);
	report(&f, 20); /* the cap holds: unreachable at U 40, needs ~80 */
	assert_false(f.d.changed);
	assert_true(f.job.unreachable);
	assert_int_equal(f.job.state, CONTROL_REJECTED);
	assert_true(f.job.fl.need_u_pct > 75 && f.job.fl.need_u_pct < 85);
	/* the daemon frees room: the next evaluation rises */
	assert_int_equal(control_set_u_limit(&f.job, 90, f.now, &f.d), 0);
	assert_false(f.d.changed);
	report(&f, 20);
	assert_true(f.d.changed && f.d.u_pct > 70);
	/* a lower limit cuts U at once */
	assert_int_equal(control_set_u_limit(&f.job, 30, f.now, &f.d), 0);
	assert_int_equal(f.d.reason, CONTROL_R_LIMIT);
	assert_true(fabs(f.d.u_pct - 30) < 1e-6);
	/* the nodes' floor moves the period up at once, U kept */
	assert_int_equal(control_set_floor(&f.job, 250 * MS, f.now, &f.d), -EINVAL);
	assert_int_equal(control_set_floor(&f.job, 150 * MS, f.now, &f.d), 0);
	assert_false(f.d.changed); /* 200 ms is above it */
	control_job_fini(&f.job);
}

/* Floating: a refused rise is bisected towards the refused U, down to a point's gap, each
 * probe a decision the daemon sends; a refused probe narrows the gap from above. A new target
 * whose U step is refused is kept, U capped where it was. Other algorithms: nothing to probe. */
static void test_floating_limit_bisect(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = SEC};
	double room = 61.0; /* what the node admits */
	int probes = 0;

	floating_at_40(&f);
	assert_false(control_u_limit_open(&f.job));
	assert_int_equal(control_probe_u_limit(&f.job, f.now, &f.d), -EAGAIN);
	report(&f, 20); /* needs U 80: refused */
	assert_true(fabs(f.d.u_pct - 80) < 1e-6);
	control_reject(&f.job, f.now, &f.d);
	assert_true(fabs(f.job.fl.u_limit_pct - 40) < 1e-6);
	assert_true(fabs(f.job.fl.u_refused_pct - 80) < 1e-6);
	while (control_u_limit_open(&f.job)) {
		assert_true(++probes <= 10);
		assert_int_equal(control_probe_u_limit(&f.job, f.now, &f.d), 0);
		assert_true(f.d.changed);
		assert_int_equal(f.d.reason, CONTROL_R_LIMIT);
		if (f.d.u_pct > room)
			control_reject(&f.job, f.now, &f.d);
	}
	/* 40 | 80: 60 ok, 70 no, 65 no, 62.5 no, 61.25 no, 60.625 ok: holds 60.6 of 61 */
	assert_int_equal(probes, 6);
	assert_true(f.job.cur_u_pct <= room && f.job.cur_u_pct > room - 1.0);
	assert_true(f.job.fl.u_refused_pct - f.job.fl.u_limit_pct <= 1.0);
	/* lifting the cap forgets what was refused */
	assert_int_equal(control_set_u_limit(&f.job, 100, f.now, &f.d), 0);
	assert_true(f.job.fl.u_refused_pct == 100.0);
	assert_false(control_u_limit_open(&f.job));

	/* a new target whose U step is refused: kept, U back where it was and capped */
	double u0 = f.job.cur_u_pct;
	assert_int_equal(control_set_target(&f.job, 45, f.now, &f.d), 0);
	assert_true(f.d.changed && f.d.u_pct > u0);
	control_reject_keep_target(&f.job, f.now, &f.d);
	assert_int_equal(f.d.reason, CONTROL_R_ROLLBACK);
	assert_true(fabs(f.d.u_pct - u0) < 1e-6);
	assert_true(f.job.target_pct == 45.0);
	assert_true(fabs(f.job.fl.u_limit_pct - u0) < 1e-6);
	assert_true(control_u_limit_open(&f.job));
	control_job_fini(&f.job);

	params(&p, CONTROL_ALGO_ADAPTIVE, 1);
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	assert_false(control_u_limit_open(&f.job));
	assert_int_equal(control_probe_u_limit(&f.job, f.now, &f.d), -EAGAIN);
	control_job_fini(&f.job);
}

/* Floating: the retry after a back-off. A capped job that needs more U bisects up at once
 * towards what it needs (not to 100 %: it holds about what it needs when the room is there,
 * the most the node admits when not); a capped job that needs nothing more has its cap
 * lifted without a change. */
static void test_floating_limit_retry(void **state)
{
	(void)state;
	struct fx f = {.now = SEC};
	int probes = 0;

	floating_at_40(&f);
	report(&f, 20); /* needs U 80: refused, capped at 40 */
	control_reject(&f.job, f.now, &f.d);
	f.job.fl.u_refused_pct = f.job.fl.u_limit_pct + 0.5; /* the bisection had closed */
	assert_false(control_u_limit_open(&f.job));
	report(&f, 20);
	assert_true(f.job.unreachable);
	double need = f.job.fl.need_u_pct;
	assert_true(need > 75 && need < 85);
	/* room freed up to 95: the retry climbs to about what it needs, no further */
	assert_int_equal(control_retry_u_limit(&f.job, f.now, &f.d), 0);
	assert_true(f.d.changed);
	assert_int_equal(f.d.reason, CONTROL_R_LIMIT);
	assert_true(f.d.u_pct > 40 && f.d.u_pct <= need + 1.0);
	while (control_u_limit_open(&f.job)) {
		assert_true(++probes <= 10);
		assert_int_equal(control_probe_u_limit(&f.job, f.now, &f.d), 0);
	}
	assert_true(f.job.cur_u_pct > need - 1.0 && f.job.cur_u_pct <= need + 1.0);

	/* in band at its cap: the retry lifts the cap, nothing to send */
	report(&f, 40);
	assert_false(f.job.unreachable);
	assert_int_equal(control_retry_u_limit(&f.job, f.now, &f.d), 0);
	assert_false(f.d.changed);
	assert_true(f.job.fl.u_limit_pct == 100.0);
	assert_int_equal(control_retry_u_limit(&f.job, f.now, NULL), -EINVAL);
	control_job_fini(&f.job);
}

/* Floating: a period probe runs at the U the model says the target needs, bounded as a step
 * is (at most halving U): a noisy rate history (the slope fit is poor) never sends a probe to
 * the smallest slice. Rates as an MPI job's in CI: e -10.8, -7.4, +10.1, +5.4, +8.3, +11.1,
 * then +24 (r 54 at U 48.6). */
static void test_floating_probe_bounded(void **state)
{
	(void)state;
	struct control_params p;
	struct fx f = {.now = SEC};
	const double rates[] = {19.2, 22.6, 40.1, 35.4, 38.3, 41.1, 54.0, 54.0, 30.0, 30.0};
	bool probed = false;

	params(&p, CONTROL_ALGO_FLOATING, 1);
	p.target_pct = 30;
	p.epsilon_pct = 2;
	p.eval_periods = 1;
	assert_int_equal(control_job_init(&f.job, &p, f.now, &f.d), 0);
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		double u = f.job.cur_u_pct;
		report(&f, rates[i]);
		if (f.d.changed && f.d.reason == CONTROL_R_PROBE) {
			probed = true;
			assert_true(f.d.u_pct >= u / 2 - 1e-9);
		}
		assert_true(f.job.cur_u_pct >= 5.0);
	}
	assert_true(probed);
	control_job_fini(&f.job);
}

static void test_params_checked(void **state)
{
	(void)state;
	struct control_params p;
	struct control_job job;
	struct control_decision d;
	params(&p, CONTROL_ALGO_LINEAR, 1);
	p.nranks = 0;
	assert_int_equal(control_job_init(&job, &p, 0, &d), -EINVAL);
	params(&p, CONTROL_ALGO_LINEAR, 1);
	p.epsilon_pct = 0;
	assert_int_equal(control_job_init(&job, &p, 0, &d), -EINVAL);
	params(&p, CONTROL_ALGO_LINEAR, 1);
	p.min_period_ns = p.initial_period_ns;
	assert_int_equal(control_job_init(&job, &p, 0, &d), -EINVAL);
	params(&p, CONTROL_ALGO_LINEAR, 1);
	p.target_pct = 0.01; /* 20 us slice at 200 ms < min_slice */
	assert_int_equal(control_job_init(&job, &p, 0, &d), -EINVAL);
	params(&p, 7, 1);
	assert_int_equal(control_job_init(&job, &p, 0, &d), -EINVAL);
	enum control_algo a;
	assert_int_equal(control_algo_parse("adaptive", &a), 0);
	assert_int_equal(a, CONTROL_ALGO_ADAPTIVE);
	assert_int_equal(control_algo_parse("pid", &a), -EINVAL);
	assert_int_equal(control_algo_parse("floating", &a), 0);
	assert_int_equal(a, CONTROL_ALGO_FLOATING);
	params(&p, CONTROL_ALGO_FLOATING, 1);
	p.u_max_pct = 0;
	assert_int_equal(control_job_init(&job, &p, 0, &d), -EINVAL);
	params(&p, CONTROL_ALGO_FLOATING, 1);
	p.u_max_pct = 100.5;
	assert_int_equal(control_job_init(&job, &p, 0, &d), -EINVAL);
	params(&p, CONTROL_ALGO_FLOATING, 1);
	p.eval_periods = 0;
	assert_int_equal(control_job_init(&job, &p, 0, &d), -EINVAL);
	params(&p, CONTROL_ALGO_FLOATING, 1);
	p.eval_min_ns = 2 * p.eval_max_ns;
	assert_int_equal(control_job_init(&job, &p, 0, &d), -EINVAL);
	/* U = target algorithms have no admission limit to float under */
	params(&p, CONTROL_ALGO_ADAPTIVE, 1);
	assert_int_equal(control_job_init(&job, &p, 0, &d), 0);
	assert_int_equal(control_set_u_limit(&job, 40, 0, &d), -EINVAL);
	control_job_fini(&job);
	control_job_fini(NULL);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Random reports, targets, rejections and rank changes: the invariant holds on every
 * decision, periods stay within [min_period, initial], nothing crashes (run under ASan). */
static void test_random_sequences(void **state)
{
	(void)state;
	uint64_t rng = 12345;
#define RND() rnd(&rng)
	for (int algo = 0; algo < CONTROL_ALGO_COUNT; algo++)
		for (int run = 0; run < 50; run++) {
			struct control_params p;
			struct control_job job;
			struct control_decision d;
			mono_ns now = SEC;
			params(&p, algo, 1 + RND() % 5);
			p.r_max = RND() % 2 ? 100.0 : 0;
			p.epsilon_pct = 0.25 + (double)(RND() % 40) / 10;
			p.round_timeout_ns = RND() % 2 ? 5 * SEC : 0;
			assert_int_equal(control_job_init(&job, &p, now, &d), 0);
			for (int i = 0; i < 400; i++) {
				now += (RND() % 3000) * MS;
				uint32_t what = RND() % 100;
				int rc;
				if (what < 85) {
					uint32_t rank = RND() % (job.nranks + 1);
					rc = control_on_report(&job, rank, RND() % 200,
					                       (RND() % 4000 + 1) * MS, now, &d);
					assert_true(rc == 0 ||
					            (rc == -ERANGE && rank >= job.nranks));
				} else if (what < 93) {
					double t = (double)(RND() % 1100) / 10;
					rc = control_set_target(&job, t, now, &d);
					assert_true(rc == 0 || t <= 0 || t > 100 || rc == -ERANGE);
				} else if (what < 97) {
					control_reject(&job, now, &d);
				} else if (what < 98) {
					assert_int_equal(control_set_nranks(&job, 1 + RND() % 6),
					                 0);
					continue;
				} else if (what < 99) {
					mono_ns fl = (RND() % 250) * MS;
					rc = control_set_floor(&job, fl, now, &d);
					assert_true(rc == 0 || fl >= p.initial_period_ns);
					if (rc == 0 && job.state != CONTROL_CALIBRATING &&
					    job.target_pct > 0)
						assert_true(job.period_ns >= fl);
				} else if (algo == CONTROL_ALGO_FLOATING && RND() % 2) {
					double lim = 1 + (double)(RND() % 100);
					assert_int_equal(control_set_u_limit(&job, lim, now, &d),
					                 0);
					if (job.state != CONTROL_CALIBRATING && job.target_pct > 0)
						assert_true(job.cur_u_pct <= lim);
				} else {
					control_set_rmax(&job, 50 + RND() % 100, now, &d);
				}
				assert_true(job.period_ns >= p.min_period_ns &&
				            job.period_ns <= p.initial_period_ns);
				assert_true(job.slice_ns <= job.period_ns);
				/* slice = U * period for the constraint's U rounded down, always:
				 * never more than U (sums of U's fit a node's cap exactly) */
				double x = (double)job.period_ns * job.cur_u_pct / 100.0;
				assert_true((double)job.slice_ns <= x + 1e-5 &&
				            (double)job.slice_ns > x - 1.0);
				/* and U = target unless calibrating, without target, or rolled
				 * back to such a constraint; floating: U within (0, u_max] */
				if (algo == CONTROL_ALGO_FLOATING)
					assert_true(job.cur_u_pct > 0 &&
					            (job.cur_u_pct <= p.u_max_pct ||
					             job.cur_u_pct == 100.0));
				else if (job.state != CONTROL_CALIBRATING && job.target_pct > 0 &&
				         job.cur_u_pct != 100.0)
					assert_true(job.cur_u_pct == job.target_pct);
				assert_non_null(control_state_name(job.state));
				assert_non_null(control_reason_name(d.reason));
			}
			control_job_fini(&job);
		}
#undef RND
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_linear_paper_sequence),
	    cmocka_unit_test(test_linear_reset_at_min_period),
	    cmocka_unit_test(test_linear_reset_on_min_slice),
	    cmocka_unit_test(test_linear_no_change_inside_eps),
	    cmocka_unit_test(test_linear_target_change),
	    cmocka_unit_test(test_aggregation_and_rounds),
	    cmocka_unit_test(test_calibration),
	    cmocka_unit_test(test_rmax_observed_and_given),
	    cmocka_unit_test(test_adaptive_drops_stale_reports),
	    cmocka_unit_test(test_adaptive_search_and_memo),
	    cmocka_unit_test(test_adaptive_memo_jump),
	    cmocka_unit_test(test_adaptive_unreachable),
	    cmocka_unit_test(test_adaptive_hysteresis),
	    cmocka_unit_test(test_oscillation_classified),
	    cmocka_unit_test(test_reject_rolls_back),
	    cmocka_unit_test(test_floating_steps),
	    cmocka_unit_test(test_floating_confirms_small_steps),
	    cmocka_unit_test(test_floating_frequent_shifts_are_noise),
	    cmocka_unit_test(test_floating_evaluation_window),
	    cmocka_unit_test(test_floating_bounds),
	    cmocka_unit_test(test_floating_limit_bisect),
	    cmocka_unit_test(test_floating_limit_retry),
	    cmocka_unit_test(test_floating_probe_bounded),
	    cmocka_unit_test(test_params_checked),
	    cmocka_unit_test(test_random_sequences),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
