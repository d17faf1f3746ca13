/*
 * vsched-controller configuration (configs/controller.conf, libconfig syntax): endpoints,
 * state file, liveness and acknowledgement timeouts, and the defaults of every per-job
 * setting (DESIGN.md §5.1), and the co-scheduling mode (DESIGN.md §5.2, docs/coschedule.md).
 * Every key is optional; unknown keys are refused.
 */
#include "controller.h"

#include <errno.h>
#include <libconfig.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cfgutil.h"
#include "duration.h"

static const char *const known_keys[] = {
    "agent_endpoint",
    "admin_endpoint",
    "state_file",
    "heartbeat",
    "node_timeout",
    "ack_timeout",
    "round_timeout",
    "apply_latency",
    "dashboard_interval",
    "calibration",
    "default_target",
    "algorithm",
    "aggregate",
    "epsilon",
    "r_max",
    "delta_period",
    "min_period",
    "min_slice",
    "initial_period",
    "u_max",
    "coschedule",
    "frame",
    "slot",
    "bw_window",
    "node_mem_capacity",
    "node_net_capacity",
    "pairing",
    "align",
    NULL,
};

static const char *const algo_names[] = {"linear", "adaptive", "floating", NULL};
static const char *const agg_names[] = {"slowest", "mean", NULL};
static const char *const calib_names[] = {"run", "observed", NULL};

/* A boolean key (true/false); absent keeps *out. */
static int get_bool(const config_t *cfg, const char *key, bool *out, char *why, size_t whylen)
{
	const config_setting_t *s = config_lookup(cfg, key);

	if (s == NULL)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_BOOL) {
		snprintf(why, whylen, "%s: must be true or false", key);
		return -1;
	}
	*out = config_setting_get_bool(s) != 0;
	return 0;
}

/* The coschedule keys (docs/coschedule.md). */
static int load_cosched(const config_t *cfg, struct ctld_cosched *cs, char *why, size_t whylen)
{
	double mem = (double)cs->mem_cap, net = (double)cs->net_cap;
	int idx = cs->pairing;
	char a[32], b[32];

	if (get_bool(cfg, "coschedule", &cs->on, why, whylen) ||
	    get_bool(cfg, "align", &cs->align, why, whylen) ||
	    cfg_get_duration(cfg, "frame", NSEC_PER_MSEC, 60 * NSEC_PER_SEC, &cs->frame, why,
	                     whylen) ||
	    cfg_get_duration(cfg, "slot", 100 * NSEC_PER_USEC, 60 * NSEC_PER_SEC, &cs->slot, why,
	                     whylen) ||
	    cfg_get_duration(cfg, "bw_window", 100 * NSEC_PER_MSEC, 3600 * NSEC_PER_SEC,
	                     &cs->bw_window, why, whylen) ||
	    cfg_get_double(cfg, "node_mem_capacity", 0, 1e15, &mem, why, whylen) ||
	    cfg_get_double(cfg, "node_net_capacity", 0, 1e15, &net, why, whylen) ||
	    cfg_get_enum(cfg, "pairing", fit_pairing_names, &idx, why, whylen))
		return -1;
	cs->mem_cap = (uint64_t)mem;
	cs->net_cap = (uint64_t)net;
	cs->pairing = (uint8_t)idx;
	if (cs->slot > cs->frame || cs->frame % cs->slot != 0) {
		snprintf(why, whylen, "slot: %s must divide frame %s into a whole number of slots",
		         duration_format(cs->slot, a, sizeof(a)),
		         duration_format(cs->frame, b, sizeof(b)));
		return -1;
	}
	if (cs->frame / cs->slot > COPLAN_MAX_SLOTS) {
		snprintf(why, whylen, "slot: frame / slot = %llu slots, at most %d",
		         (unsigned long long)(cs->frame / cs->slot), COPLAN_MAX_SLOTS);
		return -1;
	}
	return 0;
}

void ctld_config_defaults(struct ctld_config *c)
{
	struct control_params p;

	memset(c, 0, sizeof(*c));
	control_params_default(&p);
	snprintf(c->agents, sizeof(c->agents), "%s", CTLD_DEFAULT_AGENTS);
	snprintf(c->admin, sizeof(c->admin), "%s", CTLD_DEFAULT_ADMIN);
	snprintf(c->state_file, sizeof(c->state_file), "%s", CTLD_DEFAULT_STATE);
	c->heartbeat = 1 * NSEC_PER_SEC;
	c->node_timeout = 3 * NSEC_PER_SEC;
	c->ack_timeout = 2 * NSEC_PER_SEC;
	c->round_timeout = 3 * NSEC_PER_SEC;
	c->apply_latency = 5 * NSEC_PER_MSEC;
	c->dashboard_interval = 1 * NSEC_PER_SEC;
	c->calib = CONTROL_CALIB_RUN;
	c->default_target = 0;
	c->job.algo = (uint8_t)p.algo;
	c->job.agg = (uint8_t)p.agg;
	c->job.eps_pct = 2.0; /* the band the floating algorithm holds (docs/control.md) */
	c->job.r_max = 0;
	c->job.delta_period = p.delta_period_ns;
	c->job.min_period = p.min_period_ns;
	c->job.min_slice = p.min_slice_ns;
	c->job.initial_period = p.initial_period_ns;
	c->job.u_max_pct = p.u_max_pct;
	c->cs.on = false;
	c->cs.frame = 100 * NSEC_PER_MSEC;
	c->cs.slot = 5 * NSEC_PER_MSEC;
	c->cs.bw_window = 2 * NSEC_PER_SEC;
	c->cs.pairing = FIT_PAIR_FITNESS;
	c->cs.align = true;
}

static int get_endpoint(const config_t *cfg, const char *key, char *out, size_t cap, char *why,
                        size_t whylen)
{
	if (cfg_get_string(cfg, key, out, cap, why, whylen) != 0)
		return -1;
	if (strncmp(out, "tcp://", 6) != 0 && strncmp(out, "ipc://", 6) != 0) {
		snprintf(why, whylen, "%s: \"%s\" must be a tcp:// or ipc:// endpoint", key, out);
		return -1;
	}
	return 0;
}

int ctld_config_load(const char *path, struct ctld_config *c, char *why, size_t whylen)
{
	config_t cfg;
	struct control_params p;
	int idx, rc = -1;

	if (cfg_load(&cfg, path, why, whylen) != 0)
		return -1;
	if (cfg_check_keys(&cfg, known_keys, why, whylen) != 0)
		goto out;
	if (get_endpoint(&cfg, "agent_endpoint", c->agents, sizeof(c->agents), why, whylen) ||
	    get_endpoint(&cfg, "admin_endpoint", c->admin, sizeof(c->admin), why, whylen) ||
	    cfg_get_string(&cfg, "state_file", c->state_file, sizeof(c->state_file), why, whylen) ||
	    cfg_get_duration(&cfg, "heartbeat", 10 * NSEC_PER_MSEC, 60 * NSEC_PER_SEC,
	                     &c->heartbeat, why, whylen) ||
	    cfg_get_duration(&cfg, "node_timeout", 30 * NSEC_PER_MSEC, 3600 * NSEC_PER_SEC,
	                     &c->node_timeout, why, whylen) ||
	    cfg_get_duration(&cfg, "ack_timeout", 10 * NSEC_PER_MSEC, 60 * NSEC_PER_SEC,
	                     &c->ack_timeout, why, whylen) ||
	    cfg_get_duration(&cfg, "round_timeout", 0, 3600 * NSEC_PER_SEC, &c->round_timeout, why,
	                     whylen) ||
	    cfg_get_duration(&cfg, "apply_latency", 0, 10 * NSEC_PER_SEC, &c->apply_latency, why,
	                     whylen) ||
	    cfg_get_duration(&cfg, "dashboard_interval", 50 * NSEC_PER_MSEC, 3600 * NSEC_PER_SEC,
	                     &c->dashboard_interval, why, whylen) ||
	    cfg_get_double(&cfg, "default_target", 0, 100, &c->default_target, why, whylen) ||
	    cfg_get_double(&cfg, "epsilon", 0.01, 50, &c->job.eps_pct, why, whylen) ||
	    cfg_get_double(&cfg, "r_max", 0, 1e18, &c->job.r_max, why, whylen) ||
	    cfg_get_double(&cfg, "u_max", 0.001, 100, &c->job.u_max_pct, why, whylen) ||
	    cfg_get_duration(&cfg, "delta_period", 1, VSP_PERIOD_MAX, &c->job.delta_period, why,
	                     whylen) ||
	    cfg_get_duration(&cfg, "min_period", 1, VSP_PERIOD_MAX, &c->job.min_period, why,
	                     whylen) ||
	    cfg_get_duration(&cfg, "min_slice", 1, VSP_PERIOD_MAX, &c->job.min_slice, why,
	                     whylen) ||
	    cfg_get_duration(&cfg, "initial_period", 1, VSP_PERIOD_MAX, &c->job.initial_period, why,
	                     whylen))
		goto out;
	idx = c->job.algo;
	if (cfg_get_enum(&cfg, "algorithm", algo_names, &idx, why, whylen) != 0)
		goto out;
	c->job.algo = (uint8_t)idx;
	idx = c->job.agg;
	if (cfg_get_enum(&cfg, "aggregate", agg_names, &idx, why, whylen) != 0)
		goto out;
	c->job.agg = (uint8_t)idx;
	idx = c->calib;
	if (cfg_get_enum(&cfg, "calibration", calib_names, &idx, why, whylen) != 0)
		goto out;
	c->calib = (uint8_t)idx;
	if (load_cosched(&cfg, &c->cs, why, whylen) != 0)
		goto out;
	c->job.r_max_given = c->job.r_max > 0;
	if (c->node_timeout <= c->heartbeat) {
		snprintf(why, whylen, "node_timeout: must be longer than heartbeat");
		goto out;
	}
	if (settings_check(&c->job, why, whylen) != 0)
		goto out;
	settings_control_params(c, &c->job, c->default_target, &p);
	if (control_params_check(&p) != 0) {
		snprintf(why, whylen,
		         "job defaults rejected by the control algorithm (is default_target's "
		         "slice at initial_period below min_slice?)");
		goto out;
	}
	rc = 0;
out:
	config_destroy(&cfg);
	return rc;
}

void ctld_config_print(FILE *f, const struct ctld_config *c)
{
	char b[32];

#define DUR(x) duration_format((x), b, sizeof(b))
	fprintf(f, "agent_endpoint = \"%s\";\n", c->agents);
	fprintf(f, "admin_endpoint = \"%s\";\n", c->admin);
	fprintf(f, "state_file = \"%s\";\n", c->state_file);
	fprintf(f, "heartbeat = \"%s\";\n", DUR(c->heartbeat));
	fprintf(f, "node_timeout = \"%s\";\n", DUR(c->node_timeout));
	fprintf(f, "ack_timeout = \"%s\";\n", DUR(c->ack_timeout));
	fprintf(f, "round_timeout = \"%s\";\n", DUR(c->round_timeout));
	fprintf(f, "apply_latency = \"%s\";\n", DUR(c->apply_latency));
	fprintf(f, "dashboard_interval = \"%s\";\n", DUR(c->dashboard_interval));
	fprintf(f, "calibration = \"%s\";\n", calib_names[c->calib]);
	fprintf(f, "default_target = %g;\n", c->default_target);
	fprintf(f, "algorithm = \"%s\";\n", algo_names[c->job.algo]);
	fprintf(f, "aggregate = \"%s\";\n", agg_names[c->job.agg]);
	fprintf(f, "epsilon = %g;\n", c->job.eps_pct);
	fprintf(f, "r_max = %g;\n", c->job.r_max);
	fprintf(f, "delta_period = \"%s\";\n", DUR(c->job.delta_period));
	fprintf(f, "min_period = \"%s\";\n", DUR(c->job.min_period));
	fprintf(f, "min_slice = \"%s\";\n", DUR(c->job.min_slice));
	fprintf(f, "initial_period = \"%s\";\n", DUR(c->job.initial_period));
	fprintf(f, "u_max = %g;\n", c->job.u_max_pct);
	fprintf(f, "coschedule = %s;\n", c->cs.on ? "true" : "false");
	fprintf(f, "frame = \"%s\";\n", DUR(c->cs.frame));
	fprintf(f, "slot = \"%s\";\n", DUR(c->cs.slot));
	fprintf(f, "bw_window = \"%s\";\n", DUR(c->cs.bw_window));
	fprintf(f, "node_mem_capacity = %llu;\n", (unsigned long long)c->cs.mem_cap);
	fprintf(f, "node_net_capacity = %llu;\n", (unsigned long long)c->cs.net_cap);
	fprintf(f, "pairing = \"%s\";\n", fit_pairing_names[c->cs.pairing]);
	fprintf(f, "align = %s;\n", c->cs.align ? "true" : "false");
#undef DUR
}
