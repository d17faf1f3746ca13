/*
 * vsched-controller: the cluster brain (DESIGN.md §5; see controller.h for the design).
 *
 *   vsched-controller [-c FILE] [-n] [-f] [-v] [-d] [-A AGENT_ENDPOINT] [-a ADMIN_ENDPOINT]
 *                     [-S STATE_FILE]
 *
 * main: parse options -> load and check the config -> restore the state file -> bind the
 * agents' and the admin endpoints -> loop (zmq_poll, timers) until SIGTERM/SIGINT -> save
 * the state -> close. Runs as any user; it changes nothing on the machine but its state
 * file.
 */
#include "controller.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <zmq.h>

#include "log.h"

#define TICK_MS 100 /* timers: node liveness, acknowledgement timeouts, state, dashboard */

static volatile sig_atomic_t quit;

static void on_signal(int sig)
{
	(void)sig;
	quit = 1;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: vsched-controller [-c FILE] [-n] [-f] [-v] [-d] [-A AGENT_ENDPOINT]\n"
	           "                         [-a ADMIN_ENDPOINT] [-S STATE_FILE]\n"
	           "  -c FILE  configuration (default " CTLD_DEFAULT_CONFIG ")\n"
	           "  -n       check the configuration, print it normalised, exit\n"
	           "  -f       foreground, log to stderr\n"
	           "  -v       more logging\n"
	           "  -d       show the dashboard on stdout, refreshed in place (implies -f)\n"
	           "  -A, -a   endpoints for the agents (ROUTER) and for vschedctl (admin)\n"
	           "  -S       state file (targets and per-job settings)\n");
}

static int set_string(char *dst, size_t cap, const char *src, const char *what)
{
	if (strlen(src) >= cap || src[0] == '\0') {
		fprintf(stderr, "vsched-controller: %s: empty or too long\n", what);
		return -1;
	}
	snprintf(dst, cap, "%s", src);
	return 0;
}

int main(int argc, char **argv)
{
	const char *agents = NULL, *admin = NULL, *statef = NULL;
	int opt, check = 0, fg = 0, verbose = 0, rc = 1;
	struct ctld d;
	char why[512];
	mono_ns next_dash = 0;
	struct sigaction sa;

	memset(&d, 0, sizeof(d));
	d.config_path = CTLD_DEFAULT_CONFIG;
	while ((opt = getopt(argc, argv, "c:nfvdA:a:S:h")) != -1) {
		switch (opt) {
		case 'c':
			d.config_path = optarg;
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
		case 'd':
			d.dashboard = true;
			fg = 1;
			break;
		case 'A':
			agents = optarg;
			break;
		case 'a':
			admin = optarg;
			break;
		case 'S':
			statef = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "vsched-controller: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}

	ctld_config_defaults(&d.cfg);
	if (access(d.config_path, F_OK) == 0 || strcmp(d.config_path, CTLD_DEFAULT_CONFIG) != 0) {
		if (ctld_config_load(&d.cfg, d.config_path, why, sizeof(why)) != 0) {
			fprintf(stderr, "vsched-controller: %s\n", why);
			return 1;
		}
	}
	if ((agents && set_string(d.cfg.agents, sizeof(d.cfg.agents), agents, "-A") != 0) ||
	    (admin && set_string(d.cfg.admin, sizeof(d.cfg.admin), admin, "-a") != 0) ||
	    (statef && set_string(d.cfg.state_file, sizeof(d.cfg.state_file), statef, "-S") != 0))
		return 2;
	if (check) {
		ctld_config_print(&d.cfg, stdout);
		return 0;
	}

	log_init("vsched-controller", fg, verbose);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (getrandom(&d.ctl_instance, sizeof(d.ctl_instance), 0) != sizeof(d.ctl_instance))
		d.ctl_instance = (uint64_t)getpid() ^ clock_ns(CLOCK_REALTIME);

	cosched_init(&d);
	if (state_restore(&d, mono_now(), why, sizeof(why)) != 0) {
		log_warnx("state file refused: %s (fix or move it away; nothing was changed)", why);
		goto out;
	}
	d.zctx = zmq_ctx_new();
	if (d.zctx == NULL)
		fatalx("zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
	if (agents_open(&d) != 0 || admin_open(&d) != 0)
		goto out;
	log_info("started (instance %016llx, %d job(s) restored)",
	         (unsigned long long)d.ctl_instance, d.njobs);

	while (!quit) {
		zmq_pollitem_t items[2] = {
		    {.socket = d.agents, .events = ZMQ_POLLIN},
		    {.socket = d.admin, .events = ZMQ_POLLIN},
		};
		mono_ns now;
		int n = zmq_poll(items, 2, TICK_MS);

		if (n < 0 && zmq_errno() != EINTR)
			fatalx("zmq_poll: %s", zmq_strerror(zmq_errno()));
		now = mono_now();
		if (n > 0 && (items[0].revents & ZMQ_POLLIN))
			agents_recv(&d, now);
		if (n > 0 && (items[1].revents & ZMQ_POLLIN))
			admin_recv(&d, now);
		agents_tick(&d, now);
		jobs_tick(&d, now);
		if (d.cfg.cs.on)
			cosched_tick(&d, now);
		/* end of the turn: one state write for all its changes, then the admin replies
		 * (durability contract: state.c, state_commit()) */
		admin_end_turn(&d, now);
		if (d.dashboard && !mono_before(now, next_dash)) {
			admin_dashboard(&d, stdout, now);
			next_dash = now + d.cfg.dashboard_interval;
		}
	}
	log_info("stopping");
	rc = 0;
	if (state_save_all(&d) != 0)
		rc = 1;
out:
	admin_close(&d);
	agents_close(&d);
	if (d.zctx)
		zmq_ctx_term(d.zctx);
	cosched_free(&d);
	jobs_free(&d);
	return rc;
}
