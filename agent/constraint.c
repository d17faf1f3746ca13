/*
 * Constraints from the controller, applied to vsched. A CONSTRAINT (one reservation, or up to
 * VSP_MAX_WINDOWS disjoint windows of one co-scheduling frame, given to vsched as one
 * multi-window ADD/SET) covers every process of a job on this node and is applied to all of
 * them or to none: when vsched refuses one
 * process, the ones already changed are put back to what they had, so the controller can
 * keep its invariant "never half-applied" (it reads the CONSTRAINT_ACK). Generations only
 * go forward per job; an older one is refused as stale, the same one again is a no-op.
 * The last constraint stays in force when the controller goes away: nothing here undoes
 * it.
 */
#include "agent.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "log.h"

static void fmt_resv(const struct agent_resv *ar, char *buf, size_t len)
{
	char p[32], s[32], d[32], ph[32];
	const struct vsp_resv *r = &ar->w[0];
	size_t k;

	if (ar->n <= 1) {
		snprintf(buf, len, "period %s slice %s deadline %s phase %s",
		         duration_format(r->period, p, sizeof(p)),
		         duration_format(r->slice, s, sizeof(s)),
		         duration_format(r->deadline ? r->deadline : r->period, d, sizeof(d)),
		         duration_format(r->phase, ph, sizeof(ph)));
		return;
	}
	/* period 100ms, windows 0+30ms/30ms 50ms+20ms/20ms (PHASE+LENGTH/SLICE) */
	k = (size_t)snprintf(buf, len, "period %s, windows",
	                     duration_format(r->period, p, sizeof(p)));
	for (unsigned i = 0; i < ar->n && i < VSP_MAX_WINDOWS && k < len; i++) {
		r = &ar->w[i];
		k += (size_t)snprintf(
		    buf + k, len - k, " %s+%s/%s", duration_format(r->phase, ph, sizeof(ph)),
		    duration_format(r->deadline ? r->deadline : r->period, d, sizeof(d)),
		    duration_format(r->slice, s, sizeof(s)));
	}
}

static void resv_one(struct agent_resv *ar, const struct vsp_resv *r)
{
	memset(ar, 0, sizeof(*ar));
	ar->n = 1;
	ar->w[0] = *r;
}

static void resv_of_constraint(struct agent_resv *ar, const struct pctl_constraint *c)
{
	memset(ar, 0, sizeof(*ar));
	ar->n = c->nwin;
	memcpy(ar->w, c->win, (size_t)c->nwin * sizeof(ar->w[0]));
}

static bool resv_equal(const struct agent_resv *x, const struct agent_resv *y)
{
	return x->n == y->n && memcmp(x->w, y->w, (size_t)x->n * sizeof(x->w[0])) == 0;
}

/* What a process had before a CONSTRAINT touched it, to put it back on refusal. */
struct undo {
	int idx;
	bool had;               /* under vsched before (by us, or placed by someone else) */
	struct agent_resv prev; /* its reservation then */
};

/*
 * Reservations vsched holds for the processes of job j that the agent did not put there
 * itself (e.g. started by `vschedctl job run`), so that a refused CONSTRAINT can give them
 * back exactly. One LIST, only when there is such a process. Fills u[] for every process.
 */
static int collect_undo(struct agent *a, int j, struct undo *u)
{
	struct vsp_request req;
	struct vsp_reply rep;
	int n = 0;
	bool need_list = false;

	for (int i = 0; i < a->cfg.max_procs; i++) {
		const struct agent_proc *pr = &a->procs[i];
		if (!pr->used || pr->job != j || pr->exited)
			continue;
		u[n].idx = i;
		u[n].had = pr->managed;
		u[n].prev = pr->resv;
		need_list |= !pr->managed;
		n++;
	}
	if (!need_list)
		return n;
	memset(&req, 0, sizeof(req));
	req.type = VSP_LIST;
	if (vsc_call(&a->vs, &req, &rep) == 0)
		for (uint32_t t = 0; t < rep.ntasks; t++)
			for (int k = 0; k < n; k++)
				if (!u[k].had && a->procs[u[k].idx].pid == rep.tasks[t].pid) {
					const struct vsp_task_stat *st = &rep.tasks[t];
					u[k].had = true;
					memset(&u[k].prev, 0, sizeof(u[k].prev));
					u[k].prev.n = st->nwin >= 1 && st->nwin <= VSP_MAX_WINDOWS
					                  ? st->nwin
					                  : 1;
					memcpy(u[k].prev.w, st->win, sizeof(u[k].prev.w));
					u[k].prev.w[0] = st->resv;
				}
	free(rep.tasks);
	return n;
}

int cons_apply(struct agent *a, const struct pctl_constraint *c, char *why, size_t whylen)
{
	int j = registry_find_job(a, c->job);
	struct undo *u;
	int n, ndone = 0, rc = 0;
	struct agent_job *jb;
	struct agent_resv want;
	char rs[400], pwhy[200];

	if (j < 0) {
		a->cnt.ctl_unknown_job++;
		snprintf(why, whylen, "unknown job %s on node %s", c->job, a->cfg.node);
		return -ENOENT;
	}
	if (c->nwin < 1 || c->nwin > VSP_MAX_WINDOWS) {
		/* pctl_decode refuses these; a caller inside the agent must not get further */
		snprintf(why, whylen, "job %s: %u windows, expected 1..%d", c->job, c->nwin,
		         VSP_MAX_WINDOWS);
		return -EINVAL;
	}
	resv_of_constraint(&want, c);
	jb = &a->jobs[j];
	if (jb->constrained && c->gen < jb->gen) {
		a->cnt.ctl_stale++;
		snprintf(why, whylen, "job %s: generation %llu older than %llu in force", c->job,
		         (unsigned long long)c->gen, (unsigned long long)jb->gen);
		return -ESTALE;
	}
	if (jb->constrained && c->gen == jb->gen && !resv_equal(&want, &jb->resv)) {
		snprintf(why, whylen,
		         "job %s: generation %llu already in force with another "
		         "reservation",
		         c->job, (unsigned long long)c->gen);
		a->cnt.ctl_stale++;
		return -ESTALE;
	}
	u = calloc((size_t)a->cfg.max_procs, sizeof(*u));
	if (!u)
		fatalx("out of memory");
	n = collect_undo(a, j, u);
	for (int k = 0; k < n; k++) {
		struct agent_proc *pr = &a->procs[u[k].idx];
		if (pr->managed && pr->gen == c->gen && jb->constrained && c->gen == jb->gen) {
			u[k].idx = -1; /* already in force: nothing to do, nothing to undo */
			continue;
		}
		rc = vsc_put(&a->vs, pr->pid, &want, a->cfg.park, u[k].had, pwhy, sizeof(pwhy));
		if (rc == -ESRCH && registry_starttime(pr->pid) != pr->starttime) {
			/*
			 * It exited since the last sampling round: not a refusal. Undoing the
			 * whole constraint for a process that no longer matters would be wrong.
			 */
			log_info("job %s: pid %d rank %u exited", c->job, (int)pr->pid, pr->rank);
			pr->exited = true;
			u[k].idx = -1;
			rc = 0;
			ndone = k + 1;
			continue;
		}
		if (rc != 0) {
			a->cnt.vsched_errors++;
			snprintf(why, whylen, "job %s: pid %d: %s", c->job, (int)pr->pid, pwhy);
			break;
		}
		ndone = k + 1;
	}
	if (rc != 0) {
		/* Put back what was changed: the old reservation, or out of vsched. */
		for (int k = 0; k < ndone; k++) {
			struct agent_proc *pr;
			int r2;
			if (u[k].idx < 0)
				continue;
			pr = &a->procs[u[k].idx];
			r2 = u[k].had ? vsc_put(&a->vs, pr->pid, &u[k].prev, a->cfg.park, true,
			                        pwhy, sizeof(pwhy))
			              : vsc_del(&a->vs, pr->pid, pwhy, sizeof(pwhy));
			if (r2 != 0)
				log_warnx("job %s: pid %d: could not put back: %s", c->job,
				          (int)pr->pid, pwhy);
		}
		free(u);
		return rc;
	}
	ndone = 0; /* now: how many were changed */
	for (int k = 0; k < n; k++) {
		struct agent_proc *pr;
		if (u[k].idx < 0)
			continue;
		pr = &a->procs[u[k].idx];
		pr->managed = true;
		pr->gen = c->gen;
		pr->resv = want;
		ndone++;
	}
	free(u);
	if (ndone == 0 && jb->constrained && jb->gen == c->gen)
		return 0; /* the same generation again: already in force */
	jb->constrained = true;
	jb->gen = c->gen;
	jb->resv = want;
	fmt_resv(&want, rs, sizeof(rs));
	log_info("job %s: constraint gen %llu applied to %d process(es): %s", c->job,
	         (unsigned long long)c->gen, jb->nprocs, rs);
	return 0;
}

void cons_place_proc(struct agent *a, int idx)
{
	struct agent_proc *pr = &a->procs[idx];
	struct agent_job *jb = &a->jobs[pr->job];
	struct agent_resv prov;
	const struct agent_resv *r;
	uint64_t gen;
	char why[200], rs[400];

	if (jb->constrained) {
		r = &jb->resv;
		gen = jb->gen;
	} else if (a->cfg.provisional.period) {
		resv_one(&prov, &a->cfg.provisional);
		r = &prov;
		gen = 0;
	} else {
		log_info("job %s: pid %d waits for the controller's constraint", jb->name,
		         (int)pr->pid);
		return;
	}
	if (gen == 0) {
		/*
		 * Provisional: only for a process vsched does not manage yet. One it already
		 * has (the agent restarted, or `vschedctl job run` placed it) keeps its
		 * reservation until the controller decides.
		 */
		struct vsp_request req;
		struct vsp_reply rep;
		int rc;

		memset(&req, 0, sizeof(req));
		req.type = VSP_ADD;
		req.pid = pr->pid;
		req.cpu = -1;
		req.park = a->cfg.park;
		req.resv = r->w[0];
		rc = vsc_call(&a->vs, &req, &rep);
		free(rep.tasks);
		if (rc == -EEXIST) {
			log_info("job %s: pid %d already under vsched: its reservation stays until "
			         "the controller decides",
			         jb->name, (int)pr->pid);
			return;
		}
		if (rc != 0) {
			a->cnt.vsched_errors++;
			log_warnx("job %s: pid %d not put under vsched: %s", jb->name, (int)pr->pid,
			          rep.msg[0]        ? rep.msg
			          : rc == -ENOTCONN ? "vsched not running"
			                            : strerror(-rc));
			return;
		}
	} else if (vsc_put(&a->vs, pr->pid, r, a->cfg.park, pr->managed, why, sizeof(why)) != 0) {
		a->cnt.vsched_errors++;
		log_warnx("job %s: pid %d not put under vsched: %s", jb->name, (int)pr->pid, why);
		return;
	}
	pr->managed = true;
	pr->gen = gen;
	pr->resv = *r;
	fmt_resv(r, rs, sizeof(rs));
	log_info("job %s: pid %d rank %u under vsched (%s%s)", jb->name, (int)pr->pid, pr->rank,
	         gen ? "constraint, " : "provisional, ", rs);
}

/*
 * Processes we put under vsched that its LIST no longer shows (vsched restarted, or an
 * administrator deleted them) are put back under the reservation they had: the
 * constraint in force is the agent's to keep.
 */
static void reconcile(struct agent *a)
{
	char why[200];

	for (int i = 0; i < a->cfg.max_procs; i++) {
		struct agent_proc *pr = &a->procs[i];
		bool seen = pr->seen_in_vsched;

		pr->seen_in_vsched = false;
		if (!pr->used || pr->exited || !pr->managed || seen)
			continue;
		if (vsc_put(&a->vs, pr->pid, &pr->resv, a->cfg.park, false, why, sizeof(why)) == 0)
			log_info("job %s: pid %d was no longer under vsched: put back",
			         a->jobs[pr->job].name, (int)pr->pid);
		else
			log_debug("job %s: pid %d not put back: %s", a->jobs[pr->job].name,
			          (int)pr->pid, why);
	}
}

void cons_send_stats(struct agent *a)
{
	struct vsp_request req;
	struct vsp_reply rep;
	struct pctl_msg m;
	struct pctl_stats_entry *e;
	uint16_t n = 0;
	int rc;

	if (registry_nprocs(a) == 0)
		return;
	memset(&req, 0, sizeof(req));
	req.type = VSP_LIST;
	rc = vsc_call(&a->vs, &req, &rep);
	if (rc != 0) {
		log_debug("vsched list: %s", rep.msg[0] ? rep.msg : strerror(-rc));
		free(rep.tasks);
		return;
	}
	e = calloc(rep.ntasks ? rep.ntasks : 1, sizeof(*e));
	if (!e) {
		free(rep.tasks);
		return;
	}
	for (uint32_t i = 0; i < rep.ntasks && n < PCTL_MAX_ENTRIES; i++) {
		int p = registry_find_proc(a, rep.tasks[i].pid);
		if (p < 0 || a->procs[p].exited)
			continue;
		a->procs[p].seen_in_vsched = true;
		e[n].job = a->jobs[a->procs[p].job].handle;
		e[n].rank = a->procs[p].rank;
		e[n].gen = a->procs[p].gen;
		e[n].st = rep.tasks[i];
		n++;
	}
	free(rep.tasks);
	reconcile(a);
	memset(&m, 0, sizeof(m));
	m.type = PCTL_TASK_STATS;
	m.u.stats.n = n;
	m.u.stats.e = e;
	ctl_send(a, &m);
	free(e);
}

void cons_set_epoch(struct agent *a, uint64_t realtime_ns)
{
	a->cnt.epochs++;
	if (realtime_ns == a->epoch_ns && !a->epoch_pending) {
		log_debug("controller: epoch %llu ns again", (unsigned long long)realtime_ns);
		return;
	}
	a->epoch_ns = realtime_ns;
	a->epoch_pending = true;
	a->epoch_next = 0;
	log_info("controller: epoch %llu ns (CLOCK_REALTIME)", (unsigned long long)realtime_ns);
	cons_epoch_tick(a, mono_now());
}

void cons_epoch_tick(struct agent *a, mono_ns now)
{
	char why[300];
	int rc;

	if (a->epoch_ns == 0)
		return;
	if (!a->vs.fresh && mono_before(now, a->epoch_next))
		return;
	a->vs.fresh = false;
	rc = vsc_epoch(&a->vs, a->epoch_ns, why, sizeof(why));
	/* again after a second while not given, then every re-assertion */
	a->epoch_next = now + (rc != 0 && a->epoch_pending ? NSEC_PER_SEC : AGENT_EPOCH_REASSERT);
	if (rc != 0) {
		if (a->epoch_pending && a->cnt.epochs_applied == 0)
			log_warnx("epoch %llu ns not given to vsched: %s",
			          (unsigned long long)a->epoch_ns, why);
		else
			log_debug("epoch not given to vsched: %s", why);
		a->cnt.vsched_errors++;
		return;
	}
	if (a->epoch_pending)
		log_info("epoch %llu ns given to vsched", (unsigned long long)a->epoch_ns);
	a->epoch_pending = false;
	a->cnt.epochs_applied++;
}
