/*
 * The controller's co-scheduling mode (config `coschedule`; DESIGN.md §5.2, paper 000
 * Sect. 4, docs/coschedule.md).
 *
 * Frames of T = `frame` are cut into slots of q = `slot` and aligned to a cluster epoch
 * (wall clock at start rounded down to a multiple of T, sent to every node in EPOCH when
 * `align`). A plan is one frame's slot table for every planned job: Algorithm 2 per node
 * and the Algorithm 1 reduction across nodes (fit.c), made into windows and checked
 * for CPU colouring (coplan.c). A job is planned when it has a target, its R_max is known
 * (U = slice / period of its control state < 1) and it has ranks on up nodes; it needs
 * ceil(U * slots) slots per (sub-)frame. Inputs per job: the per-process memory and
 * network bandwidth averaged over `bw_window` (mean over its ranks of each rank's
 * average), its processes per node; per node: CPUs and M, N (`node_mem_capacity`,
 * `node_net_capacity`, else the agent's NODE_HELLO figures, else the node's mean demand per
 * CPU-slot times its CPUs, which makes every slot aim at the average load).
 *
 * No CPU is planned above what vsched admits there: only the first floor(cap * slots)
 * slots of every sub-frame hold jobs, cap = the smallest per-CPU admission cap of the nodes
 * the planned jobs are on (NODE_INFO; CTLD_CAP_DEFAULT_PPM while a node has not reported
 * one), so a raise the cap has no room for is refused here ("no room") instead of by vsched.
 *
 * Processes vsched has already pinned (TASK_STATS cpu) are kept apart from the processes
 * pinned to the same CPU (fit_problem.place_cpus), and the colouring check keeps them on
 * their CPU (coplan_colour): a new plan can be applied with `set` where the processes are.
 *
 * The plan is made again when its inputs change, not every frame: a rank joins or leaves,
 * is pinned to another CPU,
 * a node registers or goes down, a target or settings change, a job's class
 * (devil / semi-devil / turtle) changes, or the granularity asked for changes. Jobs whose
 * planned windows differ from the committed ones are pushed together (cospush.c: steps in
 * an order in which each fits, then each job's transaction, txn.c: applied on every node
 * of the job or on none); a job whose windows are refused keeps its previous ones and is
 * tried again 5 s later. A target change re-plans at once; a higher target the plan has no
 * room for beside the other jobs' targets is refused (cosched_room) and the plan made again
 * without it; a lower one is never refused (change.c). When the plan is short, jobs above
 * their targets yield to jobs short of theirs (plan_yield).
 *
 * Granularity: the control loop still searches the period per job (docs/control.md);
 * here its period p maps to k = round(T / p) in [1, 8] "windows per frame", and the plan
 * is made on sub-frames of T / K slots, K = the largest k asked for that divides the
 * slots (coplan_make falls back to smaller ones when a plan does not fit, or when the
 * sub-frames would round a job's share up by more than the smallest epsilon of the planned
 * jobs and more than the whole frame does). Each job gets ceil(U * T / (K q)) slots of
 * every sub-frame: U = target is kept (rounded up to the slot grid) at every granularity.
 */
#include "controller.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "duration.h"
#include "log.h"
#include "text.h"

/* The timer plans once the inputs have been quiet this long (ranks of a job start
 * together, classes settle once the first bandwidth reports are in), and at the latest
 * PLAN_MAX_WAIT after the first change: every plan that reaches the nodes moves processes'
 * windows, and vsched pins a process to the CPU it was first admitted on. */
#define PLAN_QUIET    (1 * NSEC_PER_SEC)
#define PLAN_MAX_WAIT (5 * NSEC_PER_SEC)
/* Classes follow the averaged bandwidth, which moves as reports age: checked this often. */
#define CLASS_TICK (100 * NSEC_PER_MSEC)

void cosched_init(struct ctld *d)
{
	uint64_t now = clock_ns(CLOCK_REALTIME);
	mono_ns t = d->cfg.cs.frame ? d->cfg.cs.frame : 1;

	/* a multiple of the frame since 1970: a restarted controller picks the same grid */
	d->plan.epoch_ns = now - now % t;
	if (d->plan.epoch_ns == 0)
		d->plan.epoch_ns = t;
	d->plan.dirty = true;
}

static void plan_clear(struct cs_plan *p)
{
	free(p->job_of);
	free(p->node_of);
	free(p->place);
	free(p->node_off);
	free(p->table);
	p->job_of = p->node_of = NULL;
	p->place = NULL;
	p->node_off = NULL;
	p->table = NULL;
	p->njobs = p->nnodes = p->nplace = 0;
	p->valid = false;
}

void cosched_free(struct ctld *d)
{
	plan_clear(&d->plan);
}

void cosched_decided(struct ctld *d, struct job *jb)
{
	mono_ns p = jb->control.loop.period_ns;
	uint32_t k = 1;

	if (p > 0) {
		uint64_t r = (d->cfg.cs.frame + p / 2) / p;
		k = r < 1 ? 1 : r > COPLAN_MAX_WINDOWS ? COPLAN_MAX_WINDOWS : (uint32_t)r;
	}
	if (k != jb->plan.want_k) {
		log_info("job %s: granularity %u window-set(s) per frame (control period %.3f ms)",
		         jb->name, k, (double)p / 1e6);
		jb->plan.want_k = k;
	}
	/* also a new U (R_max measured, target): plan again; an unchanged plan sends nothing */
	plan_changed(d);
}

/*
 * The share vsched runs job jb's ranks with, for a job without a target: what this
 * controller committed for it, or else (after a restart: nothing committed yet) what the
 * windows an earlier controller sent give, from the task statistics; 0: none. Such a job is
 * planned with it, so that a plan makes room around what vsched already runs (and may move
 * it) instead of being refused over it; a target set for the job replaces it.
 */
static double held_util(const struct job *jb)
{
	double u = 0;

	if (jb->commit.gen != 0)
		return jb->commit.nwin > 0 && jb->commit.period > 0
		           ? (double)jb->commit.slice / (double)jb->commit.period
		           : 0;
	for (uint32_t r = 0; r < jb->cap_ranks; r++) {
		const struct rank *rk = &jb->ranks[r];
		mono_ns slice = 0;

		if (!rank_holds_windows(rk))
			continue;
		for (uint8_t k = 0; k < rk->held_nwin; k++)
			slice += rk->held[k].slice;
		if ((double)slice / (double)rk->held[0].period > u)
			u = (double)slice / (double)rk->held[0].period;
	}
	return u < 1 ? u : 0;
}

/* The job's utilisation to plan, or 0 when it is not planned. */
static double job_util(const struct job *jb)
{
	const struct control_job *cj = &jb->control.loop;

	if (jb->control.target_pct <= 0)
		return held_util(jb);
	if (cj->state == CONTROL_CALIBRATING || cj->period_ns == 0 || cj->slice_ns >= cj->period_ns)
		return 0;
	return (double)cj->slice_ns / (double)cj->period_ns;
}

/* Everything one planning round works on; build_free() releases what it still owns. */
struct build {
	uint32_t nslots, want_k, nj, nn, np;
	double max_excess;  /* the smallest epsilon of the planned jobs, as a fraction */
	uint32_t cap_ppm;   /* the smallest per-CPU cap of the nodes the jobs are on */
	int *jidx, *nidx;   /* plan row -> job, plan node -> node */
	int *jmap, *nmap;   /* job -> plan row, node -> plan node; -1: not planned */
	struct fit_job *fj; /* per plan row */
	struct fit_node *fn;
	struct fit_place *pl; /* by node, at most one per (job, node) */
	uint64_t *pcpus;      /* per placement: the CPUs its processes are pinned to */
	uint32_t *off;        /* nn + 1 */
	struct coplan_job *cj;
	uint8_t *table; /* nj * nslots */
	int over;       /* a trial (cosched_room): job over - 1 planned at over_u; 0: none */
	double over_u;
};

/* The utilisation job j is planned with in this build, 0: not planned. A trial
 * (cosched_room) admits targets: every other job with a target is planned at it, the share
 * it is entitled to (a floating job above its target yields, one below may rise to it). */
static double build_util(const struct ctld *d, const struct build *b, int j)
{
	const struct job *jb = d->jobs[j];
	double u;

	if (j == b->over - 1)
		return jb->control.loop.state == CONTROL_CALIBRATING ? 0 : b->over_u;
	u = job_util(jb);
	if (b->over && u > 0 && jb->control.target_pct > 0)
		return jb->control.target_pct / 100.0;
	return u;
}

static void *zalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size);

	if (p == NULL)
		fatalx("out of memory");
	return p;
}

static void build_free(struct build *b)
{
	free(b->jidx);
	free(b->nidx);
	free(b->jmap);
	free(b->nmap);
	free(b->fj);
	free(b->fn);
	free(b->pl);
	free(b->pcpus);
	free(b->off);
	free(b->cj);
	free(b->table);
}

/* Job jb can be planned on the up nodes: it has processes there, at most one per CPU. */
static bool job_plannable(const struct ctld *d, const struct build *b, const struct job *jb)
{
	bool on = false, fits = true;

	for (int l = 0; l < d->nnodes; l++) {
		uint32_t c = 0;
		for (uint32_t r = 0; r < jb->cap_ranks; r++)
			c += jb->ranks[r].used && jb->ranks[r].node == l;
		if (c == 0 || b->nmap[l] < 0)
			continue;
		on = true;
		if (c > d->nodes[l]->ncpus) {
			fits = false;
			log_warnx("job %s: %u processes on node %s with %u CPUs: not co-scheduled",
			          jb->name, c, d->nodes[l]->name, d->nodes[l]->ncpus);
		}
	}
	return on && fits;
}

/* Phase 1: the nodes (up, with CPUs) and the jobs (planned, with ranks on them). */
static void build_select(struct ctld *d, struct build *b)
{
	b->jidx = zalloc((size_t)d->njobs, sizeof(int));
	b->nidx = zalloc((size_t)d->nnodes, sizeof(int));
	b->jmap = zalloc((size_t)d->njobs, sizeof(int));
	b->nmap = zalloc((size_t)d->nnodes, sizeof(int));
	b->want_k = 1;
	b->max_excess = 1.0;
	for (int j = 0; j < d->njobs; j++) {
		d->jobs[j]->plan.need = d->jobs[j]->plan.got = 0;
		b->jmap[j] = -1;
	}
	for (int l = 0; l < d->nnodes; l++) {
		b->nmap[l] = -1;
		if (d->nodes[l]->up && d->nodes[l]->ncpus > 0) {
			b->nmap[l] = (int)b->nn;
			b->nidx[b->nn++] = l;
		}
	}
	for (int j = 0; j < d->njobs; j++) {
		struct job *jb = d->jobs[j];

		if (build_util(d, b, j) <= 0 || !job_plannable(d, b, jb))
			continue;
		b->jmap[j] = (int)b->nj;
		b->jidx[b->nj++] = j;
		if (jb->plan.want_k > b->want_k)
			b->want_k = jb->plan.want_k;
		if (jb->control.loop.p.epsilon_pct / 100.0 < b->max_excess)
			b->max_excess = jb->control.loop.p.epsilon_pct / 100.0;
	}
}

/* Plan row x's processes on plan node y: their count and, when all are pinned, the CPUs. */
static uint32_t job_procs_on(const struct ctld *d, const struct build *b, uint32_t x, uint32_t y,
                             uint64_t *cpus)
{
	const struct job *jb = d->jobs[b->jidx[x]];
	uint32_t c = 0;
	uint64_t mask = 0;
	bool known = true;

	for (uint32_t r = 0; r < jb->cap_ranks; r++) {
		const struct rank *rk = &jb->ranks[r];
		if (!rk->used || rk->node != b->nidx[y])
			continue;
		c++;
		if (rk->cpu >= 0 && rk->cpu < 64)
			mask |= 1ull << rk->cpu;
		else
			known = false;
	}
	*cpus = known ? mask : 0;
	return c;
}

/* Phase 2: the fitness problem: jobs' demands, placements, nodes' capacities (unknown:
 * every slot aims at the node's mean demand). */
static void build_problem(struct ctld *d, struct build *b, mono_ns now)
{
	const struct ctld_cosched *cs = &d->cfg.cs;
	double *demand = zalloc(b->nn, sizeof(double)), *ndemand = zalloc(b->nn, sizeof(double));
	double *weight = zalloc(b->nn, sizeof(double));

	b->fj = zalloc(b->nj, sizeof(*b->fj));
	b->fn = zalloc(b->nn, sizeof(*b->fn));
	b->off = zalloc((size_t)b->nn + 1, sizeof(*b->off));
	b->cj = zalloc(b->nj, sizeof(*b->cj));
	b->table = zalloc((size_t)b->nj * b->nslots, 1);
	b->pl = zalloc((size_t)b->nj * b->nn, sizeof(*b->pl));
	b->pcpus = zalloc((size_t)b->nj * b->nn, sizeof(*b->pcpus));
	for (uint32_t x = 0; x < b->nj; x++) {
		double m, n;
		jobbw_average(d, d->jobs[b->jidx[x]], now, &m, &n);
		b->fj[x].mem_bw = isnan(m) ? 0 : m;
		b->fj[x].net_bw = isnan(n) ? 0 : n;
		b->fj[x].util = build_util(d, b, b->jidx[x]);
	}
	for (uint32_t y = 0; y < b->nn; y++) {
		b->off[y] = b->np;
		for (uint32_t x = 0; x < b->nj; x++) {
			const struct fit_job *f = &b->fj[x];
			uint32_t c = job_procs_on(d, b, x, y, &b->pcpus[b->np]);
			if (c == 0)
				continue;
			b->pl[b->np++] = (struct fit_place){.job = x, .node = y, .procs = c};
			demand[y] += f->util * c * f->mem_bw;
			ndemand[y] += f->util * c * f->net_bw;
			weight[y] += f->util * c;
		}
	}
	b->off[b->nn] = b->np;
	b->cap_ppm = COPLAN_CAP_FULL;
	for (uint32_t y = 0; y < b->nn; y++) {
		const struct node *n = d->nodes[b->nidx[y]];
		uint32_t cap = n->cap_ppm ? n->cap_ppm : CTLD_CAP_DEFAULT_PPM;

		if (b->off[y] < b->off[y + 1] && cap < b->cap_ppm)
			b->cap_ppm = cap;
		b->fn[y].cpus = n->ncpus;
		b->fn[y].mem_cap = (double)(cs->mem_cap ? cs->mem_cap : n->mem_cap);
		b->fn[y].net_cap = (double)(cs->net_cap ? cs->net_cap : n->net_cap);
		if (!(b->fn[y].mem_cap > 0) && weight[y] > 0)
			b->fn[y].mem_cap = demand[y] / weight[y] * n->ncpus;
		if (!(b->fn[y].net_cap > 0) && weight[y] > 0)
			b->fn[y].net_cap = ndemand[y] / weight[y] * n->ncpus;
	}
	free(demand);
	free(ndemand);
	free(weight);
}

/* Phase 3: the plan in force takes the build's table and indices. */
static void build_adopt(struct ctld *d, struct build *b, mono_ns now)
{
	struct cs_plan *p = &d->plan;

	plan_clear(p);
	p->valid = true;
	p->seq++;
	p->made_at = now;
	p->njobs = b->nj;
	p->nnodes = b->nn;
	p->nplace = b->np;
	p->place = b->pl;
	p->node_off = b->off;
	p->table = b->table;
	p->job_of = b->jidx;
	p->node_of = b->nidx;
	b->jidx = b->nidx = NULL;
	b->pl = NULL;
	b->off = NULL;
	b->table = NULL;
}

/* A floating job the plan cannot give its U (the nodes are full, or it yields above its
 * target): its loop holds what the plan gives (the capacity back-off lifts the cap later,
 * capacity.c). */
static bool limit_to_plan(struct job *jb, uint32_t got, uint32_t need)
{
	struct control_job *cj = &jb->control.loop;
	struct control_decision dec;

	if (cj->p.algo != CONTROL_ALGO_FLOATING || got == 0 || need == 0)
		return false;
	if (control_set_u_limit(cj, cj->cur_u_pct * got / need, jb->commit.at, &dec) != 0)
		return false;
	return dec.changed;
}

/* Phase 4: every job's windows; the ones that changed are due for a push. */
static void build_assign(struct ctld *d, const struct build *b, mono_ns now)
{
	const struct cs_plan *p = &d->plan;

	for (int j = 0; j < d->njobs; j++) {
		struct job *jb = d->jobs[j];
		struct job_plan *jp = &jb->plan;
		const struct coplan_job *c = b->jmap[j] >= 0 ? &b->cj[b->jmap[j]] : NULL;
		uint32_t full;

		if (c == NULL) {
			jp->nwin = 0;
			continue;
		}
		jp->need = c->need;
		jp->got = c->got;
		jp->loop_gen = jb->control.loop.gen;
		jp->merged = c->merged;
		jp->nwin = (uint8_t)c->nwin;
		memset(jp->win, 0, sizeof(jp->win));
		memcpy(jp->win, c->win, c->nwin * sizeof(c->win[0]));
		if (jobs_plan_moves(jb))
			jp->push_at = now; /* due */
		full = fit_need(job_util(jb), p->res.slots);
		if (c->got < c->need)
			log_warnx("job %s: %u of the %u slots it needs per %s: the nodes are full",
			          jb->name, c->got, c->need, p->res.k > 1 ? "sub-frame" : "frame");
		else if (c->got < full)
			log_info("job %s: above its target, yields %u of its %u slots per %s to "
			         "jobs below theirs",
			         jb->name, full - c->got, full,
			         p->res.k > 1 ? "sub-frame" : "frame");
		if (c->got < full && limit_to_plan(jb, c->got, full))
			plan_changed(d); /* again, with the U it can have */
		if (c->merged)
			log_info("job %s: more than %d windows: closest merged (its slots may move "
			         "inside the merged spans)",
			         jb->name, COPLAN_MAX_WINDOWS);
	}
}

static void plan_log(const struct ctld *d)
{
	const struct cs_plan *p = &d->plan;
	const struct ctld_cosched *cs = &d->cfg.cs;
	char a[32], b[32];

	log_info("co-scheduling plan %llu: %u job(s) on %u node(s), %u window-set(s) per "
	         "frame %s of %u slots of %s (the first %u of each in use: per-CPU cap), pairing "
	         "%s%s%s",
	         (unsigned long long)p->seq, p->njobs, p->nnodes, p->res.k,
	         duration_format(cs->frame, a, sizeof(a)), p->res.slots,
	         duration_format(cs->slot, b, sizeof(b)), p->res.usable,
	         fit_pairing_name(cs->pairing),
	         p->res.complete ? "" : "; some jobs short of their share",
	         p->res.colourable ? "" : "; NOT pinnable to CPUs on some node");
	if (!p->res.colourable)
		log_warnx("co-scheduling plan %llu: on node %s the jobs of some slots cannot be "
		          "put on CPUs with disjoint windows; vsched may refuse some of them",
		          (unsigned long long)p->seq, d->nodes[p->node_of[p->res.bad_node]]->name);
}

/* The CPU number that stands for colour c on plan node y: the node's pinned CPUs and the
 * lowest numbers none of its processes is pinned to, as many as it has CPUs. */
static uint64_t cpu_bit(const struct build *b, uint32_t y, uint32_t c)
{
	uint64_t pinned = 0;
	uint32_t spare;

	for (uint32_t k = b->off[y]; k < b->off[y + 1]; k++)
		pinned |= b->pcpus[k];
	spare = b->fn[y].cpus - (uint32_t)__builtin_popcountll(pinned);
	for (uint32_t bit = 0; bit < 64; bit++) {
		if (!(pinned & (1ull << bit))) {
			if (spare == 0)
				continue;
			spare--;
		}
		if (c-- == 0)
			return 1ull << bit;
	}
	return 0;
}

/*
 * The plan did not colour (or is short) while some one-process placements are not pinned
 * yet: the heuristic keeps only pinned processes of one CPU apart, so a new job may be
 * paired with jobs pinned to every CPU. Tries the new processes on each CPU in turn (at
 * most PIN_TRIES assignments) as if pinned, and keeps the first complete, colourable plan:
 * their windows, pushed last (cospush.c), then fit beside the others on that CPU, where
 * vsched puts them. Returns 0 or coplan_make's error; b and res hold the plan kept.
 */
#define PIN_TRIES 64
static int plan_with_cpus(struct build *b, struct fit_problem *pb, const struct ctld_cosched *cs,
                          struct coplan_result *res)
{
	uint32_t u[6], nu = 0, tries = 1;
	uint64_t *keep = zalloc(b->np, sizeof(*keep));
	int rc = 0;
	bool found = false;

	memcpy(keep, b->pcpus, b->np * sizeof(*keep));
	for (uint32_t k = 0; k < b->np && nu < 6; k++)
		if (b->pcpus[k] == 0 && b->pl[k].procs == 1)
			u[nu++] = k;
	for (uint32_t i = 0; i < nu && tries <= PIN_TRIES; i++)
		tries *= b->fn[b->pl[u[i]].node].cpus;
	for (uint32_t t = 1; nu > 0 && tries <= PIN_TRIES && t < tries && !found && rc == 0; t++) {
		uint32_t x = t;
		for (uint32_t i = 0; i < nu; i++) {
			uint32_t nc = b->fn[b->pl[u[i]].node].cpus;
			b->pcpus[u[i]] = cpu_bit(b, b->pl[u[i]].node, x % nc);
			x /= nc;
		}
		rc = coplan_make(pb, b->nslots, cs->slot, b->want_k, b->max_excess, b->cap_ppm,
		                 b->table, b->cj, res);
		found = rc == 0 && res->complete && res->colourable;
		for (uint32_t i = 0; i < nu; i++)
			b->pcpus[u[i]] = 0;
	}
	if (!found && rc == 0 && nu > 0 && tries <= PIN_TRIES) /* the first plan, again */
		rc = coplan_make(pb, b->nslots, cs->slot, b->want_k, b->max_excess, b->cap_ppm,
		                 b->table, b->cj, res);
	memcpy(b->pcpus, keep, b->np * sizeof(*keep));
	free(keep);
	return rc;
}

/* The slots of n plan row x is entitled to: its need, at most its target's (none, or a
 * trial's job: its need). */
static uint32_t entitled(const struct ctld *d, const struct build *b, uint32_t x, uint32_t n)
{
	const struct job *jb = d->jobs[b->jidx[x]];
	uint32_t need = fit_need(b->fj[x].util, n), t;

	if (!(jb->control.target_pct > 0) || b->jidx[x] == b->over - 1)
		return need;
	t = fit_need(jb->control.target_pct / 100.0, n);
	return need < t ? need : t;
}

/*
 * Jobs above their targets yield (docs/control.md "Who yields"): when the plan in res
 * leaves jobs short of what they are entitled to, the jobs planned above their entitlement
 * are planned with less, by the slots the others are short of (all: down to their
 * entitlement), never below it. Returns true when some job's share was lowered: plan again.
 */
static bool plan_yield(const struct ctld *d, struct build *b, const struct coplan_result *res,
                       bool all)
{
	uint32_t n = res->slots, short_of = 0;
	bool lowered = false;

	for (uint32_t x = 0; x < b->nj; x++) {
		uint32_t own = entitled(d, b, x, n);
		if (b->cj[x].got < own)
			short_of += own - b->cj[x].got;
	}
	for (uint32_t x = 0; x < b->nj && short_of > 0; x++) {
		uint32_t need = fit_need(b->fj[x].util, n), own = entitled(d, b, x, n), give;

		if (need <= own)
			continue;
		give = all || need - own < short_of ? need - own : short_of;
		b->fj[x].util = (double)(need - give) / n;
		if (!all)
			short_of -= give;
		lowered = true;
	}
	return lowered;
}

/* Phases 1-2 and the plan into b and res; jobs above their targets yield to those short
 * of theirs (plan_yield). Returns coplan_make's result; -ENOENT: no job to plan. */
static int build_plan(struct ctld *d, struct build *b, mono_ns now, struct coplan_result *res)
{
	const struct ctld_cosched *cs = &d->cfg.cs;
	int rc;

	b->nslots = (uint32_t)(cs->frame / cs->slot);
	build_select(d, b);
	if (b->nj == 0)
		return -ENOENT;
	build_problem(d, b, now);
	struct fit_problem pb = {.njobs = b->nj,
	                         .nnodes = b->nn,
	                         .jobs = b->fj,
	                         .nodes = b->fn,
	                         .place = b->pl,
	                         .nplace = b->np,
	                         .node_off = b->off,
	                         .pairing = cs->pairing,
	                         .place_cpus = b->pcpus};
	rc = coplan_make(&pb, b->nslots, cs->slot, b->want_k, b->max_excess, b->cap_ppm, b->table,
	                 b->cj, res);
	for (int all = 0; all < 2 && rc == 0 && !res->complete; all++)
		if (plan_yield(d, b, res, all))
			rc = coplan_make(&pb, b->nslots, cs->slot, b->want_k, b->max_excess,
			                 b->cap_ppm, b->table, b->cj, res);
	if (rc == 0 && !(res->complete && res->colourable))
		rc = plan_with_cpus(b, &pb, cs, res);
	return rc;
}

void cosched_replan(struct ctld *d, mono_ns now)
{
	struct build b = {0};
	int rc;

	d->plan.dirty = false;
	rc = build_plan(d, &b, now, &d->plan.res);
	if (rc == -ENOENT) {
		plan_clear(&d->plan);
		d->plan.seq++;
		d->plan.made_at = now;
		for (int j = 0; j < d->njobs; j++)
			d->jobs[j]->plan.nwin = 0;
	} else if (rc != 0) {
		log_warnx("co-scheduling plan failed: %s; the previous one stays", strerror(-rc));
	} else {
		build_adopt(d, &b, now);
		build_assign(d, &b, now);
		plan_log(d);
	}
	build_free(&b);
}

int cosched_room(struct ctld *d, int j, double pct, mono_ns now, char *why, size_t whylen)
{
	struct build b = {.over = j + 1, .over_u = pct / 100.0};
	struct coplan_result res;
	const char *per;
	int rc = build_plan(d, &b, now, &res);

	if (rc != 0 || b.jmap[j] < 0) {
		build_free(&b);
		return 0; /* not planned yet (R_max, ranks): the target waits, nothing refused */
	}
	per = res.k > 1 ? "sub-frame" : "frame";
	for (uint32_t x = 0; x < b.nj && rc == 0; x++) {
		const struct job *o = d->jobs[b.jidx[x]];
		const struct coplan_job *c = &b.cj[x];

		if (b.jidx[x] == j && c->got < c->need) {
			text_fmt(why, whylen,
			         "no room: the plan gives it %u of the %u slots per %s its target "
			         "needs",
			         c->got, c->need, per);
			rc = -ENOSPC;
		} else if (b.jidx[x] != j && o->plan.got >= o->plan.need &&
		           c->got < fit_need(o->control.target_pct / 100.0, res.slots)) {
			/* short of its own target's share (a floating job above its target yields)
			 */
			text_fmt(why, whylen,
			         "no room: job %s would get %u of the %u slots per %s its "
			         "target needs",
			         o->name, c->got,
			         fit_need(o->control.target_pct / 100.0, res.slots), per);
			rc = -ENOSPC;
		}
	}
	build_free(&b);
	return rc;
}

/* Classes from the averaged bandwidth; a change is a change of the plan's inputs. */
static void update_classes(struct ctld *d, mono_ns now)
{
	for (int j = 0; j < d->njobs; j++) {
		struct job *jb = d->jobs[j];
		uint8_t k = jobbw_class(d, jb, true, now);

		if (k != jb->plan.klass) {
			log_info("job %s: class %s -> %s", jb->name,
			         padm_class_name(jb->plan.klass), padm_class_name(k));
			jb->plan.klass = k;
			plan_changed(d);
		}
	}
}

bool cosched_in_force(const struct ctld *d, const struct job *jb)
{
	const struct cs_plan *p = &d->plan;
	const struct job_plan *jp = &jb->plan;

	return p->valid && !p->dirty && jp->nwin > 0 && !jb->txn.active &&
	       jp->loop_gen == jb->control.loop.gen && !jobs_plan_moves(jb);
}

/* A job whose planned windows are not the committed ones, due for a push now. */
static bool push_due(const struct job *jb, mono_ns now)
{
	return !jb->txn.active && !mono_before(now, jb->plan.push_at) && jobs_plan_moves(jb);
}

int cosched_push(struct ctld *d, int j, const struct txn *tpl, const uint8_t *cid, size_t cidlen,
                 mono_ns now)
{
	bool *due = calloc((size_t)d->njobs + 1, sizeof(*due));
	bool any = false;
	int rc;

	if (due == NULL)
		fatalx("out of memory");
	for (int k = 0; k < d->njobs; k++) {
		const struct job *jb = d->jobs[k];
		due[k] = k == j ? jb->plan.nwin > 0 && !jb->txn.active : push_due(jb, now);
		any |= due[k];
	}
	rc = any ? cospush_plan(d, due, j, tpl, cid, cidlen, now) : -1;
	free(due);
	return rc;
}

void cosched_tick(struct ctld *d, mono_ns now)
{
	struct cs_plan *p = &d->plan;

	update_classes(d, now);
	p->tick_at = now + CLASS_TICK;
	if (p->changes != p->seen) {
		if (!p->dirty_since)
			p->dirty_since = now;
		p->seen = p->changes;
		p->quiet_since = now;
	}
	if (p->dirty &&
	    (now - p->quiet_since >= PLAN_QUIET || now - p->dirty_since >= PLAN_MAX_WAIT)) {
		cosched_replan(d, now);
		p->dirty_since = 0;
	}
	cosched_push(d, -1, NULL, NULL, 0, now);
}

mono_ns cosched_next(const struct ctld *d)
{
	const struct cs_plan *p = &d->plan;
	mono_ns next = p->tick_at;

	if (p->dirty) {
		mono_ns at = p->quiet_since + PLAN_QUIET;
		if (p->dirty_since && mono_before(p->dirty_since + PLAN_MAX_WAIT, at))
			at = p->dirty_since + PLAN_MAX_WAIT;
		next = mono_min(next, at);
	}
	for (int j = 0; j < d->njobs; j++) {
		const struct job *jb = d->jobs[j];
		if (jb->plan.nwin > 0 && !jb->txn.active && mono_before(jb->plan.push_at, next))
			next = jb->plan.push_at;
	}
	return next;
}
