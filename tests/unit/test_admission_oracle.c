/*
 * vsched/admission.c against brute force on random window sets (issue 14). Sets of 1..5
 * tasks, each either 1..4 disjoint windows of one frame (slices often = the window) or one
 * reservation with any deadline and phase, periods from harmonic and non-harmonic families
 * with hyperperiods up to 60 time units.
 *  - Exact part, the whole CPU (cap 1, no burst): admission_test accepts iff a unit-step EDF
 *    simulation of the periodic jobs released from time 0 (each window from its phase)
 *    misses no deadline up to max phase + 2H + max deadline, and U <= 1 (Leung & Merrill:
 *    that window decides it).
 *  - Exact part, cap < 1 with a burst: accepts iff every interval [release, deadline] of
 *    the pattern up to a horizon past supply()'s knee + 2H needs at most supply(length)
 *    (summed job by job), and U <= cap.
 *  - Sound part, forced (max_jobs 0) with clusters of up to 64 jobs (here: one cluster, so
 *    QPA over an exact demand bound), of up to 4 jobs (several clusters whose relative
 *    phases are ignored) and of one window each (the classic sporadic-task QPA): never
 *    accepts a set either oracle refuses, and accepts a fair share of those the exact test
 *    accepts (it is not "refuse everything").
 * Fixed seeds: deterministic.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vsched.h"

#define MAXW 20

static uint64_t rng;

static uint32_t rnd(uint32_t n) /* uniform in [0, n) */
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static const uint64_t families[][5] = {
    {6, 12, 24, 48, 48}, /* harmonic */
    {5, 10, 20, 40, 20}, /* harmonic */
    {6, 8, 12, 16, 24},  /* lcm 48 */
    {4, 6, 10, 15, 12},  /* lcm 60 */
};

/* Windows [c0, c1), [c2, c3), ... of one frame: 2m distinct sorted cut points in [0, T]. */
static int add_window_task(struct adm_win *w, int n, uint64_t T, int owner)
{
	uint64_t cut[8];
	int m = 1 + (int)rnd(4), k = 0;

	if ((uint64_t)(2 * m) > T + 1)
		m = (int)(T + 1) / 2;
	while (k < 2 * m) {
		uint64_t c = rnd((uint32_t)T + 1);
		int i = k;
		bool dup = false;
		for (int j = 0; j < k; j++)
			dup |= cut[j] == c;
		if (dup)
			continue;
		while (i > 0 && cut[i - 1] > c) {
			cut[i] = cut[i - 1];
			i--;
		}
		cut[i] = c;
		k++;
	}
	for (int i = 0; i < m && n < MAXW; i++) {
		uint64_t len = cut[2 * i + 1] - cut[2 * i];
		uint64_t s = rnd(2) ? len : 1 + rnd((uint32_t)len);
		w[n++] = (struct adm_win){T, s, len, cut[2 * i], owner, i};
	}
	return n;
}

static int random_set(struct adm_win *w)
{
	const uint64_t *fam = families[rnd(4)];
	int tasks = 1 + (int)rnd(5), n = 0;

	for (int t = 0; t < tasks && n < MAXW; t++) {
		uint64_t T = fam[rnd(5)];
		if (rnd(2)) {
			n = add_window_task(w, n, T, t);
		} else {
			uint64_t d = 1 + rnd((uint32_t)T);
			w[n++] =
			    (struct adm_win){T, 1 + rnd((uint32_t)d), d, rnd((uint32_t)T), t, 0};
		}
	}
	return n;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	return b ? gcd(b, a % b) : a;
}

static void pattern(const struct adm_win *w, int n, uint64_t *H, uint64_t *W, uint64_t *pmax,
                    uint64_t *dmax)
{
	*H = 1;
	*W = *pmax = *dmax = 0;
	for (int i = 0; i < n; i++)
		*H = *H / gcd(*H, w[i].period) * w[i].period;
	for (int i = 0; i < n; i++) {
		*W += w[i].slice * (*H / w[i].period);
		*pmax = w[i].phase > *pmax ? w[i].phase : *pmax;
		*dmax = w[i].deadline > *dmax ? w[i].deadline : *dmax;
	}
}

/* Unit-step preemptive EDF from time 0; false at the first deadline missed. */
static bool edf_sim_meets(const struct adm_win *w, int n)
{
	uint64_t H, W, pmax, dmax, end, rel[MAXW], dl[MAXW], rem[MAXW];

	pattern(w, n, &H, &W, &pmax, &dmax);
	if (W > H)
		return false;
	end = pmax + 2 * H + dmax;
	memset(rem, 0, sizeof(rem));
	memset(dl, 0, sizeof(dl)); /* read only once set (rem > 0), but gcc -O3 cannot see it */
	for (int i = 0; i < n; i++)
		rel[i] = w[i].phase;
	for (uint64_t t = 0; t <= end; t++) {
		int run = -1;
		for (int i = 0; i < n; i++) {
			if (rem[i] > 0 && dl[i] == t)
				return false;
			if (t == rel[i]) { /* D <= T: the previous job's deadline has passed */
				dl[i] = t + w[i].deadline;
				rem[i] = w[i].slice;
				rel[i] += w[i].period;
			}
		}
		for (int i = 0; i < n; i++)
			if (rem[i] > 0 && (run < 0 || dl[i] < dl[run]))
				run = i;
		if (run >= 0)
			rem[run]--;
	}
	return true;
}

struct tjob {
	uint64_t r, d, s;
};

static int by_d(const void *a, const void *b)
{
	const struct tjob *x = a, *y = b;
	return x->d < y->d ? -1 : x->d > y->d;
}

/* Every interval of the pattern up to knee + 2H + dmax fits supply(); U <= cap. */
static bool intervals_fit(const struct adm_win *w, int n, const struct adm_supply *sp)
{
	uint64_t H, W, pmax, dmax, horizon, until;
	double knee = sp->burst / (1 - sp->cap);
	struct tjob *j;
	size_t nj = 0;
	bool ok = true;

	pattern(w, n, &H, &W, &pmax, &dmax);
	if ((double)W > sp->cap * (double)H * (1 + 1e-9))
		return false;
	horizon = (uint64_t)ceil(knee) + 2 * H + dmax;
	until = H + horizon;
	j = calloc(until * MAXW, sizeof(*j));
	assert_non_null(j);
	for (int i = 0; i < n; i++)
		for (uint64_t r = w[i].phase; r < until; r += w[i].period)
			j[nj++] = (struct tjob){r, r + w[i].deadline, w[i].slice};
	qsort(j, nj, sizeof(*j), by_d);
	for (size_t a = 0; a < nj && ok; a++) {
		uint64_t t1 = j[a].r, need = 0;
		if (t1 >= H)
			continue;
		for (size_t b = 0; b < nj && ok; b++) {
			uint64_t len = j[b].d - t1;
			double give;
			if (j[b].r < t1 || j[b].d > t1 + horizon)
				continue;
			need += j[b].s;
			give = fmin((double)len, sp->cap * (double)len + sp->burst);
			ok = (double)need <= give * (1 + 1e-12);
		}
	}
	free(j);
	return ok;
}

#define NSOUND 3
static const uint64_t cluster_jobs[NSOUND] = {64, 4, 1};

struct tally {
	int fits, refused, refused_under_cap, sound_fits[NSOUND];
};

/* One random set against the oracle: the exact test iff, the sound test never over it. */
static void check_set(const struct adm_win *w, int n, const struct adm_supply *sp, bool oracle,
                      struct tally *t)
{
	struct adm_result r;
	int rc = admission_test(w, n, sp, NULL, -1, &r);

	assert_true(r.exact);
	if ((rc == ADM_FITS) != oracle) {
		for (int i = 0; i < n; i++)
			print_message("  T %lu S %lu D %lu phase %lu owner %d\n", w[i].period,
			              w[i].slice, w[i].deadline, w[i].phase, w[i].owner);
		fail_msg("exact test says %d, the oracle %s", rc, oracle ? "fits" : "misses");
	}
	t->fits += oracle;
	t->refused += !oracle;
	t->refused_under_cap += !oracle && !r.util_over; /* refused for an interval's demand */
	for (int k = 0; k < NSOUND; k++) {
		struct adm_limits lim = adm_default_limits;
		lim.max_jobs = 0;
		lim.max_cluster_jobs = cluster_jobs[k];
		rc = admission_test(w, n, sp, &lim, -1, &r);
		assert_false(r.exact);
		assert_true(rc != ADM_FITS || oracle); /* never accepts a set that misses */
		t->sound_fits[k] += rc == ADM_FITS;
	}
}

static void report(const char *what, const struct tally *t)
{
	print_message("%s: %d sets fit, %d do not (%d of them under the cap); the sound test "
	              "accepts %d (clusters <= 64 jobs), %d (<= 4), %d (single windows: classic "
	              "QPA)\n",
	              what, t->fits, t->refused, t->refused_under_cap, t->sound_fits[0],
	              t->sound_fits[1], t->sound_fits[2]);
	for (int k = 0; k < NSOUND; k++)
		assert_true(t->sound_fits[k] >= t->fits / 4);
}

static void test_exact_vs_edf_simulation(void **state)
{
	const struct adm_supply whole = {1.0, 0};
	struct adm_win w[MAXW];
	struct tally t = {0, 0, 0, {0}};
	(void)state;

	rng = 0x9e3779b97f4a7c15ULL;
	for (int k = 0; k < 10000; k++) {
		int n = random_set(w);
		check_set(w, n, &whole, edf_sim_meets(w, n), &t);
	}
	report("cap 1", &t);
	/* both outcomes well represented, and refusals for demand, not only utilisation */
	assert_true(t.fits >= 2000 && t.refused_under_cap >= 1000);
}

static void test_exact_vs_intervals_with_cap(void **state)
{
	const struct adm_supply caps[] = {{0.75, 6}, {0.9, 5}, {0.8, 0}};
	struct adm_win w[MAXW];
	(void)state;

	rng = 0x2545f4914f6cdd1dULL;
	for (size_t c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		struct tally t = {0, 0, 0, {0}};
		char what[64];
		for (int k = 0; k < 4000; k++) {
			int n = random_set(w);
			check_set(w, n, &caps[c], intervals_fit(w, n, &caps[c]), &t);
		}
		snprintf(what, sizeof(what), "cap %.2f burst %.0f", caps[c].cap, caps[c].burst);
		report(what, &t);
		assert_true(t.fits >= 300 && t.refused_under_cap >= 150);
	}
}

/* The oracles themselves on sets whose answer is known. */
static void test_oracles(void **state)
{
	const struct adm_supply cap = {0.75, 6};
	struct adm_win w[2] = {{10, 5, 5, 0, 0, 0}, {10, 5, 5, 5, 1, 0}};
	(void)state;

	assert_true(edf_sim_meets(w, 2));        /* complementary full windows */
	assert_false(intervals_fit(w, 2, &cap)); /* U = 1 > 0.75 */
	w[1].phase = 4;                          /* overlaps by one unit */
	assert_false(edf_sim_meets(w, 2));
	w[1] = (struct adm_win){20, 5, 5, 5, 1, 0}; /* U = 0.75, knee 24 */
	assert_true(intervals_fit(w, 2, &cap));
	w[0].slice = w[0].deadline = 6; /* [0, 10]: 6 + 5 > min(10, 7.5 + 6)? 11 > 10 */
	assert_false(intervals_fit(w, 2, &cap));
	assert_false(edf_sim_meets(w, 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_oracles),
	    cmocka_unit_test(test_exact_vs_edf_simulation),
	    cmocka_unit_test(test_exact_vs_intervals_with_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
