/*
 * Unit tests of vsched/enf_plan.c: a spinning task's jobs simulated against a model of the
 * perf enforcer, with the accounting of jobs.c (a job's overrun, at most a slice, is taken
 * from the next budget) and the dispatcher's rebase at each stop it sees.
 *
 * Model of the counter: it counts the task's CPU plus the steal while the task is on its CPU;
 * it overflows every period of counted time from its arming, and the task stops a delay
 * later (a timer's lateness: 20-150 µs here, drawn from a fixed pseudo-random sequence).
 * Checked: the margin and its bounds; with no steal the counter settles to one slice per
 * job and is not re-armed again, and no job is short; steal below half the margin costs no
 * job its budget and is given back (the share stays slice/period); steal beyond the margin
 * shortens that job only.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vsched.h"

#define US 1000ULL
#define MS 1000000ULL

struct sim {
	struct enf_grid g; /* the dispatcher's view */
	uint64_t c;        /* task CPU clock, at a stop between jobs */
	uint64_t to_ovf;   /* counted CPU left until the counter's next overflow */
	uint64_t debt;     /* the last job's overrun, taken from the next budget */
	uint32_t rnd;
	int rearms, short_jobs;
	uint64_t used_sum, short_max;
};

static uint64_t stop_delay(struct sim *s)
{
	s->rnd = s->rnd * 1103515245u + 12345u;
	return 20 * US + (s->rnd >> 8) % (130 * US);
}

/* One job of a task that would spin through any budget; steal: counted, not run. */
static void job(struct sim *s, uint64_t slice, uint64_t steal)
{
	uint64_t budget = slice - s->debt, p, used, d = stop_delay(s);

	if (s->g.armed)
		s->g.cpu0 = s->c; /* the dispatcher saw the stop: rebased there */
	p = enf_plan(&s->g, s->c, budget, slice);
	if (p) {
		s->rearms++;
		s->g = (struct enf_grid){.armed = true, .cpu0 = s->c, .len = p};
		s->to_ovf = p;
	}
	assert_true(steal < s->to_ovf);
	used = s->to_ovf - steal + d; /* runs to the overflow, then the stop's delay */
	s->to_ovf = s->g.len - d;     /* the period restarted at the overflow */
	s->c += used;
	s->used_sum += used;
	if (used < budget) {
		s->short_jobs++;
		if (budget - used > s->short_max)
			s->short_max = budget - used;
	}
	s->debt = used > budget ? used - budget : 0;
	if (s->debt > slice)
		s->debt = slice;
}

static void test_margin(void **state)
{
	(void)state;
	assert_int_equal(enf_margin(1 * MS), 125 * US); /* slice / 8 */
	assert_int_equal(enf_margin(375 * US), 46875);  /* short slices keep most */
	assert_int_equal(enf_margin(100 * MS), 2 * MS); /* at most 2 ms */
	assert_int_equal(enf_margin(16 * MS), 2 * MS);
}

static void test_plan_keeps_a_fitting_counter(void **state)
{
	struct enf_grid g = {.armed = true, .cpu0 = 10 * MS, .len = 1 * MS};
	(void)state;

	/* next overflow 1 ms away; budget 0.9 ms + margin 125 µs: within [+62.5, +425] µs */
	assert_int_equal(enf_plan(&g, 10 * MS, 900 * US, 1 * MS), 0);
	/* budget 1 ms: the overflow would come before budget + margin / 2: re-armed, and one
	 * slice does not fit either, so budget + margin */
	assert_int_equal(enf_plan(&g, 10 * MS, 1 * MS, 1 * MS), 1 * MS + 125 * US);
	/* budget 0.5 ms: the overflow far past budget + margin + 300 µs: re-armed */
	assert_int_equal(enf_plan(&g, 10 * MS, 500 * US, 1 * MS), 625 * US);
	/* not armed: armed (one slice when it fits); a tiny one gets the kernel's floor */
	g.armed = false;
	assert_int_equal(enf_plan(&g, 0, 800 * US, 1 * MS), 1 * MS);
	assert_int_equal(enf_plan(&g, 0, 0, 8 * US), PERFWATCH_MIN_NS);
}

static void run_steady(uint64_t slice)
{
	struct sim s = {.rnd = 42};
	int rearms_at_100;

	for (int k = 0; k < 1000; k++) {
		job(&s, slice, 0);
		if (k == 99)
			rearms_at_100 = s.rearms;
	}
	assert_true(rearms_at_100 <= 4);           /* a first job, then one slice */
	assert_int_equal(s.rearms, rearms_at_100); /* none after that */
	assert_int_equal(s.short_jobs, 0);
	/* one slice per job, stop to stop (the first job's margin aside) */
	assert_true(s.used_sum >= 1000 * slice);
	assert_true(s.used_sum <= 1000 * slice + enf_margin(slice) + 500 * US);
}

static void test_steady_no_rearm(void **state)
{
	(void)state;
	run_steady(1 * MS);
	run_steady(2500 * US);
	run_steady(27 * MS);
}

static void test_steal_below_margin_given_back(void **state)
{
	const uint64_t slice = 10 * MS, m = enf_margin(slice), steal = m / 3;
	struct sim s = {.rnd = 7};
	uint64_t stolen = 0;

	for (int k = 0; k < 2000; k++) {
		uint64_t st = k % 5 == 0 ? steal : 0;
		job(&s, slice, st);
		stolen += st;
	}
	assert_int_equal(s.short_jobs, 0);
	/* the CPU clock got a slice per job: what was stolen came back */
	assert_true(s.used_sum >= 2000 * slice);
	assert_true(s.used_sum <= 2000 * slice + m + 500 * US);
	/* re-armed only to refill what steal used up, not at every job */
	assert_true(s.rearms < 2000 / 5);
	assert_true(stolen > 0);
}

static void test_steal_beyond_margin_shortens_that_job(void **state)
{
	const uint64_t slice = 10 * MS, m = enf_margin(slice);
	struct sim s = {.rnd = 9};

	for (int k = 0; k < 50; k++)
		job(&s, slice, 0);
	assert_int_equal(s.short_jobs, 0);
	job(&s, slice, m + 2 * MS); /* 3.25 ms stolen in one job */
	assert_int_equal(s.short_jobs, 1);
	assert_true(s.short_max <=
	            2 * MS + m); /* short by what the carried overrun did not cover */
	for (int k = 0; k < 50; k++)
		job(&s, slice, 0);
	assert_int_equal(s.short_jobs, 1); /* the following jobs are whole again */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_margin),
	    cmocka_unit_test(test_plan_keeps_a_fitting_counter),
	    cmocka_unit_test(test_steady_no_rearm),
	    cmocka_unit_test(test_steal_below_margin_given_back),
	    cmocka_unit_test(test_steal_beyond_margin_shortens_that_job),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
