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

int main(int argc, char **argv)
{
	const char *endpoint = NULL, *rawpath = NULL;
	int n = 300, task_cpu = 1, bench_cpu = 0, c;
	double tmax = 60;

	while ((c = getopt(argc, argv, "s:n:t:b:r:T:")) != -1) {
		switch (c) {
		case 's':
			endpoint = optarg;
			break;
		case 'n':
			n = atoi(optarg);
			break;
		case 't':
			task_cpu = atoi(optarg);
			break;
		case 'b':
			bench_cpu = atoi(optarg);
			break;
		case 'r':
			rawpath = optarg;
			break;
		case 'T':
			tmax = atof(optarg);
			break;
		default:
			goto usage;
		}
	}
	if (!endpoint || n < 1 || n > 5000 || !(tmax > 0 && tmax <= 300))
		goto usage;

	FILE *raw = rawpath ? fopen(rawpath, "w") : NULL;
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	memset(sh, 0, sizeof(*sh));
	atomic_store(&sh->stamp, mono_now());

	pid_t child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0)
		child_main(task_cpu);

	/* The bench: pinned, SCHED_FIFO 99 (it sleeps between polls), memory locked. */
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(bench_cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	mlockall(MCL_CURRENT | MCL_FUTURE);
	set_fifo(0, 99);

	void *ctx = zmq_ctx_new();
	zmq_ctx_set(ctx, ZMQ_THREAD_SCHED_POLICY, SCHED_FIFO);
	zmq_ctx_set(ctx, ZMQ_THREAD_PRIORITY, 99);
	zmq_ctx_set(ctx, ZMQ_THREAD_AFFINITY_CPU_ADD, bench_cpu);
	zsock = zmq_socket(ctx, ZMQ_REQ);
	int tmo = 2000, zero = 0;
	zmq_setsockopt(zsock, ZMQ_RCVTIMEO, &tmo, sizeof(tmo));
	zmq_setsockopt(zsock, ZMQ_SNDTIMEO, &tmo, sizeof(tmo));
	zmq_setsockopt(zsock, ZMQ_LINGER, &zero, sizeof(zero));
	if (zmq_connect(zsock, endpoint) != 0) {
		fprintf(stderr, "bench_chglat: connect %s: %s\n", endpoint, zmq_strerror(errno));
		return 1;
	}

	uint64_t *mem = calloc(9 * (size_t)n, sizeof(uint64_t));
	struct series fl_res = {"floor_resume", mem, 0, n};
	struct series fl_stop = {"floor_stop", mem + n, 0, n};
	struct series v_eff = {"vsched_effect", mem + 2 * n, 0, n};
	struct series v_rep = {"vsched_reply", mem + 3 * n, 0, n};
	struct series v_rev = {"vsched_revoke", mem + 4 * n, 0, n};
	struct series v_list = {"vsched_list_rtt", mem + 5 * n, 0, n};
	struct series z_rtt = {"zmq_echo_rtt", mem + 6 * n, 0, n};
	struct series z_same = {"zmq_echo_rtt_samecpu", mem + 7 * n, 0, n};
	struct series z_other = {"zmq_echo_rtt_othercpu", mem + 8 * n, 0, n};
	int fl_fail = 0, v_noeff = 0, v_notparked = 0, v_norev = 0, rc = 0;
	mono_ns deadline = mono_now() + (mono_ns)(tmax * NSEC_PER_SEC);
	srand((unsigned)getpid());

	/*
	 * 0. Reference: round trip of a LIST-sized request to a bare ZeroMQ echo server, on any
	 * CPU (as vsched's API), pinned to the bench's CPU (no cross-CPU wake-up) and pinned to
	 * the other CPU (server's two threads together, one CPU crossing each way).
	 */
	for (int v = 0; v < 3; v++) {
		struct series *zs = v == 0 ? &z_rtt : v == 1 ? &z_same : &z_other;
		char echo_ep[128];
		snprintf(echo_ep, sizeof(echo_ep), "ipc:///tmp/bench_chglat.%d.%d.sock",
		         (int)getpid(), v);
		pid_t echo = fork();
		if (echo == 0)
			echo_main(echo_ep, v == 0 ? -1 : v == 1 ? bench_cpu : task_cpu);
		if (echo < 0)
			continue;
		void *es = zmq_socket(ctx, ZMQ_REQ);
		zmq_setsockopt(es, ZMQ_RCVTIMEO, &tmo, sizeof(tmo));
		zmq_setsockopt(es, ZMQ_LINGER, &zero, sizeof(zero));
		zmq_connect(es, echo_ep);
		uint8_t ebuf[VSP_MAX_FRAME];
		struct vsp_request lreq = {.type = VSP_LIST};
		int elen = vsp_encode_request(&lreq, ebuf, sizeof(ebuf));
		for (int i = 0; i <= n && elen > 0 && mono_before(mono_now(), deadline); i++) {
			sleep_ns((uint64_t)(rand() % 300) * NSEC_PER_USEC);
			mono_ns t0 = mono_now();
			if (zmq_send(es, ebuf, (size_t)elen, 0) != elen ||
			    zmq_recv(es, ebuf, sizeof(ebuf), 0) < 0)
				break; /* REQ state is broken after a timeout: give up */
			if (i > 0)     /* the first one includes connecting */
				series_add(zs, mono_now() - t0, raw);
		}
		zmq_send(es, "", 0, ZMQ_DONTWAIT);
		sleep_ns(20 * NSEC_PER_MSEC);
		zmq_close(es);
		kill(echo, SIGKILL);
		waitpid(echo, NULL, 0);
		unlink(echo_ep + strlen("ipc://"));
	}

	/* 1. Floor: SIGSTOP / SIGCONT of a SCHED_FIFO 98 spinner. */
	sleep_ns(20 * NSEC_PER_MSEC);
	kill(child, SIGSTOP);
	if (!wait_parked(NSEC_PER_SEC)) {
		fprintf(stderr, "bench_chglat: child does not stop\n");
		rc = 1;
		goto out;
	}
	set_fifo(child, 98);
	for (int i = 0; i < n && mono_before(mono_now(), deadline); i++) {
		sleep_ns((uint64_t)(rand() % 300) * NSEC_PER_USEC);
		gaps_skip();
		mono_ns t0 = mono_now();
		kill(child, SIGCONT);
		uint64_t e = wait_resumed(t0);
		if (e <= 1) {
			fl_fail++;
		} else {
			series_add(&fl_res, e - t0, raw);
		}
		sleep_ns(200 * NSEC_PER_USEC);
		mono_ns t1 = mono_now();
		kill(child, SIGSTOP);
		uint64_t s = wait_parked(WAIT_MAX_NS);
		if (!s) {
			fprintf(stderr, "bench_chglat: child does not stop\n");
			rc = 1;
			goto out;
		}
		series_add(&fl_stop, s > t1 ? s - t1 : 0, raw);
	}
	set_fifo(child, 0);

	/* 2. vsched: add parked, then entitle / revoke through the API. */
	struct vsp_request req = {.type = VSP_ADD,
	                          .pid = child,
	                          .cpu = task_cpu,
	                          .park = VSP_PARK_STOP,
	                          .resv = {RESV_PERIOD, SLICE_SMALL, 0, 0}};
	int st = api_call(&req, NULL);
	kill(child, SIGCONT); /* vsched parks it from here on */
	if (st) {
		fprintf(stderr, "bench_chglat: ADD failed: %s\n", strerror(-st));
		rc = 1;
		goto out;
	}
	if (!wait_parked(3 * NSEC_PER_SEC)) {
		fprintf(stderr,
		        "bench_chglat: vsched does not park the task (slice %llu us per "
		        "%llu ms)\n",
		        SLICE_SMALL / NSEC_PER_USEC, RESV_PERIOD / NSEC_PER_MSEC);
		rc = 1;
		goto del;
	}
	for (int i = 0; i < n && mono_before(mono_now(), deadline); i++) {
		sleep_ns((uint64_t)(rand() % 300) * NSEC_PER_USEC);
		if (!wait_parked(2 * NSEC_PER_SEC)) {
			v_norev++;
			continue;
		}
		gaps_skip();
		req = (struct vsp_request){
		    .type = VSP_SET, .pid = child, .resv = {RESV_PERIOD, SLICE_BIG, 0, 0}};
		mono_ns t_rep, t0 = mono_now();
		st = api_call(&req, &t_rep);
		if (st) {
			fprintf(stderr, "bench_chglat: SET failed: %s\n", strerror(-st));
			rc = 1;
			break;
		}
		series_add(&v_rep, t_rep - t0, raw);
		uint64_t e = wait_resumed(t0);
		if (e == 0)
			v_noeff++;
		else if (e == 1)
			v_notparked++;
		else
			series_add(&v_eff, e - t0, raw);

		sleep_ns(200 * NSEC_PER_USEC);
		req.resv.slice = SLICE_SMALL;
		mono_ns t1 = mono_now();
		st = api_call(&req, NULL);
		if (st) {
			fprintf(stderr, "bench_chglat: SET failed: %s\n", strerror(-st));
			rc = 1;
			break;
		}
		uint64_t s = wait_parked(WAIT_MAX_NS);
		if (!s)
			v_norev++;
		else
			series_add(&v_rev, s > t1 ? s - t1 : 0, raw);

		/* The API round trip alone: a LIST request, nothing to change. */
		struct vsp_request lreq = {.type = VSP_LIST};
		mono_ns t2 = mono_now(), t3;
		if (api_call(&lreq, &t3) == 0)
			series_add(&v_list, t3 - t2, raw);
	}
del:
	req = (struct vsp_request){.type = VSP_DEL, .pid = child};
	api_call(&req, NULL);
out:
	atomic_store(&sh->stop, 1);
	kill(child, SIGCONT);
	sleep_ns(50 * NSEC_PER_MSEC);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	series_print(&fl_res);
	series_print(&fl_stop);
	printf("floor_fail %d\n", fl_fail);
	series_print(&v_eff);
	series_print(&v_rep);
	series_print(&v_rev);
	series_print(&v_list);
	series_print(&z_rtt);
	series_print(&z_same);
	series_print(&z_other);
	printf("vsched_no_effect %d\nvsched_not_parked %d\nvsched_no_revoke %d\n", v_noeff,
	       v_notparked, v_norev);
	if (raw)
		fclose(raw);
	zmq_close(zsock);
	zmq_ctx_term(ctx);
	free(mem);
	return rc;
usage:
	fprintf(stderr, "usage: bench_chglat -s ENDPOINT [-n N(1-5000)] [-t TASK_CPU] "
	                "[-b BENCH_CPU] [-r RAWFILE] [-T SECONDS(<=300)]\n");
	return 2;
}
