/*
 * --ratio C:M --iter-time T: splits an iteration of T into C/(C+M) of computation and
 * M/(C+M) of communication, like Patterns' comp/comm ratio (papers/004 Sect. 5.2: 1:2, 1:1,
 * 3:1). Computation is CPU time, so it is set directly. Communication is a message size, so
 * it is measured: the cost of an all-to-all round is modelled as t(s) = t0 + s·b (t0 the
 * barrier latency, b the time per payload byte to every peer), fitted from rounds with empty
 * and 4 MiB messages, then corrected twice from 3 real iterations (compute + exchange) at
 * the chosen size, so that the exchange is timed in the conditions of the run. Every rank takes
 * part in the calibration rounds; rank 0's measurement decides and travels in the round
 * headers' aux field, so that all ranks use the same size.
 */
#include "bsp.h"

#include <stdio.h>
#include <stdlib.h>

#define CAL_REPS  5
#define CAL_PROBE (4u << 20)
#define CAL_FIX   2 /* corrections from real iterations */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Median wall time of the exchange in reps rounds with msg bytes; with sp, each round is a
 * real iteration (compute_ns of computation first) and only its exchange is timed.
 * Returns 0 or -1.
 */
static int median_round(struct bsp_net *n, uint64_t msg, int reps, struct spin *sp,
                        uint64_t compute_ns, uint64_t *med)
{
	uint64_t t[CAL_REPS];
	uint32_t f;

	for (int i = 0; i < reps; i++) {
		mono_ns t0;

		if (sp != NULL && !spin_run(sp, compute_ns)) {
			fprintf(stderr, "bsp: rank %u: interrupted during calibration\n", n->rank);
			return -1;
		}
		t0 = mono_now();
		if (net_exchange(n, msg, 0, 0, &f, NULL) != 0)
			return -1;
		t[i] = mono_now() - t0;
	}
	qsort(t, (size_t)reps, sizeof(t[0]), cmp_u64);
	*med = t[reps / 2];
	return 0;
}

/* All ranks adopt rank 0's *msg. Returns 0 or -1. */
static int agree(struct bsp_net *n, uint64_t *msg)
{
	uint32_t f;
	uint64_t chosen = *msg;

	if (net_exchange(n, 0, 0, *msg, &f, &chosen) != 0)
		return -1;
	*msg = chosen;
	return 0;
}

static uint64_t size_for(double target_ns, double t0, double per_byte)
{
	double s = (target_ns - t0) / per_byte;

	if (s <= 0)
		return 0;
	return s >= (double)BSP_MSG_MAX ? BSP_MSG_MAX : (uint64_t)s;
}

int ratio_calibrate(struct bsp_net *n, struct bsp_cfg *c, struct spin *sp)
{
	double tm = (double)c->iter_ns * c->ratio_m / ((double)c->ratio_c + c->ratio_m);
	uint64_t t0, t1, t;
	double per_byte;
	uint64_t msg;

	c->msg = 0;
	if (c->nranks == 1 || c->ratio_m == 0) {
		if (c->rank == 0 && c->ratio_m > 0)
			fprintf(stderr, "bsp: --ratio: a single rank does not communicate; "
			                "iterations are compute only\n");
		return 0;
	}
	if (median_round(n, 0, CAL_REPS, NULL, 0, &t0) != 0 ||
	    median_round(n, CAL_PROBE, CAL_REPS, NULL, 0, &t1) != 0)
		return -1;
	per_byte = t1 > t0 ? (double)(t1 - t0) / CAL_PROBE : 1e-3;
	msg = size_for(tm, (double)t0, per_byte);
	if (agree(n, &msg) != 0)
		return -1;
	/*
	 * Two corrections from real iterations at the chosen size: the cost is not quite
	 * linear, and an exchange costs more when the ranks compute around it (shared CPUs,
	 * caches, skew between ranks) than in back-to-back rounds.
	 */
	for (int k = 0; k < CAL_FIX && msg > 0; k++) {
		if (median_round(n, msg, 3, sp, c->compute_ns, &t) != 0)
			return -1;
		if (t > t0) {
			per_byte = (double)(t - t0) / (double)msg;
			msg = size_for(tm, (double)t0, per_byte);
		}
		if (agree(n, &msg) != 0)
			return -1;
	}
	c->msg = msg;
	if (c->rank == 0) {
		fprintf(stderr,
		        "bsp: --ratio %u:%u of %.1f ms: compute %.2f ms, msg %llu bytes per peer "
		        "(round latency %.0f us, %.0f MB/s per peer)\n",
		        c->ratio_c, c->ratio_m, (double)c->iter_ns / 1e6,
		        (double)c->compute_ns / 1e6, (unsigned long long)msg, (double)t0 / 1e3,
		        1e3 / per_byte);
		if (msg == 0 && tm > 0)
			fprintf(stderr,
			        "bsp: warning: communication part %.0f us is below the round "
			        "latency: empty messages\n",
			        tm / 1e3);
		if (msg == BSP_MSG_MAX)
			fprintf(stderr, "bsp: warning: message size capped at %llu bytes\n",
			        (unsigned long long)BSP_MSG_MAX);
	}
	return 0;
}
