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
#include <stdlib.h>
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

/* The first top-level setting known() refuses: 0, or -1 with "NAME: unknown setting". */
static int check_names(const config_t *cfg, bool (*known)(const char *name, const void *ctx),
                       const void *ctx, char *why, size_t whylen)
{
	const config_setting_t *root = config_root_setting(cfg);
	int n = root ? config_setting_length(root) : 0;

	for (int i = 0; i < n; i++) {
		const char *name = config_setting_name(config_setting_get_elem(root, (unsigned)i));

		if (name == NULL || !known(name, ctx)) {
			text_fmt(why, whylen, "%s: unknown setting", name ? name : "(unnamed)");
			return -1;
		}
	}
	return 0;
}

static bool in_list(const char *name, const void *ctx)
{
	for (const char *const *k = ctx; *k != NULL; k++)
		if (strcmp(name, *k) == 0)
			return true;
	return false;
}

int cfg_check_keys(const config_t *cfg, const char *const *known, char *why, size_t whylen)
{
	return check_names(cfg, in_list, known, why, whylen);
}

/* ---- key tables ---- */

static void *field_of(void *cfg, const struct cfg_key *k)
{
	return (char *)cfg + k->off;
}

static const void *cfield_of(const void *cfg, const struct cfg_key *k)
{
	return (const char *)cfg + k->off;
}

static int get_bool(const config_t *lc, const char *key, bool *out, char *why, size_t whylen)
{
	const config_setting_t *s = lookup(lc, key);

	if (s == NULL)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_BOOL) {
		text_fmt(why, whylen, "%s: must be true or false", key);
		return -1;
	}
	*out = config_setting_get_bool(s) != 0;
	return 0;
}

/* "0600": 1..4 octal digits, at most 0777. */
static int get_mode(const config_t *lc, const char *key, unsigned *out, char *why, size_t whylen)
{
	char buf[16] = "";
	unsigned long v;
	size_t n;

	if (lookup(lc, key) == NULL)
		return 0;
	if (cfg_get_string(lc, key, buf, sizeof(buf), why, whylen) == 0) {
		n = strlen(buf);
		if (n > 0 && n <= 4 && strspn(buf, "01234567") == n &&
		    (v = strtoul(buf, NULL, 8)) <= 0777) {
			*out = (unsigned)v;
			return 0;
		}
	}
	text_fmt(why, whylen, "%s: \"%s\" is not an octal file mode such as \"0600\"", key, buf);
	return -1;
}

static int get_enum(const config_t *lc, const struct cfg_key *k, void *f, char *why, size_t whylen)
{
	int idx = k->size == 1 ? *(uint8_t *)f : *(int *)f;

	if (cfg_get_enum(lc, k->name, k->choices, &idx, why, whylen) != 0)
		return -1;
	if (k->size == 1)
		*(uint8_t *)f = (uint8_t)idx;
	else
		*(int *)f = idx;
	return 0;
}

static int get_string(const config_t *lc, const struct cfg_key *k, void *f, char *why,
                      size_t whylen)
{
	char reason[200];

	if (cfg_get_string(lc, k->name, f, k->size, why, whylen) != 0)
		return -1;
	if (k->check && lookup(lc, k->name) != NULL && k->check(f, reason, sizeof(reason)) != 0) {
		text_fmt(why, whylen, "%s: %s", k->name, reason);
		return -1;
	}
	return 0;
}

static int parse_key(const struct cfg_key *k, const config_t *lc, void *cfg, char *why,
                     size_t whylen)
{
	void *f = field_of(cfg, k);
	const config_setting_t *s;
	long long i;
	double d;

	switch (k->type) {
	case CFG_STRING:
		return get_string(lc, k, f, why, whylen);
	case CFG_DURATION:
		return cfg_get_duration(lc, k->name, (uint64_t)k->lo, (uint64_t)k->hi, f, why,
		                        whylen);
	case CFG_NUMBER:
		return cfg_get_double(lc, k->name, k->lo, k->hi, f, why, whylen);
	case CFG_INT:
		i = *(int *)f;
		if (cfg_get_int(lc, k->name, (long long)k->lo, (long long)k->hi, &i, why, whylen))
			return -1;
		*(int *)f = (int)i;
		return 0;
	case CFG_COUNT:
		d = (double)*(uint64_t *)f;
		if (cfg_get_double(lc, k->name, k->lo, k->hi, &d, why, whylen) != 0)
			return -1;
		*(uint64_t *)f = (uint64_t)d;
		return 0;
	case CFG_BOOL:
		return get_bool(lc, k->name, f, why, whylen);
	case CFG_ENUM:
		return get_enum(lc, k, f, why, whylen);
	case CFG_MODE:
		return get_mode(lc, k->name, f, why, whylen);
	case CFG_CUSTOM:
		s = lookup(lc, k->name);
		return s == NULL ? 0 : k->parse(s, cfg, why, whylen);
	}
	return 0;
}

static bool in_table(const char *name, const void *ctx)
{
	for (const struct cfg_key *k = ctx; k->name != NULL; k++)
		if (strcmp(name, k->name) == 0)
			return true;
	return false;
}

int cfg_parse(const struct cfg_key *keys, const config_t *lc, void *cfg, char *why, size_t whylen)
{
	if (check_names(lc, in_table, keys, why, whylen) != 0)
		return -1;
	for (int k = 0; keys[k].name != NULL; k++)
		if (parse_key(&keys[k], lc, cfg, why, whylen) != 0)
			return -1;
	return 0;
}

int cfg_load_file(const struct cfg_key *keys, const char *path, void *cfg, char *why, size_t whylen)
{
	config_t lc;
	int rc;

	if (cfg_load(&lc, path, why, whylen) != 0)
		return -1;
	rc = cfg_parse(keys, &lc, cfg, why, whylen);
	config_destroy(&lc);
	return rc;
}

void cfg_defaults(const struct cfg_key *keys, void *cfg)
{
	char why[256];

	for (int k = 0; keys[k].name != NULL; k++) {
		const struct cfg_key *key = &keys[k];
		char text[512];
		config_t lc;
		int rc;

		if (key->dflt == NULL) {
			if (key->set_default)
				key->set_default(cfg);
			continue;
		}
		config_init(&lc);
		text_fmt(text, sizeof(text), "%s = %s;\n", key->name, key->dflt);
		rc = config_read_string(&lc, text) == CONFIG_TRUE ? 0 : -1;
		if (rc == 0)
			rc = parse_key(key, &lc, cfg, why, sizeof(why));
		else
			text_fmt(why, sizeof(why), "%s: %s", key->name, config_error_text(&lc));
		config_destroy(&lc);
		if (rc != 0) {
			fprintf(stderr, "config: default of %s refused: %s\n", key->name, why);
			abort();
		}
	}
}

void cfg_format_double(double v, char *buf, size_t len)
{
	char first[64] = ""; /* the shortest form that reads back, perhaps with an exponent */

	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, v);
		if (strtod(buf, NULL) != v)
			continue;
		if (strpbrk(buf, "eE") == NULL) /* 100.0, not 1e+02, when a plain form exists */
			break;
		if (first[0] == '\0')
			snprintf(first, sizeof(first), "%s", buf);
	}
	if (strpbrk(buf, "eE") != NULL && first[0] != '\0')
		snprintf(buf, len, "%s", first);
	if (strpbrk(buf, ".eEn") == NULL) /* keep it a float in libconfig's eyes */
		strncat(buf, ".0", len - strlen(buf) - 1);
}

/* s as a libconfig string literal. */
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

static void print_value(FILE *f, const struct cfg_key *k, const void *cfg)
{
	const void *v = cfield_of(cfg, k);
	char b[64];
	int idx;

	switch (k->type) {
	case CFG_STRING:
		print_string(f, v);
		break;
	case CFG_DURATION:
		fprintf(f, "\"%s\"", duration_format(*(const uint64_t *)v, b, sizeof(b)));
		break;
	case CFG_NUMBER:
		cfg_format_double(*(const double *)v, b, sizeof(b));
		fputs(b, f);
		break;
	case CFG_INT:
		fprintf(f, "%d", *(const int *)v);
		break;
	case CFG_COUNT:
		fprintf(f, "%llu", (unsigned long long)*(const uint64_t *)v);
		break;
	case CFG_BOOL:
		fputs(*(const bool *)v ? "true" : "false", f);
		break;
	case CFG_ENUM:
		idx = k->size == 1 ? *(const uint8_t *)v : *(const int *)v;
		fprintf(f, "\"%s\"", k->choices[idx]);
		break;
	case CFG_MODE:
		fprintf(f, "\"%04o\"", *(const unsigned *)v);
		break;
	case CFG_CUSTOM:
		k->print(f, cfg);
		break;
	}
}

void cfg_print(const struct cfg_key *keys, const void *cfg, FILE *f)
{
	for (int k = 0; keys[k].name != NULL; k++) {
		fprintf(f, "%s = ", keys[k].name);
		print_value(f, &keys[k], cfg);
		fputs(";\n", f);
	}
}

static const char *const type_names[] = {
    [CFG_STRING] = "string", [CFG_DURATION] = "duration", [CFG_NUMBER] = "number",
    [CFG_INT] = "integer",   [CFG_COUNT] = "count",       [CFG_BOOL] = "boolean",
    [CFG_ENUM] = "enum",     [CFG_MODE] = "mode",         [CFG_CUSTOM] = "list",
};

/* The range of k in words ("10ms..1m", "linear|adaptive", "0..1e+15"). */
static void range_text(const struct cfg_key *k, char *buf, size_t len)
{
	char a[32], b[32];
	size_t n = 0;

	buf[0] = '\0';
	if (k->range_doc) {
		text_fmt(buf, len, "%s", k->range_doc);
		return;
	}
	switch (k->type) {
	case CFG_DURATION:
		text_fmt(buf, len, "%s..%s", duration_format((uint64_t)k->lo, a, sizeof(a)),
		         duration_format((uint64_t)k->hi, b, sizeof(b)));
		break;
	case CFG_NUMBER:
	case CFG_INT:
	case CFG_COUNT:
		text_fmt(buf, len, "%g..%g", k->lo, k->hi);
		break;
	case CFG_BOOL:
		text_fmt(buf, len, "true|false");
		break;
	case CFG_ENUM:
		for (int i = 0; k->choices[i] != NULL && n < len; i++)
			n +=
			    (size_t)snprintf(buf + n, len - n, "%s%s", i ? "|" : "", k->choices[i]);
		break;
	case CFG_MODE:
		text_fmt(buf, len, "0000..0777");
		break;
	case CFG_STRING:
		text_fmt(buf, len, "at most %zu bytes", k->size - 1);
		break;
	case CFG_CUSTOM:
		break;
	}
}

void cfg_print_keys(const struct cfg_key *keys, FILE *f)
{
	char range[256];

	for (int k = 0; keys[k].name != NULL; k++) {
		const struct cfg_key *key = &keys[k];

		range_text(key, range, sizeof(range));
		fprintf(f, "%s\t%s\t", key->name, type_names[key->type]);
		if (key->dflt)
			fputs(key->dflt, f);
		else
			fprintf(f, "(%s)", key->dflt_doc ? key->dflt_doc : "none");
		fprintf(f, "\t%s\t%s\n", range, key->doc);
	}
}

bool cfg_endpoint_ok(const char *endpoint, bool tcp_only)
{
	if (strncmp(endpoint, "tcp://", 6) == 0)
		return endpoint[6] != '\0';
	return !tcp_only && strncmp(endpoint, "ipc://", 6) == 0 && endpoint[6] != '\0';
}

int cfg_check_endpoint(const char *value, char *why, size_t whylen)
{
	if (cfg_endpoint_ok(value, false))
		return 0;
	text_fmt(why, whylen, "\"%s\" must be a tcp:// or ipc:// endpoint", value);
	return -1;
}
