/*
 * What the nodes can give floating jobs (DESIGN.md §5.1, docs/control.md "Bounds"): the
 * nodes' period floors, learnt from deadline misses, and the U a floating job may hold.
 *
 * Floors. A node's vsched measures, at start and on demand, the finest period it serves
 * with < 1 % misses (its self-test; the agent forwards each result, NODE_INFO); a rank whose
 * vsched misses more than 1 % of its periods (counted over at least FLOOR_PERIODS periods at
 * one reservation) shows that the node cannot serve that period: twice it becomes the
 * node's miss floor, which only rises. The node's floor is the larger of the two, so a new
 * self-test (`vschedctl selftest` on an idle node) can lower what a busy start-up measured,
 * never below what misses showed (a test that is running, was interrupted or found no period
 * changes nothing). A job's floor is the largest of its nodes' (control_set_floor): its
 * period never goes below it. The configured min_period is the lowest a floor can be.
 *
 * Caps. The same NODE_INFO carries vsched's effective per-CPU admission cap; the node keeps
 * the last one (0: not reported, CTLD_CAP_DEFAULT_PPM is assumed) and co-scheduling plans
 * give no CPU more (cosched.c, coplan.h).
 *
 * Limits. A floating job's U rises only as far as its nodes admit: a refused rise caps U
 * where it was (control_reject() in txn.c; a new target refused for its U step is kept the
 * same way). At once, one transaction at a time, the cap is bisected towards the refused U
 * (control_probe_u_limit()) until the gap is under a point: the job holds the most its nodes
 * admit, not the U it had. After a back-off (LIMIT_RETRY, doubled per refusal in a row up
 * to LIMIT_RETRY_MAX) the job tries again (control_retry_u_limit()): one that needs more
 * bisects up towards what it needs at once, any other has its cap lifted.
 *
 * Who yields. Every job is entitled to U up to its target: targets are admitted so that
 * they fit (change.c), and that is the paper's U = target guarantee. A job may hold more
 * than its target (it is slower than its share) only with room nobody entitled needs: when a
 * job that holds less than its target is refused a rise, jobs on the same CPUs that hold
 * more than their targets give back the difference, down to their targets at most, and the
 * refused job tries again REVOKE_SETTLE later, by bisecting up at once: before the givers'
 * own retries (LIMIT_RETRY) or evaluations could take the room back. Between jobs above their
 * targets, the first to take room keeps it.
 */
#include "controller.h"

#include <math.h>

#include "duration.h"
#include "log.h"

#define FLOOR_PERIODS   100                  /* periods per miss count */
#define FLOOR_MISS_PCT  1.0                  /* misses above this: the node cannot serve */
#define LIMIT_RETRY     (10 * NSEC_PER_SEC)  /* first retry after a refused rise */
#define LIMIT_RETRY_MAX (320 * NSEC_PER_SEC) /* longest back-off */
#define REVOKE_SETTLE   (1 * NSEC_PER_SEC)   /* the giving jobs' changes take effect */
#define REVOKE_AGAIN    (5 * NSEC_PER_SEC)   /* one round of giving back per this */

mono_ns capacity_job_floor(const struct ctld *d, const struct job *jb)
{
	mono_ns f = 0;

	for (uint32_t r = 0; r < jb->cap_ranks; r++) {
		const struct rank *rk = &jb->ranks[r];
		if (rk->used && d->nodes[rk->node]->floor > f)
			f = d->nodes[rk->node]->floor;
	}
	return f;
}

static bool floating(const struct job *jb)
{
	const struct control_job *cj = &jb->control.loop;

	return cj->p.algo == CONTROL_ALGO_FLOATING && jb->control.target_pct > 0 &&
	       cj->state != CONTROL_CALIBRATING;
}

void capacity_sync_floor(struct ctld *d, struct job *jb, mono_ns now)
{
	struct control_decision dec;
	mono_ns nodes = capacity_job_floor(d, jb), f = nodes;

	if (nodes == jb->control.floor)
		return;
	if (f >= jb->control.loop.p.initial_period_ns)
		f = jb->control.loop.p.initial_period_ns - 1; /* only the initial period */
	if (control_set_floor(&jb->control.loop, f, now, &dec) != 0)
		return;
	jb->control.floor = nodes; /* the nodes' figure, unclamped: compared above */
	decide_apply(d, jb, &dec, now);
}

/* The jobs on node take its new floor. */
static void floors_changed(struct ctld *d, int node, mono_ns now)
{
	for (int j = 0; j < d->njobs; j++)
		if (jobs_on_node(d->jobs[j], node))
			capacity_sync_floor(d, d->jobs[j], now);
}

void capacity_stats(struct ctld *d, int node, struct rank *rk, const struct vsp_task_stat *st,
                    mono_ns now)
{
	struct node *n = d->nodes[node];
	uint64_t dp, dm;

	if (d->cfg.cs.on || st->resv.period == 0)
		return;
	if (rk->st_period != st->resv.period || st->periods < rk->st_periods ||
	    st->misses < rk->st_misses) {
		rk->st_period = st->resv.period; /* a new reservation: count afresh */
		rk->st_periods = st->periods;
		rk->st_misses = st->misses;
		return;
	}
	dp = st->periods - rk->st_periods;
	dm = st->misses - rk->st_misses;
	if (dp < FLOOR_PERIODS)
		return;
	rk->st_periods = st->periods;
	rk->st_misses = st->misses;
	if ((double)dm * 100.0 <= FLOOR_MISS_PCT * (double)dp || 2 * st->resv.period <= n->floor)
		return;
	n->miss_floor = 2 * st->resv.period;
	n->floor = n->miss_floor;
	log_warnx("node %s: %.1f %% of %llu periods of %.3f ms missed: period floor raised to "
	          "%.3f ms",
	          n->name, 100.0 * (double)dm / (double)dp, (unsigned long long)dp,
	          (double)st->resv.period / 1e6, (double)n->floor / 1e6);
	floors_changed(d, node, now);
}

void capacity_node_info(struct ctld *d, int node, const struct pctl_node_info *info, mono_ns now)
{
	struct node *n = d->nodes[node];
	mono_ns f;
	char a[32], b[32];

	if (info->cap_ppm != n->cap_ppm) {
		if (info->cap_ppm)
			log_info("node %s: vsched admits %.1f %% per CPU", n->name,
			         info->cap_ppm / 1e4);
		else
			log_info("node %s: vsched's per-CPU cap not reported: %.1f %% assumed",
			         n->name, CTLD_CAP_DEFAULT_PPM / 1e4);
		n->cap_ppm = info->cap_ppm;
		plan_changed(d); /* co-scheduling plans stay within it */
	}
	/* running, failed (interrupted) or none found: the last figure stands */
	if (info->selftest != VSP_SELFTEST_DONE || info->min_period_ns == 0 ||
	    info->min_period_ns == n->selftest_floor)
		return;
	n->selftest_floor = info->min_period_ns;
	f = n->miss_floor > n->selftest_floor ? n->miss_floor : n->selftest_floor;
	log_info("node %s: vsched's self-test serves periods down to %s with < 1 %% misses: "
	         "period floor %s",
	         n->name, duration_format(info->min_period_ns, a, sizeof(a)),
	         duration_format(f, b, sizeof(b)));
	if (f == n->floor)
		return;
	n->floor = f;
	floors_changed(d, node, now);
}

/* The back-off before a capped job tries to rise again. */
static mono_ns retry_delay(uint32_t retries)
{
	mono_ns t = LIMIT_RETRY;

	while (retries-- > 0 && t < LIMIT_RETRY_MAX)
		t *= 2;
	return t < LIMIT_RETRY_MAX ? t : LIMIT_RETRY_MAX;
}

/* Capped by a refusal: schedule the retry, or lift the cap when it is due. */
static void limit_retry(struct ctld *d, struct job *jb, mono_ns now)
{
	struct job_control *jc = &jb->control;
	struct control_decision dec;

	if (jc->loop.fl.u_limit_pct >= 100) {
		if (!jc->loop.unreachable)
			jc->retries = 0; /* it got what it needed */
		jc->retry_at = 0;
		return;
	}
	if (jc->retry_at == 0) {
		jc->retry_at = now + retry_delay(jc->retries);
		return;
	}
	if (mono_before(now, jc->retry_at))
		return;
	jc->retry_at = 0;
	jc->retries++;
	if (control_retry_u_limit(&jc->loop, now, &dec) != 0 || !dec.changed)
		return;
	log_info("job %s: needs U %.1f %%, capped at %.1f %%: trying %.1f %%", jb->name,
	         jc->loop.fl.need_u_pct, jc->loop.prev_u_pct, jc->loop.cur_u_pct);
	decide_apply(d, jb, &dec, now);
}

/* The two jobs have ranks on one CPU of one node. */
static bool share_cpu(const struct job *a, const struct job *b)
{
	for (uint32_t i = 0; i < a->cap_ranks; i++) {
		const struct rank *x = &a->ranks[i];
		if (!x->used || x->cpu < 0)
			continue;
		for (uint32_t k = 0; k < b->cap_ranks; k++) {
			const struct rank *y = &b->ranks[k];
			if (y->used && y->node == x->node && y->cpu == x->cpu)
				return true;
		}
	}
	return false;
}

/* jb holds less than its target and was refused a rise: jobs on its CPUs that hold more
 * than their targets give back up to what jb is short of, never going below their targets. */
static void revoke_for(struct ctld *d, struct job *jb, mono_ns now)
{
	const struct control_job *cj = &jb->control.loop;
	double short_of = fmin(cj->fl.need_u_pct, jb->control.target_pct) - cj->cur_u_pct;
	bool gave = false;

	for (int j = 0; j < d->njobs && short_of > 0; j++) {
		struct job *ob = d->jobs[j];
		struct control_job *oc = &ob->control.loop;
		struct control_decision dec;
		double over = oc->cur_u_pct - ob->control.target_pct;

		if (ob == jb || !floating(ob) || ob->txn.active || over <= 0 || !share_cpu(jb, ob))
			continue;
		double give = fmin(over, short_of);
		if (control_set_u_limit(oc, oc->cur_u_pct - give, now, &dec) != 0)
			continue;
		log_info("job %s: gives back U %.1f %% (holds %.1f %%, target %g %%) to job %s, "
		         "below its target",
		         ob->name, give, oc->cur_u_pct, ob->control.target_pct, jb->name);
		decide_apply(d, ob, &dec, now);
		short_of -= give;
		gave = true;
	}
	jb->control.revoked_at = now;
	if (gave) /* try again once the others' changes are in force */
		jb->control.retry_at = now + REVOKE_SETTLE;
}

/* The cap's gap to the refused U is open: the next bisection step can be sent now. */
static bool probe_due(const struct ctld *d, const struct job *jb)
{
	return !d->cfg.cs.on && floating(jb) && !jb->txn.active &&
	       control_u_limit_open(&jb->control.loop);
}

void capacity_tick(struct ctld *d, mono_ns now)
{
	for (int j = 0; j < d->njobs; j++) {
		struct job *jb = d->jobs[j];
		const struct control_job *cj = &jb->control.loop;
		struct control_decision dec;

		if (!floating(jb) || jb->txn.active)
			continue;
		if (probe_due(d, jb) && control_probe_u_limit(&jb->control.loop, now, &dec) == 0) {
			if (cj->fl.unplaced && cj->prev_u_pct >= 100)
				log_info("job %s: no reservation admitted yet: trying U %.1f %%",
				         jb->name, cj->cur_u_pct);
			else
				log_info("job %s: U capped at %.1f %% by its nodes: trying %.1f %%",
				         jb->name, cj->prev_u_pct, cj->cur_u_pct);
			decide_apply(d, jb, &dec, now);
			continue;
		}
		limit_retry(d, jb, now);
		if (cj->unreachable && cj->fl.u_limit_pct < 100 &&
		    cj->fl.need_u_pct > cj->cur_u_pct &&
		    cj->cur_u_pct < jb->control.target_pct - 0.5 &&
		    (!jb->control.revoked_at || now - jb->control.revoked_at >= REVOKE_AGAIN))
			revoke_for(d, jb, now);
	}
}

mono_ns capacity_next(const struct ctld *d)
{
	mono_ns next = 0;

	for (int j = 0; j < d->njobs; j++) {
		mono_ns t = d->jobs[j]->control.retry_at;
		if (probe_due(d, d->jobs[j]))
			return 1; /* due: the loop does not sleep */
		if (t && (next == 0 || mono_before(t, next)))
			next = t;
	}
	return next;
}
