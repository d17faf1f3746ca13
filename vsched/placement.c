/*
 * Placement of reservations on CPUs for partitioned EDF (DESIGN.md §2).
 *
 *  - worst-fit: the CPU with the lowest load that still fits (ties: lowest index). Spreads
 *    load, leaving the most slack on every CPU.
 *  - first-fit: the lowest-numbered CPU that fits. Packs load, leaving whole CPUs free.
 *  - batches are placed largest density first (worst-fit decreasing / first-fit decreasing),
 *    the classic bin-packing heuristics; ties keep request order.
 * Fitting is admission_fits(load, need, cap), so placement never admits what admission
 * would refuse. Pure functions: no allocation, no I/O.
 */
#include "vsched.h"

#include <string.h>

int placement_pick(const double *load, int n, double need, double cap, int rule)
{
	int best = -1;

	if (rule != PLACE_WORST_FIT && rule != PLACE_FIRST_FIT)
		return -1;
	for (int i = 0; i < n; i++) {
		if (!admission_fits(load[i], need, cap))
			continue;
		if (rule == PLACE_FIRST_FIT)
			return i;
		if (best < 0 || load[i] < load[best])
			best = i;
	}
	return best;
}

/* The unplaced request (assign[i] < 0) with the largest need, ties lowest index; -1 if none. */
static int next_largest(const double *need, int m, const int *assign)
{
	int best = -1;

	for (int i = 0; i < m; i++)
		if (assign[i] < 0 && (best < 0 || need[i] > need[best]))
			best = i;
	return best;
}

/* O(m^2 + m*n); m is the number of ranks of one job on a node, small. */
int placement_batch(const double *need, int m, double *load, int n, double cap, int rule,
                    int *assign)
{
	double trial[VS_MAX_CPUS];

	if (m < 0 || n <= 0 || n > VS_MAX_CPUS)
		return -1;
	memcpy(trial, load, (size_t)n * sizeof(*trial));
	for (int i = 0; i < m; i++)
		assign[i] = -1;
	for (int k = 0; k < m; k++) {
		int i = next_largest(need, m, assign);
		int cpu = placement_pick(trial, n, need[i], cap, rule);

		if (cpu < 0) {
			for (int x = 0; x < m; x++)
				assign[x] = -1;
			return -1; /* load[] untouched */
		}
		assign[i] = cpu;
		trial[cpu] += need[i];
	}
	memcpy(load, trial, (size_t)n * sizeof(*load));
	return 0;
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
