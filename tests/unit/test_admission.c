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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_density),
	    cmocka_unit_test(test_rt_limit_files),
	    cmocka_unit_test(test_rt_limit_bad_files),
	    cmocka_unit_test(test_rt_limit_this_machine),
	    cmocka_unit_test(test_cap),
	    cmocka_unit_test(test_fits_boundary),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
