/*
 * vsched configuration (configs/vsched.conf, libconfig syntax). One key table (keys[]
 * below: name, type, default, range, description) drives the defaults, the parse, the
 * normalised print of -n and the key list (config_keys), common/cfgutil.h. config_print
 * writes every key; config_load accepts its output unchanged. Every key is optional;
 * unknown keys are refused.
 */
#include "vsched.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfgutil.h"
#include "text.h"

#define ONLINE_PATH "/sys/devices/system/cpu/online"
#define US          (1e3)
#define DAY         (86400e9)

static const char *const park_names[] = {"stop", "idle", NULL};                /* enum vsp_park */
static const char *const placement_names[] = {"worst-fit", "first-fit", NULL}; /* rule */
static const char *const stop_names[] = {"auto", "freezer", "signal", "freezer-v2",
                                         NULL};                     /* enum stop_method */
static const char *const perf_names[] = {"off", "auto", NULL};      /* perf_events: bool */
static const char *const selftest_names[] = {"off", "start", NULL}; /* selftest: bool */

/*
 * Parses a kernel CPU list ("0-3,5\n") into a bitmask of CPUs below VS_MAX_CPUS.
 * Returns 0 or -EINVAL.
 */
static int parse_cpu_list(const char *s, uint64_t *mask)
{
	*mask = 0;
	while (*s != '\0' && *s != '\n') {
		char *end;
		long lo = strtol(s, &end, 10), hi;

		if (end == s || lo < 0)
			return -EINVAL;
		hi = lo;
		s = end;
		if (*s == '-') {
			hi = strtol(s + 1, &end, 10);
			if (end == s + 1 || hi < lo)
				return -EINVAL;
			s = end;
		}
		for (long c = lo; c <= hi && c < VS_MAX_CPUS; c++)
			*mask |= 1ULL << c;
		if (*s == ',')
			s++;
		else if (*s != '\0' && *s != '\n')
			return -EINVAL;
	}
	return 0;
}

/* Online CPUs below VS_MAX_CPUS as a bitmask; falls back to sysconf when sysfs is absent. */
static uint64_t online_cpus(void)
{
	char buf[512];
	uint64_t mask = 0;
	FILE *f = fopen(ONLINE_PATH, "r");

	if (f != NULL) {
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = '\0';
		if (parse_cpu_list(buf, &mask) == 0 && mask != 0)
			return mask;
	}
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	for (long c = 0; c < n && c < VS_MAX_CPUS; c++)
		mask |= 1ULL << c;
	return mask ? mask : 1;
}

/* Fills cfg->cpus, ascending, from a bitmask. */
static void set_cpus(void *conf, uint64_t mask)
{
	struct vsched_config *cfg = conf;

	cfg->ncpus = 0;
	for (int c = 0; c < VS_MAX_CPUS; c++)
		if (mask & (1ULL << c))
			cfg->cpus[cfg->ncpus++] = c;
}

static void default_cpus(void *conf)
{
	set_cpus(conf, online_cpus());
}

/* cpus: a non-empty array or list of unique online CPU numbers below VS_MAX_CPUS. */
static int parse_cpus(const config_setting_t *s, void *conf, char *why, size_t whylen)
{
	uint64_t online = online_cpus(), seen = 0;
	int n;

	if (!config_setting_is_aggregate(s) || config_setting_is_group(s)) {
		text_fmt(why, whylen, "cpus: must be an array of CPU numbers, e.g. [0, 1]");
		return -1;
	}
	n = config_setting_length(s);
	if (n == 0) {
		text_fmt(why, whylen, "cpus: must list at least one CPU");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		int t = config_setting_type(e);
		long long c;

		if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) {
			text_fmt(why, whylen, "cpus: element %d is not an integer", i);
			return -1;
		}
		c = config_setting_get_int64(e);
		if (c < 0 || c >= VS_MAX_CPUS) {
			text_fmt(why, whylen, "cpus: CPU %lld out of range [0, %d)", c,
			         VS_MAX_CPUS);
			return -1;
		}
		if (seen & (1ULL << c)) {
			text_fmt(why, whylen, "cpus: CPU %lld listed twice", c);
			return -1;
		}
		if (!(online & (1ULL << c))) {
			text_fmt(why, whylen, "cpus: CPU %lld is not online", c);
			return -1;
		}
		seen |= 1ULL << c;
	}
	set_cpus(conf, seen);
	return 0;
}

static void print_cpus(FILE *f, const void *c)
{
	const struct vsched_config *cfg = c;

	fprintf(f, "[");
	for (int i = 0; i < cfg->ncpus; i++)
		fprintf(f, "%s%d", i ? ", " : " ", cfg->cpus[i]);
	fprintf(f, " ]");
}

/* A ZeroMQ endpoint: SCHEME://ADDRESS. */
static int endpoint_check(const char *v, char *why, size_t whylen)
{
	const char *sep = strstr(v, "://");

	if (sep != NULL && sep != v && sep[3] != '\0')
		return 0;
	text_fmt(why, whylen,
	         "\"%s\" is not a ZeroMQ endpoint such as \"ipc:///run/vsched/api.sock\"", v);
	return -1;
}

#define F(member) CFG_FIELD(struct vsched_config, member)

static const struct cfg_key keys[] = {
    {"cpus", CFG_CUSTOM, 0, 0, NULL, 0, 0, NULL,
     "CPUs vsched manages, each with its own EDF dispatcher", "every online CPU",
     "array of unique online CPU numbers", default_cpus, NULL, parse_cpus, print_cpus},
    {"utilization_cap", CFG_NUMBER, F(utilization_cap), "0.9", 0, 1, NULL,
     "share of each CPU reservations may take (never above the RT limit minus reserve)", NULL,
     "(0, 1]", NULL, NULL, NULL, NULL},
    {"reserve", CFG_NUMBER, F(reserve), "0.05", 0, 0.5, NULL,
     "share of each CPU kept for vsched's own threads", NULL, NULL, NULL, NULL, NULL, NULL},
    {"min_period", CFG_DURATION, F(min_period), "\"1ms\"", 10 * US, DAY, NULL,
     "smallest period a reservation may ask for", NULL, NULL, NULL, NULL, NULL, NULL},
    {"min_slice", CFG_DURATION, F(min_slice), "\"50us\"", 1 * US, DAY, NULL,
     "smallest slice a reservation may ask for", NULL, NULL, NULL, NULL, NULL, NULL},
    {"park", CFG_ENUM, F(park), "\"stop\"", 0, 0, park_names,
     "default park policy (stop: SIGSTOP/SIGCONT, exact; idle: SCHED_IDLE, "
     "work-conserving)",
     NULL, NULL, NULL, NULL, NULL, NULL},
    {"placement", CFG_ENUM, F(placement), "\"worst-fit\"", 0, 0, placement_names,
     "CPU of a request that names none (worst-fit spreads load, first-fit packs it)", NULL, NULL,
     NULL, NULL, NULL, NULL},
    {"endpoint", CFG_STRING, F(endpoint), "\"ipc:///run/vsched/api.sock\"", 0, 0, NULL,
     "the local API's ZeroMQ endpoint", NULL, "ZeroMQ endpoint", NULL, endpoint_check, NULL, NULL},
    {"endpoint_mode", CFG_MODE, F(endpoint_mode), "\"0600\"", 0, 0, NULL,
     "file mode of an ipc endpoint's socket", NULL, NULL, NULL, NULL, NULL, NULL},
    {"max_tasks", CFG_INT, F(max_tasks), "256", 1, VSP_MAX_TASKS, NULL,
     "most tasks managed on this node", NULL, NULL, NULL, NULL, NULL, NULL},
    {"stop_method", CFG_ENUM, F(stop_method), "\"auto\"", 0, 0, stop_names,
     "how `stop` parks (auto: the cgroup freezer if usable, else signals; freezer: refuse to "
     "start without one; signal: SIGSTOP/SIGCONT; freezer-v2: the cgroup v2 freezer even "
     "where a v1 one is mounted, or refuse to start)",
     NULL, NULL, NULL, NULL, NULL, NULL},
    {"perf_events", CFG_ENUM, F(perf_events), "\"auto\"", 0, 0, perf_names,
     "perf task-clock counters end budgets and see wake-ups where the kernel allows (off: "
     "timed and polled by the dispatcher)",
     NULL, NULL, NULL, NULL, NULL, NULL},
    {"selftest", CFG_ENUM, F(selftest_at_start), "\"start\"", 0, 0, selftest_names,
     "measure the finest period with < 1 % misses at start (off: only on request)", NULL, NULL,
     NULL, NULL, NULL, NULL},
    {NULL, CFG_STRING, 0, 0, NULL, 0, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};

#undef F

void config_defaults(struct vsched_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg_defaults(keys, cfg);
}

/*
 * Starts from config_defaults(), so keys absent from the file keep their defaults. On error
 * *cfg is unchanged and why names the key (or FILE:LINE for a syntax error).
 */
int config_load(const char *path, struct vsched_config *cfg, char *why, size_t whylen)
{
	struct vsched_config c;

	config_defaults(&c);
	if (cfg_load_file(keys, path, &c, why, whylen) < 0)
		return -1;
	if (!(c.utilization_cap > 0.0)) {
		text_fmt(why, whylen, "utilization_cap: must be in (0, 1]");
		return -1;
	}
	*cfg = c;
	return 0;
}

void config_print(FILE *f, const struct vsched_config *cfg)
{
	cfg_print(keys, cfg, f);
}

void config_keys(FILE *f)
{
	cfg_print_keys(keys, f);
}
