/*
 * Checked access to libconfig settings (see cfgutil.h).
 *
 * Every error message starts with the key ("min_period: must be between 10us and 1d") so a
 * daemon can refuse a config with one line. A key that is absent leaves *out untouched, so
 * the caller stores its default first. Keys are libconfig paths (config_lookup), normally
 * plain top-level names.
 *
 * cfg_load owns the config_init: it initialises cfg itself (do not config_init before, the
 * empty root would leak). On success the caller config_destroy()s cfg; on failure cfg_load
 * has already destroyed it, and a further config_destroy() is harmless.
 */
#include "cfgutil.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "duration.h"
#include "text.h"

int cfg_load(config_t *cfg, const char *path, char *why, size_t whylen)
{
	FILE *f;
	int ok;

	config_init(cfg);
	f = fopen(path, "r");
	if (f == NULL) {
		text_fmt(why, whylen, "%s: %s", path, strerror(errno));
		config_destroy(cfg);
		return -1;
	}
	ok = config_read(cfg, f);
	fclose(f);
	if (ok != CONFIG_TRUE) {
		text_fmt(why, whylen, "%s:%d: %s", path, config_error_line(cfg),
		         config_error_text(cfg) ? config_error_text(cfg) : "parse error");
		config_destroy(cfg);
		return -1;
	}
	return 0;
}

/* The setting for key, or NULL when absent. */
static config_setting_t *lookup(const config_t *cfg, const char *key)
{
	return config_lookup(cfg, key);
}

static bool is_number(const config_setting_t *s)
{
	int t = config_setting_type(s);
	return t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64 || t == CONFIG_TYPE_FLOAT;
}

static bool is_integer(const config_setting_t *s)
{
	int t = config_setting_type(s);
	return t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64;
}

int cfg_get_duration(const config_t *cfg, const char *key, uint64_t min, uint64_t max,
                     uint64_t *out, char *why, size_t whylen)
{
	const config_setting_t *s = lookup(cfg, key);
	const char *str;
	char bmin[32], bmax[32];
	uint64_t v;
	int rc;

	if (s == NULL)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_STRING) {
		text_fmt(why, whylen, "%s: must be a duration string with a unit, e.g. \"10ms\"",
		         key);
		return -1;
	}
	str = config_setting_get_string(s);
	rc = duration_parse(str, &v);
	if (rc == -ERANGE) {
		text_fmt(why, whylen, "%s: \"%s\" is too large", key, str);
		return -1;
	}
	if (rc < 0) {
		text_fmt(why, whylen,
		         "%s: \"%s\" is not a duration (number and unit ns us ms s m h d, "
		         "e.g. \"10ms\")",
		         key, str);
		return -1;
	}
	if (v < min || v > max) {
		text_fmt(why, whylen, "%s: must be between %s and %s", key,
		         duration_format(min, bmin, sizeof(bmin)),
		         duration_format(max, bmax, sizeof(bmax)));
		return -1;
	}
	*out = v;
	return 0;
}

int cfg_get_double(const config_t *cfg, const char *key, double min, double max, double *out,
                   char *why, size_t whylen)
{
	const config_setting_t *s = lookup(cfg, key);
	double v;

	if (s == NULL)
		return 0;
	if (!is_number(s)) {
		text_fmt(why, whylen, "%s: must be a number", key);
		return -1;
	}
	if (config_setting_type(s) == CONFIG_TYPE_FLOAT)
		v = config_setting_get_float(s);
	else
		v = (double)config_setting_get_int64(s);
	if (isnan(v) || v < min || v > max) {
		text_fmt(why, whylen, "%s: must be in [%g, %g]", key, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int cfg_get_int(const config_t *cfg, const char *key, long long min, long long max, long long *out,
                char *why, size_t whylen)
{
	const config_setting_t *s = lookup(cfg, key);
	long long v;

	if (s == NULL)
		return 0;
	if (!is_integer(s)) {
		text_fmt(why, whylen, "%s: must be an integer", key);
		return -1;
	}
	v = config_setting_get_int64(s);
	if (v < min || v > max) {
		text_fmt(why, whylen, "%s: must be in [%lld, %lld]", key, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

int cfg_get_string(const config_t *cfg, const char *key, char *out, size_t cap, char *why,
                   size_t whylen)
{
	const config_setting_t *s = lookup(cfg, key);
	const char *str;
	size_t n;

	if (s == NULL)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_STRING) {
		text_fmt(why, whylen, "%s: must be a string", key);
		return -1;
	}
	str = config_setting_get_string(s);
	n = strlen(str);
	if (cap == 0 || n >= cap) {
		text_fmt(why, whylen, "%s: too long (at most %zu bytes)", key, cap ? cap - 1 : 0);
		return -1;
	}
	memcpy(out, str, n + 1);
	return 0;
}

int cfg_get_enum(const config_t *cfg, const char *key, const char *const *choices, int *index,
                 char *why, size_t whylen)
{
	const config_setting_t *s = lookup(cfg, key);
	const char *str;
	char list[256];
	size_t used = 0;

	if (s == NULL)
		return 0;
	if (config_setting_type(s) == CONFIG_TYPE_STRING) {
		str = config_setting_get_string(s);
		for (int i = 0; choices[i] != NULL; i++) {
			if (strcmp(str, choices[i]) == 0) {
				*index = i;
				return 0;
			}
		}
	}
	list[0] = '\0';
	for (int i = 0; choices[i] != NULL && used < sizeof(list); i++) {
		int w = snprintf(list + used, sizeof(list) - used, "%s\"%s\"", i ? ", " : "",
		                 choices[i]);
		if (w < 0)
			break;
		used += (size_t)w;
	}
	text_fmt(why, whylen, "%s: must be one of %s", key, list);
	return -1;
}

int cfg_check_keys(const config_t *cfg, const char *const *known, char *why, size_t whylen)
{
	const config_setting_t *root = config_root_setting(cfg);
	int n = root ? config_setting_length(root) : 0;

	for (int i = 0; i < n; i++) {
		const config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
		const char *name = config_setting_name(s);
		bool found = false;

		for (int k = 0; name != NULL && known[k] != NULL; k++)
			if (strcmp(name, known[k]) == 0)
				found = true;
		if (!found) {
			text_fmt(why, whylen, "%s: unknown setting", name ? name : "(unnamed)");
			return -1;
		}
	}
	return 0;
}
