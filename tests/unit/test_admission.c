/*
 * Unit tests of vsched/admission.c: density with deadline < period, the RT throttling
 * limit read from (fake) /proc files, the effective cap and the fits boundary.
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
	(void)state;

	write_file(runtime_path, "950000\n");
	write_file(period_path, "1000000\n");
	assert_int_equal(
	    admission_read_rt_limit(runtime_path, period_path, &limit, why, sizeof(why)), 0);
	assert_true(fabs(limit - 0.95) < 1e-12);

	write_file(runtime_path, "-1\n"); /* throttling off */
	assert_int_equal(
	    admission_read_rt_limit(runtime_path, period_path, &limit, why, sizeof(why)), 0);
	assert_true(limit == 1.0);

	write_file(runtime_path, "500000");
	write_file(period_path, "1000000");
	assert_int_equal(
	    admission_read_rt_limit(runtime_path, period_path, &limit, why, sizeof(why)), 0);
	assert_true(fabs(limit - 0.5) < 1e-12);
}

static void test_rt_limit_bad_files(void **state)
{
	char why[256] = "";
	double limit = 0.42;
	(void)state;

	write_file(period_path, "1000000\n");
	write_file(runtime_path, "lots\n");
	assert_int_equal(
	    admission_read_rt_limit(runtime_path, period_path, &limit, why, sizeof(why)), -1);
	assert_non_null(strstr(why, runtime_path));
	write_file(runtime_path, "-2\n");
	assert_int_equal(
	    admission_read_rt_limit(runtime_path, period_path, &limit, why, sizeof(why)), -1);
	write_file(runtime_path, "950000\n");
	write_file(period_path, "0\n");
	assert_int_equal(
	    admission_read_rt_limit(runtime_path, period_path, &limit, why, sizeof(why)), -1);
	unlink(period_path);
	assert_int_equal(
	    admission_read_rt_limit(runtime_path, period_path, &limit, why, sizeof(why)), -1);
	assert_non_null(strstr(why, period_path));
	assert_true(limit == 0.42); /* unchanged on error */
}

static void test_rt_limit_this_machine(void **state)
{
	char why[256];
	double limit = -1;
	(void)state;
	if (access("/proc/sys/kernel/sched_rt_runtime_us", R_OK) != 0)
		skip();
	assert_int_equal(admission_read_rt_limit(NULL, NULL, &limit, why, sizeof(why)), 0);
	assert_true(limit > 0.0 && limit <= 1.0);
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

static struct adm_win aw(uint64_t T, uint64_t phase, uint64_t len, uint64_t slice, int owner,
                         int idx)
{
	struct adm_win w = {T, slice, len, phase, owner, idx};
	return w;
}

/*
 * Complementary full windows of one 100 ms frame: density would say 4.0, the frame test
 * says they fit (Σ S/T = 0.95). One more ms anywhere does not.
 */
static void test_frame_complementary(void **state)
{
	struct adm_win w[5];
	struct adm_conflict c;
	(void)state;

	w[0] = aw(100 * MS, 0, 30 * MS, 30 * MS, 1, 0);
	w[1] = aw(100 * MS, 50 * MS, 20 * MS, 20 * MS, 1, 1);
	w[2] = aw(100 * MS, 30 * MS, 20 * MS, 20 * MS, -1, 0);
	w[3] = aw(100 * MS, 70 * MS, 25 * MS, 25 * MS, -1, 1);
	assert_int_equal(admission_frame_test(w, 4, 0.95, -1, &c), ADM_FITS);
	assert_true(c.util > 0.949 && c.util < 0.951);
	/* cap below Σ S/T */
	assert_int_equal(admission_frame_test(w, 4, 0.90, -1, &c), ADM_UTIL);
	/* B's second window one ms earlier overlaps A's 50+20 window */
	w[3] = aw(100 * MS, 69 * MS, 25 * MS, 25 * MS, -1, 1);
	assert_int_equal(admission_frame_test(w, 4, 0.95, -1, &c), ADM_DEMAND);
	assert_int_equal(c.a, 3); /* the request's window is named first */
	assert_int_equal(c.b, 1); /* ... and the window it overlaps */
	assert_true(c.demand > c.to - c.from);
	/* a partial window (slice < length) may overlap as long as demand fits */
	w[3] = aw(100 * MS, 60 * MS, 35 * MS, 15 * MS, -1, 1);
	/* [50, 95]: 20 + 15 = 35 <= 45 */
	assert_int_equal(admission_frame_test(w, 4, 0.95, -1, &c), ADM_FITS);
	/* slice 30: [50, 95] needs 50 > 45, and the first interval found is [0, 95]: 100 */
	w[3] = aw(100 * MS, 60 * MS, 35 * MS, 30 * MS, -1, 1);
	assert_int_equal(admission_frame_test(w, 4, 2.0, -1, &c), ADM_DEMAND);
	assert_int_equal(c.from, 0);
	assert_int_equal(c.to, 95 * MS);
	assert_int_equal(c.demand, 100 * MS);
	assert_int_equal(c.a, 3);
	assert_int_equal(c.b, 1);
}

/* The same-period exact case that density refuses: D < T tasks with disjoint phases. */
static void test_frame_same_period_exact(void **state)
{
	struct adm_win w[3];
	struct adm_conflict c;
	(void)state;

	/* three tasks, 10 ms period, each 3 ms in its own 3 ms window: density 3.0 */
	for (int i = 0; i < 3; i++)
		w[i] = aw(10 * MS, (uint64_t)i * 3 * MS, 3 * MS, 3 * MS, i, 0);
	assert_int_equal(admission_frame_test(w, 3, 0.95, -1, &c), ADM_FITS);
	/* a full-period task (phase 0, D = T) beside them: [0, 10]: 9 + 1 <= 10 */
	struct adm_win x[4] = {w[0], w[1], w[2], aw(10 * MS, 0, 10 * MS, 1 * MS, 3, 0)};
	assert_int_equal(admission_frame_test(x, 4, 1.0, -1, &c), ADM_FITS);
	x[3].slice = 1 * MS + 1; /* one ns too many in the whole frame */
	assert_int_equal(admission_frame_test(x, 4, 1.0, -1, &c), ADM_DEMAND);
	assert_int_equal(c.from, 0);
	assert_int_equal(c.to, 10 * MS);
	/* all in phase 0: exactly the density test */
	for (int i = 0; i < 3; i++)
		w[i] = aw(10 * MS, 0, 4 * MS, 1 * MS, i, 0);
	assert_int_equal(admission_frame_test(w, 3, 1.0, -1, &c), ADM_FITS);
	w[2].slice = 2 * MS + 1;
	assert_int_equal(admission_frame_test(w, 3, 1.0, -1, &c), ADM_DEMAND);
}

/* Different periods or a window past the frame end: the test does not apply. */
static void test_frame_not_applicable(void **state)
{
	struct adm_win w[2];
	struct adm_conflict c;
	(void)state;

	w[0] = aw(100 * MS, 0, 30 * MS, 30 * MS, 0, 0);
	w[1] = aw(50 * MS, 30 * MS, 20 * MS, 20 * MS, 1, 0);
	assert_int_equal(admission_frame_test(w, 2, 1.0, -1, &c), ADM_NA);
	w[1] = aw(100 * MS, 80 * MS, 30 * MS, 10 * MS, 1, 0); /* wraps past 100 ms */
	assert_int_equal(admission_frame_test(w, 2, 1.0, -1, &c), ADM_NA);
	assert_int_equal(admission_frame_test(w, 0, 1.0, -1, &c), ADM_FITS);
	struct vsp_resv r[2] = {{100 * MS, 30 * MS, 30 * MS, 0},
	                        {100 * MS, 20 * MS, 40 * MS, 50 * MS}};
	assert_true(admission_density_n(r, 2) > 1.49 && admission_density_n(r, 2) < 1.51);
	assert_true(admission_util_n(r, 2) > 0.49 && admission_util_n(r, 2) < 0.51);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frame_complementary),
	    cmocka_unit_test(test_frame_same_period_exact),
	    cmocka_unit_test(test_frame_not_applicable),
	    cmocka_unit_test(test_density),
	    cmocka_unit_test(test_rt_limit_files),
	    cmocka_unit_test(test_rt_limit_bad_files),
	    cmocka_unit_test(test_rt_limit_this_machine),
	    cmocka_unit_test(test_cap),
	    cmocka_unit_test(test_fits_boundary),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
