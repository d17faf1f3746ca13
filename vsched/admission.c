/*
 * Admission control for partitioned EDF: the processor-demand criterion (DESIGN.md §2).
 *
 * Model. A window w = (T, S, D, phase), 0 < S <= D <= T, phase < T, is a periodic job
 * sequence: a job released at epoch + phase + kT is owed S ns of CPU time before release + D
 * (vsched/edf.c). A task holds 1..VSP_MAX_WINDOWS windows (one frame: same T, disjoint), each
 * its own job sequence. Budget is CPU time consumed, so a job needs exactly S of the CPU.
 * A job vsched builds inside its window (task added, reservation set, epoch moved) is owed
 * less (dispatch.c prorates it), so the jobs vsched runs are always a subset of the pattern
 * extended to all of time, which repeats every hyperperiod H = lcm(T).
 *
 * Criterion. EDF on one CPU meets every deadline iff in every interval [t1, t2] the jobs
 * released at or after t1 with deadlines at or before t2 need no more than the CPU gives in
 * it; t1 a release and t2 a deadline suffice (Baruah, Rosier, Howell, "Algorithms and
 * complexity concerning the preemptive scheduling of periodic, real-time tasks on one
 * processor", Real-Time Systems 2(4), 1990).
 *
 * What the CPU gives, and what the cap means. In an interval of length L the reservations
 * may need supply(L) = min(L, cap · L + burst): the whole CPU over short intervals (a window
 * with slice = deadline needs 100 % of it), cap of the time in the long run (Σ S/T <= cap),
 * and in between at most `burst` beyond cap · L. vsched sets burst = (RT limit - cap) · P,
 * P = the kernel's RT accounting period (sched_rt_period_us, 1 s). The RT throttle acts
 * only when RT threads have run limit · P within one accounting period; with this supply
 * no interval of length P needs more than cap · P + burst = limit · P (a 9 s job due 9 s
 * after its release is refused: the throttle would cut it), and a burst beyond the cap
 * borrows, within one period, from the reserve kept for vsched's own threads (cap =
 * min(configured, limit - reserve); a dispatcher uses ~1.6 % of its CPU at 10 ms periods,
 * more at 1 ms: bench/RESULTS.md). A pattern of hyperperiod H that EDF can serve has bursts
 * (demand - U · L) of at most U·(1 - U)·H: 9 ms for a 100 ms frame at U = 90 %, so here any
 * such pattern with H up to 555 ms is admitted right up to the cap. burst = 0 gives a CPU
 * of speed cap (demand <= cap · L everywhere).
 * A density sum Σ S/min(D, T) <= cap implies the criterion for any burst (placement.c's fast path).
 *
 * Exact test, when the hyperperiod is short (H <= 2^50 ns and at most max_jobs jobs in it;
 * harmonic periods give H = the longest period): every interval is checked. The pattern
 * repeats every H, so t1 ranges over the releases in [0, H); an interval longer than
 * H + Dmax has the demand of the one H shorter plus W = Σ S·H/T (all jobs of one hyperperiod
 * lie inside), and supply() grows by at least cap · H over H (its slopes are 1 and cap), so
 * with W <= cap · H it fits when the shorter one does: lengths up to H + Dmax and
 * Σ S/T <= cap decide it. This is the offset case of Leung & Merrill ("A note on preemptive
 * scheduling of periodic, real-time tasks", IPL 11(3), 1980) and Baruah, Rosier, Howell:
 * intervals in [0, max phase + 2H] decide it, the same intervals moved by a multiple of H.
 * Cost: J = Σ H/T jobs, at most J · (2J + n) intervals, O(J^2) time.
 *
 * Sound test, otherwise: the windows are grouped into clusters with short hyperperiods (equal
 * periods first: the windows of one frame stay together); a cluster's demand bound
 * dbf_c(L) = the most its jobs need in any interval of length L, exact for the cluster;
 * Σ dbf_c(L) <= supply(L) for all L is sufficient (the clusters' relative phases are
 * ignored). It is checked with QPA (Zhang & Burns, "Schedulability analysis for real-time
 * systems with EDF scheduling", IEEE Trans. Computers 58(9), 2009), generalised to supply():
 * walking down from an upper bound of the lengths to check (where u·L + the clusters'
 * bursts <= supply(L)), t -> supply^-1(h(t)). With single windows as clusters this is the
 * classic sporadic-task test. Past its limits (max_points, or U = cap with bursts beyond
 * `burst`) it refuses: never a guess.
 *
 * Everything here is pure (scratch allocation only) except admission_read_rt_limit.
 */
#include "vsched.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "text.h"

#define RT_RUNTIME_PATH "/proc/sys/kernel/sched_rt_runtime_us"
#define RT_PERIOD_PATH  "/proc/sys/kernel/sched_rt_period_us"
#define FIT_SLACK       1e-9         /* rounding slack of admission_fits */
#define DEMAND_SLACK    1e-12        /* relative rounding slack of cap · L */
#define H_MAX           (1ULL << 50) /* longest hyperperiod built (~13 days): 3H fits a double */
#define L_MAX           (1ULL << 60) /* longest interval the sound test walks down from */
#define NAME_JOBS_MAX   512          /* jobs looked at to name a conflict */
#define JOIN_TRIES      16           /* clusters a window may join, tried newest first */

const struct adm_limits adm_default_limits = {
    .max_jobs = 512,
    .max_cluster_jobs = 64,
    .cluster_budget = 16384,
    .max_points = 4096,
};

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
                            uint64_t *period_ns, char *why, size_t whylen)
{
	long long runtime, period;

	runtime_path = runtime_path ? runtime_path : RT_RUNTIME_PATH;
	period_path = period_path ? period_path : RT_PERIOD_PATH;
	if (read_ll(runtime_path, &runtime, why, whylen) < 0 ||
	    read_ll(period_path, &period, why, whylen) < 0)
		return -1;
	if (period <= 0 || period > INT32_MAX) {
		text_fmt(why, whylen, "%s: period %lld must be in 1..%d", period_path, period,
		         INT32_MAX);
		return -1;
	}
	if (runtime < -1) {
		text_fmt(why, whylen, "%s: runtime %lld must be >= 0 or -1", runtime_path, runtime);
		return -1;
	}
	if (period_ns)
		*period_ns = (uint64_t)period * 1000;
	if (runtime == -1) /* RT throttling off */
		*limit = 1.0;
	else
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

double admission_supply(const struct adm_supply *sp, uint64_t len)
{
	double l = (double)len, g = sp->cap * l + sp->burst;

	return g < l ? g : l;
}

/* The length from which supply() is cap · L + burst (below it, L); INFINITY if never. */
static double supply_knee(const struct adm_supply *sp)
{
	return sp->cap < 1 ? sp->burst / (1 - sp->cap) : INFINITY;
}

/* demand <= supply(len), up to rounding of cap · len. */
static bool within(uint64_t demand, const struct adm_supply *sp, uint64_t len)
{
	return (double)demand <= admission_supply(sp, len) * (1 + DEMAND_SLACK);
}

/* ------------------------------------------------------------------ hyperperiods, jobs */

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* lcm(a, b), or 0 when it exceeds H_MAX. */
static uint64_t lcm_bounded(uint64_t a, uint64_t b)
{
	uint64_t q = a / gcd64(a, b);

	return q > H_MAX / b ? 0 : q * b;
}

/* The pattern of some windows: it repeats every h; work and jobs per h; largest deadline. */
struct cyc {
	uint64_t h, work, dmax, jobs;
};

/* Adds window x to pattern c (h = 0: empty). Returns false, c unchanged, past the limits. */
static bool cyc_add(struct cyc *c, const struct adm_win *x, uint64_t max_jobs)
{
	uint64_t h = c->h ? lcm_bounded(c->h, x->period) : x->period;
	uint64_t grow, jobs;

	if (h == 0 || h > H_MAX)
		return false;
	grow = c->h ? h / c->h : 1;
	if (c->jobs > max_jobs / grow)
		return false;
	jobs = c->jobs * grow + h / x->period;
	if (jobs > max_jobs)
		return false;
	c->work = c->work * grow + x->slice * (h / x->period);
	c->jobs = jobs;
	c->h = h;
	if (x->deadline > c->dmax)
		c->dmax = x->deadline;
	return true;
}

struct job {
	uint64_t r, d, s; /* release, deadline, slice */
	int w;            /* the caller's window index */
};

static int by_deadline(const void *a, const void *b)
{
	const struct job *x = a, *y = b;

	if (x->d != y->d)
		return x->d < y->d ? -1 : 1;
	return x->r < y->r ? -1 : x->r > y->r;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The jobs of windows w[m[0..nm)] released in [0, until), sorted by deadline; *nj their
 * number. The caller frees the result (NULL only when there are none).
 */
static struct job *jobs_build(const struct adm_win *w, const int *m, int nm, uint64_t until,
                              size_t *nj)
{
	struct job *j;
	size_t n = 0, k = 0;

	for (int i = 0; i < nm; i++)
		if (w[m[i]].phase < until)
			n += (until - w[m[i]].phase - 1) / w[m[i]].period + 1;
	*nj = n;
	if (n == 0)
		return NULL;
	j = malloc(n * sizeof(*j));
	if (j == NULL)
		fatal("admission: out of memory");
	for (int i = 0; i < nm; i++) {
		const struct adm_win *x = &w[m[i]];
		for (uint64_t r = x->phase; r < until; r += x->period)
			j[k++] = (struct job){r, r + x->deadline, x->slice, m[i]};
	}
	qsort(j, n, sizeof(*j), by_deadline);
	return j;
}

/* Index of the first job with deadline > t (jobs sorted by deadline). */
static size_t first_due_after(const struct job *j, size_t nj, uint64_t t)
{
	size_t lo = 0, hi = nj;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (j[mid].d <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

typedef bool (*visit_fn)(void *ctx, uint64_t t1, uint64_t t2, uint64_t demand);

/*
 * Calls visit for every basic interval of pattern c: t1 a release in [0, h), t2 a deadline
 * in (t1, t1 + h + dmax], demand = Σ S of the jobs inside [t1, t2] (the jobs j[nj] must
 * hold every release in [0, 2h + dmax)). Counts the calls in *count. Returns false as soon
 * as visit does. O(releases · jobs).
 */
static bool scan_intervals(const struct job *j, size_t nj, const struct cyc *c, visit_fn visit,
                           void *ctx, uint64_t *count)
{
	uint64_t *rel = malloc((nj ? nj : 1) * sizeof(*rel));
	size_t nr = 0;
	bool go = true;

	if (rel == NULL)
		fatal("admission: out of memory");
	for (size_t i = 0; i < nj; i++)
		if (j[i].r < c->h)
			rel[nr++] = j[i].r;
	qsort(rel, nr, sizeof(*rel), by_u64);
	for (size_t a = 0; a < nr && go; a++) {
		uint64_t t1 = rel[a], end = t1 + c->h + c->dmax, demand = 0;

		if (a > 0 && rel[a - 1] == t1)
			continue;
		for (size_t k = first_due_after(j, nj, t1); k < nj && j[k].d <= end && go; k++) {
			if (j[k].r < t1)
				continue;
			demand += j[k].s;
			(*count)++;
			go = visit(ctx, t1, j[k].d, demand);
		}
	}
	free(rel);
	return go;
}

/* ------------------------------------------------------------------------ exact test */

struct exact_ctx {
	const struct adm_supply *sp;
	bool over;               /* an interval does not fit */
	uint64_t t1, t2, demand; /* the shortest one (ties: the largest demand - supply) */
	double excess;
};

/* Never stops the scan: a refusal names the shortest interval that does not fit. */
static bool exact_visit(void *p, uint64_t t1, uint64_t t2, uint64_t demand)
{
	struct exact_ctx *x = p;
	double excess;

	/* Σ S of the jobs inside [t1, t2] <= supply(t2 - t1): the processor-demand criterion */
	if (within(demand, x->sp, t2 - t1))
		return true;
	excess = (double)demand - admission_supply(x->sp, t2 - t1);
	if (!x->over || t2 - t1 < x->t2 - x->t1 ||
	    (t2 - t1 == x->t2 - x->t1 && excess > x->excess)) {
		x->over = true;
		x->excess = excess;
		x->t1 = t1;
		x->t2 = t2;
		x->demand = demand;
	}
	return true;
}

static uint64_t overlap(const struct job *x, const struct job *y)
{
	uint64_t lo = x->r > y->r ? x->r : y->r, hi = x->d < y->d ? x->d : y->d;

	return hi > lo ? hi - lo : 0;
}

/*
 * Names the conflict in [res->from, res->to]: among the jobs inside it, the pair (a of owner
 * want if any, b of another owner) that overlaps the most in time; ties keep the first pair.
 */
static void name_conflict(const struct adm_win *w, const struct job *j, size_t nj, int want,
                          struct adm_result *res)
{
	size_t in[NAME_JOBS_MAX], n = 0;
	bool have_want = false;
	uint64_t best = 0;

	for (size_t i = 0; i < nj && n < NAME_JOBS_MAX; i++)
		if (j[i].r >= res->from && j[i].d <= res->to) {
			in[n++] = i;
			have_want |= w[j[i].w].owner == want;
		}
	for (size_t x = 0; x < n; x++) {
		const struct job *p = &j[in[x]];
		if (have_want && w[p->w].owner != want)
			continue;
		for (size_t y = 0; y < n; y++) {
			const struct job *q = &j[in[y]];
			uint64_t ov = overlap(p, q);
			if (w[q->w].owner == w[p->w].owner)
				continue;
			if (res->a < 0 || ov > best) {
				res->a = p->w;
				res->b = q->w;
				best = ov;
			}
		}
	}
}

static int exact_test(const struct adm_win *w, int n, const struct cyc *c,
                      const struct adm_supply *sp, int want, struct adm_result *res)
{
	struct exact_ctx x = {sp, false, 0, 0, 0, 0};
	int *all = malloc((size_t)n * sizeof(*all));
	struct job *j;
	size_t nj;
	bool ok;

	if (all == NULL)
		fatal("admission: out of memory");
	for (int i = 0; i < n; i++)
		all[i] = i;
	j = jobs_build(w, all, n, 2 * c->h + c->dmax, &nj);
	free(all);
	res->exact = true;
	res->hyperperiod = c->h;
	scan_intervals(j, nj, c, exact_visit, &x, &res->checked);
	ok = !x.over;
	if (!ok) {
		res->from = x.t1;
		res->to = x.t2;
		res->demand = x.demand;
		res->supply = admission_supply(sp, res->to - res->from);
		name_conflict(w, j, nj, want, res);
	}
	free(j);
	if (!ok)
		return ADM_DEMAND;
	return res->util_over ? ADM_UTIL : ADM_FITS;
}

/* ------------------------------------------------------------------------ sound test */

struct pair {
	uint64_t len, dem;
};

/*
 * One cluster: its pattern and its demand bound as steps: dbf(L) = st[i].dem for
 * st[i].len <= L < st[i + 1].len, both strictly increasing, lengths up to h + dmax. Beyond
 * that dbf(L) = dbf(L - k·h) + k·work (see the file comment).
 */
struct cluster {
	struct cyc c;
	int *m, nm;      /* member windows */
	struct pair *st; /* steps: (length, demand) */
	size_t ns;
	double u, burst; /* work / h; max over L of dbf(L) - u·L (>= 0) */
};

/* Windows sorted by period, then owner, then phase: one frame's windows are neighbours. */
static int by_period(const void *a, const void *b, void *base)
{
	const struct adm_win *w = base, *x = &w[*(const int *)a], *y = &w[*(const int *)b];

	if (x->period != y->period)
		return x->period < y->period ? -1 : 1;
	if (x->owner != y->owner)
		return x->owner < y->owner ? -1 : 1;
	return x->phase < y->phase ? -1 : x->phase > y->phase;
}

/*
 * Groups the windows: each joins one of the JOIN_TRIES newest clusters (newest first) whose
 * pattern stays within max_cluster_jobs, while Σ jobs^2 over the clusters (their cost) stays
 * within the budget; else it starts a cluster of its own. Fills cl[] (n of them at most);
 * returns their number. O(n log n + n · JOIN_TRIES).
 */
static int clusters_make(const struct adm_win *w, int n, const struct adm_limits *lim,
                         struct cluster *cl)
{
	int *ord = malloc((size_t)n * sizeof(*ord)), ncl = 0;
	/* a window adds at least one job: no cluster has more members than that limit */
	size_t most =
	    lim->max_cluster_jobs < (uint64_t)n ? (size_t)lim->max_cluster_jobs : (size_t)n;
	uint64_t cost = 0;

	if (ord == NULL)
		fatal("admission: out of memory");
	for (int i = 0; i < n; i++)
		ord[i] = i;
	qsort_r(ord, (size_t)n, sizeof(*ord), by_period, (void *)w);
	for (int k = 0; k < n; k++) {
		const struct adm_win *x = &w[ord[k]];
		int at = -1;

		/* the newest clusters first (same period: neighbours), a bounded number of them */
		for (int c = ncl - 1; c >= 0 && c >= ncl - JOIN_TRIES && at < 0; c--) {
			struct cyc t = cl[c].c;
			if (cyc_add(&t, x, lim->max_cluster_jobs) &&
			    cost - cl[c].c.jobs * cl[c].c.jobs + t.jobs * t.jobs <=
			        lim->cluster_budget) {
				cost += t.jobs * t.jobs - cl[c].c.jobs * cl[c].c.jobs;
				cl[c].c = t;
				at = c;
			}
		}
		if (at < 0) {
			at = ncl++;
			memset(&cl[at], 0, sizeof(cl[at]));
			cl[at].m = calloc(most ? most : 1, sizeof(int));
			if (cl[at].m == NULL)
				fatal("admission: out of memory");
			cyc_add(&cl[at].c, x, UINT64_MAX); /* one window: h = T, one job */
			cost += 1;
		}
		cl[at].m[cl[at].nm++] = ord[k];
	}
	free(ord);
	return ncl;
}

/* The basic intervals of a cluster as (length, demand), in runs of one t1 sorted by length. */
struct table_ctx {
	struct pair *p;
	size_t n, cap;
	size_t *run, nrun; /* run k is p[run[k] .. run[k + 1]) */
	uint64_t t1;
};

static bool count_visit(void *ctx, uint64_t t1, uint64_t t2, uint64_t demand)
{
	struct table_ctx *t = ctx;

	(void)t2;
	(void)demand;
	t->nrun += t->n == 0 || t1 != t->t1;
	t->t1 = t1;
	t->n++;
	return true;
}

static bool table_visit(void *ctx, uint64_t t1, uint64_t t2, uint64_t demand)
{
	struct table_ctx *t = ctx;

	if (t->n == 0 || t1 != t->t1)
		t->run[t->nrun++] = t->n;
	t->t1 = t1;
	t->p[t->n++] = (struct pair){t2 - t1, demand};
	return true;
}

/* Merges the sorted runs of p[n] into one list sorted by length (bottom-up, O(n log runs)). */
static struct pair *merge_runs(struct pair *p, size_t n, size_t *run, size_t nrun)
{
	struct pair *tmp = malloc((n ? n : 1) * sizeof(*tmp)), *swap;

	if (tmp == NULL)
		fatal("admission: out of memory");
	run[nrun] = n;
	for (; nrun > 1; nrun = (nrun + 1) / 2) {
		for (size_t r = 0; r < nrun; r += 2) {
			size_t a = run[r], am = run[r + 1], b = am,
			       bm = r + 2 <= nrun ? run[r + 2] : am;
			size_t o = a;
			while (a < am || b < bm)
				tmp[o++] =
				    b >= bm || (a < am && p[a].len <= p[b].len) ? p[a++] : p[b++];
			run[r / 2] = run[r];
		}
		run[(nrun + 1) / 2] = n;
		swap = p;
		p = tmp;
		tmp = swap;
	}
	free(tmp);
	return p;
}

/* Builds cluster k's steps (the upper envelope of its basic intervals) and its burst. */
static void cluster_table(const struct adm_win *w, struct cluster *k, uint64_t *count)
{
	struct table_ctx t = {NULL, 0, 0, NULL, 0, 0};
	uint64_t best = 0, ignore = 0;
	struct job *j;
	size_t nj;

	j = jobs_build(w, k->m, k->nm, 2 * k->c.h + k->c.dmax, &nj);
	scan_intervals(j, nj, &k->c, count_visit, &t, &ignore);
	t.cap = t.n;
	t.p = malloc((t.cap ? t.cap : 1) * sizeof(*t.p));
	t.run = malloc((t.nrun + 2) * sizeof(*t.run));
	if (t.p == NULL || t.run == NULL)
		fatal("admission: out of memory");
	t.n = t.nrun = 0;
	scan_intervals(j, nj, &k->c, table_visit, &t, count);
	free(j);
	k->st = merge_runs(t.p, t.n, t.run, t.nrun);
	free(t.run);
	k->u = (double)k->c.work / (double)k->c.h;
	for (size_t i = 0; i < t.n; i++) { /* in place: steps never outrun the pairs */
		struct pair x = k->st[i];
		if (x.dem <= best)
			continue;
		best = x.dem;
		if (k->ns > 0 && k->st[k->ns - 1].len == x.len)
			k->ns--;
		k->st[k->ns++] = x;
		if ((double)x.dem - k->u * (double)x.len > k->burst)
			k->burst = (double)x.dem - k->u * (double)x.len;
	}
}

/* Index of the last step with len <= L, or -1. */
static long step_at(const struct cluster *k, uint64_t L)
{
	size_t lo = 0, hi = k->ns;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->st[mid].len <= L)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

/* The periods to fold L > h + dmax back into (dmax, h + dmax]; 0 when L is not beyond. */
static uint64_t folds(const struct cluster *k, uint64_t L)
{
	uint64_t top = k->c.h + k->c.dmax;

	return L <= top ? 0 : (L - top + k->c.h - 1) / k->c.h;
}

static uint64_t cluster_dbf(const struct cluster *k, uint64_t L)
{
	uint64_t f = folds(k, L);
	long i = step_at(k, L - f * k->c.h);

	return (i < 0 ? 0 : k->st[i].dem) + f * k->c.work;
}

/* The largest step length < y of the cluster's demand bound, 0 if none. */
static uint64_t cluster_prev(const struct cluster *k, uint64_t y)
{
	uint64_t f = folds(k, y), yf = y - f * k->c.h;
	long i;

	if (y == 0)
		return 0;
	i = step_at(k, yf - 1);
	if (f == 0)
		return i < 0 ? 0 : k->st[i].len;
	/* steps in (dmax, h + dmax] repeat every h; one exists there since work > 0 */
	if (i >= 0 && k->st[i].len > k->c.dmax)
		return k->st[i].len + f * k->c.h;
	return k->st[k->ns - 1].len + (f - 1) * k->c.h;
}

/* The shortest length whose supply reaches v (<= the t it came from). */
static uint64_t supply_inv(const struct adm_supply *sp, uint64_t v, uint64_t t)
{
	double y;

	if ((double)v <= supply_knee(sp))
		return v < t ? v : t;
	y = ceil(((double)v - sp->burst) / sp->cap);
	return y < (double)t ? (uint64_t)y : t;
}

/*
 * QPA over h(L) = Σ dbf_c(L): from the largest step <= bound, each length t either fails
 * (h(t) > supply(t)) or clears [supply^-1(h(t)), t] (h is nondecreasing, supply too), and t
 * moves to the largest step below that. Returns ADM_FITS, ADM_DEMAND (res->to = t) or
 * ADM_UNDECIDED after max_points lengths.
 */
static int qpa(const struct cluster *cl, int ncl, uint64_t bound, const struct adm_supply *sp,
               const struct adm_limits *lim, struct adm_result *res)
{
	uint64_t t = 0, points = 0;

	for (int c = 0; c < ncl; c++) {
		uint64_t p = cluster_prev(&cl[c], bound + 1);
		t = p > t ? p : t;
	}
	while (t > 0) {
		uint64_t h = 0, y, next = 0;

		if (points++ >= lim->max_points)
			return ADM_UNDECIDED;
		res->checked++;
		for (int c = 0; c < ncl; c++)
			h += cluster_dbf(&cl[c], t);
		if (!within(h, sp, t)) {
			res->to = t;
			res->demand = h;
			res->supply = admission_supply(sp, t);
			return ADM_DEMAND;
		}
		y = supply_inv(sp, h, t);
		for (int c = 0; c < ncl; c++) {
			uint64_t p = cluster_prev(&cl[c], y);
			next = p > next ? p : next;
		}
		t = next;
	}
	return ADM_FITS;
}

/* The least x >= 0 with excess <= x · slope (0 if excess <= 0), INFINITY if none. */
static double past(double excess, double slope)
{
	if (excess <= 0)
		return 0;
	return slope > FIT_SLACK ? ceil(excess / slope) : INFINITY;
}

static int sound_test(const struct adm_win *w, int n, const struct adm_supply *sp,
                      const struct adm_limits *lim, struct adm_result *res)
{
	struct cluster *cl;
	double u = 0, burst = 0, bound;
	int ncl, rc;

	if (res->util_over)
		return ADM_UTIL;
	cl = calloc((size_t)n, sizeof(*cl));
	if (cl == NULL)
		fatal("admission: out of memory");
	ncl = clusters_make(w, n, lim, cl);
	for (int c = 0; c < ncl; c++) {
		cluster_table(w, &cl[c], &res->checked);
		u += cl[c].u;
		burst += cl[c].burst;
	}
	res->clusters = ncl;
	/* h(L) <= u·L + burst <= min(L, cap·L + sp->burst) = supply(L) from bound on */
	bound = fmax(past(burst, 1 - u), past(burst - sp->burst, sp->cap - u));
	if (bound >= (double)L_MAX)
		rc = ADM_UNDECIDED;
	else
		rc = qpa(cl, ncl, (uint64_t)bound, sp, lim, res);
	for (int c = 0; c < ncl; c++) {
		free(cl[c].m);
		free(cl[c].st);
	}
	free(cl);
	return rc;
}

/* ------------------------------------------------------------------------- the test */

int admission_test(const struct adm_win *w, int n, const struct adm_supply *sp,
                   const struct adm_limits *lim, int want, struct adm_result *res)
{
	struct cyc all = {0, 0, 0, 0};
	bool short_h = true;

	memset(res, 0, sizeof(*res));
	res->a = res->b = -1;
	if (lim == NULL)
		lim = &adm_default_limits;
	for (int i = 0; i < n; i++) {
		const struct adm_win *x = &w[i];
		if (x->period == 0 || x->period > H_MAX || x->slice == 0 ||
		    x->slice > x->deadline || x->deadline > x->period || x->phase >= x->period)
			return ADM_INVALID;
		res->util += (double)x->slice / (double)x->period;
	}
	if (n <= 0)
		return ADM_FITS;
	res->util_over = !admission_fits(res->util, 0, sp->cap);
	for (int i = 0; i < n && short_h; i++)
		short_h = cyc_add(&all, &w[i], lim->max_jobs);
	if (short_h)
		return exact_test(w, n, &all, sp, want, res);
	return sound_test(w, n, sp, lim, res);
}
