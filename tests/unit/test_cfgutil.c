/*
 * Unit tests of common/cfgutil.c: loading (parse errors as FILE:LINE), typed getters with
 * ranges, defaults kept for absent keys, error text starting with the key, unknown keys.
 * Config files are written into a mkdtemp directory.
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

#include "cfgutil.h"

static char dir[64];
static char path[128];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/vs_cfgutil_XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/test.conf", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	rmdir(dir);
	return 0;
}

/* Writes text to the temp file and loads it; asserts success. */
static void load_text(config_t *cfg, const char *text)
{
	char why[256] = "";
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	if (cfg_load(cfg, path, why, sizeof(why)) != 0)
		fail_msg("load failed: %s", why);
}

static void starts_with(const char *s, const char *prefix)
{
	if (strncmp(s, prefix, strlen(prefix)) != 0)
		fail_msg("\"%s\" does not start with \"%s\"", s, prefix);
}

static void test_load_parse_error_line(void **state)
{
	char why[256] = "", want[200];
	config_t cfg;
	FILE *f = fopen(path, "w");
	(void)state;

	assert_non_null(f);
	fputs("a = 1;\nb = 2;\nc = = 3;\n", f);
	fclose(f);
	assert_int_equal(cfg_load(&cfg, path, why, sizeof(why)), -1);
	snprintf(want, sizeof(want), "%s:3: ", path);
	starts_with(why, want);
	config_destroy(&cfg); /* harmless after a failed load */
}

static void test_load_missing_file(void **state)
{
	char why[256] = "", missing[160];
	config_t cfg;
	(void)state;
	snprintf(missing, sizeof(missing), "%s/nope.conf", dir);
	assert_int_equal(cfg_load(&cfg, missing, why, sizeof(why)), -1);
	starts_with(why, missing);
	assert_non_null(strstr(why, "No such file"));
}

static void test_duration(void **state)
{
	config_t cfg;
	char why[256] = "";
	uint64_t v = 777;
	(void)state;

	load_text(&cfg, "p = \"10ms\";\nbig = \"2d\";\nnum = 10;\nbad = \"10\";\n"
	                "neg = \"-1ms\";\nhuge = \"99999999999d\";\n");
	assert_int_equal(cfg_get_duration(&cfg, "p", 1000, 86400000000000ULL, &v, why, sizeof(why)),
	                 0);
	assert_int_equal(v, 10000000);
	v = 777;
	assert_int_equal(cfg_get_duration(&cfg, "absent", 0, 10, &v, why, sizeof(why)), 0);
	assert_int_equal(v, 777); /* default kept */
	assert_int_equal(
	    cfg_get_duration(&cfg, "big", 1000, 86400000000000ULL, &v, why, sizeof(why)), -1);
	starts_with(why, "big: ");
	assert_non_null(strstr(why, "1d")); /* the range in units */
	assert_int_equal(v, 777);
	assert_int_equal(cfg_get_duration(&cfg, "p", 11000000, 20000000, &v, why, sizeof(why)), -1);
	starts_with(why, "p: must be between 11ms and 20ms");
	assert_int_equal(cfg_get_duration(&cfg, "num", 0, UINT64_MAX, &v, why, sizeof(why)), -1);
	starts_with(why, "num: ");
	assert_int_equal(cfg_get_duration(&cfg, "bad", 0, UINT64_MAX, &v, why, sizeof(why)), -1);
	starts_with(why, "bad: ");
	assert_int_equal(cfg_get_duration(&cfg, "neg", 0, UINT64_MAX, &v, why, sizeof(why)), -1);
	starts_with(why, "neg: ");
	assert_int_equal(cfg_get_duration(&cfg, "huge", 0, UINT64_MAX, &v, why, sizeof(why)), -1);
	starts_with(why, "huge: ");
	assert_int_equal(v, 777);
	config_destroy(&cfg);
}

static void test_double(void **state)
{
	config_t cfg;
	char why[256] = "";
	double d = -7;
	(void)state;

	load_text(&cfg, "f = 0.25;\ni = 1;\ns = \"0.5\";\nbig = 1.5;\n");
	assert_int_equal(cfg_get_double(&cfg, "f", 0, 1, &d, why, sizeof(why)), 0);
	assert_true(d == 0.25);
	assert_int_equal(cfg_get_double(&cfg, "i", 0, 1, &d, why, sizeof(why)), 0);
	assert_true(d == 1.0); /* integers are numbers too; max inclusive */
	d = -7;
	assert_int_equal(cfg_get_double(&cfg, "s", 0, 1, &d, why, sizeof(why)), -1);
	starts_with(why, "s: ");
	assert_int_equal(cfg_get_double(&cfg, "big", 0, 1, &d, why, sizeof(why)), -1);
	starts_with(why, "big: must be in [0, 1]");
	assert_true(d == -7);
	assert_int_equal(cfg_get_double(&cfg, "none", 0, 1, &d, why, sizeof(why)), 0);
	assert_true(d == -7);
	config_destroy(&cfg);
}

static void test_int(void **state)
{
	config_t cfg;
	char why[256] = "";
	long long v = 5;
	(void)state;

	load_text(&cfg, "n = 4096;\nbig = 10000000000L;\nf = 1.0;\nneg = -3;\n");
	assert_int_equal(cfg_get_int(&cfg, "n", 1, 4096, &v, why, sizeof(why)), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(cfg_get_int(&cfg, "big", 0, 20000000000LL, &v, why, sizeof(why)), 0);
	assert_int_equal(v, 10000000000LL);
	v = 5;
	assert_int_equal(cfg_get_int(&cfg, "n", 1, 4095, &v, why, sizeof(why)), -1);
	starts_with(why, "n: must be in [1, 4095]");
	assert_int_equal(cfg_get_int(&cfg, "f", 0, 10, &v, why, sizeof(why)), -1);
	starts_with(why, "f: must be an integer");
	assert_int_equal(cfg_get_int(&cfg, "neg", 0, 10, &v, why, sizeof(why)), -1);
	starts_with(why, "neg: ");
	assert_int_equal(v, 5);
	config_destroy(&cfg);
}

static void test_string(void **state)
{
	config_t cfg;
	char why[256] = "", out[8] = "dflt";
	(void)state;

	load_text(&cfg, "s = \"abcdefg\";\nlong = \"abcdefgh\";\nnum = 3;\n");
	assert_int_equal(cfg_get_string(&cfg, "s", out, sizeof(out), why, sizeof(why)), 0);
	assert_string_equal(out, "abcdefg"); /* 7 bytes + NUL fit in 8 */
	strcpy(out, "dflt");
	assert_int_equal(cfg_get_string(&cfg, "long", out, sizeof(out), why, sizeof(why)), -1);
	starts_with(why, "long: too long");
	assert_int_equal(cfg_get_string(&cfg, "num", out, sizeof(out), why, sizeof(why)), -1);
	starts_with(why, "num: must be a string");
	assert_int_equal(cfg_get_string(&cfg, "none", out, sizeof(out), why, sizeof(why)), 0);
	assert_string_equal(out, "dflt");
	config_destroy(&cfg);
}

static void test_enum(void **state)
{
	static const char *const choices[] = {"stop", "idle", NULL};
	config_t cfg;
	char why[256] = "";
	int idx = -1;
	(void)state;

	load_text(&cfg, "a = \"idle\";\nb = \"Idle\";\nc = 1;\n");
	assert_int_equal(cfg_get_enum(&cfg, "a", choices, &idx, why, sizeof(why)), 0);
	assert_int_equal(idx, 1);
	idx = 9;
	assert_int_equal(cfg_get_enum(&cfg, "b", choices, &idx, why, sizeof(why)), -1);
	assert_string_equal(why, "b: must be one of \"stop\", \"idle\"");
	assert_int_equal(cfg_get_enum(&cfg, "c", choices, &idx, why, sizeof(why)), -1);
	starts_with(why, "c: ");
	assert_int_equal(cfg_get_enum(&cfg, "none", choices, &idx, why, sizeof(why)), 0);
	assert_int_equal(idx, 9);
	config_destroy(&cfg);
}

static void test_check_keys(void **state)
{
	static const char *const known[] = {"utilization_cap", "reserve", NULL};
	config_t cfg;
	char why[256] = "";
	(void)state;

	load_text(&cfg, "utilization_cap = 0.5;\nreserve = 0.1;\n");
	assert_int_equal(cfg_check_keys(&cfg, known, why, sizeof(why)), 0);
	config_destroy(&cfg);
	load_text(&cfg, "utilization_cap = 0.5;\nutilisation_cap = 0.5;\n");
	assert_int_equal(cfg_check_keys(&cfg, known, why, sizeof(why)), -1);
	assert_string_equal(why, "utilisation_cap: unknown setting");
	config_destroy(&cfg);
	load_text(&cfg, "");
	assert_int_equal(cfg_check_keys(&cfg, known, why, sizeof(why)), 0);
	config_destroy(&cfg);
}

static void test_why_truncated_safely(void **state)
{
	config_t cfg;
	char why[6];
	double d;
	(void)state;
	load_text(&cfg, "some_long_key = 5.0;\n");
	memset(why, 'x', sizeof(why));
	assert_int_equal(cfg_get_double(&cfg, "some_long_key", 0, 1, &d, why, sizeof(why)), -1);
	assert_string_equal(why, "some_");
	config_destroy(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_load_parse_error_line),
	    cmocka_unit_test(test_load_missing_file),
	    cmocka_unit_test(test_duration),
	    cmocka_unit_test(test_double),
	    cmocka_unit_test(test_int),
	    cmocka_unit_test(test_string),
	    cmocka_unit_test(test_enum),
	    cmocka_unit_test(test_check_keys),
	    cmocka_unit_test(test_why_truncated_safely),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
