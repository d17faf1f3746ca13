/*
 * bench_spin: a busy loop with a bounded lifetime, for the scheduler benchmarks. It spins in
 * the main thread only, so it can run under SCHED_DEADLINE (a deadline task may not create
 * threads), and it is the same program on the vsched side, so both schedulers serve exactly
 * the same workload.
 *
 *   bench_spin -d SECONDS     spin for SECONDS of wall time (default 10, at most 600), exit 0
 *   bench_spin -x             also start a helper thread that only sleeps, as real programs
 *                             have (a libapprate rank has ZeroMQ's): vsched then reserves a
 *                             multi-threaded process; SCHED_DEADLINE the main thread only
 *
 * The lifetime is checked against CLOCK_MONOTONIC every few thousand iterations, so the
 * program ends on time even when it is starved; a parked (stopped) spinner ends as soon as
 * it is continued after its deadline.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "timeutil.h"

static void *helper_main(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	double secs = 10;
	bool helper = false;
	pthread_t th;
	int c;

	while ((c = getopt(argc, argv, "d:x")) != -1) {
		switch (c) {
		case 'd':
			secs = atof(optarg);
			break;
		case 'x':
			helper = true;
			break;
		default:
			fprintf(stderr, "usage: bench_spin [-d SECONDS] [-x]\n");
			return 2;
		}
	}
	if (!(secs > 0 && secs <= 600)) {
		fprintf(stderr, "bench_spin: -d must be in (0, 600]\n");
		return 2;
	}
	if (helper && pthread_create(&th, NULL, helper_main, NULL) != 0) {
		fprintf(stderr, "bench_spin: cannot start the helper thread\n");
		return 1;
	}

	mono_ns end = mono_now() + (mono_ns)(secs * NSEC_PER_SEC);
	volatile uint64_t sink = 0;
	for (;;) {
		for (int i = 0; i < 4096; i++)
			sink += (uint64_t)i;
		if (!mono_before(mono_now(), end))
			break;
	}
	(void)sink; /* the loop is the point: CPU time, not a result */
	return 0;
}
