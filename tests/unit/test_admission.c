/*
 * Unit tests of vsched/admission.c: the processor-demand test on hand-made window sets
 * (frames, sub-frames, mixed periods, windows past the frame end, the refusals of issue 14,
 * the cap's meaning, the sound test for long hyperperiods, the cost limits), density with
 * deadline < period, the RT throttling limit read from (fake) /proc files, the effective cap
 * and the fits boundary. Random sets against a brute-force EDF simulation:
 * test_admission_oracle.c.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "vsched.h"

#define MS 1000000ULL

static char dir[64];
static char runtime_path[128], period_path[128];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/vs_adm_XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(runtime_path, sizeof(runtime_path), "%s/rt_runtime_us", dir);
	snprintf(period_path, sizeof(period_path), "%s/rt_period_us", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(runtime_path);
	unlink(period_path);
	rmdir(dir);
	return 0;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_density(void **state)
{
	struct vsp_resv r = {10 * MS, 3 * MS, 0, 0};
	(void)state;
	assert_true(fabs(admission_density(&r) - 0.3) < 1e-12);
	r.deadline = 10 * MS;
	assert_true(fabs(admission_density(&r) - 0.3) < 1e-12);
	r.deadline = 6 * MS; /* deadline < period: slice / deadline */
	assert_true(fabs(admission_density(&r) - 0.5) < 1e-12);
	r.phase = 5 * MS; /* phase does not matter */
	assert_true(fabs(admission_density(&r) - 0.5) < 1e-12);
	r.deadline = 3 * MS;
	assert_true(fabs(admission_density(&r) - 1.0) < 1e-12);
	r = (struct vsp_resv){0, 1, 0, 0};
	assert_false(admission_fits(0.0, admission_density(&r), 1.0));
}

static void test_rt_limit_files(void **state)
{
	char why[256];
	double limit = -1;
	uint64_t period = 0;
	(void)state;

	write_file(runtime_path, "950000\n");
	write_file(period_path, "1000000\n");
	assert_int_equal(
	    admission_read_rt_limit(runtime_path, period_path, &limit, &period, why, sizeof(why)),
	    0);
	assert_true(fabs(limit - 0.95) < 1e-12);
	assert_int_equal(period, 1000 * MS); /* the accounting period, in ns */

	write_file(runtime_path, "-1\n"); /* throttling off */
	assert_int_equal(
	    admission_read_rt_limit(runtime_path, period_path, &limit, &period, why, sizeof(why)),
	    0);
	assert_true(limit == 1.0);

	write_file(runtime_path, "500000");
	write_file(period_path, "1000000");
	assert_int_equal(
	    admission_read_rt_limit(runtime_path, period_path, &limit, &period, why, sizeof(why)),
	    0);
	assert_true(fabs(limit - 0.5) < 1e-12);
}

static void test_rt_limit_bad_files(void **state)
{
	char why[256] = "";
	double limit = 0.42;
	uint64_t period = 7;
	(void)state;

	write_file(period_path, "1000000\n");
	write_file(runtime_path, "lots\n");
	assert_int_equal(
	    admission_read_rt_limit(runtime_path, period_path, &limit, &period, why, sizeof(why)),
	    -1);
	assert_non_null(strstr(why, runtime_path));
	write_file(runtime_path, "-2\n");
	assert_int_equal(
	    admission_read_rt_limit(runtime_path, period_path, &limit, &period, why, sizeof(why)),
	    -1);
	write_file(runtime_path, "950000\n");
	write_file(period_path, "0\n");
	assert_int_equal(
	    admission_read_rt_limit(runtime_path, period_path, &limit, &period, why, sizeof(why)),
	    -1);
	unlink(period_path);
	assert_int_equal(
	    admission_read_rt_limit(runtime_path, period_path, &limit, &period, why, sizeof(why)),
	    -1);
	assert_non_null(strstr(why, period_path));
	assert_true(limit == 0.42); /* unchanged on error */
	assert_int_equal(period, 7);
}

static void test_rt_limit_this_machine(void **state)
{
	char why[256];
	double limit = -1;
	uint64_t period = 0;
	(void)state;
	if (access("/proc/sys/kernel/sched_rt_runtime_us", R_OK) != 0)
		skip();
	assert_int_equal(admission_read_rt_limit(NULL, NULL, &limit, &period, why, sizeof(why)), 0);
	assert_true(limit > 0.0 && limit <= 1.0);
	assert_true(period > 0);
}

static void test_cap(void **state)
{
	(void)state;
	/* this machine: 0.95 RT limit, 0.05 reserve, 0.9 configured */
	assert_true(fabs(admission_cap(0.9, 0.95, 0.05) - 0.9) < 1e-12);
	/* configured above what the RT limit allows: clamped */
	assert_true(fabs(admission_cap(1.0, 0.95, 0.05) - 0.9) < 1e-12);
	assert_true(fabs(admission_cap(1.0, 0.5, 0.1) - 0.4) < 1e-12);
	/* throttling off (-1 in the file): limit 1.0 */
	assert_true(fabs(admission_cap(1.0, 1.0, 0.05) - 0.95) < 1e-12);
	/* configured below: kept */
	assert_true(fabs(admission_cap(0.5, 0.95, 0.05) - 0.5) < 1e-12);
	/* never below zero */
	assert_true(admission_cap(0.9, 0.03, 0.05) == 0.0);
}

static void test_fits_boundary(void **state)
{
	struct vsp_resv a = {10 * MS, 3 * MS, 0, 0}, b = {10 * MS, 6 * MS, 0, 0};
	(void)state;
	/* 0.3 + 0.6 = 0.9 exactly at the cap, despite floating-point rounding */
	assert_true(admission_fits(admission_density(&a), admission_density(&b), 0.9));
	assert_true(admission_fits(0.0, 0.9, 0.9));
	assert_false(admission_fits(0.0, 0.9 + 1e-6, 0.9));
	assert_false(admission_fits(0.5, 0.41, 0.9));
	assert_true(admission_fits(0.0, 0.0, 0.0));
	assert_false(admission_fits(0.0, 1e-6, 0.0));
	assert_false(admission_fits(0.0, NAN, 1.0));
	/* many small reservations summed up to the cap still fit */
	double load = 0.0;
	struct vsp_resv s = {3 * MS, 300000, 0, 0}; /* 0.1 each */
	for (int i = 0; i < 9; i++) {
		assert_true(admission_fits(load, admission_density(&s), 0.9));
		load += admission_density(&s);
	}
	assert_false(admission_fits(load, admission_density(&s), 0.9));
}

/*
 * This machine: cap 90 % (RT limit 95 % less the 5 % reserve), RT accounting period 1 s:
 * burst (95 % - 90 %) · 1 s. CPU95: throttling off, 5 % reserve. CPU100: the whole CPU.
 */
static const struct adm_supply CPU90 = {0.9, 50.0 * MS};
static const struct adm_supply CPU95 = {0.95, 50.0 * MS};
static const struct adm_supply CPU100 = {1.0, 0};

static struct adm_win aw(uint64_t T, uint64_t phase, uint64_t len, uint64_t slice, int owner,
                         int idx)
{
	struct adm_win w = {T, slice, len, phase, owner, idx};
	return w;
}

static int test_n(const struct adm_win *w, int n, const struct adm_supply *sp, struct adm_result *r)
{
	return admission_test(w, n, sp, NULL, -1, r);
}

/*
 * Complementary full windows of one 100 ms frame: density would say 4.0, the demand test
 * says they fit (Σ S/T = 0.95). One more ms anywhere does not.
 */
static void test_frame_complementary(void **state)
{
	struct adm_win w[4];
	struct adm_result r;
	(void)state;

	w[0] = aw(100 * MS, 0, 30 * MS, 30 * MS, 1, 0);
	w[1] = aw(100 * MS, 50 * MS, 20 * MS, 20 * MS, 1, 1);
	w[2] = aw(100 * MS, 30 * MS, 20 * MS, 20 * MS, -1, 0);
	w[3] = aw(100 * MS, 70 * MS, 25 * MS, 25 * MS, -1, 1);
	assert_int_equal(test_n(w, 4, &CPU95, &r), ADM_FITS);
	assert_true(r.exact);
	assert_int_equal(r.hyperperiod, 100 * MS);
	assert_true(r.util > 0.949 && r.util < 0.951);
	/* cap below Σ S/T: every interval fits, the utilisation does not */
	assert_int_equal(test_n(w, 4, &CPU90, &r), ADM_UTIL);
	assert_true(r.util_over);
	/* the request's second window one ms earlier overlaps the other task's 50+20 window:
	 * the jobs in [50, 94] need 45 ms (and from 0, 95 ms by 94: the shortest is named) */
	w[3] = aw(100 * MS, 69 * MS, 25 * MS, 25 * MS, -1, 1);
	assert_int_equal(test_n(w, 4, &CPU95, &r), ADM_DEMAND);
	assert_int_equal(r.from, 50 * MS);
	assert_int_equal(r.to, 94 * MS);
	assert_int_equal(r.demand, 45 * MS);
	assert_true(r.supply == 44.0 * MS);
	assert_int_equal(r.a, 3); /* the request's window is named first */
	assert_int_equal(r.b, 1); /* ... and the window it overlaps */
	/* a partial window (slice < length) may overlap as long as the demand fits:
	 * [50, 95]: 20 + 15 = 35 <= 45 */
	w[3] = aw(100 * MS, 60 * MS, 35 * MS, 15 * MS, -1, 1);
	assert_int_equal(test_n(w, 4, &CPU95, &r), ADM_FITS);
	/* slice 30: [50, 95] needs 50 > 45 (and [0, 95] 100) */
	w[3] = aw(100 * MS, 60 * MS, 35 * MS, 30 * MS, -1, 1);
	assert_int_equal(test_n(w, 4, &CPU100, &r), ADM_DEMAND);
	assert_true(r.demand > r.supply);
	assert_int_equal(r.a, 3);
	assert_int_equal(r.b, 1);
}

/* D < T tasks with disjoint phases, which density refuses; and in phase, which it decides. */
static void test_same_period_exact(void **state)
{
	struct adm_win w[3];
	struct adm_result r;
	(void)state;

	/* three tasks, 10 ms period, each 3 ms in its own 3 ms window: density 3.0 */
	for (int i = 0; i < 3; i++)
		w[i] = aw(10 * MS, (uint64_t)i * 3 * MS, 3 * MS, 3 * MS, i, 0);
	assert_int_equal(test_n(w, 3, &CPU90, &r), ADM_FITS);
	/* a full-period task (phase 0, D = T) beside them: [0, 10]: 9 + 1 <= 10 */
	struct adm_win x[4] = {w[0], w[1], w[2], aw(10 * MS, 0, 10 * MS, 1 * MS, 3, 0)};
	assert_int_equal(test_n(x, 4, &CPU100, &r), ADM_FITS);
	x[3].slice = 1 * MS + 1; /* one ns too many in the whole frame */
	assert_int_equal(test_n(x, 4, &CPU100, &r), ADM_DEMAND);
	assert_int_equal(r.from, 0);
	assert_int_equal(r.to, 10 * MS);
	/* all in phase 0: 3 x 1 ms due at 4 ms fit, one ns more does not */
	for (int i = 0; i < 3; i++)
		w[i] = aw(10 * MS, 0, 4 * MS, 1 * MS, i, 0);
	assert_int_equal(test_n(w, 3, &CPU100, &r), ADM_FITS);
	w[2].slice = 2 * MS + 1;
	assert_int_equal(test_n(w, 3, &CPU100, &r), ADM_DEMAND);
	assert_int_equal(r.to - r.from, 4 * MS);
}

/* Different periods and windows past the frame end are decided exactly too. */
static void test_mixed_periods_and_wrap(void **state)
{
	struct adm_win w[2];
	struct adm_result r;
	(void)state;

	/* 30 ms at the start of 100 ms, 20 ms at 30+20 of every 50 ms: disjoint, U = 0.7 */
	w[0] = aw(100 * MS, 0, 30 * MS, 30 * MS, 0, 0);
	w[1] = aw(50 * MS, 30 * MS, 20 * MS, 20 * MS, 1, 0);
	assert_int_equal(test_n(w, 2, &CPU90, &r), ADM_FITS);
	assert_true(r.exact);
	assert_int_equal(r.hyperperiod, 100 * MS);
	/* one ms earlier it overlaps the 100 ms task's window at 50 + 29 ... 100 + 30 */
	w[1].phase = 29 * MS;
	assert_int_equal(test_n(w, 2, &CPU90, &r), ADM_DEMAND);
	/* a window past the frame end: [80, 110] with 10 ms, beside 0+30 of the next frame */
	w[1] = aw(100 * MS, 80 * MS, 30 * MS, 10 * MS, 1, 0);
	assert_int_equal(test_n(w, 2, &CPU90, &r), ADM_FITS);
	/* 25 ms of it: [80, 130] needs 55 */
	w[1].slice = 25 * MS;
	assert_int_equal(test_n(w, 2, &CPU90, &r), ADM_DEMAND);
	assert_int_equal(r.from, 80 * MS);
	assert_int_equal(r.to, 130 * MS);
	assert_int_equal(r.demand, 55 * MS);
	assert_int_equal(test_n(w, 0, &CPU90, &r), ADM_FITS);
	struct vsp_resv v[2] = {{100 * MS, 30 * MS, 30 * MS, 0},
	                        {100 * MS, 20 * MS, 40 * MS, 50 * MS}};
	assert_true(admission_density_n(v, 2) > 1.49 && admission_density_n(v, 2) < 1.51);
	assert_true(admission_util_n(v, 2) > 0.49 && admission_util_n(v, 2) < 0.51);
}

/*
 * The refusals of issue 14, with the windows the controller sends (frame 100 ms of 5 ms
 * slots, 45 % = 9 slots): each fits and is admitted; what does not fit is still refused.
 */
static void test_issue14_phase_shifted_reservation(void **state)
{
	struct adm_win w[3];
	struct adm_result r;
	(void)state;

	/* a 45 % full-period reservation phase-shifted by 45 ms beside a 0+45 window task */
	w[0] = aw(100 * MS, 0, 45 * MS, 45 * MS, 0, 0);
	w[1] = aw(100 * MS, 45 * MS, 100 * MS, 45 * MS, -1, 0);
	assert_true(admission_density(&(struct vsp_resv){100 * MS, 45 * MS, 45 * MS, 0}) +
	                admission_density(&(struct vsp_resv){100 * MS, 45 * MS, 100 * MS, 0}) >
	            0.9); /* what density refused */
	assert_int_equal(test_n(w, 2, &CPU90, &r), ADM_FITS);
	assert_true(r.exact);
	/* the same reservation beside two window tasks that fill the frame to the cap */
	w[2] = aw(100 * MS, 45 * MS, 45 * MS, 45 * MS, 1, 0);
	assert_int_equal(test_n(w, 3, &CPU90, &r), ADM_DEMAND);
	assert_true(r.util_over);
	/* at 5 % it fits in time (the frame's last 10 ms), but not under the cap */
	w[1].slice = 5 * MS;
	assert_int_equal(test_n(w, 3, &CPU100, &r), ADM_FITS);
	assert_int_equal(test_n(w, 3, &CPU90, &r), ADM_UTIL);
}

static void test_issue14_subframes(void **state)
{
	struct adm_win w[6];
	struct adm_result r;
	(void)state;

	/* 25 ms sub-frames: 10 ms windows of two tasks, each 100 % dense, side by side */
	w[0] = aw(25 * MS, 0, 10 * MS, 10 * MS, 0, 0);
	w[1] = aw(25 * MS, 10 * MS, 10 * MS, 10 * MS, -1, 0);
	assert_int_equal(test_n(w, 2, &CPU90, &r), ADM_FITS);
	/* one task still on the 100 ms frame with four 10 ms windows, the other on 25 ms
	 * sub-frames (the controller moves jobs one transaction at a time) */
	for (int i = 0; i < 4; i++)
		w[i] = aw(100 * MS, (uint64_t)i * 25 * MS, 10 * MS, 10 * MS, 0, i);
	w[4] = aw(25 * MS, 10 * MS, 10 * MS, 10 * MS, -1, 0);
	assert_int_equal(test_n(w, 5, &CPU90, &r), ADM_FITS);
	assert_int_equal(r.hyperperiod, 100 * MS);
	/* "load 20.0% + 100.0%": a new rank's 20 ms / 100 ms beside the 25 ms / 10 ms window */
	w[0] = aw(100 * MS, 0, 100 * MS, 20 * MS, 0, 0);
	w[1] = aw(25 * MS, 0, 10 * MS, 10 * MS, -1, 0);
	assert_int_equal(test_n(w, 2, &CPU90, &r), ADM_FITS);
	/* a sub-frame window inside another task's full 45 ms window: really overlaps */
	w[0] = aw(100 * MS, 0, 45 * MS, 45 * MS, 0, 0);
	w[1] = aw(25 * MS, 10 * MS, 10 * MS, 10 * MS, -1, 0);
	assert_int_equal(test_n(w, 2, &CPU90, &r), ADM_DEMAND);
	assert_int_equal(r.a, 1);
	assert_int_equal(r.b, 0);
}

static void test_issue14_provisional(void **state)
{
	struct adm_win w[4];
	struct adm_result r;
	(void)state;

	/* the agent's provisional 20 ms / 100 ms beside a frame with room: admitted */
	w[0] = aw(100 * MS, 0, 45 * MS, 45 * MS, 0, 0);
	w[1] = aw(100 * MS, 0, 100 * MS, 20 * MS, -1, 0);
	assert_int_equal(test_n(w, 2, &CPU90, &r), ADM_FITS);
	/* ... and the plan's next windows beside it (45+45): 110 % of the CPU */
	w[2] = aw(100 * MS, 45 * MS, 45 * MS, 45 * MS, 2, 0);
	assert_int_equal(test_n(w, 3, &CPU90, &r), ADM_DEMAND);
	assert_true(r.util_over);
	/* a frame full of windows up to the cap: no room for the provisional reservation */
	w[1] = aw(100 * MS, 45 * MS, 45 * MS, 45 * MS, 1, 0);
	w[2] = aw(100 * MS, 0, 100 * MS, 20 * MS, -1, 0);
	assert_int_equal(test_n(w, 3, &CPU90, &r), ADM_DEMAND);
	/* a frame of windows at 80 % leaves 10 %: a 10 ms / 200 ms (5 %) one fits in 90..100 */
	w[1] = aw(100 * MS, 45 * MS, 35 * MS, 35 * MS, 1, 0);
	w[2] = aw(200 * MS, 0, 200 * MS, 10 * MS, -1, 0);
	assert_int_equal(test_n(w, 3, &CPU90, &r), ADM_FITS);
	assert_int_equal(r.hyperperiod, 200 * MS);
	w[2].slice = 21 * MS; /* 10.5 %: over the cap */
	assert_int_equal(test_n(w, 3, &CPU90, &r), ADM_UTIL);
}

/* What the CPU gives: the whole CPU over short intervals, cap of the time plus the burst
 * over long ones. */
static void test_cap_semantics(void **state)
{
	struct adm_win w[2];
	struct adm_result r;
	const struct adm_supply speed = {0.9, 0};
	(void)state;

	assert_true(admission_supply(&CPU90, 10 * MS) == 10.0 * MS);
	assert_true(admission_supply(&CPU90, 500 * MS) == 500.0 * MS); /* the knee */
	assert_true(fabs(admission_supply(&CPU90, 950 * MS) - 905.0 * MS) < 1);
	assert_true(fabs(admission_supply(&CPU90, 2000 * MS) - 1850.0 * MS) < 1);
	assert_true(fabs(admission_supply(&speed, 10 * MS) - 9.0 * MS) < 1e-3);
	/* a 9 s job due 10 s after its release every 10 s: fits under cap · 10 s + burst */
	w[0] = aw(10000 * MS, 0, 10000 * MS, 9000 * MS, 0, 0);
	assert_int_equal(test_n(w, 1, &CPU90, &r), ADM_FITS);
	/* due 9 s after it: it would run 9 s on end, the throttle cuts it at 0.95 s per s */
	w[0].deadline = 9000 * MS;
	assert_int_equal(test_n(w, 1, &CPU90, &r), ADM_DEMAND);
	assert_int_equal(r.to - r.from, 9000 * MS);
	assert_true(fabs(r.supply - 8150.0 * MS) < 1);
	/* a 1 s window needing all of it: more than one accounting period's RT budget */
	w[0] = aw(1500 * MS, 0, 1000 * MS, 1000 * MS, 0, 0);
	assert_int_equal(test_n(w, 1, &CPU90, &r), ADM_DEMAND);
	/* long intervals of a short frame: 90 % exactly at the cap is admitted, not rounded
	 * out (its bursts are 9 ms), and the long intervals are checked in closed form */
	w[0] = aw(100 * MS, 0, 45 * MS, 45 * MS, 0, 0);
	w[1] = aw(100 * MS, 45 * MS, 45 * MS, 45 * MS, 1, 0);
	assert_int_equal(test_n(w, 2, &CPU90, &r), ADM_FITS);
	/* a CPU of speed cap (burst 0) refuses a window that needs all of its length */
	assert_int_equal(test_n(w, 1, &speed, &r), ADM_DEMAND);
	w[0].slice = 40 * MS; /* 40 <= 0.9 · 45 */
	assert_int_equal(test_n(w, 1, &speed, &r), ADM_FITS);
}

/* Periods without a short common hyperperiod: the sound test, with clusters. */
static void test_sound_long_hyperperiod(void **state)
{
	struct adm_win w[3];
	struct adm_result r;
	struct adm_limits lim = adm_default_limits;
	(void)state;

	/* two tasks' windows of one 100 ms frame, and a 1 ms / 33.333333 ms task */
	w[0] = aw(100 * MS, 0, 45 * MS, 35 * MS, 0, 0);
	w[1] = aw(100 * MS, 50 * MS, 45 * MS, 35 * MS, 1, 0);
	w[2] = aw(33333333, 0, 33333333, 1 * MS, -1, 0);
	assert_int_equal(test_n(w, 3, &CPU90, &r), ADM_FITS);
	assert_false(r.exact);
	assert_int_equal(r.clusters, 2); /* the frame's windows together, the other alone */
	assert_true(r.checked > 0 && r.checked <= lim.max_points + 100);
	/* full windows leave no room for a job whose deadline can fall inside them */
	w[0].slice = w[0].deadline;
	w[1].slice = w[1].deadline;
	assert_int_equal(test_n(w, 3, &CPU95, &r), ADM_DEMAND);
	assert_false(r.exact);
	assert_true(r.demand > r.supply);
	/* out of points: refused, never guessed */
	lim.max_points = 0;
	assert_int_equal(admission_test(w, 3, &CPU95, &lim, -1, &r), ADM_UNDECIDED);
	/* too much for the cap: refused before any interval */
	w[2].slice = 25 * MS;
	assert_int_equal(test_n(w, 3, &CPU90, &r), ADM_UTIL);
	w[0].slice = w[1].slice = 35 * MS;
	/* at the cap of a CPU without burst, with constrained deadlines: no bound on the
	 * lengths to check (the sound test forced: max_jobs 0) */
	const struct adm_supply speed = {0.9, 0};
	lim = adm_default_limits;
	lim.max_jobs = 0;
	w[0] = aw(100 * MS, 0, 50 * MS, 40 * MS, 0, 0); /* 40 % */
	w[1] = aw(50 * MS, 0, 50 * MS, 25 * MS, 1, 0);  /* 50 % */
	assert_int_equal(admission_test(w, 2, &speed, &lim, -1, &r), ADM_UNDECIDED);
	/* with the burst: decided (when both start together [0, 50] needs 65 ms; QPA walks
	 * down from the longest length and reports [0, 150]: 155 ms) */
	assert_int_equal(admission_test(w, 2, &CPU90, &lim, -1, &r), ADM_DEMAND);
	assert_int_equal(r.to, 150 * MS);
	assert_int_equal(r.demand, 155 * MS);
}

/* The exact test runs while the hyperperiod is short; its cost is bounded by the limits. */
static void test_limits(void **state)
{
	struct adm_win w[65];
	struct adm_result r;
	struct adm_limits lim = adm_default_limits;
	int n = 0;
	(void)state;

	/* 8 tasks x 8 windows of 1 ms (0.5 ms slices) in a 100 ms frame */
	for (int t = 0; t < 8; t++)
		for (int k = 0; k < 8; k++, n++)
			w[n] = aw(100 * MS, (uint64_t)(t * 8 + k) * MS + 20 * MS, 1 * MS, MS / 2, t,
			          k);
	assert_int_equal(test_n(w, n, &CPU90, &r), ADM_FITS);
	assert_true(r.exact);
	/* at most J·(2J + n) intervals, J = 64 jobs in the hyperperiod */
	assert_true(r.checked > 0 && r.checked <= 64 * (2 * 64 + 64));
	/* a 1 ms task beside them: 164 jobs in 100 ms, still exact */
	w[n++] = aw(1 * MS, 0, 1 * MS, 100000, 8, 0);
	assert_int_equal(test_n(w, n, &CPU90, &r), ADM_FITS);
	assert_true(r.exact);
	/* ... unless the limit is lower: then the sound test decides */
	lim.max_jobs = 100;
	assert_int_equal(admission_test(w, n, &CPU90, &lim, -1, &r), ADM_FITS);
	assert_false(r.exact);
	/* the same task at 0.1 ms: 1,064 jobs, past the default limit */
	w[n - 1] = aw(100000, 0, 100000, 10000, 8, 0);
	assert_int_equal(test_n(w, n, &CPU90, &r), ADM_FITS);
	assert_false(r.exact);
}

static void test_invalid(void **state)
{
	struct adm_win w[1];
	struct adm_result r;
	(void)state;

	w[0] = aw(10 * MS, 0, 5 * MS, 6 * MS, 0, 0); /* slice > deadline */
	assert_int_equal(test_n(w, 1, &CPU90, &r), ADM_INVALID);
	w[0] = aw(10 * MS, 0, 11 * MS, 1 * MS, 0, 0); /* deadline > period */
	assert_int_equal(test_n(w, 1, &CPU90, &r), ADM_INVALID);
	w[0] = aw(10 * MS, 10 * MS, 5 * MS, 1 * MS, 0, 0); /* phase >= period */
	assert_int_equal(test_n(w, 1, &CPU90, &r), ADM_INVALID);
	w[0] = aw(0, 0, 0, 0, 0, 0);
	assert_int_equal(test_n(w, 1, &CPU90, &r), ADM_INVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frame_complementary),
	    cmocka_unit_test(test_same_period_exact),
	    cmocka_unit_test(test_mixed_periods_and_wrap),
	    cmocka_unit_test(test_issue14_phase_shifted_reservation),
	    cmocka_unit_test(test_issue14_subframes),
	    cmocka_unit_test(test_issue14_provisional),
	    cmocka_unit_test(test_cap_semantics),
	    cmocka_unit_test(test_sound_long_hyperperiod),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_invalid),
	    cmocka_unit_test(test_density),
	    cmocka_unit_test(test_rt_limit_files),
	    cmocka_unit_test(test_rt_limit_bad_files),
	    cmocka_unit_test(test_rt_limit_this_machine),
	    cmocka_unit_test(test_cap),
	    cmocka_unit_test(test_fits_boundary),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
