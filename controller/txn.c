/*
 * The transaction engine: a new constraint goes on every node of a job or on none
 * (apply, then roll back: see controller.h). Messages are queued in the nodes' outboxes,
 * the administrator's reply in the reply outbox; nothing here touches a socket.
 *
 * Invariants kept here:
 *   - at most one transaction per job is open; while it is, the job's reports are dropped
 *     (counted in `deferred`, reports.c) and admin changes to the job are refused with
 *     EBUSY (change.c);
 *   - the job's committed constraint (struct job_commit) is what every node that
 *     acknowledged runs: it changes only on commit, or on roll-back to a newer generation
 *     of the same reservation;
 *   - generations come from txn_next_gen() and only grow.
 */
#include "controller.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "log.h"
#include "text.h"

uint64_t txn_next_gen(struct ctld *d)
{
	return d->next_gen++;
}

static void txn_clear(struct txn *t)
{
	free(t->nodes);
	free(t->st);
	memset(t, 0, sizeof(*t));
}

void txn_fmt_resv(mono_ns period, mono_ns slice, char *buf, size_t len)
{
	char p[32], s[32];

	text_fmt(buf, len, "period %s slice %s", duration_format(period, p, sizeof(p)),
	         duration_format(slice, s, sizeof(s)));
}

void txn_push_committed(struct ctld *d, struct job *jb, int node)
{
	const struct job_commit *c = &jb->commit;

	if (c->period == 0 || !d->nodes[node]->up)
		return;
	outbox_constraint(d->nodes[node], jb->name, c->gen, c->period, c->slice, c->nwin, c->win);
}

/* The transaction's constraint is the committed one. */
static bool same_as_committed(const struct job *jb, const struct txn *t)
{
	const struct job_commit *c = &jb->commit;

	return t->period == c->period && t->slice == c->slice && t->nwin == c->nwin &&
	       memcmp(t->win, c->win, t->nwin * sizeof(t->win[0])) == 0;
}

/* Nodes that host ranks but did not accept the transaction (joined or came back
 * meanwhile) get the committed constraint. Returns how many accepted. */
static int commit_reach(struct ctld *d, struct job *jb)
{
	const struct txn *t = &jb->txn;
	int accepted = 0;

	for (int k = 0; k < t->n; k++)
		accepted += t->st[k] == TXN_ACCEPTED;
	for (int i = 0; i < d->nnodes; i++) {
		bool in = false;
		for (int k = 0; k < t->n; k++)
			if (t->nodes[k] == i && t->st[k] == TXN_ACCEPTED)
				in = true;
		if (!in && jobs_on_node(jb, i))
			txn_push_committed(d, jb, i);
	}
	return accepted;
}

static void txn_commit(struct ctld *d, struct job *jb, mono_ns now)
{
	struct txn *t = &jb->txn;
	struct job_commit *c = &jb->commit;
	char rs[96], msg[PADM_REASON_MAX + 1];
	int accepted;

	c->period = t->period;
	c->slice = t->slice;
	c->nwin = t->nwin;
	memcpy(c->win, t->win, sizeof(c->win));
	c->gen = t->gen;
	c->at = now;
	c->refused = false;
	c->reason[0] = '\0';
	accepted = commit_reach(d, jb);
	if (t->kind == TXN_SETTINGS)
		control_job_fini(&t->saved_ctl);
	txn_fmt_resv(c->period, c->slice, rs, sizeof(rs));
	log_info("job %s: constraint gen %llu (%s) in force on %d node(s)", jb->name,
	         (unsigned long long)c->gen, rs, accepted);
	if (t->kind != TXN_CONTROL && t->kind != TXN_PLAN)
		persist_mark(d); /* written before the reply that tells of it */
	if (t->has_client) {
		if (t->kind == TXN_TARGET)
			text_fmt(msg, sizeof(msg), "job %s: target %g%% (%s) applied on %d node(s)",
			         jb->name, jb->control.target_pct, rs, accepted);
		else
			text_fmt(msg, sizeof(msg), "job %s: settings applied (%s) on %d node(s)",
			         jb->name, rs, accepted);
		log_info("admin: %s", msg);
		outbox_status(d, t->cid, t->cidlen, 0, msg);
	}
	txn_clear(t);
}

/* A floating job's new target refused only for the U step it needs (a node has no room
 * for it) keeps the target: the job holds the U it had, capped there (its first target:
 * no reservation, capped at 0), and capacity.c bisects towards the refused U; jobs that
 * hold more than their targets give back to it. The other algorithms keep U = target:
 * refused whole. */
static bool target_kept(const struct job *jb)
{
	const struct txn *t = &jb->txn;
	const struct control_job *cj = &jb->control.loop;

	if (t->kind != TXN_TARGET || t->nwin != 0 || t->status != -ENOSPC ||
	    cj->p.algo != CONTROL_ALGO_FLOATING)
		return false;
	if (jb->commit.period == 0) /* its first: it holds nothing yet (control_reject_unplaced) */
		return true;
	return cj->cur_u_pct > cj->prev_u_pct && cj->prev_u_pct > 0;
}

/* The job's control state and settings as before the transaction (the target kept when
 * target_kept()). */
static void rollback_control(struct ctld *d, struct job *jb, bool keep_target, mono_ns now)
{
	struct txn *t = &jb->txn;
	struct control_decision dec;

	if (t->nwin > 0) {
		/* the plan no longer holds for this job: retry later, re-plan on what changed */
		jb->plan.push_at = now + CTLD_PUSH_RETRY;
		if (t->kind == TXN_TARGET || t->kind == TXN_SETTINGS)
			plan_changed(d);
	}
	if (t->kind == TXN_SETTINGS) {
		control_job_fini(&jb->control.loop);
		jb->control.loop = t->saved_ctl;
		jb->control.set = t->saved_set;
		jobs_fit_ranks(jb);
	} else if (keep_target && jb->commit.period == 0) {
		control_reject_unplaced(&jb->control.loop, now, &dec);
	} else if (keep_target) {
		control_reject_keep_target(&jb->control.loop, now, &dec);
	} else if (t->kind != TXN_PLAN) {
		control_reject(&jb->control.loop, now, &dec);
		if (t->kind == TXN_TARGET)
			jb->control.target_pct = t->old_target;
	}
}

/* The previous constraint, newer generation, to every node that may run the new one.
 * Returns how many were sent it; *kept: how many keep the new one (no previous one). */
static int rollback_nodes(struct ctld *d, struct job *jb, int *kept)
{
	struct txn *t = &jb->txn;
	struct job_commit *c = &jb->commit;
	uint64_t gen = txn_next_gen(d);
	int sent = 0;

	*kept = 0;
	for (int k = 0; k < t->n; k++) {
		if (t->st[k] != TXN_ACCEPTED && t->st[k] != TXN_PENDING &&
		    !(t->staged && t->st[k] == TXN_REFUSED))
			continue;
		if (c->period == 0) {
			(*kept)++;
			continue;
		}
		if (d->nodes[t->nodes[k]]->up) {
			outbox_constraint(d->nodes[t->nodes[k]], jb->name, gen, c->period, c->slice,
			                  c->nwin, c->win);
			sent++;
		}
	}
	if (c->period != 0) {
		c->gen = gen;
		c->rollback_gen = gen;
	}
	return sent;
}

static void rollback_reply(struct ctld *d, struct job *jb, int kept)
{
	struct txn *t = &jb->txn;
	char msg[PADM_REASON_MAX + 1];
	const char *outcome = kept > 0 ? "not undone where accepted: the job had no "
	                                 "constraint before"
	                               : "nothing changed";

	if (t->kind == TXN_TARGET)
		text_fmt(msg, sizeof(msg), "job %s: target %g%% refused: %s; %s", jb->name,
		         t->new_target, t->why, outcome);
	else
		text_fmt(msg, sizeof(msg), "job %s: settings refused: %s; %s", jb->name, t->why,
		         outcome);
	log_info("admin: refused: %s", msg);
	outbox_status(d, t->cid, t->cidlen, t->status < 0 ? t->status : -EBUSY, msg);
}

/* The client's answer when the target was kept (target_kept()): set, U capped. */
static void kept_target_reply(struct ctld *d, struct job *jb, const char *rs)
{
	struct txn *t = &jb->txn;
	char msg[PADM_REASON_MAX + 1], held[48];

	if (jb->control.loop.fl.unplaced)
		text_fmt(held, sizeof(held), "no reservation yet");
	else
		text_fmt(held, sizeof(held), "U %.1f%%", jb->control.loop.cur_u_pct);
	text_fmt(msg, sizeof(msg),
	         "job %s: target %g%% set; U %s refused: %s; the job holds %s and takes what the "
	         "nodes admit",
	         jb->name, t->new_target, rs, t->why, held);
	log_info("admin: %s", msg);
	outbox_status(d, t->cid, t->cidlen, 0, msg);
}

static void txn_rollback(struct ctld *d, struct job *jb, mono_ns now)
{
	struct txn *t = &jb->txn;
	struct job_commit *c = &jb->commit;
	bool keep_target = target_kept(jb);
	char rs[96];
	int sent, kept;

	txn_fmt_resv(t->period, t->slice, rs, sizeof(rs));
	rollback_control(d, jb, keep_target, now);
	if (jb->control.loop.p.algo == CONTROL_ALGO_FLOATING &&
	    jb->control.loop.fl.u_limit_pct < 100) /* capped: job show says by what */
		text_fmt(jb->control.limit_why, sizeof(jb->control.limit_why), "%s refused: %s", rs,
		         t->why);
	if (keep_target)
		persist_mark(d);
	sent = rollback_nodes(d, jb, &kept);
	c->refused = true;
	text_fmt(c->reason, sizeof(c->reason), "%s refused: %s", rs, t->why);
	if (kept > 0)
		log_warnx("job %s: %d node(s) keep %s: there is no earlier constraint to return "
		          "to (the job was unconstrained)",
		          jb->name, kept, rs);
	log_warnx("job %s: %s; previous constraint restored on %d node(s)", jb->name, c->reason,
	          sent);
	if (kept > 0) {
		char tmp[PADM_REASON_MAX + 1];
		text_fmt(tmp, sizeof(tmp),
		         "%s; %d node(s) keep it: no earlier constraint to "
		         "return to",
		         c->reason, kept);
		text_fmt(c->reason, sizeof(c->reason), "%s", tmp);
	}
	if (t->has_client && keep_target)
		kept_target_reply(d, jb, rs);
	else if (t->has_client)
		rollback_reply(d, jb, kept);
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
		text_fmt(t->why, sizeof(t->why), "node %s: %s", nodename, why);
	}
}

/* The transaction t of jb as tpl says, for (period, slice), with client cid if any. */
static void txn_init(struct txn *t, const struct txn *tpl, mono_ns period, mono_ns slice,
                     const uint8_t *cid, size_t cidlen)
{
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
	t->active = true;
}

int txn_start(struct ctld *d, struct job *jb, const struct txn *tpl, mono_ns period, mono_ns slice,
              const uint8_t *cid, size_t cidlen, mono_ns now)
{
	struct txn *t = &jb->txn;
	int n = 0;

	txn_init(t, tpl, period, slice, cid, cidlen);
	for (int i = 0; i < d->nnodes; i++)
		n += d->nodes[i]->up && jobs_on_node(jb, i);
	if (n == 0 || same_as_committed(jb, t)) {
		/* nothing to ask: the constraint is the job's, nodes get it when they join */
		t->gen = same_as_committed(jb, t) ? jb->commit.gen : txn_next_gen(d);
		t->has_client = false;
		txn_commit(d, jb, now);
		return 0;
	}
	t->gen = txn_next_gen(d);
	t->nodes = calloc((size_t)n, sizeof(*t->nodes));
	t->st = calloc((size_t)n, sizeof(*t->st));
	if (t->nodes == NULL || t->st == NULL)
		fatalx("out of memory");
	t->deadline = now + d->cfg.ack_timeout;
	for (int i = 0; i < d->nnodes; i++) {
		if (!d->nodes[i]->up || !jobs_on_node(jb, i))
			continue;
		t->nodes[t->n] = i;
		t->st[t->n] = TXN_PENDING;
		t->npending++;
		outbox_constraint(d->nodes[i], jb->name, t->gen, period, slice, t->nwin, t->win);
		t->n++;
	}
	return 1;
}

int txn_push_plan(struct ctld *d, int j, const struct txn *tpl, const uint8_t *cid, size_t cidlen,
                  mono_ns now)
{
	struct job *jb = d->jobs[j];
	struct txn t = {.kind = TXN_PLAN};
	mono_ns slice = 0;

	if (jb->txn.active || jb->plan.nwin == 0)
		return -1;
	if (tpl)
		t = *tpl;
	t.nwin = jb->plan.nwin;
	memset(t.win, 0, sizeof(t.win));
	memcpy(t.win, jb->plan.win, jb->plan.nwin * sizeof(t.win[0]));
	for (uint8_t w = 0; w < t.nwin; w++)
		slice += t.win[w].slice;
	jb->plan.push_at = 0;
	return txn_start(d, jb, &t, t.win[0].period, slice, cid, cidlen, now);
}

/* An acknowledgement for the job's open transaction from node. */
static void ack_txn(struct ctld *d, struct job *jb, int node, const struct pctl_constraint_ack *a,
                    bool ok, mono_ns now)
{
	struct txn *t = &jb->txn;
	const char *nn = d->nodes[node]->name;

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
}

/* A refusal of a constraint that is not the open transaction's. */
static void ack_refused(struct job *jb, const char *nn, const struct pctl_constraint_ack *a)
{
	struct job_commit *c = &jb->commit;

	if (a->gen == c->gen && a->gen != c->rollback_gen) {
		/* a node that joined refused the job's constraint: its ranks run without it */
		c->refused = true;
		text_fmt(c->reason, sizeof(c->reason), "node %s refused the job's constraint: %s",
		         nn, a->reason);
		log_warnx("job %s: %s", jb->name, c->reason);
	} else if (a->gen == c->rollback_gen) {
		log_warnx("job %s: node %s refused the roll-back (gen %llu): %s", jb->name, nn,
		          (unsigned long long)a->gen, a->reason);
	} else {
		log_debug("job %s: node %s refused old gen %llu: %s", jb->name, nn,
		          (unsigned long long)a->gen, a->reason);
	}
}

void txn_on_ack(struct ctld *d, int node, const struct pctl_constraint_ack *a, mono_ns now)
{
	const char *nn = d->nodes[node]->name;
	int j = jobs_find(d, a->job);
	/* "unknown job on node": its processes have left; nothing there to constrain */
	bool ok = a->status == 0 || a->status == -ENOENT;
	struct job *jb;

	if (j < 0) {
		log_debug("node %s: acknowledgement for unknown job %s", nn, a->job);
		return;
	}
	jb = d->jobs[j];
	if (jb->txn.active && a->gen == jb->txn.gen)
		ack_txn(d, jb, node, a, ok, now);
	else if (!ok)
		ack_refused(jb, nn, a);
}

void txn_unreachable(struct ctld *d, int node, const char *job, uint64_t gen, mono_ns now)
{
	int j = jobs_find(d, job);
	struct txn *t;

	if (j < 0)
		return;
	t = &d->jobs[j]->txn;
	if (!t->active || t->gen != gen)
		return; /* a roll-back or a catch-up: the node gets it when it is back */
	for (int k = 0; k < t->n; k++)
		if (t->nodes[k] == node && t->st[k] == TXN_PENDING)
			txn_refuse(t, k, -EHOSTUNREACH, d->nodes[node]->name, "not reachable");
	txn_maybe_finish(d, d->jobs[j], now);
}

void txn_node_gone(struct ctld *d, int node, bool finish, mono_ns now)
{
	for (int j = 0; j < d->njobs; j++) {
		struct job *jb = d->jobs[j];
		struct txn *t = &jb->txn;

		for (int k = 0; t->active && k < t->n; k++) {
			if (t->nodes[k] == node && t->st[k] == TXN_PENDING) {
				t->st[k] = TXN_GONE;
				t->npending--;
			}
		}
		if (finish)
			txn_maybe_finish(d, jb, now);
	}
}

/* The nodes that did not answer in time refuse (and get the roll-back: they may have
 * applied it). */
static void txn_expire(struct ctld *d, struct txn *t)
{
	char ms[32], why[64];

	text_fmt(why, sizeof(why), "no acknowledgement within %s",
	         duration_format(d->cfg.ack_timeout, ms, sizeof(ms)));
	for (int k = 0; k < t->n; k++) {
		if (t->st[k] != TXN_PENDING)
			continue;
		txn_refuse(t, k, -ETIMEDOUT, d->nodes[t->nodes[k]]->name, why);
		t->st[k] = TXN_PENDING; /* may have applied it: roll it back there too */
	}
	t->npending = 0;
}

void txn_tick(struct ctld *d, mono_ns now)
{
	for (int j = 0; j < d->njobs; j++) {
		struct job *jb = d->jobs[j];
		struct txn *t = &jb->txn;

		/* nodes reset meanwhile: finish what no longer waits for anyone */
		txn_maybe_finish(d, jb, now);
		if (!t->active || mono_before(now, t->deadline))
			continue;
		txn_expire(d, t);
		txn_maybe_finish(d, jb, now);
	}
}

mono_ns txn_next(const struct ctld *d)
{
	mono_ns next = 0;

	for (int j = 0; j < d->njobs; j++) {
		const struct txn *t = &d->jobs[j]->txn;

		if (t->active && (next == 0 || mono_before(t->deadline, next)))
			next = t->deadline;
	}
	return next;
}
