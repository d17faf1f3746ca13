/*
 * agent/main.c: the life cycle of vsched-agent (DESIGN.md §4).
 *
 *   vsched-agent [-c FILE] [-n] [-f] [-v] [-C CONTROLLER] [-a APP_ENDPOINT] [-s VSCHED]
 *                [-N NODE]
 *   vsched-agent --calibrate
 *
 * parse → config (refused with one line naming the key) → -n: print it normalised, exit →
 * detect memory-bandwidth sources → sockets (controller DEALER, applications PULL, vsched
 * REQ) → one zmq_poll loop with timers (heartbeat, sampling every q, task statistics, the
 * counters line) until SIGTERM/SIGINT → close everything. SIGUSR1 logs the counters now.
 * Processes under vsched are left there on exit: their constraints stay in force.
 */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <zmq.h>

#include "log.h"
#include "sigutil.h"

#define DEFAULT_CONFIG VSCHED_SYSCONFDIR "/vsched/agent.conf"
#define STATS_SOON_GAP (50 * NSEC_PER_MSEC) /* least time between stats rounds brought forward */

static volatile sig_atomic_t stop_flag, stats_flag;

static void on_signal(int sig)
{
	if (sig == SIGUSR1)
		stats_flag = 1;
	else
		stop_flag = 1;
}

static _Noreturn void usage(void)
{
	fprintf(stderr, "usage: vsched-agent [-c FILE] [-n] [-f] [-v] [-C CONTROLLER] "
	                "[-a APP_ENDPOINT] [-s VSCHED_ENDPOINT] [-N NODE]\n"
	                "       vsched-agent --calibrate\n");
	exit(2);
}

void agent_log_stats(const struct agent *a)
{
	const struct agent_counters *c = &a->cnt;

	log_info("stats: procs=%d app_ok=%llu app_refused=%llu (app_short=%llu app_long=%llu "
	         "app_type=%llu app_version=%llu app_bad=%llu unknown_handle=%llu "
	         "foreign_pid=%llu job_conflict=%llu table_full=%llu) ctl_ok=%llu "
	         "ctl_refused=%llu (ctl_short=%llu ctl_long=%llu ctl_type=%llu ctl_version=%llu "
	         "ctl_bad=%llu ctl_multipart=%llu) "
	         "constraints=%llu/%llu refused (unknown_job=%llu stale=%llu) rates=%llu "
	         "dropped=%llu lost=%llu registrations=%llu link_losses=%llu vsched_errors=%llu "
	         "epochs=%llu epochs_applied=%llu net_unavailable=%llu auth_refused=%llu",
	         registry_nprocs(a), (unsigned long long)c->app_ok,
	         (unsigned long long)(c->app_short + c->app_long + c->app_type + c->app_version +
	                              c->app_bad + c->app_unknown_handle + c->app_foreign_pid +
	                              c->app_unknown_job + c->app_full),
	         (unsigned long long)c->app_short, (unsigned long long)c->app_long,
	         (unsigned long long)c->app_type, (unsigned long long)c->app_version,
	         (unsigned long long)c->app_bad, (unsigned long long)c->app_unknown_handle,
	         (unsigned long long)c->app_foreign_pid, (unsigned long long)c->app_unknown_job,
	         (unsigned long long)c->app_full, (unsigned long long)c->ctl_ok,
	         (unsigned long long)(c->ctl_short + c->ctl_long + c->ctl_type + c->ctl_version +
	                              c->ctl_bad + c->ctl_multipart),
	         (unsigned long long)c->ctl_short, (unsigned long long)c->ctl_long,
	         (unsigned long long)c->ctl_type, (unsigned long long)c->ctl_version,
	         (unsigned long long)c->ctl_bad, (unsigned long long)c->ctl_multipart,
	         (unsigned long long)c->cons_applied, (unsigned long long)c->cons_refused,
	         (unsigned long long)c->ctl_unknown_job, (unsigned long long)c->ctl_stale,
	         (unsigned long long)c->rates_sent, (unsigned long long)c->rates_dropped,
	         (unsigned long long)c->reports_lost, (unsigned long long)c->registrations,
	         (unsigned long long)c->link_losses, (unsigned long long)c->vsched_errors,
	         (unsigned long long)c->epochs, (unsigned long long)c->epochs_applied,
	         (unsigned long long)c->net_unavailable, (unsigned long long)c->ctl_auth_failed);
}

static int calibrate(void)
{
	char ifname[64];
	double m = calib_mem(500), n = calib_net("/sys/class/net", ifname, sizeof(ifname));

	printf("# vsched-agent --calibrate: memory copy on one CPU (read + write), 0.5 s\n");
	printf("mem_capacity_mbs = %.0f;\n", m / 1e6);
	if (n > 0)
		printf("# fastest NIC: %s\n", ifname);
	else
		printf("# no NIC reports a link speed (/sys/class/net/*/speed): unknown\n");
	printf("net_capacity_mbs = %.0f;\n", n / 1e6);
	return 0;
}

static int setup(struct agent *a)
{
	struct smem_ops ops = smem_default_ops();
	struct snet_nsops nsops = snet_default_nsops();

	a->started = mono_now();
	if (getrandom(&a->instance, sizeof(a->instance), 0) != sizeof(a->instance))
		a->instance = a->started ^ ((uint64_t)getpid() << 32);
	bwavg_init(&a->node_rx, (unsigned)a->cfg.windows);
	bwavg_init(&a->node_tx, (unsigned)a->cfg.windows);
	ops.resctrl_root = a->cfg.resctrl_root;
	smem_detect(&a->mem, &ops);
	/*
	 * Before any thread exists, on the thread that samples (this one: run() calls
	 * sampler_round): the namespace it switches back to after each setns.
	 */
	if (snet_ns_init(&a->netns, &nsops, (size_t)a->cfg.max_procs + 1) != 0)
		fatalx("out of memory");
	if (registry_init(a) != 0)
		fatalx("out of memory");
	a->zctx = zmq_ctx_new();
	if (!a->zctx)
		fatalx("zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
	if (vsc_open(&a->vs, a->zctx, a->cfg.vsched_endpoint, a->cfg.vsched_timeout) != 0)
		return -1;
	if (relay_open(a) != 0)
		return -1;
	if (ctl_open(a) != 0)
		return -1;
	if (a->cfg.mem_capacity_mbs == 0 || a->cfg.net_capacity_mbs == 0)
		log_info("node capacities: memory %.0f MB/s, network %.0f MB/s (0: unknown; "
		         "see vsched-agent --calibrate)",
		         a->cfg.mem_capacity_mbs, a->cfg.net_capacity_mbs);
	return 0;
}

static void teardown(struct agent *a)
{
	ctl_close(a);
	relay_close(a);
	vsc_close(&a->vs);
	sampler_release_all(a);
	registry_free(a);
	snet_ns_free(&a->netns);
	if (a->zctx)
		zmq_ctx_term(a->zctx);
	a->zctx = NULL;
}

static void run(struct agent *a)
{
	mono_ns next_sample = mono_now() + a->cfg.sample_interval;
	mono_ns next_stats = mono_now() + a->cfg.stats_interval, last_stats = 0;
	mono_ns next_log = mono_now() + a->cfg.log_stats_interval;

	while (!stop_flag) {
		zmq_pollitem_t it[3] = {
		    {.socket = a->ctl.sock, .events = ZMQ_POLLIN},
		    {.socket = a->ctl.mon, .events = ZMQ_POLLIN},
		    {.socket = a->app, .events = ZMQ_POLLIN},
		};
		mono_ns now = mono_now(), next;
		long ms;

		next = ctl_tick(a, now);
		if (!mono_before(now, next_sample)) {
			sampler_round(a);
			/* Absolute schedule; skip rounds missed (a stalled vsched call). */
			do
				next_sample += a->cfg.sample_interval;
			while (!mono_before(now, next_sample));
		}
		if (a->stats_soon) {
			/* a new process's CPU to the controller now, yet at most one extra round
			 * per STATS_SOON_GAP however fast processes arrive */
			a->stats_soon = false;
			next_stats = mono_min(next_stats, last_stats + STATS_SOON_GAP);
		}
		if (!mono_before(now, next_stats)) {
			stats_send(a);
			nodeinfo_tick(a);
			last_stats = now;
			next_stats = now + a->cfg.stats_interval;
		}
		/* after the stats round: a vsched that answers again gets the epoch back */
		vsc_epoch_tick(a, now);
		if (a->epoch_ns)
			next = mono_min(next, a->epoch_next);
		if (!mono_before(now, next_log) || stats_flag) {
			stats_flag = 0;
			agent_log_stats(a);
			next_log = now + a->cfg.log_stats_interval;
		}
		next = mono_min(next, mono_min(next_sample, mono_min(next_stats, next_log)));
		now = mono_now();
		ms = mono_before(now, next)
		         ? (long)((next - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC)
		         : 0;
		if (zmq_poll(it, 3, ms) < 0) {
			if (zmq_errno() == EINTR)
				continue;
			fatalx("zmq_poll: %s", zmq_strerror(zmq_errno()));
		}
		if (it[1].revents & ZMQ_POLLIN)
			ctl_on_monitor(a);
		if (it[0].revents & ZMQ_POLLIN)
			controller_on_frames(a);
		if (it[2].revents & ZMQ_POLLIN)
			relay_on_frames(a);
	}
}

/* The command line: options over the configuration file. */
struct options {
	const char *conf, *ctl, *app, *vs, *node;
	int check, fg, verbose, conf_given;
};

/* Parses argv into o; returns -1 to go on, else the exit status (--calibrate,
 * --config-keys). */
static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
	    {"calibrate", no_argument, NULL, 'K'},
	    {"config-keys", no_argument, NULL, 'k'}, /* the key table, for the man page */
	    {"controller", required_argument, NULL, 'C'},
	    {"app-endpoint", required_argument, NULL, 'a'},
	    {"vsched", required_argument, NULL, 's'},
	    {"node", required_argument, NULL, 'N'},
	    {NULL, 0, NULL, 0},
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "c:nfvC:a:s:N:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			o->conf = optarg;
			o->conf_given = 1;
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
		case 'C':
			o->ctl = optarg;
			break;
		case 'a':
			o->app = optarg;
			break;
		case 's':
			o->vs = optarg;
			break;
		case 'N':
			o->node = optarg;
			break;
		case 'K':
			return calibrate();
		case 'k':
			agent_config_keys(stdout);
			return 0;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	return -1;
}

/* The configuration: the file, then the command line, checked. 0 or -1 (said on stderr). */
static int configure(struct agent_config *cfg, const struct options *o)
{
	char why[256];

	agent_config_defaults(cfg);
	/* The default config file is optional; one given with -c is not. */
	if ((o->conf_given || access(o->conf, F_OK) == 0) &&
	    agent_config_load(o->conf, cfg, why, sizeof(why)) != 0) {
		fprintf(stderr, "vsched-agent: %s: %s\n", o->conf, why);
		return -1;
	}
	if (o->ctl)
		snprintf(cfg->controller, sizeof(cfg->controller), "%s", o->ctl);
	if (o->app)
		snprintf(cfg->app_endpoint, sizeof(cfg->app_endpoint), "%s", o->app);
	if (o->vs)
		snprintf(cfg->vsched_endpoint, sizeof(cfg->vsched_endpoint), "%s", o->vs);
	if (o->node)
		snprintf(cfg->node, sizeof(cfg->node), "%s", o->node);
	if (agent_config_check(cfg, why, sizeof(why)) != 0) {
		fprintf(stderr, "vsched-agent: %s\n", why);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = {.conf = DEFAULT_CONFIG};
	static struct agent a; /* large: keep it off the stack */
	int rc;

	if ((rc = parse_options(argc, argv, &o)) >= 0)
		return rc;
	log_init("vsched-agent", o.fg || o.check, o.verbose);
	if (configure(&a.cfg, &o) != 0)
		return 1;
	if (o.check) {
		agent_config_print(stdout, &a.cfg);
		return 0;
	}
	if (!o.fg && daemon(0, 0) < 0)
		fatal("daemon");

	sig_install(on_signal, (const int[]){SIGTERM, SIGINT, SIGUSR1, 0});

	if (setup(&a) != 0) {
		teardown(&a);
		log_warnx("exiting: setup failed");
		return 1;
	}
	log_info("running: node %s, %d CPU(s), q %llu ms, w %d", a.cfg.node, a.cfg.ncpus,
	         (unsigned long long)(a.cfg.sample_interval / NSEC_PER_MSEC), a.cfg.windows);
	run(&a);
	agent_log_stats(&a);
	log_info("exiting on signal");
	teardown(&a);
	return 0;
}
