/*
 * Co-scheduling plans: slot table -> windows, CPU colouring check, choice of the number of
 * sub-frames. See coplan.h for the contract and docs/coschedule.md for the design.
 */
#include "coplan.h"

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct run {
	uint32_t phase, span, slots; /* in slots: start, length covered, slots held */
};

int coplan_row_windows(const uint8_t *row, uint32_t nslots, mono_ns slot_ns, struct vsp_resv *out,
                       uint32_t max, bool *merged)
{
	struct fit_window fw[COPLAN_MAX_SLOTS / 2 + 2];
	struct run r[COPLAN_MAX_SLOTS / 2 + 2];
	uint32_t n = 0;
	int nw;

	if (!row || !out || nslots == 0 || nslots > COPLAN_MAX_SLOTS || max == 0 || slot_ns == 0)
		return -EINVAL;
	if (merged)
		*merged = false;
	nw = fit_windows(row, nslots, fw, COPLAN_MAX_SLOTS / 2 + 1);
	if (nw < 0)
		return -EINVAL; /* cannot happen: at most nslots / 2 + 1 runs... or nslots = 1 */
	for (int i = 0; i < nw; i++) {
		uint32_t end = fw[i].phase + fw[i].len;
		if (end > nslots) {
			/* wraps past the end of the frame: two windows, vsched's lie inside it */
			r[n++] =
			    (struct run){fw[i].phase, nslots - fw[i].phase, nslots - fw[i].phase};
			r[n++] = (struct run){0, end - nslots, end - nslots};
		} else {
			r[n++] = (struct run){fw[i].phase, fw[i].len, fw[i].len};
		}
	}
	/* by phase (insertion sort: n is small) */
	for (uint32_t a = 1; a < n; a++)
		for (uint32_t b = a; b > 0 && r[b].phase < r[b - 1].phase; b--) {
			struct run t = r[b];
			r[b] = r[b - 1];
			r[b - 1] = t;
		}
	/* too many: merge the two neighbours with the smallest gap, until max remain */
	while (n > max) {
		uint32_t best = 0, gap = UINT32_MAX;
		for (uint32_t i = 0; i + 1 < n; i++) {
			uint32_t g = r[i + 1].phase - (r[i].phase + r[i].span);
			if (g < gap) {
				gap = g;
				best = i;
			}
		}
		r[best].span = r[best + 1].phase + r[best + 1].span - r[best].phase;
		r[best].slots += r[best + 1].slots;
		memmove(&r[best + 1], &r[best + 2], (n - best - 2) * sizeof(r[0]));
		n--;
		if (merged)
			*merged = true;
	}
	for (uint32_t i = 0; i < n; i++) {
		out[i].period = (uint64_t)nslots * slot_ns;
		out[i].phase = (uint64_t)r[i].phase * slot_ns;
		out[i].slice = (uint64_t)r[i].slots * slot_ns;
		out[i].deadline = (uint64_t)r[i].span * slot_ns;
		/* the invariants vsp_check_windows checks */
		assert(out[i].slice <= out[i].deadline);
		assert(out[i].phase + out[i].deadline <= out[i].period);
		assert(i == 0 || out[i - 1].phase + out[i - 1].deadline <= out[i].phase);
	}
	return (int)n;
}

static bool rows_meet(const uint8_t *a, const uint8_t *b, uint32_t nslots)
{
	for (uint32_t k = 0; k < nslots; k++)
		if (a[k] && b[k])
			return true;
	return false;
}

int coplan_colour(const struct fit_problem *pb, const uint8_t *table, uint32_t node, uint32_t *cpu)
{
	uint32_t b, e, np, nproc = 0, ncpu;
	uint32_t *order = NULL, *deg = NULL, *first = NULL, *col = NULL;
	uint8_t *adj = NULL, *used = NULL;
	int rc = 0;

	if (!pb || !table || node >= pb->nnodes)
		return -EINVAL;
	b = pb->node_off[node];
	e = pb->node_off[node + 1];
	np = e - b;
	ncpu = pb->nodes[node].cpus;
	if (np == 0)
		return 0;
	for (uint32_t x = b; x < e; x++)
		nproc += pb->place[x].procs;
	order = calloc(np, sizeof(*order));
	deg = calloc(np, sizeof(*deg));
	first = calloc(np, sizeof(*first));
	col = calloc(nproc, sizeof(*col));
	adj = calloc((size_t)np * np, 1);
	used = calloc((size_t)ncpu + 1, 1);
	if (!order || !deg || !first || !col || !adj || !used) {
		rc = -ENOMEM;
		goto out;
	}
	/* conflict graph between the node's placements (a placement with procs > 1 also
	 * conflicts with itself: its processes run together) */
	for (uint32_t x = 0, off = 0; x < np; x++) {
		const uint8_t *rx = table + (size_t)pb->place[b + x].job * pb->nslots;
		first[x] = off;
		off += pb->place[b + x].procs;
		order[x] = x;
		for (uint32_t y = x + 1; y < np; y++) {
			const uint8_t *ry = table + (size_t)pb->place[b + y].job * pb->nslots;
			if (rows_meet(rx, ry, pb->nslots)) {
				adj[(size_t)x * np + y] = adj[(size_t)y * np + x] = 1;
				deg[x] += pb->place[b + y].procs;
				deg[y] += pb->place[b + x].procs;
			}
		}
	}
	/* largest degree first (Welsh-Powell), stable by placement order */
	for (uint32_t a = 1; a < np; a++)
		for (uint32_t c = a; c > 0 && deg[order[c]] > deg[order[c - 1]]; c--) {
			uint32_t t = order[c];
			order[c] = order[c - 1];
			order[c - 1] = t;
		}
	for (uint32_t x = 0; x < nproc; x++)
		col[x] = UINT32_MAX;
	/*
	 * Processes vsched has already pinned (place_cpus) keep their CPU: vsched places a new
	 * process by its own rule and moves one only when its own windows change, so a plan
	 * that colours only by putting pinned processes elsewhere cannot be applied (e.g. two
	 * jobs pinned to different CPUs and a third sharing slots with both: every CPU refuses
	 * the third). Pinned CPUs become colours in increasing CPU order; the greedy colouring
	 * below then works around them, and a pinned pair that shares a slot on one CPU (or
	 * more pinned CPUs than the node has) does not colour.
	 */
	if (pb->place_cpus) {
		uint64_t all = 0;

		for (uint32_t x = 0; x < np; x++)
			all |= pb->place_cpus[b + x];
		for (uint32_t x = 0; x < np && rc == 0; x++) {
			uint64_t m = pb->place_cpus[b + x];
			uint32_t p = 0;

			for (uint32_t bit = 0; bit < 64 && m && p < pb->place[b + x].procs; bit++) {
				uint32_t c;
				if (!(m & (1ull << bit)))
					continue;
				c = (uint32_t)__builtin_popcountll(all & ((1ull << bit) - 1));
				if (c >= ncpu) {
					rc = -ENOSPC;
					break;
				}
				col[first[x] + p++] = c;
			}
		}
		for (uint32_t x = 0; x < np && rc == 0; x++)
			for (uint32_t y = 0; y < np && rc == 0; y++) {
				if (y != x && !adj[(size_t)x * np + y])
					continue;
				for (uint32_t p = 0; p < pb->place[b + x].procs; p++)
					for (uint32_t q = 0; q < pb->place[b + y].procs; q++)
						if ((x != y || p != q) &&
						    col[first[x] + p] != UINT32_MAX &&
						    col[first[x] + p] == col[first[y] + q])
							rc = -ENOSPC;
			}
	}
	for (uint32_t oi = 0; oi < np && rc == 0; oi++) {
		uint32_t x = order[oi];
		bool pinned = false;

		for (uint32_t p = 0; p < pb->place[b + x].procs; p++)
			pinned |= col[first[x] + p] != UINT32_MAX;
		if (pinned)
			continue; /* coloured above (a placement with some ranks unknown: as pinned)
			           */
		memset(used, 0, ncpu + 1);
		for (uint32_t y = 0; y < np; y++) {
			if (y != x && !adj[(size_t)x * np + y])
				continue;
			for (uint32_t p = 0; p < pb->place[b + y].procs; p++) {
				uint32_t c = col[first[y] + p];
				if (c != UINT32_MAX && c < ncpu)
					used[c] = 1;
			}
		}
		for (uint32_t p = 0; p < pb->place[b + x].procs; p++) {
			uint32_t c = 0;
			while (c < ncpu && used[c])
				c++;
			if (c == ncpu) {
				rc = -ENOSPC;
				break;
			}
			used[c] = 1;
			col[first[x] + p] = c;
		}
	}
	if (rc == 0 && cpu)
		memcpy(cpu, col, nproc * sizeof(*col));
out:
	free(order);
	free(deg);
	free(first);
	free(col);
	free(adj);
	free(used);
	return rc;
}

struct colctx {
	const uint8_t *table;
	uint32_t njobs, nslots;
};

/* Columns (slots) by their set of jobs, lexicographically with job 0 most significant and
 * "runs" before "does not run": identical slots end up side by side, and so does every
 * slot of job 0, every slot of job 1 within those, and so on. */
static int cmp_cols(const void *pa, const void *pb, void *arg)
{
	const struct colctx *c = arg;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;

	for (uint32_t i = 0; i < c->njobs; i++) {
		uint8_t x = c->table[(size_t)i * c->nslots + a],
		        y = c->table[(size_t)i * c->nslots + b];
		if (x != y)
			return x ? -1 : 1;
	}
	return a < b ? -1 : (a > b);
}

/*
 * Reorders the slots of a table so that each job's slots form few runs. Which jobs share a
 * slot, how many slots each job holds, and the gang rule (one row per job for all its
 * nodes) do not depend on the order of the slots within a frame, so any permutation keeps
 * the plan's pairing and shares; Algorithm 1 moves the jobs that ran to the end of the
 * list, which makes jobs alternate slot by slot: as windows that is one window per slot,
 * more than a CONSTRAINT carries and a context switch every slot. Returns 0 or -ENOMEM.
 */
static int compact_slots(uint8_t *table, uint32_t njobs, uint32_t nslots)
{
	uint32_t *perm = malloc(nslots * sizeof(*perm));
	uint8_t *copy = malloc((size_t)njobs * nslots);
	struct colctx c = {table, njobs, nslots};

	if (!perm || !copy) {
		free(perm);
		free(copy);
		return -ENOMEM;
	}
	for (uint32_t k = 0; k < nslots; k++)
		perm[k] = k;
	qsort_r(perm, nslots, sizeof(*perm), cmp_cols, &c);
	memcpy(copy, table, (size_t)njobs * nslots);
	for (uint32_t i = 0; i < njobs; i++)
		for (uint32_t k = 0; k < nslots; k++)
			table[(size_t)i * nslots + k] = copy[(size_t)i * nslots + perm[k]];
	free(perm);
	free(copy);
	return 0;
}

struct cand {
	bool have, complete, colourable;
	uint32_t k, rotate, bad_node;
};

/* Better candidate: complete first, then colourable, then the one tried first (larger k). */
static bool better(const struct cand *a, const struct cand *b)
{
	if (!b->have)
		return true;
	if (a->complete != b->complete)
		return a->complete;
	if (a->colourable != b->colourable)
		return a->colourable;
	return false;
}

/* Runs one (k, rotate) and judges it. Returns 0 or a negative errno (not -ENOSPC). */
static int try_plan(const struct fit_problem *base, uint32_t slots, uint32_t rotate, void *scratch,
                    size_t sbytes, uint8_t *table, struct cand *c)
{
	struct fit_problem pb = *base;
	int rc;

	pb.nslots = slots;
	pb.rotate = rotate;
	rc = fit_schedule(&pb, scratch, sbytes, table, NULL);
	if (rc != 0 && rc != -ENOSPC)
		return rc;
	c->complete = rc == 0;
	rc = compact_slots(table, pb.njobs, slots);
	if (rc)
		return rc;
	c->have = true;
	c->colourable = true;
	c->rotate = rotate;
	for (uint32_t l = 0; l < pb.nnodes; l++) {
		int cr = coplan_colour(&pb, table, l, NULL);
		if (cr == -ENOMEM)
			return cr;
		if (cr != 0) {
			c->colourable = false;
			c->bad_node = l;
			break;
		}
	}
	return 0;
}

/*
 * True when sub-frames of n slots give every job its U within max_excess, or no worse than
 * the whole frame (nslots) does: ceil(U * n) / n - U is the share a job gets above U.
 */
static bool share_accurate(const struct fit_problem *pb, uint32_t n, uint32_t nslots,
                           double max_excess)
{
	for (uint32_t i = 0; i < pb->njobs; i++) {
		double u = pb->jobs[i].util;
		double ex = (double)fit_need(u, n) / n - u;
		double ex1 = (double)fit_need(u, nslots) / nslots - u;

		if (ex > max_excess + 1e-9 && ex > ex1 + 1e-9)
			return false;
	}
	return true;
}

int coplan_make(const struct fit_problem *pb, uint32_t nslots, mono_ns slot_ns, uint32_t want_k,
                double max_excess, uint8_t *table, struct coplan_job *jobs,
                struct coplan_result *res)
{
	struct cand best = {0}, c;
	size_t sbytes;
	void *scratch;
	uint32_t nrot;
	int rc = 0;

	if (!pb || !table || !jobs || !res || nslots == 0 || nslots > COPLAN_MAX_SLOTS ||
	    slot_ns == 0 || pb->njobs == 0)
		return -EINVAL;
	if (want_k < 1)
		want_k = 1;
	if (want_k > nslots)
		want_k = nslots;
	sbytes = fit_scratch_bytes(pb->njobs, pb->nnodes, pb->nplace);
	scratch = malloc(sbytes);
	if (!scratch)
		return -ENOMEM;
	/* rotations change who leads the first slots, hence which pairs form; a few suffice
	 * to find a colourable plan when the first is not */
	nrot = pb->njobs < 8 ? pb->njobs : 8;
	for (uint32_t k = want_k; k >= 1 && !(best.complete && best.colourable); k--) {
		if (nslots % k || (k > 1 && !share_accurate(pb, nslots / k, nslots, max_excess)))
			continue;
		for (uint32_t r = 0; r < nrot; r++) {
			memset(&c, 0, sizeof(c));
			c.k = k;
			rc = try_plan(pb, nslots / k, r, scratch, sbytes, table, &c);
			if (rc)
				goto out;
			if (better(&c, &best))
				best = c;
			if (best.complete && best.colourable)
				break;
		}
	}
	/* the table holds the last try: run the best one again (deterministic) */
	rc = try_plan(pb, nslots / best.k, best.rotate, scratch, sbytes, table, &c);
	if (rc)
		goto out;
	res->k = best.k;
	res->slots = nslots / best.k;
	res->rotate = best.rotate;
	res->complete = best.complete;
	res->colourable = best.colourable;
	res->bad_node = best.bad_node;
	for (uint32_t i = 0; i < pb->njobs; i++) {
		const uint8_t *row = table + (size_t)i * res->slots;
		struct coplan_job *j = &jobs[i];
		int nw;

		memset(j, 0, sizeof(*j));
		j->need = fit_need(pb->jobs[i].util, res->slots);
		for (uint32_t s = 0; s < res->slots; s++)
			j->got += row[s];
		if (j->got == 0)
			continue;
		nw = coplan_row_windows(row, res->slots, slot_ns, j->win, COPLAN_MAX_WINDOWS,
		                        &j->merged);
		if (nw < 0) {
			rc = nw;
			goto out;
		}
		j->nwin = (uint32_t)nw;
	}
out:
	free(scratch);
	return rc;
}
