/*
 * Task statistics, every stats_interval: vsched's LIST of what it runs. The agent's
 * processes among them go to the controller (TASK_STATS, when registered: the
 * controller's dashboard shows their reservation, CPU and deadline misses), and managed
 * processes vsched no longer shows (vsched restarted, or an administrator deleted them)
 * are put back under the reservation they had: the constraint in force is the agent's to
 * keep.
 */
#include "agent.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"

/* Puts back the managed processes vsched's last LIST did not show. */
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

/* The agent's processes in vsched's LIST, as TASK_STATS entries (at most n of them). */
static uint16_t collect(struct agent *a, const struct vsp_reply *rep, struct pctl_stats_entry *e)
{
	uint16_t n = 0;

	for (uint32_t i = 0; i < rep->ntasks && n < PCTL_MAX_ENTRIES; i++) {
		int p = registry_find_proc(a, rep->tasks[i].pid);
		if (p < 0 || a->procs[p].exited)
			continue;
		a->procs[p].seen_in_vsched = true;
		e[n].job = a->jobs[a->procs[p].job].handle;
		e[n].rank = a->procs[p].rank;
		e[n].gen = a->procs[p].gen;
		e[n].st = rep->tasks[i];
		n++;
	}
	return n;
}

void stats_send(struct agent *a)
{
	struct vsp_reply rep;
	struct pctl_msg m;
	struct pctl_stats_entry *e;
	char why[200];

	if (registry_nprocs(a) == 0)
		return;
	if (vsc_list(&a->vs, &rep, why, sizeof(why)) != 0) {
		log_debug("vsched list: %s", why);
		free(rep.tasks);
		return;
	}
	e = calloc(rep.ntasks ? rep.ntasks : 1, sizeof(*e));
	if (!e) {
		free(rep.tasks);
		return;
	}
	memset(&m, 0, sizeof(m));
	m.type = PCTL_TASK_STATS;
	m.u.stats.n = collect(a, &rep, e);
	m.u.stats.e = e;
	free(rep.tasks);
	reconcile(a);
	ctl_send(a, &m);
	free(e);
}
