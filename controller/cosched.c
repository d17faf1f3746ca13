/*
 * The controller's co-scheduling mode (config `coschedule`; DESIGN.md §5.2, paper 000
 * Sect. 4, docs/coschedule.md).
 *
 * Frames of T = `frame` are cut into slots of q = `slot` and aligned to a cluster epoch
 * (wall clock at start rounded down to a multiple of T, sent to every node in EPOCH when
 * `align`). A plan is one frame's slot table for every planned job: Algorithm 2 per node
 * and the Algorithm 1 reduction across nodes (fitness.c), made into windows and checked
 * for CPU colouring (coplan.c). A job is planned when it has a target, its R_max is known
 * (U = slice / period of its control state < 1) and it has ranks on up nodes; it needs
 * ceil(U * slots) slots per (sub-)frame. Inputs per job: the per-process memory and
 * network bandwidth averaged over `bw_window` (mean over its ranks of each rank's
 * average), its processes per node; per node: CPUs and M, N (`node_mem_capacity`,
 * `node_net_capacity`, else the agent's NODE_HELLO figures, else the node's mean demand per
 * CPU-slot times its CPUs, which makes every slot aim at the average load).
 *
 * Processes vsched has already pinned (TASK_STATS cpu) are kept apart from the processes
 * pinned to the same CPU (fit_problem.place_cpus), and the colouring check keeps them on
 * their CPU (coplan_colour): a new plan can be applied with `set` where the processes are.
 *
 * The plan is made again when its inputs change, not every frame: a rank joins or leaves,
 * is pinned to another CPU,
 * a node registers or goes down, a target or settings change, a job's class
 * (devil / semi-devil / turtle) changes, or the granularity asked for changes. Jobs whose
 * planned windows differ from the committed ones are pushed, each as its own transaction
 * (jobs.c: applied on every node of the job or on none); a job whose windows are refused
 * keeps its previous ones and is tried again 5 s later.
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

#define PUSH_RETRY (5 * NSEC_PER_SEC)
/* The timer plans once the inputs have been quiet this long (ranks of a job start
 * together, classes settle once the first bandwidth reports are in), and at the latest
 * PLAN_MAX_WAIT after the first change: every plan that reaches the nodes moves processes'
 * windows, and vsched pins a process to the CPU it was first admitted on. */
#define PLAN_QUIET    (1 * NSEC_PER_SEC)
#define PLAN_MAX_WAIT (5 * NSEC_PER_SEC)
#define TURTLE_FLOOR  100e6 /* B/s per process: below, a turtle whatever the node */

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

void cosched_dirty(struct ctld *d)
{
	d->plan.dirty = true;
	d->plan.changes++;
}

void cosched_bw_sample(struct ctld *d, struct rank *rk, uint64_t mem, bool mem_ok, uint64_t net,
                       mono_ns now)
{
	(void)d;
	rk->bw[rk->bw_head] =
	    (struct bw_sample){.at = now, .mem = mem_ok ? mem : 0, .net = net, .mem_ok = mem_ok};
	rk->bw_head = (rk->bw_head + 1) % RANK_BW_SAMPLES;
	if (rk->nbw < RANK_BW_SAMPLES)
		rk->nbw++;
}

/* A rank's average over the window (the latest sample alone when none is that recent: an
 * agent that samples less often than w); false when it has no sample. *mem_ok: some
 * sample averaged had a memory source. */
static bool rank_bw(const struct ctld *d, const struct rank *rk, mono_ns now, double *mem,
                    double *net, bool *mem_ok)
{
	double m = 0, n = 0;
	uint32_t c = 0;

	*mem_ok = false;
	if (rk->nbw == 0)
		return false;
	for (uint32_t i = 0; i < rk->nbw; i++) {
		const struct bw_sample *s = &rk->bw[i];
		if (now - s->at > d->cfg.cs.bw_window)
			continue;
		m += (double)s->mem;
		n += (double)s->net;
		*mem_ok |= s->mem_ok;
		c++;
	}
	if (c == 0) {
		const struct bw_sample *s =
		    &rk->bw[(rk->bw_head + RANK_BW_SAMPLES - 1) % RANK_BW_SAMPLES];
		*mem = (double)s->mem;
		*net = (double)s->net;
		*mem_ok = s->mem_ok;
		return true;
	}
	*mem = m / c;
	*net = n / c;
	return true;
}

void cosched_job_bw(const struct ctld *d, const struct job *jb, mono_ns now, double *mem,
                    double *net)
{
	double m = 0, n = 0, rm, rn;
	uint32_t c = 0;
	bool ok, any_ok = false;

	for (uint32_t r = 0; r < jb->cap_ranks; r++) {
		if (!jb->ranks[r].used || !rank_bw(d, &jb->ranks[r], now, &rm, &rn, &ok))
			continue;
		m += rm;
		n += rn;
		any_ok |= ok;
		c++;
	}
	*mem = c && any_ok ? m / c : NAN;
	*net = c ? n / c : NAN;
}

/* The heaviest per-process memory bandwidth among the jobs on node l. */
static double node_max_bw(const struct ctld *d, int l, mono_ns now)
{
	double mx = 0, m, n;
	bool ok;

	for (int j = 0; j < d->njobs; j++) {
		const struct job *jb = d->jobs[j];
		for (uint32_t r = 0; r < jb->cap_ranks; r++) {
			if (jb->ranks[r].used && jb->ranks[r].node == l &&
			    rank_bw(d, &jb->ranks[r], now, &m, &n, &ok) && ok && m > mx)
				mx = m;
		}
	}
	return mx;
}

uint8_t cosched_job_class(const struct ctld *d, const struct job *jb, mono_ns now)
{
	struct fit_class_params cp;
	struct fit_node fn = {0};
	double mem, net;
	int l = -1;

	cosched_job_bw(d, jb, now, &mem, &net);
	if (isnan(mem))
		return PADM_CLASS_UNKNOWN;
	for (uint32_t r = 0; r < jb->cap_ranks && l < 0; r++)
		if (jb->ranks[r].used)
			l = jb->ranks[r].node;
	if (l < 0)
		return PADM_CLASS_UNKNOWN;
	if (mem < TURTLE_FLOOR)
		return PADM_CLASS_TURTLE;
	fn.cpus = d->nodes[l]->ncpus;
	fn.mem_cap = (double)(d->cfg.cs.mem_cap ? d->cfg.cs.mem_cap : d->nodes[l]->mem_cap);
	if (!(fn.mem_cap > 0)) /* M unknown: relative to the node's heaviest process */
		fn.mem_cap = node_max_bw(d, l, now) * fn.cpus;
	fit_class_params_default(&cp);
	switch (fit_classify_bw(mem, &fn, &cp)) {
	case FIT_TURTLE:
		return PADM_CLASS_TURTLE;
	case FIT_SEMIDEVIL:
		return PADM_CLASS_SEMIDEVIL;
	case FIT_DEVIL:
		return PADM_CLASS_DEVIL;
	default:
		return PADM_CLASS_UNKNOWN;
	}
}

void cosched_decided(struct ctld *d, struct job *jb)
{
	mono_ns p = jb->ctl.period_ns;
	uint32_t k = 1;

	if (p > 0) {
		uint64_t r = (d->cfg.cs.frame + p / 2) / p;
		k = r < 1 ? 1 : r > COPLAN_MAX_WINDOWS ? COPLAN_MAX_WINDOWS : (uint32_t)r;
	}
	if (k != jb->want_k) {
		log_info("job %s: granularity %u window-set(s) per frame (control period %.3f ms)",
		         jb->name, k, (double)p / 1e6);
		jb->want_k = k;
	}
	/* also a new U (R_max measured, target): plan again; an unchanged plan sends nothing */
	cosched_dirty(d);
}

/* The job's utilisation to plan, or 0 when it is not planned. */
static double job_util(const struct job *jb)
{
	if (jb->target_pct <= 0 || jb->ctl.state == CONTROL_CALIBRATING || jb->ctl.period_ns == 0 ||
	    jb->ctl.slice_ns >= jb->ctl.period_ns)
		return 0;
	return (double)jb->ctl.slice_ns / (double)jb->ctl.period_ns;
}

static bool windows_equal(uint8_t na, const struct vsp_resv *a, uint8_t nb,
                          const struct vsp_resv *b)
{
	return na == nb && memcmp(a, b, na * sizeof(a[0])) == 0;
}

void cosched_replan(struct ctld *d, mono_ns now)
{
	struct cs_plan *p = &d->plan;
	const struct ctld_cosched *cs = &d->cfg.cs;
	uint32_t nslots = (uint32_t)(cs->frame / cs->slot), want_k = 1, nj = 0, nn = 0, np = 0;
	double max_excess = 1.0; /* the smallest epsilon of the planned jobs, as a fraction */
	int *jidx = calloc((size_t)d->njobs + 1, sizeof(int));
	int *nidx = calloc((size_t)d->nnodes + 1, sizeof(int));
	int *nmap = calloc((size_t)d->nnodes + 1, sizeof(int));
	int *jmap = calloc((size_t)d->njobs + 1, sizeof(int));
	struct fit_job *fj = NULL;
	struct fit_node *fn = NULL;
	struct fit_place *pl = NULL;
	uint32_t *off = NULL;
	struct coplan_job *cj = NULL;
	uint8_t *table = NULL;
	double *demand = NULL, *weight = NULL, *ndemand = NULL;
	uint64_t *pcpus = NULL;
	int rc;

	p->dirty = false;
	if (!jidx || !nidx || !nmap || !jmap)
		fatalx("out of memory");
	for (int j = 0; j < d->njobs; j++) {
		d->jobs[j]->plan_need = d->jobs[j]->plan_got = 0;
		jmap[j] = -1;
	}
	/* nodes: up; jobs: planned with ranks on up nodes, at most one process per CPU */
	for (int l = 0; l < d->nnodes; l++) {
		nmap[l] = -1;
		if (d->nodes[l]->up && d->nodes[l]->ncpus > 0) {
			nmap[l] = (int)nn;
			nidx[nn++] = l;
		}
	}
	for (int j = 0; j < d->njobs; j++) {
		struct job *jb = d->jobs[j];
		bool on = false, fits = true;

		if (job_util(jb) <= 0)
			continue;
		for (int l = 0; l < d->nnodes; l++) {
			uint32_t c = 0;
			for (uint32_t r = 0; r < jb->cap_ranks; r++)
				c += jb->ranks[r].used && jb->ranks[r].node == l;
			if (c == 0)
				continue;
			if (nmap[l] >= 0)
				on = true;
			if (nmap[l] >= 0 && c > d->nodes[l]->ncpus) {
				fits = false;
				log_warnx("job %s: %u processes on node %s with %u CPUs: not "
				          "co-scheduled",
				          jb->name, c, d->nodes[l]->name, d->nodes[l]->ncpus);
			}
		}
		if (!on || !fits)
			continue;
		jmap[j] = (int)nj;
		jidx[nj++] = j;
		if (jb->want_k > want_k)
			want_k = jb->want_k;
		if (jb->ctl.p.epsilon_pct / 100.0 < max_excess)
			max_excess = jb->ctl.p.epsilon_pct / 100.0;
	}
	if (nj == 0) {
		plan_clear(p);
		p->seq++;
		p->made_at = now;
		for (int j = 0; j < d->njobs; j++)
			d->jobs[j]->plan_nwin = 0;
		goto out;
	}
	fj = calloc(nj, sizeof(*fj));
	fn = calloc(nn, sizeof(*fn));
	off = calloc((size_t)nn + 1, sizeof(*off));
	cj = calloc(nj, sizeof(*cj));
	table = calloc((size_t)nj * nslots, 1);
	demand = calloc(nn, sizeof(double));
	ndemand = calloc(nn, sizeof(double));
	weight = calloc(nn, sizeof(double));
	/* placements by node: at most one per (job, node), with the CPUs they are pinned to */
	pl = calloc((size_t)nj * nn, sizeof(*pl));
	pcpus = calloc((size_t)nj * nn, sizeof(*pcpus));
	if (!fj || !fn || !off || !cj || !table || !demand || !ndemand || !weight || !pl || !pcpus)
		fatalx("out of memory");
	for (uint32_t x = 0; x < nj; x++) {
		const struct job *jb = d->jobs[jidx[x]];
		double m, n;
		cosched_job_bw(d, jb, now, &m, &n);
		fj[x].mem_bw = isnan(m) ? 0 : m;
		fj[x].net_bw = isnan(n) ? 0 : n;
		fj[x].util = job_util(jb);
	}
	for (uint32_t y = 0; y < nn; y++) {
		off[y] = np;
		for (uint32_t x = 0; x < nj; x++) {
			const struct job *jb = d->jobs[jidx[x]];
			uint32_t c = 0;
			uint64_t mask = 0;
			bool known = true;
			for (uint32_t r = 0; r < jb->cap_ranks; r++) {
				const struct rank *rk = &jb->ranks[r];
				if (!rk->used || rk->node != nidx[y])
					continue;
				c++;
				if (rk->cpu >= 0 && rk->cpu < 64)
					mask |= 1ull << rk->cpu;
				else
					known = false;
			}
			if (c == 0)
				continue;
			pcpus[np] = known ? mask : 0;
			pl[np++] = (struct fit_place){.job = x, .node = y, .procs = c};
			demand[y] += fj[x].util * c * fj[x].mem_bw;
			ndemand[y] += fj[x].util * c * fj[x].net_bw;
			weight[y] += fj[x].util * c;
		}
	}
	off[nn] = np;
	for (uint32_t y = 0; y < nn; y++) {
		const struct node *n = d->nodes[nidx[y]];
		fn[y].cpus = n->ncpus;
		fn[y].mem_cap = (double)(cs->mem_cap ? cs->mem_cap : n->mem_cap);
		fn[y].net_cap = (double)(cs->net_cap ? cs->net_cap : n->net_cap);
		/* unknown capacity: aim every slot at the node's mean demand */
		if (!(fn[y].mem_cap > 0) && weight[y] > 0)
			fn[y].mem_cap = demand[y] / weight[y] * n->ncpus;
		if (!(fn[y].net_cap > 0) && weight[y] > 0)
			fn[y].net_cap = ndemand[y] / weight[y] * n->ncpus;
	}
	struct fit_problem pb = {.njobs = nj,
	                         .nnodes = nn,
	                         .jobs = fj,
	                         .nodes = fn,
	                         .place = pl,
	                         .nplace = np,
	                         .node_off = off,
	                         .pairing = cs->pairing,
	                         .place_cpus = pcpus};
	rc = coplan_make(&pb, nslots, cs->slot, want_k, max_excess, table, cj, &p->res);
	if (rc != 0) {
		log_warnx("co-scheduling plan failed: %s; the previous one stays", strerror(-rc));
		free(pl);
		free(off);
		free(table);
		goto out;
	}
	plan_clear(p);
	p->valid = true;
	p->seq++;
	p->made_at = now;
	p->njobs = nj;
	p->nnodes = nn;
	p->nplace = np;
	p->place = pl;
	p->node_off = off;
	p->table = table;
	p->job_of = jidx;
	p->node_of = nidx;
	jidx = nidx = NULL;
	pl = NULL;
	off = NULL;
	table = NULL;
	for (int j = 0; j < d->njobs; j++) {
		struct job *jb = d->jobs[j];
		int x = jmap[j];

		if (x < 0) {
			jb->plan_nwin = 0;
			continue;
		}
		jb->plan_need = cj[x].need;
		jb->plan_got = cj[x].got;
		jb->plan_merged = cj[x].merged;
		jb->plan_nwin = (uint8_t)cj[x].nwin;
		memset(jb->plan_win, 0, sizeof(jb->plan_win));
		memcpy(jb->plan_win, cj[x].win, cj[x].nwin * sizeof(cj[x].win[0]));
		if (!windows_equal(jb->plan_nwin, jb->plan_win, jb->nwin, jb->win))
			jb->push_at = now; /* due */
		if (cj[x].got < cj[x].need)
			log_warnx("job %s: %u of the %u slots it needs per %s: the nodes are full",
			          jb->name, cj[x].got, cj[x].need,
			          p->res.k > 1 ? "sub-frame" : "frame");
		if (cj[x].merged)
			log_info("job %s: more than %d windows: closest merged (its slots may move "
			         "inside the merged spans)",
			         jb->name, COPLAN_MAX_WINDOWS);
	}
	{
		char a[32], b[32];
		log_info("co-scheduling plan %llu: %u job(s) on %u node(s), %u window-set(s) per "
		         "frame %s of %u slots of %s, pairing %s%s%s",
		         (unsigned long long)p->seq, nj, nn, p->res.k,
		         duration_format(cs->frame, a, sizeof(a)), p->res.slots,
		         duration_format(cs->slot, b, sizeof(b)),
		         cs->pairing == FIT_PAIR_FITNESS     ? "fitness"
		         : cs->pairing == FIT_PAIR_OBLIVIOUS ? "oblivious"
		                                             : "worst",
		         p->res.complete ? "" : "; some jobs short of their share",
		         p->res.colourable ? "" : "; NOT pinnable to CPUs on some node");
	}
	if (!p->res.colourable)
		log_warnx("co-scheduling plan %llu: on node %s the jobs of some slots cannot be "
		          "put on CPUs with disjoint windows; vsched may refuse some of them",
		          (unsigned long long)p->seq, d->nodes[p->node_of[p->res.bad_node]]->name);
out:
	free(jidx);
	free(nidx);
	free(nmap);
	free(jmap);
	free(fj);
	free(fn);
	free(pl);
	free(off);
	free(cj);
	free(table);
	free(demand);
	free(ndemand);
	free(weight);
	free(pcpus);
}

void cosched_tick(struct ctld *d, mono_ns now)
{
	for (int j = 0; j < d->njobs; j++) {
		struct job *jb = d->jobs[j];
		uint8_t k = cosched_job_class(d, jb, now);

		if (k != jb->klass) {
			log_info("job %s: class %s -> %s", jb->name, padm_class_name(jb->klass),
			         padm_class_name(k));
			jb->klass = k;
			cosched_dirty(d);
		}
	}
	if (d->plan.changes != d->plan.seen) {
		if (!d->plan.dirty_since)
			d->plan.dirty_since = now;
		d->plan.seen = d->plan.changes;
		d->plan.quiet_since = now;
	}
	if (d->plan.dirty && (now - d->plan.quiet_since >= PLAN_QUIET ||
	                      now - d->plan.dirty_since >= PLAN_MAX_WAIT)) {
		cosched_replan(d, now);
		d->plan.dirty_since = 0;
	}
	for (int j = 0; j < d->njobs; j++) {
		struct job *jb = d->jobs[j];

		if (jb->plan_nwin == 0 || jb->txn.active || mono_before(now, jb->push_at) ||
		    windows_equal(jb->plan_nwin, jb->plan_win, jb->nwin, jb->win))
			continue;
		if (jobs_push_windows(d, j, NULL, NULL, 0, now) < 0)
			jb->push_at = now + PUSH_RETRY;
	}
}
