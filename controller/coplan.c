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

/* One node's colouring in progress (coplan_colour): placements b..e of pb, their
 * processes numbered first[x] .. first[x] + procs - 1, colours (CPUs) in col. */
struct colouring {
	const struct fit_problem *pb;
	uint32_t b, np, nproc, ncpu;
	uint32_t *order, *deg, *first, *col; /* col[proc]: UINT32_MAX = none yet */
	uint8_t *adj;                        /* np x np conflict matrix */
	uint8_t *used;                       /* ncpu + 1 */
};

static uint32_t procs_of(const struct colouring *c, uint32_t x)
{
	return c->pb->place[c->b + x].procs;
}

/* x and y (or x with itself: its processes run together) conflict. */
static bool conflict(const struct colouring *c, uint32_t x, uint32_t y)
{
	return y == x || c->adj[(size_t)x * c->np + y];
}

static void colouring_free(struct colouring *c)
{
	free(c->order);
	free(c->deg);
	free(c->first);
	free(c->col);
	free(c->adj);
	free(c->used);
}

/* Conflict graph between the node's placements, degrees counted in processes, and the
 * order: largest degree first (Welsh-Powell), stable by placement order. */
static void colour_graph(struct colouring *c, const uint8_t *table)
{
	const struct fit_problem *pb = c->pb;

	for (uint32_t x = 0, off = 0; x < c->np; x++) {
		const uint8_t *rx = table + (size_t)pb->place[c->b + x].job * pb->nslots;
		c->first[x] = off;
		off += procs_of(c, x);
		c->order[x] = x;
		for (uint32_t y = x + 1; y < c->np; y++) {
			const uint8_t *ry = table + (size_t)pb->place[c->b + y].job * pb->nslots;
			if (rows_meet(rx, ry, pb->nslots)) {
				c->adj[(size_t)x * c->np + y] = c->adj[(size_t)y * c->np + x] = 1;
				c->deg[x] += procs_of(c, y);
				c->deg[y] += procs_of(c, x);
			}
		}
	}
	for (uint32_t a = 1; a < c->np; a++)
		for (uint32_t k = a; k > 0 && c->deg[c->order[k]] > c->deg[c->order[k - 1]]; k--) {
			uint32_t t = c->order[k];
			c->order[k] = c->order[k - 1];
			c->order[k - 1] = t;
		}
	for (uint32_t x = 0; x < c->nproc; x++)
		c->col[x] = UINT32_MAX;
}

/*
 * Processes vsched has already pinned (place_cpus) keep their CPU: vsched places a new
 * process by its own rule and moves one only when its own windows change, so a plan
 * that colours only by putting pinned processes elsewhere cannot be applied (e.g. two
 * jobs pinned to different CPUs and a third sharing slots with both: every CPU refuses
 * the third). Pinned CPUs become colours in increasing CPU order; the greedy colouring
 * then works around them. -ENOSPC: more pinned CPUs than the node has.
 */
static int colour_pinned(struct colouring *c)
{
	const uint64_t *pc = c->pb->place_cpus + c->b;
	uint64_t all = 0;

	for (uint32_t x = 0; x < c->np; x++)
		all |= pc[x];
	for (uint32_t x = 0; x < c->np; x++) {
		uint64_t m = pc[x];
		uint32_t p = 0;

		for (uint32_t bit = 0; bit < 64 && m && p < procs_of(c, x); bit++) {
			uint32_t k;
			if (!(m & (1ull << bit)))
				continue;
			k = (uint32_t)__builtin_popcountll(all & ((1ull << bit) - 1));
			if (k >= c->ncpu)
				return -ENOSPC;
			c->col[c->first[x] + p++] = k;
		}
	}
	return 0;
}

/* Two conflicting processes pinned to one CPU: -ENOSPC. */
static int colour_pinned_check(const struct colouring *c)
{
	for (uint32_t x = 0; x < c->np; x++)
		for (uint32_t y = 0; y < c->np; y++) {
			if (!conflict(c, x, y))
				continue;
			for (uint32_t p = 0; p < procs_of(c, x); p++) {
				uint32_t cx = c->col[c->first[x] + p];
				for (uint32_t q = 0; q < procs_of(c, y); q++)
					if ((x != y || p != q) && cx != UINT32_MAX &&
					    cx == c->col[c->first[y] + q])
						return -ENOSPC;
			}
		}
	return 0;
}

/* Placement x's processes on the lowest CPUs none of its conflicts holds. */
static int colour_one(struct colouring *c, uint32_t x)
{
	memset(c->used, 0, c->ncpu + 1);
	for (uint32_t y = 0; y < c->np; y++) {
		if (!conflict(c, x, y))
			continue;
		for (uint32_t p = 0; p < procs_of(c, y); p++) {
			uint32_t k = c->col[c->first[y] + p];
			if (k != UINT32_MAX && k < c->ncpu)
				c->used[k] = 1;
		}
	}
	for (uint32_t p = 0; p < procs_of(c, x); p++) {
		uint32_t k = 0;
		while (k < c->ncpu && c->used[k])
			k++;
		if (k == c->ncpu)
			return -ENOSPC;
		c->used[k] = 1;
		c->col[c->first[x] + p] = k;
	}
	return 0;
}

/* Greedy colouring in c->order of the placements with no pinned process (one with some
 * ranks unknown counts as pinned: coloured by colour_pinned). */
static int colour_greedy(struct colouring *c)
{
	for (uint32_t oi = 0; oi < c->np; oi++) {
		uint32_t x = c->order[oi];
		bool pinned = false;

		for (uint32_t p = 0; p < procs_of(c, x); p++)
			pinned |= c->col[c->first[x] + p] != UINT32_MAX;
		if (!pinned && colour_one(c, x) != 0)
			return -ENOSPC;
	}
	return 0;
}

int coplan_colour(const struct fit_problem *pb, const uint8_t *table, uint32_t node, uint32_t *cpu)
{
	struct colouring c = {.pb = pb};
	int rc;

	if (!pb || !table || node >= pb->nnodes)
		return -EINVAL;
	c.b = pb->node_off[node];
	c.np = pb->node_off[node + 1] - c.b;
	c.ncpu = pb->nodes[node].cpus;
	if (c.np == 0)
		return 0;
	for (uint32_t x = 0; x < c.np; x++)
		c.nproc += procs_of(&c, x);
	c.order = calloc(c.np, sizeof(*c.order));
	c.deg = calloc(c.np, sizeof(*c.deg));
	c.first = calloc(c.np, sizeof(*c.first));
	c.col = calloc(c.nproc, sizeof(*c.col));
	c.adj = calloc((size_t)c.np * c.np, 1);
	c.used = calloc((size_t)c.ncpu + 1, 1);
	if (!c.order || !c.deg || !c.first || !c.col || !c.adj || !c.used) {
		colouring_free(&c);
		return -ENOMEM;
	}
	colour_graph(&c, table);
	rc = pb->place_cpus ? colour_pinned(&c) : 0;
	if (rc == 0 && pb->place_cpus)
		rc = colour_pinned_check(&c);
	if (rc == 0)
		rc = colour_greedy(&c);
	if (rc == 0 && cpu)
		memcpy(cpu, c.col, c.nproc * sizeof(*c.col));
	colouring_free(&c);
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

/* The slots of a sub-frame of n slots that may hold jobs under a per-CPU cap of cap_ppm:
 * floor(cap · n), in integers (no rounding up past the cap). */
static uint32_t usable_slots(uint32_t n, uint32_t cap_ppm)
{
	return (uint32_t)((uint64_t)n * cap_ppm / COPLAN_CAP_FULL);
}

/*
 * The first `cols` columns of sub-frames of `slots`: fit_schedule() plans a table of cols
 * slots in which every job needs min(need, cols) slots, need = fit_need(U, slots) (fj:
 * scratch for the jobs with that share, U' = min(need, cols) / cols, which fit_need() turns
 * back into exactly min(need, cols)); the table is then spread to rows of `slots` with the
 * columns from cols on empty. Returns fit_schedule()'s result, -ENOSPC also when some
 * job's need is more than cols.
 */
static int fill_columns(const struct fit_problem *base, uint32_t slots, uint32_t cols,
                        uint32_t rotate, struct fit_job *fj, void *scratch, size_t sbytes,
                        uint8_t *table)
{
	struct fit_problem pb = *base;
	bool all = true;
	int rc;

	for (uint32_t i = 0; i < pb.njobs; i++) {
		uint32_t need = fit_need(base->jobs[i].util, slots);
		uint32_t n = need < cols ? need : cols;

		all &= need <= cols;
		fj[i] = base->jobs[i];
		fj[i].util = (double)n / cols;
		assert(fit_need(fj[i].util, cols) == n);
	}
	pb.jobs = fj;
	pb.nslots = cols;
	pb.rotate = rotate;
	rc = fit_schedule(&pb, scratch, sbytes, table, NULL);
	if (rc != 0 && rc != -ENOSPC)
		return rc;
	if (compact_slots(table, pb.njobs, cols) != 0)
		return -ENOMEM;
	/* rows of cols -> rows of slots, last row first: row i's source [i cols, (i + 1) cols)
	 * lies below every later row's destination */
	for (uint32_t i = pb.njobs; cols < slots && i-- > 0;) {
		memmove(table + (size_t)i * slots, table + (size_t)i * cols, cols);
		memset(table + (size_t)i * slots + cols, 0, slots - cols);
	}
	return rc == 0 && all ? 0 : -ENOSPC;
}

/* Runs one (k, rotate) and judges it. Returns 0 or a negative errno (not -ENOSPC). */
static int try_plan(const struct fit_problem *base, uint32_t slots, uint32_t cap_ppm,
                    uint32_t rotate, struct fit_job *fj, void *scratch, size_t sbytes,
                    uint8_t *table, struct cand *c)
{
	struct fit_problem pb = *base;
	int rc;

	pb.nslots = slots;
	pb.rotate = rotate;
	rc = fill_columns(base, slots, usable_slots(slots, cap_ppm), rotate, fj, scratch, sbytes,
	                  table);
	if (rc != 0 && rc != -ENOSPC)
		return rc;
	c->complete = rc == 0;
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
                double max_excess, uint32_t cap_ppm, uint8_t *table, struct coplan_job *jobs,
                struct coplan_result *res)
{
	struct cand best = {0}, c;
	struct fit_job *fj;
	size_t sbytes;
	void *scratch;
	uint32_t nrot;
	int rc = 0;

	if (!pb || !table || !jobs || !res || nslots == 0 || nslots > COPLAN_MAX_SLOTS ||
	    slot_ns == 0 || pb->njobs == 0 || cap_ppm == 0 || cap_ppm > COPLAN_CAP_FULL)
		return -EINVAL;
	if (want_k < 1)
		want_k = 1;
	if (want_k > nslots)
		want_k = nslots;
	sbytes = fit_scratch_bytes(pb->njobs, pb->nnodes, pb->nplace);
	scratch = malloc(sbytes);
	fj = malloc(pb->njobs * sizeof(*fj));
	if (!scratch || !fj) {
		rc = -ENOMEM;
		goto out;
	}
	/* rotations change who leads the first slots, hence which pairs form; a few suffice
	 * to find a colourable plan when the first is not */
	nrot = pb->njobs < 8 ? pb->njobs : 8;
	for (uint32_t k = want_k; k >= 1 && !(best.complete && best.colourable); k--) {
		if (nslots % k || (k > 1 && !share_accurate(pb, nslots / k, nslots, max_excess)) ||
		    usable_slots(nslots / k, cap_ppm) == 0)
			continue;
		for (uint32_t r = 0; r < nrot; r++) {
			memset(&c, 0, sizeof(c));
			c.k = k;
			rc = try_plan(pb, nslots / k, cap_ppm, r, fj, scratch, sbytes, table, &c);
			if (rc)
				goto out;
			if (better(&c, &best))
				best = c;
			if (best.complete && best.colourable)
				break;
		}
	}
	memset(res, 0, sizeof(*res));
	if (!best.have) { /* not one slot under the cap (frame / slot < 1 / cap) */
		res->k = 1;
		res->slots = nslots;
		res->colourable = true;
		memset(table, 0, (size_t)pb->njobs * nslots);
		for (uint32_t i = 0; i < pb->njobs; i++) {
			memset(&jobs[i], 0, sizeof(jobs[i]));
			jobs[i].need = fit_need(pb->jobs[i].util, nslots);
		}
		goto out;
	}
	/* the table holds the last try: run the best one again (deterministic) */
	rc = try_plan(pb, nslots / best.k, cap_ppm, best.rotate, fj, scratch, sbytes, table, &c);
	if (rc)
		goto out;
	res->k = best.k;
	res->slots = nslots / best.k;
	res->usable = usable_slots(res->slots, cap_ppm);
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
	free(fj);
	free(scratch);
	return rc;
}
