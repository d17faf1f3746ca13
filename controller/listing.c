/*
 * Listings (JOB_LIST, NODE_LIST, STATUS, JOB_SHOW) and the dashboard of
 * vsched-controller -d: records of the admin protocol (common/proto_admin.h) filled from
 * the tables, sorted by name. Read-only: nothing here changes the daemon's state.
 */
#include "controller.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dashboard.h"
#include "log.h"
#include "text.h"

static int by_job_name(const void *a, const void *b)
{
	return strcmp(((const struct padm_job *)a)->name, ((const struct padm_job *)b)->name);
}

static int by_node_name(const void *a, const void *b)
{
	return strcmp(((const struct padm_node *)a)->name, ((const struct padm_node *)b)->name);
}

/* NAN for what is not a finite number (the protocol carries no infinities). */
static double finite_or_nan(double v)
{
	return isinf(v) ? NAN : v;
}

static void fill_job_counts(const struct ctld *d, const struct job *jb, struct padm_job *o)
{
	for (int i = 0; i < d->nnodes; i++)
		o->nnodes += jobs_on_node(jb, i);
	for (uint32_t r = 0; r < jb->cap_ranks; r++) {
		if (!jb->ranks[r].used)
			continue;
		o->mem_bps += jb->ranks[r].mem_bps;
		o->net_bps += jb->ranks[r].net_bps;
		o->misses += jb->ranks[r].misses;
	}
}

/* The job's U, efficiency, bounds, and why it is not on target when it cannot be. */
static void fill_job_u(const struct ctld *d, const struct job *jb, struct padm_job *o)
{
	const struct job_control *jc = &jb->control;
	const struct control_job *cj = &jc->loop;
	bool constrained = jb->commit.period > 0 && jb->commit.slice < jb->commit.period;
	double u = constrained ? 100.0 * (double)jb->commit.slice / (double)jb->commit.period : NAN;
	bool capped =
	    cj->p.algo == CONTROL_ALGO_FLOATING && cj->fl.u_limit_pct < 100 && jc->limit_why[0];

	o->u_pct = u;
	o->eff = constrained && isfinite(cj->last_rate_pct) ? cj->last_rate_pct / u : NAN;
	o->u_max_pct = jc->set.u_max_pct;
	o->floor = capacity_job_floor(d, jb);
	o->need_u_pct = NAN;
	text_fmt(o->reason, sizeof(o->reason), "%s", jb->commit.reason);
	if (!o->reason[0] && capped)
		text_fmt(o->reason, sizeof(o->reason), "U capped at %.1f %%: %s",
		         cj->fl.u_limit_pct, jc->limit_why);
	if (cj->p.algo != CONTROL_ALGO_FLOATING || !cj->unreachable || !isfinite(cj->fl.need_u_pct))
		return;
	o->need_u_pct = cj->fl.need_u_pct;
	if (cj->fl.unplaced && cj->cur_u_pct >= 100)
		text_fmt(o->reason, sizeof(o->reason),
		         "needs U %.0f %%; no reservation admitted yet: %s", cj->fl.need_u_pct,
		         jb->commit.reason[0] ? jb->commit.reason : jc->limit_why);
	else if (cj->fl.need_u_pct < cj->cur_u_pct)
		text_fmt(
		    o->reason, sizeof(o->reason),
		    "runs at %.1f %% with the smallest slice (U %.2f %%): faster than the target",
		    cj->last_rate_pct, cj->cur_u_pct);
	else if (cj->cur_u_pct >= jc->set.u_max_pct - 0.05)
		text_fmt(o->reason, sizeof(o->reason), "needs U %.0f %%; u_max is %g %%",
		         cj->fl.need_u_pct, jc->set.u_max_pct);
	else
		text_fmt(o->reason, sizeof(o->reason),
		         "needs U %.0f %%; holds %.1f %%, the most its "
		         "nodes admit%s%s",
		         cj->fl.need_u_pct, cj->cur_u_pct,
		         jb->commit.reason[0] || capped ? ": " : "",
		         jb->commit.reason[0] ? jb->commit.reason
		         : capped             ? jc->limit_why
		                              : "");
}

/* Ranks are registered but none has reported a unit yet: libapprate-mpi's auto mode before
 * it has found the main loop's period, or a program that never calls the progress API. */
static bool no_progress_signal(const struct job *jb)
{
	if (jb->nranks == 0 || isfinite(jb->control.loop.last_rate_pct))
		return false;
	for (uint32_t r = 0; r < jb->cap_ranks; r++)
		if (jb->ranks[r].used && isfinite(jb->ranks[r].rate))
			return false;
	return true;
}

static void fill_job_silence(const struct ctld *d, const struct job *jb, struct padm_job *o,
                             mono_ns now)
{
	const struct rank *worst = NULL;
	mono_ns worst_age = 0;
	char why[sizeof(o->reason)];

	for (uint32_t r = 0; r < jb->cap_ranks; r++) {
		const struct rank *rk = &jb->ranks[r];
		mono_ns at = rank_silent_at(rk), age;

		if (!at || mono_before(now, at))
			continue;
		age = now - rk->last_report;
		if (age > worst_age) {
			worst = rk;
			worst_age = age;
		}
	}
	if (!worst)
		return;
	text_fmt(why, sizeof(why),
	         "rank %u (node %s, pid %d) silent for %.0f s: no progress reported",
	         (unsigned)(worst - jb->ranks), d->nodes[worst->node]->name, (int)worst->pid,
	         (double)worst_age / NSEC_PER_SEC);
	if (o->reason[0]) {
		char rest[sizeof(o->reason)];
		text_fmt(rest, sizeof(rest), "%s", o->reason);
		text_fmt(o->reason, sizeof(o->reason), "%s; %s", why, rest);
	} else {
		text_fmt(o->reason, sizeof(o->reason), "%s", why);
	}
}

static void fill_job(const struct ctld *d, const struct job *jb, struct padm_job *o, mono_ns now)
{
	const struct job_control *jc = &jb->control;

	memset(o, 0, sizeof(*o));
	text_fmt(o->name, sizeof(o->name), "%s", jb->name);
	o->state = jobs_state(jb);
	o->algo = jc->set.algo;
	o->agg = jc->set.agg;
	if (jc->loop.r_max > 0)
		o->flags |= PADM_JF_RMAX_KNOWN;
	if (jc->set.r_max_given)
		o->flags |= PADM_JF_RMAX_GIVEN;
	if (jb->txn.active)
		o->flags |= PADM_JF_PENDING;
	if (no_progress_signal(jb))
		o->flags |= PADM_JF_NO_SIGNAL;
	/* coschedule: the class the plan uses (bandwidth averaged over bw_window) */
	o->klass = d->cfg.cs.on ? jb->plan.klass : jobbw_class(d, jb, false, now);
	o->nranks = jb->nranks;
	o->target_milli = (int32_t)lround(jc->target_pct * 1000);
	o->current_pct = finite_or_nan(jc->loop.last_rate_pct);
	/* against the target now: the last evaluation's error is against the target then */
	o->err_pct =
	    finite_or_nan(jc->target_pct > 0 ? jc->loop.last_rate_pct - jc->target_pct : NAN);
	o->r_max = isfinite(jc->loop.r_max) ? jc->loop.r_max : 0;
	o->eps_pct = jc->set.eps_pct;
	o->period = jb->commit.period;
	o->slice = jb->commit.slice;
	o->delta_period = jc->set.delta_period;
	o->min_period = jc->set.min_period;
	o->min_slice = jc->set.min_slice;
	o->initial_period = jc->set.initial_period;
	o->gen = jb->commit.gen;
	fill_job_counts(d, jb, o);
	o->evaluations = jc->loop.evaluations;
	o->changes = jc->loop.changes;
	fill_job_u(d, jb, o);
	fill_job_silence(d, jb, o, now);
	text_scrub(o->reason);
}

static void fill_node(const struct ctld *d, int i, struct padm_node *o, mono_ns now)
{
	const struct node *n = d->nodes[i];

	memset(o, 0, sizeof(*o));
	text_fmt(o->name, sizeof(o->name), "%s", n->name);
	o->up = n->up;
	o->ncpus = n->ncpus;
	o->nprocs = n->nprocs;
	for (int j = 0; j < d->njobs; j++)
		o->njobs += jobs_on_node(d->jobs[j], i);
	o->sum_u = isfinite(n->sum_u) ? n->sum_u : 0;
	o->mem_used = n->mem_used;
	o->mem_cap = n->mem_cap;
	o->net_used = n->net_used;
	o->net_cap = n->net_cap;
	o->mem_src = n->mem_src;
	o->net_src = n->net_src;
	o->hb_age_ms = n->last_seen ? (now - n->last_seen) / NSEC_PER_MSEC : UINT64_MAX;
	o->floor = n->floor;
	o->dropped = n->dropped;
	o->cap_ppm = n->cap_ppm;
}

static void fill_rank(const struct ctld *d, const struct job *jb, uint32_t q, struct padm_rank *o)
{
	const struct rank *rk = &jb->ranks[q];

	text_fmt(o->job, sizeof(o->job), "%s", jb->name);
	text_fmt(o->node, sizeof(o->node), "%s", d->nodes[rk->node]->name);
	o->rank = q;
	o->pid = rk->pid;
	o->up = d->nodes[rk->node]->up;
	o->rate = finite_or_nan(rk->rate);
	o->period = rk->period;
	o->slice = rk->slice;
	o->gen = rk->gen;
	o->misses = rk->misses;
	o->mem_bps = rk->mem_bps;
	o->net_bps = rk->net_bps;
}

/* The plan row of job j, or -1. */
static int plan_row(const struct cs_plan *p, int j)
{
	for (uint32_t x = 0; p->valid && x < p->njobs; x++)
		if (p->job_of[x] == j)
			return (int)x;
	return -1;
}

/* Plan node y runs plan row x somewhere. */
static bool plan_on_node(const struct cs_plan *p, uint32_t y, uint32_t x)
{
	for (uint32_t k = p->node_off[y]; k < p->node_off[y + 1]; k++)
		if (p->place[k].job == x)
			return true;
	return false;
}

/* Who runs with plan row x in its slots on each of its nodes (itself included): the
 * count, and the records when out is not NULL (at most max). */
static uint32_t plan_slots(const struct ctld *d, uint32_t x, struct padm_slot *out, uint32_t max)
{
	const struct cs_plan *p = &d->plan;
	uint32_t n = 0;

	for (uint32_t y = 0; y < p->nnodes; y++) {
		if (!plan_on_node(p, y, x))
			continue;
		for (uint32_t s = 0; s < p->res.slots; s++) {
			if (!p->table[(size_t)x * p->res.slots + s])
				continue;
			for (uint32_t k = p->node_off[y]; k < p->node_off[y + 1]; k++) {
				uint32_t o = p->place[k].job;
				if (!p->table[(size_t)o * p->res.slots + s])
					continue;
				if (out != NULL && n < max) {
					out[n].slot = (uint16_t)s;
					text_fmt(out[n].node, sizeof(out[n].node), "%s",
					         d->nodes[p->node_of[y]]->name);
					text_fmt(out[n].job, sizeof(out[n].job), "%s",
					         d->jobs[p->job_of[o]]->name);
				}
				n++;
			}
		}
	}
	return n;
}

/* The job's slot table (coschedule mode): its windows, and who runs in its slots on each
 * of its nodes (itself included). */
static void fill_plan(const struct ctld *d, int j, struct padm_reply *r)
{
	const struct cs_plan *p = &d->plan;
	const struct job_plan *jp = &d->jobs[j]->plan;
	int x = plan_row(p, j);
	uint32_t n;

	memset(&r->plan, 0, sizeof(r->plan));
	r->plan.flags = PADM_PF_ON;
	r->plan.frame_slots = (uint16_t)(d->cfg.cs.frame / d->cfg.cs.slot);
	r->plan.slots = p->valid ? (uint16_t)p->res.slots : r->plan.frame_slots;
	r->plan.slot_ns = d->cfg.cs.slot;
	if (p->valid && p->res.colourable)
		r->plan.flags |= PADM_PF_COLOURABLE;
	if (p->valid && p->res.complete)
		r->plan.flags |= PADM_PF_COMPLETE;
	if (x < 0)
		return;
	r->plan.flags |= PADM_PF_PLANNED;
	if (jp->merged)
		r->plan.flags |= PADM_PF_MERGED;
	r->plan.need = jp->need;
	r->plan.got = jp->got;
	r->plan.nwin = jp->nwin;
	for (uint8_t w = 0; w < jp->nwin; w++) {
		r->plan.win[w].period = jp->win[w].period;
		r->plan.win[w].slice = jp->win[w].slice;
		r->plan.win[w].deadline = jp->win[w].deadline;
		r->plan.win[w].phase = jp->win[w].phase;
	}
	n = plan_slots(d, (uint32_t)x, NULL, 0);
	if (n > PADM_MAX_RECORDS)
		n = PADM_MAX_RECORDS;
	r->nslots = (uint16_t)n;
	r->slots = n ? calloc(n, sizeof(*r->slots)) : NULL;
	if (n && !r->slots)
		fatalx("out of memory");
	plan_slots(d, (uint32_t)x, r->slots, n);
}

static int capped(int n)
{
	return n > PADM_MAX_RECORDS ? PADM_MAX_RECORDS : n;
}

/* Allocates the records of a listing of nj jobs, nn nodes and nr ranks. */
static void alloc_records(struct padm_reply *r, int nj, int nn, int nr)
{
	r->jobs = nj ? calloc((size_t)nj, sizeof(*r->jobs)) : NULL;
	r->nodes = nn ? calloc((size_t)nn, sizeof(*r->nodes)) : NULL;
	r->ranks = nr ? calloc((size_t)nr, sizeof(*r->ranks)) : NULL;
	if ((nj && !r->jobs) || (nn && !r->nodes) || (nr && !r->ranks))
		fatalx("out of memory");
	r->njobs = (uint16_t)nj;
	r->nnodes = (uint16_t)nn;
	r->nranks = (uint16_t)nr;
}

void listing_fill(const struct ctld *d, struct padm_reply *r, bool jobs, bool nodes, int ranks_of,
                  mono_ns now)
{
	int nj = capped(jobs ? d->njobs : 0), nn = capped(nodes ? d->nnodes : 0), nr = 0;

	if (ranks_of >= 0) {
		const struct job *jb = d->jobs[ranks_of];
		for (uint32_t q = 0; q < jb->cap_ranks; q++)
			nr += jb->ranks[q].used;
		nr = capped(nr);
	}
	alloc_records(r, nj, nn, nr);
	for (int i = 0; i < nj; i++)
		fill_job(d, d->jobs[i], &r->jobs[i], now);
	for (int i = 0; i < nn; i++)
		fill_node(d, i, &r->nodes[i], now);
	if (ranks_of >= 0) {
		const struct job *jb = d->jobs[ranks_of];
		int k = 0;

		for (uint32_t q = 0; q < jb->cap_ranks && k < nr; q++)
			if (jb->ranks[q].used)
				fill_rank(d, jb, q, &r->ranks[k++]);
	}
	if (ranks_of >= 0 && d->cfg.cs.on)
		fill_plan(d, ranks_of, r);
	if (nj > 1)
		qsort(r->jobs, (size_t)nj, sizeof(*r->jobs), by_job_name);
	if (nn > 1)
		qsort(r->nodes, (size_t)nn, sizeof(*r->nodes), by_node_name);
}

void listing_dashboard(const struct ctld *d, FILE *f, mono_ns now)
{
	struct padm_reply r;
	char title[160], when[32];
	time_t t = time(NULL);
	struct tm tm;

	memset(&r, 0, sizeof(r));
	listing_fill(d, &r, true, true, -1, now);
	localtime_r(&t, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	text_fmt(title, sizeof(title), "vsched-controller %s", d->cfg.admin);
	fputs(DASH_ANSI_HOME_CLEAR, f);
	dash_render(f, &r, title, when);
	fflush(f);
	padm_reply_release(&r);
}
