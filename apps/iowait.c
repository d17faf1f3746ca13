/*
 * iowait: a bulk-synchronous job whose ranks compute, then block, then meet at a barrier.
 *
 * Every iteration each of N rank processes computes for --compute of CPU time (the
 * calibrated fixed work of spin.c), then blocks for --wait of wall time without using the
 * CPU (a sleep, like waiting for a disk or a server), then waits at a barrier shared by all
 * ranks (a process-shared pthread barrier: blocking, no spinning). With --wait 0 it is a
 * pure-compute BSP job: its rate is proportional to its CPU share. With a wait its rate is
 * not: a rank that is parked by its reservation while it would have been waiting anyway
 * loses nothing, so the job runs faster than its share (the case the controller's floating
 * algorithm exists for, docs/control.md).
 *
 * Each rank reports one unit per iteration through libapprate as rank R of the job; rank 0
 * writes the iteration stamps (--stamps) and a summary line on stdout.
 */
#include "apps.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define RANKS_MAX  256
#define DEF_DUR_NS (10 * NSEC_PER_SEC)

struct iw_cfg {
	bool calibrate;
	uint32_t ranks;
	uint64_t compute_ns, wait_ns, duration_ns;
	const char *job, *stamps;
};

/* Shared by the ranks (anonymous shared mapping made before the fork). */
struct iw_shared {
	pthread_barrier_t barrier;
	volatile uint64_t stop_at; /* the last iteration, set by rank 0 before its barrier */
};

static void usage(FILE *f)
{
	fputs("usage: iowait [--ranks N] [--compute DUR] [--wait DUR] [--duration DUR]\n"
	      "              [--job NAME] [--stamps FILE] | --calibrate\n"
	      "\n"
	      "N ranks; every iteration each computes, blocks without the CPU, then meets the\n"
	      "others at a barrier. Reports one unit per iteration per rank through libapprate.\n"
	      "\n"
	      "  --ranks N        rank processes, 1..256 (default 2)\n"
	      "  --compute DUR    CPU time per iteration (default 8ms)\n"
	      "  --wait DUR       blocking wait per iteration, like I/O (default 4ms; 0: none)\n"
	      "  --duration DUR   stop at the first iteration end after DUR (default 10s)\n"
	      "  --job NAME       libapprate job name (default $VSCHED_JOB; none: no reports)\n"
	      "  --stamps FILE    rank 0 writes \"ITERATION MONOTONIC_NS\" per iteration\n"
	      "  --calibrate      print the compute loop's CPU ns per step and exit (give it to\n"
	      "                   every run as APP_SPIN_NS_PER_LOOP: same work per iteration)\n",
	      f);
}

static void parse(int argc, char **argv, struct iw_cfg *c)
{
	static const struct option opts[] = {
	    {"ranks", required_argument, NULL, 'n'},
	    {"compute", required_argument, NULL, 'c'},
	    {"wait", required_argument, NULL, 'w'},
	    {"duration", required_argument, NULL, 'd'},
	    {"job", required_argument, NULL, 'j'},
	    {"stamps", required_argument, NULL, 's'},
	    {"calibrate", no_argument, NULL, 'C'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	int o;

	*c = (struct iw_cfg){.ranks = 2,
	                     .compute_ns = 8 * NSEC_PER_MSEC,
	                     .wait_ns = 4 * NSEC_PER_MSEC,
	                     .duration_ns = DEF_DUR_NS};
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 'n':
			c->ranks = (uint32_t)app_uint("ranks", optarg, 1, RANKS_MAX);
			break;
		case 'c':
			c->compute_ns = app_duration("compute", optarg, false);
			break;
		case 'w':
			c->wait_ns =
			    strcmp(optarg, "0") == 0 ? 0 : app_duration("wait", optarg, true);
			break;
		case 'd':
			c->duration_ns = app_duration("duration", optarg, false);
			break;
		case 'j':
			c->job = optarg;
			break;
		case 's':
			c->stamps = optarg;
			break;
		case 'C':
			c->calibrate = true;
			break;
		case 'h':
			usage(stdout);
			exit(APP_EXIT_OK);
		default:
			usage(stderr);
			exit(APP_EXIT_USAGE);
		}
	}
	if (optind < argc)
		app_usage_fail("unexpected argument '%s'", argv[optind]);
}

/* Blocks for ns of wall time without using the CPU (restarted after signals). */
static void block_for(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / NSEC_PER_SEC),
	                      .tv_nsec = (long)(ns % NSEC_PER_SEC)};

	while (ns && nanosleep(&ts, &ts) != 0 && errno == EINTR && !app_stop)
		;
}

/* One rank's loop. Rank 0 decides when to stop: it writes the number of the last iteration
 * before that iteration's barrier, every rank compares it with its own count after the
 * barrier, so all ranks run the same iterations (a rank still reading iteration k's value
 * cannot mistake iteration k+1's for it). */
static int rank_main(const struct iw_cfg *c, struct iw_shared *sh, uint32_t rank)
{
	struct apprate_opts o = APPRATE_OPTS_INIT;
	struct stamps *st = rank == 0 ? stamps_open(c->stamps) : NULL;
	struct spin sp;
	apprate_t *ar = NULL;
	uint64_t iters = 0, start, now;

	spin_init(&sp, SPIN_WORK);
	o.rank = (int)rank;
	const char *env_job = getenv("VSCHED_JOB");

	if (c->job || (env_job && *env_job)) {
		ar = apprate_open(c->job, &o);
		if (!ar)
			fprintf(stderr,
			        "iowait: rank %u: libapprate: %s (running without reports)\n", rank,
			        apprate_strerror(-errno));
	}
	start = mono_now();
	for (;;) {
		spin_run(&sp, c->compute_ns);
		block_for(c->wait_ns);
		iters++;
		if (rank == 0 && (app_stop || mono_now() - start >= c->duration_ns))
			sh->stop_at = iters;
		pthread_barrier_wait(&sh->barrier);
		now = mono_now();
		if (ar)
			apprate_iteration(ar);
		stamps_add(st, now);
		if (sh->stop_at == iters)
			break;
	}
	if (rank == 0)
		printf("iowait: ranks=%u iterations=%llu seconds=%.3f rate=%.3f it/s\n", c->ranks,
		       (unsigned long long)iters, app_sec(now - start),
		       (double)iters / app_sec(now - start));
	fflush(stdout);
	stamps_close(&st);
	apprate_close(&ar);
	return APP_EXIT_OK;
}

int main(int argc, char **argv)
{
	struct iw_cfg c;
	struct iw_shared *sh;
	pthread_barrierattr_t ba;
	pid_t pids[RANKS_MAX];
	int rc = APP_EXIT_OK, st;

	app_name = "iowait";
	parse(argc, argv, &c);
	(void)spin_given_ns_per_loop(); /* a bad value is a usage error, before any fork */
	if (c.calibrate) {              /* measured here, whatever APP_SPIN_NS_PER_LOOP says */
		struct spin sp;
		unsetenv(SPIN_ENV);
		spin_init(&sp, SPIN_WORK);
		printf("%.6f\n", sp.ns_per_loop);
		return APP_EXIT_OK;
	}
	app_signals();
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		app_fail("shared memory: %s", strerror(errno));
	pthread_barrierattr_init(&ba);
	pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
	if (pthread_barrier_init(&sh->barrier, &ba, c.ranks) != 0)
		app_fail("barrier: %s", strerror(errno));
	fflush(stdout);
	for (uint32_t r = 0; r < c.ranks; r++) {
		pids[r] = fork();
		if (pids[r] < 0)
			app_fail("fork: %s", strerror(errno));
		if (pids[r] == 0)
			_exit(rank_main(&c, sh, r));
	}
	for (uint32_t done = 0; done < c.ranks;) {
		pid_t p = wait(&st);
		if (p < 0 && errno == EINTR) { /* asked to stop: rank 0 ends the job in step */
			kill(pids[0], SIGTERM);
			continue;
		}
		if (p < 0)
			break;
		done++;
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			/* a rank died: the others would wait at the barrier for ever */
			rc = APP_EXIT_FAIL;
			for (uint32_t r = 0; r < c.ranks; r++)
				if (pids[r] != p)
					kill(pids[r], SIGKILL);
		}
	}
	return rc;
}
