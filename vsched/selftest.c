/*
 * vsched/selftest.c: the node measures the finest period it serves (DESIGN.md §5.1: "the
 * smallest period each node can serve with < 1 % misses"), at start and on demand.
 *
 * How: on a managed CPU that holds no reservation, a probe process — vsched's own binary
 * run as `vsched --probe PERIOD_NS JOB_NS JOBS` — is put under a reservation of that
 * period with slice = 30 % of it, the daemon's default park policy and the epoch anchor,
 * and runs a periodic job that sleeps between jobs: JOBS jobs of JOB_NS (2/3 of the slice)
 * of its own CPU time, released on an absolute timer whose phase against vsched's windows
 * moves by a tenth of the period every JOBS/10 jobs (so every release phase is tried). A
 * job ending after its release + period is a miss. Periods are tried finest first, from
 * min_period up (SELFTEST_PERIODS), and the first with misses < 1 % of jobs is the answer;
 * none: 0 ("none found"). Each probe runs SELFTEST_RUN_NS (at least 200 jobs, at most
 * SELFTEST_MAX_NS): the whole test takes a few seconds, never more than ~10 s, and a probe
 * that does not report in time is killed and the test marked failed.
 *
 * The test never costs a client anything: a reservation request that lands on the probe's
 * CPU, or fits nowhere while the probe holds its share, ends the test first (selftest_yield;
 * state "failed", interrupted; api.c calls it around ADD and SET). The state machine runs
 * on the API thread (selftest_poll after each sched_housekeep); the probe's result pipe is
 * in the engine's poll set (sched_poll), so its report wakes the API thread. Nothing
 * blocks.
 */
#include "vsched.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "duration.h"
#include "log.h"

#define SELFTEST_RUN_NS    (300 * NSEC_PER_MSEC) /* per period tried */
#define SELFTEST_MAX_NS    (2 * NSEC_PER_SEC)    /* at most per period tried */
#define SELFTEST_MIN_JOBS  200
#define SELFTEST_SLICE_PCT 30 /* reservation: slice = 30 % of the period */
#define SELFTEST_PHASES    10

static const uint64_t SELFTEST_PERIODS[] = {
    100 * NSEC_PER_USEC, 200 * NSEC_PER_USEC, 500 * NSEC_PER_USEC, 1 * NSEC_PER_MSEC,
    2 * NSEC_PER_MSEC,   5 * NSEC_PER_MSEC,   10 * NSEC_PER_MSEC,  20 * NSEC_PER_MSEC,
    50 * NSEC_PER_MSEC,  100 * NSEC_PER_MSEC,
};
#define NPERIODS (sizeof(SELFTEST_PERIODS) / sizeof(SELFTEST_PERIODS[0]))

struct selftest {
	struct vsp_node_info res; /* selftest, nprobe, probe[], min_period_ns, selftest_at */
	pid_t child;              /* the running probe, 0 if none */
	int out;                  /* its result pipe, -1 if none */
	int cpu;                  /* the idle CPU it runs on */
	mono_ns deadline;         /* the probe must have reported by then */
	char line[64];
	size_t len;
};

/* Jobs a probe of period p runs. */
static uint32_t probe_jobs(uint64_t p)
{
	uint64_t n = SELFTEST_RUN_NS / p;

	if (n < SELFTEST_MIN_JOBS)
		n = SELFTEST_MIN_JOBS;
	if (n * p > SELFTEST_MAX_NS)
		n = SELFTEST_MAX_NS / p;
	return n > 10 ? (uint32_t)n : 10;
}

/* A managed CPU with no task, or -1. */
static int idle_cpu(const struct sched *s)
{
	for (int i = s->cfg.ncpus - 1; i >= 0; i--)
		if (s->table[i]->n == 0)
			return s->cfg.cpus[i];
	return -1;
}

static void finish(struct sched *s, uint8_t state, const char *why)
{
	struct selftest *st = s->st;

	st->res.selftest = state;
	st->res.selftest_at = clock_ns(CLOCK_REALTIME);
	if (state == VSP_SELFTEST_FAILED) {
		log_warnx("self-test failed: %s", why);
		return;
	}
	char b[32];
	if (st->res.min_period_ns)
		log_info("self-test: finest period with < 1%% misses %s (cpu %d)",
		         duration_format(st->res.min_period_ns, b, sizeof(b)), st->cpu);
	else
		log_info("self-test: no period tried kept misses under 1%% (cpu %d)", st->cpu);
}

/* Ends the running probe (killed when kill), reaps it and closes its pipe. */
static void probe_end(struct sched *s, bool kill_it)
{
	struct selftest *st = s->st;

	s->probe_pid = 0;
	if (st->out >= 0) {
		sched_unpoll(s, st->out);
		close(st->out);
		st->out = -1;
	}
	if (st->child > 0) {
		if (kill_it)
			kill(st->child, SIGKILL);
		while (waitpid(st->child, NULL, 0) < 0 && errno == EINTR)
			;
		st->child = 0;
	}
}

/*
 * Starts the probe for the next period to try: the child waits on a pipe until vsched has
 * put it under its reservation, then runs the probe. Returns 0, or -1 with why.
 */
static int probe_launch(struct sched *s, char *why, size_t whylen)
{
	struct selftest *st = s->st;
	uint64_t p = st->res.probe[st->res.nprobe].period_ns;
	uint32_t jobs = probe_jobs(p);
	char a1[24], a2[24], a3[16], c;
	int res[2], go[2];
	struct vsp_request req = {.type = VSP_ADD, .cpu = st->cpu, .park = VSP_PARK_DEFAULT};

	if (pipe2(res, O_CLOEXEC | O_NONBLOCK) < 0 || pipe2(go, O_CLOEXEC) < 0) {
		snprintf(why, whylen, "pipe: %s", strerror(errno));
		return -1;
	}
	snprintf(a1, sizeof(a1), "%llu", (unsigned long long)p);
	snprintf(a2, sizeof(a2), "%llu", (unsigned long long)(p * SELFTEST_SLICE_PCT / 150));
	snprintf(a3, sizeof(a3), "%u", jobs);
	st->child = fork();
	if (st->child == 0) {
		char *argv[] = {"vsched-probe", "--probe", a1, a2, a3, NULL};
		/* Child of a multi-threaded process: async-signal-safe calls only. */
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (dup2(res[1], 1) < 0 || read(go[0], &c, 1) != 1)
			_exit(127);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(res[1]);
	close(go[0]);
	if (st->child < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		close(res[0]);
		close(go[1]);
		st->child = 0;
		return -1;
	}
	st->out = res[0];
	st->len = 0;
	req.pid = st->child;
	req.resv = (struct vsp_resv){.period = p, .slice = p * SELFTEST_SLICE_PCT / 100};
	if (sched_add(s, &req, why, whylen) < 0 || write(go[1], "g", 1) != 1) {
		close(go[1]);
		probe_end(s, true);
		return -1;
	}
	s->probe_pid = st->child;
	close(go[1]);
	sched_poll(s, st->out);
	st->deadline = mono_now() + jobs * p + 2 * NSEC_PER_SEC;
	return 0;
}

/* Records a probe's result line "JOBS MISSES"; launches the next or finishes. */
static void probe_done(struct sched *s)
{
	struct selftest *st = s->st;
	struct vsp_probe *pr = &st->res.probe[st->res.nprobe];
	unsigned jobs = 0, misses = 0;
	char why[VSP_MSG_MAX + 1];

	st->line[st->len] = '\0';
	probe_end(s, false);
	if (sscanf(st->line, "%u %u", &jobs, &misses) != 2 || jobs == 0) {
		finish(s, VSP_SELFTEST_FAILED, "the probe reported nothing");
		return;
	}
	pr->jobs = jobs;
	pr->misses = misses;
	st->res.nprobe++;
	if ((uint64_t)misses * 100 < jobs) {
		st->res.min_period_ns = pr->period_ns;
		finish(s, VSP_SELFTEST_DONE, NULL);
		return;
	}
	if (st->res.nprobe >= VSP_MAX_PROBES || st->res.probe[st->res.nprobe].period_ns == 0) {
		finish(s, VSP_SELFTEST_DONE, NULL);
		return;
	}
	if (probe_launch(s, why, sizeof(why)) < 0)
		finish(s, VSP_SELFTEST_FAILED, why);
}

bool selftest_yield(struct sched *s, pid_t pid, int cpu)
{
	struct selftest *st = s->st;
	char why[VSP_MSG_MAX + 1];

	if (!st || st->res.selftest != VSP_SELFTEST_RUNNING || pid == st->child ||
	    (cpu >= 0 && cpu != st->cpu))
		return false;
	if (st->child > 0)
		sched_del(s, st->child, why, sizeof(why));
	probe_end(s, true);
	finish(s, VSP_SELFTEST_FAILED, "interrupted: a reservation needed its CPU");
	return true;
}

int selftest_start(struct sched *s, char *why, size_t whylen)
{
	struct selftest *st = s->st;
	unsigned k = 0;

	if (st->res.selftest == VSP_SELFTEST_RUNNING) {
		snprintf(why, whylen, "a self-test is already running");
		return -EBUSY;
	}
	st->cpu = idle_cpu(s);
	if (st->cpu < 0) {
		snprintf(why, whylen, "no managed CPU is free of reservations");
		return -EBUSY;
	}
	memset(st->res.probe, 0, sizeof(st->res.probe));
	for (size_t i = 0; i < NPERIODS && k < VSP_MAX_PROBES; i++)
		if (SELFTEST_PERIODS[i] >= s->cfg.min_period &&
		    SELFTEST_PERIODS[i] * SELFTEST_SLICE_PCT / 100 >= s->cfg.min_slice)
			st->res.probe[k++].period_ns = SELFTEST_PERIODS[i];
	if (k == 0) {
		snprintf(why, whylen, "min_period/min_slice leave no period to try");
		return -EINVAL;
	}
	st->res.nprobe = 0;
	st->res.min_period_ns = 0;
	st->res.selftest = VSP_SELFTEST_RUNNING;
	if (probe_launch(s, why, whylen) < 0) {
		finish(s, VSP_SELFTEST_FAILED, why);
		return -EIO;
	}
	log_info("self-test started on cpu %d", st->cpu);
	return 0;
}

void selftest_poll(struct sched *s)
{
	struct selftest *st = s->st;

	if (!st || st->res.selftest != VSP_SELFTEST_RUNNING || st->out < 0)
		return;
	for (;;) {
		ssize_t n = read(st->out, st->line + st->len, sizeof(st->line) - 1 - st->len);
		if (n > 0) {
			st->len += (size_t)n;
			if (st->len < sizeof(st->line) - 1)
				continue;
		}
		if (n == 0 || (n > 0 && st->len >= sizeof(st->line) - 1)) {
			probe_done(s);
			return;
		}
		break; /* EAGAIN/EINTR: more later */
	}
	if (!mono_before(mono_now(), st->deadline)) {
		probe_end(s, true);
		finish(s, VSP_SELFTEST_FAILED, "a probe did not report in time");
	}
}

mono_ns selftest_deadline(const struct sched *s)
{
	const struct selftest *st = s->st;

	return st && st->res.selftest == VSP_SELFTEST_RUNNING ? st->deadline : 0;
}

void selftest_info(const struct sched *s, struct vsp_node_info *out)
{
	const struct selftest *st = s->st;

	if (!st)
		return;
	out->selftest = st->res.selftest;
	out->nprobe = st->res.nprobe;
	out->min_period_ns = st->res.min_period_ns;
	out->selftest_at = st->res.selftest_at;
	memcpy(out->probe, st->res.probe, sizeof(out->probe));
	if (st->res.selftest == VSP_SELFTEST_RUNNING)
		for (int i = st->res.nprobe; i < VSP_MAX_PROBES; i++)
			out->probe[i] = (struct vsp_probe){0};
}

void selftest_init(struct sched *s)
{
	s->st = calloc(1, sizeof(*s->st));
	if (!s->st)
		fatal("selftest: out of memory");
	s->st->out = -1;
}

void selftest_stop(struct sched *s)
{
	if (!s->st)
		return;
	probe_end(s, true);
	free(s->st);
	s->st = NULL;
}

/* ---- the probe process ---- */

static uint64_t probe_arg(const char *v, uint64_t lo, uint64_t hi, bool *bad)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi)
		*bad = true;
	return x;
}

/* Runs until the thread's CPU clock has advanced by ns. */
static void probe_burn(uint64_t ns)
{
	uint64_t end = clock_ns(CLOCK_THREAD_CPUTIME_ID) + ns;
	volatile uint64_t sink = 0;

	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 256; i++)
			sink += (uint64_t)i;
	(void)sink; /* the loop is the point: CPU time, not a result */
}

int selftest_probe_main(int argc, char **argv)
{
	bool bad = argc != 5;
	uint64_t p = bad ? 0 : probe_arg(argv[2], 10 * NSEC_PER_USEC, NSEC_PER_SEC, &bad);
	uint64_t job = bad ? 0 : probe_arg(argv[3], 1, NSEC_PER_SEC, &bad);
	uint64_t jobs = bad ? 0 : probe_arg(argv[4], 10, 1000000, &bad);
	uint64_t misses = 0, phase = 0;

	if (bad || job >= p) {
		fprintf(stderr, "vsched --probe: PERIOD_NS JOB_NS JOBS (started by vsched)\n");
		return 2;
	}
	mono_ns rel = (mono_now() / p + 2) * p; /* a few periods of margin */
	for (uint64_t k = 0; k < jobs; k++) {
		struct timespec ts = ns_to_ts(rel);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
		probe_burn(job);
		if (mono_before(rel + p, mono_now()))
			misses++;
		/* Every tenth of the run the release phase moves by a tenth of the period. */
		if ((k + 1) % (jobs / SELFTEST_PHASES ? jobs / SELFTEST_PHASES : 1) == 0)
			phase = p / SELFTEST_PHASES;
		else
			phase = 0;
		rel += p + phase;
		/* an overrun does not cascade: the next release is the next one ahead */
		mono_ns now = mono_now();
		if (mono_before(rel, now))
			rel += (now - rel) / p * p + p;
	}
	printf("%llu %llu\n", (unsigned long long)jobs, (unsigned long long)misses);
	return 0;
}
