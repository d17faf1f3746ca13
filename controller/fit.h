/*
 * Co-scheduling by memory and network bandwidth fitness (MemBUS, papers/000: Fig. 3,
 * Algorithms 1 and 2; DESIGN.md §5.2), and devil/turtle classification (papers/002).
 * Pure functions over caller-provided arrays: no allocation, no I/O.
 *
 * Time is cut into frames of nslots slots (frame T, slot q: nslots = T/q). Job i needs
 * need_i = ceil(U_i * nslots) slots per frame and has procs_il processes on node l. For
 * every slot, every node proposes co-runners (Algorithm 2: the head of the rotated job
 * list first, then repeatedly the job whose per-process (mem, net) bandwidth is nearest in
 * Euclidean distance to (BW_rem^M / P_rem, BW_rem^N / P_rem)), the proposals are summed
 * over nodes (S_total, Algorithm 1) and jobs are admitted to the slot in decreasing
 * S_total order only if they fit on every node they span: a job holds the same slots on
 * all its nodes (gang).
 */
#ifndef VSCHED_FIT_H
#define VSCHED_FIT_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "timeutil.h"

struct fit_job {
	double mem_bw; /* per-process memory bandwidth (any unit, same as the node caps) */
	double net_bw; /* per-process network bandwidth */
	double util;   /* U_i in (0, 1]: share of the frame the job must get */
};

struct fit_node {
	uint32_t cpus;
	double mem_cap; /* M */
	double net_cap; /* N */
};

/* procs processes of job `job` on node `node`. */
struct fit_place {
	uint32_t job, node, procs;
};

/* How Algorithm 2 picks co-runners after the head of the list (fit_problem.pairing). */
enum fit_pairing {
	FIT_PAIR_FITNESS = 0, /* nearest to (BW_rem^M / P_rem, BW_rem^N / P_rem): MemBUS */
	FIT_PAIR_OBLIVIOUS,   /* next in the rotated list, bandwidth ignored (baseline) */
	FIT_PAIR_WORST,       /* farthest from the ideal point (adversarial baseline) */
};

struct fit_problem {
	uint32_t njobs, nnodes, nslots;
	const struct fit_job *jobs;    /* njobs */
	const struct fit_node *nodes;  /* nnodes */
	const struct fit_place *place; /* nplace, sorted by node */
	uint32_t nplace;
	const uint32_t *node_off; /* nnodes + 1: node l's entries are place[node_off[l]..[l+1]) */
	uint32_t rotate;          /* initial rotation of the job list (e.g. the frame number) */
	uint8_t pairing;          /* enum fit_pairing; 0 (the default) = FIT_PAIR_FITNESS */
	/* Optional (NULL: none), nplace entries: the CPUs placement k's processes are pinned to
	 * (bit c = CPU c, c < 64; 0 = not known). Two placements of a node that share a CPU
	 * never share a slot: the node scheduler pins a process to one CPU and runs one process
	 * at a time there, so such a plan could not be applied without moving processes. */
	const uint64_t *place_cpus;
};

struct fit_window {
	uint32_t phase; /* first slot */
	uint32_t len;   /* slots; may run past the frame end (wraps into the next frame) */
};

struct fit_resv {
	mono_ns period, slice, deadline, phase;
};

enum fit_class {
	FIT_UNKNOWN = 0,
	FIT_TURTLE,
	FIT_SEMIDEVIL,
	FIT_DEVIL,
};

struct fit_class_params {
	double devil_frac;     /* devil: per-process memory bw >= devil_frac * M / cpus (0.5) */
	double semidevil_frac; /* semi-devil: >= semidevil_frac * M / cpus (0.25) */
	double devil_missrate; /* devil: LLC misses per 10,000 instructions > this (30) */
};

/* fit.c */
#define FIT_MAX_SLOTS 1024 /* nslots the repair search of fit_schedule() takes at most */
/* Slots per frame job i needs: ceil(U * nslots) (at least 1 for U > 0). */
static inline uint32_t fit_need(double util, uint32_t nslots)
{
	if (!(util > 0))
		return 0;
	double n = ceil(util * nslots - 1e-9);
	if (n < 1)
		n = 1;
	if (n > nslots)
		n = nslots;
	return (uint32_t)n;
}
/* Distance of Fig. 3 between a job's per-process (mem, net) and the ideal point. */
double fit_distance(const struct fit_job *j, double mem_rem, double net_rem, uint32_t p_rem);
/* Scratch bytes fit_schedule() needs for any nslots <= FIT_MAX_SLOTS (greedy fill and
 * repair search; O(nslots * nnodes) of it is the search's). */
size_t fit_scratch_bytes(uint32_t njobs, uint32_t nnodes, uint32_t nplace);
/*
 * One frame's slot table: table[i * nslots + k] = 1 if job i runs in slot k (on every node
 * it spans), got[i] (optional) = slots given to job i. A job never gets more than need_i.
 * The fill is greedy, slot by slot (Algorithms 1 and 2); if it leaves a job short, a
 * bounded repair search looks for a complete table (fit_search.c, "When the greedy fill is
 * short"): it finds one whenever one exists and the search ends within its bound (always,
 * for the small problems of the tests), and ignores bandwidth. Deterministic, no
 * allocation, does not block. Returns 0 (every job exactly need_i); -ENOSPC if none was
 * found (table = the greedy fill, best effort); -EINVAL on a malformed problem (procs >
 * cpus, a job placed twice on one node, unsorted placements, indices out of range, scratch
 * too small for the greedy fill). A scratch that holds the greedy state but not the
 * search's for this nslots (callers sized before the search) gets the greedy fill only.
 */
int fit_schedule(const struct fit_problem *pb, void *scratch, size_t scratch_len, uint8_t *table,
                 uint32_t *got);
/* Merges the slots of one row (nslots) into windows, consecutive slots together, wrapping
 * from the last slot to the first. Returns the number of windows or -ENOSPC if > max. */
int fit_windows(const uint8_t *row, uint32_t nslots, struct fit_window *out, uint32_t max);
/* A window as a reservation: period = frame, phase = phase * slot, slice = deadline =
 * len * slot. */
void fit_window_resv(const struct fit_window *w, mono_ns slot_ns, uint32_t nslots,
                     struct fit_resv *out);

/* fit_class.c */
void fit_class_params_default(struct fit_class_params *p);
/* From the per-process memory bandwidth and the node's capacity M and CPUs. NAN or
 * negative bandwidth (unavailable) -> FIT_UNKNOWN. */
enum fit_class fit_classify_bw(double mem_bw, const struct fit_node *node,
                               const struct fit_class_params *p);
/* From hardware counters (papers/002: > 30 LLC misses per 10k instructions = devil). */
enum fit_class fit_classify_missrate(uint64_t llc_misses, uint64_t instructions,
                                     const struct fit_class_params *p);
const char *fit_class_name(enum fit_class c);
/* Names of enum fit_pairing, in its order, NULL-terminated (config key `pairing`). */
extern const char *const fit_pairing_names[];
const char *fit_pairing_name(uint8_t pairing); /* "?" when out of range */

#endif
