/*
 * Unit tests of vsched/placement.c on hand-built CPU tables (no processes): a CPU admits
 * what the processor-demand test admits (the refusals of issue 14 are gone, what does not
 * fit is refused with the CPU, its load and the request in one line), worst-fit spreads by
 * utilisation and first-fit packs among the CPUs that admit, `set` does not count the
 * task's own windows, and an unmanaged CPU is refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vsched.h"

#define MS 1000000ULL

static struct sched S;
static struct task *tasks[16];
static int ntasks;

/* Two managed CPUs (0 and 1), cap 90 %, burst (95 % - 90 %) · 1 s, as on this machine. */
static int setup(void **state)
{
	(void)state;
	memset(&S, 0, sizeof(S));
	S.cfg.ncpus = 2;
	S.cfg.cpus[0] = 0;
	S.cfg.cpus[1] = 1;
	S.cfg.placement = PLACE_WORST_FIT;
	S.cap = 0.9;
	S.supply = (struct adm_supply){0.9, 50.0 * MS};
	for (int i = 0; i < 2; i++)
		S.table[i] = calloc(1, sizeof(struct cpu_table));
	ntasks = 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < ntasks; i++) {
		free(tasks[i]->resv);
		free(tasks[i]);
	}
	for (int i = 0; i < 2; i++)
		free(S.table[i]);
	return 0;
}

/* A task of pid on CPU index idx with windows w[n], added to its table (sums as sched.c). */
static struct task *put(pid_t pid, int idx, const struct vsp_resv *w, unsigned n)
{
	struct task *t = calloc(1, sizeof(*t));
	struct cpu_table *ct = S.table[idx], *nt;

	assert_non_null(t);
	t->pid = pid;
	t->cpu = idx;
	t->cpu_idx = idx;
	t->resv = calloc(1, sizeof(*t->resv));
	assert_non_null(t->resv);
	t->resv->n = n;
	memcpy(t->resv->w, w, n * sizeof(*w));
	nt = calloc(1, sizeof(*nt) + (size_t)(ct->n + 1) * sizeof(struct task *));
	assert_non_null(nt);
	memcpy(nt->task, ct->task, (size_t)ct->n * sizeof(struct task *));
	nt->n = ct->n + 1;
	nt->task[ct->n] = t;
	nt->load = ct->load + admission_density_n(w, n);
	nt->util = ct->util + admission_util_n(w, n);
	free(ct);
	S.table[idx] = nt;
	tasks[ntasks++] = t;
	return t;
}

static struct vsp_resv win(uint64_t T, uint64_t phase, uint64_t len, uint64_t slice)
{
	return (struct vsp_resv){T, slice, len, phase};
}

/* Issue 14's refusals are gone; what really does not fit is refused with the reason. */
static void test_admits_issue14(void **state)
{
	struct vsp_resv a = win(100 * MS, 0, 45 * MS, 45 * MS);
	struct vsp_resv shifted = win(100 * MS, 45 * MS, 100 * MS, 45 * MS);
	struct vsp_resv prov = win(100 * MS, 0, 100 * MS, 20 * MS);
	struct vsp_resv sub = win(25 * MS, 0, 10 * MS, 10 * MS);
	char why[VSP_MSG_MAX + 1] = "";
	(void)state;

	put(101, 0, &a, 1);
	/* a 45 % full-period reservation phase-shifted by 45 ms beside a 0+45 window */
	assert_true(placement_admits(&S, 0, NULL, &shifted, 1, why, sizeof(why)));
	/* the frame full to the cap (45+45 beside 0+45): a new rank's 20 % does not fit */
	struct vsp_resv b = win(100 * MS, 45 * MS, 45 * MS, 45 * MS);
	put(102, 0, &b, 1);
	assert_false(placement_admits(&S, 0, NULL, &prov, 1, why, sizeof(why)));
	assert_string_equal(why, "cpu 0: load 90.0% + 20.0% exceeds cap 90.0%");
	/* 25 ms / 10 ms sub-frame windows beside a new rank's 20 % (was "20.0% + 100.0%") */
	put(103, 1, &prov, 1);
	assert_true(placement_admits(&S, 1, NULL, &sub, 1, why, sizeof(why)));
}

/* A demand refusal names the CPU, two windows that overlap, the interval and the loads. */
static void test_refusal_names_windows(void **state)
{
	struct vsp_resv a[2] = {win(100 * MS, 0, 45 * MS, 45 * MS),
	                        win(100 * MS, 50 * MS, 20 * MS, 20 * MS)};
	struct vsp_resv req[2] = {win(100 * MS, 45 * MS, 5 * MS, 5 * MS),
	                          win(100 * MS, 60 * MS, 30 * MS, 20 * MS)};
	char why[VSP_MSG_MAX + 1] = "";
	(void)state;

	put(101, 0, a, 2);
	/* [50, 90]: 20 + 20 <= 40 fits */
	assert_true(placement_admits(&S, 0, NULL, req, 2, why, sizeof(why)));
	req[1].slice = 25 * MS; /* [50, 90]: 45 > 40 */
	assert_false(placement_admits(&S, 0, NULL, req, 2, why, sizeof(why)));
	assert_string_equal(why, "cpu 0: window 2 (60ms+30ms) overlaps pid 101 window 2 "
	                         "(50ms+20ms): slices 45ms in [50ms, 90ms], load 65.0% + 30.0%");
	/* a 9 s job due 9 s after its release: more than the RT throttle leaves in 9 s */
	struct vsp_resv long9 = win(10000 * MS, 0, 9000 * MS, 9000 * MS);
	assert_false(placement_admits(&S, 1, NULL, &long9, 1, why, sizeof(why)));
	assert_string_equal(why,
	                    "cpu 1: slices 9s in [0ns, 9s] > 8.15s allowed, load 0.0% + 90.0%");
	/* single reservations over the cap: the load message they always had */
	struct vsp_resv x = win(10 * MS, 0, 10 * MS, 6 * MS), y = win(10 * MS, 0, 10 * MS, 5 * MS);
	put(201, 1, &x, 1);
	assert_false(placement_admits(&S, 1, NULL, &y, 1, why, sizeof(why)));
	assert_string_equal(why, "cpu 1: load 60.0% + 50.0% exceeds cap 90.0%");
}

/* The self-test's probe (30 % on CPU 0) does not count for worst-fit: a new task goes to
 * CPU 0 (0 % without the probe) rather than beside a 20 % task on CPU 1; the probe yields
 * to it (api.c). Without a running probe the same 30 % counts. */
static void test_choose_ignores_probe(void **state)
{
	struct vsp_resv probe = win(10 * MS, 0, 10 * MS, 3 * MS);
	struct vsp_resv other = win(100 * MS, 0, 100 * MS, 20 * MS);
	struct vsp_resv req = win(100 * MS, 0, 100 * MS, 10 * MS);
	char why[VSP_MSG_MAX + 1] = "";
	(void)state;

	put(300, 0, &probe, 1);
	put(301, 1, &other, 1);
	assert_int_equal(placement_choose(&S, -1, NULL, &req, 1, why, sizeof(why)), 1);
	S.probe_pid = 300;
	assert_int_equal(placement_choose(&S, -1, NULL, &req, 1, why, sizeof(why)), 0);
	S.probe_pid = 0;
}

/* Worst-fit by utilisation, first-fit lowest, both among the CPUs that admit. */
static void test_choose(void **state)
{
	struct vsp_resv a = win(100 * MS, 0, 45 * MS, 45 * MS);
	struct vsp_resv c = win(100 * MS, 0, 100 * MS, 20 * MS);
	struct vsp_resv r = win(100 * MS, 50 * MS, 40 * MS, 40 * MS);
	char why[VSP_MSG_MAX + 1] = "";
	(void)state;

	put(101, 0, &a, 1); /* 45 %, one full window */
	put(102, 1, &c, 1); /* 20 %, D = T */
	assert_int_equal(placement_choose(&S, -1, NULL, &r, 1, why, sizeof(why)), 1);
	S.cfg.placement = PLACE_FIRST_FIT;
	assert_int_equal(placement_choose(&S, -1, NULL, &r, 1, why, sizeof(why)), 0);
	/* only CPU 0 admits a window at 45+45 beside a 50 % window at 45+50 on CPU 1 */
	struct vsp_resv d = win(100 * MS, 45 * MS, 50 * MS, 50 * MS);
	put(103, 1, &d, 1);
	S.cfg.placement = PLACE_WORST_FIT;
	struct vsp_resv e = win(100 * MS, 45 * MS, 45 * MS, 45 * MS);
	assert_int_equal(placement_choose(&S, -1, NULL, &e, 1, why, sizeof(why)), 0);
	/* neither: the reason given is the least loaded CPU's (CPU 0, 45 %) */
	struct vsp_resv f = win(100 * MS, 40 * MS, 40 * MS, 40 * MS);
	assert_int_equal(placement_choose(&S, -1, NULL, &f, 1, why, sizeof(why)), -ENOSPC);
	assert_string_equal(why,
	                    "cpu 0: window 1 (40ms+40ms) overlaps pid 101 window 1 (0ns+45ms): "
	                    "slices 85ms in [0ns, 80ms], load 45.0% + 40.0%");
	/* an explicit CPU: that one or nothing */
	assert_int_equal(placement_choose(&S, 1, NULL, &e, 1, why, sizeof(why)), -ENOSPC);
	assert_non_null(strstr(why, "cpu 1: "));
	assert_int_equal(placement_choose(&S, 5, NULL, &e, 1, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "cpu 5: not managed by vsched");
}

/* `set` is admitted without the task's own old windows; another CPU is tried with them. */
static void test_set_skips_own_windows(void **state)
{
	struct vsp_resv a = win(100 * MS, 0, 45 * MS, 45 * MS);
	struct vsp_resv b = win(100 * MS, 45 * MS, 45 * MS, 45 * MS);
	struct vsp_resv moved = win(100 * MS, 10 * MS, 35 * MS, 35 * MS);
	char why[VSP_MSG_MAX + 1] = "";
	struct task *ta;
	(void)state;

	ta = put(101, 0, &a, 1);
	put(102, 0, &b, 1);
	/* 10+35 overlaps a's own 0+45: counted for anyone else, not for a itself */
	assert_false(placement_admits(&S, 0, NULL, &moved, 1, why, sizeof(why)));
	assert_true(placement_admits(&S, 0, ta, &moved, 1, why, sizeof(why)));
	/* on CPU 1 (empty) its own windows are not there to skip */
	assert_int_equal(placement_choose(&S, -1, ta, &b, 1, why, sizeof(why)), 1);
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
	    cmocka_unit_test_setup_teardown(test_admits_issue14, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_refusal_names_windows, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_choose, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_choose_ignores_probe, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_set_skips_own_windows, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
