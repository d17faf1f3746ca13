/*
 * vsched-agent configuration: defaults, loading (libconfig through cfgutil, every key
 * checked with its name in the error), normalised printing for -n.
 */
#include "agent.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfgutil.h"
#include "duration.h"
#include "text.h"

static const char *const known_keys[] = {
    "node_name",
    "controller",
    "app_endpoint",
    "app_endpoint_mode",
    "vsched_endpoint",
    "heartbeat",
    "controller_timeout",
    "vsched_timeout",
    "sample_interval",
    "sample_windows",
    "stats_interval",
    "log_stats_interval",
    "ncpus",
    "mem_capacity_mbs",
    "net_capacity_mbs",
    "provisional_period",
    "provisional_slice",
    "park",
    "max_procs",
    "resctrl_root",
    NULL,
};

static const char *const park_names[] = {"stop", "idle", NULL};

void agent_config_defaults(struct agent_config *cfg)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	memset(cfg, 0, sizeof(*cfg));
	if (gethostname(cfg->node, sizeof(cfg->node)) != 0 || !text_name_ok(cfg->node))
		snprintf(cfg->node, sizeof(cfg->node), "node");
	cfg->node[PCTL_NAME_MAX] = '\0';
	snprintf(cfg->controller, sizeof(cfg->controller), "tcp://127.0.0.1:7710");
	snprintf(cfg->app_endpoint, sizeof(cfg->app_endpoint), "ipc:///run/vsched/agent.sock");
	cfg->app_endpoint_mode = 0666;
	snprintf(cfg->vsched_endpoint, sizeof(cfg->vsched_endpoint), "ipc:///run/vsched/api.sock");
	cfg->heartbeat = 1 * NSEC_PER_SEC;
	cfg->controller_timeout = 3 * NSEC_PER_SEC;
	cfg->vsched_timeout = 1 * NSEC_PER_SEC;
	cfg->sample_interval = 500 * NSEC_PER_MSEC;
	cfg->windows = 2;
	cfg->stats_interval = 2 * NSEC_PER_SEC;
	cfg->log_stats_interval = 60 * NSEC_PER_SEC;
	cfg->ncpus = n > 0 ? (int)n : 1;
	cfg->provisional.period = 0;
	cfg->park = VSP_PARK_STOP;
	cfg->max_procs = 1024;
	snprintf(cfg->resctrl_root, sizeof(cfg->resctrl_root), "/sys/fs/resctrl");
}

static bool endpoint_ok(const char *e, bool tcp_only)
{
	if (strncmp(e, "tcp://", 6) == 0)
		return e[6] != '\0';
	if (tcp_only)
		return false;
	return strncmp(e, "ipc://", 6) == 0 && e[6] != '\0';
}

int agent_config_check(const struct agent_config *cfg, char *why, size_t whylen)
{
	char rwhy[160];

	if (!text_name_ok(cfg->node)) {
		text_fmt(why, whylen,
		         "node_name: must be 1..%d printable characters without blanks",
		         PCTL_NAME_MAX);
		return -1;
	}
	if (!endpoint_ok(cfg->controller, true)) {
		text_fmt(why, whylen, "controller: \"%s\" is not a tcp:// endpoint",
		         cfg->controller);
		return -1;
	}
	if (!endpoint_ok(cfg->app_endpoint, false)) {
		text_fmt(why, whylen, "app_endpoint: \"%s\" is not an ipc:// or tcp:// endpoint",
		         cfg->app_endpoint);
		return -1;
	}
	if (!endpoint_ok(cfg->vsched_endpoint, false)) {
		text_fmt(why, whylen, "vsched_endpoint: \"%s\" is not an ipc:// or tcp:// endpoint",
		         cfg->vsched_endpoint);
		return -1;
	}
	if (cfg->controller_timeout <= cfg->heartbeat) {
		text_fmt(why, whylen, "controller_timeout: must be longer than heartbeat");
		return -1;
	}
	if (cfg->provisional.period != 0 || cfg->provisional.slice != 0) {
		struct vsp_resv r = cfg->provisional;
		r.deadline = r.period;
		rwhy[0] = '\0';
		if (r.period == 0 || vsp_check_resv(&r, rwhy, sizeof(rwhy)) != 0) {
			text_fmt(why, whylen, "provisional_slice: %s",
			         r.period == 0 ? "needs provisional_period" : rwhy);
			return -1;
		}
	}
	return 0;
}

/* "0660" -> 0660; returns -1 unless 1..4 octal digits. */
static int parse_mode(const char *s, unsigned *mode)
{
	char *end;
	unsigned long v;

	if (s[0] < '0' || s[0] > '7' || strlen(s) > 4)
		return -1;
	errno = 0;
	v = strtoul(s, &end, 8);
	if (errno || *end || v > 0777)
		return -1;
	*mode = (unsigned)v;
	return 0;
}

int agent_config_load(const char *path, struct agent_config *cfg, char *why, size_t whylen)
{
	config_t c;
	long long v;
	double d;
	int idx, rc = -1;
	char mode[16] = "";

	if (cfg_load(&c, path, why, whylen) != 0)
		return -1;
	if (cfg_check_keys(&c, known_keys, why, whylen) != 0)
		goto out;
	if (cfg_get_string(&c, "node_name", cfg->node, sizeof(cfg->node), why, whylen) != 0 ||
	    cfg_get_string(&c, "controller", cfg->controller, sizeof(cfg->controller), why,
	                   whylen) != 0 ||
	    cfg_get_string(&c, "app_endpoint", cfg->app_endpoint, sizeof(cfg->app_endpoint), why,
	                   whylen) != 0 ||
	    cfg_get_string(&c, "vsched_endpoint", cfg->vsched_endpoint,
	                   sizeof(cfg->vsched_endpoint), why, whylen) != 0 ||
	    cfg_get_string(&c, "resctrl_root", cfg->resctrl_root, sizeof(cfg->resctrl_root), why,
	                   whylen) != 0 ||
	    cfg_get_string(&c, "app_endpoint_mode", mode, sizeof(mode), why, whylen) != 0)
		goto out;
	if (mode[0] && parse_mode(mode, &cfg->app_endpoint_mode) != 0) {
		text_fmt(why, whylen, "app_endpoint_mode: \"%s\" is not an octal file mode", mode);
		goto out;
	}
	if (cfg_get_duration(&c, "heartbeat", 10 * NSEC_PER_MSEC, 60 * NSEC_PER_SEC,
	                     &cfg->heartbeat, why, whylen) != 0 ||
	    cfg_get_duration(&c, "controller_timeout", 30 * NSEC_PER_MSEC, 600 * NSEC_PER_SEC,
	                     &cfg->controller_timeout, why, whylen) != 0 ||
	    cfg_get_duration(&c, "vsched_timeout", 10 * NSEC_PER_MSEC, 60 * NSEC_PER_SEC,
	                     &cfg->vsched_timeout, why, whylen) != 0 ||
	    cfg_get_duration(&c, "sample_interval", 10 * NSEC_PER_MSEC, 60 * NSEC_PER_SEC,
	                     &cfg->sample_interval, why, whylen) != 0 ||
	    cfg_get_duration(&c, "stats_interval", 100 * NSEC_PER_MSEC, 3600 * NSEC_PER_SEC,
	                     &cfg->stats_interval, why, whylen) != 0 ||
	    cfg_get_duration(&c, "log_stats_interval", NSEC_PER_SEC, 86400 * NSEC_PER_SEC,
	                     &cfg->log_stats_interval, why, whylen) != 0 ||
	    cfg_get_duration(&c, "provisional_period", 0, VSP_PERIOD_MAX, &cfg->provisional.period,
	                     why, whylen) != 0 ||
	    cfg_get_duration(&c, "provisional_slice", 0, VSP_PERIOD_MAX, &cfg->provisional.slice,
	                     why, whylen) != 0)
		goto out;
	v = cfg->windows;
	if (cfg_get_int(&c, "sample_windows", 1, AGENT_WMAX, &v, why, whylen) != 0)
		goto out;
	cfg->windows = (int)v;
	v = cfg->ncpus;
	if (cfg_get_int(&c, "ncpus", 1, 65535, &v, why, whylen) != 0)
		goto out;
	cfg->ncpus = (int)v;
	v = cfg->max_procs;
	if (cfg_get_int(&c, "max_procs", 1, 65536, &v, why, whylen) != 0)
		goto out;
	cfg->max_procs = (int)v;
	d = cfg->mem_capacity_mbs;
	if (cfg_get_double(&c, "mem_capacity_mbs", 0, 1e9, &d, why, whylen) != 0)
		goto out;
	cfg->mem_capacity_mbs = d;
	d = cfg->net_capacity_mbs;
	if (cfg_get_double(&c, "net_capacity_mbs", 0, 1e9, &d, why, whylen) != 0)
		goto out;
	cfg->net_capacity_mbs = d;
	idx = cfg->park;
	if (cfg_get_enum(&c, "park", park_names, &idx, why, whylen) != 0)
		goto out;
	cfg->park = (uint8_t)idx;
	rc = agent_config_check(cfg, why, whylen);
out:
	config_destroy(&c);
	return rc;
}

void agent_config_print(FILE *f, const struct agent_config *cfg)
{
	char b[64];

	fprintf(f, "node_name = \"%s\";\n", cfg->node);
	fprintf(f, "controller = \"%s\";\n", cfg->controller);
	fprintf(f, "app_endpoint = \"%s\";\n", cfg->app_endpoint);
	fprintf(f, "app_endpoint_mode = \"%04o\";\n", cfg->app_endpoint_mode);
	fprintf(f, "vsched_endpoint = \"%s\";\n", cfg->vsched_endpoint);
	fprintf(f, "heartbeat = \"%s\";\n", duration_format(cfg->heartbeat, b, sizeof(b)));
	fprintf(f, "controller_timeout = \"%s\";\n",
	        duration_format(cfg->controller_timeout, b, sizeof(b)));
	fprintf(f, "vsched_timeout = \"%s\";\n",
	        duration_format(cfg->vsched_timeout, b, sizeof(b)));
	fprintf(f, "sample_interval = \"%s\";\n",
	        duration_format(cfg->sample_interval, b, sizeof(b)));
	fprintf(f, "sample_windows = %d;\n", cfg->windows);
	fprintf(f, "stats_interval = \"%s\";\n",
	        duration_format(cfg->stats_interval, b, sizeof(b)));
	fprintf(f, "log_stats_interval = \"%s\";\n",
	        duration_format(cfg->log_stats_interval, b, sizeof(b)));
	fprintf(f, "ncpus = %d;\n", cfg->ncpus);
	fprintf(f, "mem_capacity_mbs = %.1f;\n", cfg->mem_capacity_mbs);
	fprintf(f, "net_capacity_mbs = %.1f;\n", cfg->net_capacity_mbs);
	fprintf(f, "provisional_period = \"%s\";\n",
	        duration_format(cfg->provisional.period, b, sizeof(b)));
	fprintf(f, "provisional_slice = \"%s\";\n",
	        duration_format(cfg->provisional.slice, b, sizeof(b)));
	fprintf(f, "park = \"%s\";\n", park_names[cfg->park]);
	fprintf(f, "max_procs = %d;\n", cfg->max_procs);
	fprintf(f, "resctrl_root = \"%s\";\n", cfg->resctrl_root);
}
