/*
 * The job and rank tables: jobs by name (created when an agent first announces one of
 * their ranks, or restored from the state file), their ranks (where each runs), and the
 * control state each job starts with. No messages and no transactions here: reports.c
 * fills the tables, txn.c changes the committed constraints.
 *
 * Invariants: job indices never change while the daemon runs (jobs are not deleted);
 * nranks is the number of used rank records; the control library's rank count is at
 * least the highest used rank + 1 (jobs_fit_ranks).
 */
#include "controller.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "text.h"

int jobs_find(const struct ctld *d, const char *name)
{
	for (int i = 0; i < d->njobs; i++)
		if (strcmp(d->jobs[i]->name, name) == 0)
			return i;
	return -1;
}

/* The control state for jb's settings and target; first decision in *dec. */
static int job_loop_init(const struct ctld *d, struct job *jb, mono_ns now,
                         struct control_decision *dec)
{
	struct control_params p;

	settings_control_params(&d->cfg, &jb->control.set, jb->control.target_pct, &p);
	p.nranks = 1;
	return control_job_init(&jb->control.loop, &p, now, dec);
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
	text_fmt(jb->name, sizeof(jb->name), "%s", name);
	jb->control.set = *s;
	jb->control.target_pct = target;
	if (job_loop_init(d, jb, now, &dec) != 0) {
		/* settings the control library refuses (e.g. a restored target too small for
		 * min_slice): start without a target rather than not at all */
		log_warnx("job %s: settings refused by the control algorithm; target cleared",
		          name);
		jb->control.target_pct = 0;
		jb->control.set = d->cfg.job;
		if (job_loop_init(d, jb, now, &dec) != 0)
			fatalx("job %s: default control parameters refused", name);
	}
	d->jobs[d->njobs] = jb;
	return d->njobs++;
}

int jobs_get(struct ctld *d, const char *name, mono_ns now)
{
	int j = jobs_find(d, name);

	if (j >= 0)
		return j;
	j = job_new(d, name, &d->cfg.job, d->cfg.default_target, now);
	log_info("job %s: new (target %s, algorithm %s)", name,
	         d->cfg.default_target > 0 ? "default" : "none",
	         padm_algo_name(d->jobs[j]->control.set.algo));
	return j;
}

int jobs_restore(struct ctld *d, const char *name, const struct job_settings *s, double target,
                 mono_ns now)
{
	return job_new(d, name, s, target, now);
}

static void job_free(struct job *jb)
{
	struct txn *t = &jb->txn;

	if (t->active && t->kind == TXN_SETTINGS)
		control_job_fini(&t->saved_ctl);
	free(t->nodes);
	free(t->st);
	control_job_fini(&jb->control.loop);
	free(jb->ranks);
	free(jb);
}

void jobs_free(struct ctld *d)
{
	for (int i = 0; i < d->njobs; i++)
		job_free(d->jobs[i]);
	free(d->jobs);
	d->jobs = NULL;
	d->njobs = d->cap_jobs = 0;
}

uint8_t jobs_state(const struct job *jb)
{
	const struct control_job *cj = &jb->control.loop;

	if (jb->commit.refused || cj->state == CONTROL_REJECTED)
		return PADM_ST_REJECTED;
	if (cj->state == CONTROL_CALIBRATING)
		return PADM_ST_CALIBRATING;
	if (jb->control.target_pct <= 0)
		return PADM_ST_IDLE;
	switch (cj->state) {
	case CONTROL_STABLE:
		return PADM_ST_STABLE;
	case CONTROL_OSCILLATING:
		return PADM_ST_OSCILLATING;
	default:
		return PADM_ST_CONVERGING;
	}
}

bool jobs_on_node(const struct job *jb, int node)
{
	for (uint32_t r = 0; r < jb->cap_ranks; r++)
		if (jb->ranks[r].used && jb->ranks[r].node == node)
			return true;
	return false;
}

bool jobs_plan_moves(const struct job *jb)
{
	const struct job_plan *jp = &jb->plan;

	return jp->nwin > 0 &&
	       (jp->nwin != jb->commit.nwin ||
	        memcmp(jp->win, jb->commit.win, jp->nwin * sizeof(jp->win[0])) != 0);
}

bool jobs_has_up_node(const struct ctld *d, const struct job *jb)
{
	for (int i = 0; i < d->nnodes; i++)
		if (d->nodes[i]->up && jobs_on_node(jb, i))
			return true;
	return false;
}

void jobs_fit_ranks(struct job *jb)
{
	uint32_t need = 0;

	for (uint32_t r = 0; r < jb->cap_ranks; r++)
		if (jb->ranks[r].used)
			need = r + 1;
	if (need > jb->control.loop.nranks && control_set_nranks(&jb->control.loop, need) != 0)
		log_warnx("job %s: cannot grow to %u ranks", jb->name, need);
}

/* Room for rank number `rank` (rank < CONTROL_MAX_RANKS). */
static void job_grow_ranks(struct job *jb, uint32_t rank)
{
	uint32_t cap = jb->cap_ranks ? jb->cap_ranks : 8;
	struct rank *r;

	if (rank < jb->cap_ranks)
		return;
	while (cap <= rank)
		cap *= 2;
	r = realloc(jb->ranks, cap * sizeof(*r));
	if (r == NULL)
		fatalx("out of memory");
	memset(r + jb->cap_ranks, 0, (cap - jb->cap_ranks) * sizeof(*r));
	jb->ranks = r;
	jb->cap_ranks = cap;
}

void jobs_rank_join(struct job *jb, uint32_t rank, int node, uint32_t handle, int32_t pid)
{
	struct rank *rk;

	job_grow_ranks(jb, rank);
	rk = &jb->ranks[rank];
	if (!rk->used)
		jb->nranks++;
	memset(rk, 0, sizeof(*rk));
	rk->used = true;
	rk->node = node;
	rk->handle = handle;
	rk->pid = pid;
	rk->rate = NAN;
	rk->cpu = -1;
}

void jobs_forget_node(struct ctld *d, int node)
{
	for (int j = 0; j < d->njobs; j++) {
		struct job *jb = d->jobs[j];

		for (uint32_t r = 0; r < jb->cap_ranks; r++) {
			if (jb->ranks[r].used && jb->ranks[r].node == node) {
				jb->ranks[r].used = false;
				jb->nranks--;
			}
		}
	}
}
