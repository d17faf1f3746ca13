/*
 * Unit tests of common/cfgutil.c: loading (parse errors as FILE:LINE), typed getters with
 * ranges, defaults kept for absent keys, error text starting with the key, unknown keys;
 * a key table of every type: defaults from the table, a file parsed over them, refusals
 * naming the key, the normalised print read back to the same values, the key list.
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

/* -n prints numbers as the key tables write their defaults: plain when that reads back. */
static void test_format_double(void **state)
{
	const struct {
		double v;
		const char *text;
	} cases[] = {{100.0, "100.0"}, {0.9, "0.9"},    {0.001, "0.001"}, {123456.0, "123456.0"},
	             {1e-20, "1e-20"}, {1e20, "1e+20"}, {2.5, "2.5"}};
	char buf[64];
	(void)state;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cfg_format_double(cases[i].v, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].text);
		assert_true(strtod(buf, NULL) == cases[i].v);
	}
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

static void test_endpoint(void **state)
{
	char why[256] = "";
	(void)state;

	assert_true(cfg_endpoint_ok("tcp://127.0.0.1:*", true));
	assert_true(cfg_endpoint_ok("ipc:///run/x.sock", false));
	assert_false(cfg_endpoint_ok("ipc:///run/x.sock", true));
	assert_false(cfg_endpoint_ok("tcp://", false));
	assert_false(cfg_endpoint_ok("ipc://", false));
	assert_false(cfg_endpoint_ok("udp://x", false));
	assert_false(cfg_endpoint_ok("", false));
	assert_int_equal(cfg_check_endpoint("ipc:///run/x.sock", why, sizeof(why)), 0);
	assert_int_equal(cfg_check_endpoint("/run/x.sock", why, sizeof(why)), -1);
	assert_string_equal(why, "\"/run/x.sock\" must be a tcp:// or ipc:// endpoint");
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

/* ---- key tables ---- */

struct tconf {
	char name[8];
	uint64_t period;
	double share;
	int count;
	uint64_t bytes;
	bool on;
	uint8_t mode_of_park;
	int rule;
	unsigned perm;
	int custom;
};

static const char *const parks[] = {"stop", "idle", NULL};

static int no_x(const char *v, char *why, size_t whylen)
{
	if (strchr(v, 'x') == NULL)
		return 0;
	snprintf(why, whylen, "\"%s\" has an x", v);
	return -1;
}

static void seven(void *c)
{
	((struct tconf *)c)->custom = 7;
}

static int parse_custom(const config_setting_t *s, void *c, char *why, size_t whylen)
{
	if (config_setting_type(s) != CONFIG_TYPE_INT) {
		snprintf(why, whylen, "custom: not an int");
		return -1;
	}
	((struct tconf *)c)->custom = config_setting_get_int(s);
	return 0;
}

static void print_custom(FILE *f, const void *c)
{
	fprintf(f, "%d", ((const struct tconf *)c)->custom);
}

#define F(m) CFG_FIELD(struct tconf, m)
static const struct cfg_key tkeys[] = {
    {"name", CFG_STRING, F(name), "\"abc\"", 0, 0, NULL, "a name", NULL, NULL, NULL, no_x, NULL,
     NULL},
    {"period", CFG_DURATION, F(period), "\"10ms\"", 1e6, 1e9, NULL, "a period", NULL, NULL, NULL,
     NULL, NULL, NULL},
    {"share", CFG_NUMBER, F(share), "0.25", 0, 1, NULL, "a share", NULL, NULL, NULL, NULL, NULL,
     NULL},
    {"count", CFG_INT, F(count), "3", 1, 9, NULL, "a count", NULL, NULL, NULL, NULL, NULL, NULL},
    {"bytes", CFG_COUNT, F(bytes), "0", 0, 1e12, NULL, "bytes", NULL, NULL, NULL, NULL, NULL, NULL},
    {"on", CFG_BOOL, F(on), "true", 0, 0, NULL, "a switch", NULL, NULL, NULL, NULL, NULL, NULL},
    {"park", CFG_ENUM, F(mode_of_park), "\"idle\"", 0, 0, parks, "a choice", NULL, NULL, NULL, NULL,
     NULL, NULL},
    {"rule", CFG_ENUM, F(rule), "\"stop\"", 0, 0, parks, "an int choice", NULL, NULL, NULL, NULL,
     NULL, NULL},
    {"perm", CFG_MODE, F(perm), "\"0640\"", 0, 0, NULL, "a mode", NULL, NULL, NULL, NULL, NULL,
     NULL},
    {"custom", CFG_CUSTOM, 0, 0, NULL, 0, 0, NULL, "its own", "seven", "any int", seven, NULL,
     parse_custom, print_custom},
    {NULL, CFG_STRING, 0, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};
#undef F

static int tparse(const char *text, struct tconf *c, char *why, size_t whylen)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	memset(c, 0, sizeof(*c));
	cfg_defaults(tkeys, c);
	return cfg_load_file(tkeys, path, c, why, whylen);
}

static void test_key_table(void **state)
{
	struct tconf c, d;
	char why[256] = "", *out = NULL;
	size_t len = 0;
	FILE *f;
	(void)state;

	/* defaults from the table */
	assert_int_equal(tparse("", &c, why, sizeof(why)), 0);
	assert_string_equal(c.name, "abc");
	assert_int_equal(c.period, 10000000);
	assert_true(c.share == 0.25);
	assert_int_equal(c.count, 3);
	assert_true(c.on);
	assert_int_equal(c.mode_of_park, 1);
	assert_int_equal(c.rule, 0);
	assert_int_equal(c.perm, 0640);
	assert_int_equal(c.custom, 7);
	/* a file over them */
	assert_int_equal(tparse("name = \"q\"; share = 1; count = 9; bytes = 2e9; on = false;\n"
	                        "park = \"stop\"; rule = \"idle\"; perm = \"600\"; custom = 5;\n",
	                        &c, why, sizeof(why)),
	                 0);
	assert_true(c.share == 1.0 && c.bytes == 2000000000ull && !c.on && c.custom == 5);
	assert_int_equal(c.perm, 0600);
	/* refusals name the key */
	assert_int_equal(tparse("name = \"xy\";", &d, why, sizeof(why)), -1);
	assert_string_equal(why, "name: \"xy\" has an x");
	assert_int_equal(tparse("count = 10;", &d, why, sizeof(why)), -1);
	starts_with(why, "count: ");
	assert_int_equal(tparse("on = 1;", &d, why, sizeof(why)), -1);
	assert_string_equal(why, "on: must be true or false");
	assert_int_equal(tparse("perm = \"0800\";", &d, why, sizeof(why)), -1);
	starts_with(why, "perm: ");
	assert_int_equal(tparse("custom = \"a\";", &d, why, sizeof(why)), -1);
	assert_string_equal(why, "custom: not an int");
	assert_int_equal(tparse("nope = 1;", &d, why, sizeof(why)), -1);
	assert_string_equal(why, "nope: unknown setting");
	/* the normalised print reads back to the same values */
	f = open_memstream(&out, &len);
	cfg_print(tkeys, &c, f);
	fclose(f);
	assert_string_equal(out, "name = \"q\";\nperiod = \"10ms\";\nshare = 1.0;\ncount = 9;\n"
	                         "bytes = 2000000000;\non = false;\npark = \"stop\";\n"
	                         "rule = \"idle\";\nperm = \"0600\";\ncustom = 5;\n");
	assert_int_equal(tparse(out, &d, why, sizeof(why)), 0);
	assert_memory_equal(&c, &d, sizeof(c));
	free(out);
	/* the key list: name, type, default, range, description */
	out = NULL;
	f = open_memstream(&out, &len);
	cfg_print_keys(tkeys, f);
	fclose(f);
	assert_non_null(strstr(out, "period\tduration\t\"10ms\"\t1ms..1s\ta period\n"));
	assert_non_null(strstr(out, "park\tenum\t\"idle\"\tstop|idle\ta choice\n"));
	assert_non_null(strstr(out, "custom\tlist\t(seven)\tany int\tits own\n"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_load_parse_error_line),
	    cmocka_unit_test(test_load_missing_file),
	    cmocka_unit_test(test_duration),
	    cmocka_unit_test(test_double),
	    cmocka_unit_test(test_format_double),
	    cmocka_unit_test(test_int),
	    cmocka_unit_test(test_string),
	    cmocka_unit_test(test_endpoint),
	    cmocka_unit_test(test_enum),
	    cmocka_unit_test(test_check_keys),
	    cmocka_unit_test(test_why_truncated_safely),
	    cmocka_unit_test(test_key_table),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
