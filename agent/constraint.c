/*
 * Constraints from the controller, applied to vsched. A CONSTRAINT (one reservation, or up to
 * VSP_MAX_WINDOWS disjoint windows of one co-scheduling frame, given to vsched as one
 * multi-window ADD/SET) covers every process of a job on this node and is applied to all of
 * them or to none: when vsched refuses one
 * process, the ones already changed are put back to what they had, so the controller can
 * keep its invariant "never half-applied" (it reads the CONSTRAINT_ACK). Generations only
 * go forward per job; an older one is refused as stale, the same one again is a no-op.
 * The last constraint stays in force when the controller goes away: nothing here undoes
 * it. A new process's provisional reservation yields to constraints: a constraint vsched
 * refuses is tried once more after the processes that hold only that reservation (their
 * job has no constraint yet) have left vsched.
 */
#include "agent.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "log.h"
#include "procfs.h"

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
	struct vsp_reply rep;
	char why[200];
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
	if (vsc_list(&a->vs, &rep, why, sizeof(why)) == 0)
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

/* A CONSTRAINT the job can take: known here, 1..VSP_MAX_WINDOWS windows, not older than the
 * one in force. Returns j (the job) or -errno with why. */
static int cons_check(struct agent *a, const struct pctl_constraint *c,
                      const struct agent_resv *want, char *why, size_t whylen)
{
	int j = registry_find_job(a, c->job);
	const struct agent_job *jb;

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
	jb = &a->jobs[j];
	if (jb->constrained && c->gen < jb->gen) {
		a->cnt.ctl_stale++;
		snprintf(why, whylen, "job %s: generation %llu older than %llu in force", c->job,
		         (unsigned long long)c->gen, (unsigned long long)jb->gen);
		return -ESTALE;
	}
	if (jb->constrained && c->gen == jb->gen && !resv_equal(want, &jb->resv)) {
		snprintf(why, whylen,
		         "job %s: generation %llu already in force with another "
		         "reservation",
		         c->job, (unsigned long long)c->gen);
		a->cnt.ctl_stale++;
		return -ESTALE;
	}
	return j;
}

/*
 * Puts the n processes of u[] under want, in order, until one is refused. Returns 0 or
 * -errno with why; *ndone: how many were changed (u[k].idx -1: nothing to undo there).
 */
static int cons_put_all(struct agent *a, const struct pctl_constraint *c,
                        const struct agent_job *jb, const struct agent_resv *want, struct undo *u,
                        int n, int *ndone, char *why, size_t whylen)
{
	char pwhy[200];

	*ndone = 0;
	for (int k = 0; k < n; k++) {
		struct agent_proc *pr = &a->procs[u[k].idx];
		int rc;

		if (pr->managed && pr->gen == c->gen && jb->constrained && c->gen == jb->gen) {
			u[k].idx = -1; /* already in force: nothing to do, nothing to undo */
			continue;
		}
		rc = vsc_put(&a->vs, pr->pid, want, a->cfg.park, u[k].had, pwhy, sizeof(pwhy));
		if (rc == -ESRCH && procfs_starttime(pr->pid) != pr->starttime) {
			/*
			 * It exited since the last sampling round: not a refusal. Undoing the
			 * whole constraint for a process that no longer matters would be wrong.
			 */
			log_info("job %s: pid %d rank %u exited", c->job, (int)pr->pid, pr->rank);
			pr->exited = true;
			u[k].idx = -1;
			*ndone = k + 1;
			continue;
		}
		if (rc != 0) {
			a->cnt.vsched_errors++;
			snprintf(why, whylen, "job %s: pid %d: %s", c->job, (int)pr->pid, pwhy);
			return rc;
		}
		*ndone = k + 1;
	}
	return 0;
}

/* Puts back what cons_put_all changed: the old reservation, or out of vsched. */
static void cons_undo(struct agent *a, const char *job, const struct undo *u, int ndone)
{
	char pwhy[200];

	for (int k = 0; k < ndone; k++) {
		struct agent_proc *pr;
		int rc;

		if (u[k].idx < 0)
			continue;
		pr = &a->procs[u[k].idx];
		rc = u[k].had ? vsc_put(&a->vs, pr->pid, &u[k].prev, a->cfg.park, true, pwhy,
		                        sizeof(pwhy))
		              : vsc_del(&a->vs, pr->pid, pwhy, sizeof(pwhy));
		if (rc != 0)
			log_warnx("job %s: pid %d: could not put back: %s", job, (int)pr->pid,
			          pwhy);
	}
}

/* Records what is now in force; returns how many processes were changed. */
static int cons_record(struct agent *a, const struct pctl_constraint *c,
                       const struct agent_resv *want, const struct undo *u, int n)
{
	int changed = 0;

	for (int k = 0; k < n; k++) {
		struct agent_proc *pr;
		if (u[k].idx < 0)
			continue;
		pr = &a->procs[u[k].idx];
		pr->managed = true;
		pr->gen = c->gen;
		pr->resv = *want;
		changed++;
	}
	return changed;
}

/*
 * A new rank's provisional reservation yields to the controller's constraints: when vsched
 * refuses job j's constraint, the processes of other jobs that hold only the provisional
 * reservation (their job has no constraint yet) leave vsched; they are put back under
 * their job's constraint when it comes (cons_put_all: one not under vsched is added).
 * Returns how many left.
 */
static int cons_yield_provisional(struct agent *a, int j)
{
	char pwhy[200];
	int n = 0;

	for (int i = 0; i < a->cfg.max_procs; i++) {
		struct agent_proc *pr = &a->procs[i];
		if (!pr->used || pr->exited || !pr->managed || pr->gen != 0 || pr->job == j ||
		    a->jobs[pr->job].constrained)
			continue;
		if (vsc_del(&a->vs, pr->pid, pwhy, sizeof(pwhy)) != 0) {
			log_warnx("job %s: pid %d: provisional reservation not removed: %s",
			          a->jobs[pr->job].name, (int)pr->pid, pwhy);
			continue;
		}
		pr->managed = false;
		log_info("job %s: pid %d: provisional reservation yields to job %s's constraint",
		         a->jobs[pr->job].name, (int)pr->pid, a->jobs[j].name);
		n++;
	}
	return n;
}

/* Every process of job j under want, or none (put back); with retry, once more after the
 * provisional reservations in the way have yielded. */
static int cons_put_job(struct agent *a, const struct pctl_constraint *c, int j,
                        const struct agent_resv *want, struct undo *u, bool retry, char *why,
                        size_t whylen)
{
	int n = collect_undo(a, j, u), ndone, rc;

	rc = cons_put_all(a, c, &a->jobs[j], want, u, n, &ndone, why, whylen);
	if (rc == 0)
		return cons_record(a, c, want, u, n);
	cons_undo(a, c->job, u, ndone);
	if (retry && cons_yield_provisional(a, j) > 0)
		return cons_put_job(a, c, j, want, u, false, why, whylen);
	return rc;
}

int cons_apply(struct agent *a, const struct pctl_constraint *c, char *why, size_t whylen)
{
	struct agent_resv want;
	struct agent_job *jb;
	struct undo *u;
	char rs[400];
	int j, ndone;

	resv_of_constraint(&want, c);
	j = cons_check(a, c, &want, why, whylen);
	if (j < 0)
		return j;
	jb = &a->jobs[j];
	u = calloc((size_t)a->cfg.max_procs, sizeof(*u));
	if (!u)
		fatalx("out of memory");
	ndone = cons_put_job(a, c, j, &want, u, true, why, whylen);
	free(u);
	if (ndone < 0)
		return ndone;
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
		int rc = vsc_add(&a->vs, pr->pid, &r->w[0], a->cfg.park, why, sizeof(why));

		if (rc == -EEXIST) {
			log_info("job %s: pid %d already under vsched: its reservation stays until "
			         "the controller decides",
			         jb->name, (int)pr->pid);
			a->stats_soon = true;
			return;
		}
		if (rc != 0) {
			a->cnt.vsched_errors++;
			log_warnx("job %s: pid %d not put under vsched: %s", jb->name, (int)pr->pid,
			          why);
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
	a->stats_soon = true;
	fmt_resv(r, rs, sizeof(rs));
	log_info("job %s: pid %d rank %u under vsched (%s%s)", jb->name, (int)pr->pid, pr->rank,
	         gen ? "constraint, " : "provisional, ", rs);
}
