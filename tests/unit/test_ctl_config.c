/*
 * Unit tests of the controller's configuration (controller/config.c), the coschedule keys
 * (docs/coschedule.md): defaults, a valid set loaded and printed back, every bad value
 * refused with the key's name and a reason, and the shipped configs/controller.conf loads.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "controller.h"

static char path[64];

static int load(const char *text, struct ctld_config *c, char *why, size_t whylen)
{
	FILE *f;

	strcpy(path, "/tmp/ctl_config_XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	ctld_config_defaults(c);
	int rc = ctld_config_load(path, c, why, whylen);
	unlink(path);
	return rc;
}

static void test_defaults(void **state)
{
	(void)state;
	struct ctld_config c;

	ctld_config_defaults(&c);
	assert_false(c.cs.on);
	assert_int_equal(c.cs.frame, 100 * NSEC_PER_MSEC);
	assert_int_equal(c.cs.slot, 5 * NSEC_PER_MSEC);
	assert_int_equal(c.cs.pairing, FIT_PAIR_FITNESS);
	assert_true(c.cs.align);
	assert_int_equal(c.cs.mem_cap, 0);
}

/* The per-job defaults of the key table are the control library's. */
static void test_defaults_are_the_control_library_s(void **state)
{
	struct ctld_config c;
	struct control_params p;
	(void)state;

	ctld_config_defaults(&c);
	control_params_default(&p);
	assert_int_equal(c.job.algo, p.algo);
	assert_int_equal(c.job.agg, p.agg);
	assert_int_equal(c.calib, p.calib);
	assert_true(c.job.eps_pct == p.epsilon_pct);
	assert_true(c.job.r_max == p.r_max);
	assert_false(c.job.r_max_given);
	assert_int_equal(c.job.delta_period, p.delta_period_ns);
	assert_int_equal(c.job.min_period, p.min_period_ns);
	assert_int_equal(c.job.min_slice, p.min_slice_ns);
	assert_int_equal(c.job.initial_period, p.initial_period_ns);
}

static void test_valid(void **state)
{
	(void)state;
	struct ctld_config c;
	char why[256] = "", out[4096];
	FILE *f = fmemopen(out, sizeof(out), "w");

	assert_int_equal(
	    load("coschedule = true; frame = \"200ms\"; slot = \"10ms\";\n"
	         "bw_window = \"1s\"; node_mem_capacity = 12e9;\n"
	         "node_net_capacity = 1250000000; pairing = \"worst\"; align = false;\n",
	         &c, why, sizeof(why)),
	    0);
	assert_true(c.cs.on);
	assert_int_equal(c.cs.frame, 200 * NSEC_PER_MSEC);
	assert_int_equal(c.cs.slot, 10 * NSEC_PER_MSEC);
	assert_int_equal(c.cs.bw_window, NSEC_PER_SEC);
	assert_int_equal(c.cs.mem_cap, 12000000000ull);
	assert_int_equal(c.cs.net_cap, 1250000000ull);
	assert_int_equal(c.cs.pairing, FIT_PAIR_WORST);
	assert_false(c.cs.align);
	ctld_config_print(f, &c);
	fclose(f);
	assert_non_null(strstr(out, "coschedule = true;"));
	assert_non_null(strstr(out, "pairing = \"worst\";"));
	assert_non_null(strstr(out, "node_mem_capacity = 12000000000;"));
	assert_non_null(strstr(out, "align = false;"));
}

static void test_refused(void **state)
{
	(void)state;
	static const struct {
		const char *text, *key;
	} bad[] = {
	    {"coschedule = 1;", "coschedule"},
	    {"align = \"yes\";", "align"},
	    {"slot = \"7ms\";", "slot"},                  /* does not divide 100 ms */
	    {"slot = \"200ms\";", "slot"},                /* longer than the frame */
	    {"frame = \"10s\"; slot = \"1ms\";", "slot"}, /* 10,000 slots */
	    {"slot = \"10us\";", "slot"},                 /* below 100 us */
	    {"frame = \"0ms\";", "frame"},
	    {"bw_window = \"1ms\";", "bw_window"},
	    {"node_mem_capacity = -1;", "node_mem_capacity"},
	    {"node_net_capacity = \"fast\";", "node_net_capacity"},
	    {"pairing = \"best\";", "pairing"},
	    {"cosched = true;", "cosched"}, /* unknown key */
	};
	struct ctld_config c;
	char why[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		assert_int_equal(load(bad[i].text, &c, why, sizeof(why)), -1);
		if (strstr(why, bad[i].key) == NULL)
			fail_msg("\"%s\": reason \"%s\" does not name %s", bad[i].text, why,
			         bad[i].key);
		assert_null(strchr(why, '\n'));
	}
}

static void test_shipped(void **state)
{
	(void)state;
	struct ctld_config c;
	char why[256] = "";

	ctld_config_defaults(&c);
	assert_int_equal(
	    ctld_config_load(VS_SRC_DIR "/configs/controller.conf", &c, why, sizeof(why)), 0);
	assert_false(c.cs.on);
}

/* Co-scheduling: the control loop starts at the frame, or at a job's initial period finer
 * than the frame and coarser than the finest sub-frame (frame / 8 here, 12.5 ms). */
static void test_cosched_initial_period(void **state)
{
	static const struct {
		mono_ns initial, want;
	} cases[] = {
	    {200 * NSEC_PER_MSEC, 100 * NSEC_PER_MSEC}, /* coarser than the frame: the frame */
	    {100 * NSEC_PER_MSEC, 100 * NSEC_PER_MSEC},
	    {25 * NSEC_PER_MSEC, 25 * NSEC_PER_MSEC}, /* 4 window-sets per frame */
	    {13 * NSEC_PER_MSEC, 13 * NSEC_PER_MSEC},
	    {12500 * NSEC_PER_USEC, 100 * NSEC_PER_MSEC}, /* the finest sub-frame: no room below */
	    {5 * NSEC_PER_MSEC, 100 * NSEC_PER_MSEC},
	};
	struct ctld_config c;
	struct control_params p;
	(void)state;

	ctld_config_defaults(&c);
	c.cs.on = true;
	c.cs.frame = 100 * NSEC_PER_MSEC;
	c.cs.slot = 5 * NSEC_PER_MSEC;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		c.job.initial_period = cases[i].initial;
		settings_control_params(&c, &c.job, 40.0, &p);
		assert_int_equal(p.min_period_ns, 12500 * NSEC_PER_USEC);
		assert_int_equal(p.initial_period_ns, cases[i].want);
		assert_int_equal(control_params_check(&p), 0);
	}
	/* off: the job's own initial period */
	c.cs.on = false;
	c.job.initial_period = 25 * NSEC_PER_MSEC;
	settings_control_params(&c, &c.job, 40.0, &p);
	assert_int_equal(p.initial_period_ns, 25 * NSEC_PER_MSEC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_defaults_are_the_control_library_s),
	    cmocka_unit_test(test_valid),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_shipped),
	    cmocka_unit_test(test_cosched_initial_period),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
