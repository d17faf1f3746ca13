/*
 * admission_bench: how long vsched's admission decision takes for one CPU (issue 14).
 *
 * For each set of windows below, times admission_test() (vsched/admission.c: processor
 * demand, exact for short hyperperiods, sound otherwise) on the whole set, the way
 * placement_admits() calls it for a request on a CPU, and prints the median and p99 in µs
 * beside the reference measured in the same run: the density sum Σ S/min(D, T) that vsched
 * used alone before (it refuses every full window, so it is a cost reference only). vsched
 * runs the test once per managed CPU for a request without --cpu; sets whose density fits
 * the cap take the density path only.
 *
 * Sets (100 ms frames as the co-scheduling controller sends them, 45 % shares, 5 ms slots):
 *   frame 8x8      8 tasks x 8 windows of one 100 ms frame (64 jobs)
 *   mixed 8x8      8 tasks x 8 windows: 4 on the 100 ms frame, 2 on 50 ms and 2 on 25 ms
 *                  sub-frames (harmonic: H = 100 ms, 128 jobs)
 *   mixed+prov     the same and a new rank's 20 ms / 200 ms reservation (H = 200 ms, 257)
 *   worst exact    64 frame windows and 1 ms / 2.5 ms single tasks: 504 jobs, just under
 *                  the exact test's limit of 512 (its worst case)
 *   sound          the frame 8x8 set and a 33.333333 ms task: no short hyperperiod
 *   sound 64 odd   64 single reservations of 64 different periods (no two cluster): 8 of
 *                  ~1 s (10 ms due at T/2) and 56 of ~1 ms (12.5 us, D = T), U 0.78: 64
 *                  clusters, QPA from ~180 ms down among ~10,000 steps
 * Usage: admission_bench [REPS]   (default 2000 timed calls per set, after 50 warm-up calls)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vsched.h"

#define MS   1000000ULL
#define MAXW 128
#define REPS 2000
#define WARM 50

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* 8 sorted disjoint windows of task `owner` in period T: 8 of T/16-long slots, slice share. */
static int task8(struct adm_win *w, int n, uint64_t T, int owner, double share)
{
	bool used[16] = {false};
	uint64_t q = T / 16;

	for (int k = 0; k < 8;) {
		int s = (int)rnd(16);
		if (!used[s]) {
			used[s] = true;
			k++;
		}
	}
	for (int s = 0, i = 0; s < 16; s++)
		if (used[s]) {
			uint64_t slice = (uint64_t)((double)q * share);
			w[n++] =
			    (struct adm_win){T, slice ? slice : 1, q, (uint64_t)s * q, owner, i++};
		}
	return n;
}

/* The frame 8x8 set: 64 slots of one 100 ms frame dealt to 8 tasks, 90 % of each slot. */
static int frame8x8(struct adm_win *w)
{
	int slot[64], n = 0;
	uint64_t q = 100 * MS / 64;

	for (int i = 0; i < 64; i++)
		slot[i] = i;
	for (int i = 63; i > 0; i--) {
		int j = (int)rnd((uint32_t)i + 1), t = slot[i];
		slot[i] = slot[j];
		slot[j] = t;
	}
	for (int t = 0; t < 8; t++) {
		int mine[8];
		for (int k = 0; k < 8; k++)
			mine[k] = slot[t * 8 + k];
		for (int a = 1; a < 8; a++) /* sorted by phase */
			for (int b = a; b > 0 && mine[b - 1] > mine[b]; b--) {
				int x = mine[b];
				mine[b] = mine[b - 1];
				mine[b - 1] = x;
			}
		for (int k = 0; k < 8; k++)
			w[n++] =
			    (struct adm_win){100 * MS, q * 9 / 10, q, (uint64_t)mine[k] * q, t, k};
	}
	return n;
}

static int mixed8x8(struct adm_win *w)
{
	static const uint64_t T[8] = {100 * MS, 100 * MS, 100 * MS, 100 * MS,
	                              50 * MS,  50 * MS,  25 * MS,  25 * MS};
	int n = 0;

	for (int t = 0; t < 8; t++)
		n = task8(w, n, T[t], t, 0.15);
	return n;
}

static int mixed_prov(struct adm_win *w)
{
	int n = mixed8x8(w);

	w[n++] = (struct adm_win){200 * MS, 20 * MS, 200 * MS, 0, 8, 0};
	return n;
}

static int worst_exact(struct adm_win *w)
{
	int n = frame8x8(w);

	for (int i = 0; i < 64; i++)
		w[i].slice = w[i].deadline / 4;
	for (int t = 0; t < 4; t++)
		w[n++] = (struct adm_win){1 * MS, 50000, 1 * MS, (uint64_t)t * 100000, 8 + t, 0};
	w[n++] = (struct adm_win){2500000, 100000, 2500000, 0, 12, 0};
	return n;
}

static int sound(struct adm_win *w)
{
	int n = frame8x8(w);

	for (int i = 0; i < 64; i++)
		w[i].slice = w[i].deadline / 2;
	w[n++] = (struct adm_win){33333333, 1 * MS, 33333333, 0, 8, 0};
	return n;
}

static int sound_odd(struct adm_win *w)
{
	int n = 0;

	for (int k = 0; k < 8; k++) {
		uint64_t T = 1000 * MS + (uint64_t)k * 37000;
		w[n++] = (struct adm_win){T, 10 * MS, T / 2, (uint64_t)k * MS, k, 0};
	}
	for (int k = 0; k < 56; k++) {
		uint64_t T = 1 * MS + (uint64_t)k * 1000;
		w[n++] = (struct adm_win){T, 12500, T, (uint64_t)k * 1000, 8 + k, 0};
	}
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static volatile double sink;

/* Times fn over reps calls: median and p99 in µs. */
static void measure(const struct adm_win *w, int n, int reps, bool density, double *p50,
                    double *p99, int *rc, struct adm_result *r)
{
	const struct adm_supply sp = {0.9, 50.0 * MS}; /* this machine: cap 90 %, 1 s, 95 % */
	uint64_t *t = malloc((size_t)reps * sizeof(*t));

	if (t == NULL)
		abort();
	for (int i = -WARM; i < reps; i++) {
		uint64_t t0 = now_ns();
		if (density) {
			double d = 0;
			for (int k = 0; k < n; k++)
				d += (double)w[k].slice / (double)w[k].deadline;
			sink = d;
		} else {
			*rc = admission_test(w, n, &sp, NULL, -1, r);
		}
		if (i >= 0)
			t[i] = now_ns() - t0;
	}
	qsort(t, (size_t)reps, sizeof(*t), cmp_u64);
	*p50 = (double)t[reps / 2] / 1000.0;
	*p99 = (double)t[reps * 99 / 100] / 1000.0;
	free(t);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*make)(struct adm_win *);
	} sets[] = {{"frame 8x8", frame8x8},    {"mixed 8x8", mixed8x8},
	            {"mixed+prov", mixed_prov}, {"worst exact", worst_exact},
	            {"sound", sound},           {"sound 64 odd", sound_odd}};
	static const char *verdict[] = {"fits", "demand", "util", "undecided", "invalid"};
	int reps = argc > 1 ? atoi(argv[1]) : REPS;

	if (reps < 100) {
		fprintf(stderr, "usage: admission_bench [REPS >= 100]\n");
		return 2;
	}
	printf("%-12s %5s %5s %-6s %9s %-9s %9s %9s | %9s %9s\n", "set", "win", "jobs", "test",
	       "checked", "verdict", "p50 us", "p99 us", "dens p50", "dens p99");
	for (size_t s = 0; s < sizeof(sets) / sizeof(sets[0]); s++) {
		struct adm_win w[MAXW];
		struct adm_result r, dummy;
		double a50, a99, d50, d99;
		int n = sets[s].make(w), rc = 0, drc = 0;
		uint64_t jobs = 0;
		char js[24] = "-";

		measure(w, n, reps, false, &a50, &a99, &rc, &r);
		measure(w, n, reps, true, &d50, &d99, &drc, &dummy);
		for (int i = 0; i < n && r.exact; i++)
			jobs += r.hyperperiod / w[i].period;
		if (r.exact)
			snprintf(js, sizeof(js), "%llu", (unsigned long long)jobs);
		printf("%-12s %5d %5s %-6s %9llu %-9s %9.1f %9.1f | %9.2f %9.2f\n", sets[s].name, n,
		       js, r.exact ? "exact" : "sound", (unsigned long long)r.checked, verdict[-rc],
		       a50, a99, d50, d99);
	}
	return 0;
}
