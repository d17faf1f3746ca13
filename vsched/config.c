/*
 * vsched configuration: defaults, loading with full checking, normalised printing.
 *
 * Keys (libconfig syntax, see configs/vsched.conf):
 *   cpus             array of CPU numbers; default all online CPUs (below VS_MAX_CPUS)
 *   utilization_cap  (0, 1], default 0.9
 *   reserve          [0, 0.5], default 0.05
 *   min_period       duration string, 10us .. 1d, default "1ms"
 *   min_slice        duration string, 1us .. 1d, default "50us"
 *   park             "stop" | "idle", default "stop"
 *   placement        "worst-fit" | "first-fit", default "worst-fit"
 *   endpoint         ZeroMQ endpoint, default "ipc:///run/vsched/api.sock"
 *   endpoint_mode    octal string, at most 0777, default "0600"
 *   max_tasks        1 .. VSP_MAX_TASKS, default 256
 * config_print writes every key in this syntax; config_load accepts its output unchanged.
 */
#include "vsched.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfgutil.h"
#include "duration.h"

#define ONLINE_PATH      "/sys/devices/system/cpu/online"
#define DEFAULT_ENDPOINT "ipc:///run/vsched/api.sock"
#define MIN_PERIOD_LO    (10 * NSEC_PER_USEC)
#define MIN_SLICE_LO     (1 * NSEC_PER_USEC)
#define DURATION_HI      (86400ULL * NSEC_PER_SEC)
#define RESERVE_MAX      0.5

static const char *const known_keys[] = {
    "cpus",      "utilization_cap", "reserve",       "min_period", "min_slice", "park",
    "placement", "endpoint",        "endpoint_mode", "max_tasks",  NULL,
};
static const char *const park_names[] = {"stop", "idle", NULL};                /* enum vsp_park */
static const char *const placement_names[] = {"worst-fit", "first-fit", NULL}; /* rule */

static void set_why(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || whylen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}

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
static void set_cpus(struct vsched_config *cfg, uint64_t mask)
{
	cfg->ncpus = 0;
	for (int c = 0; c < VS_MAX_CPUS; c++)
		if (mask & (1ULL << c))
			cfg->cpus[cfg->ncpus++] = c;
}

void config_defaults(struct vsched_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	set_cpus(cfg, online_cpus());
	cfg->utilization_cap = 0.9;
	cfg->reserve = 0.05;
	cfg->min_period = 1 * NSEC_PER_MSEC;
	cfg->min_slice = 50 * NSEC_PER_USEC;
	cfg->park = VSP_PARK_STOP;
	cfg->placement = PLACE_WORST_FIT;
	cfg->max_tasks = 256;
	snprintf(cfg->endpoint, sizeof(cfg->endpoint), "%s", DEFAULT_ENDPOINT);
	cfg->endpoint_mode = 0600;
}

/* cpus: a non-empty array or list of unique online CPU numbers below VS_MAX_CPUS. */
static int load_cpus(const config_t *lc, struct vsched_config *cfg, char *why, size_t whylen)
{
	const config_setting_t *s = config_lookup(lc, "cpus");
	uint64_t online = online_cpus(), seen = 0;
	int n;

	if (s == NULL)
		return 0;
	if (!config_setting_is_aggregate(s) || config_setting_is_group(s)) {
		set_why(why, whylen, "cpus: must be an array of CPU numbers, e.g. [0, 1]");
		return -1;
	}
	n = config_setting_length(s);
	if (n == 0) {
		set_why(why, whylen, "cpus: must list at least one CPU");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
		int t = config_setting_type(e);
		long long c;

		if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64) {
			set_why(why, whylen, "cpus: element %d is not an integer", i);
			return -1;
		}
		c = config_setting_get_int64(e);
		if (c < 0 || c >= VS_MAX_CPUS) {
			set_why(why, whylen, "cpus: CPU %lld out of range [0, %d)", c, VS_MAX_CPUS);
			return -1;
		}
		if (seen & (1ULL << c)) {
			set_why(why, whylen, "cpus: CPU %lld listed twice", c);
			return -1;
		}
		if (!(online & (1ULL << c))) {
			set_why(why, whylen, "cpus: CPU %lld is not online", c);
			return -1;
		}
		seen |= 1ULL << c;
	}
	set_cpus(cfg, seen);
	return 0;
}

static int load_shares(const config_t *lc, struct vsched_config *cfg, char *why, size_t whylen)
{
	if (cfg_get_double(lc, "utilization_cap", 0.0, 1.0, &cfg->utilization_cap, why, whylen) < 0)
		return -1;
	if (!(cfg->utilization_cap > 0.0)) {
		set_why(why, whylen, "utilization_cap: must be in (0, 1]");
		return -1;
	}
	return cfg_get_double(lc, "reserve", 0.0, RESERVE_MAX, &cfg->reserve, why, whylen);
}

static int load_durations(const config_t *lc, struct vsched_config *cfg, char *why, size_t whylen)
{
	if (cfg_get_duration(lc, "min_period", MIN_PERIOD_LO, DURATION_HI, &cfg->min_period, why,
	                     whylen) < 0)
		return -1;
	return cfg_get_duration(lc, "min_slice", MIN_SLICE_LO, DURATION_HI, &cfg->min_slice, why,
	                        whylen);
}

static int load_choices(const config_t *lc, struct vsched_config *cfg, char *why, size_t whylen)
{
	int park = cfg->park, rule = cfg->placement;

	if (cfg_get_enum(lc, "park", park_names, &park, why, whylen) < 0 ||
	    cfg_get_enum(lc, "placement", placement_names, &rule, why, whylen) < 0)
		return -1;
	cfg->park = (uint8_t)park;
	cfg->placement = rule;
	return 0;
}

/* endpoint_mode: "0600"-style string of 1 to 4 octal digits, at most 0777. */
static int load_mode(const config_t *lc, struct vsched_config *cfg, char *why, size_t whylen)
{
	char buf[16];
	unsigned long v = 0;
	size_t n;

	buf[0] = '\0';
	if (config_lookup(lc, "endpoint_mode") == NULL)
		return 0;
	if (cfg_get_string(lc, "endpoint_mode", buf, sizeof(buf), why, whylen) < 0)
		goto bad;
	n = strlen(buf);
	if (n == 0 || n > 4 || strspn(buf, "01234567") != n)
		goto bad;
	v = strtoul(buf, NULL, 8);
	if (v > 0777)
		goto bad;
	cfg->endpoint_mode = (unsigned)v;
	return 0;
bad:
	set_why(why, whylen, "endpoint_mode: must be an octal file mode string such as \"0600\"");
	return -1;
}

static int load_endpoint(const config_t *lc, struct vsched_config *cfg, char *why, size_t whylen)
{
	char ep[sizeof(cfg->endpoint)];
	const char *sep;

	if (config_lookup(lc, "endpoint") == NULL)
		return 0;
	memset(ep, 0, sizeof(ep)); /* no stack bytes after the NUL */
	if (cfg_get_string(lc, "endpoint", ep, sizeof(ep), why, whylen) < 0)
		return -1;
	sep = strstr(ep, "://");
	if (sep == NULL || sep == ep || sep[3] == '\0') {
		set_why(why, whylen,
		        "endpoint: \"%s\" is not a ZeroMQ endpoint such as "
		        "\"ipc:///run/vsched/api.sock\"",
		        ep);
		return -1;
	}
	memcpy(cfg->endpoint, ep, sizeof(ep));
	return 0;
}

static int load_all(const config_t *lc, struct vsched_config *cfg, char *why, size_t whylen)
{
	long long max_tasks = cfg->max_tasks;

	if (cfg_check_keys(lc, known_keys, why, whylen) < 0 ||
	    load_cpus(lc, cfg, why, whylen) < 0 || load_shares(lc, cfg, why, whylen) < 0 ||
	    load_durations(lc, cfg, why, whylen) < 0 || load_choices(lc, cfg, why, whylen) < 0 ||
	    load_endpoint(lc, cfg, why, whylen) < 0 || load_mode(lc, cfg, why, whylen) < 0 ||
	    cfg_get_int(lc, "max_tasks", 1, VSP_MAX_TASKS, &max_tasks, why, whylen) < 0)
		return -1;
	cfg->max_tasks = (int)max_tasks;
	return 0;
}

/*
 * Starts from config_defaults(), so keys absent from the file keep their defaults. On error
 * *cfg is unchanged and why names the key (or FILE:LINE for a syntax error).
 */
int config_load(const char *path, struct vsched_config *cfg, char *why, size_t whylen)
{
	struct vsched_config c;
	config_t lc;
	int rc;

	if (cfg_load(&lc, path, why, whylen) < 0)
		return -1;
	config_defaults(&c);
	rc = load_all(&lc, &c, why, whylen);
	config_destroy(&lc);
	if (rc < 0)
		return -1;
	*cfg = c;
	return 0;
}

/* Shortest "%g" form that reads back as exactly v. */
static void format_double(double v, char *buf, size_t len)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	if (strpbrk(buf, ".eEn") == NULL) /* keep it a float in libconfig's eyes */
		strncat(buf, ".0", len - strlen(buf) - 1);
}

/* Writes s as a libconfig string literal. */
static void print_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void config_print(FILE *f, const struct vsched_config *cfg)
{
	char b[64];

	fprintf(f, "cpus = [");
	for (int i = 0; i < cfg->ncpus; i++)
		fprintf(f, "%s%d", i ? ", " : " ", cfg->cpus[i]);
	fprintf(f, " ];\n");
	format_double(cfg->utilization_cap, b, sizeof(b));
	fprintf(f, "utilization_cap = %s;\n", b);
	format_double(cfg->reserve, b, sizeof(b));
	fprintf(f, "reserve = %s;\n", b);
	fprintf(f, "min_period = \"%s\";\n", duration_format(cfg->min_period, b, sizeof(b)));
	fprintf(f, "min_slice = \"%s\";\n", duration_format(cfg->min_slice, b, sizeof(b)));
	fprintf(f, "park = \"%s\";\n", vsp_park_name(cfg->park));
	fprintf(f, "placement = \"%s\";\n",
	        cfg->placement == PLACE_FIRST_FIT ? "first-fit" : "worst-fit");
	fprintf(f, "endpoint = ");
	print_string(f, cfg->endpoint);
	fprintf(f, ";\nendpoint_mode = \"%04o\";\n", cfg->endpoint_mode);
	fprintf(f, "max_tasks = %d;\n", cfg->max_tasks);
}
