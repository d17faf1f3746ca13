/*
 * The agent's tables: jobs (name -> the agent's u32 handle, the constraint in force),
 * processes (pid, job, rank, sampling state) and libapprate handles (-> process). Fixed
 * capacity, allocated at start; linear search is plenty for a node's worth of processes.
 * A pure table: nothing here sends a message or opens a counter; what a caller has to say
 * or release about a process the registry forgets, it gets back (struct agent_gone).
 *
 * Life of a process: registered (REGISTER) -> exited (its pid is gone or was reused; seen
 * every q by registry_reap) -> forgotten (JOB_PROC left) once all its handles have been
 * silent for their stale time. The delay between the last two lets the frames a process
 * pushed just before it exited (its FINAL report, its last BYTES), still queued on the
 * PULL socket when the pid disappears, be relayed instead of refused as unknown.
 */
#include "agent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "procfs.h"

int registry_init(struct agent *a)
{
	a->procs = calloc((size_t)a->cfg.max_procs, sizeof(*a->procs));
	a->handles = calloc(AGENT_MAX_HANDLES, sizeof(*a->handles));
	if (!a->procs || !a->handles) {
		free(a->procs);
		free(a->handles);
		a->procs = NULL;
		a->handles = NULL;
		return -1;
	}
	a->next_job_handle = 1;
	return 0;
}

void registry_free(struct agent *a)
{
	free(a->procs);
	free(a->handles);
	a->procs = NULL;
	a->handles = NULL;
}

int registry_find_job(struct agent *a, const char *name)
{
	for (int i = 0; i < AGENT_MAX_JOBS; i++)
		if (a->jobs[i].used && strcmp(a->jobs[i].name, name) == 0)
			return i;
	return -1;
}

int registry_find_proc(struct agent *a, pid_t pid)
{
	for (int i = 0; i < a->cfg.max_procs; i++)
		if (a->procs[i].used && a->procs[i].pid == pid)
			return i;
	return -1;
}

struct agent_handle *registry_find_handle(struct agent *a, uint32_t handle)
{
	if (handle == 0)
		return NULL;
	for (int i = 0; i < a->handles_hw; i++)
		if (a->handles[i].handle == handle)
			return &a->handles[i];
	return NULL;
}

int registry_nprocs(const struct agent *a)
{
	int n = 0;

	for (int i = 0; i < a->cfg.max_procs; i++)
		n += a->procs[i].used && !a->procs[i].exited;
	return n;
}

int registry_nconstrained(const struct agent *a)
{
	int n = 0;

	for (int j = 0; j < AGENT_MAX_JOBS; j++)
		n += a->jobs[j].used && a->jobs[j].constrained;
	return n;
}

int registry_add_proc(struct agent *a, const char *job, uint32_t rank, pid_t pid,
                      uint64_t starttime, char *why, size_t whylen)
{
	int j = registry_find_job(a, job), p = -1;
	struct agent_proc *pr;

	if (j < 0) {
		for (int i = 0; i < AGENT_MAX_JOBS && j < 0; i++)
			if (!a->jobs[i].used)
				j = i;
		if (j < 0) {
			snprintf(why, whylen, "job table full (%d jobs)", AGENT_MAX_JOBS);
			return -1;
		}
	}
	for (int i = 0; i < a->cfg.max_procs && p < 0; i++)
		if (!a->procs[i].used)
			p = i;
	if (p < 0) {
		snprintf(why, whylen, "process table full (max_procs %d)", a->cfg.max_procs);
		return -1;
	}
	if (!a->jobs[j].used) {
		memset(&a->jobs[j], 0, sizeof(a->jobs[j]));
		a->jobs[j].used = true;
		a->jobs[j].handle = a->next_job_handle++;
		snprintf(a->jobs[j].name, sizeof(a->jobs[j].name), "%s", job);
	}
	a->jobs[j].nprocs++;
	pr = &a->procs[p];
	memset(pr, 0, sizeof(*pr));
	pr->used = true;
	pr->pid = pid;
	pr->starttime = starttime;
	pr->job = j;
	pr->rank = rank;
	pr->since = mono_now();
	pr->mem.perf_fd = -1; /* no counter open until the sampler attaches one */
	return p;
}

void registry_drop_proc(struct agent *a, int idx, struct agent_gone *gone)
{
	struct agent_proc *pr = &a->procs[idx];
	struct agent_job *jb = &a->jobs[pr->job];

	gone->proc = *pr;
	gone->job_handle = jb->handle;
	snprintf(gone->job, sizeof(gone->job), "%s", jb->name);
	for (int i = 0; i < a->handles_hw; i++)
		if (a->handles[i].handle && a->handles[i].proc == idx)
			memset(&a->handles[i], 0, sizeof(a->handles[i]));
	if (--jb->nprocs <= 0)
		memset(jb, 0, sizeof(*jb));
	memset(pr, 0, sizeof(*pr));
}

int registry_bind_handle(struct agent *a, uint32_t handle, int proc, uint64_t interval_ns)
{
	struct agent_handle *h = registry_find_handle(a, handle);

	if (h && h->proc == proc && !h->closing) {
		h->last_seen = mono_now(); /* re-registration: sequence numbers go on */
		h->interval_ns = interval_ns;
		return 0;
	}
	for (int i = 0; i < AGENT_MAX_HANDLES && !h; i++)
		if (a->handles[i].handle == 0)
			h = &a->handles[i];
	/* Full: a closed handle still waiting for its last BYTES gives way. */
	for (int i = 0; i < AGENT_MAX_HANDLES && !h; i++)
		if (a->handles[i].closing)
			h = &a->handles[i];
	if (!h)
		return -1;
	memset(h, 0, sizeof(*h));
	if (h - a->handles >= a->handles_hw)
		a->handles_hw = (int)(h - a->handles) + 1;
	h->handle = handle;
	h->proc = proc;
	h->interval_ns = interval_ns;
	h->last_seen = mono_now();
	return 0;
}

/* Silence after which h is stale: AGENT_STALE_INTERVALS intervals, capped. */
static uint64_t stale_after(const struct agent_handle *h)
{
	uint64_t iv = h->interval_ns ? h->interval_ns : 100 * NSEC_PER_MSEC;

	if (iv > AGENT_STALE_MAX_NS / AGENT_STALE_INTERVALS)
		return AGENT_STALE_MAX_NS;
	return iv * AGENT_STALE_INTERVALS;
}

static bool is_stale(const struct agent_handle *h, mono_ns now)
{
	return !mono_before(now, h->last_seen + stale_after(h));
}

/*
 * Why a live handle of a live process never expires: reports are driven by the
 * application's calls, so a stalled application is silent, and when it resumes its REPORTs
 * must still be accepted (libapprate re-registers only every 10 s). Only its pid going away
 * ends it. A closing handle (FINAL seen) has nothing more to say after its stale time.
 */
int registry_reap(struct agent *a, mono_ns now, struct agent_gone *gone)
{
	int dropped = 0;

	for (int i = 0; i < a->cfg.max_procs; i++) {
		struct agent_proc *pr = &a->procs[i];
		if (pr->used && !pr->exited && procfs_starttime(pr->pid) != pr->starttime) {
			pr->exited = true;
			log_info("job %s: pid %d rank %u exited", a->jobs[pr->job].name,
			         (int)pr->pid, pr->rank);
		}
	}
	for (int i = 0; i < a->handles_hw; i++) {
		struct agent_handle *h = &a->handles[i];
		if (h->handle && h->closing && !a->procs[h->proc].exited && is_stale(h, now))
			memset(h, 0, sizeof(*h));
	}
	for (int i = 0; i < a->cfg.max_procs; i++) {
		struct agent_proc *pr = &a->procs[i];
		bool quiet = true;

		if (!pr->used || !pr->exited)
			continue;
		for (int k = 0; k < a->handles_hw && quiet; k++)
			if (a->handles[k].handle && a->handles[k].proc == i)
				quiet = is_stale(&a->handles[k], now);
		if (!quiet)
			continue; /* its last frames may still be queued */
		registry_drop_proc(a, i, &gone[dropped++]);
	}
	return dropped;
}
