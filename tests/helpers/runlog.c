/*
 * runlog: a CPU-bound probe that records when it actually had the CPU, and the analysis of
 * such a record against a frame of windows (tests/integration/windows.sh, epoch.sh).
 *
 *   runlog -d SECONDS -o FILE [-g GAP_US]
 *       Spins for SECONDS (wall time), reading CLOCK_REALTIME in a tight loop. A jump of more
 *       than GAP_US (default 300) between two reads means it did not run in between (parked
 *       or preempted): one run interval ends, the next begins. At the end writes one line
 *       per run interval, "START_NS END_NS" (CLOCK_REALTIME), to FILE and exits 0.
 *
 *   runlog -a FILE -e EPOCH_NS -T PERIOD_NS [-s SKIP_MS] PHASE_NS:LEN_NS ...
 *       Reads such a file (ignoring the first SKIP_MS ms of it) and prints one line:
 *         run_ns=R span_ns=S share=P inside=F starts=N late_med_us=M late_p95_us=Q outside=O
 *       share = R/S in percent; inside = fraction of R spent inside the windows
 *       [EPOCH + PHASE + k*PERIOD, + LEN); for every interval start (the probe got the CPU
 *       after a gap), late = start - (EPOCH + PHASE + k*PERIOD) of the window holding it;
 *       starts outside every window are counted in outside.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_IVL 200000
#define MAX_WIN 16

static uint64_t rt_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t ivl[MAX_IVL][2];

static int record(double secs, const char *out, uint64_t gap)
{
	uint64_t end = mono_ns() + (uint64_t)(secs * 1e9);
	uint64_t prev = rt_ns(), start = prev;
	size_t n = 0;
	FILE *f;

	for (;;) {
		uint64_t now = rt_ns();

		if (now - prev > gap) {
			if (n < MAX_IVL) {
				ivl[n][0] = start;
				ivl[n][1] = prev;
				n++;
			}
			start = now;
		}
		prev = now;
		if (mono_ns() >= end)
			break;
	}
	if (n < MAX_IVL) {
		ivl[n][0] = start;
		ivl[n][1] = prev;
		n++;
	}
	f = fopen(out, "w");
	if (f == NULL) {
		perror(out);
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%" PRIu64 " %" PRIu64 "\n", ivl[i][0], ivl[i][1]);
	return fclose(f) == 0 ? 0 : 1;
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
	fprintf(stderr, "usage: runlog -d SECONDS -o FILE [-g GAP_US]\n"
	                "       runlog -a FILE -e EPOCH_NS -T PERIOD_NS [-s SKIP_MS] "
	                "PHASE_NS:LEN_NS ...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *out = NULL, *in = NULL;
	double secs = 0, skip = 0;
	uint64_t gap = 300000, epoch = 0, T = 0, w[MAX_WIN][2];
	int c, nw = 0;

	while ((c = getopt(argc, argv, "d:o:g:a:e:T:s:")) != -1) {
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
		case 'a':
			in = optarg;
			break;
		case 'e':
			epoch = strtoull(optarg, NULL, 10);
			break;
		case 'T':
			T = strtoull(optarg, NULL, 10);
			break;
		case 's':
			skip = atof(optarg);
			break;
		default:
			usage();
		}
	}
	if (in != NULL) {
		for (int i = optind; i < argc && nw < MAX_WIN; i++) {
			if (sscanf(argv[i], "%" SCNu64 ":%" SCNu64, &w[nw][0], &w[nw][1]) != 2)
				usage();
			nw++;
		}
		if (T == 0 || nw == 0)
			usage();
		return analyse(in, epoch, T, skip, nw, (const uint64_t(*)[2])w);
	}
	if (out == NULL || secs <= 0 || secs > 600)
		usage();
	return record(secs, out, gap);
}
