/*
 * agent_load: a load of libapprate applications for the vsched-agent benchmark
 * (bench/agent_cpu.sh).
 *
 *   agent_load ENDPOINT NPROC REPORTS_PER_S SECONDS [JOB]
 *
 * Forks NPROC processes; each is a real libapprate application (its own handle, rank i of
 * job JOB, default "loadjob"). Every 1/REPORTS_PER_S s on an absolute schedule
 * (clock_nanosleep TIMER_ABSTIME) it counts 10 units and sends a report with
 * apprate_flush(), so the rate is exact (automatic reports, at the first call after each
 * interval, would come a little less often); the automatic interval is set to 1 s, so it
 * never fires first. For SECONDS.
 * Each child prints "LOAD rank=R units=U reports_sent=S reports_dropped=D"; the parent
 * waits for all and prints the totals. Bounded: every child stops after SECONDS.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "apprate.h"

#define NSEC_PER_SEC 1000000000LL

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * NSEC_PER_SEC + t.tv_nsec;
}

static int child(const char *ep, const char *job, int rank, int rate, double secs)
{
	struct apprate_opts o = APPRATE_OPTS_INIT;
	struct apprate_stats st;
	long long step = NSEC_PER_SEC / rate, next, end;
	apprate_t *r;

	prctl(PR_SET_PDEATHSIG, SIGTERM);
	o.endpoint = ep;
	o.rank = rank;
	o.report_ms = 1000;
	r = apprate_open(job, &o);
	if (!r) {
		fprintf(stderr, "agent_load: apprate_open: %s\n", apprate_strerror(-errno));
		return 1;
	}
	next = now_ns();
	end = next + (long long)(secs * 1e9);
	while (next < end) {
		struct timespec ts;
		next += step;
		ts.tv_sec = (time_t)(next / NSEC_PER_SEC);
		ts.tv_nsec = (long)(next % NSEC_PER_SEC);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		apprate_progress(r, 10);
		apprate_flush(r);
	}
	apprate_stats(r, &st);
	printf("LOAD rank=%d units=%llu reports_sent=%llu reports_dropped=%llu\n", rank,
	       (unsigned long long)st.units, (unsigned long long)st.reports_sent,
	       (unsigned long long)st.reports_dropped);
	fflush(stdout);
	apprate_close(&r);
	return 0;
}

int main(int argc, char **argv)
{
	int n, rate, failed = 0;
	double secs;
	const char *job;

	if (argc < 5 || argc > 6) {
		fprintf(stderr, "usage: agent_load ENDPOINT NPROC REPORTS_PER_S SECONDS [JOB]\n");
		return 2;
	}
	n = atoi(argv[2]);
	rate = atoi(argv[3]);
	secs = atof(argv[4]);
	job = argc > 5 ? argv[5] : "loadjob";
	if (n < 1 || n > 1000 || rate < 1 || rate > 1000 || !(secs > 0 && secs <= 600)) {
		fprintf(stderr, "agent_load: NPROC 1..1000, REPORTS_PER_S 1..1000, "
		                "SECONDS (0, 600]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0) {
			perror("agent_load: fork");
			failed = 1;
			break;
		}
		if (p == 0)
			_exit(child(argv[1], job, i, rate, secs));
	}
	for (;;) {
		int st;
		pid_t p = wait(&st);
		if (p < 0)
			break;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed = 1;
	}
	return failed;
}
