/* Unit tests of common/duration.c: parsing with mandatory units, rounding, refusals. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "duration.h"

static uint64_t parse_ok(const char *s)
{
	uint64_t v = 0xdeadbeef;
	assert_int_equal(duration_parse(s, &v), 0);
	return v;
}

static void test_units(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("7ns"), 7);
	assert_int_equal(parse_ok("250us"), 250000);
	assert_int_equal(parse_ok("10ms"), 10000000);
	assert_int_equal(parse_ok("2s"), 2000000000ULL);
	assert_int_equal(parse_ok("3m"), 180000000000ULL);
	assert_int_equal(parse_ok("1h"), 3600000000000ULL);
	assert_int_equal(parse_ok("2d"), 172800000000000ULL);
	assert_int_equal(parse_ok("0ns"), 0);
	assert_int_equal(parse_ok("0d"), 0);
	assert_int_equal(parse_ok("007ms"), 7000000);
}

static void test_decimals(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("1.5ms"), 1500000);
	assert_int_equal(parse_ok("0.25s"), 250000000);
	assert_int_equal(parse_ok("1.001us"), 1001);
	assert_int_equal(parse_ok("1.5d"), 129600000000000ULL);
	/* rounding to the nearest ns, halves up */
	assert_int_equal(parse_ok("0.4ns"), 0);
	assert_int_equal(parse_ok("0.5ns"), 1);
	assert_int_equal(parse_ok("1.0004us"), 1000);
	assert_int_equal(parse_ok("1.0005us"), 1001);
	/* more fraction digits than matter */
	assert_int_equal(parse_ok("0.1234567890123456789012s"), 123456789);
}

static void refused(const char *s, int err)
{
	uint64_t v = 42;
	assert_int_equal(duration_parse(s, &v), err);
	assert_int_equal(v, 42); /* unchanged on error */
}

static void test_refused(void **state)
{
	(void)state;
	refused("", -EINVAL);
	refused("10", -EINVAL);   /* no unit */
	refused("ms", -EINVAL);   /* no number */
	refused("-1ms", -EINVAL); /* sign */
	refused("+1ms", -EINVAL);
	refused(" 1ms", -EINVAL); /* spaces */
	refused("1 ms", -EINVAL);
	refused("1ms ", -EINVAL);
	refused("1msx", -EINVAL); /* trailing */
	refused("1MS", -EINVAL);  /* unit is case-sensitive */
	refused("1sec", -EINVAL); /* unknown unit */
	refused("1.ms", -EINVAL); /* dot without digits */
	refused(".5ms", -EINVAL);
	refused("1.5.2ms", -EINVAL);
	refused("1e3ms", -EINVAL); /* no exponent */
	refused("0x10ms", -EINVAL);
	assert_int_equal(duration_parse(NULL, &(uint64_t){0}), -EINVAL);
}

static void test_range(void **state)
{
	(void)state;
	assert_int_equal(parse_ok("18446744073709551615ns"), UINT64_MAX);
	refused("18446744073709551616ns", -ERANGE);
	refused("99999999999999999999999ns", -ERANGE);
	refused("213504d", -ERANGE); /* 213504 days > 2^64 ns */
	assert_int_equal(parse_ok("213503d"), 213503ULL * 86400000000000ULL);
	refused("18446744073.709551616s", -ERANGE); /* fraction pushes it over */
	assert_int_equal(parse_ok("18446744073.709551615s"), UINT64_MAX);
	refused("99999999999999999999999", -EINVAL); /* no unit wins over range */
}

static void fmt_is(uint64_t ns, const char *want)
{
	char buf[32];
	uint64_t back;

	assert_string_equal(duration_format(ns, buf, sizeof(buf)), want);
	assert_int_equal(duration_parse(buf, &back), 0);
	assert_int_equal(back, ns);
}

static void test_format(void **state)
{
	(void)state;
	fmt_is(0, "0ns");
	fmt_is(10000000, "10ms");
	fmt_is(1500000000, "1.5s");
	fmt_is(250000, "250us");
	fmt_is(1001, "1.001us");
	fmt_is(1, "1ns");
	fmt_is(999, "999ns");
	fmt_is(60ULL * 1000000000ULL, "1m");
	fmt_is(86400ULL * 1000000000ULL, "1d");
	fmt_is(25ULL * 3600 * 1000000000ULL, "25h");
	fmt_is(1234567, "1234.567us");
	fmt_is(UINT64_MAX, "18446744073709551.615us");
	fmt_is(1000001, "1000.001us");
}

static void test_format_round_trip_many(void **state)
{
	(void)state;
	uint64_t x = 88172645463325252ULL;
	for (int i = 0; i < 20000; i++) {
		char buf[32];
		uint64_t back = 0;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t v = x >> (i % 64);
		duration_format(v, buf, sizeof(buf));
		assert_int_equal(duration_parse(buf, &back), 0);
		assert_int_equal(back, v);
	}
}

static void test_format_small_buffer(void **state)
{
	char buf[4];
	(void)state;
	duration_format(1500000000ULL, buf, sizeof(buf));
	assert_int_equal(strlen(buf), 3); /* truncated, still terminated */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_units),
	    cmocka_unit_test(test_decimals),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_range),
	    cmocka_unit_test(test_format),
	    cmocka_unit_test(test_format_round_trip_many),
	    cmocka_unit_test(test_format_small_buffer),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
