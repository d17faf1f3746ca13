/*
 * Repair search of fit_schedule() (fit.c): a complete slot table when the greedy fill
 * of papers/000's Algorithms 1 and 2 leaves a job short. Contract in fit_search.h.
 *
 * When the greedy fill is short. The fill has no look-ahead: it can spend a slot on jobs
 * that could have run elsewhere (single-node jobs in the one slot two gangs sharing a node
 * could each pair with them, a CPU left idle beside a 2-process job, a free CPU in a slot
 * where only the job pinned to the other CPU was owed time) and leave a job short although
 * a complete table (every job exactly need_i) exists. Then, and only then, a repair search
 * replaces the table; a complete greedy table is returned as it is (Algorithms 1 and 2
 * unchanged). Slots are interchangeable (coplan.c reorders them), so the search places
 * one job at a time as counts over classes of slots holding the same jobs so far (the job
 * takes the first slots of each class, which splits it), trying the most constrained job
 * next (least slack: slots it still fits in - need; ties: largest share of its nodes'
 * CPU-slots) and the emptiest classes first (most CPUs left on the job's nodes: spreads
 * the load), with forward checks (per node, CPU-slots left >= demand left; every job
 * left fits in >= need slots) and, before it starts, per node the CPU-slots and per
 * pinned CPU the slots its placements need. Every complete table is one path of this
 * enumeration up to the order of slots, so a search that ends proves there is none.
 * Bound: FIT_SEARCH_WORK (2^21) elementary steps (each try is charged for the placements
 * it checks and the slots it scans or sets, so one call costs O(FIT_SEARCH_WORK + nslots *
 * (nnodes + njobs))), a few ms, plus a second greedy fill when it gives up. Completeness
 * holds within that bound only: the problem is NP-hard (it contains bin packing, and graph
 * colouring through the pins), so a polynomial bound cannot be complete unless P = NP. Measured
 * (tests/unit/test_fitness_complete.c): every feasible problem of 5000 random small ones (2-3 nodes
 * of 2 CPUs, 3-6 jobs, 4-8 slots, against a brute-force oracle) is solved; of planted, 80-87 %
 * loaded problems of 4 x 8 CPUs with 30-40 gang jobs and 20-64 slots, 177 and 113 of 200 (the
 * greedy alone: 88 and 26). Not found within the bound: -ENOSPC with the greedy table, as before.
 * The search ignores bandwidth: a repaired table keeps the shares, not the MemBUS pairing.
 */
#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fit_search.h"

/* State of the search for nslots slots, mapped in the buffer fit_search() is given. */
struct search {
	const struct fit_problem *pb;
	const uint32_t *job_off, *job_pl; /* placements by job (the greedy fill's index) */
	uint8_t *table;
	uint32_t nj, nn, ns, njord;
	uint32_t *prem;  /* ns * nn: CPUs of node l free in slot k */
	uint64_t *taken; /* ns * nn: pinned CPUs of node l in use in slot k */
	uint64_t *nfree; /* nn: sum of prem over the slots */
	uint64_t *ndem;  /* nn: CPU-slots the jobs not yet placed still need there */
	uint32_t *bnd;   /* ns: search level whose job split a class at slot k (NONE: none) */
	uint32_t *cls;   /* ns: class starts (slot order, then trial order) */
	uint32_t *sz;    /* ns, by class start: slots in the class */
	uint32_t *cnt;   /* ns, by class start: slots the level's job takes in it */
	double *key;     /* ns, by class start: trial order of classes */
	uint32_t *jord;  /* nj: search order of the jobs with need > 0 */
	uint32_t *need;  /* nj */
	uint64_t work;   /* elementary steps so far, against FIT_SEARCH_WORK */
};

#define NONE UINT32_MAX

size_t fit_search_bytes(uint32_t njobs, uint32_t nnodes, uint32_t nslots)
{
	size_t sn = (size_t)nslots * nnodes;
	/* u64/double arrays first (8-aligned), then u32 */
	return sizeof(uint64_t) * (sn + 2 * (size_t)nnodes + nslots) +
	       sizeof(uint32_t) * (sn + 4 * (size_t)nslots + 2 * (size_t)njobs);
}

/* Maps the search state at buf (rounded up to 8 bytes); false if the buffer is too small. */
static bool search_map(struct search *se, void *buf, size_t len, const struct fit_problem *pb)
{
	uintptr_t a = (uintptr_t)buf, e = a + len;
	size_t sn = (size_t)pb->nslots * pb->nnodes;

	a = (a + sizeof(uint64_t) - 1) & ~(uintptr_t)(sizeof(uint64_t) - 1);
	if (pb->nslots > FIT_MAX_SLOTS || a > e ||
	    e - a < fit_search_bytes(pb->njobs, pb->nnodes, pb->nslots))
		return false;
	se->taken = (uint64_t *)a;
	se->nfree = se->taken + sn;
	se->ndem = se->nfree + pb->nnodes;
	se->key = (double *)(se->ndem + pb->nnodes);
	se->prem = (uint32_t *)(se->key + pb->nslots);
	se->bnd = se->prem + sn;
	se->cls = se->bnd + pb->nslots;
	se->sz = se->cls + pb->nslots;
	se->cnt = se->sz + pb->nslots;
	se->jord = se->cnt + pb->nslots;
	se->need = se->jord + pb->njobs;
	return true;
}

/* Job j fits in slot k on every node it spans (CPUs and pins). */
static bool se_fits(struct search *se, uint32_t j, uint32_t k)
{
	const struct fit_problem *pb = se->pb;
	for (uint32_t x = se->job_off[j]; x < se->job_off[j + 1]; x++) {
		uint32_t pk = se->job_pl[x];
		size_t c = (size_t)k * se->nn + pb->place[pk].node;
		se->work++;
		if (pb->place[pk].procs > se->prem[c])
			return false;
		if (pb->place_cpus && (pb->place_cpus[pk] & se->taken[c]))
			return false;
	}
	return true;
}

/* Puts job j into slot k (on = true) or takes it out. */
static void se_put(struct search *se, uint32_t j, uint32_t k, bool on)
{
	const struct fit_problem *pb = se->pb;
	for (uint32_t x = se->job_off[j]; x < se->job_off[j + 1]; x++) {
		uint32_t pk = se->job_pl[x];
		uint32_t l = pb->place[pk].node, p = pb->place[pk].procs;
		size_t c = (size_t)k * se->nn + l;
		uint64_t cpus = pb->place_cpus ? pb->place_cpus[pk] : 0;
		if (on) {
			assert(se->prem[c] >= p && !(se->taken[c] & cpus));
			se->prem[c] -= p;
			se->taken[c] |= cpus;
			se->nfree[l] -= p;
		} else {
			se->prem[c] += p;
			se->taken[c] &= ~cpus; /* pins of one slot are disjoint (se_fits) */
			se->nfree[l] += p;
		}
	}
	se->table[(size_t)j * se->ns + k] = on;
	se->work++;
}

/* The job's outstanding demand on its nodes, added (sign +1) or removed (-1). */
static void se_demand(struct search *se, uint32_t j, int sign)
{
	const struct fit_problem *pb = se->pb;
	for (uint32_t x = se->job_off[j]; x < se->job_off[j + 1]; x++) {
		const struct fit_place *pl = &pb->place[se->job_pl[x]];
		uint64_t d = (uint64_t)se->need[j] * pl->procs;
		if (sign > 0)
			se->ndem[pl->node] += d;
		else
			se->ndem[pl->node] -= d;
	}
}

/* Class starts at search level d (slot order) into cls[], their sizes into sz[]. */
static uint32_t se_classes(struct search *se, uint32_t d)
{
	uint32_t m = 0;
	for (uint32_t k = 0; k < se->ns; k++)
		if (k == 0 || se->bnd[k] < d) {
			if (m > 0)
				se->sz[se->cls[m - 1]] = k - se->cls[m - 1];
			se->cls[m++] = k;
		}
	se->sz[se->cls[m - 1]] = se->ns - se->cls[m - 1];
	se->work += se->ns;
	return m;
}

static int cmp_class(const void *pa, const void *pb, void *arg)
{
	const double *key = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	if (key[a] != key[b])
		return key[a] < key[b] ? -1 : 1;
	return a < b ? -1 : (a > b);
}

/*
 * Level d of the search: the first (first = true) or the next way to give job jord[d] its
 * need slots over the classes left by levels < d; the previous way is taken out first.
 * Classes are tried emptiest first (most CPUs left on the job's nodes after it), count
 * vectors in decreasing lexicographic order, so the first try fills the emptiest classes.
 * Returns false when no way is left (the job is then out of the table).
 */
static bool se_level(struct search *se, uint32_t d, bool first)
{
	uint32_t j = se->jord[d], m = se_classes(se, d), nf = 0;
	uint64_t cap = 0;

	for (uint32_t c = 0; c < m; c++) {
		uint32_t a = se->cls[c], n = 0;
		for (uint32_t k = a; !first && k < a + se->sz[a]; k++)
			n += se->table[(size_t)j * se->ns + k];
		se->cnt[a] = n;
	}
	if (!first) {
		for (uint32_t k = 0; k < se->ns; k++) {
			if (se->table[(size_t)j * se->ns + k])
				se_put(se, j, k, false);
			if (se->bnd[k] == d)
				se->bnd[k] = NONE;
		}
		se_demand(se, j, +1);
	}
	/* classes j fits in, by how full they would be */
	for (uint32_t c = 0; c < m; c++) {
		uint32_t a = se->cls[c];
		if (!se_fits(se, j, a)) {
			assert(se->cnt[a] == 0);
			continue;
		}
		double left = 0;
		for (uint32_t x = se->job_off[j]; x < se->job_off[j + 1]; x++) {
			const struct fit_place *pl = &se->pb->place[se->job_pl[x]];
			left += (double)(se->prem[(size_t)a * se->nn + pl->node] - pl->procs) /
			        se->pb->nodes[pl->node].cpus;
		}
		se->key[a] = -left; /* emptiest first */
		se->cls[nf++] = a;
		cap += se->sz[a];
	}
	if (cap < se->need[j])
		return false;
	qsort_r(se->cls, nf, sizeof(uint32_t), cmp_class, se->key);
	se->work += (uint64_t)nf * 4;
	if (first) {
		uint32_t left = se->need[j];
		for (uint32_t c = 0; c < nf; c++) {
			uint32_t a = se->cls[c], n = se->sz[a] < left ? se->sz[a] : left;
			se->cnt[a] = n;
			left -= n;
		}
	} else {
		/* next vector: the last class that can hand one slot on to the classes after
		 * it does so, and those are refilled greedily */
		uint64_t tail = 0, tailcap = 0;
		uint32_t p = nf;
		while (p-- > 0) {
			uint32_t a = se->cls[p];
			if (se->cnt[a] > 0 && tailcap >= tail + 1)
				break;
			tail += se->cnt[a];
			tailcap += se->sz[a];
		}
		if (p == UINT32_MAX)
			return false;
		se->cnt[se->cls[p]]--;
		tail++;
		for (uint32_t c = p + 1; c < nf; c++) {
			uint32_t a = se->cls[c];
			uint32_t n = se->sz[a] < tail ? se->sz[a] : (uint32_t)tail;
			se->cnt[a] = n;
			tail -= n;
		}
		assert(tail == 0);
	}
	for (uint32_t c = 0; c < nf; c++) {
		uint32_t a = se->cls[c], n = se->cnt[a];
		for (uint32_t k = a; k < a + n; k++)
			se_put(se, j, k, true);
		if (n > 0 && n < se->sz[a])
			se->bnd[a + n] = d; /* the class splits: with j | without j */
	}
	se_demand(se, j, -1);
	return true;
}

/*
 * After level d: can every job of the levels after d still be completed? Per node, the
 * CPU-slots left cover the demand left; every job fits in at least need slots. If so, the
 * job with the least slack (slots it fits in - need; earliest in jord on ties) is moved to
 * level d + 1: the most constrained job is placed next.
 */
static bool se_viable(struct search *se, uint32_t d)
{
	uint32_t best = NONE, bslack = NONE;

	for (uint32_t l = 0; l < se->nn; l++)
		if (se->ndem[l] > se->nfree[l])
			return false;
	uint32_t m = se_classes(se, d + 1);
	for (uint32_t e = d + 1; e < se->njord; e++) {
		uint32_t j = se->jord[e], n = 0;
		uint64_t enough = (uint64_t)se->need[j] + bslack; /* more does not change best */
		for (uint32_t c = 0; c < m && n < enough; c++)
			if (se_fits(se, j, se->cls[c]))
				n += se->sz[se->cls[c]];
		if (n < se->need[j])
			return false;
		if (n - se->need[j] < bslack) {
			bslack = n - se->need[j];
			best = e;
		}
	}
	if (best != NONE) {
		uint32_t j = se->jord[best];
		memmove(&se->jord[d + 2], &se->jord[d + 1], sizeof(uint32_t) * (best - d - 1));
		se->jord[d + 1] = j;
	}
	return true;
}

/* Initial search order (se_viable then picks the most constrained job): largest share of
 * the node CPU-slots first, then most nodes, then job index. */
static double se_weight(const struct search *se, uint32_t j)
{
	double w = 0;
	for (uint32_t x = se->job_off[j]; x < se->job_off[j + 1]; x++) {
		const struct fit_place *pl = &se->pb->place[se->job_pl[x]];
		w += (double)se->need[j] * pl->procs / se->pb->nodes[pl->node].cpus;
	}
	return w;
}

static bool se_before(const struct search *se, uint32_t a, uint32_t b)
{
	double wa = se_weight(se, a), wb = se_weight(se, b);
	uint32_t na = se->job_off[a + 1] - se->job_off[a];
	uint32_t nb = se->job_off[b + 1] - se->job_off[b];
	if (wa != wb)
		return wa > wb;
	if (na != nb)
		return na > nb;
	return a < b;
}

/* Quick necessary conditions: per node, CPU-slots; per pinned CPU, the placements pinned
 * to it (pairwise exclusive) need at most nslots together. */
static bool se_possible(struct search *se)
{
	const struct fit_problem *pb = se->pb;
	for (uint32_t l = 0; l < se->nn; l++) {
		if (se->ndem[l] > se->nfree[l])
			return false;
		for (uint32_t c = 0; pb->place_cpus && c < 64; c++) {
			uint64_t sum = 0;
			for (uint32_t x = pb->node_off[l]; x < pb->node_off[l + 1]; x++)
				if (pb->place_cpus[x] >> c & 1)
					sum += se->need[pb->place[x].job];
			if (sum > se->ns)
				return false;
		}
	}
	return true;
}

/*
 * Looks for a complete table (every job exactly its need). Returns true with it in
 * se->table; false if there is none (the search ended) or FIT_SEARCH_WORK ran out, the
 * table then holds garbage.
 */
static bool search_run(struct search *se)
{
	const struct fit_problem *pb = se->pb;
	uint32_t nj = se->nj;

	memset(se->table, 0, (size_t)nj * se->ns);
	memset(se->ndem, 0, sizeof(uint64_t) * se->nn);
	for (uint32_t l = 0; l < se->nn; l++) {
		se->nfree[l] = (uint64_t)pb->nodes[l].cpus * se->ns;
		for (uint32_t k = 0; k < se->ns; k++) {
			se->prem[(size_t)k * se->nn + l] = pb->nodes[l].cpus;
			se->taken[(size_t)k * se->nn + l] = 0;
		}
	}
	for (uint32_t k = 0; k < se->ns; k++)
		se->bnd[k] = NONE;
	se->njord = 0;
	for (uint32_t i = 0; i < nj; i++) {
		se->need[i] =
		    se->job_off[i] == se->job_off[i + 1] ? 0 : fit_need(pb->jobs[i].util, se->ns);
		if (se->need[i] == 0)
			continue;
		se_demand(se, i, +1);
		uint32_t p = se->njord++;
		for (; p > 0 && se_before(se, i, se->jord[p - 1]); p--)
			se->jord[p] = se->jord[p - 1];
		se->jord[p] = i;
	}
	if (se->njord == 0)
		return true;
	if (!se_possible(se))
		return false;

	uint32_t d = 0;
	bool first = true;
	se->work = 0;
	while (se->work < FIT_SEARCH_WORK) {
		if (!se_level(se, d, first)) {
			if (d == 0)
				return false; /* exhausted: no complete table */
			d--;
			first = false;
			continue;
		}
		if (!se_viable(se, d)) {
			first = false;
			continue;
		}
		if (d + 1 == se->njord)
			return true;
		d++;
		first = true;
	}
	return false;
}

int fit_search(const struct fit_problem *pb, const uint32_t *job_off, const uint32_t *job_pl,
               void *buf, size_t len, uint8_t *table)
{
	struct search se;

	if (!search_map(&se, buf, len, pb))
		return -EINVAL;
	se.pb = pb;
	se.job_off = job_off;
	se.job_pl = job_pl;
	se.table = table;
	se.nj = pb->njobs;
	se.nn = pb->nnodes;
	se.ns = pb->nslots;
	return search_run(&se) ? 0 : -ENOSPC;
}
