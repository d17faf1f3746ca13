/*
 * Devil/turtle classification (Blagodurov, Fedorova, papers/002 Sect. 3): a process with a
 * high rate of memory requests ("devil") hurts and is hurt by co-runners in the memory
 * hierarchy; one with a low rate ("turtle") is neither. Paper 002 uses the LLC miss rate:
 * more than 30 misses per 10,000 retired instructions is a devil. Our nodes often have no
 * PMU (DESIGN.md §9), so the usual input is the per-process memory bandwidth the agent
 * measures; it is compared with the process's fair share of the node's bus, M / cpus:
 *   devil      bw >= devil_frac     * M / cpus   (default 0.5)
 *   semi-devil bw >= semidevil_frac * M / cpus   (default 0.25)
 *   turtle     otherwise; unknown if the bandwidth is unavailable (NAN or negative).
 * The thresholds are configuration, not a law of nature; the dashboard shows the class.
 */
#include <math.h>

#include "fit.h"

void fit_class_params_default(struct fit_class_params *p)
{
	p->devil_frac = 0.5;
	p->semidevil_frac = 0.25;
	p->devil_missrate = 30.0;
}

enum fit_class fit_classify_bw(double mem_bw, const struct fit_node *node,
                               const struct fit_class_params *p)
{
	if (!node || !p || isnan(mem_bw) || mem_bw < 0 || node->cpus == 0 || !(node->mem_cap > 0))
		return FIT_UNKNOWN;
	double share = node->mem_cap / node->cpus;
	if (mem_bw >= p->devil_frac * share)
		return FIT_DEVIL;
	if (mem_bw >= p->semidevil_frac * share)
		return FIT_SEMIDEVIL;
	return FIT_TURTLE;
}

enum fit_class fit_classify_missrate(uint64_t llc_misses, uint64_t instructions,
                                     const struct fit_class_params *p)
{
	if (!p || instructions == 0)
		return FIT_UNKNOWN;
	double per10k = (double)llc_misses * 10000.0 / (double)instructions;
	return per10k > p->devil_missrate ? FIT_DEVIL : FIT_TURTLE;
}

const char *fit_class_name(enum fit_class c)
{
	switch (c) {
	case FIT_TURTLE:
		return "turtle";
	case FIT_SEMIDEVIL:
		return "semi-devil";
	case FIT_DEVIL:
		return "devil";
	case FIT_UNKNOWN:
		break;
	}
	return "unknown";
}
