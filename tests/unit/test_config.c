/*
 * Unit tests of vsched/config.c: defaults, every key's bad values refused with the key
 * named, unknown keys refused, print -> load round trip, and the shipped
 * configs/vsched.conf (found relative to this source file) loads.
 */
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

static char dir[64];
static char path[128], path2[128];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/vs_config_XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/a.conf", dir);
	snprintf(path2, sizeof(path2), "%s/b.conf", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	unlink(path2);
	rmdir(dir);
	return 0;
}

static void write_file(const char *p, const char *text)
{
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* Loads text; returns config_load's result, why filled. */
static int load_text(const char *text, struct vsched_config *cfg, char *why, size_t len)
{
	write_file(path, text);
	return config_load(path, cfg, why, len);
}

/* Field by field: padding bytes are not part of the configuration. */
static void assert_config_equal(const struct vsched_config *a, const struct vsched_config *b)
{
	assert_int_equal(a->ncpus, b->ncpus);
	assert_memory_equal(a->cpus, b->cpus, (size_t)a->ncpus * sizeof(a->cpus[0]));
	assert_true(a->utilization_cap == b->utilization_cap);
	assert_true(a->reserve == b->reserve);
	assert_int_equal(a->min_period, b->min_period);
	assert_int_equal(a->min_slice, b->min_slice);
	assert_int_equal(a->park, b->park);
	assert_int_equal(a->placement, b->placement);
	assert_int_equal(a->max_tasks, b->max_tasks);
	assert_string_equal(a->endpoint, b->endpoint);
	assert_int_equal(a->endpoint_mode, b->endpoint_mode);
}

static int online_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > VS_MAX_CPUS ? VS_MAX_CPUS : (int)n;
}

static void test_defaults(void **state)
{
	struct vsched_config c;
	(void)state;

	config_defaults(&c);
	assert_true(c.ncpus >= 1);
	assert_int_equal(c.ncpus, online_count());
	for (int i = 1; i < c.ncpus; i++)
		assert_true(c.cpus[i] > c.cpus[i - 1]);
	assert_true(c.utilization_cap == 0.9);
	assert_true(c.reserve == 0.05);
	assert_int_equal(c.min_period, 1000000);
	assert_int_equal(c.min_slice, 50000);
	assert_int_equal(c.park, VSP_PARK_STOP);
	assert_int_equal(c.placement, PLACE_WORST_FIT);
	assert_string_equal(c.endpoint, "ipc:///run/vsched/api.sock");
	assert_int_equal(c.endpoint_mode, 0600);
	assert_int_equal(c.max_tasks, 256);
}

static void test_empty_file_gives_defaults(void **state)
{
	struct vsched_config c, d;
	char why[256] = "";
	(void)state;

	memset(&c, 0x5a, sizeof(c));
	assert_int_equal(load_text("# nothing\n", &c, why, sizeof(why)), 0);
	config_defaults(&d);
	assert_config_equal(&c, &d);
}

static void test_all_keys(void **state)
{
	struct vsched_config c;
	char why[256] = "";
	(void)state;

	assert_int_equal(load_text("cpus = [ 0 ];\nutilization_cap = 0.75;\nreserve = 0;\n"
	                           "min_period = \"500us\";\nmin_slice = \"20us\";\n"
	                           "park = \"idle\";\nplacement = \"first-fit\";\n"
	                           "endpoint = \"ipc:///tmp/x.sock\";\nendpoint_mode = \"0660\";\n"
	                           "max_tasks = 4096;\nstop_method = \"signal\";\n"
	                           "perf_events = \"off\";\nselftest = \"off\";\n",
	                           &c, why, sizeof(why)),
	                 0);
	assert_int_equal(c.ncpus, 1);
	assert_int_equal(c.cpus[0], 0);
	assert_true(c.utilization_cap == 0.75);
	assert_true(c.reserve == 0.0);
	assert_int_equal(c.min_period, 500000);
	assert_int_equal(c.min_slice, 20000);
	assert_int_equal(c.park, VSP_PARK_IDLE);
	assert_int_equal(c.placement, PLACE_FIRST_FIT);
	assert_string_equal(c.endpoint, "ipc:///tmp/x.sock");
	assert_int_equal(c.endpoint_mode, 0660);
	assert_int_equal(c.max_tasks, 4096);
	assert_int_equal(c.stop_method, STOP_SIGNAL);
	assert_false(c.perf_events);
	assert_false(c.selftest_at_start);
}

static void test_cpus_sorted(void **state)
{
	struct vsched_config c;
	char why[256] = "";
	(void)state;
	if (online_count() < 2)
		skip();
	assert_int_equal(load_text("cpus = ( 1, 0 );\n", &c, why, sizeof(why)), 0);
	assert_int_equal(c.ncpus, 2);
	assert_int_equal(c.cpus[0], 0);
	assert_int_equal(c.cpus[1], 1);
}

struct bad {
	const char *text;
	const char *key; /* why must start with "key:" */
};

static void test_bad_values_refused(void **state)
{
	static const struct bad bad[] = {
	    {"cpus = [];", "cpus"},
	    {"cpus = [ 0, 0 ];", "cpus"},
	    {"cpus = [ -1 ];", "cpus"},
	    {"cpus = [ 64 ];", "cpus"},
	    {"cpus = [ 63 ];", "cpus"}, /* not online on any test machine we have */
	    {"cpus = 0;", "cpus"},
	    {"cpus = [ \"0\" ];", "cpus"},
	    {"cpus = { a = 1; };", "cpus"},
	    {"utilization_cap = 0;", "utilization_cap"},
	    {"utilization_cap = 0.0;", "utilization_cap"},
	    {"utilization_cap = 1.01;", "utilization_cap"},
	    {"utilization_cap = -0.5;", "utilization_cap"},
	    {"utilization_cap = \"0.5\";", "utilization_cap"},
	    {"reserve = 0.51;", "reserve"},
	    {"reserve = -0.01;", "reserve"},
	    {"min_period = \"9us\";", "min_period"},
	    {"min_period = \"2d\";", "min_period"},
	    {"min_period = \"1\";", "min_period"},
	    {"min_period = 1000;", "min_period"},
	    {"min_slice = \"0ns\";", "min_slice"},
	    {"min_slice = \"fast\";", "min_slice"},
	    {"park = \"sleep\";", "park"},
	    {"park = 0;", "park"},
	    {"placement = \"best-fit\";", "placement"},
	    {"stop_method = \"sigstop\";", "stop_method"},
	    {"stop_method = 1;", "stop_method"},
	    {"perf_events = \"on\";", "perf_events"},
	    {"selftest = true;", "selftest"},
	    {"endpoint = \"\";", "endpoint"},
	    {"endpoint = \"api.sock\";", "endpoint"},
	    {"endpoint = 5;", "endpoint"},
	    {"endpoint_mode = \"0800\";", "endpoint_mode"},
	    {"endpoint_mode = \"1777\";", "endpoint_mode"},
	    {"endpoint_mode = \"\";", "endpoint_mode"},
	    {"endpoint_mode = 600;", "endpoint_mode"},
	    {"endpoint_mode = \"rw\";", "endpoint_mode"},
	    {"max_tasks = 0;", "max_tasks"},
	    {"max_tasks = 4097;", "max_tasks"},
	    {"max_tasks = 10.0;", "max_tasks"},
	    {"utilisation_cap = 0.5;", "utilisation_cap"}, /* unknown key */
	    {"extra = 1;", "extra"},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct vsched_config c;
		char why[512] = "", prefix[64];

		config_defaults(&c);
		c.max_tasks = 12345; /* marker: unchanged on error */
		if (load_text(bad[i].text, &c, why, sizeof(why)) != -1)
			fail_msg("accepted: %s", bad[i].text);
		snprintf(prefix, sizeof(prefix), "%s: ", bad[i].key);
		if (strncmp(why, prefix, strlen(prefix)) != 0)
			fail_msg("%s -> \"%s\" does not name the key", bad[i].text, why);
		assert_int_equal(c.max_tasks, 12345);
	}
}

static void test_long_endpoint_refused(void **state)
{
	struct vsched_config c;
	char text[600], why[512] = "";
	(void)state;

	snprintf(text, sizeof(text), "endpoint = \"ipc:///%0300d\";\n", 0);
	assert_int_equal(load_text(text, &c, why, sizeof(why)), -1);
	assert_int_equal(strncmp(why, "endpoint: ", 10), 0);
}

static void test_syntax_error_names_line(void **state)
{
	struct vsched_config c;
	char why[512] = "", want[200];
	(void)state;

	assert_int_equal(load_text("reserve = 0.1;\nmax_tasks = ;\n", &c, why, sizeof(why)), -1);
	snprintf(want, sizeof(want), "%s:2: ", path);
	assert_int_equal(strncmp(why, want, strlen(want)), 0);
}

/* Prints c into path2, loads it back and compares. */
static void round_trip(const struct vsched_config *c)
{
	struct vsched_config back;
	char why[512] = "";
	FILE *f = fopen(path2, "w");

	assert_non_null(f);
	config_print(f, c);
	fclose(f);
	memset(&back, 0x77, sizeof(back));
	if (config_load(path2, &back, why, sizeof(why)) != 0)
		fail_msg("printed config refused: %s", why);
	assert_config_equal(&back, c);
}

static void test_print_round_trip(void **state)
{
	struct vsched_config c;
	char why[512] = "";
	(void)state;

	config_defaults(&c);
	round_trip(&c);
	assert_int_equal(load_text("cpus = [ 0 ];\nutilization_cap = 0.123456789;\n"
	                           "reserve = 0.00001;\nmin_period = \"1.5ms\";\n"
	                           "min_slice = \"1001ns\";\npark = \"idle\";\n"
	                           "placement = \"first-fit\";\n"
	                           "endpoint = \"tcp://127.0.0.1:5555\";\n"
	                           "endpoint_mode = \"0\";\nmax_tasks = 1;\n",
	                           &c, why, sizeof(why)),
	                 0);
	round_trip(&c);
	assert_int_equal(load_text("utilization_cap = 1;\nmin_period = \"1d\";\n"
	                           "min_slice = \"90s\";\n"
	                           "endpoint = \"ipc:///tmp/we \\\"ird\\\\ name\";\n",
	                           &c, why, sizeof(why)),
	                 0);
	assert_string_equal(c.endpoint, "ipc:///tmp/we \"ird\\ name");
	round_trip(&c);
}

static void test_print_text(void **state)
{
	struct vsched_config c;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	(void)state;

	assert_non_null(f);
	config_defaults(&c);
	c.ncpus = 2;
	c.cpus[0] = 0;
	c.cpus[1] = 1;
	config_print(f, &c);
	fclose(f);
	assert_string_equal(buf, "cpus = [ 0, 1 ];\n"
	                         "utilization_cap = 0.9;\n"
	                         "reserve = 0.05;\n"
	                         "min_period = \"1ms\";\n"
	                         "min_slice = \"50us\";\n"
	                         "park = \"stop\";\n"
	                         "placement = \"worst-fit\";\n"
	                         "endpoint = \"ipc:///run/vsched/api.sock\";\n"
	                         "endpoint_mode = \"0600\";\n"
	                         "max_tasks = 256;\n"
	                         "stop_method = \"auto\";\n"
	                         "perf_events = \"auto\";\n"
	                         "selftest = \"start\";\n");
	free(buf);
}

static void test_shipped_config_loads(void **state)
{
	char shipped[512], why[512] = "";
	struct vsched_config c, d;
	const char *slash;
	(void)state;

	/* __FILE__ is .../tests/unit/test_config.c; the config is .../configs/vsched.conf */
	slash = strstr(__FILE__, "tests/unit/test_config.c");
	assert_non_null(slash);
	snprintf(shipped, sizeof(shipped), "%.*sconfigs/vsched.conf", (int)(slash - __FILE__),
	         __FILE__);
	assert_int_equal(access(shipped, R_OK), 0);
	if (config_load(shipped, &c, why, sizeof(why)) != 0)
		fail_msg("%s", why);
	/* it documents the defaults */
	config_defaults(&d);
	assert_config_equal(&c, &d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_empty_file_gives_defaults),
	    cmocka_unit_test(test_all_keys),
	    cmocka_unit_test(test_cpus_sorted),
	    cmocka_unit_test(test_bad_values_refused),
	    cmocka_unit_test(test_long_endpoint_refused),
	    cmocka_unit_test(test_syntax_error_names_line),
	    cmocka_unit_test(test_print_round_trip),
	    cmocka_unit_test(test_print_text),
	    cmocka_unit_test(test_shipped_config_loads),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
