/*
 * Per-process bandwidth of jobs, from the agents' BW reports, and the devil/turtle class
 * it gives the job (paper 002; fit_classify_bw in fit_class.c). Two views of the same
 * figures:
 *   - averaged: every rank's reports over the last bw_window (the latest one alone when
 *     none is that recent), mean over the job's ranks; what the co-scheduling planner
 *     uses, with its capacities (node_mem_capacity, else the agent's M, else relative to
 *     the node's heaviest process) and a floor below which a process is a turtle;
 *   - last: the ranks' last reports with a memory source and the agent's M; what the
 *     listings show when co-scheduling is off.
 */
#include "controller.h"

#include <math.h>

#define TURTLE_FLOOR 100e6 /* B/s per process: below, a turtle whatever the node */

void jobbw_sample(struct rank *rk, uint64_t mem, bool mem_ok, uint64_t net, mono_ns now)
{
	rk->bw[rk->bw_head] =
	    (struct bw_sample){.at = now, .mem = mem_ok ? mem : 0, .net = net, .mem_ok = mem_ok};
	rk->bw_head = (rk->bw_head + 1) % RANK_BW_SAMPLES;
	if (rk->nbw < RANK_BW_SAMPLES)
		rk->nbw++;
}

/* A rank's average over the window (the latest sample alone when none is that recent: an
 * agent that samples less often than w); false when it has no sample. *mem_ok: some
 * sample averaged had a memory source. */
static bool rank_bw(const struct ctld *d, const struct rank *rk, mono_ns now, double *mem,
                    double *net, bool *mem_ok)
{
	double m = 0, n = 0;
	uint32_t c = 0;

	*mem_ok = false;
	if (rk->nbw == 0)
		return false;
	for (uint32_t i = 0; i < rk->nbw; i++) {
		const struct bw_sample *s = &rk->bw[i];
		if (now - s->at > d->cfg.cs.bw_window)
			continue;
		m += (double)s->mem;
		n += (double)s->net;
		*mem_ok |= s->mem_ok;
		c++;
	}
	if (c == 0) {
		const struct bw_sample *s =
		    &rk->bw[(rk->bw_head + RANK_BW_SAMPLES - 1) % RANK_BW_SAMPLES];
		*mem = (double)s->mem;
		*net = (double)s->net;
		*mem_ok = s->mem_ok;
		return true;
	}
	*mem = m / c;
	*net = n / c;
	return true;
}

void jobbw_average(const struct ctld *d, const struct job *jb, mono_ns now, double *mem,
                   double *net)
{
	double m = 0, n = 0, rm, rn;
	uint32_t c = 0;
	bool ok, any_ok = false;

	for (uint32_t r = 0; r < jb->cap_ranks; r++) {
		if (!jb->ranks[r].used || !rank_bw(d, &jb->ranks[r], now, &rm, &rn, &ok))
			continue;
		m += rm;
		n += rn;
		any_ok |= ok;
		c++;
	}
	*mem = c && any_ok ? m / c : NAN;
	*net = c ? n / c : NAN;
}

/* The heaviest per-process memory bandwidth among the jobs on node l. */
static double node_max_bw(const struct ctld *d, int l, mono_ns now)
{
	double mx = 0, m, n;
	bool ok;

	for (int j = 0; j < d->njobs; j++) {
		const struct job *jb = d->jobs[j];
		for (uint32_t r = 0; r < jb->cap_ranks; r++) {
			if (jb->ranks[r].used && jb->ranks[r].node == l &&
			    rank_bw(d, &jb->ranks[r], now, &m, &n, &ok) && ok && m > mx)
				mx = m;
		}
	}
	return mx;
}

/* Mean of the ranks' last memory figures that have a source (NAN: none); *node: the node
 * of the first of them. */
static double last_mem(const struct job *jb, int *node)
{
	double mem = 0;
	uint32_t n = 0;

	*node = -1;
	for (uint32_t r = 0; r < jb->cap_ranks; r++) {
		const struct rank *rk = &jb->ranks[r];

		if (!rk->used || rk->mem_src == PCTL_SRC_NONE)
			continue;
		mem += (double)rk->mem_bps;
		if (n++ == 0)
			*node = rk->node;
	}
	return n ? mem / n : NAN;
}

static uint8_t padm_class_of(enum fit_class c)
{
	switch (c) {
	case FIT_TURTLE:
		return PADM_CLASS_TURTLE;
	case FIT_SEMIDEVIL:
		return PADM_CLASS_SEMIDEVIL;
	case FIT_DEVIL:
		return PADM_CLASS_DEVIL;
	default:
		return PADM_CLASS_UNKNOWN;
	}
}

uint8_t jobbw_class(const struct ctld *d, const struct job *jb, bool averaged, mono_ns now)
{
	struct fit_class_params cp;
	struct fit_node fn = {0};
	double mem, net;
	int l = -1;

	if (averaged) {
		jobbw_average(d, jb, now, &mem, &net);
		for (uint32_t r = 0; r < jb->cap_ranks && l < 0; r++)
			if (jb->ranks[r].used)
				l = jb->ranks[r].node;
	} else {
		mem = last_mem(jb, &l);
	}
	if (isnan(mem) || l < 0)
		return PADM_CLASS_UNKNOWN;
	if (averaged && mem < TURTLE_FLOOR)
		return PADM_CLASS_TURTLE;
	fn.cpus = d->nodes[l]->ncpus;
	fn.mem_cap = (double)d->nodes[l]->mem_cap;
	if (averaged && d->cfg.cs.mem_cap)
		fn.mem_cap = (double)d->cfg.cs.mem_cap;
	if (averaged && !(fn.mem_cap > 0)) /* M unknown: relative to the node's heaviest process */
		fn.mem_cap = node_max_bw(d, l, now) * fn.cpus;
	fit_class_params_default(&cp);
	return padm_class_of(fit_classify_bw(mem, &fn, &cp));
}
