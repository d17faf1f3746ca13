/*
 * vsched-controller: the cluster brain (DESIGN.md §5; see controller.h for the design).
 *
 *   vsched-controller [-c FILE] [-n] [-f] [-v] [-d] [-A AGENT_ENDPOINT] [-a ADMIN_ENDPOINT]
 *                     [-S STATE_FILE]
 *
 * main: parse options -> load and check the config -> restore the state file -> bind the
 * agents' and the admin endpoints -> loop (loop.c) until SIGTERM/SIGINT -> save the state
 * -> close. SIGHUP reads the CURVE allow-lists again (docs/security.md). Runs as any user; it
 * changes nothing on the machine but its state file.
 */
#include "controller.h"

#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include <zmq.h>

#include "cfgutil.h"
#include "log.h"
#include "sigutil.h"

static volatile sig_atomic_t quit, reload;

/* Sets the flag, then wakes the loop (sigutil.h: a flag alone can be missed by a poll that
 * sleeps without a deadline). */
static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload = 1;
	else
		quit = 1;
	sig_wake();
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

/* set_string for an endpoint option: checked as the configuration file's are. */
static int set_endpoint(char *dst, size_t cap, const char *src, const char *what)
{
	char why[256];

	if (cfg_check_endpoint(src, why, sizeof(why)) != 0) {
		fprintf(stderr, "vsched-controller: %s: %s\n", what, why);
		return -1;
	}
	return set_string(dst, cap, src, what);
}

/* Command-line options over the defaults: endpoints and state file override the config. */
struct options {
	const char *agents, *admin, *state;
	int check, fg, verbose;
};

/* Parses argv into o and d; returns -1 to go on, else the exit status. */
static int parse_options(int argc, char **argv, struct ctld *d, struct options *o)
{
	static const struct option longopts[] = {
	    {"config-keys", no_argument, NULL, 'K'}, /* the key table, for the man page */
	    {NULL, 0, NULL, 0},
	};
	int opt;

	while ((opt = getopt_long(argc, argv, "c:nfvdA:a:S:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'K':
			ctld_config_keys(stdout);
			return 0;
		case 'c':
			d->config_path = optarg;
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
		case 'd':
			d->dashboard = true;
			o->fg = 1;
			break;
		case 'A':
			o->agents = optarg;
			break;
		case 'a':
			o->admin = optarg;
			break;
		case 'S':
			o->state = optarg;
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
	return -1;
}

/* The configuration: file, then the command line. Returns -1 to go on, else the status. */
static int configure(struct ctld *d, const struct options *o)
{
	char why[512];

	ctld_config_defaults(&d->cfg);
	if (access(d->config_path, F_OK) == 0 || strcmp(d->config_path, CTLD_DEFAULT_CONFIG) != 0) {
		if (ctld_config_load(d->config_path, &d->cfg, why, sizeof(why)) != 0) {
			fprintf(stderr, "vsched-controller: %s\n", why);
			return 1;
		}
	}
	if ((o->agents &&
	     set_endpoint(d->cfg.agents, sizeof(d->cfg.agents), o->agents, "-A") != 0) ||
	    (o->admin && set_endpoint(d->cfg.admin, sizeof(d->cfg.admin), o->admin, "-a") != 0) ||
	    (o->state &&
	     set_string(d->cfg.state_file, sizeof(d->cfg.state_file), o->state, "-S") != 0))
		return 2;
	/* keys and allow-lists are read here, so that -n checks them too */
	if (ctld_config_exposure(&d->cfg, why, sizeof(why)) != 0 ||
	    auth_load(&d->auth, &d->cfg, why, sizeof(why)) != 0) {
		fprintf(stderr, "vsched-controller: %s\n", why);
		return 1;
	}
	return -1;
}

/* State file, sockets. Returns 0 or -1 (logged). */
static int setup(struct ctld *d)
{
	char why[512];

	if (getrandom(&d->ctl_instance, sizeof(d->ctl_instance), 0) != sizeof(d->ctl_instance))
		d->ctl_instance = (uint64_t)getpid() ^ clock_ns(CLOCK_REALTIME);
	cosched_init(d);
	if (persist_restore(d, mono_now(), why, sizeof(why)) != 0) {
		log_warnx("state file refused: %s (fix or move it away; nothing was changed)", why);
		return -1;
	}
	d->zctx = zmq_ctx_new();
	if (d->zctx == NULL)
		fatalx("zmq_ctx_new: %s", zmq_strerror(zmq_errno()));
	if (auth_open(d) != 0 || agents_open(d) != 0 || admin_open(d) != 0)
		return -1;
	log_info("started (instance %016llx, %d job(s) restored)",
	         (unsigned long long)d->ctl_instance, d->njobs);
	return 0;
}

/* The monitors stop before the sockets they watch close (auth_unwatch), then the sockets,
 * then the context: zmq_ctx_term returns once every socket is closed (ZMQ_LINGER 0). */
static void teardown(struct ctld *d)
{
	auth_unwatch(d);
	admin_close(d);
	agents_close(d);
	auth_close(d);
	if (d->zctx)
		zmq_ctx_term(d->zctx);
	cosched_free(d);
	jobs_free(d);
	nodes_free(d);
}

int main(int argc, char **argv)
{
	static struct ctld d; /* large: keep it off the stack */
	struct options o = {0};
	int rc;

	d.config_path = CTLD_DEFAULT_CONFIG;
	if ((rc = parse_options(argc, argv, &d, &o)) >= 0 || (rc = configure(&d, &o)) >= 0)
		return rc;
	if (o.check) {
		ctld_config_print(stdout, &d.cfg);
		auth_free(&d.auth);
		return 0;
	}
	log_init("vsched-controller", o.fg, o.verbose);
	if (sig_wake_open() != 0)
		fatal("wake-up pipe");
	sig_install(on_signal, (const int[]){SIGTERM, SIGINT, SIGHUP, 0});
	rc = 1;
	if (setup(&d) == 0) {
		loop_run(&d, &quit, &reload, sig_wake_fd());
		log_info("stopping");
		rc = persist_save(&d) == 0 ? 0 : 1;
	}
	teardown(&d);
	return rc;
}
