/*
 * Admission control for partitioned EDF (DESIGN.md §2, papers/004 Sect. 3).
 *
 * A reservation (T, S, D) has density S / min(D, T). On one CPU a task set is accepted while
 *   Σ density <= cap,   cap = min(utilization_cap, rt_limit - reserve), cap >= 0,
 * where rt_limit = sched_rt_runtime_us / sched_rt_period_us is the kernel's RT throttling
 * limit (1.0 when runtime is -1). Σ density <= 1 is sufficient for EDF to meet every
 * deadline (exact for D = T); the cap keeps the tasks below RT throttling and leaves the
 * reserve to vsched's own threads.
 *
 * Windows (co-scheduling frames, DESIGN.md §5.2): a task may hold up to VSP_MAX_WINDOWS
 * disjoint windows of one frame T, each often full (slice = deadline). Density would count
 * each as 1 and refuse two of them on a CPU even when they never overlap. So a CPU whose
 * windows all share one period T and none crosses the frame end is also accepted by the
 * exact processor-demand test over one frame (admission_frame_test): for every interval
 * [r_a, d_b] of the frame, Σ slices of the windows inside <= d_b - r_a, and Σ S/T <= cap.
 * A CPU passes when either test passes (both are sufficient for EDF).
 * Everything here is pure except admission_read_rt_limit.
 */
#include "vsched.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

#define RT_RUNTIME_PATH "/proc/sys/kernel/sched_rt_runtime_us"
#define RT_PERIOD_PATH  "/proc/sys/kernel/sched_rt_period_us"
#define FIT_SLACK       1e-9 /* rounding slack of admission_fits */

double admission_density(const struct vsp_resv *r)
{
	uint64_t d = r->deadline ? r->deadline : r->period;
	uint64_t w = d < r->period ? d : r->period;

	if (w == 0)
		return r->slice ? INFINITY : 0.0; /* malformed: never fits */
	return (double)r->slice / (double)w;
}

/* Reads one decimal integer (optionally followed by a newline) from path. */
static int read_ll(const char *path, long long *v, char *why, size_t whylen)
{
	char buf[64], *end;
	FILE *f = fopen(path, "r");
	size_t n;

	if (f == NULL) {
		text_fmt(why, whylen, "%s: %s", path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	errno = 0;
	*v = strtoll(buf, &end, 10);
	if (end == buf || errno != 0 || (*end != '\0' && strcmp(end, "\n") != 0)) {
		text_fmt(why, whylen, "%s: not an integer", path);
		return -1;
	}
	return 0;
}

/* NULL paths mean the kernel's files under /proc/sys/kernel. */
int admission_read_rt_limit(const char *runtime_path, const char *period_path, double *limit,
                            char *why, size_t whylen)
{
	long long runtime, period;

	runtime_path = runtime_path ? runtime_path : RT_RUNTIME_PATH;
	period_path = period_path ? period_path : RT_PERIOD_PATH;
	if (read_ll(runtime_path, &runtime, why, whylen) < 0 ||
	    read_ll(period_path, &period, why, whylen) < 0)
		return -1;
	if (period <= 0) {
		text_fmt(why, whylen, "%s: period %lld must be > 0", period_path, period);
		return -1;
	}
	if (runtime == -1) {
		*limit = 1.0; /* RT throttling off */
		return 0;
	}
	if (runtime < 0) {
		text_fmt(why, whylen, "%s: runtime %lld must be >= 0 or -1", runtime_path, runtime);
		return -1;
	}
	*limit = runtime >= period ? 1.0 : (double)runtime / (double)period;
	return 0;
}

double admission_cap(double configured, double rt_limit, double reserve)
{
	double cap = rt_limit - reserve;

	if (configured < cap)
		cap = configured;
	return cap > 0.0 ? cap : 0.0; /* also maps NaN to 0 */
}

bool admission_fits(double load, double density, double cap)
{
	/* Σ density <= cap; NaN compares false and is refused. */
	return load + density <= cap + FIT_SLACK;
}

double admission_density_n(const struct vsp_resv *w, unsigned n)
{
	double d = 0;

	for (unsigned i = 0; i < n; i++)
		d += admission_density(&w[i]);
	return d;
}

double admission_util_n(const struct vsp_resv *w, unsigned n)
{
	double u = 0;

	for (unsigned i = 0; i < n; i++)
		u += w[i].period ? (double)w[i].slice / (double)w[i].period : INFINITY;
	return u;
}

static bool inside(const struct adm_win *x, const struct adm_conflict *c)
{
	return x->phase >= c->from && x->phase + x->deadline <= c->to;
}

static uint64_t overlap(const struct adm_win *x, const struct adm_win *y)
{
	uint64_t lo = x->phase > y->phase ? x->phase : y->phase;
	uint64_t hi = x->phase + x->deadline < y->phase + y->deadline ? x->phase + x->deadline
	                                                              : y->phase + y->deadline;
	return hi > lo ? hi - lo : 0;
}

/*
 * Names the conflict: among the windows inside [from, to], the pair (a of owner want if
 * any, b of another owner) that overlaps the most in time; ties keep the first pair.
 */
static void name_conflict(const struct adm_win *w, int n, int want, struct adm_conflict *c)
{
	bool have_want = false;
	uint64_t best = 0;

	c->a = c->b = -1;
	for (int i = 0; i < n; i++)
		have_want |= inside(&w[i], c) && w[i].owner == want;
	for (int i = 0; i < n; i++) {
		if (!inside(&w[i], c) || (have_want && w[i].owner != want))
			continue;
		for (int k = 0; k < n; k++) {
			uint64_t ov;
			if (k == i || w[k].owner == w[i].owner || !inside(&w[k], c))
				continue;
			ov = overlap(&w[i], &w[k]);
			if (c->a < 0 || ov > best) {
				c->a = i;
				c->b = k;
				best = ov;
			}
		}
	}
}

/*
 * O(n^2) after an O(n^2) insertion sort by window end: for each window start r (ascending
 * ends scanned once per r), the slices of the windows starting at or after r accumulate
 * and are checked at every end. n is the windows of one CPU (tasks x windows), small.
 */
int admission_frame_test(const struct adm_win *w, int n, double cap, int want,
                         struct adm_conflict *c)
{
	uint64_t T;
	int *ord;
	double util = 0;

	memset(c, 0, sizeof(*c));
	c->a = c->b = -1;
	if (n <= 0)
		return ADM_FITS;
	T = w[0].period;
	for (int i = 0; i < n; i++) {
		if (w[i].period != T || w[i].period == 0 || w[i].phase + w[i].deadline > T ||
		    w[i].slice > w[i].deadline)
			return ADM_NA;
		util += (double)w[i].slice / (double)T;
	}
	c->util = util;
	ord = malloc((size_t)n * sizeof(*ord));
	if (ord == NULL)
		return ADM_NA; /* the caller falls back to density: refuses rather than guesses */
	for (int i = 0; i < n; i++) {
		int k = i;
		uint64_t end = w[i].phase + w[i].deadline;

		while (k > 0 && w[ord[k - 1]].phase + w[ord[k - 1]].deadline > end) {
			ord[k] = ord[k - 1];
			k--;
		}
		ord[k] = i;
	}
	for (int a = 0; a < n; a++) {
		uint64_t r = w[a].phase, acc = 0;

		for (int k = 0; k < n; k++) {
			const struct adm_win *x = &w[ord[k]];
			uint64_t end = x->phase + x->deadline;

			if (x->phase < r)
				continue;
			acc += x->slice;
			/* Σ slices inside [r, end] <= end - r: the processor-demand criterion */
			if (acc > end - r) {
				c->from = r;
				c->to = end;
				c->demand = acc;
				free(ord);
				name_conflict(w, n, want, c);
				return ADM_DEMAND;
			}
		}
	}
	free(ord);
	if (!admission_fits(0, util, cap))
		return ADM_UTIL;
	return ADM_FITS;
}
