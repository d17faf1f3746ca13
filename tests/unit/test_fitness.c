/*
 * Unit tests of the MemBUS fitness co-scheduler (controller/fit.c) and the devil/turtle
 * classification (controller/fit_class.c). Worked examples are computed by hand in the
 * comments.
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

#include "fit.h"
#include "sim.h" /* sim_uniform: seeded random problems */

static uint64_t scratch[1 << 16];

/* Sum of processes running on node l in slot k never exceeds its CPUs. */
static void assert_capacity(const struct fit_problem *pb, const uint8_t *table)
{
	for (uint32_t l = 0; l < pb->nnodes; l++)
		for (uint32_t k = 0; k < pb->nslots; k++) {
			uint32_t used = 0;
			for (uint32_t x = pb->node_off[l]; x < pb->node_off[l + 1]; x++)
				if (table[pb->place[x].job * pb->nslots + k])
					used += pb->place[x].procs;
			assert_true(used <= pb->nodes[l].cpus);
		}
}

/*
 * One node, 2 CPUs, M = 10, N = 1; four single-process jobs at U = 0.5, frame of 4 slots:
 * need = 2 slots each, 8 process-slots = 2 CPUs x 4 slots (full).
 *   A mem 8 (devil), B mem 7 (devil), C mem 1 (turtle), D mem 2 (turtle); net 0.
 * The net dimension adds the same (N/P_rem)^2 to every distance, so mem decides.
 * slot 0: list A B C D. Head A; P_rem 1, BW_rem^M = 2 -> |B-2|=5 |C-2|=1 |D-2|=0 -> D.
 *         S_total A=1 D=1 -> A, D run. List -> B C A D.
 * slot 1: head B; BW_rem^M = 3 -> |C-3|=2 |A-3|=5 |D-3|=1 -> D. B, D run; D done.
 *         List -> C A B D.
 * slot 2: 2 slots left, C still needs 2: forced. C, then head A. List -> B D C A.
 * slot 3: B and C need 1 with 1 slot left: forced. B, C.
 * => A {0,2}, B {1,3}, C {2,3}, D {0,1}: the two devils never share a slot; bus load per
 *    slot 10, 9, 9, 8 <= M. (Round robin A+B, C+D would load 15 > M.)
 */
static void test_devils_paired_with_turtles(void **state)
{
	(void)state;
	const struct fit_job jobs[] = {
	    {.mem_bw = 8, .net_bw = 0, .util = 0.5},
	    {.mem_bw = 7, .net_bw = 0, .util = 0.5},
	    {.mem_bw = 1, .net_bw = 0, .util = 0.5},
	    {.mem_bw = 2, .net_bw = 0, .util = 0.5},
	};
	const struct fit_node nodes[] = {{.cpus = 2, .mem_cap = 10, .net_cap = 1}};
	const struct fit_place place[] = {{0, 0, 1}, {1, 0, 1}, {2, 0, 1}, {3, 0, 1}};
	const uint32_t off[] = {0, 4};
	const struct fit_problem pb = {.njobs = 4,
	                               .nnodes = 1,
	                               .nslots = 4,
	                               .jobs = jobs,
	                               .nodes = nodes,
	                               .place = place,
	                               .nplace = 4,
	                               .node_off = off,
	                               .rotate = 0};
	uint8_t table[16];
	uint32_t got[4];
	const uint8_t want[16] = {
	    1, 0, 1, 0, /* A */
	    0, 1, 0, 1, /* B */
	    0, 0, 1, 1, /* C */
	    1, 1, 0, 0, /* D */
	};
	assert_int_equal(fit_schedule(&pb, scratch, sizeof(scratch), table, got), 0);
	assert_memory_equal(table, want, 16);
	for (int i = 0; i < 4; i++)
		assert_int_equal(got[i], 2);
	for (int k = 0; k < 4; k++) {
		assert_false(table[0 * 4 + k] && table[1 * 4 + k]);
		double load = 0;
		for (int i = 0; i < 4; i++)
			load += table[i * 4 + k] * jobs[i].mem_bw;
		assert_true(load <= 10);
	}
	assert_capacity(&pb, table);
}

/*
 * Network dimension. 2 CPUs, M = 10, N = 10; U = 0.5, 2 slots (need 1 each).
 *   X (mem 1, net 9), Y (mem 1, net 8), Z (mem 5, net 0), W (mem 4, net 1).
 * slot 0: head X; P_rem 1, BW_rem = (9, 1): d(Y) = sqrt(64+49) = 10.6, d(Z) = sqrt(16+1)
 *         = 4.12, d(W) = sqrt(25+0) = 5 -> Z. X with Z. List -> Y W X Z.
 * slot 1: Y and W are forced. => the two NIC-heavy jobs never share a slot.
 */
static void test_network_heavy_split(void **state)
{
	(void)state;
	const struct fit_job jobs[] = {
	    {.mem_bw = 1, .net_bw = 9, .util = 0.5},
	    {.mem_bw = 1, .net_bw = 8, .util = 0.5},
	    {.mem_bw = 5, .net_bw = 0, .util = 0.5},
	    {.mem_bw = 4, .net_bw = 1, .util = 0.5},
	};
	const struct fit_node nodes[] = {{.cpus = 2, .mem_cap = 10, .net_cap = 10}};
	const struct fit_place place[] = {{0, 0, 1}, {1, 0, 1}, {2, 0, 1}, {3, 0, 1}};
	const uint32_t off[] = {0, 4};
	const struct fit_problem pb = {.njobs = 4,
	                               .nnodes = 1,
	                               .nslots = 2,
	                               .jobs = jobs,
	                               .nodes = nodes,
	                               .place = place,
	                               .nplace = 4,
	                               .node_off = off};
	uint8_t table[8];
	const uint8_t want[8] = {1, 0, 0, 1, 1, 0, 0, 1};
	assert_true(fit_distance(&jobs[2], 9, 1, 1) < fit_distance(&jobs[3], 9, 1, 1));
	assert_int_equal(fit_schedule(&pb, scratch, sizeof(scratch), table, NULL), 0);
	assert_memory_equal(table, want, 8);
}

/*
 * Reduction across nodes. Two nodes of 2 CPUs, M = 10, N = 0 (net ignored); 2 slots.
 * Jobs: G (mem 8) spans both nodes; A (1), B (7) on node 0; C (7), D (1) on node 1;
 * all U = 0.5 -> need 1. rotate = 1: list A B C D G.
 * slot 0, local: node 0 head A, BW_rem^M 9 -> |G-9|=1 < |B-9|=2 -> {A, G};
 *                node 1 head C, BW_rem^M 3 -> |D-3|=2 < |G-3|=5 -> {C, D}.
 *   S_total A1 C1 D1 G1 B0; by list position: A, C, D, G, B.
 *   A (node 0), C, D (node 1 full), G needs node 1 too: skipped although node 0 chose it;
 *   B fits node 0 (CPUs remain). Slot 0 = {A, B, C, D}.
 * slot 1: G forced, runs on both nodes. => G holds slot 1 on every node it spans.
 */
static void test_reduction_gang(void **state)
{
	(void)state;
	const struct fit_job jobs[] = {
	    {.mem_bw = 8, .util = 0.5}, /* G */
	    {.mem_bw = 1, .util = 0.5}, /* A */
	    {.mem_bw = 7, .util = 0.5}, /* B */
	    {.mem_bw = 7, .util = 0.5}, /* C */
	    {.mem_bw = 1, .util = 0.5}, /* D */
	};
	const struct fit_node nodes[] = {{.cpus = 2, .mem_cap = 10}, {.cpus = 2, .mem_cap = 10}};
	const struct fit_place place[] = {{0, 0, 1}, {1, 0, 1}, {2, 0, 1},
	                                  {0, 1, 1}, {3, 1, 1}, {4, 1, 1}};
	const uint32_t off[] = {0, 3, 6};
	const struct fit_problem pb = {.njobs = 5,
	                               .nnodes = 2,
	                               .nslots = 2,
	                               .jobs = jobs,
	                               .nodes = nodes,
	                               .place = place,
	                               .nplace = 6,
	                               .node_off = off,
	                               .rotate = 1};
	uint8_t table[10];
	const uint8_t want[10] = {0, 1, 1, 0, 1, 0, 1, 0, 1, 0};
	assert_int_equal(fit_schedule(&pb, scratch, sizeof(scratch), table, NULL), 0);
	assert_memory_equal(table, want, 10);
	assert_capacity(&pb, table);
}

/* Random clusters: every job gets exactly ceil(U * nslots) slots per frame (none starves,
 * none gets more), CPUs never oversubscribed, slots identical on all of a job's nodes by
 * construction (one row per job) and checked against per-node capacity. */
static void test_random_no_starvation(void **state)
{
	(void)state;
	enum { NN = 24, NJ = 40, NS = 20, CPUS = 8 };
	static struct fit_job jobs[NJ];
	static struct fit_node nodes[NN];
	static struct fit_place place[NN * NJ];
	static uint32_t off[NN + 1];
	static uint8_t table[NJ * NS];
	static uint32_t got[NJ];
	static uint8_t on[NJ][NN];
	static uint32_t load[NN];

	for (uint64_t seed = 1; seed <= 30; seed++) {
		uint64_t rng = seed;
		memset(on, 0, sizeof(on));
		memset(load, 0, sizeof(load));
		for (uint32_t l = 0; l < NN; l++)
			nodes[l] = (struct fit_node){.cpus = CPUS, .mem_cap = 20, .net_cap = 10};
		for (uint32_t i = 0; i < NJ; i++) {
			jobs[i].mem_bw = 6 * sim_uniform(&rng);
			jobs[i].net_bw = 3 * sim_uniform(&rng);
			jobs[i].util = 0.05 + 0.45 * sim_uniform(&rng);
			uint32_t span = 1 + (uint32_t)(4 * sim_uniform(&rng));
			for (uint32_t s = 0; s < span; s++) {
				uint32_t l = (uint32_t)(NN * sim_uniform(&rng)) % NN;
				uint32_t need = fit_need(jobs[i].util, NS);
				/* keep each node at most 60 % loaded */
				if (load[l] + need * 2 > CPUS * NS * 6 / 10 || on[i][l])
					continue;
				on[i][l] = 1 + (sim_uniform(&rng) < 0.5);
				load[l] += need * on[i][l];
			}
		}
		uint32_t np = 0;
		for (uint32_t l = 0; l < NN; l++) {
			off[l] = np;
			for (uint32_t i = 0; i < NJ; i++)
				if (on[i][l])
					place[np++] = (struct fit_place){i, l, on[i][l]};
		}
		off[NN] = np;
		struct fit_problem pb = {.njobs = NJ,
		                         .nnodes = NN,
		                         .nslots = NS,
		                         .jobs = jobs,
		                         .nodes = nodes,
		                         .place = place,
		                         .nplace = np,
		                         .node_off = off,
		                         .rotate = (uint32_t)seed};
		assert_true(fit_scratch_bytes(NJ, NN, np) <= sizeof(scratch));
		assert_int_equal(fit_schedule(&pb, scratch, sizeof(scratch), table, got), 0);
		for (uint32_t i = 0; i < NJ; i++) {
			bool placed = false;
			for (uint32_t l = 0; l < NN; l++)
				placed |= on[i][l] != 0;
			assert_int_equal(got[i], placed ? fit_need(jobs[i].util, NS) : 0);
		}
		assert_capacity(&pb, table);
	}
}

static void test_bad_problems(void **state)
{
	(void)state;
	const struct fit_job jobs[] = {{.mem_bw = 1, .util = 0.5}};
	const struct fit_node nodes[] = {{.cpus = 2, .mem_cap = 10}};
	struct fit_place place[] = {{0, 0, 3}}; /* 3 procs on 2 CPUs */
	const uint32_t off[] = {0, 1};
	struct fit_problem pb = {.njobs = 1,
	                         .nnodes = 1,
	                         .nslots = 4,
	                         .jobs = jobs,
	                         .nodes = nodes,
	                         .place = place,
	                         .nplace = 1,
	                         .node_off = off};
	uint8_t table[4];
	assert_int_equal(fit_schedule(&pb, scratch, sizeof(scratch), table, NULL), -EINVAL);
	place[0].procs = 1;
	assert_int_equal(fit_schedule(&pb, scratch, 8, table, NULL), -EINVAL); /* scratch */
	place[0].node = 1;
	assert_int_equal(fit_schedule(&pb, scratch, sizeof(scratch), table, NULL), -EINVAL);
	place[0].node = 0;
	assert_int_equal(fit_schedule(&pb, scratch, sizeof(scratch), table, NULL), 0);
	assert_int_equal(table[0] + table[1] + table[2] + table[3], 2);

	/* the same job twice on one node (2 + 2 processes on 2 CPUs by the back door) */
	const struct fit_place dup[] = {{0, 0, 2}, {0, 0, 2}};
	const uint32_t offdup[] = {0, 2};
	struct fit_problem pbdup = pb;
	pbdup.place = dup;
	pbdup.nplace = 2;
	pbdup.node_off = offdup;
	assert_int_equal(fit_schedule(&pbdup, scratch, sizeof(scratch), table, NULL), -EINVAL);
	/* no processor left: a finite distance (to zero bandwidth), not a division by zero */
	assert_true(isfinite(fit_distance(&jobs[0], 10, 0, 0)));

	/* over-subscribed: two 2-process jobs at U = 0.75 on 2 CPUs, 4 slots: 3 + 3 > 4 */
	const struct fit_job j2[] = {{.mem_bw = 1, .util = 0.75}, {.mem_bw = 1, .util = 0.75}};
	const struct fit_place p2[] = {{0, 0, 2}, {1, 0, 2}};
	const uint32_t off2[] = {0, 2};
	struct fit_problem pb2 = {.njobs = 2,
	                          .nnodes = 1,
	                          .nslots = 4,
	                          .jobs = j2,
	                          .nodes = nodes,
	                          .place = p2,
	                          .nplace = 2,
	                          .node_off = off2};
	uint8_t t2[8];
	uint32_t got[2];
	assert_int_equal(fit_schedule(&pb2, scratch, sizeof(scratch), t2, got), -ENOSPC);
	assert_true(got[0] <= 3 && got[1] <= 3);
	assert_capacity(&pb2, t2);
}

static void test_need(void **state)
{
	(void)state;
	assert_int_equal(fit_need(0.5, 20), 10);
	assert_int_equal(fit_need(0.51, 20), 11);
	assert_int_equal(fit_need(0.3, 10), 3); /* 0.3 * 10 = 3.0000000000000004 */
	assert_int_equal(fit_need(0.001, 20), 1);
	assert_int_equal(fit_need(1.0, 20), 20);
	assert_int_equal(fit_need(0, 20), 0);
}

static void test_windows(void **state)
{
	(void)state;
	struct fit_window w[8];
	const uint8_t r1[] = {1, 1, 0, 1, 1, 1, 0, 0};
	assert_int_equal(fit_windows(r1, 8, w, 8), 2);
	assert_int_equal(w[0].phase, 0);
	assert_int_equal(w[0].len, 2);
	assert_int_equal(w[1].phase, 3);
	assert_int_equal(w[1].len, 3);
	/* wrap: slots 3, 4, 0 are one window from slot 3, 3 long */
	const uint8_t r2[] = {1, 0, 0, 1, 1};
	assert_int_equal(fit_windows(r2, 5, w, 8), 1);
	assert_int_equal(w[0].phase, 3);
	assert_int_equal(w[0].len, 3);
	const uint8_t r3[] = {1, 1, 1, 1};
	assert_int_equal(fit_windows(r3, 4, w, 8), 1);
	assert_int_equal(w[0].phase, 0);
	assert_int_equal(w[0].len, 4);
	const uint8_t r4[] = {0, 0, 0};
	assert_int_equal(fit_windows(r4, 3, w, 8), 0);
	const uint8_t r5[] = {1, 0, 1, 0, 1, 0};
	assert_int_equal(fit_windows(r5, 6, w, 2), -ENOSPC);
	assert_int_equal(fit_windows(r5, 6, w, 3), 3);
	assert_int_equal(w[2].phase, 4);

	struct fit_resv rv;
	struct fit_window x = {.phase = 3, .len = 3};
	fit_window_resv(&x, 5 * NSEC_PER_MSEC, 8, &rv);
	assert_int_equal(rv.period, 40 * NSEC_PER_MSEC);
	assert_int_equal(rv.phase, 15 * NSEC_PER_MSEC);
	assert_int_equal(rv.slice, 15 * NSEC_PER_MSEC);
	assert_int_equal(rv.deadline, 15 * NSEC_PER_MSEC);
}

static void test_classify(void **state)
{
	(void)state;
	struct fit_class_params p;
	fit_class_params_default(&p);
	const struct fit_node n = {.cpus = 2, .mem_cap = 20, .net_cap = 1}; /* share 10 */
	assert_int_equal(fit_classify_bw(6, &n, &p), FIT_DEVIL);
	assert_int_equal(fit_classify_bw(5, &n, &p), FIT_DEVIL);
	assert_int_equal(fit_classify_bw(3, &n, &p), FIT_SEMIDEVIL);
	assert_int_equal(fit_classify_bw(1, &n, &p), FIT_TURTLE);
	assert_int_equal(fit_classify_bw(NAN, &n, &p), FIT_UNKNOWN);
	assert_int_equal(fit_classify_bw(-1, &n, &p), FIT_UNKNOWN);
	/* paper 002: > 30 LLC misses per 10k instructions */
	assert_int_equal(fit_classify_missrate(31, 10000, &p), FIT_DEVIL);
	assert_int_equal(fit_classify_missrate(29, 10000, &p), FIT_TURTLE);
	assert_int_equal(fit_classify_missrate(5, 0, &p), FIT_UNKNOWN);
	assert_string_equal(fit_class_name(FIT_DEVIL), "devil");
	assert_string_equal(fit_class_name(FIT_TURTLE), "turtle");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_devils_paired_with_turtles),
	    cmocka_unit_test(test_network_heavy_split),
	    cmocka_unit_test(test_reduction_gang),
	    cmocka_unit_test(test_random_no_starvation),
	    cmocka_unit_test(test_bad_problems),
	    cmocka_unit_test(test_need),
	    cmocka_unit_test(test_windows),
	    cmocka_unit_test(test_classify),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
