/*
 * The agents' reports: where ranks run (JOB_PROC), their rates (RATE, fed to the feedback
 * control of their job), their bandwidth (BW) and their task statistics (TASK_STATS). A
 * report about a job handle or rank the node did not announce is ignored (logged at debug
 * level): agents re-announce everything after a registration.
 *
 * Control decisions are carried out by decide.c; TASK_STATS also feed the nodes' period
 * floors (capacity.c).
 */
#include "controller.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "log.h"

/* The rank record of a report from node: NULL (and *jp -1) when unknown. */
static struct rank *rank_of(struct ctld *d, int node, uint32_t handle, uint32_t rank, int *jp)
{
	int j = nodes_handle_job(d->nodes[node], handle);
	struct job *jb;

	*jp = j;
	if (j < 0)
		return NULL;
	jb = d->jobs[j];
	if (rank >= jb->cap_ranks || !jb->ranks[rank].used || jb->ranks[rank].node != node)
		return NULL;
	return &jb->ranks[rank];
}

static void proc_left(struct ctld *d, int node, const struct pctl_job_proc *p)
{
	int j = nodes_handle_job(d->nodes[node], p->job);
	struct job *jb;
	struct rank *rk;

	if (j < 0)
		return;
	jb = d->jobs[j];
	if (p->rank >= jb->cap_ranks)
		return;
	rk = &jb->ranks[p->rank];
	if (rk->used && rk->node == node && rk->pid == p->pid) {
		rk->used = false;
		jb->nranks--;
		log_info("job %s: rank %u (pid %d) left node %s", jb->name, p->rank, (int)p->pid,
		         d->nodes[node]->name);
		plan_changed(d);
	}
}

void reports_proc(struct ctld *d, int node, const struct pctl_job_proc *p, mono_ns now)
{
	struct node *n = d->nodes[node];
	struct job *jb;
	int j;

	if (p->event == PCTL_PROC_LEFT) {
		proc_left(d, node, p);
		return;
	}
	if (p->rank >= CONTROL_MAX_RANKS) {
		log_warnx("node %s: job %s rank %u refused (at most %u ranks)", n->name, p->name,
		          p->rank, CONTROL_MAX_RANKS);
		return;
	}
	j = jobs_get(d, p->name, now);
	jb = d->jobs[j];
	nodes_handle_set(n, p->job, j);
	if (p->rank < jb->cap_ranks && jb->ranks[p->rank].used &&
	    (jb->ranks[p->rank].node != node || jb->ranks[p->rank].pid != p->pid))
		log_warnx("job %s: rank %u now on node %s pid %d (was pid %d)", jb->name, p->rank,
		          n->name, (int)p->pid, (int)jb->ranks[p->rank].pid);
	jobs_rank_join(jb, p->rank, node, p->job, p->pid);
	log_info("job %s: rank %u pid %d on node %s", jb->name, p->rank, (int)p->pid, n->name);
	plan_changed(d);
	jobs_fit_ranks(jb);
	if (!jb->txn.active)
		txn_push_committed(d, jb, node);
	capacity_sync_floor(d, jb, now);
	decide_sync(d, jb, now);
}

/* A floating job in coschedule mode: its reports measure the U its loop decided only once
 * the plan gives it that U and the windows are in force; from the windows' commit on. */
static bool measures_loop_u(struct ctld *d, struct job *jb)
{
	struct control_job *cj = &jb->control.loop;

	if (!d->cfg.cs.on || cj->p.algo != CONTROL_ALGO_FLOATING || jb->control.target_pct <= 0)
		return true;
	if (!cosched_in_force(d, jb))
		return false;
	if (mono_before(cj->gen_start, jb->commit.at))
		control_restart_round(cj, jb->commit.at);
	return true;
}

void reports_rate(struct ctld *d, int node, const struct pctl_rate *r, mono_ns now)
{
	struct control_decision dec;
	struct job_control *jc;
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
	jc = &jb->control;
	if (r->interval_ns > 0)
		rk->rate = (double)r->units * 1e9 / (double)r->interval_ns;
	if (rk->last_report && rk->last_report < now) {
		mono_ns gap = now - rk->last_report;
		rk->report_gap =
		    rk->report_gap ? rk->report_gap - rk->report_gap / 8 + gap / 8 : gap;
	}
	rk->last_report = now;
	if (jb->txn.active || !measures_loop_u(d, jb)) {
		jc->deferred++;
		return;
	}
	uint64_t evals = jc->loop.evaluations;
	rc = control_on_report(&jc->loop, r->rank, r->units, r->interval_ns, now, &dec);
	if (rc != 0) {
		log_debug("job %s: report of rank %u refused: %s", jb->name, r->rank,
		          strerror(-rc));
		return;
	}
	if (jc->loop.evaluations != evals && jc->loop.p.algo == CONTROL_ALGO_FLOATING)
		log_debug("job %s: evaluation: rate %.2f%% e %+.2f at U %.2f%%, sd %.2f, next over "
		          "%.1f s: %s",
		          jb->name, jc->loop.last_rate_pct, dec.err_pct, jc->loop.cur_u_pct,
		          jc->loop.fl.noise_pct, (double)control_floating_eval_len(&jc->loop) / 1e9,
		          control_reason_name(dec.reason));
	/* a measured R_max is a setting worth keeping across restarts */
	if (jc->loop.r_max_calibrated && !jc->set.r_max_given && jc->set.r_max != jc->loop.r_max) {
		jc->set.r_max = jc->loop.r_max;
		log_info("job %s: R_max measured: %.6g units/s", jb->name, jc->loop.r_max);
		persist_mark(d); /* listings show it: written before they leave */
	}
	decide_apply(d, jb, &dec, now);
}

void reports_bw(struct ctld *d, int node, const struct pctl_bw *b, mono_ns now)
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
		jobbw_sample(rk, e->mem_bps, e->mem_src != PCTL_SRC_NONE, rk->net_bps, now);
	}
	n->mem_used = mem;
}

void reports_stats(struct ctld *d, int node, const struct pctl_task_stats *s, mono_ns now)
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
		/* the wire carries window 1 only (nwin 0): then that one */
		rk->held_nwin = e->st.nwin <= VSP_MAX_WINDOWS ? e->st.nwin : VSP_MAX_WINDOWS;
		memcpy(rk->held, e->st.win, rk->held_nwin * sizeof(rk->held[0]));
		if (rk->held_nwin == 0 && e->st.resv.period > 0) {
			rk->held[0] = e->st.resv;
			rk->held_nwin = 1;
		}
		rk->misses = e->st.misses;
		capacity_stats(d, node, rk, &e->st, now);
		if (rk->cpu != e->st.cpu) {
			rk->cpu = e->st.cpu;
			if (d->cfg.cs.on) /* the plan keeps processes that share a CPU apart */
				plan_changed(d);
		}
	}
	n->sum_u = sum;
}
