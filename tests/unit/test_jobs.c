/*
 * Unit tests of vsched/jobs.c: the job sequence of a window, both anchors.
 *  - epoch: jobs on the epoch grid, prorated rebuild, misses only when runnable and short.
 *  - wakeup (CBS): a dormant window stays so without CPU; the CPU a task uses starts a job
 *    released at (now - used); a spent job is throttled until release + T; a deadline passed
 *    with budget left turns it dormant.
 *  - the CBS wake-up rule: a task seen waking inside its job gets a new one when its budget
 *    left overflows the reserved rate, keeps it otherwise.
 *  - the overrun allowance: a job runs past its budget by at most the allowance, after
 *    the jobs with budget left, and its next job is short by what it ran past.
 *  - the bandwidth bound: a task that wakes many times per period and would take every
 *    microsecond it is allowed never receives more than one slice per job, and over the run
 *    no more than slice/period of the time plus one slice — with a simulated dispatcher
 *    that lets it run exactly while its job is eligible. With an allowance A: a slice and A
 *    per job, slice/period of the run plus a slice and A, two slices and A in any period.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "vsched.h"

#define US 1000ULL
#define MS 1000000ULL

static uint64_t wake_lat; /* the dispatcher's measured wake-up latency the tests pass */
static uint64_t overrun;  /* the overrun allowance the tests pass (job_ctx overrun) */

static struct job_ctx ctx(mono_ns now)
{
	return (struct job_ctx){.now = now,
	                        .epoch = 0,
	                        .thr = 20 * US,
	                        .comp = 0,
	                        .wake_lat = wake_lat,
	                        .overrun = overrun};
}

static bool eligible(struct win_run *wr, mono_ns now)
{
	struct job_ctx c = ctx(now);
	struct edf_job j;

	jobs_entry(wr, &c, &j);
	return j.remaining > 0 && !mono_before(now, j.release) && mono_before(now, j.deadline);
}

static void update(struct task_acct *a, struct win_run *wr, const struct vsp_resv *r,
                   uint8_t anchor, bool rebuild, mono_ns now)
{
	struct job_ctx c = ctx(now);

	jobs_update(a, wr, r, anchor, rebuild, &c);
}

/* update() for a task the dispatcher saw asleep and that has run `ran` since it woke */
/* A task's accounting and one window, as before its first job. */
static void fresh(struct task_acct *a, struct win_run *wr)
{
	memset(a, 0, sizeof(*a));
	memset(wr, 0, sizeof(*wr));
}

static void update_woke(struct task_acct *a, struct win_run *wr, const struct vsp_resv *r,
                        mono_ns now, uint64_t ran)
{
	struct job_ctx c = ctx(now);

	c.woke_ran = ran;
	jobs_update(a, wr, r, VSP_ANCHOR_WAKEUP, false, &c);
}

static void test_epoch_grid_and_miss(void **state)
{
	struct vsp_resv r = {10 * MS, 3 * MS, 10 * MS, 0};
	struct task_acct a;
	struct win_run wr;
	(void)state;

	fresh(&a, &wr);
	update(&a, &wr, &r, VSP_ANCHOR_EPOCH, true, 5 * MS);
	assert_int_equal(wr.release, 0);
	assert_int_equal(wr.budget, 3 * MS / 2); /* prorated: half the window left */
	wr.used = wr.budget;
	update(&a, &wr, &r, VSP_ANCHOR_EPOCH, false, 10 * MS);
	assert_int_equal(wr.release, 10 * MS);
	assert_int_equal(wr.budget, 3 * MS);
	assert_int_equal(atomic_load(&a.periods), 1);
	assert_int_equal(atomic_load(&a.misses), 0);
	/* a job that got nothing and never blocked: a miss */
	update(&a, &wr, &r, VSP_ANCHOR_EPOCH, false, 20 * MS);
	assert_int_equal(atomic_load(&a.periods), 2);
	assert_int_equal(atomic_load(&a.misses), 1);
	/* blocked: not a miss */
	wr.blocked_in_job = true;
	update(&a, &wr, &r, VSP_ANCHOR_EPOCH, false, 30 * MS);
	assert_int_equal(atomic_load(&a.misses), 1);
}

/* A reservation changed mid-window: the new job is owed no more than the new slice less
 * what the task used since the window began (a change never gives a window more than its
 * slice), and never more than the prorated share (density kept). */
static void test_epoch_change_keeps_used(void **state)
{
	struct vsp_resv r = {200 * MS, 80 * MS, 200 * MS, 0};
	struct vsp_resv bigger = {200 * MS, 90 * MS, 200 * MS, 0};
	struct vsp_resv finer = {100 * MS, 45 * MS, 100 * MS, 0};
	struct task_acct a;
	struct win_run wr;
	(void)state;

	fresh(&a, &wr);
	update(&a, &wr, &r, VSP_ANCHOR_EPOCH, false, 0);
	update(&a, &wr, &r, VSP_ANCHOR_EPOCH, true, 1000 * MS);
	assert_int_equal(wr.budget, 80 * MS);
	/* it used its 80 ms; at 120 ms the slice grows to 90 ms: 10 ms more, not 36 */
	wr.used = 80 * MS;
	update(&a, &wr, &bigger, VSP_ANCHOR_EPOCH, true, 1120 * MS);
	assert_int_equal(wr.release, 1000 * MS);
	assert_int_equal(wr.budget, 10 * MS);
	/* 30 ms used of it at 20 ms into the next window: the prorated 81 ms is capped at 60 */
	update(&a, &wr, &bigger, VSP_ANCHOR_EPOCH, false, 1200 * MS);
	wr.used = 30 * MS;
	update(&a, &wr, &r, VSP_ANCHOR_EPOCH, true, 1220 * MS);
	assert_int_equal(wr.budget, 50 * MS); /* min(80 * 180/200 = 72, 80 - 30) */
	/* nothing used: the prorated share, as before */
	wr.used = 0;
	update(&a, &wr, &r, VSP_ANCHOR_EPOCH, true, 1300 * MS);
	assert_int_equal(wr.budget, 40 * MS);
	/* a finer period whose window began after the old job's release: its CPU may lie
	 * before the new window, so the prorated share only */
	wr.used = 40 * MS;
	update(&a, &wr, &finer, VSP_ANCHOR_EPOCH, true, 1350 * MS);
	assert_int_equal(wr.release, 1300 * MS);
	assert_int_equal(wr.budget, 45 * MS / 2);
}

static void test_wakeup_dormant_and_wake(void **state)
{
	struct vsp_resv r = {1 * MS, 300 * US, 1 * MS, 0};
	struct task_acct a;
	struct win_run wr;
	(void)state;

	fresh(&a, &wr);
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, true, 100 * MS);
	assert_true(eligible(&wr, 100 * MS));
	/* it blocked after 50 us: at the deadline the window turns dormant, no miss */
	wr.used = 50 * US;
	wr.blocked_in_job = true;
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, false, 101 * MS);
	assert_true(wr.dormant);
	assert_false(eligible(&wr, 101 * MS));
	assert_int_equal(atomic_load(&a.periods), 1);
	assert_int_equal(atomic_load(&a.misses), 0);
	/* no CPU used: stays dormant, whatever the time */
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, false, 105 * MS + 437 * US);
	assert_true(wr.dormant);
	/* it ran 30 us by 105.5 ms: a job released at 105.47 ms with a full slice */
	wr.used = 30 * US;
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, false, 105500 * US);
	assert_false(wr.dormant);
	assert_int_equal(wr.release, 105470 * US);
	assert_int_equal(wr.deadline, 106470 * US);
	assert_int_equal(wr.budget, 300 * US);
	assert_int_equal(wr.used, 30 * US);
	assert_true(eligible(&wr, 105500 * US));

	/* With a wake-up latency of 25 us the release is the wake-up itself: 25 us earlier */
	wake_lat = 25 * US;
	wr.used = 50 * US;
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, false, 106470 * US); /* deadline: dormant again */
	assert_true(wr.dormant);
	wr.used = 30 * US;
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, false, 107500 * US);
	assert_int_equal(wr.release, 107445 * US);
	/* ... but never before the window went dormant (releases stay a period apart) */
	wr.used = 50 * US;
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, false, 108445 * US);
	assert_true(wr.dormant);
	wr.used = 10 * US;
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, false, 108460 * US);
	assert_int_equal(wr.release, 108445 * US);
	wake_lat = 0;
}

static void test_wakeup_throttle_and_replenish(void **state)
{
	struct vsp_resv r = {10 * MS, 2 * MS, 10 * MS, 0};
	struct task_acct a;
	struct win_run wr;
	(void)state;

	fresh(&a, &wr);
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, true, 3 * MS);
	wr.used = 2 * MS + 10 * US; /* spent (10 us late) */
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, false, 6 * MS);
	assert_false(eligible(&wr, 6 * MS));
	assert_false(wr.dormant);
	/* throttled until release + T = 13 ms, then a job with the overrun taken off */
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, false, 12999 * US);
	assert_false(eligible(&wr, 12999 * US));
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, false, 13100 * US);
	assert_int_equal(wr.release, 13 * MS);
	assert_int_equal(wr.budget, 2 * MS - 10 * US);
	assert_true(eligible(&wr, 13100 * US));
	assert_int_equal(atomic_load(&a.misses), 0);
	/* lost periods are not paid back as a burst: released at now */
	wr.used = wr.budget;
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, false, 50 * MS);
	assert_int_equal(wr.release, 50 * MS);
}

/*
 * The overrun allowance (75 us on 300 us / 1 ms): a job that needs 340 us runs to the end
 * in its period, after every job with budget left, and is stopped at the allowance's end;
 * the next job is owed 300 us less what it ran past its budget.
 */
static void test_wakeup_overrun_allowance(void **state)
{
	struct vsp_resv r = {1 * MS, 300 * US, 1 * MS, 0};
	struct task_acct a;
	struct win_run wr;
	struct job_ctx c;
	struct edf_job j;
	(void)state;

	overrun = 75 * US;
	fresh(&a, &wr);
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, true, 10 * MS);
	wr.used = 250 * US;
	c = ctx(10250 * US);
	jobs_entry(&wr, &c, &j);
	assert_int_equal(j.remaining, 125 * US); /* 50 of budget, then 75 of allowance */
	assert_false(j.spare);
	wr.used = 310 * US;
	c = ctx(10310 * US);
	jobs_entry(&wr, &c, &j);
	assert_int_equal(j.remaining, 65 * US);
	assert_true(j.spare); /* past its budget: ordered after those with budget left */
	wr.used = 360 * US;   /* 15 us left of the allowance: over */
	assert_false(eligible(&wr, 10360 * US));
	/* the job ends at its deadline, served (no miss); the next is owed 300 - 40 us */
	wr.used = 340 * US;
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, false, 11 * MS);
	assert_int_equal(wr.release, 11 * MS);
	assert_int_equal(wr.budget, 260 * US);
	assert_int_equal(atomic_load(&a.misses), 0);
	c = ctx(11 * MS);
	jobs_entry(&wr, &c, &j);
	assert_int_equal(j.remaining, 335 * US);
	overrun = 0;
	/* without an allowance the same job is over at its budget */
	fresh(&a, &wr);
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, true, 10 * MS);
	wr.used = 300 * US;
	assert_false(eligible(&wr, 10300 * US));
}

/*
 * The CBS wake-up rule: a periodic task (200 us of 300 us every 1 ms) that wakes 50 us
 * before its job's deadline gets a new job with a whole slice from its wake-up, not the
 * 100 us left; one that wakes early with enough budget for the rest of its job keeps it.
 */
static void test_wakeup_cbs_rule(void **state)
{
	struct vsp_resv r = {1 * MS, 300 * US, 1 * MS, 0};
	struct task_acct a;
	struct win_run wr;
	(void)state;

	fresh(&a, &wr);
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, true, 100 * MS);
	wr.used = 200 * US; /* its job, then it slept */
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, false, 100500 * US);
	/* woke at 100.95 ms, seen after 20 us: 100 us left, 50 us to the deadline */
	wr.used += 20 * US;
	update_woke(&a, &wr, &r, 100970 * US, 20 * US);
	assert_int_equal(wr.release, 100950 * US);
	assert_int_equal(wr.deadline, 101950 * US);
	assert_int_equal(wr.budget, 300 * US);
	assert_int_equal(wr.used, 20 * US);
	assert_true(eligible(&wr, 100970 * US));
	assert_int_equal(atomic_load(&a.periods), 1);
	assert_int_equal(atomic_load(&a.misses), 0);
	/* 100 us used, then asleep; woke at 101.15 ms: 200 us left for 800 us at 30 % (240 us):
	 * no overflow, the job goes on */
	wr.used = 100 * US;
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, false, 101100 * US);
	wr.used += 10 * US;
	update_woke(&a, &wr, &r, 101160 * US, 10 * US);
	assert_int_equal(wr.release, 100950 * US);
	assert_int_equal(wr.used, 110 * US);
	/* woke after its deadline (seen late): a job from the wake-up, the old one counted */
	update_woke(&a, &wr, &r, 102000 * US, 30 * US);
	assert_int_equal(wr.release, 101970 * US);
	assert_int_equal(wr.used, 30 * US);
	assert_int_equal(atomic_load(&a.periods), 2);
	assert_int_equal(atomic_load(&a.misses), 0);
}

/*
 * A greedy task that runs 40 us then sleeps 10 us, forever, under slice/period =
 * 200 us / 1 ms, sampled every 5 us by a dispatcher that lets it run only while its job is
 * eligible. With seed != 0 its bursts (5-200 us) and naps (10-1000 us) are drawn at random
 * instead. With cbs, the first step after every nap is reported as a wake-up (the real
 * dispatcher needs a whole sample asleep): the CBS rule must keep the bound however often.
 * Returns the CPU it got; checks every job got at most one slice (+ one step) and fills
 * worst[0] with the most CPU in any 1 ms of wall time.
 */
static uint64_t greedy_run(uint64_t wall, uint64_t *worst, bool cbs, uint32_t seed)
{
	struct vsp_resv r = {1 * MS, 200 * US, 1 * MS, 0};
	const uint64_t step = 5 * US;
	uint64_t burst = 40 * US, nap = 10 * US;
	static uint64_t at[1000000];
	struct task_acct a;
	struct win_run wr;
	uint64_t total = 0, in_burst = 0, napping = 0, job_used = 0;
	mono_ns rel = 0;
	size_t n = 0, lo = 0;
	bool woke = false;

	fresh(&a, &wr);
	*worst = 0;
	update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, true, 1 * MS);
	for (mono_ns now = 1 * MS; now < wall; now += step) {
		if (woke) {
			struct job_ctx c = ctx(now);
			c.woke_ran = step;
			jobs_update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, false, &c);
		} else {
			update(&a, &wr, &r, VSP_ANCHOR_WAKEUP, false, now);
		}
		woke = false;
		if (!wr.dormant && wr.release != rel) {
			rel = wr.release;
			job_used = 0;
		}
		if (napping) {
			napping -= step;
			continue;
		}
		if (!wr.dormant && !eligible(&wr, now))
			continue; /* parked */
		wr.used += step;  /* it runs one step (dormant: that is its wake-up) */
		job_used += step;
		assert_true(job_used <= r.slice + overrun + step);
		total += step;
		at[n++] = now;
		while (at[n - 1] - at[lo] >= 1 * MS)
			lo++;
		if ((n - lo) * step > *worst)
			*worst = (n - lo) * step;
		woke = in_burst == 0 && cbs;
		if ((in_burst += step) >= burst) {
			in_burst = 0;
			napping = nap;
			if (seed) { /* the next burst and nap (LCG, Numerical Recipes) */
				seed = seed * 1664525u + 1013904223u;
				burst = step * (1 + (seed >> 8) % 40);
				seed = seed * 1664525u + 1013904223u;
				nap = step * (2 + (seed >> 8) % 199);
			}
		}
	}
	return total;
}

/* greedy_run's bounds for a task that naps 10 us after every 40 us (cbs: wake-ups seen). */
static void check_greedy(uint64_t wall, bool cbs)
{
	uint64_t worst, got = greedy_run(wall, &worst, cbs, 0);

	print_message("greedy%s, wake_lat %llu us: %llu us of %llu ms, worst %llu us\n",
	              cbs ? " (every wake-up reported)" : "", (unsigned long long)(wake_lat / US),
	              (unsigned long long)(got / US), (unsigned long long)(wall / MS),
	              (unsigned long long)(worst / US));
	/* at most slice/period of the run plus one slice and the allowance (20 % of 1.999 s
	 * + 200 us) */
	assert_true(got <= wall / 5 + 200 * US + overrun);
	/* and it is served: at least 80 % of that (a job with 20 us left is over) */
	assert_true(got >= wall / 5 * 8 / 10);
	/* any 1 ms holds the end of one job and the start of the next at most */
	assert_true(worst <= 2 * 200 * US + overrun + 2 * 5 * US);
}

static void test_wakeup_never_more_than_slice(void **state)
{
	uint64_t worst, wall = 2000 * MS, got;
	(void)state;

	/* every bound with and without a wake-up latency moving releases earlier */
	for (int lat = 0; lat <= 1; lat++) {
		wake_lat = lat ? 25 * US : 0;
		for (int cbs = 0; cbs <= 1; cbs++)
			check_greedy(wall, cbs);
	}
	/* random bursts and naps, every wake-up reported: the same bounds (no service floor:
	 * it sleeps much of the time); wake_lat is 25 us here, slice / 8 */
	for (uint32_t seed = 1; seed <= 20; seed++) {
		got = greedy_run(wall, &worst, true, seed);
		assert_true(got <= wall / 5 + 200 * US + overrun);
		assert_true(worst <= 2 * 200 * US + overrun + 2 * 5 * US);
		if (seed == 1)
			print_message("random (seed 1): %llu us, worst %llu us\n",
			              (unsigned long long)(got / US),
			              (unsigned long long)(worst / US));
	}
	wake_lat = 0;
}

/* The same bounds with an overrun allowance of a quarter slice (the dispatcher's). */
static void test_wakeup_bounds_with_allowance(void **state)
{
	overrun = 50 * US;
	test_wakeup_never_more_than_slice(state);
	overrun = 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_epoch_grid_and_miss),
	    cmocka_unit_test(test_epoch_change_keeps_used),
	    cmocka_unit_test(test_wakeup_dormant_and_wake),
	    cmocka_unit_test(test_wakeup_throttle_and_replenish),
	    cmocka_unit_test(test_wakeup_cbs_rule),
	    cmocka_unit_test(test_wakeup_never_more_than_slice),
	    cmocka_unit_test(test_wakeup_overrun_allowance),
	    cmocka_unit_test(test_wakeup_bounds_with_allowance),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
