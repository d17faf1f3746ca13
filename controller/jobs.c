/*
 * Jobs: where their ranks run (from the agents' JOB_PROC), their rate and bandwidth, their
 * feedback control (vsched_control, control.h) and the transactions that put a new
 * constraint on every node of a job or on none (apply, then roll back: see controller.h).
 *
 * Invariants kept here:
 *   - at most one transaction per job is open; while it is, the job's reports are dropped
 *     (counted in `deferred`) and admin changes to the job are refused with EBUSY;
 *   - (period, slice, gen) of a job are what every node that acknowledged runs: they
 *     change only on commit, or on roll-back to a newer generation of the same reservation;
 *   - generations come from ctld_next_gen() and only grow.
 */
#include "controller.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "log.h"

uint64_t ctld_next_gen(struct ctld *d)
{
	return d->next_gen++;
}

int job_find(const struct ctld *d, const char *name)
{
	for (int i = 0; i < d->njobs; i++)
		if (strcmp(d->jobs[i]->name, name) == 0)
			return i;
	return -1;
}

static void txn_clear(struct txn *t)
{
	free(t->nodes);
	free(t->st);
	memset(t, 0, sizeof(*t));
}

/* The control state for jb's settings and target; first decision in *dec. */
static int job_ctl_init(struct ctld *d, struct job *jb, uint32_t nranks, mono_ns now,
                        struct control_decision *dec)
{
	struct control_params p;

	ctld_config_control_params(&d->cfg, &jb->set, jb->target_pct, &p);
	p.nranks = nranks ? nranks : 1;
	return control_job_init(&jb->ctl, &p, now, dec);
}

static int job_new(struct ctld *d, const char *name, const struct job_settings *s, double target,
                   mono_ns now)
{
	struct control_decision dec;
	struct job *jb;

	if (d->njobs == d->cap_jobs) {
		int cap = d->cap_jobs ? 2 * d->cap_jobs : 16;
		struct job **nj = realloc(d->jobs, (size_t)cap * sizeof(*nj));
		if (nj == NULL)
			fatalx("out of memory");
		d->jobs = nj;
		d->cap_jobs = cap;
	}
	jb = calloc(1, sizeof(*jb));
	if (jb == NULL)
		fatalx("out of memory");
	ctld_fmt(jb->name, sizeof(jb->name), "%s", name);
	jb->set = *s;
	jb->target_pct = target;
	if (job_ctl_init(d, jb, 1, now, &dec) != 0) {
		/* settings the control library refuses (e.g. a restored target too small for
		 * min_slice): start without a target rather than not at all */
		log_warnx("job %s: settings refused by the control algorithm; target cleared",
		          name);
		jb->target_pct = 0;
		jb->set = d->cfg.job;
		if (job_ctl_init(d, jb, 1, now, &dec) != 0)
			fatalx("job %s: default control parameters refused", name);
	}
	d->jobs[d->njobs] = jb;
	return d->njobs++;
}

int job_get(struct ctld *d, const char *name, mono_ns now)
{
	int j = job_find(d, name);

	if (j >= 0)
		return j;
	j = job_new(d, name, &d->cfg.job, d->cfg.default_target, now);
	log_info("job %s: new (target %s, algorithm %s)", name,
	         d->cfg.default_target > 0 ? "default" : "none",
	         padm_algo_name(d->jobs[j]->set.algo));
	return j;
}

int job_restore(struct ctld *d, const char *name, const struct job_settings *s, double target,
                mono_ns now)
{
	return job_new(d, name, s, target, now);
}

void jobs_free(struct ctld *d)
{
	for (int i = 0; i < d->njobs; i++) {
		struct job *jb = d->jobs[i];

		if (jb->txn.active && jb->txn.kind == TXN_SETTINGS)
			control_job_fini(&jb->txn.saved_ctl);
		txn_clear(&jb->txn);
		control_job_fini(&jb->ctl);
		free(jb->ranks);
		free(jb);
	}
	free(d->jobs);
	d->jobs = NULL;
	d->njobs = d->cap_jobs = 0;
	for (int i = 0; i < d->nnodes; i++) {
		free(d->nodes[i]->handles);
		free(d->nodes[i]);
	}
	free(d->nodes);
	d->nodes = NULL;
	d->nnodes = d->cap_nodes = 0;
}

uint8_t job_state(const struct job *jb)
{
	if (jb->refused || jb->ctl.state == CONTROL_REJECTED)
		return PADM_ST_REJECTED;
	if (jb->ctl.state == CONTROL_CALIBRATING)
		return PADM_ST_CALIBRATING;
	if (jb->target_pct <= 0)
		return PADM_ST_IDLE;
	switch (jb->ctl.state) {
	case CONTROL_STABLE:
		return PADM_ST_STABLE;
	case CONTROL_OSCILLATING:
		return PADM_ST_OSCILLATING;
	default:
		return PADM_ST_CONVERGING;
	}
}

/* ---- ranks and node handles ---- */

static int handle_job(const struct node *n, uint32_t handle)
{
	for (uint32_t i = 0; i < n->nhandles; i++)
		if (n->handles[i].handle == handle)
			return n->handles[i].job;
	return -1;
}

static void handle_set(struct node *n, uint32_t handle, int job)
{
	for (uint32_t i = 0; i < n->nhandles; i++) {
		if (n->handles[i].handle == handle) {
			n->handles[i].job = job;
			return;
		}
	}
	if (n->nhandles == n->cap_handles) {
		uint32_t cap = n->cap_handles ? 2 * n->cap_handles : 8;
		struct node_job *h = realloc(n->handles, cap * sizeof(*h));
		if (h == NULL)
			fatalx("out of memory");
		n->handles = h;
		n->cap_handles = cap;
	}
	n->handles[n->nhandles].handle = handle;
	n->handles[n->nhandles].job = job;
	n->nhandles++;
}

/* The rank record of a report from node: NULL (and *jp -1) when unknown. */
static struct rank *rank_of(struct ctld *d, int node, uint32_t handle, uint32_t rank, int *jp)
{
	int j = handle_job(d->nodes[node], handle);
	struct job *jb;

	*jp = j;
	if (j < 0)
		return NULL;
	jb = d->jobs[j];
	if (rank >= jb->cap_ranks || !jb->ranks[rank].used || jb->ranks[rank].node != node)
		return NULL;
	return &jb->ranks[rank];
}

static bool job_on_node(const struct job *jb, int node)
{
	for (uint32_t r = 0; r < jb->cap_ranks; r++)
		if (jb->ranks[r].used && jb->ranks[r].node == node)
			return true;
	return false;
}

/* Keeps the control library's rank count at highest rank + 1 (it never shrinks). */
static void job_fit_ranks(struct job *jb)
{
	uint32_t need = 0;

	for (uint32_t r = 0; r < jb->cap_ranks; r++)
		if (jb->ranks[r].used)
			need = r + 1;
	if (need > jb->ctl.nranks && control_set_nranks(&jb->ctl, need) != 0)
		log_warnx("job %s: cannot grow to %u ranks", jb->name, need);
}

/* ---- transactions ---- */

static void fmt_resv(mono_ns period, mono_ns slice, char *buf, size_t len)
{
	char p[32], s[32];

	ctld_fmt(buf, len, "period %s slice %s", duration_format(period, p, sizeof(p)),
	         duration_format(slice, s, sizeof(s)));
}

/* Sends a reservation (nwin 0) or co-scheduling windows. */
static int send_cons(struct ctld *d, int node, const char *job, uint64_t gen, mono_ns period,
                     mono_ns slice, uint8_t nwin, const struct vsp_resv *win)
{
	if (nwin > 0)
		return cosched_send_windows(d, node, job, gen, nwin, win);
	return agents_send_constraint(d, node, job, gen, period, slice);
}

/* Sends the committed constraint to a node that hosts ranks but has not got it. */
static void push_committed(struct ctld *d, struct job *jb, int node)
{
	if (jb->period == 0 || !d->nodes[node]->up)
		return;
	send_cons(d, node, jb->name, jb->gen, jb->period, jb->slice, jb->nwin, jb->win);
}

/* The transaction's constraint is the committed one. */
static bool same_as_committed(const struct job *jb, const struct txn *t)
{
	return t->period == jb->period && t->slice == jb->slice && t->nwin == jb->nwin &&
	       memcmp(t->win, jb->win, t->nwin * sizeof(t->win[0])) == 0;
}

/* Written at the end of this loop turn, before the reply that tells of it (state.c). */
static void persist(struct ctld *d)
{
	state_mark(d);
}

static void txn_commit(struct ctld *d, struct job *jb, mono_ns now)
{
	struct txn *t = &jb->txn;
	char rs[96], msg[PADM_REASON_MAX + 1];
	int accepted = 0;

	(void)now;
	jb->period = t->period;
	jb->slice = t->slice;
	jb->nwin = t->nwin;
	memcpy(jb->win, t->win, sizeof(jb->win));
	jb->gen = t->gen;
	jb->refused = false;
	jb->reason[0] = '\0';
	for (int k = 0; k < t->n; k++)
		accepted += t->st[k] == TXN_ACCEPTED;
	/* nodes that joined meanwhile or came back */
	for (int i = 0; i < d->nnodes; i++) {
		bool in = false;
		for (int k = 0; k < t->n; k++)
			if (t->nodes[k] == i && t->st[k] == TXN_ACCEPTED)
				in = true;
		if (!in && job_on_node(jb, i))
			push_committed(d, jb, i);
	}
	if (t->kind == TXN_SETTINGS)
		control_job_fini(&t->saved_ctl);
	fmt_resv(jb->period, jb->slice, rs, sizeof(rs));
	log_info("job %s: constraint gen %llu (%s) in force on %d node(s)", jb->name,
	         (unsigned long long)jb->gen, rs, accepted);
	if (t->kind != TXN_CONTROL && t->kind != TXN_PLAN)
		persist(d);
	if (t->has_client) {
		if (t->kind == TXN_TARGET)
			ctld_fmt(msg, sizeof(msg), "job %s: target %g%% (%s) applied on %d node(s)",
			         jb->name, jb->target_pct, rs, accepted);
		else
			ctld_fmt(msg, sizeof(msg), "job %s: settings applied (%s) on %d node(s)",
			         jb->name, rs, accepted);
		log_info("admin: %s", msg);
		admin_reply(d, t->cid, t->cidlen, 0, msg);
	}
	txn_clear(t);
}

static void txn_rollback(struct ctld *d, struct job *jb, mono_ns now)
{
	struct txn *t = &jb->txn;
	struct control_decision dec;
	char rs[96], msg[PADM_REASON_MAX + 1];
	int sent = 0, kept = 0;
	uint64_t gen;

	fmt_resv(t->period, t->slice, rs, sizeof(rs));
	if (t->nwin > 0) {
		/* the plan no longer holds for this job: retry later, re-plan on what changed */
		jb->push_at = now + 5 * NSEC_PER_SEC;
		if (t->kind == TXN_TARGET || t->kind == TXN_SETTINGS)
			cosched_dirty(d);
	}
	if (t->kind == TXN_SETTINGS) {
		control_job_fini(&jb->ctl);
		jb->ctl = t->saved_ctl;
		jb->set = t->saved_set;
		job_fit_ranks(jb);
	} else if (t->kind != TXN_PLAN) {
		control_reject(&jb->ctl, now, &dec);
		if (t->kind == TXN_TARGET)
			jb->target_pct = t->old_target;
	}
	/* the previous constraint, newer generation, to every node that may run the new one */
	gen = ctld_next_gen(d);
	for (int k = 0; k < t->n; k++) {
		if (t->st[k] != TXN_ACCEPTED && t->st[k] != TXN_PENDING)
			continue;
		if (jb->period == 0) {
			kept++;
			continue;
		}
		if (send_cons(d, t->nodes[k], jb->name, gen, jb->period, jb->slice, jb->nwin,
		              jb->win) == 0)
			sent++;
	}
	if (jb->period != 0) {
		jb->gen = gen;
		jb->rollback_gen = gen;
	}
	jb->refused = true;
	ctld_fmt(jb->reason, sizeof(jb->reason), "%s refused: %s", rs, t->why);
	if (kept > 0)
		log_warnx("job %s: %d node(s) keep %s: there is no earlier constraint to return "
		          "to (the job was unconstrained)",
		          jb->name, kept, rs);
	log_warnx("job %s: %s; previous constraint restored on %d node(s)", jb->name, jb->reason,
	          sent);
	if (kept > 0) {
		char tmp[PADM_REASON_MAX + 1];
		ctld_fmt(tmp, sizeof(tmp),
		         "%s; %d node(s) keep it: no earlier constraint to "
		         "return to",
		         jb->reason, kept);
		ctld_fmt(jb->reason, sizeof(jb->reason), "%s", tmp);
	}
	if (t->has_client) {
		const char *outcome = kept > 0 ? "not undone where accepted: the job had no "
		                                 "constraint before"
		                               : "nothing changed";
		if (t->kind == TXN_TARGET)
			ctld_fmt(msg, sizeof(msg), "job %s: target %g%% refused: %s; %s", jb->name,
			         t->new_target, t->why, outcome);
		else
			ctld_fmt(msg, sizeof(msg), "job %s: settings refused: %s; %s", jb->name,
			         t->why, outcome);
		log_info("admin: refused: %s", msg);
		admin_reply(d, t->cid, t->cidlen, t->status < 0 ? t->status : -EBUSY, msg);
	}
	txn_clear(t);
}

static void txn_maybe_finish(struct ctld *d, struct job *jb, mono_ns now)
{
	if (!jb->txn.active || jb->txn.npending > 0)
		return;
	if (jb->txn.refused)
		txn_rollback(d, jb, now);
	else
		txn_commit(d, jb, now);
}

static void txn_refuse(struct txn *t, int k, int32_t status, const char *nodename, const char *why)
{
	if (t->st[k] == TXN_PENDING)
		t->npending--;
	t->st[k] = TXN_REFUSED;
	if (!t->refused) {
		t->refused = true;
		t->status = status;
		ctld_fmt(t->why, sizeof(t->why), "node %s: %s", nodename, why);
	}
}

/*
 * Opens a transaction (kind and what to restore taken from tpl) for (period, slice) on
 * every up node of the job. Returns 1 when it is open (the outcome comes with the
 * acknowledgements), 2 when it was refused at once (the client has had its reply), 0 when
 * it was committed at once (no node to ask, or nothing changes on the nodes; the client,
 * if any, is the caller's to answer).
 */
static int txn_start(struct ctld *d, struct job *jb, const struct txn *tpl, mono_ns period,
                     mono_ns slice, const uint8_t *cid, size_t cidlen, mono_ns now)
{
	struct txn *t = &jb->txn;
	int n = 0;

	*t = *tpl;
	t->nodes = NULL;
	t->st = NULL;
	t->n = t->npending = 0;
	t->refused = false;
	t->period = period;
	t->slice = slice;
	t->has_client = false;
	if (cid != NULL && cidlen <= sizeof(t->cid)) {
		t->has_client = true;
		memcpy(t->cid, cid, cidlen);
		t->cidlen = cidlen;
	}
	for (int i = 0; i < d->nnodes; i++)
		n += d->nodes[i]->up && job_on_node(jb, i);
	t->active = true;
	if (n == 0 || same_as_committed(jb, t)) {
		/* nothing to ask: the constraint is the job's, nodes get it when they join */
		t->gen = same_as_committed(jb, t) ? jb->gen : ctld_next_gen(d);
		t->has_client = false;
		txn_commit(d, jb, now);
		return 0;
	}
	t->gen = ctld_next_gen(d);
	t->nodes = calloc((size_t)n, sizeof(*t->nodes));
	t->st = calloc((size_t)n, sizeof(*t->st));
	if (t->nodes == NULL || t->st == NULL)
		fatalx("out of memory");
	t->deadline = now + d->cfg.ack_timeout;
	for (int i = 0; i < d->nnodes; i++) {
		if (!d->nodes[i]->up || !job_on_node(jb, i))
			continue;
		t->nodes[t->n] = i;
		t->st[t->n] = TXN_PENDING;
		t->npending++;
		if (send_cons(d, i, jb->name, t->gen, period, slice, t->nwin, t->win) != 0)
			txn_refuse(t, t->n, -EHOSTUNREACH, d->nodes[i]->name, "not reachable");
		t->n++;
	}
	if (t->npending == 0) {
		bool client = t->has_client;
		txn_maybe_finish(d, jb, now);
		return client ? 2 : 0;
	}
	return 1;
}

/* A decision of the control library: send it when it is a real reservation (U < 1). */
static void job_decided(struct ctld *d, struct job *jb, const struct control_decision *dec,
                        mono_ns now)
{
	char rs[96];

	if (!dec->changed)
		return;
	if (d->cfg.cs.on) {
		/* the plan decides the windows; the decision only sets the granularity */
		cosched_decided(d, jb);
		return;
	}
	fmt_resv(dec->period_ns, dec->slice_ns, rs, sizeof(rs));
	if (dec->slice_ns >= dec->period_ns) {
		log_debug("job %s: %s (%s) runs unconstrained: not sent", jb->name, rs,
		          control_reason_name(dec->reason));
		return;
	}
	log_debug("job %s: %s (%s, e %.2f)", jb->name, rs, control_reason_name(dec->reason),
	          dec->err_pct);
	struct txn tpl = {.kind = TXN_CONTROL};
	txn_start(d, jb, &tpl, dec->period_ns, dec->slice_ns, NULL, 0, now);
}

/* The committed constraint differs from the control library's: bring the nodes to it. */
static void job_sync(struct ctld *d, struct job *jb, mono_ns now)
{
	struct control_decision dec;

	if (d->cfg.cs.on || jb->txn.active || jb->ctl.slice_ns >= jb->ctl.period_ns)
		return;
	if (jb->ctl.period_ns == jb->period && jb->ctl.slice_ns == jb->slice)
		return;
	control_keep(&jb->ctl, CONTROL_R_NONE, &dec);
	dec.changed = true;
	job_decided(d, jb, &dec, now);
}

int jobs_push_windows(struct ctld *d, int j, const struct txn *tpl, const uint8_t *cid,
                      size_t cidlen, mono_ns now)
{
	struct job *jb = d->jobs[j];
	struct txn t = {.kind = TXN_PLAN};
	mono_ns slice = 0;

	if (jb->txn.active || jb->plan_nwin == 0)
		return -1;
	if (tpl)
		t = *tpl;
	t.nwin = jb->plan_nwin;
	memset(t.win, 0, sizeof(t.win));
	memcpy(t.win, jb->plan_win, jb->plan_nwin * sizeof(t.win[0]));
	for (uint8_t w = 0; w < t.nwin; w++)
		slice += t.win[w].slice;
	jb->push_at = 0;
	return txn_start(d, jb, &t, t.win[0].period, slice, cid, cidlen, now);
}

/* ---- messages from the agents ---- */

void jobs_proc(struct ctld *d, int node, const struct pctl_job_proc *p, mono_ns now)
{
	struct node *n = d->nodes[node];
	struct job *jb;
	int j;

	if (p->event == PCTL_PROC_LEFT) {
		j = handle_job(n, p->job);
		if (j < 0)
			return;
		jb = d->jobs[j];
		if (p->rank < jb->cap_ranks && jb->ranks[p->rank].used &&
		    jb->ranks[p->rank].node == node && jb->ranks[p->rank].pid == p->pid) {
			jb->ranks[p->rank].used = false;
			jb->nranks--;
			log_info("job %s: rank %u (pid %d) left node %s", jb->name, p->rank,
			         (int)p->pid, n->name);
			cosched_dirty(d);
		}
		return;
	}
	if (p->rank >= CONTROL_MAX_RANKS) {
		log_warnx("node %s: job %s rank %u refused (at most %u ranks)", n->name, p->name,
		          p->rank, CONTROL_MAX_RANKS);
		return;
	}
	j = job_get(d, p->name, now);
	jb = d->jobs[j];
	handle_set(n, p->job, j);
	if (p->rank >= jb->cap_ranks) {
		uint32_t cap = jb->cap_ranks ? jb->cap_ranks : 8;
		struct rank *r;

		while (cap <= p->rank)
			cap *= 2;
		r = realloc(jb->ranks, cap * sizeof(*r));
		if (r == NULL)
			fatalx("out of memory");
		memset(r + jb->cap_ranks, 0, (cap - jb->cap_ranks) * sizeof(*r));
		jb->ranks = r;
		jb->cap_ranks = cap;
	}
	if (!jb->ranks[p->rank].used)
		jb->nranks++;
	else if (jb->ranks[p->rank].node != node || jb->ranks[p->rank].pid != p->pid)
		log_warnx("job %s: rank %u now on node %s pid %d (was pid %d)", jb->name, p->rank,
		          n->name, (int)p->pid, (int)jb->ranks[p->rank].pid);
	memset(&jb->ranks[p->rank], 0, sizeof(jb->ranks[p->rank]));
	jb->ranks[p->rank].used = true;
	jb->ranks[p->rank].node = node;
	jb->ranks[p->rank].handle = p->job;
	jb->ranks[p->rank].pid = p->pid;
	jb->ranks[p->rank].rate = NAN;
	jb->ranks[p->rank].cpu = -1;
	log_info("job %s: rank %u pid %d on node %s", jb->name, p->rank, (int)p->pid, n->name);
	cosched_dirty(d);
	job_fit_ranks(jb);
	if (!jb->txn.active)
		push_committed(d, jb, node);
	job_sync(d, jb, now);
}

void jobs_rate(struct ctld *d, int node, const struct pctl_rate *r, mono_ns now)
{
	struct control_decision dec;
	struct rank *rk;
	struct job *jb;
	int j, rc;

	rk = rank_of(d, node, r->job, r->rank, &j);
	if (rk == NULL) {
		log_debug("node %s: rate for unknown job handle %u rank %u", d->nodes[node]->name,
		          r->job, r->rank);
		return;
	}
	jb = d->jobs[j];
	if (r->interval_ns > 0)
		rk->rate = (double)r->units * 1e9 / (double)r->interval_ns;
	if (jb->txn.active) {
		jb->deferred++;
		return;
	}
	rc = control_on_report(&jb->ctl, r->rank, r->units, r->interval_ns, now, &dec);
	if (rc != 0) {
		log_debug("job %s: report of rank %u refused: %s", jb->name, r->rank,
		          strerror(-rc));
		return;
	}
	/* a measured R_max is a setting worth keeping across restarts */
	if (jb->ctl.r_max_calibrated && !jb->set.r_max_given && jb->set.r_max != jb->ctl.r_max) {
		jb->set.r_max = jb->ctl.r_max;
		log_info("job %s: R_max measured: %.6g units/s", jb->name, jb->ctl.r_max);
		state_mark(d); /* listings show it: written before they leave */
	}
	job_decided(d, jb, &dec, now);
}

void jobs_bw(struct ctld *d, int node, const struct pctl_bw *b, mono_ns now)
{
	struct node *n = d->nodes[node];
	uint64_t mem = 0;
	int j;

	n->net_used = b->node_rx_bps + b->node_tx_bps;
	n->net_src = b->node_src;
	n->mem_src = PCTL_SRC_NONE;
	for (uint16_t i = 0; i < b->n; i++) {
		const struct pctl_bw_entry *e = &b->e[i];
		struct rank *rk = rank_of(d, node, e->job, e->rank, &j);

		if (e->mem_src != PCTL_SRC_NONE) {
			mem += e->mem_bps;
			n->mem_src = e->mem_src;
		}
		if (rk == NULL)
			continue;
		rk->mem_bps = e->mem_bps;
		rk->mem_src = e->mem_src;
		rk->net_bps = e->net_tx_bps + e->net_rx_bps;
		cosched_bw_sample(d, rk, e->mem_bps, e->mem_src != PCTL_SRC_NONE, rk->net_bps, now);
	}
	n->mem_used = mem;
}

void jobs_stats(struct ctld *d, int node, const struct pctl_task_stats *s)
{
	struct node *n = d->nodes[node];
	double sum = 0;
	int j;

	for (uint16_t i = 0; i < s->n; i++) {
		const struct pctl_stats_entry *e = &s->e[i];
		struct rank *rk;

		if (e->st.resv.period > 0)
			sum += (double)e->st.resv.slice / (double)e->st.resv.period;
		rk = rank_of(d, node, e->job, e->rank, &j);
		if (rk == NULL)
			continue;
		rk->period = e->st.resv.period;
		rk->slice = e->st.resv.slice;
		rk->gen = e->gen;
		rk->misses = e->st.misses;
		if (rk->cpu != e->st.cpu) {
			rk->cpu = e->st.cpu;
			if (d->cfg.cs.on) /* the plan keeps processes that share a CPU apart */
				cosched_dirty(d);
		}
	}
	n->sum_u = sum;
}

void jobs_ack(struct ctld *d, int node, const struct pctl_constraint_ack *a, mono_ns now)
{
	const char *nn = d->nodes[node]->name;
	int j = job_find(d, a->job);
	/* "unknown job on node": its processes have left; nothing there to constrain */
	bool ok = a->status == 0 || a->status == -ENOENT;
	struct job *jb;
	struct txn *t;

	if (j < 0) {
		log_debug("node %s: acknowledgement for unknown job %s", nn, a->job);
		return;
	}
	jb = d->jobs[j];
	t = &jb->txn;
	if (t->active && a->gen == t->gen) {
		for (int k = 0; k < t->n; k++) {
			if (t->nodes[k] != node || t->st[k] != TXN_PENDING)
				continue;
			if (ok) {
				t->st[k] = TXN_ACCEPTED;
				t->npending--;
			} else {
				log_warnx("job %s: node %s refused gen %llu: %s", jb->name, nn,
				          (unsigned long long)a->gen, a->reason);
				txn_refuse(t, k, a->status, nn, a->reason);
			}
		}
		txn_maybe_finish(d, jb, now);
		return;
	}
	if (ok)
		return;
	if (a->gen == jb->gen && a->gen != jb->rollback_gen) {
		/* a node that joined refused the job's constraint: its ranks run without it */
		jb->refused = true;
		ctld_fmt(jb->reason, sizeof(jb->reason), "node %s refused the job's constraint: %s",
		         nn, a->reason);
		log_warnx("job %s: %s", jb->name, jb->reason);
	} else if (a->gen == jb->rollback_gen) {
		log_warnx("job %s: node %s refused the roll-back (gen %llu): %s", jb->name, nn,
		          (unsigned long long)a->gen, a->reason);
	} else {
		log_debug("job %s: node %s refused old gen %llu: %s", jb->name, nn,
		          (unsigned long long)a->gen, a->reason);
	}
}

void jobs_node_reset(struct ctld *d, int node)
{
	struct node *n = d->nodes[node];

	for (int j = 0; j < d->njobs; j++) {
		struct job *jb = d->jobs[j];
		struct txn *t = &jb->txn;

		for (uint32_t r = 0; r < jb->cap_ranks; r++) {
			if (jb->ranks[r].used && jb->ranks[r].node == node) {
				jb->ranks[r].used = false;
				jb->nranks--;
			}
		}
		for (int k = 0; t->active && k < t->n; k++) {
			if (t->nodes[k] == node && t->st[k] == TXN_PENDING) {
				t->st[k] = TXN_GONE;
				t->npending--;
			}
		}
	}
	n->nhandles = 0;
	cosched_dirty(d);
}

void jobs_node_down(struct ctld *d, int node, mono_ns now)
{
	cosched_dirty(d);
	for (int j = 0; j < d->njobs; j++) {
		struct job *jb = d->jobs[j];
		struct txn *t = &jb->txn;

		for (int k = 0; t->active && k < t->n; k++) {
			if (t->nodes[k] == node && t->st[k] == TXN_PENDING) {
				t->st[k] = TXN_GONE;
				t->npending--;
			}
		}
		txn_maybe_finish(d, jb, now);
	}
}

void jobs_tick(struct ctld *d, mono_ns now)
{
	for (int j = 0; j < d->njobs; j++) {
		struct job *jb = d->jobs[j];
		struct txn *t = &jb->txn;
		char ms[32];

		/* nodes reset meanwhile: finish what no longer waits for anyone */
		txn_maybe_finish(d, jb, now);
		if (!t->active || mono_before(now, t->deadline))
			continue;
		for (int k = 0; k < t->n; k++) {
			if (t->st[k] != TXN_PENDING)
				continue;
			char why[64];
			ctld_fmt(why, sizeof(why), "no acknowledgement within %s",
			         duration_format(d->cfg.ack_timeout, ms, sizeof(ms)));
			txn_refuse(t, k, -ETIMEDOUT, d->nodes[t->nodes[k]]->name, why);
			t->st[k] = TXN_PENDING; /* may have applied it: roll it back there too */
		}
		t->npending = 0;
		txn_maybe_finish(d, jb, now);
	}
}

/* ---- admin changes ---- */

static bool job_has_up_node(const struct ctld *d, const struct job *jb)
{
	for (int i = 0; i < d->nnodes; i++)
		if (d->nodes[i]->up && job_on_node(jb, i))
			return true;
	return false;
}

int jobs_set_target(struct ctld *d, int j, double pct, const uint8_t *cid, size_t cidlen,
                    mono_ns now, char *why, size_t whylen)
{
	struct job *jb = d->jobs[j];
	struct control_decision dec;
	char a[32], b[32];
	double old = jb->target_pct;
	int rc;

	if (!isfinite(pct) || pct <= 0 || pct > 100) {
		ctld_fmt(why, whylen, "job %s: target %g%%: must be in (0, 100]", jb->name, pct);
		return -ERANGE;
	}
	if (jb->txn.active) {
		ctld_fmt(why, whylen, "job %s: a constraint change is in progress; try again",
		         jb->name);
		return -EBUSY;
	}
	rc = control_set_target(&jb->ctl, pct, now, &dec);
	if (rc == -ERANGE) {
		ctld_fmt(why, whylen,
		         "job %s: target %g%%: slice at the initial period %s would be below the "
		         "smallest slice %s",
		         jb->name, pct, duration_format(jb->set.initial_period, a, sizeof(a)),
		         duration_format(jb->set.min_slice, b, sizeof(b)));
		return rc;
	}
	if (rc != 0) {
		ctld_fmt(why, whylen, "job %s: target %g%% refused by the control algorithm",
		         jb->name, pct);
		return rc;
	}
	jb->target_pct = pct;
	if (d->cfg.cs.on) {
		/* co-scheduling: the new share goes into a new plan, pushed with this client */
		struct txn tpl = {.kind = TXN_TARGET, .old_target = old, .new_target = pct};
		cosched_replan(d, now);
		rc = jobs_push_windows(d, j, &tpl, cid, cidlen, now);
		if (rc == 1 || rc == 2)
			return rc;
		if (rc < 0)
			persist(d);
	} else if (dec.changed && dec.slice_ns < dec.period_ns) {
		struct txn tpl = {.kind = TXN_TARGET, .old_target = old, .new_target = pct};
		rc = txn_start(d, jb, &tpl, dec.period_ns, dec.slice_ns, cid, cidlen, now);
		if (rc == 1)
			return 1; /* the reply comes with the acknowledgements */
		if (rc == 2)
			return 2; /* refused at once: reply sent */
	} else {
		persist(d);
	}
	if (jb->ctl.state == CONTROL_CALIBRATING)
		ctld_fmt(why, whylen, "job %s: target %g%% set; applied once R_max is measured",
		         jb->name, pct);
	else if (!job_has_up_node(d, jb))
		ctld_fmt(why, whylen, "job %s: target %g%% set; applied when its ranks register",
		         jb->name, pct);
	else
		ctld_fmt(why, whylen, "job %s: target %g%% set", jb->name, pct);
	return 0;
}

/* New settings from q over cur; 0 or -EINVAL with the reason. */
static int settings_apply(const struct padm_request *q, struct job_settings *s, char *why,
                          size_t whylen)
{
	if (q->mask & PADM_SET_ALGO)
		s->algo = q->algo;
	if (q->mask & PADM_SET_AGG)
		s->agg = q->agg;
	if (q->mask & PADM_SET_EPS) {
		if (q->eps_milli <= 0 || q->eps_milli > 50000) {
			ctld_fmt(why, whylen, "epsilon %g: must be in (0, 50] percentage points",
			         q->eps_milli / 1000.0);
			return -EINVAL;
		}
		s->eps_pct = q->eps_milli / 1000.0;
	}
	if (q->mask & PADM_SET_RMAX) {
		if (!(q->r_max >= 0) || !isfinite(q->r_max)) {
			ctld_fmt(why, whylen, "r_max %g: must be >= 0 (0: measure it)", q->r_max);
			return -EINVAL;
		}
		s->r_max = q->r_max;
		s->r_max_given = q->r_max > 0;
	}
	if (q->mask & PADM_SET_DELTA_PERIOD)
		s->delta_period = q->delta_period;
	if (q->mask & PADM_SET_MIN_PERIOD)
		s->min_period = q->min_period;
	if (q->mask & PADM_SET_MIN_SLICE)
		s->min_slice = q->min_slice;
	if (q->mask & PADM_SET_INITIAL_PERIOD)
		s->initial_period = q->initial_period;
	if (s->delta_period == 0 || s->min_period == 0 || s->min_slice == 0 ||
	    s->initial_period == 0 || s->initial_period > VSP_PERIOD_MAX) {
		ctld_fmt(why, whylen, "periods and slices must be > 0 (and at most a week)");
		return -EINVAL;
	}
	if (s->initial_period < s->min_period || s->min_slice > s->min_period) {
		ctld_fmt(why, whylen, "need min_slice <= min_period <= initial_period");
		return -EINVAL;
	}
	return 0;
}

int jobs_set_settings(struct ctld *d, int j, const struct padm_request *q, const uint8_t *cid,
                      size_t cidlen, mono_ns now, char *why, size_t whylen)
{
	struct job *jb = d->jobs[j];
	struct job_settings s = jb->set;
	struct control_decision dec;
	struct control_params p;
	struct control_job saved;
	int rc;

	if (jb->txn.active) {
		ctld_fmt(why, whylen, "job %s: a constraint change is in progress; try again",
		         jb->name);
		return -EBUSY;
	}
	rc = settings_apply(q, &s, why, whylen);
	if (rc == 0) {
		/* keep a measured R_max unless a new one is given or asked to be measured */
		if (!(q->mask & PADM_SET_RMAX) && jb->ctl.r_max_calibrated && s.r_max == 0)
			s.r_max = jb->ctl.r_max;
		ctld_config_control_params(&d->cfg, &s, jb->target_pct, &p);
		p.nranks = jb->ctl.nranks;
		if (control_params_check(&p) != 0) {
			ctld_fmt(why, whylen,
			         "settings refused by the control algorithm (with target %g%% the "
			         "slice at the initial period must be >= min_slice)",
			         jb->target_pct);
			rc = -EINVAL;
		}
	}
	if (rc != 0) {
		char tmp[PADM_REASON_MAX + 1];
		ctld_fmt(tmp, sizeof(tmp), "job %s: %s", jb->name, why);
		ctld_fmt(why, whylen, "%s", tmp);
		return rc;
	}
	saved = jb->ctl;
	rc = control_job_init(&jb->ctl, &p, now, &dec);
	if (rc != 0) {
		jb->ctl = saved;
		ctld_fmt(why, whylen, "job %s: settings refused: %s", jb->name, strerror(-rc));
		return rc;
	}
	job_fit_ranks(jb);
	log_info("job %s: settings: algorithm %s, epsilon %g, R_max %g%s", jb->name,
	         padm_algo_name(s.algo), s.eps_pct, s.r_max, s.r_max_given ? " (given)" : "");
	if (d->cfg.cs.on) {
		struct txn tpl = {.kind = TXN_SETTINGS, .saved_ctl = saved, .saved_set = jb->set};

		jb->set = s;
		cosched_replan(d, now);
		rc = jobs_push_windows(d, j, &tpl, cid, cidlen, now);
		if (rc == 1 || rc == 2)
			return rc;
		if (rc < 0) {
			control_job_fini(&saved);
			persist(d);
		}
		/* rc 0: committed at once, txn_commit released saved */
	} else if (dec.slice_ns < dec.period_ns) {
		struct txn tpl = {.kind = TXN_SETTINGS, .saved_ctl = saved, .saved_set = jb->set};

		jb->set = s;
		rc = txn_start(d, jb, &tpl, dec.period_ns, dec.slice_ns, cid, cidlen, now);
		if (rc == 1 || rc == 2)
			return rc;
		/* committed at once: txn_commit released the old control state and saved */
	} else {
		jb->set = s;
		control_job_fini(&saved);
		persist(d);
	}
	ctld_fmt(why, whylen, "job %s: settings changed", jb->name);
	return 0;
}
