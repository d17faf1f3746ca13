/*
 * vsched-controller configuration (configs/controller.conf, libconfig syntax): endpoints,
 * state file, liveness and acknowledgement timeouts, the defaults of every per-job setting
 * (DESIGN.md §5.1), and the co-scheduling mode (DESIGN.md §5.2, docs/coschedule.md).
 *
 * One key table (keys[] below: name, type, default, range, description) drives the
 * defaults, the parse, the normalised print of -n and --config-keys (common/cfgutil.h);
 * what involves several keys is checked after the parse (check()). Every key is optional;
 * unknown keys are refused.
 */
#include "controller.h"

#include <string.h>

#include "cfgutil.h"
#include "duration.h"
#include "text.h"

#define MS  (1e6)
#define SEC (1e9)

static const char *const calib_names[] = {"run", "observed", NULL};

#define F(member) CFG_FIELD(struct ctld_config, member)
#define DUR(name, member, dflt, lo, hi, doc)                                                       \
	{                                                                                          \
		name, CFG_DURATION, F(member), dflt, lo, hi, NULL, doc, NULL, NULL, NULL, NULL,    \
		    NULL, NULL                                                                     \
	}

static const struct cfg_key keys[] = {
    {"agent_endpoint", CFG_STRING, F(agents), "\"" CTLD_DEFAULT_AGENTS "\"", 0, 0, NULL,
     "where the agents connect (ROUTER); tcp://HOST:* binds a free port", NULL,
     "tcp:// or ipc:// endpoint", NULL, cfg_check_endpoint, NULL, NULL},
    {"admin_endpoint", CFG_STRING, F(admin), "\"" CTLD_DEFAULT_ADMIN "\"", 0, 0, NULL,
     "where vschedctl connects (admin ROUTER; tcp: CURVE with curve_key, ipc: peer uid)", NULL,
     "tcp:// or ipc:// endpoint", NULL, cfg_check_endpoint, NULL, NULL},
    {"state_file", CFG_STRING, F(state_file), "\"" CTLD_DEFAULT_STATE "\"", 0, 0, NULL,
     "targets and per-job settings, written atomically, restored at start", NULL, NULL, NULL, NULL,
     NULL, NULL},
    DUR("heartbeat", heartbeat, "\"1s\"", 10 * MS, 60 * SEC,
        "heartbeat interval the agents are told to use"),
    DUR("node_timeout", node_timeout, "\"3s\"", 30 * MS, 3600 * SEC,
        "a node silent this long is down (longer than heartbeat)"),
    DUR("ack_timeout", ack_timeout, "\"2s\"", 10 * MS, 60 * SEC,
        "a node that does not acknowledge a new constraint within this refuses it"),
    DUR("round_timeout", round_timeout, "\"3s\"", 0, 3600 * SEC,
        "evaluate a round of rank reports after this even if a rank is silent (0: wait)"),
    DUR("apply_latency", apply_latency, "\"5ms\"", 0, 10 * SEC,
        "time from a control decision to its effect on the nodes"),
    DUR("dashboard_interval", dashboard_interval, "\"1s\"", 50 * MS, 3600 * SEC,
        "refresh interval of vsched-controller -d"),
    {"calibration", CFG_ENUM, F(calib), "\"run\"", 0, 0, calib_names,
     "R_max of a job without one: run it unconstrained two rounds, or the best rate observed", NULL,
     NULL, NULL, NULL, NULL, NULL},
    {"default_target", CFG_NUMBER, F(default_target), "0.0", 0, 100, NULL,
     "target (% of R_max) of a job first seen; 0: none", NULL, NULL, NULL, NULL, NULL, NULL},
    {"algorithm", CFG_ENUM, F(job.algo), "\"floating\"", 0, 0, padm_algo_names,
     "control algorithm of new jobs (floating: U controlled; linear: paper 004 Sect. 4, exactly)",
     NULL, NULL, NULL, NULL, NULL, NULL},
    {"aggregate", CFG_ENUM, F(job.agg), "\"slowest\"", 0, 0, padm_agg_names,
     "a job's rate from its ranks: the slowest rank's or their mean", NULL, NULL, NULL, NULL, NULL,
     NULL},
    {"epsilon", CFG_NUMBER, F(job.eps_pct), "2.0", 0.01, 50, NULL,
     "threshold in percentage points: an error within it is on target", NULL, NULL, NULL, NULL,
     NULL, NULL},
    {"r_max", CFG_NUMBER, F(job.r_max), "0.0", 0, 1e18, NULL,
     "rate at full speed in units/s of new jobs; 0: measure it", NULL, NULL, NULL, NULL, NULL,
     NULL},
    DUR("delta_period", job.delta_period, "\"2ms\"", 1, VSP_PERIOD_MAX,
        "step of the linear algorithm's period search"),
    DUR("min_period", job.min_period, "\"1ms\"", 1, VSP_PERIOD_MAX,
        "smallest period the nodes serve"),
    DUR("min_slice", job.min_slice, "\"100us\"", 1, VSP_PERIOD_MAX,
        "smallest slice the nodes serve (at most min_period)"),
    DUR("initial_period", job.initial_period, "\"200ms\"", 1, VSP_PERIOD_MAX,
        "initial (and largest) period (at least min_period)"),
    {"u_max", CFG_NUMBER, F(job.u_max_pct), "100.0", 0.001, 100, NULL,
     "floating: the largest CPU share (%) a job's reservation may take", NULL, NULL, NULL, NULL,
     NULL, NULL},
    {"coschedule", CFG_BOOL, F(cs.on), "false", 0, 0, NULL,
     "co-scheduling: jobs share frames of slots chosen by the memory/network fitness "
     "heuristic",
     NULL, NULL, NULL, NULL, NULL, NULL},
    DUR("frame", cs.frame, "\"100ms\"", 1 * MS, 60 * SEC, "coschedule: the frame T"),
    DUR("slot", cs.slot, "\"5ms\"", 0.1 * MS, 60 * SEC,
        "coschedule: the slot q; frame / slot whole, at most 1024"),
    DUR("bw_window", cs.bw_window, "\"2s\"", 100 * MS, 3600 * SEC,
        "coschedule: per-process bandwidths are averaged over this"),
    {"node_mem_capacity", CFG_COUNT, F(cs.mem_cap), "0", 0, 1e15, NULL,
     "coschedule: memory bandwidth M of a node in bytes/s; 0: the agent's figure", NULL, NULL, NULL,
     NULL, NULL, NULL},
    {"node_net_capacity", CFG_COUNT, F(cs.net_cap), "0", 0, 1e15, NULL,
     "coschedule: network bandwidth N of a node in bytes/s; 0: the agent's figure", NULL, NULL,
     NULL, NULL, NULL, NULL},
    {"pairing", CFG_ENUM, F(cs.pairing), "\"fitness\"", 0, 0, fit_pairing_names,
     "coschedule: co-runner choice (oblivious, worst: baselines for benchmarks)", NULL, NULL, NULL,
     NULL, NULL, NULL},
    {"align", CFG_BOOL, F(cs.align), "true", 0, 0, NULL,
     "coschedule: send the cluster epoch so that frames line up across nodes", NULL, NULL, NULL,
     NULL, NULL, NULL},
    {"curve_key", CFG_STRING, F(curve_key), "\"\"", 0, 0, NULL,
     "the controller's secret CURVE certificate (vschedctl keygen); \"\": tcp endpoints open", NULL,
     "path or \"\"", NULL, NULL, NULL, NULL},
    {"allow_dir", CFG_STRING, F(allow_dir), "\"/etc/vsched/curve\"", 0, 0, NULL,
     "allowed public keys: agents/ (one per node) and admins/ (role read or full)", NULL, NULL,
     NULL, NULL, NULL, NULL},
    {"admin_group", CFG_STRING, F(admin_group), "\"\"", 0, 0, NULL,
     "group whose members may use an ipc admin endpoint (besides root and this user)", NULL,
     "group name or \"\"", NULL, NULL, NULL, NULL},
    {"insecure", CFG_BOOL, F(insecure), "false", 0, 0, NULL,
     "allow non-loopback tcp endpoints without curve_key (anyone reaching them is trusted)", NULL,
     NULL, NULL, NULL, NULL, NULL},
    DUR("handshake_timeout", handshake_timeout, "\"5s\"", 100 * MS, 600 * SEC,
        "a connection that has not finished its ZeroMQ handshake by then is cut"),
    {"agent_msg_rate", CFG_COUNT, F(agent_msg_rate), "20000", 0, 1e9, NULL,
     "messages/s one node may send (1 s of burst); more are dropped and counted; 0: no limit", NULL,
     NULL, NULL, NULL, NULL, NULL},
    {NULL, CFG_STRING, 0, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

#undef DUR
#undef F

/* What involves several keys. 0 or -1 with why. */
static int check(struct ctld_config *c, char *why, size_t whylen)
{
	const struct ctld_cosched *cs = &c->cs;
	struct control_params p;
	char a[32], b[32];

	c->job.r_max_given = c->job.r_max > 0;
	if (c->node_timeout <= c->heartbeat) {
		text_fmt(why, whylen, "node_timeout: must be longer than heartbeat");
		return -1;
	}
	if (settings_check(&c->job, why, whylen) != 0)
		return -1;
	settings_control_params(c, &c->job, c->default_target, &p);
	if (control_params_check(&p) != 0) {
		text_fmt(why, whylen,
		         "job defaults rejected by the control algorithm (is default_target's "
		         "slice at initial_period below min_slice?)");
		return -1;
	}
	if (cs->slot > cs->frame || cs->frame % cs->slot != 0) {
		text_fmt(why, whylen, "slot: %s must divide frame %s into a whole number of slots",
		         duration_format(cs->slot, a, sizeof(a)),
		         duration_format(cs->frame, b, sizeof(b)));
		return -1;
	}
	if (cs->frame / cs->slot > COPLAN_MAX_SLOTS) {
		text_fmt(why, whylen, "slot: frame / slot = %llu slots, at most %d",
		         (unsigned long long)(cs->frame / cs->slot), COPLAN_MAX_SLOTS);
		return -1;
	}
	return 0;
}

int ctld_config_exposure(const struct ctld_config *c, char *why, size_t whylen)
{
	const char *ep[2] = {c->agents, c->admin}, *key[2] = {"agent_endpoint", "admin_endpoint"};

	if (c->curve_key[0] != '\0' || c->insecure)
		return 0;
	for (int i = 0; i < 2; i++) {
		if (!curve_endpoint_local(ep[i])) {
			text_fmt(
			    why, whylen,
			    "%s: %s is not loopback and no curve_key is set (set curve_key and "
			    "allow_dir, or insecure = true to run unauthenticated)",
			    key[i], ep[i]);
			return -1;
		}
	}
	return 0;
}

void ctld_config_defaults(struct ctld_config *c)
{
	memset(c, 0, sizeof(*c));
	cfg_defaults(keys, c);
	c->job.r_max_given = false;
}

int ctld_config_load(const char *path, struct ctld_config *c, char *why, size_t whylen)
{
	if (cfg_load_file(keys, path, c, why, whylen) != 0)
		return -1;
	return check(c, why, whylen);
}

void ctld_config_print(FILE *f, const struct ctld_config *c)
{
	cfg_print(keys, c, f);
}

void ctld_config_keys(FILE *f)
{
	cfg_print_keys(keys, f);
}
