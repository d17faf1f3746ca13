/*
 * vsched/main.c: the daemon's life cycle (DESIGN.md §2).
 *
 *   vsched [-c FILE] [-n] [-f] [-v] [-s ENDPOINT]
 *   vsched --watchdog ...   (internal: the guardian process, see watchdog.c)
 *
 * parse → config (refused with one line naming the key) → -n: print it normalised, exit →
 * mlockall → watchdog → tables → dispatchers → API thread at SCHED_FIFO 99 → serve until
 * SIGTERM/SIGINT/SIGHUP → stop dispatchers, restore every task → stop the watchdog → exit 0.
 * Signal handlers only set a flag; api_run() returns when it is set.
 */
#include "vsched.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "log.h"

#define DEFAULT_CONFIG VSCHED_SYSCONFDIR "/vsched/vsched.conf"

static volatile sig_atomic_t stop_flag;

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

int main(int argc, char **argv)
{
	const char *conf = DEFAULT_CONFIG, *endpoint = NULL;
	int check = 0, fg = 0, verbose = 0, ch;
	struct vsched_config cfg;
	struct sched *s;
	char why[256];

	if (argc > 1 && strcmp(argv[1], "--watchdog") == 0)
		return watchdog_main(argc, argv);
	if (argc == 2 && strcmp(argv[1], "--config-keys") == 0) {
		config_keys(stdout); /* the key table, for the man page */
		return 0;
	}

	while ((ch = getopt(argc, argv, "c:nfvs:")) != -1) {
		switch (ch) {
		case 'c':
			conf = optarg;
			break;
		case 'n':
			check = 1;
			break;
		case 'f':
			fg = 1;
			break;
		case 'v':
			verbose++;
			break;
		case 's':
			endpoint = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	log_init("vsched", fg || check, verbose);

	config_defaults(&cfg);
	if (config_load(conf, &cfg, why, sizeof(why)) < 0) {
		/* One line naming the file and the key; parse errors already start with it. */
		if (strncmp(why, conf, strlen(conf)) == 0)
			fprintf(stderr, "vsched: %s\n", why);
		else
			fprintf(stderr, "vsched: %s: %s\n", conf, why);
		return 1;
	}
	if (endpoint) {
		if (strlen(endpoint) >= sizeof(cfg.endpoint)) {
			fprintf(stderr, "vsched: -s: endpoint longer than %zu bytes\n",
			        sizeof(cfg.endpoint) - 1);
			return 1;
		}
		snprintf(cfg.endpoint, sizeof(cfg.endpoint), "%s", endpoint);
	}
	if (check) {
		config_print(stdout, &cfg);
		return 0;
	}
	if (!fg && daemon(0, 0) < 0)
		fatal("daemon");

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal; /* no SA_RESTART: a blocking poll returns EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);

	int mcl = MCL_CURRENT | MCL_FUTURE;
#ifdef VSCHED_SANITIZE
	mcl |= MCL_ONFAULT; /* ASan reserves terabytes of shadow memory */
#endif
	if (mlockall(mcl) < 0)
		fatal("mlockall");

	s = calloc(1, sizeof(*s));
	if (!s)
		fatal("out of memory");
	struct watchdog *wd = watchdog_start(cfg.max_tasks);
	if (!wd)
		fatalx("cannot start the watchdog");
	if (sched_init(s, &cfg, why, sizeof(why)) < 0) {
		watchdog_stop(&wd);
		fatalx("%s", why);
	}
	s->wd = wd;
	if (dispatch_start(s) < 0) {
		sched_shutdown(s);
		watchdog_stop(&wd);
		fatalx("cannot start the dispatchers");
	}
	struct sched_param sp = {.sched_priority = VS_PRIO_DISPATCH};
	int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	if (rc) {
		errno = rc;
		log_warn("API thread: cannot set SCHED_FIFO %d", VS_PRIO_DISPATCH);
	}
	log_info("running on %d CPUs, API on %s", cfg.ncpus, cfg.endpoint);

	int status = api_run(s, &stop_flag) < 0 ? 1 : 0;

	log_info("stopping: restoring every task");
	sched_shutdown(s);
	s->wd = NULL;
	watchdog_stop(&wd);
	free(s);
	log_info("stopped");
	return status;
}
