/*
 * Sampling math of vsched-agent (agent/bwavg.c): rates from cumulative counters, the
 * MemBUS average over the last w windows (paper 000 Fig. 3: (1/w) sum BW^{-k}), fewer
 * windows at start, counter resets, and windows of uneven length.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent.h"

#define MS NSEC_PER_MSEC

static void test_first_sample_primes(void **state)
{
	struct bwavg b;

	(void)state;
	bwavg_init(&b, 2);
	assert_int_equal(bwavg_push_counter(&b, 1000000, 1000 * MS), 0);
	assert_true(bwavg_rate(&b) == 0);
	/* 500 kB in 500 ms = 1 MB/s */
	assert_int_equal(bwavg_push_counter(&b, 1500000, 1500 * MS), 1);
	assert_float_equal(bwavg_rate(&b), 1e6, 1e-6);
}

static void test_mean_of_last_w_windows(void **state)
{
	struct bwavg b;
	uint64_t c = 0;
	mono_ns t = 10 * MS;
	/* Per-window rates (bytes/s) with q = 500 ms. */
	const double r[] = {1e6, 3e6, 5e6, 7e6, 0};

	(void)state;
	bwavg_init(&b, 2);
	bwavg_push_counter(&b, c, t);
	for (unsigned i = 0; i < 5; i++) {
		c += (uint64_t)(r[i] / 2); /* half a second */
		t += 500 * MS;
		bwavg_push_counter(&b, c, t);
		if (i == 0)
			assert_float_equal(bwavg_rate(&b), 1e6, 1);
		else
			assert_float_equal(bwavg_rate(&b), (r[i] + r[i - 1]) / 2, 1);
	}
	/* w = 3 over the same series: the last three. */
	bwavg_init(&b, 3);
	c = 0;
	t = 10 * MS;
	bwavg_push_counter(&b, c, t);
	for (unsigned i = 0; i < 5; i++) {
		c += (uint64_t)(r[i] / 2);
		t += 500 * MS;
		bwavg_push_counter(&b, c, t);
	}
	assert_float_equal(bwavg_rate(&b), (5e6 + 7e6 + 0) / 3, 1);
}

static void test_reset_and_uneven_windows(void **state)
{
	struct bwavg b;

	(void)state;
	bwavg_init(&b, 2);
	bwavg_push_counter(&b, 5000, 0 + MS);
	bwavg_push_counter(&b, 7000, 1001 * MS); /* 2000 B/s over 1 s */
	/* Counter went backwards (perf fd reopened, process replaced): primes, no window. */
	assert_int_equal(bwavg_push_counter(&b, 100, 1501 * MS), 0);
	assert_float_equal(bwavg_rate(&b), 2000, 1e-6);
	/* 250 ms window with 1000 bytes = 4000 B/s; mean (2000 + 4000) / 2. */
	assert_int_equal(bwavg_push_counter(&b, 1100, 1751 * MS), 1);
	assert_float_equal(bwavg_rate(&b), 3000, 1e-6);
	/* Same timestamp twice: no window, no division by zero. */
	assert_int_equal(bwavg_push_counter(&b, 1200, 1751 * MS), 0);
	assert_float_equal(bwavg_rate(&b), 3000, 1e-6);
}

static void test_push_delta_and_w_bounds(void **state)
{
	struct bwavg b;

	(void)state;
	bwavg_init(&b, 0); /* clamped to 1 */
	assert_int_equal(b.w, 1);
	bwavg_push_delta(&b, 100, 100 * MS);
	bwavg_push_delta(&b, 300, 100 * MS);
	assert_float_equal(bwavg_rate(&b), 3000, 1e-6);
	bwavg_push_delta(&b, 1, 0); /* ignored */
	assert_float_equal(bwavg_rate(&b), 3000, 1e-6);
	bwavg_init(&b, 1000);
	assert_int_equal(b.w, AGENT_WMAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_first_sample_primes),
	    cmocka_unit_test(test_mean_of_last_w_windows),
	    cmocka_unit_test(test_reset_and_uneven_windows),
	    cmocka_unit_test(test_push_delta_and_w_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
