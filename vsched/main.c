/*
 * vsched/main.c: the daemon's life cycle (DESIGN.md §2).
 *
 *   vsched [-c FILE] [-n] [-f] [-v] [-s ENDPOINT]
 *   vsched --watchdog ...   (internal: the guardian process, see watchdog.c)
 *   vsched --probe ...      (internal: the self-test's probe, see selftest.c)
 *
 * parse → config (refused with one line naming the key) → -n: print it normalised, exit →
 * mlockall → watchdog → tables → dispatchers → API thread at SCHED_FIFO 99 → self-test (if
 * configured) → serve until SIGTERM/SIGINT/SIGHUP → stop dispatchers, restore every task →
 * stop the watchdog → exit 0. Signal handlers only set a flag; api_run() returns when it is
 * set.
 */
#include "vsched.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "log.h"
#include "sigutil.h"

#define DEFAULT_CONFIG VSCHED_SYSCONFDIR "/vsched/vsched.conf"

static volatile sig_atomic_t stop_flag;

struct opts {
	const char *conf, *endpoint;
	int check, fg, verbose;
};

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static _Noreturn void usage(void)
{
	fprintf(stderr, "usage: vsched [-c FILE] [-n] [-f] [-v] [-s ENDPOINT]\n");
	exit(2);
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	int ch;

	*o = (struct opts){.conf = DEFAULT_CONFIG};
	while ((ch = getopt(argc, argv, "c:nfvs:")) != -1) {
		switch (ch) {
		case 'c':
			o->conf = optarg;
			break;
		case 'n':
			o->check = 1;
			break;
		case 'f':
			o->fg = 1;
			break;
		case 'v':
			o->verbose++;
			break;
		case 's':
			o->endpoint = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
}

/* Loads the configuration and applies -s. Returns 0, or 1 after a one-line reason. */
static int load_config(const struct opts *o, struct vsched_config *cfg)
{
	char why[256];

	config_defaults(cfg);
	if (config_load(o->conf, cfg, why, sizeof(why)) < 0) {
		/* One line naming the file and the key; parse errors already start with it. */
		if (strncmp(why, o->conf, strlen(o->conf)) == 0)
			fprintf(stderr, "vsched: %s\n", why);
		else
			fprintf(stderr, "vsched: %s: %s\n", o->conf, why);
		return 1;
	}
	if (o->endpoint) {
		if (strlen(o->endpoint) >= sizeof(cfg->endpoint)) {
			fprintf(stderr, "vsched: -s: endpoint longer than %zu bytes\n",
			        sizeof(cfg->endpoint) - 1);
			return 1;
		}
		snprintf(cfg->endpoint, sizeof(cfg->endpoint), "%s", o->endpoint);
	}
	return 0;
}

/*
 * Signals set stop_flag (no SA_RESTART: a blocking poll returns EINTR), memory is locked, and
 * the descriptor limit raised: every task holds a pidfd and may hold perf counters.
 */
static void prepare_process(void)
{
	struct rlimit rl;
	int mcl = MCL_CURRENT | MCL_FUTURE;

	sig_install(on_signal, (const int[]){SIGTERM, SIGINT, SIGHUP, 0});
#ifdef VSCHED_SANITIZE
	mcl |= MCL_ONFAULT; /* ASan reserves terabytes of shadow memory */
#endif
	if (mlockall(mcl) < 0)
		fatal("mlockall");
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Watchdog, tables, dispatchers, API thread priority. Returns the scheduler (fatal on error). */
static struct sched *start_scheduler(const struct vsched_config *cfg, struct watchdog **wd)
{
	struct sched_param sp = {.sched_priority = VS_PRIO_DISPATCH};
	struct sched *s = calloc(1, sizeof(*s));
	char why[256];
	int rc;

	if (!s)
		fatal("out of memory");
	*wd = watchdog_start(cfg->max_tasks);
	if (!*wd)
		fatalx("cannot start the watchdog");
	if (sched_init(s, cfg, why, sizeof(why)) < 0) {
		watchdog_stop(wd);
		fatalx("%s", why);
	}
	selftest_init(s);
	sched_attach_watchdog(s, *wd);
	if (dispatch_start(s) < 0) {
		selftest_stop(s);
		sched_shutdown(s);
		watchdog_stop(wd);
		fatalx("cannot start the dispatchers");
	}
	rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (rc) {
		errno = rc;
		log_warn("API thread: cannot set SCHED_FIFO %d", VS_PRIO_DISPATCH);
	}
	if (cfg->selftest_at_start && selftest_start(s, why, sizeof(why)) < 0)
		log_warnx("self-test not started: %s", why);
	return s;
}

int main(int argc, char **argv)
{
	struct vsched_config cfg;
	struct watchdog *wd;
	struct sched *s;
	struct opts o;
	int status;

	if (argc > 1 && strcmp(argv[1], "--watchdog") == 0)
		return watchdog_main(argc, argv);
	if (argc > 1 && strcmp(argv[1], "--probe") == 0)
		return selftest_probe_main(argc, argv);
	if (argc == 2 && strcmp(argv[1], "--config-keys") == 0) {
		config_keys(stdout); /* the key table, for the man page */
		return 0;
	}
	parse_args(argc, argv, &o);
	log_init("vsched", o.fg || o.check, o.verbose);
	if (load_config(&o, &cfg))
		return 1;
	if (o.check) {
		config_print(stdout, &cfg);
		return 0;
	}
	if (!o.fg && daemon(0, 0) < 0)
		fatal("daemon");
	prepare_process();
	watchdog_recover();
	s = start_scheduler(&cfg, &wd);
	log_info("running on %d CPUs, API on %s", cfg.ncpus, cfg.endpoint);

	status = api_run(s, &stop_flag) < 0 ? 1 : 0;

	log_info("stopping: restoring every task");
	selftest_stop(s);
	sched_shutdown(s);
	s->wd = NULL;
	watchdog_stop(&wd);
	free(s);
	log_info("stopped");
	return status;
}
