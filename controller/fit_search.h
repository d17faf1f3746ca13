/*
 * Repair search of fit_schedule() (fit_search.c, "When the greedy fill is short"):
 * internal to the controller's decision logic (fit.c), not part of fit.h.
 */
#ifndef VSCHED_FIT_SEARCH_H
#define VSCHED_FIT_SEARCH_H

#include <stddef.h>
#include <stdint.h>

#include "fit.h"

/* fit_search.c */
/* Elementary steps (a placement checked, a slot scanned or set) the repair search may take
 * per call: measured at most 14 ms of CPU (typically 1-3 ms) on this project's test VM. */
#define FIT_SEARCH_WORK ((uint64_t)1 << 21)
/* Bytes of search state for nslots slots; fit_search() may skip up to 7 more at the start
 * of its buffer to align it to 8 bytes. */
size_t fit_search_bytes(uint32_t njobs, uint32_t nnodes, uint32_t nslots);
/*
 * Looks for a complete slot table: table[i * nslots + k] = 1 for exactly fit_need(U_i,
 * nslots) slots k of every job i with a placement, 0 for the jobs placed nowhere; in each
 * slot the jobs fit on every node they span (procs within the node's CPUs, pinned CPUs
 * disjoint). Takes a problem fit_schedule() has checked, its placements grouped by job
 * (job i's are place[job_pl[x]] for x in [job_off[i], job_off[i + 1])) and buf of len
 * bytes for its state, any alignment, overlapping none of the other arguments; the
 * caller keeps ownership of all of them. Returns 0 with the table in table; -ENOSPC if
 * there is none (the search ended: a proof) or FIT_SEARCH_WORK ran out, table then holds
 * garbage; -EINVAL if nslots > FIT_MAX_SLOTS or buf is too small, nothing written.
 * Bound: FIT_SEARCH_WORK elementary steps, so one call costs O(FIT_SEARCH_WORK + nslots *
 * (nnodes + njobs)). Ignores bandwidth (mem_bw, net_bw, caps), pairing and rotate.
 * Deterministic (the same arguments give the same table), allocates nothing, does not
 * block.
 */
int fit_search(const struct fit_problem *pb, const uint32_t *job_off, const uint32_t *job_pl,
               void *buf, size_t len, uint8_t *table);

#endif
