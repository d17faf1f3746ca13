/*
 * The agent's tables: jobs (name -> the agent's u32 handle, the constraint in force),
 * processes (pid, job, rank, sampling state) and libapprate handles (-> process). Fixed
 * capacity, allocated at start; linear search is plenty for a node's worth of processes.
 */
#include "agent.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"

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
	if (a->procs)
		for (int i = 0; i < a->cfg.max_procs; i++)
			if (a->procs[i].used) {
				smem_detach(&a->mem, &a->procs[i].mem);
				snet_proc_free(&a->procs[i].net);
			}
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
	for (int i = 0; i < AGENT_MAX_HANDLES; i++)
		if (a->handles[i].handle == handle)
			return &a->handles[i];
	return NULL;
}

int registry_nprocs(const struct agent *a)
{
	int n = 0;

	for (int i = 0; i < a->cfg.max_procs; i++)
		n += a->procs[i].used;
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
	bwavg_init(&pr->mem_bw, (unsigned)a->cfg.windows);
	bwavg_init(&pr->tx_bw, (unsigned)a->cfg.windows);
	bwavg_init(&pr->rx_bw, (unsigned)a->cfg.windows);
	smem_attach(&a->mem, &pr->mem, pid);
	return p;
}

void registry_drop_proc(struct agent *a, int idx)
{
	struct agent_proc *pr = &a->procs[idx];
	struct agent_job *jb = &a->jobs[pr->job];

	for (int i = 0; i < AGENT_MAX_HANDLES; i++)
		if (a->handles[i].handle && a->handles[i].proc == idx)
			memset(&a->handles[i], 0, sizeof(a->handles[i]));
	smem_detach(&a->mem, &pr->mem);
	snet_proc_free(&pr->net);
	if (--jb->nprocs <= 0)
		memset(jb, 0, sizeof(*jb));
	memset(pr, 0, sizeof(*pr));
}

int registry_bind_handle(struct agent *a, uint32_t handle, int proc)
{
	struct agent_handle *h = registry_find_handle(a, handle);

	if (h && h->proc == proc && !h->closing) {
		h->last_seen = mono_now(); /* re-registration: sequence numbers go on */
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
	h->handle = handle;
	h->proc = proc;
	h->last_seen = mono_now();
	return 0;
}

uint64_t registry_starttime(pid_t pid)
{
	char path[64], buf[1024], *p;
	FILE *f;
	size_t n;
	unsigned long long v = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* comm may contain blanks and parentheses: fields start after the last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* After ") ": field 3 (state) ... field 22 (starttime) is the 20th token. */
	p++;
	for (int field = 3; field <= 22; field++) {
		char *end;
		while (*p == ' ')
			p++;
		if (field == 22) {
			v = strtoull(p, &end, 10);
			break;
		}
		p = strchr(p, ' ');
		if (!p)
			return 0;
	}
	return v ? v : 1;
}

long registry_proc_uid(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) != 0)
		return -1;
	return (long)st.st_uid;
}
