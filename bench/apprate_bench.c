/*
 * apprate_bench: cost per call of apprate_progress() (through the shared library, as an
 * application calls it), side by side in one run with the references of DESIGN.md §8:
 *   - a plain counter increment (the floor),
 *   - an atomic increment of a shared counter (what a naive thread-safe library does),
 *   - a pthread mutex + clock_gettime per call (Application Heartbeats' cost per beat).
 * Each is timed in batches of B calls (clock_gettime around a batch: 25 ns / B per call of
 * overhead), for S seconds, with 1 and 2 threads; the table shows median and p99 of the
 * per-batch ns/call and the mean over all calls (which includes the reports sent, once per
 * interval, to an in-process stand-in agent on an ipc endpoint).
 *
 * --syscalls MS runs only a hot loop for MS ms after open (apprate_progress, or with
 * --no-calls the same loop without calls) for bench/apprate.sh to count syscalls under
 * strace: the difference between the two runs is what the calls cost in syscalls.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "apprate.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- the kernels: n calls each ---- */

struct shared {
	apprate_t *r;
	_Atomic uint64_t atomic_ctr;
	pthread_mutex_t mu;
	uint64_t mu_ctr;
	uint64_t mu_last;
};

static void k_plain(struct shared *sh, volatile uint64_t *mine, int n)
{
	(void)sh;
	for (int i = 0; i < n; i++)
		(*mine)++;
}

static void k_atomic(struct shared *sh, volatile uint64_t *mine, int n)
{
	(void)mine;
	for (int i = 0; i < n; i++)
		atomic_fetch_add_explicit(&sh->atomic_ctr, 1, memory_order_relaxed);
}

static void k_mutex_clock(struct shared *sh, volatile uint64_t *mine, int n)
{
	(void)mine;
	for (int i = 0; i < n; i++) {
		struct timespec ts;
		pthread_mutex_lock(&sh->mu);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sh->mu_last = (uint64_t)ts.tv_nsec;
		sh->mu_ctr++;
		pthread_mutex_unlock(&sh->mu);
	}
}

static void k_apprate(struct shared *sh, volatile uint64_t *mine, int n)
{
	(void)mine;
	for (int i = 0; i < n; i++)
		apprate_progress(sh->r, 1);
}

typedef void (*kernel_fn)(struct shared *, volatile uint64_t *, int);

struct run {
	kernel_fn fn;
	struct shared *sh;
	int batch;
	uint64_t dur_ns;
	pthread_barrier_t *bar;
	double *samples; /* ns per call, one per batch */
	size_t nsamples, cap;
	uint64_t calls, total_ns;
};

static void *runner(void *arg)
{
	struct run *ru = arg;
	volatile uint64_t mine = 0;
	ru->fn(ru->sh, &mine, ru->batch); /* warm up: slot, caches, PLT */
	pthread_barrier_wait(ru->bar);
	uint64_t start = now_ns(), t0 = start;
	while (ru->nsamples < ru->cap) {
		ru->fn(ru->sh, &mine, ru->batch);
		uint64_t t1 = now_ns();
		ru->samples[ru->nsamples++] = (double)(t1 - t0) / ru->batch;
		ru->calls += (uint64_t)ru->batch;
		t0 = t1;
		if (t1 - start >= ru->dur_ns)
			break;
	}
	ru->total_ns = t0 - start;
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct result {
	double median, p99, mean;
	size_t nsamples;
};

static struct result measure(kernel_fn fn, struct shared *sh, int nthreads, int batch,
                             double seconds)
{
	struct run ru[2];
	pthread_t th[2];
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
	size_t cap = 2000000;
	for (int i = 0; i < nthreads; i++) {
		ru[i] = (struct run){.fn = fn,
		                     .sh = sh,
		                     .batch = batch,
		                     .dur_ns = (uint64_t)(seconds * 1e9),
		                     .bar = &bar,
		                     .samples = malloc(cap * sizeof(double)),
		                     .cap = cap};
		if (!ru[i].samples) {
			perror("malloc");
			exit(1);
		}
		pthread_create(&th[i], NULL, runner, &ru[i]);
	}
	size_t total = 0;
	uint64_t calls = 0;
	double ns = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(th[i], NULL);
		total += ru[i].nsamples;
		calls += ru[i].calls;
		ns += (double)ru[i].total_ns;
	}
	double *all = malloc(total * sizeof(double));
	size_t k = 0;
	for (int i = 0; i < nthreads; i++) {
		memcpy(all + k, ru[i].samples, ru[i].nsamples * sizeof(double));
		k += ru[i].nsamples;
		free(ru[i].samples);
	}
	qsort(all, total, sizeof(double), cmp_double);
	/* mean: each thread's time over its own calls, averaged over the threads. */
	struct result res = {.median = all[total / 2],
	                     .p99 = all[(size_t)((double)total * 0.99)],
	                     .mean = ns / (double)calls,
	                     .nsamples = total};
	free(all);
	pthread_barrier_destroy(&bar);
	return res;
}

/* ---- a stand-in agent: a PULL socket drained by a thread ---- */

struct agent {
	void *ctx, *pull;
	char dir[64], ep[128];
	pthread_t th;
	atomic_bool stop;
	uint64_t msgs, bytes;
};

static void *agent_loop(void *arg)
{
	struct agent *a = arg;
	uint8_t buf[256];
	while (!atomic_load(&a->stop)) {
		int n = zmq_recv(a->pull, buf, sizeof(buf), 0);
		if (n >= 0) {
			a->msgs++;
			a->bytes += (uint64_t)n;
		}
	}
	return NULL;
}

static void agent_start(struct agent *a)
{
	strcpy(a->dir, "/tmp/apprate-bench.XXXXXX");
	if (!mkdtemp(a->dir)) {
		perror("mkdtemp");
		exit(1);
	}
	snprintf(a->ep, sizeof(a->ep), "ipc://%s/agent.sock", a->dir);
	a->ctx = zmq_ctx_new();
	a->pull = zmq_socket(a->ctx, ZMQ_PULL);
	int t = 50;
	zmq_setsockopt(a->pull, ZMQ_RCVTIMEO, &t, sizeof(t));
	if (zmq_bind(a->pull, a->ep) != 0) {
		fprintf(stderr, "bind %s: %s\n", a->ep, zmq_strerror(zmq_errno()));
		exit(1);
	}
	pthread_create(&a->th, NULL, agent_loop, a);
}

static void agent_stop(struct agent *a)
{
	usleep(200000); /* let the last messages arrive */
	atomic_store(&a->stop, true);
	pthread_join(a->th, NULL);
	zmq_close(a->pull);
	zmq_ctx_term(a->ctx);
	char p[160];
	snprintf(p, sizeof(p), "%s/agent.sock", a->dir);
	unlink(p);
	rmdir(a->dir);
}

static apprate_t *open_or_die(const char *ep, unsigned ms)
{
	struct apprate_opts o = APPRATE_OPTS_INIT;
	o.endpoint = ep;
	o.rank = 0;
	o.report_ms = ms;
	apprate_t *r = apprate_open("bench", &o);
	if (!r) {
		fprintf(stderr, "apprate_open: %s\n", apprate_strerror(-errno));
		exit(1);
	}
	return r;
}

/* Hot loop only, for strace: same loop, same duration, with or without the calls. */
static int syscall_run(int ms, bool calls, unsigned interval_ms, const char *ep)
{
	apprate_t *r = open_or_die(ep, interval_ms);
	volatile uint64_t sink = 0;
	uint64_t end = now_ns() + (uint64_t)ms * 1000000ULL, n = 0;
	while (now_ns() < end) {
		for (int i = 0; i < 100000; i++) {
			if (calls)
				apprate_progress(r, 1);
			else
				sink++;
		}
		n += 100000;
	}
	struct apprate_stats st;
	apprate_stats(r, &st);
	apprate_close(&r);
	printf("loop_iterations %llu progress_calls %llu reports_sent %llu reports_dropped %llu "
	       "registers %llu\n",
	       (unsigned long long)n, (unsigned long long)(calls ? n : 0),
	       (unsigned long long)st.reports_sent, (unsigned long long)st.reports_dropped,
	       (unsigned long long)(st.registers_sent + st.registers_dropped));
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: apprate_bench [-s SECONDS] [-b BATCH] [-i INTERVAL_MS]\n"
	                "       apprate_bench --syscalls MS [--no-calls] [-i INTERVAL_MS] "
	                "[-e ENDPOINT]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double seconds = 0.5;
	int batch = 1000, sys_ms = 0;
	unsigned interval = 100;
	bool no_calls = false;
	const char *ep = NULL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-s") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "-b") && i + 1 < argc)
			batch = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-i") && i + 1 < argc)
			interval = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "-e") && i + 1 < argc)
			ep = argv[++i];
		else if (!strcmp(argv[i], "--syscalls") && i + 1 < argc)
			sys_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--no-calls"))
			no_calls = true;
		else
			usage();
	}
	if (batch < 1 || seconds <= 0 || interval < 1)
		usage();
	if (sys_ms > 0)
		return syscall_run(sys_ms, !no_calls, interval,
		                   ep ? ep : "ipc:///tmp/apprate-bench-no-agent.sock");

	struct agent a = {0};
	agent_start(&a);
	struct shared sh = {.mu = PTHREAD_MUTEX_INITIALIZER};
	sh.r = open_or_die(a.ep, interval);

	struct {
		const char *name;
		kernel_fn fn;
	} rows[] = {
	    {"plain counter increment", k_plain},
	    {"atomic increment (shared, lock add)", k_atomic},
	    {"mutex + clock_gettime (Heartbeats)", k_mutex_clock},
	    {"apprate_progress()", k_apprate},
	};
	printf("apprate_bench: batches of %d calls, %.2f s per cell, report interval %u ms, "
	       "agent on %s\n",
	       batch, seconds, interval, a.ep);
	printf("%-38s %27s   %27s\n", "ns per call", "1 thread", "2 threads");
	printf("%-38s %8s %8s %9s   %8s %8s %9s\n", "", "median", "p99", "mean", "median", "p99",
	       "mean");
	struct result app1 = {0}, app2 = {0};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct result r1 = measure(rows[i].fn, &sh, 1, batch, seconds);
		struct result r2 = measure(rows[i].fn, &sh, 2, batch, seconds);
		printf("%-38s %8.2f %8.2f %9.2f   %8.2f %8.2f %9.2f\n", rows[i].name, r1.median,
		       r1.p99, r1.mean, r2.median, r2.p99, r2.mean);
		if (rows[i].fn == k_apprate) {
			app1 = r1;
			app2 = r2;
		}
	}
	struct apprate_stats st;
	apprate_stats(sh.r, &st);

	/* Cost of one report (the slow path), measured on its own with apprate_flush. */
	enum { NFLUSH = 2000 };
	uint64_t flush_ns = 0;
	int flushed = 0;
	for (int i = 0; i < NFLUSH; i++) {
		apprate_progress(sh.r, 1);
		uint64_t t0 = now_ns();
		flushed += apprate_flush(sh.r) == 0;
		flush_ns += now_ns() - t0;
		if (i % 8 == 7)
			usleep(200); /* let the agent drain: stay under the high-water mark */
	}
	double flush_us = (double)flush_ns / NFLUSH / 1000.0;
	apprate_close(&sh.r);
	agent_stop(&a);

	printf("goal (DESIGN.md §8): apprate_progress median <= 10 ns, zero syscalls per call\n");
	printf("apprate_progress median: %.2f ns (1 thread), %.2f ns (2 threads) -> %s\n",
	       app1.median, app2.median,
	       app1.median <= 10.0 && app2.median <= 10.0 ? "goal met" : "goal MISSED");
	printf("reports during the timed cells: %llu sent, %llu dropped; wire bytes %llu "
	       "(REPORT = %d bytes; REGISTER %llu sent)\n",
	       (unsigned long long)st.reports_sent, (unsigned long long)st.reports_dropped,
	       (unsigned long long)st.wire_bytes, 32, (unsigned long long)st.registers_sent);
	printf("one report (apprate_flush, slow path + zmq_send): ~%.1f us; %d/%d sent\n", flush_us,
	       flushed, NFLUSH);
	printf("agent received %llu messages, %llu bytes: %.1f bytes per message\n",
	       (unsigned long long)a.msgs, (unsigned long long)a.bytes,
	       a.msgs ? (double)a.bytes / (double)a.msgs : 0.0);
	return 0;
}
