/*
 * Unit tests of vsched/edf.c: windows (phase, not yet released, long periods, clock
 * wrap), EDF selection (ties, exhausted budget, closed windows, exited tasks) and the next
 * event time.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "vsched.h"

#define US  1000ULL
#define MS  1000000ULL
#define SEC 1000000000ULL
#define DAY (86400ULL * SEC)

static struct edf_job job(mono_ns release, uint64_t d, uint64_t t, uint64_t remaining)
{
	struct edf_job j = {release, release + d, release + t, remaining, true, false};
	return j;
}

static void test_window_basic(void **state)
{
	struct vsp_resv r = {10 * MS, 3 * MS, 0, 0};
	struct edf_job j;
	(void)state;

	edf_window(&r, 1000 * MS, 1025 * MS, &j);
	assert_int_equal(j.release, 1020 * MS);
	assert_int_equal(j.deadline, 1030 * MS); /* deadline 0 = period */
	assert_int_equal(j.next_release, 1030 * MS);
	assert_int_equal(j.remaining, 3 * MS);
	assert_true(j.runnable);
	/* exactly at a release: that window */
	edf_window(&r, 1000 * MS, 1030 * MS, &j);
	assert_int_equal(j.release, 1030 * MS);
	/* one ns before it: the previous one */
	edf_window(&r, 1000 * MS, 1030 * MS - 1, &j);
	assert_int_equal(j.release, 1020 * MS);
}

static void test_window_phase_and_deadline(void **state)
{
	struct vsp_resv r = {10 * MS, 2 * MS, 4 * MS, 3 * MS};
	struct edf_job j;
	(void)state;

	edf_window(&r, 0, 25 * MS, &j);
	assert_int_equal(j.release, 23 * MS);
	assert_int_equal(j.deadline, 27 * MS);
	assert_int_equal(j.next_release, 33 * MS);
	edf_window(&r, 0, 22 * MS, &j);
	assert_int_equal(j.release, 13 * MS);
	assert_int_equal(j.deadline, 17 * MS); /* window closed at 22 ms: not selectable */
	assert_int_equal(edf_select(&j, 1, 22 * MS), -1);
}

static void test_window_not_yet_released(void **state)
{
	struct vsp_resv r = {10 * MS, 2 * MS, 0, 5 * MS};
	struct edf_job j;
	(void)state;

	/* epoch in the future, and now between epoch and epoch + phase */
	edf_window(&r, 100 * MS, 50 * MS, &j);
	assert_int_equal(j.release, 105 * MS);
	assert_int_equal(j.deadline, 115 * MS);
	assert_int_equal(j.next_release, 115 * MS);
	assert_int_equal(edf_select(&j, 1, 50 * MS), -1);
	assert_int_equal(edf_next_event(&j, 1, 50 * MS, -1), 105 * MS);
	edf_window(&r, 100 * MS, 103 * MS, &j);
	assert_int_equal(j.release, 105 * MS);
	assert_int_equal(edf_select(&j, 1, 105 * MS), 0);
}

static void test_window_one_day_no_overflow(void **state)
{
	struct vsp_resv r = {DAY, 3600 * SEC, 2 * 3600 * SEC, 12 * 3600 * SEC};
	mono_ns epoch = 5 * SEC;
	mono_ns now = epoch + 400 * DAY + 13 * 3600 * SEC;
	struct edf_job j;
	(void)state;

	edf_window(&r, epoch, now, &j);
	assert_int_equal(j.release, epoch + 400 * DAY + 12 * 3600 * SEC);
	assert_int_equal(j.deadline, j.release + 2 * 3600 * SEC);
	assert_int_equal(j.next_release, j.release + DAY);
	assert_int_equal(edf_select(&j, 1, now), 0);
	/* 1 week period, 100 years of uptime */
	r = (struct vsp_resv){VSP_PERIOD_MAX, SEC, 0, 0};
	now = 36500 * DAY + 7;
	edf_window(&r, 0, now, &j);
	assert_true(j.release <= now && now < j.next_release);
	assert_int_equal(j.release % VSP_PERIOD_MAX, 0);
}

static void test_window_clock_wrap(void **state)
{
	/* epoch just below 2^64, now past the wrap: still wrap-safe */
	struct vsp_resv r = {10 * MS, MS, 0, 0};
	mono_ns epoch = UINT64_MAX - 15 * MS + 1;
	struct edf_job j;
	(void)state;

	edf_window(&r, epoch, 7 * MS, &j); /* 22 ms after epoch */
	assert_int_equal(j.release, epoch + 20 * MS);
	assert_int_equal(j.release, 5 * MS);
	edf_window(&r, epoch, epoch + 3 * MS, &j);
	assert_int_equal(j.release, epoch);
	assert_int_equal(j.deadline, epoch + 10 * MS); /* wraps to a small value */
	assert_int_equal(edf_select(&j, 1, epoch + 3 * MS), 0);
	assert_int_equal(edf_select(&j, 1, epoch + 9 * MS), 0);
	assert_int_equal(edf_select(&j, 1, epoch + 10 * MS), -1);
}

static void test_select_earliest_deadline(void **state)
{
	struct edf_job j[3] = {
	    job(0, 30 * MS, 30 * MS, MS),
	    job(5 * MS, 10 * MS, 10 * MS, MS), /* deadline 15 ms: earliest */
	    job(0, 20 * MS, 20 * MS, MS),
	};
	(void)state;
	assert_int_equal(edf_select(j, 3, 6 * MS), 1);
	/* before job 1 is released, job 2 (deadline 20) wins */
	assert_int_equal(edf_select(j, 3, 4 * MS), 2);
	/* exhausted budget drops out */
	j[1].remaining = 0;
	assert_int_equal(edf_select(j, 3, 6 * MS), 2);
	/* exited task drops out */
	j[2].runnable = false;
	assert_int_equal(edf_select(j, 3, 6 * MS), 0);
	/* nothing eligible */
	j[0].remaining = 0;
	assert_int_equal(edf_select(j, 3, 6 * MS), -1);
	assert_int_equal(edf_select(j, 0, 6 * MS), -1);
}

static void test_select_ties_lowest_index(void **state)
{
	struct edf_job j[3] = {
	    job(MS, 9 * MS, 10 * MS, MS),
	    job(0, 10 * MS, 10 * MS, MS),
	    job(0, 10 * MS, 10 * MS, MS),
	};
	(void)state;
	/* j[0] released at 1 ms with the same deadline 10 ms */
	assert_int_equal(edf_select(j, 3, 2 * MS), 0);
	assert_int_equal(edf_select(j, 3, 0), 1);
	j[0].remaining = 0;
	assert_int_equal(edf_select(j, 3, 2 * MS), 1);
}

/*
 * A job on its overrun allowance (spare: past its budget) runs after every job with budget
 * left, whatever their deadlines; among spare jobs the earlier deadline first.
 */
static void test_select_spare_after_budget(void **state)
{
	struct edf_job j[3] = {
	    job(0, 2 * MS, 2 * MS, MS),
	    job(0, 10 * MS, 10 * MS, MS),
	    job(0, 5 * MS, 5 * MS, MS),
	};
	(void)state;
	j[0].spare = true;
	assert_int_equal(edf_select(j, 3, MS / 2), 2);
	assert_true(edf_before(&j[1], &j[0]));
	assert_false(edf_before(&j[0], &j[1]));
	j[2].spare = true;
	assert_int_equal(edf_select(j, 3, MS / 2), 1);
	j[1].remaining = 0;
	assert_int_equal(edf_select(j, 3, MS / 2), 0); /* both spare: deadline 2 ms first */
	j[0].spare = j[2].spare = false;
	assert_false(edf_before(&j[0], &j[0])); /* a tie is not before */
}

static void test_select_window_bounds(void **state)
{
	struct edf_job j = job(10 * MS, 5 * MS, 10 * MS, MS);
	(void)state;
	assert_int_equal(edf_select(&j, 1, 10 * MS - 1), -1); /* not yet released */
	assert_int_equal(edf_select(&j, 1, 10 * MS), 0);      /* release inclusive */
	assert_int_equal(edf_select(&j, 1, 15 * MS - 1), 0);
	assert_int_equal(edf_select(&j, 1, 15 * MS), -1); /* deadline exclusive */
}

static void test_next_event(void **state)
{
	struct edf_job j[2] = {
	    job(0, 8 * MS, 10 * MS, 3 * MS),       /* deadline 8, next release 10 */
	    job(2 * MS, 20 * MS, 20 * MS, 5 * MS), /* deadline 22, next 22 */
	};
	mono_ns now = 4 * MS;
	(void)state;

	int sel = edf_select(j, 2, now);
	assert_int_equal(sel, 0);
	/* budget end of the selected job: 4 + 3 = 7 ms, before its deadline at 8 ms */
	assert_int_equal(edf_next_event(j, 2, now, sel), 7 * MS);
	j[0].remaining = 5 * MS;
	assert_int_equal(edf_next_event(j, 2, now, sel), 8 * MS); /* deadline first */
	/* nothing selected: earliest future release/deadline */
	assert_int_equal(edf_next_event(j, 2, now, -1), 8 * MS);
	/* future release of another job counts */
	j[1] = job(5 * MS, 20 * MS, 20 * MS, 5 * MS);
	assert_int_equal(edf_next_event(j, 2, now, sel), 5 * MS);
	/* past events never returned */
	assert_true(edf_next_event(j, 2, 9 * MS, -1) > 9 * MS);
	assert_int_equal(edf_next_event(j, 2, 9 * MS, -1), 10 * MS);
	/* exited jobs produce no events */
	j[0].runnable = false;
	j[1].runnable = false;
	mono_ns idle = edf_next_event(j, 2, now, -1);
	assert_true(idle - now >= 365 * DAY);
	assert_true(mono_before(now, idle));
	assert_int_equal(edf_next_event(j, 0, now, -1), idle);
}

static void test_next_event_day_periods(void **state)
{
	struct vsp_resv r = {DAY, 3600 * SEC, 0, 0};
	struct edf_job j;
	mono_ns now = 10 * DAY + 30 * 60 * SEC;
	(void)state;

	edf_window(&r, 0, now, &j);
	int sel = edf_select(&j, 1, now);
	assert_int_equal(sel, 0);
	assert_int_equal(edf_next_event(&j, 1, now, sel), now + 3600 * SEC);
	j.remaining = 0;
	assert_int_equal(edf_next_event(&j, 1, now, edf_select(&j, 1, now)), 11 * DAY);
}

/* The windows of one task as one EDF entry: the open one, or the next event of any. */
static void test_task_entry_windows(void **state)
{
	/* frame 100 ms at epoch 1000 ms: windows 0+30ms and 50+20ms */
	struct vsp_resv w0 = {100 * MS, 30 * MS, 30 * MS, 0},
	                w1 = {100 * MS, 20 * MS, 20 * MS, 50 * MS};
	struct edf_job w[2], e;
	mono_ns epoch = 1000 * MS;
	(void)state;

	/* inside window 1 */
	edf_window(&w0, epoch, 1010 * MS, &w[0]);
	edf_window(&w1, epoch, 1010 * MS, &w[1]);
	assert_int_equal(w[1].release, 1050 * MS); /* window 2 not yet released */
	assert_int_equal(edf_task_entry(w, 2, 1010 * MS, &e), 0);
	assert_int_equal(e.deadline, 1030 * MS);
	assert_int_equal(e.remaining, 30 * MS);
	assert_int_equal(e.next_release, 1030 * MS); /* earliest event of any window */
	/* between the windows: nothing eligible, next event = window 2's release */
	assert_int_equal(edf_task_entry(w, 2, 1040 * MS, &e), -1);
	assert_int_equal(e.remaining, 0);
	assert_int_equal(edf_next_event(&e, 1, 1040 * MS, -1), 1050 * MS);
	assert_int_equal(edf_select(&e, 1, 1040 * MS), -1);
	/* inside window 2 */
	edf_window(&w1, epoch, 1060 * MS, &w[1]);
	assert_int_equal(edf_task_entry(w, 2, 1060 * MS, &e), 1);
	assert_int_equal(e.deadline, 1070 * MS);
	assert_int_equal(edf_select(&e, 1, 1060 * MS), 0);
	/* window 2's budget used up: not eligible; next event its deadline */
	w[1].remaining = 0;
	assert_int_equal(edf_task_entry(w, 2, 1060 * MS, &e), -1);
	assert_int_equal(edf_next_event(&e, 1, 1060 * MS, -1), 1070 * MS);
	/* after window 2: the next event is window 1's release in the next frame */
	edf_window(&w0, epoch, 1080 * MS, &w[0]);
	edf_window(&w1, epoch, 1080 * MS, &w[1]);
	assert_int_equal(edf_task_entry(w, 2, 1080 * MS, &e), -1);
	assert_int_equal(edf_next_event(&e, 1, 1080 * MS, -1), 1100 * MS);
}

/*
 * Two tasks on one CPU with complementary windows (A: 0+30, 50+20; B: 30+20, 70+25): at
 * every instant EDF over the task entries picks the one whose window is open.
 */
static void test_task_entry_alternate(void **state)
{
	struct vsp_resv a[2] = {{100 * MS, 30 * MS, 30 * MS, 0},
	                        {100 * MS, 20 * MS, 20 * MS, 50 * MS}};
	struct vsp_resv b[2] = {{100 * MS, 20 * MS, 20 * MS, 30 * MS},
	                        {100 * MS, 25 * MS, 25 * MS, 70 * MS}};
	mono_ns epoch = 5000 * MS;
	(void)state;

	for (uint64_t t = 0; t < 100; t++) {
		mono_ns now = epoch + 200 * MS + t * MS;
		struct edf_job wa[2], wb[2], e[2];
		int sel, want;

		for (int i = 0; i < 2; i++) {
			edf_window(&a[i], epoch, now, &wa[i]);
			edf_window(&b[i], epoch, now, &wb[i]);
		}
		edf_task_entry(wa, 2, now, &e[0]);
		edf_task_entry(wb, 2, now, &e[1]);
		sel = edf_select(e, 2, now);
		want = t < 30 ? 0 : t < 50 ? 1 : t < 70 ? 0 : t < 95 ? 1 : -1;
		assert_int_equal(sel, want);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_task_entry_windows),
	    cmocka_unit_test(test_task_entry_alternate),
	    cmocka_unit_test(test_window_basic),
	    cmocka_unit_test(test_window_phase_and_deadline),
	    cmocka_unit_test(test_window_not_yet_released),
	    cmocka_unit_test(test_window_one_day_no_overflow),
	    cmocka_unit_test(test_window_clock_wrap),
	    cmocka_unit_test(test_select_earliest_deadline),
	    cmocka_unit_test(test_select_ties_lowest_index),
	    cmocka_unit_test(test_select_spare_after_budget),
	    cmocka_unit_test(test_select_window_bounds),
	    cmocka_unit_test(test_next_event),
	    cmocka_unit_test(test_next_event_day_periods),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
