/*
 * runlog: a CPU-bound probe that records when it actually had the CPU (CLOCK_REALTIME), and
 * the analyses of such records: against a frame of windows (tests/integration/windows.sh,
 * epoch.sh), and between two nodes (netns_aligned_windows.sh: do a job's windows start at
 * the same time on both?).
 *
 *   runlog -d SECONDS -o FILE [-g GAP_US] [-u UNIT_US] [-l LIBAPPRATE_SO]
 *       Spins for SECONDS of wall time, reading CLOCK_REALTIME in a tight loop. A jump of
 *       more than GAP_US (default 300) between two reads means it did not run in between
 *       (parked or preempted): one run interval ends, the next begins. At the end (or at
 *       SIGTERM/SIGINT) writes one line per run interval, "START_NS END_NS", to FILE and
 *       exits 0. As a job's rank (VSCHED_JOB, VSCHED_RANK, VSCHED_AGENT set, as
 *       `vschedctl job run` does), every UNIT_US (default 1000) of time it ran is one
 *       apprate_iteration(): its rate is 1e6 / UNIT_US per second at a full CPU, its share
 *       times that under a reservation. libapprate is opened with dlopen (the test helpers
 *       link only vsched_common, ZeroMQ and threads): -l PATH, else $RUNLOG_APPRATE, else
 *       "libapprate.so.0".
 *
 *   runlog -a FILE -e EPOCH_NS -T PERIOD_NS [-s SKIP_MS] PHASE_NS:LEN_NS ...
 *       Reads such a file (ignoring the first SKIP_MS ms of it) and prints one line:
 *         run_ns=R span_ns=S share=P inside=F starts=N late_med_us=M late_p95_us=Q outside=O
 *       share = R/S in percent; inside = fraction of R spent inside the windows
 *       [EPOCH + PHASE + k*PERIOD, + LEN); for every interval start (the probe got the CPU
 *       after a gap), late = start - (EPOCH + PHASE + k*PERIOD) of the window holding it;
 *       starts outside every window are counted in outside.
 *
 *   runlog -c FILE_A FILE_B -G MIN_GAP_US [-s SKIP_MS] [-S]
 *       Window starts of each record: the start of a run interval that follows at least
 *       MIN_GAP_US without the CPU (the first interval, and the first SKIP_MS ms of both
 *       records, are ignored). For every window start in A, the nearest window start in B:
 *       delta = B - A. Prints one line:
 *         starts_a=N starts_b=M pairs=P med_abs_us=X p95_abs_us=Y max_abs_us=Z med_us=D
 *       (med_us: the signed median). -S adds one line per pair on stderr ("A_NS DELTA_NS").
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_IVL 200000
#define MAX_WIN 16

typedef void apprate_t;
static apprate_t *(*p_open)(const char *, const void *);
static int (*p_iteration)(apprate_t *);
static void (*p_close)(apprate_t **);

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t clk(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t ivl[MAX_IVL][2];

static apprate_t *open_apprate(const char *lib)
{
	const char *job = getenv("VSCHED_JOB");
	void *h;
	apprate_t *r;

	if (job == NULL || job[0] == '\0')
		return NULL;
	if (lib == NULL)
		lib = getenv("RUNLOG_APPRATE");
	if (lib == NULL || lib[0] == '\0')
		lib = "libapprate.so.0";
	h = dlopen(lib, RTLD_NOW);
	if (h == NULL) {
		fprintf(stderr, "runlog: dlopen %s: %s\n", lib, dlerror());
		exit(1);
	}
	*(void **)&p_open = dlsym(h, "apprate_open");
	*(void **)&p_iteration = dlsym(h, "apprate_iteration");
	*(void **)&p_close = dlsym(h, "apprate_close");
	if (p_open == NULL || p_iteration == NULL || p_close == NULL) {
		fprintf(stderr, "runlog: %s lacks the apprate_* symbols\n", lib);
		exit(1);
	}
	r = p_open(NULL, NULL);
	if (r == NULL) {
		perror("runlog: apprate_open");
		exit(1);
	}
	return r;
}

static int record(double secs, const char *out, uint64_t gap, uint64_t unit, const char *lib)
{
	apprate_t *r = open_apprate(lib);
	uint64_t end = clk(CLOCK_MONOTONIC) + (uint64_t)(secs * 1e9);
	uint64_t prev = clk(CLOCK_REALTIME), start = prev, credit = 0, units = 0;
	size_t n = 0;
	FILE *f;

	for (;;) {
		uint64_t now = clk(CLOCK_REALTIME);

		if (now - prev > gap) {
			if (n < MAX_IVL) {
				ivl[n][0] = start;
				ivl[n][1] = prev;
				n++;
			}
			start = now;
		} else if (now > prev) {
			credit += now - prev;
		}
		prev = now;
		if (credit >= unit) {
			credit -= unit;
			units++;
			if (r != NULL)
				p_iteration(r);
		}
		if (stop || clk(CLOCK_MONOTONIC) >= end)
			break;
	}
	if (n < MAX_IVL) {
		ivl[n][0] = start;
		ivl[n][1] = prev;
		n++;
	}
	if (r != NULL)
		p_close(&r);
	f = fopen(out, "w");
	if (f == NULL) {
		perror(out);
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%" PRIu64 " %" PRIu64 "\n", ivl[i][0], ivl[i][1]);
	fprintf(stderr, "runlog: intervals=%zu units=%" PRIu64 "\n", n, units);
	return fclose(f) == 0 ? 0 : 1;
}

/* Window starts of a record into *out (sorted, as the record is); their number. */
static size_t starts(const char *path, uint64_t min_gap, uint64_t skip, uint64_t from,
                     uint64_t **out)
{
	FILE *f = fopen(path, "r");
	uint64_t s, e, prev_end = 0;
	size_t n = 0, cap = 1024, i = 0;
	uint64_t *v = malloc(cap * sizeof(*v));

	if (f == NULL || v == NULL) {
		perror(path);
		exit(1);
	}
	while (fscanf(f, "%" SCNu64 " %" SCNu64, &s, &e) == 2) {
		if (i++ > 0 && s - prev_end >= min_gap && s >= from + skip) {
			if (n == cap) {
				cap *= 2;
				v = realloc(v, cap * sizeof(*v));
				if (v == NULL)
					exit(1);
			}
			v[n++] = s;
		}
		prev_end = e;
	}
	fclose(f);
	*out = v;
	return n;
}

static uint64_t first_start(const char *path)
{
	FILE *f = fopen(path, "r");
	uint64_t s = 0, e;

	if (f == NULL) {
		perror(path);
		exit(1);
	}
	if (fscanf(f, "%" SCNu64 " %" SCNu64, &s, &e) != 2)
		s = 0;
	fclose(f);
	return s;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int compare(const char *fa, const char *fb, uint64_t min_gap, uint64_t skip, int show)
{
	uint64_t *a, *b, from;
	uint64_t fa0 = first_start(fa), fb0 = first_start(fb);
	size_t na, nb, j = 0;
	int64_t *d, *ad;

	from = fa0 > fb0 ? fa0 : fb0; /* both running */
	na = starts(fa, min_gap, skip, from, &a);
	nb = starts(fb, min_gap, skip, from, &b);
	d = calloc(na + 1, sizeof(*d));
	ad = calloc(na + 1, sizeof(*ad));
	if (d == NULL || ad == NULL)
		return 1;
	if (nb == 0) {
		printf("starts_a=%zu starts_b=0 pairs=0 med_abs_us=0 p95_abs_us=0 max_abs_us=0 "
		       "med_us=0\n",
		       na);
		return 0;
	}
	for (size_t i = 0; i < na; i++) {
		while (j + 1 < nb && b[j + 1] <= a[i])
			j++;
		int64_t best = (int64_t)(b[j] - a[i]);
		if (j + 1 < nb) {
			int64_t alt = (int64_t)(b[j + 1] - a[i]);
			if (llabs(alt) < llabs(best))
				best = alt;
		}
		d[i] = best;
		ad[i] = llabs(best);
		if (show)
			fprintf(stderr, "%" PRIu64 " %" PRId64 "\n", a[i], best);
	}
	qsort(d, na, sizeof(*d), cmp_i64);
	qsort(ad, na, sizeof(*ad), cmp_i64);
	printf("starts_a=%zu starts_b=%zu pairs=%zu med_abs_us=%.0f p95_abs_us=%.0f "
	       "max_abs_us=%.0f med_us=%.0f\n",
	       na, nb, na, na ? (double)ad[na / 2] / 1e3 : 0.0,
	       na ? (double)ad[na * 95 / 100] / 1e3 : 0.0, na ? (double)ad[na - 1] / 1e3 : 0.0,
	       na ? (double)d[na / 2] / 1e3 : 0.0);
	free(a);
	free(b);
	free(d);
	free(ad);
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static uint64_t late[MAX_IVL];

static int analyse(const char *path, uint64_t epoch, uint64_t T, double skip_ms, int nw,
                   const uint64_t (*w)[2])
{
	FILE *f = fopen(path, "r");
	uint64_t s, e, first = 0, last = 0, run = 0, inside = 0;
	size_t nl = 0, outside = 0, n = 0;

	if (f == NULL) {
		perror(path);
		return 1;
	}
	while (fscanf(f, "%" SCNu64 " %" SCNu64, &s, &e) == 2) {
		if (n++ == 0)
			first = s + (uint64_t)(skip_ms * 1e6);
		if (e <= first || s < epoch)
			continue;
		if (s < first)
			s = first;
		run += e - s;
		last = e;
		/* overlap with every window instance that [s, e) touches */
		for (uint64_t k = (s - epoch) / T; epoch + k * T < e; k++) {
			for (int i = 0; i < nw; i++) {
				uint64_t ws = epoch + k * T + w[i][0], we = ws + w[i][1];
				uint64_t lo = s > ws ? s : ws, hi = e < we ? e : we;
				if (hi > lo)
					inside += hi - lo;
			}
		}
		/* where the interval starts in the frame */
		uint64_t off = (s - epoch) % T;
		int hit = -1;
		for (int i = 0; i < nw; i++)
			if (off >= w[i][0] && off < w[i][0] + w[i][1])
				hit = i;
		if (hit < 0)
			outside++;
		else if (nl < MAX_IVL)
			late[nl++] = off - w[hit][0];
	}
	fclose(f);
	if (run == 0 || last <= first) {
		printf("run_ns=0 span_ns=0 share=0 inside=0 starts=0 late_med_us=0 late_p95_us=0 "
		       "outside=%zu\n",
		       outside);
		return 0;
	}
	qsort(late, nl, sizeof(late[0]), cmp_u64);
	printf("run_ns=%" PRIu64 " span_ns=%" PRIu64 " share=%.1f inside=%.4f starts=%zu "
	       "late_med_us=%.0f late_p95_us=%.0f outside=%zu\n",
	       run, last - first, 100.0 * (double)run / (double)(last - first),
	       (double)inside / (double)run, nl, nl ? (double)late[nl / 2] / 1e3 : 0.0,
	       nl ? (double)late[nl * 95 / 100] / 1e3 : 0.0, outside);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: runlog -d SECONDS -o FILE [-g GAP_US] [-u UNIT_US] [-l SO]\n"
	                "       runlog -a FILE -e EPOCH_NS -T PERIOD_NS [-s SKIP_MS] "
	                "PHASE_NS:LEN_NS ...\n"
	                "       runlog -c FILE_A FILE_B -G MIN_GAP_US [-s SKIP_MS] [-S]\n");
	exit(2);
}

struct opts {
	const char *out, *in, *ca, *lib;
	double secs, skip;
	uint64_t gap, unit, min_gap, epoch, T;
	int show;
};

static void parse(int argc, char **argv, struct opts *o)
{
	int c;

	while ((c = getopt(argc, argv, "d:o:g:u:l:a:e:T:s:c:G:S")) != -1) {
		switch (c) {
		case 'd':
			o->secs = atof(optarg);
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'g':
			o->gap = strtoull(optarg, NULL, 10) * 1000;
			break;
		case 'u':
			o->unit = strtoull(optarg, NULL, 10) * 1000;
			break;
		case 'l':
			o->lib = optarg;
			break;
		case 'a':
			o->in = optarg;
			break;
		case 'e':
			o->epoch = strtoull(optarg, NULL, 10);
			break;
		case 'T':
			o->T = strtoull(optarg, NULL, 10);
			break;
		case 's':
			o->skip = atof(optarg);
			break;
		case 'c':
			o->ca = optarg;
			break;
		case 'G':
			o->min_gap = strtoull(optarg, NULL, 10) * 1000;
			break;
		case 'S':
			o->show = 1;
			break;
		default:
			usage();
		}
	}
}

int main(int argc, char **argv)
{
	struct opts o = {.gap = 300000, .unit = 1000000};
	uint64_t w[MAX_WIN][2];
	struct sigaction sa;
	int nw = 0;

	parse(argc, argv, &o);
	if (o.in != NULL) {
		for (int i = optind; i < argc && nw < MAX_WIN; i++) {
			if (sscanf(argv[i], "%" SCNu64 ":%" SCNu64, &w[nw][0], &w[nw][1]) != 2)
				usage();
			nw++;
		}
		if (o.T == 0 || nw == 0)
			usage();
		return analyse(o.in, o.epoch, o.T, o.skip, nw, (const uint64_t(*)[2])w);
	}
	if (o.ca != NULL) {
		if (optind >= argc || o.min_gap == 0)
			usage();
		return compare(o.ca, argv[optind], o.min_gap, (uint64_t)(o.skip * 1e6), o.show);
	}
	if (o.out == NULL || o.secs <= 0 || o.secs > 600 || o.unit == 0 || o.gap == 0)
		usage();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	return record(o.secs, o.out, o.gap, o.unit, o.lib);
}
