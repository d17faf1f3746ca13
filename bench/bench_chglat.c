/*
 * bench_chglat: constraint change latency of vsched, request -> in effect (DESIGN.md §2, §8:
 * goal <= 100 µs median; VSched reports ~1 ms).
 *
 *   bench_chglat -s ENDPOINT [-n N] [-t TASK_CPU] [-b BENCH_CPU] [-r RAWFILE] [-T SECONDS]
 *
 * Method. A child process spins on TASK_CPU writing CLOCK_MONOTONIC stamps into a shared
 * page; whenever two consecutive stamps are more than GAP_NS apart it appends the gap
 * (last stamp before, first stamp after) to a ring in the page, so the exact moment it ran
 * again is known without the bench having to watch it. The bench runs on BENCH_CPU at
 * SCHED_FIFO 99 (main thread and its ZeroMQ I/O thread), so a loaded CPU does not delay the
 * client side of the request.
 *
 *  1. Floor (reference, same run): the bench parks the child itself, at SCHED_FIFO 98 as
 *     vsched would raise it, with SIGSTOP and entitles it with SIGCONT. Resume latency =
 *     first stamp after SIGCONT - time of the kill(). This is the least any user-level
 *     scheduler that parks by signals can achieve on this machine.
 *  2. vsched: the child is added with period 1 s and a tiny slice, so it spends the period
 *     parked (SIGSTOP) out of budget. Each sample sends SET (1 s, 500 ms) straight through
 *     the ZeroMQ API (proto_vsched.h encoders, no process start-up in the figure):
 *       effect = first stamp after the request - time just before zmq_send()
 *       reply  = reply received - the same time
 *     then, after ~200 µs of running, SET (1 s, SMALL) parks it again:
 *       revoke = last stamp before it stopped - time just before zmq_send()
 *     A sample counts only when the child was parked at the request (the gap spans it).
 *     Each cycle also times a LIST request (list_rtt): the API round trip with nothing to
 *     change, i.e. the ZeroMQ and API-thread part of the figures above.
 *  0. (first) zmq_echo_rtt: the same request to a bare ZeroMQ REP echo server in another
 *     process with vsched's thread settings: what the transport alone costs here; and
 *     zmq_echo_rtt_samecpu / _othercpu, the same with the server (both its threads) pinned
 *     to the bench's CPU / to the task's CPU.
 *
 * Output: one line per figure, "NAME n=.. median_us=.. p90_us=.. p99_us=.. max_us=..", plus
 * counts of samples without effect. Raw samples go to RAWFILE ("kind ns" per line).
 * Everything is bounded: -T caps the run (default 60 s); the child dies with the bench
 * (PR_SET_PDEATHSIG) and after 180 s in any case.
 */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zmq.h>

#include "proto_vsched.h"
#include "timeutil.h"

#define GAP_NS      (10 * NSEC_PER_USEC)  /* a pause longer than this is recorded */
#define PARKED_NS   (300 * NSEC_PER_USEC) /* no stamp for this long: parked */
#define RING        4096
#define CHILD_LIFE  (180 * NSEC_PER_SEC)
#define WAIT_MAX_NS (200 * NSEC_PER_MSEC) /* longest wait for an effect */
#define RESV_PERIOD (1000 * NSEC_PER_MSEC)
#define SLICE_BIG   (500 * NSEC_PER_MSEC)
#define SLICE_SMALL (100 * NSEC_PER_USEC)

struct gap {
	uint64_t start, end; /* last stamp before the pause, first after it */
};

struct shared {
	_Atomic uint64_t stamp; /* latest stamp */
	_Atomic uint64_t nwritten;
	_Atomic int stop;
	struct gap gap[RING];
};

static struct shared *sh;
static uint64_t gap_read; /* bench's read position in the ring */

static _Noreturn void child_main(int cpu)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);

	mono_ns born = mono_now(), last = born;
	while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
		mono_ns t = mono_now();
		if (t - last > GAP_NS) {
			uint64_t w = atomic_load_explicit(&sh->nwritten, memory_order_relaxed);
			sh->gap[w % RING] = (struct gap){last, t};
			atomic_store_explicit(&sh->nwritten, w + 1, memory_order_release);
		}
		atomic_store_explicit(&sh->stamp, t, memory_order_release);
		last = t;
		if (t - born > CHILD_LIFE)
			break;
	}
	_exit(0);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec until = ns_to_ts(mono_now() + ns);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR)
		;
}

/* Waits until the child has written no stamp for PARKED_NS; returns its last stamp or 0. */
static uint64_t wait_parked(uint64_t timeout_ns)
{
	mono_ns until = mono_now() + timeout_ns;
	for (;;) {
		mono_ns now = mono_now();
		uint64_t s = atomic_load_explicit(&sh->stamp, memory_order_acquire);
		if (now - s > PARKED_NS) {
			/* re-read: the child may have resumed between the two loads */
			if (atomic_load_explicit(&sh->stamp, memory_order_acquire) == s)
				return s;
		}
		if (!mono_before(now, until))
			return 0;
		sleep_ns(20 * NSEC_PER_USEC);
	}
}

/* Skips the gaps recorded so far (older than anything we will ask about). */
static void gaps_skip(void)
{
	gap_read = atomic_load_explicit(&sh->nwritten, memory_order_acquire);
}

/*
 * Waits for the child to run after t0 following a pause that spans t0. Returns the first
 * stamp after the pause, 0 on timeout, 1 if the child was not parked at t0 (it ran through).
 */
static uint64_t wait_resumed(mono_ns t0)
{
	mono_ns until = mono_now() + WAIT_MAX_NS;
	for (;;) {
		uint64_t w = atomic_load_explicit(&sh->nwritten, memory_order_acquire);
		if (w - gap_read > RING)
			gap_read = w - RING;
		for (; gap_read < w; gap_read++) {
			struct gap g = sh->gap[gap_read % RING];
			if (g.start <= t0 && g.end > t0)
				return g.end;
			if (g.start > t0)
				return 1; /* it ran after t0 without having been parked at t0 */
		}
		if (!mono_before(mono_now(), until))
			return 0;
		sleep_ns(10 * NSEC_PER_USEC);
	}
}

struct series {
	const char *name;
	uint64_t *v;
	int n, cap;
};

static void series_add(struct series *s, uint64_t ns, FILE *raw)
{
	if (s->n < s->cap)
		s->v[s->n++] = ns;
	if (raw)
		fprintf(raw, "%s %" PRIu64 "\n", s->name, ns);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void series_print(struct series *s)
{
	if (s->n == 0) {
		printf("%s n=0\n", s->name);
		return;
	}
	qsort(s->v, (size_t)s->n, sizeof(uint64_t), cmp_u64);
#define PCT(p) (s->v[(size_t)((double)(s->n - 1) * (p) + 0.5)] / 1000.0)
	printf("%s n=%d median_us=%.1f p90_us=%.1f p99_us=%.1f max_us=%.1f min_us=%.1f\n", s->name,
	       s->n, PCT(0.5), PCT(0.9), PCT(0.99), PCT(1.0), PCT(0.0));
#undef PCT
}

static void *zsock;

/* One request through the API; returns the reply status (0 or -errno), -ETIMEDOUT if none. */
static int api_call(const struct vsp_request *req, mono_ns *t_reply)
{
	uint8_t buf[VSP_MAX_FRAME];
	static uint8_t rbuf[1 << 16];
	int len = vsp_encode_request(req, buf, sizeof(buf));
	if (len < 0)
		return len;
	if (zmq_send(zsock, buf, (size_t)len, 0) != len)
		return -errno;
	int r = zmq_recv(zsock, rbuf, sizeof(rbuf), 0);
	if (t_reply)
		*t_reply = mono_now();
	if (r < 0)
		return -ETIMEDOUT;
	struct vsp_reply rep;
	char why[128];
	if (r > (int)sizeof(rbuf) || vsp_decode_reply(rbuf, (size_t)r, &rep, why, sizeof(why)))
		return -EBADMSG;
	free(rep.tasks);
	if (rep.status)
		fprintf(stderr, "bench_chglat: %s: %s\n", vsp_type_name(req->type), rep.msg);
	return rep.status;
}

/*
 * Reference: a bare ZeroMQ REP echo server in its own process, set up like vsched's API
 * (main thread and I/O thread at SCHED_FIFO 99), on any CPU (cpu -1, as vsched) or pinned to
 * cpu (with its I/O thread): the same-CPU case. Serves until it gets an empty
 * frame or its parent dies; lives at most CHILD_LIFE.
 */
static _Noreturn void echo_main(const char *ep, int cpu)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	cpu_set_t all;
	CPU_ZERO(&all);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (cpu < 0 || c == cpu)
			CPU_SET(c, &all);
	sched_setaffinity(0, sizeof(all), &all); /* -1: not pinned, like vsched's API thread */
	struct sched_param sp = {.sched_priority = 99};
	sched_setscheduler(0, SCHED_FIFO, &sp);
	void *ctx = zmq_ctx_new();
	zmq_ctx_set(ctx, ZMQ_THREAD_SCHED_POLICY, SCHED_FIFO);
	zmq_ctx_set(ctx, ZMQ_THREAD_PRIORITY, 99);
	void *rep = zmq_socket(ctx, ZMQ_REP);
	int tmo = 1000;
	zmq_setsockopt(rep, ZMQ_RCVTIMEO, &tmo, sizeof(tmo));
	if (zmq_bind(rep, ep) != 0)
		_exit(1);
	uint8_t buf[VSP_MAX_FRAME];
	mono_ns born = mono_now();
	while (mono_now() - born < CHILD_LIFE) {
		int r = zmq_recv(rep, buf, sizeof(buf), 0);
		if (r < 0)
			continue;
		if (r == 0)
			break;
		zmq_send(rep, buf, (size_t)(r > (int)sizeof(buf) ? (int)sizeof(buf) : r), 0);
	}
	zmq_send(rep, "", 0, 0);
	zmq_close(rep);
	zmq_ctx_term(ctx);
	_exit(0);
}

static void set_fifo(pid_t pid, int prio)
{
	struct sched_param sp = {.sched_priority = prio};
	if (sched_setscheduler(pid, prio ? SCHED_FIFO : SCHED_OTHER, &sp) != 0)
		perror("sched_setscheduler");
}

/* Everything the phases share. */
struct run {
	const char *endpoint;
	int n, task_cpu, bench_cpu;
	double tmax;
	FILE *raw;
	pid_t child;
	void *ctx;
	mono_ns deadline;
	uint64_t *mem;
	struct series fl_res, fl_stop, v_eff, v_rep, v_rev, v_list, z_rtt, z_same, z_other;
	int fl_fail, v_noeff, v_notparked, v_norev;
};

static const int ZTMO = 2000, ZZERO = 0;

/* Command line into r; returns 0, or -1 for a usage error. */
static int parse_args(int argc, char **argv, struct run *r, const char **rawpath)
{
	int c;

	*r = (struct run){.n = 300, .task_cpu = 1, .bench_cpu = 0, .tmax = 60};
	*rawpath = NULL;
	while ((c = getopt(argc, argv, "s:n:t:b:r:T:")) != -1) {
		switch (c) {
		case 's':
			r->endpoint = optarg;
			break;
		case 'n':
			r->n = atoi(optarg);
			break;
		case 't':
			r->task_cpu = atoi(optarg);
			break;
		case 'b':
			r->bench_cpu = atoi(optarg);
			break;
		case 'r':
			*rawpath = optarg;
			break;
		case 'T':
			r->tmax = atof(optarg);
			break;
		default:
			return -1;
		}
	}
	return r->endpoint && r->n >= 1 && r->n <= 5000 && r->tmax > 0 && r->tmax <= 300 ? 0 : -1;
}

/* The series, one block of n samples each. */
static void series_init(struct run *r)
{
	int n = r->n;

	r->mem = calloc(9 * (size_t)n, sizeof(uint64_t));
	if (!r->mem) {
		perror("calloc");
		exit(1);
	}
	r->fl_res = (struct series){"floor_resume", r->mem, 0, n};
	r->fl_stop = (struct series){"floor_stop", r->mem + n, 0, n};
	r->v_eff = (struct series){"vsched_effect", r->mem + 2 * n, 0, n};
	r->v_rep = (struct series){"vsched_reply", r->mem + 3 * n, 0, n};
	r->v_rev = (struct series){"vsched_revoke", r->mem + 4 * n, 0, n};
	r->v_list = (struct series){"vsched_list_rtt", r->mem + 5 * n, 0, n};
	r->z_rtt = (struct series){"zmq_echo_rtt", r->mem + 6 * n, 0, n};
	r->z_same = (struct series){"zmq_echo_rtt_samecpu", r->mem + 7 * n, 0, n};
	r->z_other = (struct series){"zmq_echo_rtt_othercpu", r->mem + 8 * n, 0, n};
}

/*
 * The shared page and the stamping child on task_cpu; the bench pinned to bench_cpu at
 * SCHED_FIFO 99, memory locked; the ZeroMQ context (I/O thread alike) and the REQ socket to
 * vsched. Returns 0 or -1 (reported).
 */
static int setup(struct run *r)
{
	cpu_set_t set;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return -1;
	}
	memset(sh, 0, sizeof(*sh));
	atomic_store(&sh->stamp, mono_now());
	r->child = fork();
	if (r->child < 0) {
		perror("fork");
		return -1;
	}
	if (r->child == 0)
		child_main(r->task_cpu);
	CPU_ZERO(&set);
	CPU_SET(r->bench_cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	mlockall(MCL_CURRENT | MCL_FUTURE);
	set_fifo(0, 99);
	r->ctx = zmq_ctx_new();
	zmq_ctx_set(r->ctx, ZMQ_THREAD_SCHED_POLICY, SCHED_FIFO);
	zmq_ctx_set(r->ctx, ZMQ_THREAD_PRIORITY, 99);
	zmq_ctx_set(r->ctx, ZMQ_THREAD_AFFINITY_CPU_ADD, r->bench_cpu);
	zsock = zmq_socket(r->ctx, ZMQ_REQ);
	zmq_setsockopt(zsock, ZMQ_RCVTIMEO, &ZTMO, sizeof(ZTMO));
	zmq_setsockopt(zsock, ZMQ_SNDTIMEO, &ZTMO, sizeof(ZTMO));
	zmq_setsockopt(zsock, ZMQ_LINGER, &ZZERO, sizeof(ZZERO));
	if (zmq_connect(zsock, r->endpoint) != 0) {
		fprintf(stderr, "bench_chglat: connect %s: %s\n", r->endpoint, zmq_strerror(errno));
		return -1;
	}
	r->deadline = mono_now() + (mono_ns)(r->tmax * NSEC_PER_SEC);
	srand((unsigned)getpid());
	return 0;
}

/* Round trips of a LIST-sized request to an echo server pinned to cpu (-1: any) into zs. */
static void echo_series(struct run *r, int v, int cpu, struct series *zs)
{
	struct vsp_request lreq = {.type = VSP_LIST};
	uint8_t ebuf[VSP_MAX_FRAME];
	char echo_ep[128];
	int elen = vsp_encode_request(&lreq, ebuf, sizeof(ebuf));
	void *es;
	pid_t echo;

	snprintf(echo_ep, sizeof(echo_ep), "ipc:///tmp/bench_chglat.%d.%d.sock", (int)getpid(), v);
	echo = fork();
	if (echo == 0)
		echo_main(echo_ep, cpu);
	if (echo < 0)
		return;
	es = zmq_socket(r->ctx, ZMQ_REQ);
	zmq_setsockopt(es, ZMQ_RCVTIMEO, &ZTMO, sizeof(ZTMO));
	zmq_setsockopt(es, ZMQ_LINGER, &ZZERO, sizeof(ZZERO));
	zmq_connect(es, echo_ep);
	for (int i = 0; i <= r->n && elen > 0 && mono_before(mono_now(), r->deadline); i++) {
		sleep_ns((uint64_t)(rand() % 300) * NSEC_PER_USEC);
		mono_ns t0 = mono_now();
		if (zmq_send(es, ebuf, (size_t)elen, 0) != elen ||
		    zmq_recv(es, ebuf, sizeof(ebuf), 0) < 0)
			break; /* REQ state is broken after a timeout: give up */
		if (i > 0)     /* the first one includes connecting */
			series_add(zs, mono_now() - t0, r->raw);
	}
	zmq_send(es, "", 0, ZMQ_DONTWAIT);
	sleep_ns(20 * NSEC_PER_MSEC);
	zmq_close(es);
	kill(echo, SIGKILL);
	waitpid(echo, NULL, 0);
	unlink(echo_ep + strlen("ipc://"));
}

/*
 * 0. Reference: round trip of a LIST-sized request to a bare ZeroMQ echo server, on any
 * CPU (as vsched's API), pinned to the bench's CPU (no cross-CPU wake-up) and pinned to the
 * other CPU (server's two threads together, one CPU crossing each way).
 */
static void phase_echo(struct run *r)
{
	echo_series(r, 0, -1, &r->z_rtt);
	echo_series(r, 1, r->bench_cpu, &r->z_same);
	echo_series(r, 2, r->task_cpu, &r->z_other);
}

/* 1. Floor: SIGSTOP / SIGCONT of a SCHED_FIFO 98 spinner. Returns 0 or -1 (reported). */
static int phase_floor(struct run *r)
{
	sleep_ns(20 * NSEC_PER_MSEC);
	kill(r->child, SIGSTOP);
	if (!wait_parked(NSEC_PER_SEC)) {
		fprintf(stderr, "bench_chglat: child does not stop\n");
		return -1;
	}
	set_fifo(r->child, 98);
	for (int i = 0; i < r->n && mono_before(mono_now(), r->deadline); i++) {
		sleep_ns((uint64_t)(rand() % 300) * NSEC_PER_USEC);
		gaps_skip();
		mono_ns t0 = mono_now();
		kill(r->child, SIGCONT);
		uint64_t e = wait_resumed(t0);
		if (e <= 1)
			r->fl_fail++;
		else
			series_add(&r->fl_res, e - t0, r->raw);
		sleep_ns(200 * NSEC_PER_USEC);
		mono_ns t1 = mono_now();
		kill(r->child, SIGSTOP);
		uint64_t s = wait_parked(WAIT_MAX_NS);
		if (!s) {
			fprintf(stderr, "bench_chglat: child does not stop\n");
			return -1;
		}
		series_add(&r->fl_stop, s > t1 ? s - t1 : 0, r->raw);
	}
	set_fifo(r->child, 0);
	return 0;
}

/* One vsched sample: entitle (effect, reply), revoke, then a LIST. 0 or -1 (reported). */
static int vsched_sample(struct run *r)
{
	struct vsp_request req = {
	    .type = VSP_SET, .pid = r->child, .resv = {RESV_PERIOD, SLICE_BIG, 0, 0}};
	struct vsp_request lreq = {.type = VSP_LIST};
	mono_ns t_rep, t0, t1, t2, t3;
	int st;

	gaps_skip();
	t0 = mono_now();
	st = api_call(&req, &t_rep);
	if (st) {
		fprintf(stderr, "bench_chglat: SET failed: %s\n", strerror(-st));
		return -1;
	}
	series_add(&r->v_rep, t_rep - t0, r->raw);
	uint64_t e = wait_resumed(t0);
	if (e == 0)
		r->v_noeff++;
	else if (e == 1)
		r->v_notparked++;
	else
		series_add(&r->v_eff, e - t0, r->raw);
	sleep_ns(200 * NSEC_PER_USEC);
	req.resv.slice = SLICE_SMALL;
	t1 = mono_now();
	st = api_call(&req, NULL);
	if (st) {
		fprintf(stderr, "bench_chglat: SET failed: %s\n", strerror(-st));
		return -1;
	}
	uint64_t s = wait_parked(WAIT_MAX_NS);
	if (!s)
		r->v_norev++;
	else
		series_add(&r->v_rev, s > t1 ? s - t1 : 0, r->raw);
	/* The API round trip alone: a LIST request, nothing to change. */
	t2 = mono_now();
	if (api_call(&lreq, &t3) == 0)
		series_add(&r->v_list, t3 - t2, r->raw);
	return 0;
}

/* 2. vsched: add parked, then entitle / revoke through the API. 0 or -1 (reported). */
static int phase_vsched(struct run *r)
{
	struct vsp_request req = {.type = VSP_ADD,
	                          .pid = r->child,
	                          .cpu = r->task_cpu,
	                          .park = VSP_PARK_STOP,
	                          .resv = {RESV_PERIOD, SLICE_SMALL, 0, 0}};
	int st = api_call(&req, NULL), rc = 0;

	kill(r->child, SIGCONT); /* vsched parks it from here on */
	if (st) {
		fprintf(stderr, "bench_chglat: ADD failed: %s\n", strerror(-st));
		return -1;
	}
	if (!wait_parked(3 * NSEC_PER_SEC)) {
		fprintf(stderr,
		        "bench_chglat: vsched does not park the task (slice %llu us per %llu ms)\n",
		        SLICE_SMALL / NSEC_PER_USEC, RESV_PERIOD / NSEC_PER_MSEC);
		rc = -1;
	}
	for (int i = 0; rc == 0 && i < r->n && mono_before(mono_now(), r->deadline); i++) {
		sleep_ns((uint64_t)(rand() % 300) * NSEC_PER_USEC);
		if (!wait_parked(2 * NSEC_PER_SEC)) {
			r->v_norev++;
			continue;
		}
		rc = vsched_sample(r);
	}
	req = (struct vsp_request){.type = VSP_DEL, .pid = r->child};
	api_call(&req, NULL);
	return rc;
}

/* Ends the child, prints every figure, releases everything. */
static void finish(struct run *r)
{
	atomic_store(&sh->stop, 1);
	kill(r->child, SIGCONT);
	sleep_ns(50 * NSEC_PER_MSEC);
	kill(r->child, SIGKILL);
	waitpid(r->child, NULL, 0);
	series_print(&r->fl_res);
	series_print(&r->fl_stop);
	printf("floor_fail %d\n", r->fl_fail);
	series_print(&r->v_eff);
	series_print(&r->v_rep);
	series_print(&r->v_rev);
	series_print(&r->v_list);
	series_print(&r->z_rtt);
	series_print(&r->z_same);
	series_print(&r->z_other);
	printf("vsched_no_effect %d\nvsched_not_parked %d\nvsched_no_revoke %d\n", r->v_noeff,
	       r->v_notparked, r->v_norev);
	if (r->raw)
		fclose(r->raw);
	zmq_close(zsock);
	zmq_ctx_term(r->ctx);
	free(r->mem);
}

int main(int argc, char **argv)
{
	const char *rawpath;
	struct run r;
	int rc = 0;

	if (parse_args(argc, argv, &r, &rawpath) < 0) {
		fprintf(stderr, "usage: bench_chglat -s ENDPOINT [-n N(1-5000)] [-t TASK_CPU] "
		                "[-b BENCH_CPU] [-r RAWFILE] [-T SECONDS(<=300)]\n");
		return 2;
	}
	r.raw = rawpath ? fopen(rawpath, "w") : NULL;
	series_init(&r);
	if (setup(&r) < 0)
		return 1;
	phase_echo(&r);
	if (phase_floor(&r) < 0 || phase_vsched(&r) < 0)
		rc = 1;
	finish(&r);
	return rc;
}
