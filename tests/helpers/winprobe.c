/*
 * winprobe: a CPU-bound job rank that reports its progress through libapprate and records
 * when it actually had the CPU (CLOCK_REALTIME), and the comparison of two such records
 * (tests/integration/netns_aligned_windows.sh: do a job's windows start at the same time on
 * two nodes?).
 *
 *   winprobe -d SECONDS -o FILE [-g GAP_US] [-u UNIT_US] [-l LIBAPPRATE_SO]
 *       Opens libapprate from the environment (VSCHED_JOB, VSCHED_RANK, VSCHED_AGENT, as
 *       `vschedctl job run` sets them) and spins for SECONDS of wall time, reading
 *       CLOCK_REALTIME in a tight loop (like runlog). A jump of more than GAP_US (default 300)
 *       between two reads ends a run interval. Every UNIT_US (default 1000) of time it ran
 *       is one apprate_iteration(): its rate is 1e6 / UNIT_US per second at a full CPU, its
 *       share times that under a reservation. At the end (or at SIGTERM/SIGINT) writes
 *       "START_NS END_NS" per run interval to FILE and exits 0.
 *       libapprate is opened with dlopen (the test helpers link only vsched_common, ZeroMQ
 *       and threads): -l PATH, else $WINPROBE_APPRATE, else "libapprate.so.0". Without
 *       VSCHED_JOB it runs without reports.
 *
 *   winprobe -c FILE_A FILE_B -G MIN_GAP_US [-s SKIP_MS] [-S]
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
		lib = getenv("WINPROBE_APPRATE");
	if (lib == NULL || lib[0] == '\0')
		lib = "libapprate.so.0";
	h = dlopen(lib, RTLD_NOW);
	if (h == NULL) {
		fprintf(stderr, "winprobe: dlopen %s: %s\n", lib, dlerror());
		exit(1);
	}
	*(void **)&p_open = dlsym(h, "apprate_open");
	*(void **)&p_iteration = dlsym(h, "apprate_iteration");
	*(void **)&p_close = dlsym(h, "apprate_close");
	if (p_open == NULL || p_iteration == NULL || p_close == NULL) {
		fprintf(stderr, "winprobe: %s lacks the apprate_* symbols\n", lib);
		exit(1);
	}
	r = p_open(NULL, NULL);
	if (r == NULL) {
		perror("winprobe: apprate_open");
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
	fprintf(stderr, "winprobe: intervals=%zu units=%" PRIu64 "\n", n, units);
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

static void usage(void)
{
	fprintf(stderr, "usage: winprobe -d SECONDS -o FILE [-g GAP_US] [-u UNIT_US] [-l SO]\n"
	                "       winprobe -c FILE_A FILE_B -G MIN_GAP_US [-s SKIP_MS] [-S]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *out = NULL, *ca = NULL, *lib = NULL;
	double secs = 0, skip = 0;
	uint64_t gap = 300000, unit = 1000000, min_gap = 0;
	int c, show = 0;
	struct sigaction sa;

	while ((c = getopt(argc, argv, "d:o:g:u:l:c:G:s:S")) != -1) {
		switch (c) {
		case 'd':
			secs = atof(optarg);
			break;
		case 'o':
			out = optarg;
			break;
		case 'g':
			gap = strtoull(optarg, NULL, 10) * 1000;
			break;
		case 'u':
			unit = strtoull(optarg, NULL, 10) * 1000;
			break;
		case 'l':
			lib = optarg;
			break;
		case 'c':
			ca = optarg;
			break;
		case 'G':
			min_gap = strtoull(optarg, NULL, 10) * 1000;
			break;
		case 's':
			skip = atof(optarg);
			break;
		case 'S':
			show = 1;
			break;
		default:
			usage();
		}
	}
	if (ca != NULL) {
		if (optind >= argc || min_gap == 0)
			usage();
		return compare(ca, argv[optind], min_gap, (uint64_t)(skip * 1e6), show);
	}
	if (out == NULL || secs <= 0 || secs > 600 || unit == 0 || gap == 0)
		usage();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	return record(secs, out, gap, unit, lib);
}
