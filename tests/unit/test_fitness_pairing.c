/*
 * Pairing properties of the MemBUS co-scheduler (controller/fit.c) that the co-scheduling
 * simulation (bench/cosched_sim.c) relies on and test_fitness.c does not check: full load
 * (sum of shares = CPUs) never starves a job, whatever the rotation; on paper 000's
 * platform (4 nodes x 2 CPUs) a memory-heavy job is paired with a light one in every slot;
 * and when a light job heads the list, the heavy job is picked only if the bus left over
 * is nearer to it (Fig. 3), which is why some workloads get light+light slots.
 */
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

static uint64_t scratch[1 << 12];

/*
 * One node, C CPUs, single-process jobs whose needs add up to exactly C * nslots (no idle
 * CPU-slot to spare), random bandwidths, every rotation: every job gets exactly its need
 * and every slot runs exactly C jobs. (test_fitness.c's random test loads nodes to 60 %.)
 * Why it holds: each slot runs the forced jobs (rem = slots left) and fills the other CPUs;
 * with sum rem = C * slots_left and rem <= slots_left, exactly C jobs have rem > 0 or more,
 * so after the slot the same two invariants hold again.
 */
static void test_full_load_no_starvation(void **state)
{
	(void)state;
	enum { MAXJ = 12, MAXS = 16 };
	struct fit_job jobs[MAXJ];
	struct fit_place place[MAXJ];
	uint8_t table[MAXJ * MAXS];
	uint32_t got[MAXJ], need[MAXJ];
	uint32_t runs = 0;

	for (uint64_t seed = 1; seed <= 400; seed++) {
		uint64_t rng = seed;
		uint32_t cpus = 1 + (uint32_t)(4 * sim_uniform(&rng)) % 4;
		uint32_t ns = 2 + (uint32_t)((MAXS - 1) * sim_uniform(&rng)) % (MAXS - 1);
		/* cpus <= nj <= min(MAXJ, cpus * ns) jobs; needs in [1, ns] adding up to cpus * ns
		 */
		uint32_t nj = cpus + (uint32_t)((MAXJ - cpus + 1) * sim_uniform(&rng));
		if (nj > MAXJ)
			nj = MAXJ;
		if (nj > cpus * ns)
			nj = cpus * ns;
		uint32_t left = cpus * ns - nj;
		for (uint32_t i = 0; i < nj; i++)
			need[i] = 1;
		while (left > 0) {
			uint32_t i = (uint32_t)(nj * sim_uniform(&rng)) % nj;
			if (need[i] < ns) {
				need[i]++;
				left--;
			}
		}
		for (uint32_t i = 0; i < nj; i++) {
			jobs[i] = (struct fit_job){.mem_bw = 10 * sim_uniform(&rng),
			                           .net_bw = 5 * sim_uniform(&rng),
			                           .util = (double)need[i] / ns};
			place[i] = (struct fit_place){.job = i, .node = 0, .procs = 1};
			assert_int_equal(fit_need(jobs[i].util, ns), need[i]);
		}
		const struct fit_node node = {.cpus = cpus, .mem_cap = 12, .net_cap = 6};
		const uint32_t off[] = {0, nj};
		for (uint32_t rot = 0; rot < nj; rot++) {
			const struct fit_problem pb = {.njobs = nj,
			                               .nnodes = 1,
			                               .nslots = ns,
			                               .jobs = jobs,
			                               .nodes = &node,
			                               .place = place,
			                               .nplace = nj,
			                               .node_off = off,
			                               .rotate = rot};
			assert_int_equal(fit_schedule(&pb, scratch, sizeof(scratch), table, got),
			                 0);
			for (uint32_t i = 0; i < nj; i++)
				assert_int_equal(got[i], need[i]);
			for (uint32_t k = 0; k < ns; k++) {
				uint32_t used = 0;
				for (uint32_t i = 0; i < nj; i++)
					used += table[i * ns + k];
				assert_int_equal(used, cpus);
			}
			runs++;
		}
	}
	assert_true(runs > 500);
}

/* Paper 000's platform: 4 nodes x 2 CPUs, each job one process on every node. */
enum { PN = 4, PJ = 4, PS = 8 };

struct paper_pb {
	struct fit_job jobs[PJ];
	struct fit_node nodes[PN];
	struct fit_place place[PN * PJ];
	uint32_t off[PN + 1];
	struct fit_problem pb;
};

static void paper_init(struct paper_pb *p, const double *mem, double m_cap, uint32_t nslots)
{
	for (uint32_t i = 0; i < PJ; i++)
		p->jobs[i] = (struct fit_job){.mem_bw = mem[i], .net_bw = 0, .util = 0.5};
	for (uint32_t l = 0; l < PN; l++) {
		p->nodes[l] = (struct fit_node){.cpus = 2, .mem_cap = m_cap, .net_cap = 250};
		p->off[l] = l * PJ;
		for (uint32_t i = 0; i < PJ; i++)
			p->place[l * PJ + i] = (struct fit_place){.job = i, .node = l, .procs = 1};
	}
	p->off[PN] = PN * PJ;
	p->pb = (struct fit_problem){.njobs = PJ,
	                             .nnodes = PN,
	                             .nslots = nslots,
	                             .jobs = p->jobs,
	                             .nodes = p->nodes,
	                             .place = p->place,
	                             .nplace = PN * PJ,
	                             .node_off = p->off};
}

/*
 * 2x CG (674 MB/s) + 2x EP (162 MB/s), paper 000 Fig. 1; M = 700, U = 0.5, 8 slots.
 * Head CG: P_rem 1, BW_rem^M = 26 -> |EP-26| = 136 < |CG-26| = 648 -> EP.
 * Head EP: BW_rem^M = 538 -> |CG-538| = 136 < |EP-538| = 376 -> CG.
 * Every node decides the same (same jobs, same list), S_total = 4 for the pair, so in every
 * slot of every rotation each node runs one CG and one EP (bus 836 instead of 1348 and
 * 324), and each job gets 4 of the 8 slots.
 */
static void test_paper_heavy_with_light(void **state)
{
	(void)state;
	const double mem[PJ] = {674, 674, 162, 162}; /* CG1 CG2 EP1 EP2 */
	struct paper_pb p;
	uint8_t table[PJ * PS];
	uint32_t got[PJ];

	paper_init(&p, mem, 700, PS);
	for (uint32_t rot = 0; rot < 2 * PJ; rot++) {
		p.pb.rotate = rot;
		assert_int_equal(fit_schedule(&p.pb, scratch, sizeof(scratch), table, got), 0);
		for (uint32_t i = 0; i < PJ; i++)
			assert_int_equal(got[i], PS / 2);
		for (uint32_t k = 0; k < PS; k++) {
			uint32_t heavy = table[0 * PS + k] + table[1 * PS + k];
			uint32_t light = table[2 * PS + k] + table[3 * PS + k];
			assert_int_equal(heavy, 1);
			assert_int_equal(light, 1);
		}
	}
}

/*
 * The Fig. 3 crossover with a light head X (CG = 674, one free CPU): the ideal point is
 * M - X, so CG is picked only if |674 - (M - X)| < |X - (M - X)|.
 * IS (475), M = 700: ideal 225, |IS-225| = 250 < |CG-225| = 449 -> IS + IS in slot 0.
 * IS, M = 1200: ideal 725, |CG-725| = 51 < |IS-725| = 250 -> CG + IS.
 * rotate = 2: list IS1 IS2 CG1 CG2, head IS1; 8 slots, so nothing is forced in slot 0.
 */
static void test_light_head_crossover(void **state)
{
	(void)state;
	const double mem[PJ] = {674, 674, 475, 475}; /* CG1 CG2 IS1 IS2 */
	struct paper_pb p;
	uint8_t table[PJ * PS];

	paper_init(&p, mem, 700, PS);
	p.pb.rotate = 2;
	assert_int_equal(fit_schedule(&p.pb, scratch, sizeof(scratch), table, NULL), 0);
	assert_true(table[2 * PS + 0] && table[3 * PS + 0]);
	assert_false(table[0 * PS + 0] || table[1 * PS + 0]);

	paper_init(&p, mem, 1200, PS);
	p.pb.rotate = 2;
	assert_int_equal(fit_schedule(&p.pb, scratch, sizeof(scratch), table, NULL), 0);
	assert_true(table[2 * PS + 0] && table[0 * PS + 0]);
	/* and then the rotation keeps alternating: one CG and one IS in every slot */
	for (uint32_t k = 0; k < PS; k++) {
		assert_int_equal(table[0 * PS + k] + table[1 * PS + k], 1);
		assert_int_equal(table[2 * PS + k] + table[3 * PS + k], 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_full_load_no_starvation),
	    cmocka_unit_test(test_paper_heavy_with_light),
	    cmocka_unit_test(test_light_head_crossover),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
