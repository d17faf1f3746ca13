/*
 * Pushing a co-scheduling plan to the nodes as one change (docs/coschedule.md, "Pushing").
 *
 * vsched admits every process's windows on its own, against what the other processes of
 * its CPU hold at that moment, so a plan that moves windows between jobs (c1 into the
 * slots m2 leaves) is refused if the arriving job is applied before the leaving one, and
 * a swap is refused in either order. A plan is therefore sent in three steps, all queued
 * in one turn (a node's messages are applied in the order queued):
 *
 *   1. shrink: every due job whose committed windows overlap a slot that another job of
 *      the same CPU will hold in the new plan keeps only old ∩ new of its windows (a
 *      subset of what it held: it fits);
 *   2. park: such a job with old ∩ new empty holds one slot no other job of its CPUs holds
 *      before, after or while parked (plans leave the slots past the usable ones of each
 *      sub-frame empty under vsched's per-CPU cap, the frame's last slot whatever the
 *      number of sub-frames: coplan.h; one job parks per such slot);
 *   3. grow: every due job's planned windows, as its transaction (txn.c: on every node or
 *      none); jobs without windows yet last: vsched places their processes on a CPU by its
 *      own rule, which then finds the plan's room (a provisional reservation in the way of
 *      the others yields to them: agent/constraint.c).
 *
 * After steps 1 and 2 every job of a CPU holds a subset of its new windows or a slot
 * nobody's new windows use, so every step-3 window set fits beside the others in any order.
 * Steps 1 and 2 are sent without a transaction (a newer generation than the job's committed
 * one, older than its transaction's): a refused step is only logged, and its job's
 * transaction decides as before (refused: the committed windows are restored and the plan
 * is tried again later).
 *
 * Before step 1, a due job that would take a slot held by a job of its CPUs that moves
 * without it (that job's own transaction is open, or its push waits for a retry) is held
 * back: pushed alone its windows would be refused, and it stays due for a later tick, by
 * which the other has committed or moves with it (repeated until no job is held back: one
 * that waits keeps its slots).
 *
 * Occupancy is worked out per node over the frame's slots (every plan window lies on the
 * slot grid); processes whose CPU is not known yet count as being on every CPU. What a job
 * holds now is its committed windows and its open transaction's, or, for a job this
 * controller has not committed yet (after a restart), what vsched reports its ranks hold. Jobs with
 * merged windows (slice < deadline: EDF places them inside the span) take no steps 1-2 but
 * count with their whole spans.
 */
#include "controller.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* One job on the node being worked out. */
struct stage_job {
	int j;
	uint64_t cpus;      /* CPUs of its processes on the node; all ones: not known */
	bool due, merged;   /* windows to push; windows whose slice < deadline */
	bool moving;        /* not due, but its windows change (transaction, retry) */
	uint8_t *cur, *new; /* slots held now (committed, and an open transaction's), planned */
	uint8_t *inter;     /* steps 1-2: what it holds meanwhile; NULL: no step */
};

struct stage {
	struct ctld *d;
	int node;
	uint32_t nslots;
	mono_ns q;
	int n;
	struct stage_job *sj;
};

static uint8_t *slots_alloc(uint32_t n)
{
	uint8_t *p = calloc(n, 1);

	if (p == NULL)
		fatalx("out of memory");
	return p;
}

/* Marks in occ[] every slot of the frame that one of the windows touches. */
static void mark_windows(const struct stage *s, uint8_t *occ, uint8_t nwin,
                         const struct vsp_resv *w)
{
	for (uint8_t k = 0; k < nwin; k++) {
		mono_ns p = w[k].period, len = w[k].deadline ? w[k].deadline : w[k].period;

		if (p == 0)
			continue;
		for (uint32_t x = 0; x < s->nslots; x++) {
			mono_ns a = ((mono_ns)x * s->q) % p, b = a + s->q;
			/* [a, b) against [phase, phase + len) within one period */
			if (a < w[k].phase + len && w[k].phase < b)
				occ[x] = 1;
		}
	}
}

static bool windows_merged(uint8_t nwin, const struct vsp_resv *w)
{
	for (uint8_t k = 0; k < nwin; k++)
		if (w[k].deadline && w[k].slice < w[k].deadline)
			return true;
	return false;
}

static uint64_t job_cpus(const struct job *jb, int node)
{
	uint64_t m = 0;

	for (uint32_t r = 0; r < jb->cap_ranks; r++) {
		const struct rank *rk = &jb->ranks[r];
		if (!rk->used || rk->node != node)
			continue;
		if (rk->cpu < 0 || rk->cpu >= 64)
			return ~0ull;
		m |= 1ull << rk->cpu;
	}
	return m;
}

/*
 * Windows that vsched holds for job jb's ranks on the node under a generation of an earlier
 * controller. Only a job without a committed constraint has them (commit is not persisted:
 * after a restart every job starts without one, its ranks keep what the earlier controller
 * sent until a plan replaces it). Provisional reservations (generation 0) are left out:
 * they yield to the plan.
 */
static void mark_held(const struct stage *s, uint8_t *occ, const struct job *jb, bool *merged)
{
	if (jb->commit.gen != 0)
		return;
	for (uint32_t r = 0; r < jb->cap_ranks; r++) {
		const struct rank *rk = &jb->ranks[r];
		if (rk->node != s->node || !rank_holds_windows(rk))
			continue;
		mark_windows(s, occ, rk->held_nwin, rk->held);
		*merged |= windows_merged(rk->held_nwin, rk->held);
	}
}

/* Whether jb's ranks hold windows: committed ones, or (after a restart) an earlier
 * controller's. */
static bool job_holds(const struct job *jb)
{
	if (jb->commit.nwin > 0)
		return true;
	if (jb->commit.gen != 0)
		return false;
	for (uint32_t r = 0; r < jb->cap_ranks; r++)
		if (rank_holds_windows(&jb->ranks[r]))
			return true;
	return false;
}

/* An empty stage for the node, on the plan's slot grid. */
static struct stage stage_on(struct ctld *d, int node)
{
	return (struct stage){.d = d,
	                      .node = node,
	                      .nslots = (uint32_t)(d->cfg.cs.frame / d->cfg.cs.slot),
	                      .q = d->cfg.cs.slot};
}

/* The node's jobs: what each holds now and will hold. */
static void stage_load(struct stage *s, const bool *due)
{
	struct ctld *d = s->d;

	s->sj = calloc((size_t)d->njobs + 1, sizeof(*s->sj));
	if (s->sj == NULL)
		fatalx("out of memory");
	for (int j = 0; j < d->njobs; j++) {
		const struct job *jb = d->jobs[j];
		struct stage_job *x = &s->sj[s->n];

		if (!jobs_on_node(jb, s->node))
			continue;
		x->j = j;
		x->cpus = job_cpus(jb, s->node);
		x->due = due[j];
		x->cur = slots_alloc(s->nslots);
		x->new = slots_alloc(s->nslots);
		mark_windows(s, x->cur, jb->commit.nwin, jb->commit.win);
		if (jb->txn.active)
			mark_windows(s, x->cur, jb->txn.nwin, jb->txn.win);
		if (x->due)
			mark_windows(s, x->new, jb->plan.nwin, jb->plan.win);
		else
			memcpy(x->new, x->cur, s->nslots);
		x->moving = !x->due && (jb->txn.active || jobs_plan_moves(jb));
		x->merged = windows_merged(jb->commit.nwin, jb->commit.win) ||
		            (x->due && windows_merged(jb->plan.nwin, jb->plan.win));
		mark_held(s, x->cur, jb, &x->merged);
		s->n++;
	}
}

static void stage_free(struct stage *s)
{
	for (int i = 0; i < s->n; i++) {
		free(s->sj[i].cur);
		free(s->sj[i].new);
		free(s->sj[i].inter);
	}
	free(s->sj);
}

/* A slot some other job of a's CPUs holds now, will hold or holds meanwhile (which:
 * bit 0 now, bit 1 planned, bit 2 meanwhile). */
static bool others_hold(const struct stage *s, int a, uint32_t x, unsigned which)
{
	for (int b = 0; b < s->n; b++) {
		const struct stage_job *o = &s->sj[b];
		if (b == a || !(o->cpus & s->sj[a].cpus))
			continue;
		if (((which & 1) && o->cur[x]) || ((which & 2) && o->new[x]) ||
		    ((which & 4) && o->inter && o->inter[x]))
			return true;
	}
	return false;
}

/* Whether due job a would take a slot that a job of its CPUs moving without it holds. */
static bool stage_blocked(const struct stage *s, int a, int *by)
{
	for (int b = 0; b < s->n; b++) {
		const struct stage_job *o = &s->sj[b];
		if (b == a || !o->moving || !(o->cpus & s->sj[a].cpus))
			continue;
		for (uint32_t x = 0; x < s->nslots; x++)
			if (s->sj[a].new[x] && o->cur[x]) {
				*by = o->j;
				return true;
			}
	}
	return false;
}

/* Clears due[] for the node's due jobs that stage_blocked() holds back; whether any. */
static bool stage_hold_back(struct ctld *d, int node, bool *due)
{
	struct stage s = stage_on(d, node);
	bool any = false;
	int by;

	stage_load(&s, due);
	for (int a = 0; a < s.n; a++)
		if (s.sj[a].due && stage_blocked(&s, a, &by)) {
			log_debug("job %s: waits on node %s for job %s, which moves first",
			          d->jobs[s.sj[a].j]->name, d->nodes[node]->name,
			          d->jobs[by]->name);
			due[s.sj[a].j] = false;
			any = true;
		}
	stage_free(&s);
	return any;
}

/* Step 1 for job a when it is in another's way: old ∩ new. Returns false when that is
 * empty (a parks), true otherwise (with or without a step). */
static bool stage_shrink(struct stage *s, int a)
{
	struct stage_job *x = &s->sj[a];
	bool in_way = false, any = false;

	for (uint32_t k = 0; k < s->nslots && !in_way; k++)
		in_way = x->cur[k] && others_hold(s, a, k, 2);
	if (!in_way)
		return true;
	x->inter = slots_alloc(s->nslots);
	for (uint32_t k = 0; k < s->nslots; k++) {
		x->inter[k] = x->cur[k] && x->new[k];
		any |= x->inter[k];
	}
	return any;
}

/* Step 2 for job a: one slot that nobody else of its CPUs holds at any point. */
static void stage_park(struct stage *s, int a)
{
	struct stage_job *x = &s->sj[a];

	for (uint32_t k = 0; k < s->nslots; k++)
		if (!others_hold(s, a, k, 1 | 2 | 4)) {
			x->inter[k] = 1;
			return;
		}
	free(x->inter); /* no room: its transaction goes alone (and may be refused) */
	x->inter = NULL;
	log_info("job %s: no free slot to hold while the plan moves on node %s",
	         s->d->jobs[x->j]->name, s->d->nodes[s->node]->name);
}

/*
 * occ[] as windows: the shortest period (frame / k) with which it repeats and which needs
 * at most PCTL_MAX_WINDOWS runs; failing that, the frame's longest runs (a subset).
 * Returns the number of windows.
 */
static uint8_t slots_windows(const struct stage *s, const uint8_t *occ, struct vsp_resv *w)
{
	for (uint32_t k = s->nslots; k >= 1; k--) {
		uint32_t m = s->nslots / k;
		bool same = s->nslots % k == 0;

		for (uint32_t x = m; same && x < s->nslots; x++)
			same = occ[x] == occ[x % m];
		if (!same)
			continue;
		uint8_t n = 0;
		uint32_t x = 0;
		bool room = true;
		while (x < m && room) {
			uint32_t b = x;
			while (x < m && occ[x])
				x++;
			if (x > b) {
				room = n < PCTL_MAX_WINDOWS;
				if (room)
					w[n++] = (struct vsp_resv){.period = m * s->q,
					                           .phase = b * s->q,
					                           .slice = (x - b) * s->q,
					                           .deadline = (x - b) * s->q};
			}
			x += x == b;
		}
		if (room || k == 1) {
			if (!room) /* the frame's first runs only: a subset of occ */
				log_debug("intermediate windows cut to %d", PCTL_MAX_WINDOWS);
			return n;
		}
	}
	return 0;
}

/* Queues job a's intermediate windows to the node; staged[job] records it. */
static void stage_send(struct stage *s, int a, uint64_t gen, bool *staged)
{
	struct stage_job *x = &s->sj[a];
	struct job *jb = s->d->jobs[x->j];
	struct vsp_resv w[PCTL_MAX_WINDOWS];
	mono_ns slice = 0;
	uint8_t n = slots_windows(s, x->inter, w);

	if (n == 0)
		return;
	for (uint8_t k = 0; k < n; k++)
		slice += w[k].slice;
	log_info("job %s: holds %llu ms per %llu ms on node %s while the plan moves", jb->name,
	         (unsigned long long)(slice * (s->nslots * s->q / w[0].period) / NSEC_PER_MSEC),
	         (unsigned long long)(s->nslots * s->q / NSEC_PER_MSEC),
	         s->d->nodes[s->node]->name);
	outbox_constraint(s->d->nodes[s->node], jb->name, gen, w[0].period, slice, n, w);
	staged[x->j] = true;
}

/* Steps 1 and 2 on one node for the due jobs (gen: each job's intermediate generation). */
static void stage_node(struct ctld *d, int node, const bool *due, const uint64_t *gen, bool *staged)
{
	struct stage s = stage_on(d, node);
	bool *park;

	stage_load(&s, due);
	park = calloc((size_t)s.n + 1, sizeof(*park));
	if (park == NULL)
		fatalx("out of memory");
	for (int a = 0; a < s.n; a++)
		if (s.sj[a].due && !s.sj[a].merged && job_holds(d->jobs[s.sj[a].j]))
			park[a] = !stage_shrink(&s, a);
	for (int a = 0; a < s.n; a++)
		if (s.sj[a].inter && !park[a])
			stage_send(&s, a, gen[s.sj[a].j], staged);
	for (int a = 0; a < s.n; a++)
		if (park[a]) {
			stage_park(&s, a);
			if (s.sj[a].inter)
				stage_send(&s, a, gen[s.sj[a].j], staged);
		}
	free(park);
	stage_free(&s);
}

int cospush_plan(struct ctld *d, bool *due, int target, const struct txn *tpl, const uint8_t *cid,
                 size_t cidlen, mono_ns now)
{
	uint64_t *gen = calloc((size_t)d->njobs + 1, sizeof(*gen));
	bool *staged = calloc((size_t)d->njobs + 1, sizeof(*staged));
	bool again = true, target_due = target >= 0 && due[target];
	int ndue = 0, rc = -1;

	if (gen == NULL || staged == NULL)
		fatalx("out of memory");
	while (again) {
		again = false;
		for (int l = 0; l < d->nnodes; l++)
			if (d->nodes[l]->up)
				again |= stage_hold_back(d, l, due);
	}
	if (target_due && !due[target])
		rc = -EAGAIN;
	for (int j = 0; j < d->njobs; j++)
		if (due[j]) {
			gen[j] = txn_next_gen(d);
			ndue++;
		}
	if (ndue > 1)
		for (int l = 0; l < d->nnodes; l++)
			if (d->nodes[l]->up)
				stage_node(d, l, due, gen, staged);
	/* step 3: jobs with windows first, then the new ones, which vsched places on a CPU
	 * by its own rule: where they fit beside the plan in force */
	for (int pass = 0; pass < 2; pass++)
		for (int j = 0; j < d->njobs; j++) {
			struct job *jb = d->jobs[j];
			int r;

			if (!due[j] || (pass == 0) != job_holds(jb))
				continue;
			r = txn_push_plan(d, j, j == target ? tpl : NULL, j == target ? cid : NULL,
			                  cidlen, now);
			if (r == 1)
				jb->txn.staged = staged[j];
			if (j == target)
				rc = r;
			else if (r < 0)
				jb->plan.push_at = now + CTLD_PUSH_RETRY;
		}
	free(gen);
	free(staged);
	return rc;
}
