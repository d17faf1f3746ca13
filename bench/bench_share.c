/*
 * bench_share: CPU share delivered to processes over a fixed wall interval.
 *
 *   bench_share -d SECONDS PID...
 *
 * Reads the CPU time of every thread of each PID (/proc/PID/task/TID/schedstat, field 1,
 * ns on CPU), sleeps to an absolute CLOCK_MONOTONIC deadline SECONDS later, reads again and
 * prints one line per PID and a total:
 *
 *   PID CPU_NS WALL_NS SHARE_PCT      (SHARE_PCT = 100 * CPU_NS / WALL_NS, % of one CPU)
 *
 * The interval is timed in C, not by a shell, so that for a periodic reservation measured
 * over a whole number of periods the sampling jitter (tens of µs) and not the shell's
 * (milliseconds) bounds the error: error <= jitter / SECONDS.
 * Threads that appear or exit inside the interval are counted from/until that point.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "timeutil.h"

#define MAX_PIDS 64

/* Sum of the on-CPU ns of every thread of pid; -1 if the process is gone. */
static int64_t proc_cpu_ns(int pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	DIR *d = opendir(path);
	if (!d)
		return -1;
	int64_t sum = 0;
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] == '.')
			continue;
		char f[320];
		snprintf(f, sizeof(f), "/proc/%d/task/%s/schedstat", pid, de->d_name);
		FILE *fp = fopen(f, "r");
		if (!fp)
			continue;
		unsigned long long v;
		if (fscanf(fp, "%llu", &v) == 1)
			sum += (int64_t)v;
		fclose(fp);
	}
	closedir(d);
	return sum;
}

int main(int argc, char **argv)
{
	double secs = 3;
	int c;

	while ((c = getopt(argc, argv, "d:")) != -1) {
		switch (c) {
		case 'd':
			secs = atof(optarg);
			break;
		default:
			fprintf(stderr, "usage: bench_share -d SECONDS PID...\n");
			return 2;
		}
	}
	int npid = argc - optind;
	if (npid < 1 || npid > MAX_PIDS || !(secs > 0 && secs <= 300)) {
		fprintf(stderr, "usage: bench_share -d SECONDS(0-300] PID... (1-%d pids)\n",
		        MAX_PIDS);
		return 2;
	}
	int pid[MAX_PIDS];
	int64_t a[MAX_PIDS], b[MAX_PIDS];
	mono_ns ta[MAX_PIDS], tb[MAX_PIDS];
	for (int i = 0; i < npid; i++)
		pid[i] = atoi(argv[optind + i]);

	mono_ns start = mono_now();
	for (int i = 0; i < npid; i++) {
		mono_ns t = mono_now();
		a[i] = proc_cpu_ns(pid[i]);
		ta[i] = t + (mono_now() - t) / 2;
	}
	struct timespec until = ns_to_ts(start + (mono_ns)(secs * NSEC_PER_SEC));
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
	for (int i = 0; i < npid; i++) {
		mono_ns t = mono_now();
		b[i] = proc_cpu_ns(pid[i]);
		tb[i] = t + (mono_now() - t) / 2;
	}

	int64_t tot = 0;
	int rc = 0;
	for (int i = 0; i < npid; i++) {
		if (a[i] < 0 || b[i] < 0) {
			printf("%d gone\n", pid[i]);
			rc = 1;
			continue;
		}
		int64_t cpu = b[i] - a[i];
		uint64_t wall = tb[i] - ta[i];
		tot += cpu;
		printf("%d %" PRId64 " %" PRIu64 " %.3f\n", pid[i], cpu, wall,
		       100.0 * (double)cpu / (double)wall);
	}
	printf("total %" PRId64 " %" PRIu64 " %.3f\n", tot, (uint64_t)(tb[0] - ta[0]),
	       100.0 * (double)tot / (double)(tb[0] - ta[0]));
	return rc;
}
