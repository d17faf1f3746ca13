/*
 * Unit tests of vsched/placement.c: worst-fit spreads, first-fit packs, batches are placed
 * largest first (worst-fit decreasing), a refused batch leaves the load unchanged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vsched.h"

static void test_worst_fit_spreads(void **state)
{
	double load[4] = {0.5, 0.2, 0.2, 0.7};
	(void)state;
	/* lowest load, ties lowest index */
	assert_int_equal(placement_pick(load, 4, 0.1, 0.9, PLACE_WORST_FIT), 1);
	/* successive picks spread over CPUs */
	double l2[3] = {0, 0, 0};
	int used[3] = {0, 0, 0};
	for (int i = 0; i < 3; i++) {
		int c = placement_pick(l2, 3, 0.2, 0.9, PLACE_WORST_FIT);
		assert_true(c >= 0);
		used[c]++;
		l2[c] += 0.2;
	}
	assert_int_equal(used[0], 1);
	assert_int_equal(used[1], 1);
	assert_int_equal(used[2], 1);
}

static void test_first_fit_packs(void **state)
{
	double load[3] = {0, 0, 0};
	(void)state;
	for (int i = 0; i < 4; i++) {
		int c = placement_pick(load, 3, 0.2, 0.9, PLACE_FIRST_FIT);
		assert_int_equal(c, 0);
		load[c] += 0.2;
	}
	/* CPU 0 at 0.8: 0.2 no longer fits, goes to CPU 1 */
	assert_int_equal(placement_pick(load, 3, 0.2, 0.9, PLACE_FIRST_FIT), 1);
	assert_int_equal(placement_pick(load, 3, 0.1, 0.9, PLACE_FIRST_FIT), 0);
}

static void test_pick_refusal(void **state)
{
	double load[2] = {0.8, 0.85};
	(void)state;
	assert_int_equal(placement_pick(load, 2, 0.2, 0.9, PLACE_WORST_FIT), -1);
	assert_int_equal(placement_pick(load, 2, 0.2, 0.9, PLACE_FIRST_FIT), -1);
	/* worst-fit skips the less loaded CPU only if it does not fit: exact fit allowed */
	assert_int_equal(placement_pick(load, 2, 0.1, 0.9, PLACE_WORST_FIT), 0);
	assert_int_equal(placement_pick(load, 2, 0.05, 0.9, PLACE_WORST_FIT), 0);
	assert_int_equal(placement_pick(load, 0, 0.05, 0.9, PLACE_WORST_FIT), -1);
	assert_int_equal(placement_pick(load, 2, 0.05, 0.9, 7), -1); /* unknown rule */
}

static void test_batch_wfd_order(void **state)
{
	/* Two CPUs, cap 0.9. In request order worst-fit fails:
	 * 0.3 -> c0, 0.3 -> c1, 0.3 -> c0 (0.6), 0.9 -> no room on either.
	 * Largest first succeeds: 0.9 -> c0, then the three 0.3 -> c1 (0.9). */
	const double need[4] = {0.3, 0.3, 0.3, 0.9};
	double load[2] = {0, 0};
	int assign[4];
	(void)state;

	assert_int_equal(placement_batch(need, 4, load, 2, 0.9, PLACE_WORST_FIT, assign), 0);
	assert_int_equal(assign[3], 0);
	assert_int_equal(assign[0], 1);
	assert_int_equal(assign[1], 1);
	assert_int_equal(assign[2], 1);
	assert_true(load[0] > 0.899 && load[0] < 0.901);
	assert_true(load[1] > 0.899 && load[1] < 0.901);

	/* the same requests one by one in order, for comparison: the last does not fit */
	double l2[2] = {0, 0};
	int fails = 0;
	for (int i = 0; i < 4; i++) {
		int c = placement_pick(l2, 2, need[i], 0.9, PLACE_WORST_FIT);
		if (c < 0)
			fails++;
		else
			l2[c] += need[i];
	}
	assert_int_equal(fails, 1);
}

static void test_batch_spreads_existing_load(void **state)
{
	const double need[3] = {0.1, 0.4, 0.2};
	double load[3] = {0.3, 0.0, 0.1};
	int assign[3];
	(void)state;
	assert_int_equal(placement_batch(need, 3, load, 3, 0.9, PLACE_WORST_FIT, assign), 0);
	/* 0.4 -> c1 (0.0), 0.2 -> c2 (0.1), 0.1 -> c0 (0.3) */
	assert_int_equal(assign[1], 1);
	assert_int_equal(assign[2], 2);
	assert_int_equal(assign[0], 0);
}

static void test_batch_first_fit_decreasing(void **state)
{
	/* in request order first-fit would give c0, c0, c1; decreasing gives c1, c0, c0 */
	const double need[3] = {0.2, 0.5, 0.3};
	double load[2] = {0, 0};
	int assign[3];
	(void)state;
	assert_int_equal(placement_batch(need, 3, load, 2, 0.9, PLACE_FIRST_FIT, assign), 0);
	assert_int_equal(assign[1], 0);
	assert_int_equal(assign[2], 0);
	assert_int_equal(assign[0], 1); /* 0.5 + 0.3 + 0.2 > 0.9 */
}

static void test_batch_refusal_leaves_load(void **state)
{
	const double need[3] = {0.5, 0.5, 0.5};
	double load[2] = {0.1, 0.2};
	const double before[2] = {0.1, 0.2};
	int assign[3];
	(void)state;
	assert_int_equal(placement_batch(need, 3, load, 2, 0.9, PLACE_WORST_FIT, assign), -1);
	assert_memory_equal(load, before, sizeof(before));
	assert_int_equal(placement_batch(need, 3, load, 2, 0.9, PLACE_FIRST_FIT, assign), -1);
	assert_memory_equal(load, before, sizeof(before));
	/* empty batch is fine and changes nothing */
	assert_int_equal(placement_batch(need, 0, load, 2, 0.9, PLACE_WORST_FIT, assign), 0);
	assert_memory_equal(load, before, sizeof(before));
}

/* Among the CPUs that admitted a windowed task: worst-fit lowest key, first-fit lowest. */
static void test_pick_ok(void **state)
{
	bool ok[4] = {false, true, true, true};
	double key[4] = {0.0, 0.7, 0.2, 0.2};
	(void)state;

	assert_int_equal(placement_pick_ok(ok, key, 4, PLACE_WORST_FIT), 2); /* tie: lowest */
	assert_int_equal(placement_pick_ok(ok, key, 4, PLACE_FIRST_FIT), 1);
	ok[1] = ok[2] = ok[3] = false;
	assert_int_equal(placement_pick_ok(ok, key, 4, PLACE_WORST_FIT), -1);
	assert_int_equal(placement_pick_ok(ok, key, 4, PLACE_FIRST_FIT), -1);
	ok[0] = true;
	assert_int_equal(placement_pick_ok(ok, key, 4, 7), -1); /* unknown rule */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pick_ok),
	    cmocka_unit_test(test_worst_fit_spreads),
	    cmocka_unit_test(test_first_fit_packs),
	    cmocka_unit_test(test_pick_refusal),
	    cmocka_unit_test(test_batch_wfd_order),
	    cmocka_unit_test(test_batch_spreads_existing_load),
	    cmocka_unit_test(test_batch_first_fit_decreasing),
	    cmocka_unit_test(test_batch_refusal_leaves_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
