/*
 * vsched-agent configuration (configs/agent.conf, libconfig syntax). One key table (keys[]
 * below: name, type, default, range, description) drives the defaults, the parse, the
 * normalised print of -n and --config-keys (common/cfgutil.h); agent_config_check() checks
 * what the command line may also set, and what involves several keys.
 */
#include "agent.h"

#include <string.h>
#include <unistd.h>

#include "cfgutil.h"
#include "curve.h"
#include "text.h"

#define MS  (1e6)
#define SEC (1e9)

static const char *const park_names[] = {"stop", "idle", NULL}; /* enum vsp_park */

static void default_node(void *c)
{
	struct agent_config *cfg = c;

	if (gethostname(cfg->node, sizeof(cfg->node)) != 0 || !text_name_ok(cfg->node))
		snprintf(cfg->node, sizeof(cfg->node), "node");
	cfg->node[PCTL_NAME_MAX] = '\0';
}

static void default_ncpus(void *c)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	((struct agent_config *)c)->ncpus = n > 0 ? (int)n : 1;
}

#define F(member) CFG_FIELD(struct agent_config, member)
#define DUR(name, member, dflt, lo, hi, doc)                                                       \
	{                                                                                          \
		name, CFG_DURATION, F(member), dflt, lo, hi, NULL, doc, NULL, NULL, NULL, NULL,    \
		    NULL, NULL                                                                     \
	}
#define STR(name, member, dflt, range, doc)                                                        \
	{                                                                                          \
		name, CFG_STRING, F(member), dflt, 0, 0, NULL, doc, NULL, range, NULL, NULL, NULL, \
		    NULL                                                                           \
	}

static const struct cfg_key keys[] = {
    {"node_name", CFG_STRING, F(node), NULL, 0, 0, NULL,
     "name this node registers under with the controller", "the host name",
     "1..63 printable characters, no blanks", default_node, NULL, NULL, NULL},
    STR("controller", controller, "\"tcp://127.0.0.1:7710\"", "tcp:// endpoint",
        "the controller's ROUTER (the agent connects, registers, heartbeats)"),
    STR("app_endpoint", app_endpoint, "\"ipc:///run/vsched/agent.sock\"",
        "ipc:// or tcp:// endpoint", "where libapprate in applications pushes its reports (PULL)"),
    {"app_endpoint_mode", CFG_MODE, F(app_endpoint_mode), "\"0666\"", 0, 0, NULL,
     "file mode of an ipc app_endpoint (applications of every user report there)", NULL, NULL, NULL,
     NULL, NULL, NULL},
    STR("vsched_endpoint", vsched_endpoint, "\"ipc:///run/vsched/api.sock\"",
        "ipc:// or tcp:// endpoint", "vsched's local API"),
    DUR("heartbeat", heartbeat, "\"1s\"", 10 * MS, 60 * SEC,
        "heartbeat to the controller (the controller's HELLO_ACK may set another)"),
    DUR("controller_timeout", controller_timeout, "\"3s\"", 30 * MS, 600 * SEC,
        "no answer for this long: the link is presumed lost, the agent registers again"),
    DUR("vsched_timeout", vsched_timeout, "\"1s\"", 10 * MS, 60 * SEC,
        "how long one request to vsched may take"),
    DUR("sample_interval", sample_interval, "\"500ms\"", 10 * MS, 60 * SEC,
        "q: memory and network counters of every process are read this often"),
    {"sample_windows", CFG_INT, F(windows), "2", 1, AGENT_WMAX, NULL,
     "w: bandwidths are averaged over the last w samples", NULL, NULL, NULL, NULL, NULL, NULL},
    DUR("stats_interval", stats_interval, "\"2s\"", 100 * MS, 3600 * SEC,
        "task statistics (from vsched) to the controller this often"),
    DUR("log_stats_interval", log_stats_interval, "\"1m\"", 1 * SEC, 86400 * SEC,
        "the counters line in the log this often (and on SIGUSR1)"),
    {"ncpus", CFG_INT, F(ncpus), NULL, 1, 65535, NULL, "CPUs the node offers", "online CPUs", NULL,
     default_ncpus, NULL, NULL, NULL},
    {"mem_capacity_mbs", CFG_NUMBER, F(mem_capacity_mbs), "0.0", 0, 1e9, NULL,
     "memory bandwidth M in MB/s (10^6 bytes/s; 0: unknown; see --calibrate)", NULL, NULL, NULL,
     NULL, NULL, NULL},
    {"net_capacity_mbs", CFG_NUMBER, F(net_capacity_mbs), "0.0", 0, 1e9, NULL,
     "network bandwidth N in MB/s (0: unknown; see --calibrate)", NULL, NULL, NULL, NULL, NULL,
     NULL},
    DUR("provisional_period", provisional.period, "\"0ns\"", 0, VSP_PERIOD_MAX,
        "reservation of a new process until its job's constraint comes (0: unmanaged)"),
    DUR("provisional_slice", provisional.slice, "\"0ns\"", 0, VSP_PERIOD_MAX,
        "slice of that reservation"),
    {"park", CFG_ENUM, F(park), "\"stop\"", 0, 0, park_names,
     "park policy of processes the agent puts under vsched (stop: exact, idle: SCHED_IDLE)", NULL,
     NULL, NULL, NULL, NULL, NULL},
    {"max_procs", CFG_INT, F(max_procs), "1024", 1, 65536, NULL,
     "most managed processes on this node", NULL, NULL, NULL, NULL, NULL, NULL},
    STR("resctrl_root", resctrl_root, "\"/sys/fs/resctrl\"", NULL,
        "where resctrl is mounted (memory bandwidth monitoring, where the CPU offers it)"),
    STR("curve_key", curve_key, "\"\"", "path or \"\"",
        "this node's secret CURVE certificate (vschedctl keygen --node NAME)"),
    STR("controller_key", controller_key, "\"\"", "path or \"\"",
        "the controller's public CURVE certificate (with curve_key)"),
    {"insecure", CFG_BOOL, F(insecure), "false", 0, 0, NULL,
     "allow a non-loopback controller without keys (the link is then unauthenticated)", NULL, NULL,
     NULL, NULL, NULL, NULL},
    {NULL, CFG_STRING, 0, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

#undef STR
#undef DUR
#undef F

void agent_config_defaults(struct agent_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg_defaults(keys, cfg);
}

/* The CURVE keys into cfg, and the rule: a non-loopback controller needs them (or
 * insecure). 0 or -1 with why. */
static int check_keys(struct agent_config *cfg, char *why, size_t whylen)
{
	struct curve_cert mine, ctl;
	char r[400];

	cfg->curve_pub[0] = cfg->curve_sec[0] = cfg->curve_server[0] = '\0';
	if ((cfg->curve_key[0] == '\0') != (cfg->controller_key[0] == '\0')) {
		text_fmt(why, whylen, "%s: needs %s too",
		         cfg->curve_key[0] ? "curve_key" : "controller_key",
		         cfg->curve_key[0] ? "controller_key" : "curve_key");
		return -1;
	}
	if (cfg->curve_key[0] == '\0') {
		if (cfg->insecure || curve_endpoint_local(cfg->controller))
			return 0;
		text_fmt(
		    why, whylen,
		    "controller: %s is not loopback and no curve_key is set (set curve_key and "
		    "controller_key, or insecure = true to run unauthenticated)",
		    cfg->controller);
		return -1;
	}
	if (curve_cert_load(cfg->curve_key, true, &mine, r, sizeof(r)) != 0 ||
	    curve_cert_load(cfg->controller_key, false, &ctl, r, sizeof(r)) != 0) {
		text_fmt(why, whylen, "%s: %s", mine.pub[0] ? "controller_key" : "curve_key", r);
		return -1;
	}
	if (mine.node[0] != '\0' && strcmp(mine.node, cfg->node) != 0) {
		text_fmt(why, whylen, "curve_key: the key is for node %s, not %s", mine.node,
		         cfg->node);
		return -1;
	}
	memcpy(cfg->curve_pub, mine.pub, sizeof(cfg->curve_pub));
	memcpy(cfg->curve_sec, mine.sec, sizeof(cfg->curve_sec));
	memcpy(cfg->curve_server, ctl.pub, sizeof(cfg->curve_server));
	memset(&mine, 0, sizeof(mine));
	return 0;
}

int agent_config_check(struct agent_config *cfg, char *why, size_t whylen)
{
	char rwhy[160];

	if (!text_name_ok(cfg->node)) {
		text_fmt(why, whylen,
		         "node_name: must be 1..%d printable characters without blanks",
		         PCTL_NAME_MAX);
		return -1;
	}
	if (!cfg_endpoint_ok(cfg->controller, true)) {
		text_fmt(why, whylen, "controller: \"%s\" is not a tcp:// endpoint",
		         cfg->controller);
		return -1;
	}
	if (!cfg_endpoint_ok(cfg->app_endpoint, false)) {
		text_fmt(why, whylen, "app_endpoint: \"%s\" is not an ipc:// or tcp:// endpoint",
		         cfg->app_endpoint);
		return -1;
	}
	if (!cfg_endpoint_ok(cfg->vsched_endpoint, false)) {
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
	return check_keys(cfg, why, whylen);
}

int agent_config_load(const char *path, struct agent_config *cfg, char *why, size_t whylen)
{
	if (cfg_load_file(keys, path, cfg, why, whylen) != 0)
		return -1;
	return agent_config_check(cfg, why, whylen);
}

void agent_config_print(FILE *f, const struct agent_config *cfg)
{
	cfg_print(keys, cfg, f);
}

void agent_config_keys(FILE *f)
{
	cfg_print_keys(keys, f);
}
