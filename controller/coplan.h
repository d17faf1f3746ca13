/*
 * Co-scheduling plans (DESIGN.md §5.2, docs/coschedule.md): from the slot table of
 * fit_schedule() (fit.h: Algorithm 2 per node, the Algorithm 1 reduction across nodes)
 * to the windows every job is given on every node it spans, checked for what vsched can
 * run. Pure functions: no I/O, no daemon state; coplan_make() allocates its own scratch.
 *
 * A frame of T = nslots * q is planned as k equal sub-frames of nslots / k slots ("windows
 * per frame" is the granularity knob, see coplan_make); every sub-frame holds the same
 * pattern, so a job's windows are reservations with period T / k, phase = first slot * q,
 * slice = deadline = slots * q. A run of slots that wraps past the end of the sub-frame is
 * split into two windows (vsched's windows lie inside the period: vsp_check_windows). A job
 * with more than COPLAN_MAX_WINDOWS windows gets its closest windows merged: the merged
 * window spans the gap (deadline = span) but keeps slice = the slots it holds, so the
 * job's share is unchanged while its placement inside the span is left to vsched's EDF.
 *
 * vsched admits per CPU at most its effective cap (utilisation Σ slice / period <= cap,
 * typically 0.9), so only the first usable = floor(cap · n) slots of every sub-frame of n
 * slots hold jobs and the others stay empty on every node: no CPU is planned more than its
 * cap whatever the colouring, and the last slot of the frame is free in every plan (for
 * any k) whenever cap · n < n, which the staged push relies on (cospush.c, "park"). One cap
 * for all the planned nodes (the controller passes the smallest): per-node counts would
 * make the gang rule (a job in the same slots on all its nodes) depend on which nodes a job
 * spans, and vsched's caps are the same on a uniformly configured cluster.
 *
 * vsched pins every process to one CPU and admits windows per CPU with an exact demand
 * test, so the processes of one node that run in the same slot must sit on different CPUs:
 * a colouring of the node's conflict graph (processes conflict when their jobs share a
 * slot; two processes of one job always do) with at most `cpus` colours. coplan_colour()
 * tries a greedy colouring (largest degree first); coplan_make() prefers plans that
 * colour on every node and reports the ones that do not.
 */
#ifndef VSCHED_COPLAN_H
#define VSCHED_COPLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "fit.h"
#include "proto_vsched.h"

#define COPLAN_MAX_WINDOWS VSP_MAX_WINDOWS /* per job, what one CONSTRAINT carries */
#define COPLAN_MAX_SLOTS   1024            /* slots per frame (config `frame` / `slot`) */
#define COPLAN_CAP_FULL    1000000u        /* cap_ppm of the whole CPU */

struct coplan_job {
	uint32_t need, got; /* slots per sub-frame: wanted (ceil(U * slots)), given */
	uint32_t nwin;      /* 0: the job is in no slot (placed nowhere) */
	struct vsp_resv win[COPLAN_MAX_WINDOWS];
	bool merged; /* windows were merged to fit COPLAN_MAX_WINDOWS (slice < deadline) */
};

struct coplan_result {
	uint32_t k; /* sub-frames per frame used (windows per frame = k * windows per sub-frame) */
	uint32_t slots;    /* slots per sub-frame = nslots / k */
	uint32_t usable;   /* of them, the first that may hold jobs: floor(cap · slots) */
	uint32_t rotate;   /* rotation of the job list that was kept */
	bool complete;     /* every job got its need */
	bool colourable;   /* every node coloured with its CPUs */
	uint32_t bad_node; /* first node that did not colour (when !colourable) */
};

/*
 * Windows of one table row of nslots slots (slot length slot_ns): consecutive slots merged,
 * a run crossing the end split in two, sorted by phase, at most max (closest merged when
 * more: *merged set). Returns the number of windows (0 for an empty row) or -EINVAL.
 */
int coplan_row_windows(const uint8_t *row, uint32_t nslots, mono_ns slot_ns, struct vsp_resv *out,
                       uint32_t max, bool *merged);

/*
 * Greedy colouring of node `node` of pb for the slot table (pb->nslots columns, one row per
 * job). Placements with known CPUs (pb->place_cpus) keep them: the node's pinned CPUs, in
 * increasing order, are colours 0, 1, ...; only the others are coloured. cpu (optional) receives
 * one CPU per process, in the node's placement order (placement k's processes at offsets sum of
 * procs of the node's earlier placements). Returns 0 when it coloured with at most the node's cpus,
 * -ENOSPC when not, -EINVAL, -ENOMEM.
 */
int coplan_colour(const struct fit_problem *pb, const uint8_t *table, uint32_t node, uint32_t *cpu);

/*
 * The plan of one frame of nslots slots of slot_ns (pb->nslots and pb->rotate are ignored:
 * set here). Tries k = want_k, then smaller k dividing nslots, skipping a k > 1 whose
 * sub-frames would round some job's share up by more than max_excess (a fraction of the
 * CPU, e.g. the jobs' epsilon) and by more than the whole frame rounds it; for each a few
 * rotations of the job list; keeps the first plan where every job gets its share and every
 * node colours; if there is none, the best one found (complete first, then colourable, then
 * the largest k), with the flags saying what is wrong. cap_ppm (1..COPLAN_CAP_FULL) is the
 * per-CPU cap of the nodes: in every sub-frame of n slots only the first floor(cap_ppm · n /
 * 10^6) hold jobs, so no CPU gets more (a job whose need is above that is short: not
 * complete); a k whose sub-frames leave no usable slot is skipped, and with none left every
 * job gets 0 slots (not complete). table receives njobs * (nslots / k) bytes (row i = job
 * i, one sub-frame): allocate njobs * nslots. jobs[i] gets the windows. Returns 0, -EINVAL
 * (malformed problem, cap_ppm out of range), -ENOMEM.
 */
int coplan_make(const struct fit_problem *pb, uint32_t nslots, mono_ns slot_ns, uint32_t want_k,
                double max_excess, uint32_t cap_ppm, uint8_t *table, struct coplan_job *jobs,
                struct coplan_result *res);

#endif
