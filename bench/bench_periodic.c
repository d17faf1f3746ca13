/*
 * bench_periodic: a periodic job that sleeps between jobs, with releases at an exact phase,
 * for the scheduler benchmarks and tests (the "sleeping periodic job" of bench/RESULTS.md).
 *
 *   bench_periodic -p PERIOD_US -j JOB_US -d SECONDS [-a ANCHOR_NS] [-P PHASE_US]
 *                  [-k CHUNKS -s SLEEP_US] [-D RUNTIME_US] [-x] [-w WARMUP_MS] [-o FILE]
 *
 * Job k is released at A + PHASE + k * PERIOD (absolute CLOCK_MONOTONIC timer, no
 * re-anchoring after an overrun), where A is ANCHOR_NS given as CLOCK_REALTIME ns (as
 * `vschedctl epoch` takes it, so both can name the same instant; default: the next whole
 * second). A job needs JOB_US of the thread's own CPU time (CLOCK_THREAD_CPUTIME_ID, so a
 * slow or preempted vCPU does not shorten it), run in CHUNKS pieces with SLEEP_US of sleep
 * between them (default one piece: a job that wakes once per period). Its deadline is its
 * release + PERIOD; a job that ends later is a miss.
 *
 *   -D RUNTIME_US  run the job thread itself under SCHED_DEADLINE (runtime, deadline =
 *                  period = PERIOD_US), the kernel's reference, set with sched_setattr
 *   -x             start a helper thread that only sleeps (like rt-app's main thread), so
 *                  the process has two threads as most real jobs do
 *   -w WARMUP_MS   jobs released in the first WARMUP_MS are not counted (default 200)
 *   -o FILE        also write each counted job to FILE at the end, one line each:
 *                  "release_offset_us wake_us resp_us" (release offset from the first one)
 *
 * Output, one line on stdout at the end:
 *   jobs=N misses=M miss_pct=X resp_med_us=.. resp_p99_us=.. late_max_us=.. wake_med_us=..
 *   cpu_win_max_us=.. cpu_win_p99_us=.. cpu_pct=.. held=H held_pct=Y
 * resp = end - release; wake = first instruction after the timer - release; held = misses
 * of jobs that woke within PERIOD/10 of their release: missed while they could run, not
 * because they started late (a late timer, or the job before still running: one miss of an
 * absolute-timer job makes the next ones start late); cpu_win_max =
 * the most CPU the job thread received in any PERIOD-long stretch of wall time (a lower
 * bound from the chunk ends, at most one chunk short: the bandwidth a reservation let
 * through); cpu_win_p99 = the 99th percentile of such stretches; cpu_pct = the job thread's CPU
 * over the counted part of the run, % of one CPU. Bounded: SECONDS at most 600; exits 0, or 2 on
 * bad arguments (one line on stderr).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "timeutil.h"

#define MAX_SAMPLES (1 << 20) /* chunk ends recorded for cpu_win_max */

struct opts {
	uint64_t period, job, phase, sleep, runtime, warmup;
	uint64_t anchor_rt; /* CLOCK_REALTIME ns, 0: next whole second */
	double secs;
	unsigned chunks;
	bool helper;
	const char *trace; /* -o */
};

struct sample {
	mono_ns wall;
	uint64_t cpu;
};

static struct sample *samples;
static size_t nsamples;

static void usage(const char *why)
{
	fprintf(stderr,
	        "bench_periodic: %s\nusage: bench_periodic -p PERIOD_US -j JOB_US -d SECONDS "
	        "[-a ANCHOR_NS] [-P PHASE_US] [-k CHUNKS -s SLEEP_US] [-D RUNTIME_US] [-x] "
	        "[-w WARMUP_MS]\n",
	        why);
	exit(2);
}

static uint64_t num(const char *s, const char *what, uint64_t lo, uint64_t hi)
{
	char *end, msg[96];
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi) {
		snprintf(msg, sizeof(msg), "%s '%s': expected an integer in [%llu, %llu]", what, s,
		         (unsigned long long)lo, (unsigned long long)hi);
		usage(msg);
	}
	return v;
}

static void parse(int argc, char **argv, struct opts *o)
{
	int c;

	*o = (struct opts){.chunks = 1, .warmup = 200 * NSEC_PER_MSEC};
	while ((c = getopt(argc, argv, "p:j:d:a:P:k:s:D:xw:o:")) != -1) {
		switch (c) {
		case 'p':
			o->period = num(optarg, "-p", 50, 10000000) * NSEC_PER_USEC;
			break;
		case 'j':
			o->job = num(optarg, "-j", 1, 10000000) * NSEC_PER_USEC;
			break;
		case 'd':
			o->secs = (double)num(optarg, "-d", 1, 600);
			break;
		case 'a':
			o->anchor_rt = num(optarg, "-a", 1, UINT64_MAX);
			break;
		case 'P':
			o->phase = num(optarg, "-P", 0, 10000000) * NSEC_PER_USEC;
			break;
		case 'k':
			o->chunks = (unsigned)num(optarg, "-k", 1, 10000);
			break;
		case 's':
			o->sleep = num(optarg, "-s", 0, 10000000) * NSEC_PER_USEC;
			break;
		case 'D':
			o->runtime = num(optarg, "-D", 1, 10000000) * NSEC_PER_USEC;
			break;
		case 'x':
			o->helper = true;
			break;
		case 'w':
			o->warmup = num(optarg, "-w", 0, 600000) * NSEC_PER_MSEC;
			break;
		case 'o':
			o->trace = optarg;
			break;
		default:
			usage("unknown option");
		}
	}
	if (optind != argc || !o->period || !o->job || !o->secs)
		usage("-p, -j and -d are required");
	if (o->phase >= o->period)
		usage("-P must be below the period");
	if (o->runtime && o->runtime > o->period)
		usage("-D must not exceed the period");
}

/* Runs until the thread's CPU clock has advanced by ns; records the end as a sample. */
static void burn(uint64_t ns)
{
	uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns, c;
	volatile uint64_t sink = 0;

	do {
		for (int i = 0; i < 256; i++)
			sink += (uint64_t)i;
		c = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	} while (c < end);
	(void)sink; /* the loop is the point: CPU time, not a result */
	if (nsamples < MAX_SAMPLES)
		samples[nsamples++] = (struct sample){mono_now(), c};
}

static void sleep_until(mono_ns t)
{
	struct timespec ts = ns_to_ts(t);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void *helper_main(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* struct sched_attr of the kernel ABI (sched_setattr has no glibc wrapper here). */
struct dl_attr {
	uint32_t size, policy;
	uint64_t flags;
	int32_t nice;
	uint32_t priority;
	uint64_t runtime, deadline, period;
};

static void set_deadline(const struct opts *o)
{
	struct dl_attr a = {.size = sizeof(a),
	                    .policy = 6 /* SCHED_DEADLINE */,
	                    .runtime = o->runtime,
	                    .deadline = o->period,
	                    .period = o->period};

	if (syscall(SYS_sched_setattr, 0, &a, 0) < 0) {
		perror("bench_periodic: sched_setattr SCHED_DEADLINE");
		exit(1);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static double pct_us(uint64_t *v, size_t n, double p)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return (double)v[(size_t)((double)(n - 1) * p / 100 + 0.5)] / 1e3;
}

/*
 * CPU received in PERIOD-long stretches of wall time, as lower bounds from the chunk ends:
 * for each sample hi, the CPU between the earliest sample j that lies within w before it and
 * hi (all of it inside the stretch; the true figure is at most one chunk more). Sets *max to
 * the worst stretch and *p99 to the 99th percentile over the stretches ending at each sample
 * (one host hiccup moves the max, not the p99; a reservation that lets too much through
 * moves both).
 */
static void cpu_windows(uint64_t w, uint64_t *max, double *p99_us)
{
	uint64_t best = 0, *win = calloc(nsamples ? nsamples : 1, sizeof(*win));
	size_t j = 0;

	for (size_t hi = 0; hi < nsamples; hi++) {
		while (samples[hi].wall - samples[j].wall > w)
			j++;
		uint64_t c = samples[hi].cpu - samples[j].cpu;
		if (win)
			win[hi] = c;
		if (c > best)
			best = c;
	}
	*max = best;
	*p99_us = win ? pct_us(win, nsamples, 99) : (double)best / 1e3;
	free(win);
}

/* -o: the counted jobs (consecutive releases, one period apart), one line each. */
static void write_trace(const char *path, uint64_t period, const uint64_t *wake,
                        const uint64_t *resp, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		fprintf(stderr, "bench_periodic: -o %s: %s\n", path, strerror(errno));
		return;
	}
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%.1f %.1f %.1f\n", (double)(i * period) / 1e3, (double)wake[i] / 1e3,
		        (double)resp[i] / 1e3);
	fclose(f);
}

int main(int argc, char **argv)
{
	struct opts o;
	pthread_t th;

	parse(argc, argv, &o);
	samples = calloc(MAX_SAMPLES, sizeof(*samples));
	if (!samples)
		return 1;
	if (o.helper && pthread_create(&th, NULL, helper_main, NULL) != 0)
		return 1;
	if (o.runtime)
		set_deadline(&o);

	/* CLOCK_REALTIME anchor -> monotonic (both read back to back). */
	uint64_t rt = clock_ns(CLOCK_REALTIME);
	mono_ns now = mono_now();
	uint64_t anchor_rt = o.anchor_rt ? o.anchor_rt : (rt / NSEC_PER_SEC + 1) * NSEC_PER_SEC;
	mono_ns base = now + (anchor_rt - rt) + o.phase; /* modular: may lie in the past */
	/* First release: the first k with release >= now + 10 ms. */
	mono_ns first = now + 10 * NSEC_PER_MSEC;
	uint64_t k0 = mono_before(base, first) ? (first - base + o.period - 1) / o.period : 0;
	mono_ns rel = base + k0 * o.period, stop = now + (mono_ns)(o.secs * NSEC_PER_SEC);
	mono_ns count_from = now + o.warmup;
	size_t cap = (size_t)(o.secs * NSEC_PER_SEC / (double)o.period) + 2, n = 0;
	uint64_t *resp = calloc(cap, sizeof(*resp)), *wake = calloc(cap, sizeof(*wake));
	uint64_t misses = 0, held = 0, late_max = 0, cpu0 = 0;
	mono_ns wall0 = 0;

	if (!resp || !wake)
		return 1;
	for (; mono_before(rel, stop) && n < cap; rel += o.period) {
		sleep_until(rel);
		mono_ns w = mono_now();
		for (unsigned c = 0; c < o.chunks; c++) {
			burn(o.job / o.chunks);
			if (c + 1 < o.chunks && o.sleep)
				sleep_until(mono_now() + o.sleep);
		}
		mono_ns end = mono_now();
		if (mono_before(rel, count_from))
			continue;
		if (!wall0) {
			wall0 = rel;
			cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		}
		resp[n] = end - rel;
		wake[n] = w - rel;
		if (end - rel > o.period) {
			misses++;
			held += w - rel <= o.period / 10;
			if (end - rel - o.period > late_max)
				late_max = end - rel - o.period;
		}
		n++;
	}
	if (o.trace)
		write_trace(o.trace, o.period, wake, resp, n); /* (before pct_us sorts them) */
	uint64_t cw;
	double cw99;
	cpu_windows(o.period, &cw, &cw99);
	mono_ns wall1 = mono_now();
	double cpu_pct = wall0 && mono_before(wall0, wall1)
	                     ? 100.0 * (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0) /
	                           (double)(wall1 - wall0)
	                     : 0.0;
	printf("jobs=%zu misses=%llu miss_pct=%.2f resp_med_us=%.1f resp_p99_us=%.1f "
	       "late_max_us=%.1f wake_med_us=%.1f cpu_win_max_us=%.1f cpu_win_p99_us=%.1f "
	       "cpu_pct=%.2f held=%llu held_pct=%.2f\n",
	       n, (unsigned long long)misses, n ? 100.0 * (double)misses / (double)n : 0.0,
	       pct_us(resp, n, 50), pct_us(resp, n, 99), (double)late_max / 1e3,
	       pct_us(wake, n, 50), (double)cw / 1e3, cw99, cpu_pct, (unsigned long long)held,
	       n ? 100.0 * (double)held / (double)n : 0.0);
	free(resp);
	free(wake);
	return 0;
}
