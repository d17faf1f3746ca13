/*
 * spin: a CPU-bound test process for the integration tests and benchmarks.
 *
 *   spin [-t THREADS] [-d SECONDS] [-s RUN_MS:SLEEP_MS] [-T DELAY_MS]
 *
 *  -t N      N spinning threads in all (the main thread is one of them); default 1
 *  -d S      lifetime in seconds, default 60: the process always ends by itself (also
 *            when stopped and continued, or starved: every thread checks the clock)
 *  -s R:S    duty cycle: spin R ms of CPU time, then sleep S ms (a blocking task)
 *  -T MS     create one more spinning thread MS ms after start
 * Prints nothing; exits 0 at the end of its lifetime.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t end_ns;
static double run_ms, sleep_ms;

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Spins until the lifetime ends; with a duty cycle, sleeps between runs of CPU time. */
static void *spin(void *arg)
{
	volatile uint64_t x = 0;
	(void)arg;

	for (;;) {
		uint64_t start = now_ns(CLOCK_THREAD_CPUTIME_ID);
		for (;;) {
			for (int i = 0; i < 20000; i++)
				x += (uint64_t)i;
			(void)x; /* the sum is the point: CPU time, not a result */
			if (now_ns(CLOCK_MONOTONIC) >= end_ns)
				exit(0);
			if (sleep_ms > 0 &&
			    now_ns(CLOCK_THREAD_CPUTIME_ID) - start >= (uint64_t)(run_ms * 1e6))
				break;
		}
		struct timespec ts = {
		    .tv_sec = (time_t)(sleep_ms / 1000),
		    .tv_nsec = (long)((sleep_ms - 1000 * (time_t)(sleep_ms / 1000)) * 1e6)};
		nanosleep(&ts, NULL);
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: spin [-t THREADS] [-d SECONDS] [-s RUN_MS:SLEEP_MS] "
	                "[-T DELAY_MS]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double life = 60, delay_ms = -1;
	int threads = 1, ch;
	pthread_t tid;

	while ((ch = getopt(argc, argv, "t:d:s:T:")) != -1) {
		switch (ch) {
		case 't':
			threads = atoi(optarg);
			if (threads < 1 || threads > 256)
				usage();
			break;
		case 'd':
			life = atof(optarg);
			if (!(life > 0 && life <= 3600))
				usage();
			break;
		case 's':
			if (sscanf(optarg, "%lf:%lf", &run_ms, &sleep_ms) != 2 || run_ms <= 0 ||
			    sleep_ms < 0)
				usage();
			break;
		case 'T':
			delay_ms = atof(optarg);
			if (delay_ms < 0)
				usage();
			break;
		default:
			usage();
		}
	}
	end_ns = now_ns(CLOCK_MONOTONIC) + (uint64_t)(life * 1e9);
	alarm((unsigned)life + 2); /* a last resort if the clock checks never run */
	for (int i = 1; i < threads; i++)
		if (pthread_create(&tid, NULL, spin, NULL) != 0) {
			perror("spin: pthread_create");
			return 1;
		}
	if (delay_ms >= 0) {
		/* A thread that only waits, then starts one more spinner. */
		uint64_t at = now_ns(CLOCK_MONOTONIC) + (uint64_t)(delay_ms * 1e6);
		if (pthread_create(&tid, NULL, spin, NULL) != 0) /* the main's own spinner */
			return 1;
		struct timespec ts = {.tv_sec = (time_t)(at / 1000000000ULL),
		                      .tv_nsec = (long)(at % 1000000000ULL)};
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
		if (pthread_create(&tid, NULL, spin, NULL) != 0)
			return 1;
		for (;;) {
			if (now_ns(CLOCK_MONOTONIC) >= end_ns)
				exit(0);
			sleep(1);
		}
	}
	spin(NULL);
	return 0;
}
