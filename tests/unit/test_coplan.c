/*
 * Unit tests of the co-scheduling planner (controller/coplan.c over fit.c): worked
 * examples of the controller's coschedule mode (docs/coschedule.md).
 *   - 4 jobs at 45 % on one 2-CPU node, 2 memory-heavy + 2 light, frame 100 ms of 5 ms
 *     slots: every slot that runs two jobs pairs a heavy one with a light one; every job
 *     gets exactly ceil(0.45 * 20) = 9 slots = 45 ms per frame; pairing = worst does the
 *     opposite; oblivious ignores bandwidth;
 *   - no job starves, whatever the rotation, also when the node is oversubscribed;
 *   - a job on two nodes holds the same slots on both (one row for all its nodes) and
 *     both nodes stay within their CPUs;
 *   - windows: a run across the frame end is split in two, more than 8 are merged (share
 *     kept), every window set passes vsched's vsp_check_windows;
 *   - the CPU colouring check finds a plan vsched could not pin (odd cycle) and accepts
 *     one it can;
 *   - under vsched's per-CPU cap (90 % of 100 slots) no CPU is planned more, also for jobs
 *     above it, shares adding up to more, sub-frames and random problems.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "coplan.h"
#include "proto_vsched.h"

#define MS 1000000ull

static const uint32_t off1[] = {0, 4};
static const struct fit_node node2 = {.cpus = 2, .mem_cap = 101, .net_cap = 0};
/* H1, H2 heavy (100 B/s per process), L1, L2 light (1) at U = 0.45, in this list order
 * (so that taking the list in order would pair H1 with H2); M = 101 = what the controller
 * takes when no capacity is known: the mean demand per CPU-slot times CPUs. */
static const struct fit_job hl_jobs[] = {
    {.mem_bw = 100, .util = 0.45},
    {.mem_bw = 100, .util = 0.45},
    {.mem_bw = 1, .util = 0.45},
    {.mem_bw = 1, .util = 0.45},
};
static const struct fit_place hl_place[] = {{0, 0, 1}, {1, 0, 1}, {2, 0, 1}, {3, 0, 1}};

static struct fit_problem hl_problem(uint8_t pairing)
{
	struct fit_problem pb = {.njobs = 4,
	                         .nnodes = 1,
	                         .jobs = hl_jobs,
	                         .nodes = &node2,
	                         .place = hl_place,
	                         .nplace = 4,
	                         .node_off = off1,
	                         .pairing = pairing};
	return pb;
}

static bool heavy(uint32_t j)
{
	return j < 2;
}

/* Counts slots with two heavy, two light, and mixed pairs. */
static void count_pairs(const uint8_t *table, uint32_t ns, int *hh, int *ll, int *hl)
{
	*hh = *ll = *hl = 0;
	for (uint32_t k = 0; k < ns; k++) {
		int h = 0, l = 0;
		for (uint32_t j = 0; j < 4; j++)
			if (table[j * ns + k])
				heavy(j) ? h++ : l++;
		assert_true(h + l <= 2); /* 2 CPUs */
		if (h == 2)
			(*hh)++;
		else if (l == 2)
			(*ll)++;
		else if (h == 1 && l == 1)
			(*hl)++;
	}
}

static void check_windows(const struct coplan_job *j, mono_ns period)
{
	char why[200];

	assert_true(j->nwin >= 1 && j->nwin <= 8);
	assert_int_equal(vsp_check_windows(j->win, j->nwin, why, sizeof(why)), 0);
	for (uint32_t w = 0; w < j->nwin; w++)
		assert_int_equal(j->win[w].period, period);
}

static uint64_t total_slice(const struct coplan_job *j)
{
	uint64_t s = 0;
	for (uint32_t w = 0; w < j->nwin; w++)
		s += j->win[w].slice;
	return s;
}

static void test_fitness_pairs_heavy_with_light(void **state)
{
	(void)state;
	struct fit_problem pb = hl_problem(FIT_PAIR_FITNESS);
	uint8_t table[4 * 20];
	struct coplan_job jp[4];
	struct coplan_result res;
	int hh, ll, hl;

	assert_int_equal(coplan_make(&pb, 20, 5 * MS, 1, 1.0, COPLAN_CAP_FULL, table, jp, &res), 0);
	assert_int_equal(res.k, 1);
	assert_int_equal(res.slots, 20);
	assert_true(res.complete);
	assert_true(res.colourable);
	count_pairs(table, 20, &hh, &ll, &hl);
	assert_int_equal(hh, 0);
	assert_int_equal(ll, 0);
	assert_int_equal(hl, 18); /* 36 process-slots: 18 pairs, 2 slots idle on one CPU */
	for (int i = 0; i < 4; i++) {
		/* the share per frame, exactly: ceil(0.45 * 20) = 9 slots = 45 ms of 100 ms */
		assert_int_equal(jp[i].need, 9);
		assert_int_equal(jp[i].got, 9);
		check_windows(&jp[i], 100 * MS);
		assert_int_equal(total_slice(&jp[i]), 45 * MS);
		assert_false(jp[i].merged);
		/* slots compacted: one window per job, not one per slot */
		assert_int_equal(jp[i].nwin, 1);
	}
}

static void test_worst_pairs_alike(void **state)
{
	(void)state;
	struct fit_problem pb = hl_problem(FIT_PAIR_WORST);
	uint8_t table[4 * 20];
	struct coplan_job jp[4];
	struct coplan_result res;
	int hh, ll, hl;

	assert_int_equal(coplan_make(&pb, 20, 5 * MS, 1, 1.0, COPLAN_CAP_FULL, table, jp, &res), 0);
	assert_true(res.complete);
	count_pairs(table, 20, &hh, &ll, &hl);
	/* farthest from the ideal point: heavy with heavy, light with light */
	assert_int_equal(hl, 0);
	assert_int_equal(hh + ll, 18);
	for (int i = 0; i < 4; i++)
		assert_int_equal(total_slice(&jp[i]), 45 * MS);
}

static void test_oblivious_ignores_bandwidth(void **state)
{
	(void)state;
	struct fit_problem pb = hl_problem(FIT_PAIR_OBLIVIOUS);
	/* same jobs, bandwidths swapped around: the oblivious table does not change */
	struct fit_job swapped[4];
	struct fit_problem pb2 = pb;
	uint8_t t1[4 * 20], t2[4 * 20];
	struct coplan_job jp[4];
	struct coplan_result res;
	int hh, ll, hl;

	for (int i = 0; i < 4; i++) {
		swapped[i] = hl_jobs[i];
		swapped[i].mem_bw = 101 - hl_jobs[i].mem_bw;
	}
	pb2.jobs = swapped;
	assert_int_equal(coplan_make(&pb, 20, 5 * MS, 1, 1.0, COPLAN_CAP_FULL, t1, jp, &res), 0);
	assert_true(res.complete);
	assert_int_equal(coplan_make(&pb2, 20, 5 * MS, 1, 1.0, COPLAN_CAP_FULL, t2, jp, &res), 0);
	assert_memory_equal(t1, t2, sizeof(t1));
	/* list order H1 H2 L1 L2: the head and the next in the list run together */
	count_pairs(t1, 20, &hh, &ll, &hl);
	assert_int_equal(hh, 9);
}

/* Oversubscribed: 5 jobs at 45 % on 2 CPUs (45 slots asked of 40). Whatever the rotation,
 * every job runs, and no job gets more than its need. */
static void test_no_starvation(void **state)
{
	(void)state;
	struct fit_job jobs[5];
	struct fit_place place[5];
	const uint32_t off[] = {0, 5};
	uint8_t table[5 * 20];
	uint32_t got[5];
	static uint64_t scratch[4096];

	for (uint32_t i = 0; i < 5; i++) {
		jobs[i] = (struct fit_job){.mem_bw = i % 2 ? 1 : 100, .util = 0.45};
		place[i] = (struct fit_place){i, 0, 1};
	}
	for (uint32_t rot = 0; rot < 10; rot++) {
		struct fit_problem pb = {.njobs = 5,
		                         .nnodes = 1,
		                         .nslots = 20,
		                         .jobs = jobs,
		                         .nodes = &node2,
		                         .place = place,
		                         .nplace = 5,
		                         .node_off = off,
		                         .rotate = rot};
		int rc = fit_schedule(&pb, scratch, sizeof(scratch), table, got);
		uint32_t sum = 0;
		assert_int_equal(rc, -ENOSPC);
		for (int i = 0; i < 5; i++) {
			assert_true(got[i] >= 6); /* 40 / 5 = 8 on average; nobody left out */
			assert_true(got[i] <= 9);
			sum += got[i];
		}
		assert_int_equal(sum, 40); /* and no CPU-slot wasted */
	}
}

/* Job G spans nodes 0 and 1 (one process each); X only on node 0, Y only on node 1, Z on
 * node 1; all at 50 % of 10 slots, 1 CPU on node 0, 2 CPUs on node 1. G and X cannot
 * share a slot (node 0 has 1 CPU), so G holds 5 slots and X the 5 others, on node 1 G's
 * slots are the same 5 (its row is its row on every node), and node 1 never runs more
 * than 2 processes in a slot. */
static void test_gang_same_slots_every_node(void **state)
{
	(void)state;
	const struct fit_job jobs[] = {
	    {.mem_bw = 50, .util = 0.5}, /* G */
	    {.mem_bw = 50, .util = 0.5}, /* X */
	    {.mem_bw = 1, .util = 0.5},  /* Y */
	    {.mem_bw = 80, .util = 0.5}, /* Z */
	};
	const struct fit_node nodes[] = {{.cpus = 1, .mem_cap = 60}, {.cpus = 2, .mem_cap = 100}};
	const struct fit_place place[] = {{0, 0, 1}, {1, 0, 1}, {0, 1, 1}, {2, 1, 1}, {3, 1, 1}};
	const uint32_t off[] = {0, 2, 5};
	struct fit_problem pb = {.njobs = 4,
	                         .nnodes = 2,
	                         .jobs = jobs,
	                         .nodes = nodes,
	                         .place = place,
	                         .nplace = 5,
	                         .node_off = off};
	uint8_t table[4 * 10];
	struct coplan_job jp[4];
	struct coplan_result res;

	assert_int_equal(coplan_make(&pb, 10, 10 * MS, 1, 1.0, COPLAN_CAP_FULL, table, jp, &res),
	                 0);
	assert_true(res.complete);
	/* G, Y, Z pairwise share slots on node 1 (a triangle): vsched could not pin them to
	 * 2 CPUs with disjoint windows, and the plan says so (a known limit of the greedy
	 * Algorithm 2: it does not look at CPUs; docs/coschedule.md) */
	assert_false(res.colourable);
	assert_int_equal(res.bad_node, 1);
	for (uint32_t k = 0; k < 10; k++) {
		/* node 0: exactly one of G, X */
		assert_int_equal(table[0 * 10 + k] + table[1 * 10 + k], 1);
		/* node 1: G, Y, Z within 2 CPUs */
		assert_true(table[0 * 10 + k] + table[2 * 10 + k] + table[3 * 10 + k] <= 2);
	}
	for (int i = 0; i < 4; i++) {
		assert_int_equal(jp[i].got, 5);
		check_windows(&jp[i], 100 * MS);
		assert_int_equal(total_slice(&jp[i]), 50 * MS);
	}
}

static void test_windows_split_at_frame_end(void **state)
{
	(void)state;
	uint8_t row[20] = {0};
	struct vsp_resv w[8];
	char why[200];
	bool merged;

	row[18] = row[19] = row[0] = row[1] = 1;
	row[9] = 1;
	assert_int_equal(coplan_row_windows(row, 20, 5 * MS, w, 8, &merged), 3);
	assert_false(merged);
	assert_int_equal(w[0].phase, 0);
	assert_int_equal(w[0].slice, 10 * MS);
	assert_int_equal(w[0].deadline, 10 * MS);
	assert_int_equal(w[1].phase, 45 * MS);
	assert_int_equal(w[1].slice, 5 * MS);
	assert_int_equal(w[2].phase, 90 * MS);
	assert_int_equal(w[2].deadline, 10 * MS);
	for (int i = 0; i < 3; i++)
		assert_int_equal(w[i].period, 100 * MS);
	assert_int_equal(vsp_check_windows(w, 3, why, sizeof(why)), 0);
	/* every slot: one window of the whole frame */
	memset(row, 1, sizeof(row));
	assert_int_equal(coplan_row_windows(row, 20, 5 * MS, w, 8, &merged), 1);
	assert_int_equal(w[0].slice, 100 * MS);
	/* empty row: none */
	memset(row, 0, sizeof(row));
	assert_int_equal(coplan_row_windows(row, 20, 5 * MS, w, 8, &merged), 0);
}

static void test_at_most_8_windows(void **state)
{
	(void)state;
	uint8_t row[24] = {0};
	struct vsp_resv w[8];
	char why[200];
	bool merged;
	uint64_t slice = 0;

	/* 12 single slots, gaps of 1 except a gap of 3 after slot 2 */
	const int on[] = {0, 2, 6, 8, 10, 12, 14, 16, 18, 20, 22, 5};
	for (size_t i = 0; i < sizeof(on) / sizeof(on[0]); i++)
		row[on[i]] = 1;
	assert_int_equal(coplan_row_windows(row, 24, MS, w, 8, &merged), 8);
	assert_true(merged);
	assert_int_equal(vsp_check_windows(w, 8, why, sizeof(why)), 0);
	for (int i = 0; i < 8; i++)
		slice += w[i].slice;
	assert_int_equal(slice, 12 * MS); /* the share is kept */
	/* the widest gap (slots 3, 4) is not bridged */
	for (int i = 0; i < 8; i++)
		assert_false(w[i].phase <= 3 * MS && w[i].phase + w[i].deadline > 3 * MS);
}

/* A, B, C pairwise share slots but never all three: each slot holds 2 jobs (fits 2 CPUs),
 * yet the conflict graph is a triangle: no 2 CPUs can hold them with disjoint windows. */
static void test_colouring(void **state)
{
	(void)state;
	const struct fit_job jobs[] = {{.util = 0.5}, {.util = 0.5}, {.util = 0.5}};
	const struct fit_place place[] = {{0, 0, 1}, {1, 0, 1}, {2, 0, 1}};
	const uint32_t off[] = {0, 3};
	struct fit_problem pb = {.njobs = 3,
	                         .nnodes = 1,
	                         .nslots = 3,
	                         .jobs = jobs,
	                         .nodes = &node2,
	                         .place = place,
	                         .nplace = 3,
	                         .node_off = off};
	const uint8_t tri[9] = {1, 0, 1, 1, 1, 0, 0, 1, 1};
	const uint8_t ok[9] = {1, 0, 0, 1, 1, 0, 0, 1, 0}; /* A, C on one CPU; B on the other */
	uint32_t cpu[3];

	assert_int_equal(coplan_colour(&pb, tri, 0, cpu), -ENOSPC);
	assert_int_equal(coplan_colour(&pb, ok, 0, cpu), 0);
	assert_int_equal(cpu[0], cpu[2]);
	assert_int_not_equal(cpu[0], cpu[1]);
	assert_true(cpu[0] < 2 && cpu[1] < 2);
}

/* vsched already pinned H1 and L1 to CPU 0, H2 and L2 to CPU 1 (it does not move a process
 * on `set`): the plan keeps each CPU's jobs apart and still pairs heavy with light, H1 with
 * L2 and H2 with L1. */
static void test_pinned_cpus(void **state)
{
	(void)state;
	struct fit_problem pb = hl_problem(FIT_PAIR_FITNESS);
	const uint64_t pins[] = {1, 2, 1, 2}; /* H1 cpu0, H2 cpu1, L1 cpu0, L2 cpu1 */
	uint8_t table[4 * 20];
	struct coplan_job jp[4];
	struct coplan_result res;
	int hh, ll, hl;

	pb.place_cpus = pins;
	assert_int_equal(coplan_make(&pb, 20, 5 * MS, 1, 1.0, COPLAN_CAP_FULL, table, jp, &res), 0);
	assert_true(res.complete);
	count_pairs(table, 20, &hh, &ll, &hl);
	assert_int_equal(hh + ll, 0);
	assert_int_equal(hl, 18);
	for (uint32_t k = 0; k < 20; k++) {
		assert_false(table[0 * 20 + k] && table[2 * 20 + k]); /* cpu 0 */
		assert_false(table[1 * 20 + k] && table[3 * 20 + k]); /* cpu 1 */
	}
	for (int i = 0; i < 4; i++)
		assert_int_equal(jp[i].got, 9);
}

/* Granularity: k = 2 windows-sets per frame = the plan on sub-frames of 50 ms. */
static void test_subframes(void **state)
{
	(void)state;
	struct fit_problem pb = hl_problem(FIT_PAIR_FITNESS);
	uint8_t table[4 * 20];
	struct coplan_job jp[4];
	struct coplan_result res;
	int hh, ll, hl;

	assert_int_equal(coplan_make(&pb, 20, 5 * MS, 2, 1.0, COPLAN_CAP_FULL, table, jp, &res), 0);
	assert_int_equal(res.k, 2);
	assert_int_equal(res.slots, 10);
	assert_true(res.complete);
	count_pairs(table, 10, &hh, &ll, &hl);
	assert_int_equal(hh + ll, 0);
	for (int i = 0; i < 4; i++) {
		check_windows(&jp[i], 50 * MS);
		/* ceil(0.45 * 10) = 5 slots of 10: the share rounds up to the slot grid */
		assert_int_equal(total_slice(&jp[i]), 25 * MS);
	}
	/* 3 does not divide 20: k = 2 is used */
	assert_int_equal(coplan_make(&pb, 20, 5 * MS, 3, 1.0, COPLAN_CAP_FULL, table, jp, &res), 0);
	assert_int_equal(res.k, 2);
}

/*
 * Sub-frames only where the slot grid keeps the share: with max_excess 3 %, k = 2 would give
 * the 45 % jobs 5 of 10 slots (50 %) where the whole frame gives exactly 9 of 20, so k = 1;
 * jobs at 40 % get 4 of 10 at k = 2 (exact, kept) but 2 of 4 at k = 5 (50 %): k = 4 is used
 * (2 of 5 = 40 %).
 */
static void test_subframes_keep_share(void **state)
{
	(void)state;
	struct fit_problem pb = hl_problem(FIT_PAIR_FITNESS);
	struct fit_job jobs40[4];
	uint8_t table[4 * 20];
	struct coplan_job jp[4];
	struct coplan_result res;

	assert_int_equal(coplan_make(&pb, 20, 5 * MS, 2, 0.03, COPLAN_CAP_FULL, table, jp, &res),
	                 0);
	assert_int_equal(res.k, 1);
	for (int i = 0; i < 4; i++)
		assert_int_equal(total_slice(&jp[i]), 45 * MS);
	memcpy(jobs40, hl_jobs, sizeof(jobs40));
	for (int i = 0; i < 4; i++)
		jobs40[i].util = 0.40;
	pb.jobs = jobs40;
	assert_int_equal(coplan_make(&pb, 20, 5 * MS, 2, 0.03, COPLAN_CAP_FULL, table, jp, &res),
	                 0);
	assert_int_equal(res.k, 2);
	assert_int_equal(coplan_make(&pb, 20, 5 * MS, 5, 0.03, COPLAN_CAP_FULL, table, jp, &res),
	                 0);
	assert_int_equal(res.k, 4);
	assert_int_equal(res.slots, 5);
	for (int i = 0; i < 4; i++) {
		check_windows(&jp[i], 25 * MS);
		assert_int_equal(total_slice(&jp[i]), 10 * MS);
	}
	/* no tolerance asked for: k = 5 with its rounding, as before */
	assert_int_equal(coplan_make(&pb, 20, 5 * MS, 5, 1.0, COPLAN_CAP_FULL, table, jp, &res), 0);
	assert_int_equal(res.k, 5);
}

/*
 * Checks a plan of nslots slots under a per-CPU cap of cap_ppm (res, table from
 * coplan_make): in every sub-frame no job is in a slot from usable = floor(cap · slots) on,
 * so on every CPU of every node (the colouring's CPUs) the jobs hold at most usable slots
 * per sub-frame and at most cap of the frame as windows; no job gets more than it needs.
 */
static void check_cap(const struct fit_problem *pb, uint32_t nslots, mono_ns slot_ns,
                      uint32_t cap_ppm, const uint8_t *table, const struct coplan_job *jp,
                      const struct coplan_result *res)
{
	struct fit_problem cp = *pb;
	uint32_t usable = (uint32_t)((uint64_t)res->slots * cap_ppm / COPLAN_CAP_FULL);
	mono_ns frame = nslots * slot_ns;

	assert_int_equal(res->usable, usable);
	assert_true(usable < res->slots || cap_ppm == COPLAN_CAP_FULL);
	for (uint32_t i = 0; i < pb->njobs; i++) {
		assert_true(jp[i].got <= jp[i].need);
		for (uint32_t k = usable; k < res->slots; k++)
			assert_int_equal(table[(size_t)i * res->slots + k], 0);
		/* windows: at most the usable slots' share of the frame */
		assert_true(total_slice(&jp[i]) * res->k <= (mono_ns)usable * res->k * slot_ns);
	}
	if (!res->colourable)
		return;
	cp.nslots = res->slots;
	for (uint32_t l = 0; l < pb->nnodes; l++) {
		uint32_t cpu[64] = {0}, at = 0;
		mono_ns load[64] = {0};

		assert_int_equal(coplan_colour(&cp, table, l, cpu), 0);
		for (uint32_t x = pb->node_off[l]; x < pb->node_off[l + 1]; x++)
			for (uint32_t p = 0; p < pb->place[x].procs; p++, at++) {
				const struct coplan_job *j = &jp[pb->place[x].job];
				load[cpu[at]] += total_slice(j) * (frame / (res->slots * slot_ns));
			}
		for (uint32_t c = 0; c < 64; c++)
			assert_true(load[c] * COPLAN_CAP_FULL <= (mono_ns)cap_ppm * frame);
	}
}

/*
 * vsched admits at most its cap per CPU (here 90 % of 100 slots of 1 ms): no CPU is planned
 * more, whatever the jobs ask. Two jobs of one CPU whose shares add up to 95 %: the plan is
 * short, 90 slots at most; a job alone at 95 % (a floating job above its target) gets 90;
 * jobs that fit (45 + 45 %) get exactly their shares; sub-frames (k = 2: 45 of 50 slots,
 * k = 4: 22 of 25); random problems on a 2-CPU node and on two nodes with gangs. The last
 * slot of the frame is free in every plan.
 */
static void test_cap_per_cpu(void **state)
{
	(void)state;
	static const struct fit_node cpu1 = {.cpus = 1, .mem_cap = 100};
	static const uint32_t off2[] = {0, 2};
	static const struct fit_place two_on1[] = {{0, 0, 1}, {1, 0, 1}};
	struct fit_job jobs[6];
	struct fit_problem pb = {.njobs = 2,
	                         .nnodes = 1,
	                         .jobs = jobs,
	                         .nodes = &cpu1,
	                         .place = two_on1,
	                         .nplace = 2,
	                         .node_off = off2};
	static uint8_t table[6 * 100];
	struct coplan_job jp[6];
	struct coplan_result res;
	const uint32_t cap = 900000;

	memset(jobs, 0, sizeof(jobs));
	/* 50 + 45 % on one CPU: short, 90 slots at most */
	jobs[0].util = 0.50;
	jobs[1].util = 0.45;
	assert_int_equal(coplan_make(&pb, 100, MS, 1, 1.0, cap, table, jp, &res), 0);
	assert_false(res.complete);
	assert_int_equal(res.usable, 90);
	assert_int_equal(jp[0].got + jp[1].got, 90);
	check_cap(&pb, 100, MS, cap, table, jp, &res);
	/* the same with the whole CPU: both get their shares (95 slots) */
	assert_int_equal(coplan_make(&pb, 100, MS, 1, 1.0, COPLAN_CAP_FULL, table, jp, &res), 0);
	assert_true(res.complete);
	assert_int_equal(jp[0].got + jp[1].got, 95);
	/* 45 + 45 %: exactly, 10 slots free */
	jobs[0].util = 0.45;
	assert_int_equal(coplan_make(&pb, 100, MS, 1, 1.0, cap, table, jp, &res), 0);
	assert_true(res.complete && res.colourable);
	assert_int_equal(jp[0].got, 45);
	assert_int_equal(jp[1].got, 45);
	check_cap(&pb, 100, MS, cap, table, jp, &res);
	/* sub-frames: 2 x 50 slots (45 usable): 20 + 23 fit, 25 + 23 do not */
	jobs[0].util = 0.40;
	assert_int_equal(coplan_make(&pb, 100, MS, 2, 1.0, cap, table, jp, &res), 0);
	assert_int_equal(res.k, 2);
	assert_true(res.complete);
	assert_int_equal(res.usable, 45);
	check_cap(&pb, 100, MS, cap, table, jp, &res);
	jobs[0].util = 0.50;
	assert_int_equal(coplan_make(&pb, 100, MS, 4, 1.0, cap, table, jp, &res), 0);
	assert_false(res.complete);
	check_cap(&pb, 100, MS, cap, table, jp, &res);
	/* one job alone above the cap */
	pb.njobs = 1;
	pb.nplace = 1;
	{
		static const uint32_t off1j[] = {0, 1};
		pb.node_off = off1j;
		jobs[0].util = 0.95;
		assert_int_equal(coplan_make(&pb, 100, MS, 1, 1.0, cap, table, jp, &res), 0);
		assert_false(res.complete);
		assert_int_equal(jp[0].need, 95);
		assert_int_equal(jp[0].got, 90);
		assert_int_equal(total_slice(&jp[0]), 90 * MS);
		check_cap(&pb, 100, MS, cap, table, jp, &res);
	}
	/* cap_ppm out of range */
	assert_int_equal(coplan_make(&pb, 100, MS, 1, 1.0, 0, table, jp, &res), -EINVAL);
	assert_int_equal(coplan_make(&pb, 100, MS, 1, 1.0, COPLAN_CAP_FULL + 1, table, jp, &res),
	                 -EINVAL);
	/* a frame of one slot has no slot under a 90 % cap: nobody is planned */
	assert_int_equal(coplan_make(&pb, 1, MS, 1, 1.0, cap, table, jp, &res), 0);
	assert_false(res.complete);
	assert_int_equal(jp[0].got, 0);
	assert_int_equal(jp[0].nwin, 0);

	/* random: 4-6 jobs on a 2-CPU node, or gangs over two 2-CPU nodes, k in 1..5 */
	srand(7);
	for (int t = 0; t < 400; t++) {
		static const struct fit_node n2[] = {{.cpus = 2, .mem_cap = 100},
		                                     {.cpus = 2, .mem_cap = 100}};
		struct fit_place place[12];
		uint32_t off[3], np = 0, nj = 4 + (uint32_t)(rand() % 3);
		bool two = t % 2;
		static const uint32_t caps[] = {900000, 850000, 950000, 999999};
		uint32_t c = caps[t % 4];

		for (uint32_t l = 0; l < (two ? 2u : 1u); l++) {
			off[l] = np;
			for (uint32_t i = 0; i < nj; i++)
				if (!two || l == 0 ? i < 4 || rand() % 2 : i % 2 == 0)
					place[np++] = (struct fit_place){
					    .job = i,
					    .node = l,
					    .procs = 1 + (uint32_t)(rand() % 4 == 0)};
		}
		off[two ? 2 : 1] = np;
		for (uint32_t i = 0; i < nj; i++) {
			jobs[i].util = 0.05 + 0.9 * rand() / (double)RAND_MAX;
			jobs[i].mem_bw = rand() % 100;
		}
		struct fit_problem rp = {.njobs = nj,
		                         .nnodes = two ? 2 : 1,
		                         .jobs = jobs,
		                         .nodes = n2,
		                         .place = place,
		                         .nplace = np,
		                         .node_off = off};
		/* jobs placed nowhere are not planned: the random layout always places all on
		 * node 0 for the first four; the others may be nowhere on one node */
		assert_int_equal(
		    coplan_make(&rp, 100, MS, 1 + (uint32_t)(rand() % 5), 1.0, c, table, jp, &res),
		    0);
		check_cap(&rp, 100, MS, c, table, jp, &res);
		for (uint32_t i = 0; i < nj; i++)
			assert_int_equal(table[(size_t)i * res.slots + res.slots - 1], 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fitness_pairs_heavy_with_light),
	    cmocka_unit_test(test_worst_pairs_alike),
	    cmocka_unit_test(test_oblivious_ignores_bandwidth),
	    cmocka_unit_test(test_no_starvation),
	    cmocka_unit_test(test_gang_same_slots_every_node),
	    cmocka_unit_test(test_windows_split_at_frame_end),
	    cmocka_unit_test(test_at_most_8_windows),
	    cmocka_unit_test(test_colouring),
	    cmocka_unit_test(test_subframes),
	    cmocka_unit_test(test_subframes_keep_share),
	    cmocka_unit_test(test_pinned_cpus),
	    cmocka_unit_test(test_cap_per_cpu),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
