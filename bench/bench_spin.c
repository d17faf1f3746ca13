/*
 * bench_spin: a single-threaded busy loop with a bounded lifetime, for the scheduler
 * benchmarks. It spins in the main thread only, so it can run under SCHED_DEADLINE (a
 * deadline task may not create threads), and it is the same program on the vsched side, so
 * both schedulers serve exactly the same workload.
 *
 *   bench_spin -d SECONDS     spin for SECONDS of wall time (default 10, at most 600), exit 0
 *
 * The lifetime is checked against CLOCK_MONOTONIC every few thousand iterations, so the
 * program ends on time even when it is starved; a parked (stopped) spinner ends as soon as
 * it is continued after its deadline.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "timeutil.h"

int main(int argc, char **argv)
{
	double secs = 10;
	int c;

	while ((c = getopt(argc, argv, "d:")) != -1) {
		switch (c) {
		case 'd':
			secs = atof(optarg);
			break;
		default:
			fprintf(stderr, "usage: bench_spin [-d SECONDS]\n");
			return 2;
		}
	}
	if (!(secs > 0 && secs <= 600)) {
		fprintf(stderr, "bench_spin: -d must be in (0, 600]\n");
		return 2;
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
