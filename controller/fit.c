/*
 * fit (the fitness heuristic): MemBUS co-scheduling (papers/000, Fig. 3, Algorithms 1
 * and 2), extended to periodic frames with per-job shares, for the controller's gang mode
 * (DESIGN.md §5.2).
 *
 * For each slot k of the frame (slots_left = nslots - k):
 *  1. Local phase, every node l (Algorithm 2): P_rem = cpus, BW_rem = (M, N). Candidates
 *     are the node's jobs with slots still owed this frame (rem > 0). First the jobs that
 *     must run in every remaining slot to get their share (rem >= slots_left, "forced"),
 *     then the head of the rotated job list (no starvation), then repeatedly the candidate
 *     with procs <= P_rem whose per-process (mem, net) is nearest (Euclidean) to
 *     (BW_rem^M / P_rem, BW_rem^N / P_rem); BW_rem and P_rem shrink with each choice.
 *     (pairing FIT_PAIR_WORST takes the farthest instead, FIT_PAIR_OBLIVIOUS the next in
 *     the rotated list: baselines for benchmarks, bench/ and the coschedule `pairing` key.)
 *     S_l[i] = 1 for the chosen jobs.
 *  2. Reduction (Algorithm 1): S_total[i] = sum over nodes of S_l[i]; jobs with rem > 0
 *     are taken in order (forced first, then S_total decreasing, then list position) and
 *     admitted to slot k if they fit (procs <= P_rem) on EVERY node they span, so a job
 *     holds the same slots everywhere; admission goes on while processors remain.
 *  3. Jobs that ran move to the end of the list (Algorithm 1, line 5).
 * A job never gets more than need_i = ceil(U_i * nslots) slots per frame.
 * Cost per frame: O(nslots * (sum over nodes of c_l^2 + njobs log njobs + nplace)), c_l =
 * jobs on node l.
 *
 * When the greedy fill is short, a bounded repair search replaces the table: see
 * fit_search.c.
 */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fit.h"
#include "fit_search.h"

/* Squared distance: same order as the distance, no sqrt on the hot path. */
static double dist2(const struct fit_job *j, double m_ideal, double n_ideal)
{
	double dm = j->mem_bw - m_ideal;
	double dn = j->net_bw - n_ideal;
	return dm * dm + dn * dn;
}

double fit_distance(const struct fit_job *j, double mem_rem, double net_rem, uint32_t p_rem)
{
	if (p_rem == 0) /* no processor left: the ideal point is no bandwidth at all */
		return sqrt(dist2(j, 0, 0));
	return sqrt(dist2(j, mem_rem / p_rem, net_rem / p_rem));
}

struct scratch {
	uint32_t *order, *pos, *rem, *stotal, *cand, *job_off, *job_pl, *prem, *live;
	uint64_t *ptaken; /* per node: CPUs taken in the current slot (place_cpus) */
};

static size_t greedy_bytes(uint32_t njobs, uint32_t nnodes, uint32_t nplace)
{
	/* + nnodes u64 (and one u32 of padding to align them) */
	return sizeof(uint32_t) * (6 * (size_t)njobs + 1 + 2 * (size_t)nplace + nnodes + 1) +
	       sizeof(uint64_t) * (size_t)nnodes;
}

static int scratch_map(void *buf, size_t len, const struct fit_problem *pb, struct scratch *s)
{
	uint32_t *w = buf;
	size_t nj = pb->njobs;

	if (((uintptr_t)buf & (sizeof(uint32_t) - 1)) ||
	    len < greedy_bytes(pb->njobs, pb->nnodes, pb->nplace))
		return -EINVAL;
	s->order = w;
	s->pos = w + nj;
	s->rem = w + 2 * nj;
	s->stotal = w + 3 * nj;
	s->cand = w + 4 * nj;
	s->job_off = w + 5 * nj; /* nj + 1 */
	s->job_pl = w + 6 * nj + 1;
	s->prem = s->job_pl + pb->nplace;
	s->live = s->prem + pb->nnodes;
	{
		uintptr_t a = (uintptr_t)(s->live + pb->nplace);
		a = (a + sizeof(uint64_t) - 1) & ~(uintptr_t)(sizeof(uint64_t) - 1);
		s->ptaken = (uint64_t *)a;
	}
	return 0;
}

static int check_problem(const struct fit_problem *pb)
{
	if (!pb || !pb->jobs || !pb->nodes || !pb->node_off || (pb->nplace && !pb->place) ||
	    pb->nslots == 0 || pb->njobs == 0 || pb->nnodes == 0)
		return -EINVAL;
	if (pb->node_off[0] != 0 || pb->node_off[pb->nnodes] != pb->nplace ||
	    pb->pairing > FIT_PAIR_WORST)
		return -EINVAL;
	for (uint32_t i = 0; i < pb->njobs; i++)
		if (!(pb->jobs[i].util > 0 && pb->jobs[i].util <= 1) ||
		    !isfinite(pb->jobs[i].mem_bw) || !isfinite(pb->jobs[i].net_bw))
			return -EINVAL;
	for (uint32_t l = 0; l < pb->nnodes; l++) {
		if (pb->node_off[l] > pb->node_off[l + 1] || pb->nodes[l].cpus == 0)
			return -EINVAL;
		for (uint32_t k = pb->node_off[l]; k < pb->node_off[l + 1]; k++) {
			const struct fit_place *pl = &pb->place[k];
			if (pl->node != l || pl->job >= pb->njobs || pl->procs == 0 ||
			    pl->procs > pb->nodes[l].cpus)
				return -EINVAL;
			/* One entry per job and node: a second would bypass the CPU count. */
			for (uint32_t m = pb->node_off[l]; m < k; m++)
				if (pb->place[m].job == pl->job)
					return -EINVAL;
		}
	}
	return 0;
}

/* Placements grouped by job (counting sort), for the all-nodes fit test. */
static void index_by_job(const struct fit_problem *pb, struct scratch *s)
{
	memset(s->job_off, 0, sizeof(uint32_t) * (pb->njobs + 1));
	for (uint32_t k = 0; k < pb->nplace; k++)
		s->job_off[pb->place[k].job + 1]++;
	for (uint32_t i = 0; i < pb->njobs; i++)
		s->job_off[i + 1] += s->job_off[i];
	for (uint32_t i = 0; i < pb->njobs; i++)
		s->cand[i] = s->job_off[i];
	for (uint32_t k = 0; k < pb->nplace; k++)
		s->job_pl[s->cand[pb->place[k].job]++] = k;
}

/*
 * Algorithm 2 on node l for the current slot; adds the node's choices to S_total.
 * live[] (caller scratch, >= the node's placements) holds the node's candidates not yet
 * chosen; chosen ones are swap-removed, so every pass only scans what is left.
 */
static void local_phase(const struct fit_problem *pb, struct scratch *s, uint32_t l,
                        uint32_t slots_left, uint32_t *live)
{
	const struct fit_node *nd = &pb->nodes[l];
	uint32_t b = pb->node_off[l], e = pb->node_off[l + 1], n = 0, head = UINT32_MAX;
	uint32_t p_rem = nd->cpus;
	double mem_rem = nd->mem_cap, net_rem = nd->net_cap;
	uint64_t taken = 0; /* pinned CPUs of the choices so far */
#define PCPUS(k) (pb->place_cpus ? pb->place_cpus[k] : 0)

#define TAKE(k)                                                                                    \
	do {                                                                                       \
		const struct fit_place *pl_ = &pb->place[k];                                       \
		const struct fit_job *j_ = &pb->jobs[pl_->job];                                    \
		p_rem -= pl_->procs;                                                               \
		taken |= PCPUS(k);                                                                 \
		mem_rem -= pl_->procs * j_->mem_bw;                                                \
		net_rem -= pl_->procs * j_->net_bw;                                                \
		s->stotal[pl_->job]++;                                                             \
	} while (0)

	/* jobs that must run in every remaining slot to get their share go first; the
	 * others are candidates, the one earliest in the rotated list is the head */
	for (uint32_t k = b; k < e; k++) {
		uint32_t j = pb->place[k].job;
		if (s->rem[j] == 0)
			continue;
		if (s->rem[j] >= slots_left && pb->place[k].procs <= p_rem && !(PCPUS(k) & taken)) {
			TAKE(k);
			continue;
		}
		if (head == UINT32_MAX || s->pos[j] < s->pos[pb->place[live[head]].job])
			head = n;
		live[n++] = k;
	}
	/* the head of the rotated list always runs (no starvation) */
	if (head != UINT32_MAX && pb->place[live[head]].procs <= p_rem &&
	    !(PCPUS(live[head]) & taken)) {
		TAKE(live[head]);
		live[head] = live[--n];
	}
	/* then the best fit while processors remain */
	while (p_rem > 0 && n > 0) {
		uint32_t best = UINT32_MAX;
		double bestd = INFINITY, mi = mem_rem / p_rem, ni = net_rem / p_rem;
		for (uint32_t x = 0; x < n; x++) {
			const struct fit_place *pl = &pb->place[live[x]];
			if (pl->procs > p_rem || (PCPUS(live[x]) & taken))
				continue;
			double d = dist2(&pb->jobs[pl->job], mi, ni);
			if (pb->pairing == FIT_PAIR_WORST)
				d = -d; /* farthest first */
			else if (pb->pairing == FIT_PAIR_OBLIVIOUS)
				d = 0; /* ties everywhere: list order decides */
			if (d < bestd || (d == bestd && best != UINT32_MAX &&
			                  s->pos[pl->job] < s->pos[pb->place[live[best]].job])) {
				bestd = d;
				best = x;
			}
		}
		if (best == UINT32_MAX)
			break;
		TAKE(live[best]);
		live[best] = live[--n];
	}
#undef TAKE
#undef PCPUS
}

struct order_ctx {
	const struct scratch *s;
	uint32_t slots_left;
};

/* Reduction order: forced first, then S_total decreasing, then list position (a total
 * order: positions are distinct, so qsort's instability does not matter). */
static int cmp_reduction(const void *pa, const void *pb, void *arg)
{
	const struct order_ctx *c = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	bool fa = c->s->rem[a] >= c->slots_left, fb = c->s->rem[b] >= c->slots_left;
	if (fa != fb)
		return fa ? -1 : 1;
	if (c->s->stotal[a] != c->s->stotal[b])
		return c->s->stotal[a] > c->s->stotal[b] ? -1 : 1;
	return c->s->pos[a] < c->s->pos[b] ? -1 : (c->s->pos[a] > c->s->pos[b]);
}

static bool fits_everywhere(const struct fit_problem *pb, const struct scratch *s, uint32_t j)
{
	for (uint32_t x = s->job_off[j]; x < s->job_off[j + 1]; x++) {
		const struct fit_place *pl = &pb->place[s->job_pl[x]];
		if (pl->procs > s->prem[pl->node])
			return false;
		if (pb->place_cpus && (pb->place_cpus[s->job_pl[x]] & s->ptaken[pl->node]))
			return false;
	}
	return true;
}

/* Algorithms 1 and 2 over the frame, slot by slot (the file's head comment); fills table and
 * leaves in s->rem[i] the slots job i is still short of. Deterministic. */
static void greedy_fill(const struct fit_problem *pb, struct scratch *sp, uint8_t *table)
{
	struct scratch s = *sp;
	uint32_t nj = pb->njobs, ns = pb->nslots;

	for (uint32_t i = 0; i < nj; i++) {
		s.order[i] = (pb->rotate + i) % nj;
		s.pos[s.order[i]] = i;
		s.rem[i] = fit_need(pb->jobs[i].util, ns);
		if (s.job_off[i] == s.job_off[i + 1])
			s.rem[i] = 0; /* placed nowhere: nothing to schedule */
	}
	memset(table, 0, (size_t)nj * ns);

	for (uint32_t k = 0; k < ns; k++) {
		uint32_t slots_left = ns - k, nc = 0;

		memset(s.stotal, 0, sizeof(uint32_t) * nj);
		for (uint32_t l = 0; l < pb->nnodes; l++)
			local_phase(pb, &s, l, slots_left, s.live);

		/* candidates: every job still owed slots, in reduction order */
		for (uint32_t i = 0; i < nj; i++)
			if (s.rem[i] > 0)
				s.cand[nc++] = i;
		struct order_ctx oc = {.s = &s, .slots_left = slots_left};
		qsort_r(s.cand, nc, sizeof(uint32_t), cmp_reduction, &oc);
		for (uint32_t l = 0; l < pb->nnodes; l++) {
			s.prem[l] = pb->nodes[l].cpus;
			s.ptaken[l] = 0;
		}
		for (uint32_t c = 0; c < nc; c++) {
			uint32_t j = s.cand[c];
			if (!fits_everywhere(pb, &s, j))
				continue;
			for (uint32_t x = s.job_off[j]; x < s.job_off[j + 1]; x++) {
				const struct fit_place *pl = &pb->place[s.job_pl[x]];
				s.prem[pl->node] -= pl->procs;
				if (pb->place_cpus)
					s.ptaken[pl->node] |= pb->place_cpus[s.job_pl[x]];
			}
			table[(size_t)j * ns + k] = 1;
			s.rem[j]--;
		}
		/* jobs that ran go to the end of the list, others keep their order */
		uint32_t w = 0;
		for (uint32_t i = 0; i < nj; i++)
			if (!table[(size_t)s.order[i] * ns + k])
				s.cand[w++] = s.order[i];
		for (uint32_t i = 0; i < nj; i++)
			if (table[(size_t)s.order[i] * ns + k])
				s.cand[w++] = s.order[i];
		for (uint32_t i = 0; i < nj; i++) {
			s.order[i] = s.cand[i];
			s.pos[s.order[i]] = i;
		}
	}
}

size_t fit_scratch_bytes(uint32_t njobs, uint32_t nnodes, uint32_t nplace)
{
	/* greedy state, up to 7 bytes to align the search state, the search state */
	return greedy_bytes(njobs, nnodes, nplace) + sizeof(uint64_t) - 1 +
	       fit_search_bytes(njobs, nnodes, FIT_MAX_SLOTS);
}

int fit_schedule(const struct fit_problem *pb, void *scratch, size_t scratch_len, uint8_t *table,
                 uint32_t *got)
{
	struct scratch s;
	int rc = check_problem(pb);

	if (rc || !table)
		return -EINVAL;
	if (scratch_map(scratch, scratch_len, pb, &s))
		return -EINVAL;
	index_by_job(pb, &s);
	greedy_fill(pb, &s, table);
	rc = 0;
	for (uint32_t i = 0; i < pb->njobs; i++)
		if (s.rem[i] > 0)
			rc = -ENOSPC;
	if (rc) {
		/* the search state follows the greedy state (scratch_map checked len >= g) */
		size_t g = greedy_bytes(pb->njobs, pb->nnodes, pb->nplace);
		int sr = fit_search(pb, s.job_off, s.job_pl, (uint8_t *)scratch + g,
		                    scratch_len - g, table);
		if (sr == 0)
			rc = 0;
		else if (sr == -ENOSPC)
			greedy_fill(pb, &s, table); /* best effort: the greedy table */
		/* -EINVAL: no room for the search state, table untouched: the greedy fill */
	}
	for (uint32_t i = 0; got && i < pb->njobs; i++) {
		uint32_t g = 0;
		for (uint32_t k = 0; k < pb->nslots; k++)
			g += table[(size_t)i * pb->nslots + k];
		got[i] = g;
	}
	return rc;
}

int fit_windows(const uint8_t *row, uint32_t nslots, struct fit_window *out, uint32_t max)
{
	uint32_t n = 0, start;

	if (!row || nslots == 0)
		return -EINVAL;
	/* start scanning just after a free slot so that a run crossing the frame end is one
	 * window; a row with every slot set is one window of nslots. */
	for (start = 0; start < nslots; start++)
		if (!row[start])
			break;
	if (start == nslots) {
		if (max < 1)
			return -ENOSPC;
		out[0].phase = 0;
		out[0].len = nslots;
		return 1;
	}
	for (uint32_t i = 1; i <= nslots; i++) {
		uint32_t k = (start + i) % nslots;
		if (!row[k])
			continue;
		uint32_t prev = (k + nslots - 1) % nslots;
		if (row[prev] && n > 0) {
			out[n - 1].len++;
			continue;
		}
		if (n >= max)
			return -ENOSPC;
		out[n].phase = k;
		out[n].len = 1;
		n++;
	}
	/* by phase */
	for (uint32_t a = 1; a < n; a++)
		for (uint32_t b = a; b > 0 && out[b].phase < out[b - 1].phase; b--) {
			struct fit_window t = out[b];
			out[b] = out[b - 1];
			out[b - 1] = t;
		}
	return (int)n;
}

void fit_window_resv(const struct fit_window *w, mono_ns slot_ns, uint32_t nslots,
                     struct fit_resv *out)
{
	out->period = slot_ns * nslots;
	out->phase = slot_ns * w->phase;
	out->slice = slot_ns * w->len;
	out->deadline = out->slice;
}

const char *const fit_pairing_names[] = {"fitness", "oblivious", "worst", NULL};

const char *fit_pairing_name(uint8_t pairing)
{
	return pairing <= FIT_PAIR_WORST ? fit_pairing_names[pairing] : "?";
}
