/*
 * Unit tests of vsched/sched.c: the spacing of thread-list upkeep ticks (sched_refresh_gap).
 * A new thread of a spinning `stop` task can only be found asleep (frozen) at a tick in the
 * parked part of the task's period; the ticks must not stay in the raised part for long
 * (threads.sh flake: fixed 20 ms ticks did, for seconds, on a 10 ms period).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vsched.h"

#define US 1000ULL
#define MS 1000000ULL

static void test_gap_range(void **state)
{
	uint64_t rng = 12345, sum = 0;
	const int n = 10000;
	(void)state;

	for (int i = 0; i < n; i++) {
		mono_ns g = sched_refresh_gap(&rng);
		assert_true(g >= SCHED_REFRESH_NS - SCHED_REFRESH_JITTER_NS / 2);
		assert_true(g < SCHED_REFRESH_NS + SCHED_REFRESH_JITTER_NS / 2);
		assert_int_not_equal(rng, 0);
		sum += g;
	}
	/* on average SCHED_REFRESH_NS (the upkeep's rate is unchanged) */
	assert_true(sum / n > SCHED_REFRESH_NS - 300 * US);
	assert_true(sum / n < SCHED_REFRESH_NS + 300 * US);
	/* a zero state still moves on */
	rng = 0;
	sched_refresh_gap(&rng);
	assert_int_not_equal(rng, 0);
}

/*
 * Ticks as api_run takes them: the tick at t, the upkeep's own time up to the next poll,
 * a poll timeout rounded up to whole ms, a wake-up latency. Counts the ticks among the
 * first nticks that fall in the parked part [slice, period) of the period, starting at the
 * beginning of the raised part.
 */
static int parked_ticks(uint64_t seed, mono_ns period, mono_ns slice, int nticks)
{
	const mono_ns upkeep = 20 * US, latency = 5 * US;
	uint64_t rng = seed;
	mono_ns t = 1000 * period, gap = SCHED_REFRESH_NS;
	int parked = 0;

	for (int k = 0; k < nticks; k++) {
		mono_ns now = t + upkeep;
		mono_ns timeout = (t + gap - now + MS - 1) / MS * MS;

		t = now + timeout + latency;
		gap = sched_refresh_gap(&rng);
		parked += t % period >= slice;
	}
	return parked;
}

/*
 * From the start of the raised part of a task with a 70 % share, at least two of 40 ticks
 * (0.8 s) fall in its parked part, whatever the period from 2.5 ms up. (1 and 2 ms are
 * left: the poll timeout's whole ms keep the phase there; their raised parts are short.)
 */
static void test_ticks_reach_parked_part(void **state)
{
	const mono_ns periods[] = {2500 * US, 3 * MS,  4 * MS,  5 * MS,  7 * MS,
	                           10 * MS,   20 * MS, 40 * MS, 100 * MS};
	(void)state;

	for (size_t i = 0; i < sizeof(periods) / sizeof(periods[0]); i++)
		for (uint64_t seed = 1; seed <= 16; seed++) {
			mono_ns p = periods[i];
			int n = parked_ticks(seed * 0x9e3779b97f4a7c15ULL, p, p / 10 * 7, 40);

			if (n < 2)
				fail_msg("period %llu us, seed %llu: %d parked ticks of 40",
				         (unsigned long long)(p / US), (unsigned long long)seed, n);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gap_range),
	    cmocka_unit_test(test_ticks_reach_parked_part),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
