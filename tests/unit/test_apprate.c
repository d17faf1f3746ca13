/*
 * Unit tests of libapprate against a stand-in agent: a ZeroMQ PULL socket bound to an ipc
 * endpoint in a private temporary directory. Checks what an agent relies on: REGISTER
 * first, reports <= 32 bytes with increasing sequence numbers, units that add up exactly,
 * rates that match the progress made, no blocking and no output without an agent, exact
 * totals from several threads, and refusal of bad arguments.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include <cmocka.h>

#include "apprate.h"
#include "apprate_int.h"
#include "proto_apprate.h"
#include "timeutil.h"

#define MAXMSG 4096

struct agent {
	char dir[64];
	char endpoint[128];
	void *ctx, *pull;
	struct aproto_msg msgs[MAXMSG];
	size_t lens[MAXMSG];
	int n;
};

static struct agent *agent_start(void)
{
	struct agent *a = calloc(1, sizeof(*a));
	assert_non_null(a);
	strcpy(a->dir, "/tmp/apprate-test.XXXXXX");
	assert_non_null(mkdtemp(a->dir));
	snprintf(a->endpoint, sizeof(a->endpoint), "ipc://%s/agent.sock", a->dir);
	a->ctx = zmq_ctx_new();
	a->pull = zmq_socket(a->ctx, ZMQ_PULL);
	int t = 100;
	zmq_setsockopt(a->pull, ZMQ_RCVTIMEO, &t, sizeof(t));
	assert_int_equal(zmq_bind(a->pull, a->endpoint), 0);
	return a;
}

/*
 * Receives until a FINAL report arrived for nfinal handles, or 3 s without messages after
 * *closed is true (NULL: from the start), or 120 s in all. Returns the number of FINAL
 * reports still missing, or -1 after a bad frame (in why). Does not assert, so that it can
 * run in a thread of its own.
 */
static int agent_receive(struct agent *a, int nfinal, const atomic_bool *closed, char *why,
                         size_t whylen)
{
	uint64_t start = mono_now(), quiet_since = start;
	while (nfinal > 0 && mono_now() - start < 120 * NSEC_PER_SEC) {
		if (closed && !atomic_load(closed))
			quiet_since = mono_now();
		else if (mono_now() - quiet_since > 3 * NSEC_PER_SEC)
			break;
		uint8_t buf[256];
		int len = zmq_recv(a->pull, buf, sizeof(buf), 0);
		if (len < 0)
			continue;
		quiet_since = mono_now();
		if (a->n >= MAXMSG || len > (int)sizeof(buf)) {
			snprintf(why, whylen, "too many or too long messages");
			return -1;
		}
		if (aproto_decode(buf, (size_t)len, &a->msgs[a->n], why, whylen))
			return -1;
		a->lens[a->n] = (size_t)len;
		if (a->msgs[a->n].type == APROTO_REPORT &&
		    (a->msgs[a->n].u.rep.flags & APROTO_F_FINAL))
			nfinal--;
		a->n++;
	}
	return nfinal;
}

static void agent_collect(struct agent *a, int nfinal)
{
	char why[128] = "";
	int left = agent_receive(a, nfinal, NULL, why, sizeof(why));
	if (left < 0)
		fail_msg("agent got a bad frame: %s", why);
	assert_int_equal(left, 0);
}

/* The agent receiving in a thread while the application runs, as a real agent does. */
struct collector {
	pthread_t th;
	struct agent *a;
	atomic_bool closed; /* set once the application closed its handle */
	int left;
	char why[128];
};

static void *collector_main(void *arg)
{
	struct collector *c = arg;
	c->left = agent_receive(c->a, 1, &c->closed, c->why, sizeof(c->why));
	return NULL;
}

static void agent_stop(struct agent *a)
{
	zmq_close(a->pull);
	zmq_ctx_term(a->ctx);
	char path[160];
	snprintf(path, sizeof(path), "%s/agent.sock", a->dir);
	unlink(path);
	rmdir(a->dir);
	free(a);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = ns_to_ts(ns);
	while (nanosleep(&ts, &ts) != 0)
		;
}

/*
 * apprate_flush until a report went out: right after open the connection may still be
 * handshaking (longer on a loaded machine); units of failed attempts carry over.
 */
static void flush_sent(apprate_t *r)
{
	for (int i = 0; i < 1000; i++) {
		if (apprate_flush(r) == 0)
			return;
		sleep_ns(5 * NSEC_PER_MSEC);
	}
	fail_msg("no report could be sent in 5 s");
}

static apprate_t *open_to(struct agent *a, const char *job, int rank, unsigned ms)
{
	struct apprate_opts o = APPRATE_OPTS_INIT;
	o.endpoint = a->endpoint;
	o.rank = rank;
	o.report_ms = ms;
	apprate_t *r = apprate_open(job, &o);
	if (!r)
		fail_msg("apprate_open: %s", apprate_strerror(-errno));
	return r;
}

/*
 * Progress at a known rate (1 unit per microsecond of wall time) for 400 ms with 20 ms
 * reports. The agent must see REGISTER first, then reports of exactly 32 bytes whose
 * sequence numbers increase by one, whose units add up to what was counted, whose rate is
 * the rate we made progress at, and whose intervals respect "at most once per interval".
 */
static void test_rates(void **state)
{
	(void)state;
	struct agent *a = agent_start();
	uint64_t t_open = mono_now();
	apprate_t *r = open_to(a, "rates-job", 3, 20);
	/* Wait for the connection (slow on a loaded machine or under valgrind), so that the
	 * timed part below is about rates, not about connecting. */
	flush_sent(r);
	uint64_t t0 = mono_now(), counted = 0;
	while (mono_now() - t0 < 400 * NSEC_PER_MSEC) {
		uint64_t want = (mono_now() - t0) / NSEC_PER_USEC;
		assert_int_equal(apprate_progress(r, want - counted), 0);
		counted = want;
		sleep_ns(100 * NSEC_PER_USEC);
	}
	struct apprate_stats st;
	assert_int_equal(apprate_stats(r, &st), 0);
	assert_int_equal(st.units, counted);
	assert_int_equal(st.units_dropped, 0);
	uint32_t handle = st.handle;
	apprate_close(&r);
	uint64_t t_close = mono_now();
	assert_null(r);
	agent_collect(a, 1);

	assert_true(a->n >= 2);
	assert_int_equal(a->msgs[0].type, APROTO_REGISTER);
	assert_int_equal(a->lens[0], APROTO_REGISTER_BASE + strlen("rates-job"));
	assert_string_equal(a->msgs[0].u.reg.job, "rates-job");
	assert_int_equal(a->msgs[0].u.reg.rank, 3);
	assert_int_equal(a->msgs[0].u.reg.pid, getpid());
	assert_int_equal(a->msgs[0].u.reg.handle, handle);
	assert_int_equal(a->msgs[0].u.reg.interval_ns, 20 * NSEC_PER_MSEC);
	assert_int_equal(a->msgs[0].u.reg.reason, APROTO_REG_OPEN);

	uint64_t sum = 0, span = 0;
	int64_t last_seq = -1;
	int nrep = 0, good_rate = 0, nseen = 0;
	for (int i = 1; i < a->n; i++) {
		if (a->msgs[i].type != APROTO_REPORT)
			continue;
		const struct aproto_report *p = &a->msgs[i].u.rep;
		assert_true(a->lens[i] <= 32);
		assert_int_equal(p->handle, handle);
		assert_int_equal(p->rank, 3);
		/* Increasing; consecutive unless an attempt was dropped (units carried). */
		assert_true((int64_t)p->seq > last_seq);
		if (st.reports_dropped == 0)
			assert_int_equal(p->seq, last_seq + 1);
		last_seq = p->seq;
		sum += p->units;
		span += p->interval_ns;
		if ((p->flags & APROTO_F_FINAL) || nseen++ == 0) /* the first: warm-up flush */
			continue;
		nrep++;
		/* At most once per interval; late by at most a coarse tick plus scheduling. */
		assert_true(p->interval_ns >= 20 * NSEC_PER_MSEC);
		/* units per us of the interval: 1.0 within 15 % (sleep granularity). */
		double rate = (double)p->units / ((double)p->interval_ns / 1000.0);
		if (rate > 0.85 && rate < 1.15)
			good_rate++;
	}
	assert_int_equal(sum, counted);
	/* 400 ms at one report per 20..(20 + tick) ms: at most 20, and about 17 unless the
	 * machine starves this thread (then fewer, each still with the right rate). */
	assert_true(nrep >= 5 && nrep <= 20);
	/* A loaded CI machine may stall a report or two; most must show the right rate. */
	assert_true(good_rate >= nrep - 2);
	/* The intervals tile the time from open to close, without gaps or overlaps. */
	assert_true(span >= 400 * NSEC_PER_MSEC && span <= t_close - t_open);
	agent_stop(a);
}

/*
 * A rank that registered but has counted nothing has no rate (not a rate of 0): calls with
 * 0 units over several intervals send REGISTER and no REPORT; the first report, once units
 * are counted, covers the time since open, so its rate is the average since open. A handle
 * closed before counting anything sends no FINAL report either.
 */
static void test_no_rate_before_first_unit(void **state)
{
	(void)state;
	struct agent *a = agent_start();
	uint64_t t_open = mono_now();
	apprate_t *r = open_to(a, "norate-job", 1, 10);
	uint64_t t0 = mono_now();
	while (mono_now() - t0 < 100 * NSEC_PER_MSEC) { /* ten intervals, nothing counted */
		apprate_progress(r, 0);
		sleep_ns(NSEC_PER_MSEC);
	}
	struct apprate_stats st;
	assert_int_equal(apprate_stats(r, &st), 0);
	assert_true(st.registers_sent >= 1);
	assert_int_equal(st.reports_sent + st.reports_dropped, 0);
	assert_int_equal(apprate_progress(r, 7), 0);
	flush_sent(r);
	uint32_t handle = st.handle;
	apprate_close(&r);
	agent_collect(a, 1);
	/* The 7 units first, then FINAL. If this thread was starved for a whole interval,
	 * apprate_progress(r, 7) already sent the 7 and the flush sent an empty report. */
	int nrep = 0, nfinal = 0;
	for (int i = 0; i < a->n; i++) {
		if (a->msgs[i].type != APROTO_REPORT)
			continue;
		const struct aproto_report *p = &a->msgs[i].u.rep;
		assert_int_equal(p->handle, handle);
		assert_int_equal(nfinal, 0); /* nothing after FINAL */
		if (p->flags & APROTO_F_FINAL)
			nfinal++;
		if (nrep++ == 0) {
			assert_int_equal(p->units, 7);
			assert_true(p->interval_ns >= 100 * NSEC_PER_MSEC);
			assert_true(p->interval_ns <= mono_now() - t_open);
		} else {
			assert_int_equal(p->units, 0);
		}
	}
	assert_int_equal(nfinal, 1);
	assert_true(nrep == 2 || nrep == 3);
	agent_stop(a);

	a = agent_start();
	r = open_to(a, "silent-job", 2, 10);
	for (int i = 0; i < 30; i++) {
		apprate_progress(r, 0);
		sleep_ns(NSEC_PER_MSEC);
	}
	apprate_close(&r);
	agent_receive(a, 1, NULL, (char[8]){0}, 8);
	for (int i = 0; i < a->n; i++)
		assert_int_equal(a->msgs[i].type, APROTO_REGISTER);
	agent_stop(a);
}

/*
 * aprt_register_now (libapprate-mpi at MPI_Init) sends the REGISTER on a connected handle
 * whatever the due time, and no REPORT before the first unit. The due time is set ahead
 * here as the coarse clock leaves it for up to a tick after the open: apprate_progress(r, 0)
 * then does not register, and a short MPI run could end before that tick.
 */
static void test_register_now(void **state)
{
	(void)state;
	struct agent *a = agent_start();
	apprate_t *r = open_to(a, "init-job", 3, 100);
	struct apprate_stats st;

	assert_true(aprt_transport_wait_writable(r, 5000));
	atomic_store(&r->next_due, mono_now() + 10 * NSEC_PER_SEC);
	apprate_progress(r, 0);
	assert_int_equal(apprate_stats(r, &st), 0);
	assert_int_equal(st.registers_sent + st.registers_dropped, 0);

	assert_int_equal(aprt_register_now(r), 1); /* registered, no report due */
	assert_int_equal(apprate_stats(r, &st), 0);
	assert_int_equal(st.registers_sent, 1);
	assert_int_equal(st.reports_sent + st.reports_dropped, 0);
	uint32_t handle = st.handle;
	apprate_close(&r);

	uint8_t buf[256];
	int len = -1;
	for (int i = 0; i < 50 && len < 0; i++) /* 5 s at most (100 ms receive timeout) */
		len = zmq_recv(a->pull, buf, sizeof(buf), 0);
	assert_true(len > 0 && len <= (int)sizeof(buf));
	struct aproto_msg m;
	char why[128];
	assert_int_equal(aproto_decode(buf, (size_t)len, &m, why, sizeof(why)), 0);
	assert_int_equal(m.type, APROTO_REGISTER);
	assert_int_equal(m.u.reg.handle, handle);
	assert_int_equal(m.u.reg.rank, 3);
	assert_string_equal(m.u.reg.job, "init-job");
	agent_stop(a);
}

/* Bytes self-reported by the application arrive in BYTES with the report's sequence. */
static void test_bytes(void **state)
{
	(void)state;
	struct agent *a = agent_start();
	apprate_t *r = open_to(a, "bytes-job", 0, 20);
	flush_sent(r); /* connected: the test is about what is sent, not about connecting */
	for (int i = 0; i < 10; i++) {
		assert_int_equal(apprate_bytes(r, 1000, 10), 0);
		assert_int_equal(apprate_iteration(r), 0);
	}
	sleep_ns(30 * NSEC_PER_MSEC);
	assert_int_equal(apprate_bytes(r, 1, 2), 0);
	flush_sent(r);
	apprate_close(&r);
	agent_collect(a, 1);
	uint64_t mem = 0, net = 0, units = 0;
	int found = 0;
	for (int i = 0; i < a->n; i++) {
		if (a->msgs[i].type == APROTO_REPORT)
			units += a->msgs[i].u.rep.units;
		if (a->msgs[i].type != APROTO_BYTES)
			continue;
		/* Sent right after the REPORT of the same interval. */
		assert_true(i > 0);
		assert_int_equal(a->msgs[i - 1].type, APROTO_REPORT);
		assert_int_equal(a->msgs[i - 1].u.rep.seq, a->msgs[i].u.bytes.seq);
		assert_int_equal(a->lens[i], 32);
		mem += a->msgs[i].u.bytes.mem_bytes;
		net += a->msgs[i].u.bytes.net_bytes;
		found++;
	}
	assert_true(found >= 1);
	assert_int_equal(mem, 10001);
	assert_int_equal(net, 102);
	assert_int_equal(units, 10);
	agent_stop(a);
}

/* Configuration from the environment when opts is NULL. */
static void test_env(void **state)
{
	(void)state;
	struct agent *a = agent_start();
	setenv("VSCHED_JOB", "env-job", 1);
	setenv("VSCHED_RANK", "7", 1);
	setenv("VSCHED_AGENT", a->endpoint, 1);
	setenv("VSCHED_REPORT_MS", "25", 1);
	apprate_t *r = apprate_open(NULL, NULL);
	assert_non_null(r);
	flush_sent(r);
	apprate_progress(r, 5);
	apprate_close(&r);
	agent_collect(a, 1);
	assert_int_equal(a->msgs[0].type, APROTO_REGISTER);
	assert_string_equal(a->msgs[0].u.reg.job, "env-job");
	assert_int_equal(a->msgs[0].u.reg.rank, 7);
	assert_int_equal(a->msgs[0].u.reg.interval_ns, 25 * NSEC_PER_MSEC);
	/* The job argument wins over $VSCHED_JOB. */
	r = apprate_open("arg-job", NULL);
	assert_non_null(r);
	apprate_close(&r);
	unsetenv("VSCHED_JOB");
	unsetenv("VSCHED_RANK");
	unsetenv("VSCHED_AGENT");
	unsetenv("VSCHED_REPORT_MS");
	agent_stop(a);
}

/*
 * No agent: 10 million calls finish quickly (behaviour bound, not a benchmark), reports
 * are dropped and counted, nothing is printed, nothing is sent.
 */
static void test_no_agent(void **state)
{
	(void)state;
	char dir[] = "/tmp/apprate-noagent.XXXXXX";
	assert_non_null(mkdtemp(dir));
	char ep[128];
	snprintf(ep, sizeof(ep), "ipc://%s/nobody.sock", dir);
	struct apprate_opts o = APPRATE_OPTS_INIT;
	o.endpoint = ep;
	o.report_ms = 20;

	/* Capture stdout and stderr. */
	char out[64];
	snprintf(out, sizeof(out), "%s/output", dir);
	fflush(stdout);
	fflush(stderr);
	int saved1 = dup(1), saved2 = dup(2);
	FILE *f = fopen(out, "w+");
	assert_non_null(f);
	dup2(fileno(f), 1);
	dup2(fileno(f), 2);

	apprate_t *r = apprate_open("lonely", &o);
	uint64_t t0 = mono_now();
	for (int i = 0; i < 10000000; i++)
		apprate_progress(r, 1);
	uint64_t dt = mono_now() - t0;
	/* More than 10 intervals later, a report falls due and fails: the units waiting since
	 * the open are discarded rather than averaged into one stale report later. */
	sleep_ns(250 * NSEC_PER_MSEC);
	apprate_progress(r, 1);
	assert_int_equal(apprate_flush(r), -EAGAIN); /* an attempt now, whatever the clock mode */
	struct apprate_stats st;
	apprate_stats(r, &st);
	uint64_t t1 = mono_now();
	apprate_close(&r); /* nothing queued: returns at once */
	uint64_t close_ns = mono_now() - t1;

	fflush(stdout);
	fflush(stderr);
	dup2(saved1, 1);
	dup2(saved2, 2);
	close(saved1);
	close(saved2);
	struct stat sb;
	assert_int_equal(fstat(fileno(f), &sb), 0);
	fclose(f);
	unlink(out);
	rmdir(dir);

	assert_int_equal(st.pid, getpid());
	assert_true(dt < 5 * NSEC_PER_SEC);
	assert_true(close_ns < 150 * NSEC_PER_MSEC); /* contract: <= 100 ms */
	assert_int_equal(st.units, 10000001);
	assert_true(st.reports_dropped >= 1);
	assert_true(st.registers_dropped >= 1);
	assert_int_equal(st.reports_sent, 0);
	assert_int_equal(st.units_reported, 0);
	assert_int_equal(st.units_dropped, st.units);
	assert_int_equal(st.wire_bytes, 0);
	assert_int_equal(sb.st_size, 0); /* no error storm: not a byte of output */
	assert_int_equal(apprate_flush(NULL), -EINVAL);
}

struct worker {
	apprate_t *r;
	long n;
};

static void *worker(void *arg)
{
	struct worker *w = arg;
	for (long i = 0; i < w->n; i++)
		apprate_progress(w->r, 1);
	return NULL;
}

/* 4 threads x N calls: the reports add up to exactly 4N. */
static void threads_exact(int clock_mode)
{
	enum { NTHREADS = 4 };
	const long n = 2000000;
	aprt_force_clock_mode = clock_mode;
	struct agent *a = agent_start();
	apprate_t *r = open_to(a, "threads", 1, 20);
	aprt_force_clock_mode = -1;
	assert_int_equal(r->clock_mode, clock_mode);
	flush_sent(r);
	/* Drain while the threads run: a slow run (valgrind) makes hundreds of reports. */
	struct collector col = {.a = a};
	assert_int_equal(pthread_create(&col.th, NULL, collector_main, &col), 0);
	pthread_t th[NTHREADS];
	struct worker w = {.r = r, .n = n};
	int started = 0;
	while (started < NTHREADS && pthread_create(&th[started], NULL, worker, &w) == 0)
		started++;
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 1000 && apprate_flush(r) != 0; i++)
		sleep_ns(5 * NSEC_PER_MSEC);
	struct apprate_stats st;
	apprate_stats(r, &st);
	apprate_close(&r);
	atomic_store(&col.closed, true);
	pthread_join(col.th, NULL); /* no assertion before: col lives in this frame */
	assert_int_equal(started, NTHREADS);
	assert_int_equal(st.units, NTHREADS * n);
	assert_int_equal(st.units_reported, NTHREADS * n);
	assert_int_equal(st.units_dropped, 0);
	if (col.left < 0)
		fail_msg("agent got a bad frame: %s", col.why);
	assert_int_equal(col.left, 0);
	uint64_t sum = 0;
	int64_t last_seq = -1;
	for (int i = 0; i < a->n; i++) {
		if (a->msgs[i].type != APROTO_REPORT)
			continue;
		assert_true((int64_t)a->msgs[i].u.rep.seq > last_seq);
		last_seq = a->msgs[i].u.rep.seq;
		sum += a->msgs[i].u.rep.units;
	}
	assert_int_equal(sum, NTHREADS * n);
	agent_stop(a);
}

static void test_threads(void **state)
{
	(void)state;
	threads_exact(APRT_CLOCK_COARSE);
}

/* The portable fallback (clock read every N calls) is exact too. */
static void test_threads_countdown(void **state)
{
	(void)state;
	threads_exact(APRT_CLOCK_COUNT);
}

/* The fallback clock (precise clock every N calls) still reports once per interval. */
static void test_countdown_reports(void **state)
{
	(void)state;
	struct agent *a = agent_start();
	aprt_force_clock_mode = APRT_CLOCK_COUNT;
	apprate_t *r = open_to(a, "countdown", 0, 20);
	aprt_force_clock_mode = -1;
	flush_sent(r);
	/* A fast phase: N (calls between clock reads) grows to its maximum. */
	for (int i = 0; i < 5000000; i++)
		apprate_progress(r, 1);
	/* A slow phase of 1,500 calls >= 200 us apart (>= 300 ms): N must shrink again. Had it
	 * stayed at APRT_EVERY_MAX (256), these calls would read the clock at most 6 times,
	 * so at most 6 reports; with N adapting, one per 20 ms: ~15, more if this thread is
	 * slowed down (the calls then span more time). */
	struct apprate_stats st0, st;
	apprate_stats(r, &st0);
	uint64_t t1 = mono_now();
	for (int i = 0; i < 1500; i++) {
		apprate_progress(r, 1);
		sleep_ns(200 * NSEC_PER_USEC);
	}
	apprate_stats(r, &st);
	uint64_t dt = mono_now() - t1;
	apprate_close(&r);
	agent_collect(a, 1);
	uint64_t attempts =
	    st.reports_sent + st.reports_dropped - st0.reports_sent - st0.reports_dropped;
	assert_true(APRT_EVERY_MAX >= 256);
	assert_true(attempts >= 8);
	assert_true(attempts <= dt / (20 * NSEC_PER_MSEC) + 1); /* at most one per interval */
	agent_stop(a);
}

/* Threads that come and go reuse slots; their units survive them. */
static void test_thread_churn(void **state)
{
	(void)state;
	struct agent *a = agent_start();
	apprate_t *r = open_to(a, "churn", 0, 20);
	flush_sent(r);
	struct worker w = {.r = r, .n = 1000};
	for (int i = 0; i < 3 * APRT_SLOTS; i++) {
		pthread_t t;
		assert_int_equal(pthread_create(&t, NULL, worker, &w), 0);
		pthread_join(t, NULL);
	}
	assert_true(atomic_load(&r->nslots) <= 2); /* exited threads gave their slot back */
	struct apprate_stats st;
	apprate_stats(r, &st);
	assert_int_equal(st.units, 3 * APRT_SLOTS * 1000);
	apprate_close(&r);
	agent_collect(a, 1);
	uint64_t sum = 0;
	for (int i = 0; i < a->n; i++)
		if (a->msgs[i].type == APROTO_REPORT)
			sum += a->msgs[i].u.rep.units;
	assert_int_equal(sum, 3 * APRT_SLOTS * 1000);
	agent_stop(a);
}

static void expect_open_fails(const char *job, int rank, unsigned ms, const char *ep, int err1,
                              int err2)
{
	struct apprate_opts o = APPRATE_OPTS_INIT;
	o.rank = rank;
	o.report_ms = ms;
	o.endpoint = ep;
	errno = 0;
	apprate_t *r = apprate_open(job, &o);
	assert_null(r);
	if (errno != err1 && errno != err2)
		fail_msg("job %s rank %d ms %u ep %s: errno %d (%s)", job ? job : "(null)", rank,
		         ms, ep ? ep : "(null)", errno, apprate_strerror(-errno));
	assert_true(strlen(apprate_strerror(-errno)) > 0);
}

static void test_bad_args(void **state)
{
	(void)state;
	struct apprate_stats st;
	assert_int_equal(apprate_progress(NULL, 1), -EINVAL);
	assert_int_equal(apprate_iteration(NULL), -EINVAL);
	assert_int_equal(apprate_bytes(NULL, 1, 1), -EINVAL);
	assert_int_equal(apprate_flush(NULL), -EINVAL);
	assert_int_equal(apprate_stats(NULL, &st), -EINVAL);
	apprate_close(NULL);
	apprate_t *none = NULL;
	apprate_close(&none);

	const char *ep = "ipc:///tmp/apprate-test-unused.sock";
	unsetenv("VSCHED_JOB");
	expect_open_fails(NULL, 0, 0, ep, EINVAL, EINVAL);        /* no job anywhere */
	expect_open_fails("", 0, 0, ep, EINVAL, EINVAL);          /* empty job */
	expect_open_fails("two words", 0, 0, ep, EINVAL, EINVAL); /* not graphic */
	char longjob[APPRATE_JOB_MAX + 2];
	memset(longjob, 'x', sizeof(longjob) - 1);
	longjob[sizeof(longjob) - 1] = '\0';
	expect_open_fails(longjob, 0, 0, ep, EINVAL, EINVAL);
	expect_open_fails("job", -2, 0, ep, EINVAL, EINVAL); /* negative rank */
	expect_open_fails("job", 0, APPRATE_REPORT_MS_MAX + 1, ep, EINVAL, EINVAL);
	expect_open_fails("job", 0, 0, "", EINVAL, EINVAL);
	expect_open_fails("job", 0, 0, "not-an-endpoint", EINVAL, EPROTONOSUPPORT);
	expect_open_fails("job", 0, 0, "carrier-pigeon://coop", EPROTONOSUPPORT, EINVAL);
	expect_open_fails("job", 0, 0, "tcp://", EINVAL, EINVAL);

	setenv("VSCHED_RANK", "-3", 1);
	expect_open_fails("job", APPRATE_RANK_ENV, 0, ep, EINVAL, EINVAL);
	setenv("VSCHED_RANK", "3x", 1);
	expect_open_fails("job", APPRATE_RANK_ENV, 0, ep, EINVAL, EINVAL);
	unsetenv("VSCHED_RANK");
	setenv("VSCHED_REPORT_MS", "0", 1);
	expect_open_fails("job", 0, 0, ep, EINVAL, EINVAL);
	unsetenv("VSCHED_REPORT_MS");

	assert_non_null(strstr(apprate_strerror(-EINVAL), "invalid"));
	assert_non_null(strstr(apprate_strerror(EINVAL), "invalid"));
	assert_non_null(apprate_strerror(-EPROTONOSUPPORT));
	assert_non_null(apprate_strerror(-123456));
	assert_non_null(apprate_strerror(INT_MIN));

	/* A good open with no agent is fine; stats of a fresh handle are zero. */
	struct apprate_opts o = APPRATE_OPTS_INIT;
	o.endpoint = ep;
	apprate_t *r = apprate_open("job", &o);
	assert_non_null(r);
	assert_int_equal(apprate_stats(r, NULL), -EINVAL);
	assert_int_equal(apprate_stats(r, &st), 0);
	assert_int_equal(st.units, 0);
	assert_int_equal(st.pid, getpid());
	assert_int_not_equal(st.handle, 0);
	assert_int_equal(apprate_flush(r), -EAGAIN);
	apprate_close(&r);
	assert_null(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rates),
	    cmocka_unit_test(test_bytes),
	    cmocka_unit_test(test_no_rate_before_first_unit),
	    cmocka_unit_test(test_register_now),
	    cmocka_unit_test(test_env),
	    cmocka_unit_test(test_no_agent),
	    cmocka_unit_test(test_threads),
	    cmocka_unit_test(test_threads_countdown),
	    cmocka_unit_test(test_thread_churn),
	    cmocka_unit_test(test_countdown_reports),
	    cmocka_unit_test(test_bad_args),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
