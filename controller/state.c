/*
 * The controller's persistent state (DESIGN.md §5.3): every job's target and settings,
 * and the last constraint generation issued. Tasks, ranks and rates are soft state that
 * the agents announce again after a restart.
 *
 * Format: libconfig, written by this file, read back with the same checks as a config:
 *   version = 1;
 *   last_gen = "123";
 *   jobs = ( { name = "A"; target = 40.0; algorithm = "adaptive"; aggregate = "slowest";
 *              epsilon = 3.0; r_max = 0.0; r_max_given = false; delta_period = "2ms";
 *              min_period = "1ms"; min_slice = "100us"; initial_period = "200ms";
 *              u_max = 100.0; } );   (u_max may be absent: 100)
 * Atomicity: write a temporary file in the same directory, fsync it, rename it over the
 * state file, fsync the directory. A reader sees the old file or the new one, never a
 * mix; a crash leaves at worst a stray temporary file, never a truncated state file.
 * A state file that does not parse or holds an out-of-range value is refused as a whole
 * with the reason (the daemon does not start rather than silently forget targets); the
 * settings get the same check as everywhere else (settings_check).
 * A pure load/save pair over struct state_job: when the daemon writes is persist.c's.
 */
#include "controller.h"

#include <errno.h>
#include <fcntl.h>
#include <libconfig.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfgutil.h"
#include "duration.h"
#include "log.h"

#define STATE_VERSION 1

static void put_string(FILE *f, const char *key, const char *s)
{
	fprintf(f, "%s = \"", key);
	for (; *s != '\0'; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputs("\"; ", f);
}

static void put_double(FILE *f, const char *key, double v)
{
	char b[64];

	snprintf(b, sizeof(b), "%.17g", v);
	if (strpbrk(b, ".eEn") == NULL)
		strcat(b, ".0");
	fprintf(f, "%s = %s; ", key, b);
}

static void put_duration(FILE *f, const char *key, uint64_t ns)
{
	char b[32];

	fprintf(f, "%s = \"%s\"; ", key, duration_format(ns, b, sizeof(b)));
}

static void write_state(FILE *f, uint64_t last_gen, const struct state_job *jobs, int n)
{
	fprintf(f, "# vsched-controller state, written atomically by the controller.\n");
	fprintf(f, "version = %d;\n", STATE_VERSION);
	fprintf(f, "last_gen = \"%llu\";\n", (unsigned long long)last_gen);
	fprintf(f, "jobs = (");
	for (int i = 0; i < n; i++) {
		const struct state_job *j = &jobs[i];

		fprintf(f, "%s\n  { ", i ? "," : "");
		put_string(f, "name", j->name);
		put_double(f, "target", j->target);
		put_string(f, "algorithm", padm_algo_name(j->set.algo));
		put_string(f, "aggregate", padm_agg_name(j->set.agg));
		put_double(f, "epsilon", j->set.eps_pct);
		put_double(f, "r_max", j->set.r_max);
		fprintf(f, "r_max_given = %s; ", j->set.r_max_given ? "true" : "false");
		put_duration(f, "delta_period", j->set.delta_period);
		put_duration(f, "min_period", j->set.min_period);
		put_duration(f, "min_slice", j->set.min_slice);
		put_duration(f, "initial_period", j->set.initial_period);
		put_double(f, "u_max", j->set.u_max_pct);
		fputs("}", f);
	}
	fprintf(f, "%s);\n", n ? "\n" : "");
}

/* The directory part of path into dir ("." when none). */
static void dir_of(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		snprintf(dir, len, ".");
	else if (slash == path)
		snprintf(dir, len, "/");
	else
		snprintf(dir, len, "%.*s", (int)(slash - path), path);
}

int state_save(const char *path, uint64_t last_gen, const struct state_job *jobs, int n, char *why,
               size_t whylen)
{
	char tmp[CTLD_PATH_MAX + 32], dir[CTLD_PATH_MAX];
	FILE *f = NULL;
	int fd, dfd;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp)) {
		snprintf(why, whylen, "%s: path too long", path);
		return -1;
	}
	unlink(tmp); /* a stray one from an earlier crash of this pid number */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		snprintf(why, whylen, "%s: %s", tmp, strerror(errno));
		return -1;
	}
	f = fdopen(fd, "w");
	if (f == NULL) {
		snprintf(why, whylen, "%s: %s", tmp, strerror(errno));
		close(fd);
		goto fail;
	}
	write_state(f, last_gen, jobs, n);
	if (fflush(f) != 0 || ferror(f) || fsync(fd) != 0) {
		snprintf(why, whylen, "%s: %s", tmp, strerror(errno));
		fclose(f);
		goto fail;
	}
	if (fclose(f) != 0) {
		snprintf(why, whylen, "%s: %s", tmp, strerror(errno));
		goto fail;
	}
	if (rename(tmp, path) != 0) {
		snprintf(why, whylen, "rename %s to %s: %s", tmp, path, strerror(errno));
		goto fail;
	}
	dir_of(path, dir, sizeof(dir));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd >= 0) {
		fsync(dfd); /* the rename itself is durable */
		close(dfd);
	}
	return 0;
fail:
	unlink(tmp);
	return -1;
}

/* A number member (int or float). */
static int get_num(const config_setting_t *g, const char *key, double *out)
{
	const config_setting_t *s = config_setting_get_member(g, key);

	if (s == NULL)
		return -1;
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_FLOAT:
		*out = config_setting_get_float(s);
		return 0;
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		*out = (double)config_setting_get_int64(s);
		return 0;
	default:
		return -1;
	}
}

static int get_dur(const config_setting_t *g, const char *key, uint64_t *out)
{
	const char *s;

	if (!config_setting_lookup_string(g, key, &s))
		return -1;
	if (duration_parse(s, out) != 0 || *out == 0 || *out > VSP_PERIOD_MAX)
		return -1;
	return 0;
}

/* One job of the list; 0 or -1 with the reason (without the file name) in why. */
static int load_job(const config_setting_t *g, struct state_job *j, char *why, size_t whylen)
{
	const char *s;
	char r[160];
	int b;

	memset(j, 0, sizeof(*j));
	if (config_setting_type(g) != CONFIG_TYPE_GROUP) {
		snprintf(why, whylen, "not a group");
		return -1;
	}
	if (!config_setting_lookup_string(g, "name", &s) || !text_name_ok(s)) {
		snprintf(why, whylen, "name: missing or not a job name");
		return -1;
	}
	snprintf(j->name, sizeof(j->name), "%s", s);
	if (get_num(g, "target", &j->target) != 0 || !(j->target >= 0 && j->target <= 100)) {
		snprintf(why, whylen, "%s: target: missing or not in [0, 100]", j->name);
		return -1;
	}
	if (!config_setting_lookup_string(g, "algorithm", &s) ||
	    padm_algo_parse(s, &j->set.algo) != 0) {
		snprintf(why, whylen, "%s: algorithm: missing or not linear/adaptive/floating",
		         j->name);
		return -1;
	}
	if (!config_setting_lookup_string(g, "aggregate", &s) ||
	    padm_agg_parse(s, &j->set.agg) != 0) {
		snprintf(why, whylen, "%s: aggregate: missing or not slowest/mean", j->name);
		return -1;
	}
	if (get_num(g, "epsilon", &j->set.eps_pct) != 0) {
		snprintf(why, whylen, "%s: epsilon: missing or not a number", j->name);
		return -1;
	}
	if (get_num(g, "r_max", &j->set.r_max) != 0) {
		snprintf(why, whylen, "%s: r_max: missing or not a number", j->name);
		return -1;
	}
	if (!config_setting_lookup_bool(g, "r_max_given", &b)) {
		snprintf(why, whylen, "%s: r_max_given: missing or not a boolean", j->name);
		return -1;
	}
	j->set.r_max_given = b && j->set.r_max > 0;
	/* u_max came with the floating algorithm: a file without it means the default */
	j->set.u_max_pct = 100;
	if (config_setting_get_member(g, "u_max") && get_num(g, "u_max", &j->set.u_max_pct) != 0) {
		snprintf(why, whylen, "%s: u_max: not a number", j->name);
		return -1;
	}
	if (get_dur(g, "delta_period", &j->set.delta_period) ||
	    get_dur(g, "min_period", &j->set.min_period) ||
	    get_dur(g, "min_slice", &j->set.min_slice) ||
	    get_dur(g, "initial_period", &j->set.initial_period)) {
		snprintf(why, whylen, "%s: a period or slice is missing or not a duration",
		         j->name);
		return -1;
	}
	if (settings_check(&j->set, r, sizeof(r)) != 0) {
		snprintf(why, whylen, "%s: %s", j->name, r);
		return -1;
	}
	return 0;
}

int state_load(const char *path, uint64_t *last_gen, struct state_job **jobs, int *n, char *why,
               size_t whylen)
{
	config_t cfg;
	const config_setting_t *list;
	struct state_job *js = NULL;
	const char *g;
	char r[200], *end;
	int version, cnt;

	*jobs = NULL;
	*n = 0;
	if (access(path, F_OK) != 0 && errno == ENOENT)
		return -ENOENT;
	if (cfg_load(&cfg, path, why, whylen) != 0)
		return -EINVAL;
	if (!config_lookup_int(&cfg, "version", &version) || version != STATE_VERSION) {
		snprintf(why, whylen, "%s: version: missing or not %d", path, STATE_VERSION);
		goto bad;
	}
	if (!config_lookup_string(&cfg, "last_gen", &g) || g[0] < '0' || g[0] > '9') {
		snprintf(why, whylen, "%s: last_gen: missing or not a number", path);
		goto bad;
	}
	errno = 0;
	*last_gen = strtoull(g, &end, 10);
	if (errno != 0 || *end != '\0') {
		snprintf(why, whylen, "%s: last_gen: \"%s\" is not a number", path, g);
		goto bad;
	}
	list = config_lookup(&cfg, "jobs");
	if (list == NULL || config_setting_type(list) != CONFIG_TYPE_LIST) {
		snprintf(why, whylen, "%s: jobs: missing or not a list", path);
		goto bad;
	}
	cnt = config_setting_length(list);
	if (cnt > 0) {
		js = calloc((size_t)cnt, sizeof(*js));
		if (js == NULL)
			fatalx("out of memory");
	}
	for (int i = 0; i < cnt; i++) {
		if (load_job(config_setting_get_elem(list, (unsigned)i), &js[i], r, sizeof(r)) !=
		    0) {
			snprintf(why, whylen, "%s: job %d: %s", path, i + 1, r);
			goto bad;
		}
		for (int k = 0; k < i; k++) {
			if (strcmp(js[k].name, js[i].name) == 0) {
				snprintf(why, whylen, "%s: job %s listed twice", path, js[i].name);
				goto bad;
			}
		}
	}
	config_destroy(&cfg);
	*jobs = js;
	*n = cnt;
	return 0;
bad:
	free(js);
	config_destroy(&cfg);
	return -EINVAL;
}
