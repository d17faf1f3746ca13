/*
 * Placement of reservations on CPUs for partitioned EDF (DESIGN.md §2), API thread only.
 *
 * A CPU admits a request when all its windows and the request's (less the task's own on
 * `set`) pass admission_test (admission.c: processor demand against what the CPU gives, exact
 * for short hyperperiods, sound otherwise). Σ density <= cap implies that test and is kept
 * as an O(1) fast path from the table's cached sums. Every decision here, for `add` and for
 * `set` (on the task's CPU, then on another one it would move to), is that one test.
 *
 *  - worst-fit (default): among the CPUs that admit it, the lowest utilisation Σ S/T (ties:
 *    lowest index). Spreads load, leaving the most slack on every CPU.
 *  - first-fit: the lowest-numbered CPU that admits it. Packs load, leaving whole CPUs free.
 *
 * Refusals are one line: the CPU, its load (Σ S/T of the tasks already there) + the
 * request's, and what does not fit (the cap, or the interval whose jobs need more than the
 * CPU gives, naming two windows that overlap in it).
 */
#include "vsched.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "duration.h"
#include "log.h"

/* Σ density and Σ S/T of CPU index idx without task skip's windows. */
static void cpu_sums(const struct sched *s, int idx, const struct task *skip, double *load,
                     double *util)
{
	*load = s->table[idx]->load;
	*util = s->table[idx]->util;
	if (skip && skip->cpu_idx == idx) {
		*load -= admission_density_n(skip->resv->w, skip->resv->n);
		*util -= admission_util_n(skip->resv->w, skip->resv->n);
	}
	*load = *load > 0 ? *load : 0;
	*util = *util > 0 ? *util : 0;
}

/* The windows of CPU index idx (owner: table index) but skip's, then the request's (-1). */
static struct adm_win *cpu_windows(const struct sched *s, int idx, const struct task *skip,
                                   const struct vsp_resv *w, unsigned n, int *count, bool *multi)
{
	const struct cpu_table *ct = s->table[idx];
	int total = (int)n, k = 0;
	struct adm_win *aw;

	*multi = n > 1;
	for (int i = 0; i < ct->n; i++)
		if (ct->task[i] != skip)
			total += (int)ct->task[i]->resv->n;
	aw = calloc((size_t)total, sizeof(*aw));
	if (aw == NULL)
		fatal("placement: out of memory");
	for (int i = 0; i < ct->n; i++) {
		const struct task_resv *rv = ct->task[i]->resv;
		if (ct->task[i] == skip)
			continue;
		*multi |= rv->n > 1;
		for (unsigned j = 0; j < rv->n; j++)
			aw[k++] = (struct adm_win){
			    rv->w[j].period, rv->w[j].slice, rv->w[j].deadline, rv->w[j].phase, i,
			    (int)j};
	}
	for (unsigned j = 0; j < n; j++)
		aw[k++] = (struct adm_win){w[j].period, w[j].slice, w[j].deadline,
		                           w[j].phase,  -1,         (int)j};
	*count = k;
	return aw;
}

/* "window 2 (40ms+45ms)" for the request's, "pid 123 window 1 (0ns+45ms)" for a task's. */
static const char *window_name(const struct sched *s, int idx, const struct adm_win *x, char *buf,
                               size_t len)
{
	char ph[32], dl[32];
	int at = 0;

	if (x->owner >= 0)
		at = snprintf(buf, len, "pid %d ", (int)s->table[idx]->task[x->owner]->pid);
	snprintf(buf + at, len - (size_t)at, "window %d (%s+%s)", x->idx + 1,
	         duration_format(x->phase, ph, sizeof(ph)),
	         duration_format(x->deadline, dl, sizeof(dl)));
	return buf;
}

/*
 * The reason for a refusal by admission_test (rc) of aw[] on CPU index idx, short enough to
 * reach the administrator through the agent's and the controller's prefixes (~150 bytes).
 */
static void refusal(const struct sched *s, int idx, const struct adm_win *aw, int rc,
                    const struct adm_result *r, double others, double need, bool multi, char *why,
                    size_t whylen)
{
	char a[96], b[96], dm[32], fr[32], to[32], gv[48] = "";
	int cpu = s->cfg.cpus[idx];

	duration_format(r->demand, dm, sizeof(dm));
	duration_format(r->from, fr, sizeof(fr));
	duration_format(r->to, to, sizeof(to));
	if (r->supply < (double)(r->to - r->from)) { /* past the burst: cap of the interval */
		snprintf(gv, sizeof(gv), " > ");
		duration_format((uint64_t)r->supply, gv + 3, sizeof(gv) - 3);
		strncat(gv, " allowed", sizeof(gv) - strlen(gv) - 1);
	}
	if (rc == ADM_DEMAND && r->a >= 0 && (multi || !r->util_over))
		snprintf(why, whylen,
		         "cpu %d: %s overlaps %s: slices %s in [%s, %s]%s, load %.1f%% + %.1f%%",
		         cpu, window_name(s, idx, &aw[r->a], a, sizeof(a)),
		         window_name(s, idx, &aw[r->b], b, sizeof(b)), dm, fr, to, gv, 100 * others,
		         100 * need);
	else if (r->util_over || rc == ADM_UTIL)
		snprintf(why, whylen, "cpu %d: load %.1f%% + %.1f%% exceeds cap %.1f%%", cpu,
		         100 * others, 100 * need, 100 * s->cap);
	else if (rc == ADM_DEMAND && r->exact)
		snprintf(why, whylen, "cpu %d: slices %s in [%s, %s]%s, load %.1f%% + %.1f%%", cpu,
		         dm, fr, to, gv, 100 * others, 100 * need);
	else if (rc == ADM_DEMAND)
		snprintf(
		    why, whylen,
		    "cpu %d: slices up to %s in %s%s, load %.1f%% + %.1f%% (sound test: periods "
		    "without a short hyperperiod)",
		    cpu, dm, to, gv, 100 * others, 100 * need);
	else
		snprintf(why, whylen,
		         "cpu %d: load %.1f%% + %.1f%%: deadlines not provable within the test's "
		         "limits (periods without a short hyperperiod)",
		         cpu, 100 * others, 100 * need);
}

bool placement_admits(const struct sched *s, int idx, const struct task *skip,
                      const struct vsp_resv *w, unsigned n, char *why, size_t whylen)
{
	struct adm_result r;
	struct adm_win *aw;
	double load, others, need = admission_util_n(w, n);
	int k, rc;
	bool multi;

	cpu_sums(s, idx, skip, &load, &others);
	/* Σ density <= cap implies the demand test (admission.c) */
	if (admission_fits(load, admission_density_n(w, n), s->cap))
		return true;
	aw = cpu_windows(s, idx, skip, w, n, &k, &multi);
	rc = admission_test(aw, k, &s->supply, NULL, -1, &r);
	if (rc != ADM_FITS && why != NULL && whylen > 0)
		refusal(s, idx, aw, rc, &r, others, need, multi, why, whylen);
	free(aw);
	return rc == ADM_FITS;
}

/* The self-test probe's utilisation on CPU index idx (0 if it is not there): transient, and
 * it yields to a task placed on its CPU (api.c), so worst-fit ranks CPUs without it. Else
 * every rank that registers during the test at vsched's start lands beside the others. */
static double probe_util(const struct sched *s, int idx)
{
	const struct cpu_table *ct = s->table[idx];

	for (int k = 0; s->probe_pid > 0 && k < ct->n; k++)
		if (ct->task[k]->pid == s->probe_pid)
			return admission_util_n(ct->task[k]->resv->w, ct->task[k]->resv->n);
	return 0;
}

int placement_choose(const struct sched *s, int req_cpu, const struct task *skip,
                     const struct vsp_resv *w, unsigned n, char *why, size_t whylen)
{
	double load, util[VS_MAX_CPUS];
	bool ok[VS_MAX_CPUS];
	int idx, low = 0;

	if (req_cpu >= 0) {
		for (idx = 0; idx < s->cfg.ncpus && s->cfg.cpus[idx] != req_cpu; idx++)
			;
		if (idx == s->cfg.ncpus) {
			snprintf(why, whylen, "cpu %d: not managed by vsched", req_cpu);
			return -EINVAL;
		}
		return placement_admits(s, idx, skip, w, n, why, whylen) ? idx : -ENOSPC;
	}
	for (int i = 0; i < s->cfg.ncpus; i++) {
		cpu_sums(s, i, skip, &load, &util[i]);
		util[i] -= probe_util(s, i);
		ok[i] = placement_admits(s, i, skip, w, n, NULL, 0);
		if (util[i] < util[low])
			low = i;
	}
	idx = placement_pick_ok(ok, util, s->cfg.ncpus, s->cfg.placement);
	if (idx >= 0)
		return idx;
	placement_admits(s, low, skip, w, n, why, whylen);
	return -ENOSPC;
}

int placement_pick_ok(const bool *ok, const double *key, int n, int rule)
{
	int best = -1;

	if (rule != PLACE_WORST_FIT && rule != PLACE_FIRST_FIT)
		return -1;
	for (int i = 0; i < n; i++) {
		if (!ok[i])
			continue;
		if (rule == PLACE_FIRST_FIT)
			return i;
		if (best < 0 || key[i] < key[best])
			best = i;
	}
	return best;
}
